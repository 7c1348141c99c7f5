//! What an `lsmod` command line let through: `lsmod` alone prints every
//! loaded module, `lsmod | grep PATTERN` only the rows PATTERN matches.
//! A module without a row is known not to be loaded only where the
//! command would have printed its row, so the filter is read exactly, and
//! a command this reader cannot follow (an inverted grep, `head`, a
//! character class, `$`) says nothing about absence.
//!
//! grep is read as GNU grep reads it (grep(1), "Basic vs Extended Regular
//! Expressions"): a basic pattern alternates with `\|` and takes `|` as a
//! letter; `-E` alternates with `|`; `-F` takes the pattern as text, one
//! alternative per line; `-i` ignores case; `-w` matches whole words only.
//! The shell's quoting comes off first (`grep a\|b` gives grep `a|b`).

/// What a listing's command printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// Every loaded module (`lsmod`, `lsmod | sort`).
    All,
    /// Rows every one of these greps matched (`lsmod | grep -i peer`).
    Filtered(Vec<Grep>),
    /// Not known (why): an absent row says nothing.
    Unknown(String),
}

/// One `grep` of a pipeline, as understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grep {
    /// Any of these matches the line.
    alternatives: Vec<Alternative>,
    ignore_case: bool,
    /// `-w`: the match must be a whole word.
    word: bool,
}

/// One branch of a pattern: `^` (anchored at the line's start) and
/// characters, `None` standing for `.` (any character).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Alternative {
    anchored: bool,
    atoms: Vec<Option<char>>,
}

impl Reach {
    /// Whether the command certainly printed the row of `module`, were it
    /// loaded: its row starts with the name and a space.
    pub fn covers(&self, module: &str) -> bool {
        match self {
            Reach::All => true,
            Reach::Filtered(greps) => greps.iter().all(|g| g.keeps_row_of(module)),
            Reach::Unknown(_) => false,
        }
    }
}

impl Grep {
    fn keeps_row_of(&self, module: &str) -> bool {
        // The row as lsmod prints it, as far as the name decides it.
        let line: Vec<char> = format!("{module} ").chars().map(|c| self.fold(c)).collect();
        self.alternatives.iter().any(|a| {
            let starts = if a.anchored { 0..1 } else { 0..line.len() };
            starts.into_iter().any(|s| self.matches_at(a, &line, s))
        })
    }

    fn fold(&self, c: char) -> char {
        if self.ignore_case {
            c.to_ascii_lowercase()
        } else {
            c
        }
    }

    fn matches_at(&self, a: &Alternative, line: &[char], start: usize) -> bool {
        let end = start + a.atoms.len();
        if end > line.len() {
            return false;
        }
        let all = a
            .atoms
            .iter()
            .zip(&line[start..end])
            .all(|(atom, c)| atom.is_none_or(|x| self.fold(x) == *c));
        if !all {
            return false;
        }
        // An empty pattern matches every line, also as a word (GNU grep).
        if !self.word || a.atoms.is_empty() {
            return true;
        }
        let is_word = |c: &char| c.is_alphanumeric() || *c == '_';
        let before = start.checked_sub(1).and_then(|i| line.get(i));
        !before.is_some_and(is_word) && !line.get(end).is_some_and(is_word)
    }
}

/// What `command` (the prompt taken off) lets through, when it is an
/// `lsmod` pipeline; `None` when it runs no `lsmod` at all.
pub fn reach_of(command: &str) -> Option<Reach> {
    let unknown = |why: &str| Some(Reach::Unknown(why.to_string()));
    let stages = match split_pipeline(command) {
        Ok(s) => s,
        Err(why) => {
            return if mentions_lsmod(command) {
                unknown(why)
            } else {
                None
            };
        }
    };
    let mut stages = stages.into_iter();
    let first = stages.next()?;
    let mut words = first
        .iter()
        .map(String::as_str)
        .skip_while(|w| *w == "sudo");
    if words.next().map(program) != Some("lsmod") {
        return None;
    }
    if words.next().is_some() {
        return unknown("lsmod takes no arguments");
    }
    let mut greps = Vec::new();
    for stage in stages {
        match stage.first().map(|w| program(w)) {
            Some("sort") if stage.len() == 1 => {}
            Some(g @ ("grep" | "egrep" | "fgrep")) => match grep(g, &stage[1..]) {
                Ok(x) => greps.push(x),
                Err(why) => return unknown(&why),
            },
            _ => return unknown("a command after lsmod that is not grep"),
        }
    }
    Some(if greps.is_empty() {
        Reach::All
    } else {
        Reach::Filtered(greps)
    })
}

fn mentions_lsmod(command: &str) -> bool {
    command
        .split(|c: char| c.is_whitespace() || c == '|' || c == ';')
        .any(|w| program(w) == "lsmod")
}

fn program(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// The pipeline's commands as shell words, quotes and escapes removed.
/// Anything but plain words and `|` (`;`, `&&`, redirections, command
/// substitution) is refused.
fn split_pipeline(command: &str) -> Result<Vec<Vec<String>>, &'static str> {
    let mut stages = vec![Vec::new()];
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => w.push(x),
                        None => return Err("an unclosed quote"),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(x @ ('"' | '\\' | '$' | '`')) => w.push(x),
                            Some(x) => {
                                w.push('\\');
                                w.push(x);
                            }
                            None => return Err("an unclosed quote"),
                        },
                        Some('$' | '`') => return Err("a shell expansion"),
                        Some(x) => w.push(x),
                        None => return Err("an unclosed quote"),
                    }
                }
            }
            '\\' => {
                let w = word.get_or_insert_with(String::new);
                w.extend(chars.next());
            }
            '|' => {
                stages
                    .last_mut()
                    .unwrap_or(&mut Vec::new())
                    .extend(word.take());
                stages.push(Vec::new());
            }
            c if c.is_whitespace() => {
                if let Some(w) = word.take()
                    && let Some(s) = stages.last_mut()
                {
                    s.push(w);
                }
            }
            ';' | '&' | '<' | '>' | '$' | '`' | '(' | ')' => {
                return Err("more than a pipeline of plain commands");
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    if let Some(s) = stages.last_mut() {
        s.extend(word);
    }
    if stages.iter().any(Vec::is_empty) {
        return Err("an empty command in the pipeline");
    }
    Ok(stages)
}

/// The pattern syntax grep was told to use.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Syntax {
    Basic,
    Extended,
    Fixed,
}

/// `grep` (or `egrep`, `fgrep`) with `args`, read as GNU grep reads them.
fn grep(program: &str, args: &[String]) -> Result<Grep, String> {
    let mut syntax = match program {
        "egrep" => Syntax::Extended,
        "fgrep" => Syntax::Fixed,
        _ => Syntax::Basic,
    };
    let (mut ignore_case, mut word) = (false, false);
    let mut patterns: Vec<String> = Vec::new();
    let mut operands: Vec<&str> = Vec::new();
    let mut args = args.iter();
    let mut options_end = false;
    while let Some(a) = args.next() {
        if options_end || !a.starts_with('-') || a == "-" {
            operands.push(a);
            continue;
        }
        if a == "--" {
            options_end = true;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = long.split_once('=').unwrap_or((long, ""));
            match name {
                "ignore-case" => ignore_case = true,
                "no-ignore-case" => ignore_case = false,
                "word-regexp" => word = true,
                "extended-regexp" => syntax = Syntax::Extended,
                "fixed-strings" => syntax = Syntax::Fixed,
                "basic-regexp" => syntax = Syntax::Basic,
                "color" | "colour" | "no-messages" | "text" | "line-buffered" => {}
                "regexp" if long.contains('=') => patterns.push(value.to_string()),
                _ => return Err(format!("grep option `{a}` is not read")),
            }
            continue;
        }
        // A cluster of short options: `-iE`, `-e PAT`, `-ePAT`, `-A 3`.
        let cluster: Vec<char> = a[1..].chars().collect();
        for (i, f) in cluster.iter().enumerate() {
            let rest: String = cluster[i + 1..].iter().collect();
            match f {
                'i' | 'y' => ignore_case = true,
                'w' => word = true,
                'E' => syntax = Syntax::Extended,
                'F' => syntax = Syntax::Fixed,
                'G' => syntax = Syntax::Basic,
                's' | 'a' | 'I' | 'U' => {}
                'e' | 'A' | 'B' | 'C' => {
                    let value = if rest.is_empty() {
                        args.next()
                            .cloned()
                            .ok_or("grep option without its value")?
                    } else {
                        rest
                    };
                    if *f == 'e' {
                        patterns.push(value);
                    }
                    break;
                }
                // Context lines print more rows, never fewer.
                '0'..='9' => break,
                _ => return Err(format!("grep option `-{f}` is not read")),
            }
        }
    }
    if patterns.is_empty() {
        if operands.is_empty() {
            return Err("grep without a pattern".into());
        }
        patterns.push(operands.remove(0).to_string());
    }
    if !operands.is_empty() {
        return Err("grep reads files, not lsmod's output".into());
    }
    let mut alternatives = Vec::new();
    for p in &patterns {
        // A pattern of several lines is several patterns (grep(1)).
        for line in p.split('\n') {
            alternatives.extend(pattern(line, syntax)?);
        }
    }
    Ok(Grep {
        alternatives,
        ignore_case,
        word,
    })
}

/// The alternatives of one pattern, or why it is not read.
fn pattern(p: &str, syntax: Syntax) -> Result<Vec<Alternative>, String> {
    if syntax == Syntax::Fixed {
        return Ok(vec![Alternative {
            anchored: false,
            atoms: p.chars().map(Some).collect(),
        }]);
    }
    let not_read = |what: &str| Err(format!("grep pattern `{p}`: {what} is not read"));
    let mut out = Vec::new();
    let mut cur = Alternative {
        anchored: false,
        atoms: Vec::new(),
    };
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        let at_start = cur.atoms.is_empty() && !cur.anchored;
        match c {
            '^' if at_start => cur.anchored = true,
            '|' if syntax == Syntax::Extended => {
                out.push(std::mem::replace(
                    &mut cur,
                    Alternative {
                        anchored: false,
                        atoms: Vec::new(),
                    },
                ));
            }
            '.' => cur.atoms.push(None),
            '\\' => match chars.next() {
                Some('|') if syntax == Syntax::Basic => {
                    out.push(std::mem::replace(
                        &mut cur,
                        Alternative {
                            anchored: false,
                            atoms: Vec::new(),
                        },
                    ));
                }
                Some(x) if "._-/^$*[]\\".contains(x) => cur.atoms.push(Some(x)),
                Some('|') => cur.atoms.push(Some('|')),
                _ => return not_read("a backslash sequence"),
            },
            '$' => return not_read("`$` (the row goes on after the name)"),
            '[' | ']' => return not_read("a bracket expression"),
            '*' if at_start && syntax == Syntax::Basic => cur.atoms.push(Some('*')),
            '*' => return not_read("a repetition"),
            '(' | ')' | '{' | '}' | '+' | '?' if syntax == Syntax::Extended => {
                return not_read("a group or repetition");
            }
            c => cur.atoms.push(Some(c)),
        }
    }
    out.push(cur);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covers(cmd: &str, module: &str) -> bool {
        reach_of(cmd).unwrap().covers(module)
    }

    #[test]
    fn a_whole_lsmod_covers_every_module() {
        assert_eq!(reach_of("lsmod"), Some(Reach::All));
        assert_eq!(reach_of("sudo /sbin/lsmod | sort"), Some(Reach::All));
        assert!(covers("lsmod", "nv_peer_mem"));
        assert_eq!(reach_of("ibstat"), None);
        assert_eq!(reach_of("modinfo nvidia_peermem"), None);
    }

    #[test]
    fn a_grep_covers_the_modules_whose_rows_it_keeps() {
        assert!(covers("lsmod | grep nvidia", "nvidia_peermem"));
        assert!(!covers("lsmod | grep nvidia", "nv_peer_mem"));
        assert!(covers("lsmod | grep peer", "nv_peer_mem"));
        assert!(!covers("lsmod | grep Peer", "nv_peer_mem"));
        assert!(covers("lsmod | grep -i Peer", "nv_peer_mem"));
        assert!(covers("lsmod |grep nv_peer", "nv_peer_mem"));
        assert!(covers("lsmod | grep ^nv", "nvidia_peermem"));
        assert!(!covers("lsmod | grep ^peer", "nvidia_peermem"));
        assert!(covers("lsmod | grep nv.peer", "nv_peer_mem"));
    }

    #[test]
    fn alternations_follow_the_pattern_syntax() {
        let ere = "lsmod | grep -E 'nvidia|mlx5|ib_'";
        assert!(covers(ere, "nvidia_peermem") && covers(ere, "ib_core"));
        assert!(!covers(ere, "nv_peer_mem"));
        assert!(covers("lsmod | egrep \"nv_peer|peermem\"", "nv_peer_mem"));
        // Basic syntax: `\|` alternates, `|` is a letter.
        assert!(covers("lsmod | grep 'nv_peer\\|peermem'", "nvidia_peermem"));
        assert!(!covers("lsmod | grep 'nv_peer|peermem'", "nvidia_peermem"));
        // Unquoted, the shell takes the backslash: grep gets `a|b`.
        assert!(!covers("lsmod | grep nv_peer\\|peermem", "nvidia_peermem"));
        assert!(covers(
            "lsmod | grep -e nv_peer -e nvidia_peermem",
            "nvidia_peermem"
        ));
        assert!(covers("lsmod | grep -ie PEER", "nv_peer_mem"));
    }

    #[test]
    fn whole_words_and_chains_are_exact() {
        assert!(!covers("lsmod | grep -w nvidia", "nvidia_peermem"));
        assert!(covers("lsmod | grep -w nvidia_peermem", "nvidia_peermem"));
        assert!(covers("lsmod | grep nv | grep mem", "nv_peer_mem"));
        assert!(!covers("lsmod | grep nv | grep uvm", "nv_peer_mem"));
    }

    #[test]
    fn a_filter_that_is_not_read_says_nothing() {
        for cmd in [
            "lsmod | grep -v nvidia",
            "lsmod | grep -c peer",
            "lsmod | head -20",
            "lsmod | grep 'peer.*mem'",
            "lsmod | grep 'nv_peer_mem$'",
            "lsmod | grep '[n]v_peer'",
            "lsmod | grep peer /proc/modules",
            "lsmod | grep peer; ibstat",
            "lsmod | grep $MOD",
        ] {
            assert!(
                matches!(reach_of(cmd), Some(Reach::Unknown(_))),
                "{cmd}: {:?}",
                reach_of(cmd)
            );
        }
    }
}
