//! Command lines: whether a line is a shell prompt (with or without a
//! command after it) or a bare command line, asked of every line the
//! scanner keeps.

use crate::evidence::SplitWords;

/// Device tools whose command line starts a transcript people paste; each
/// prints a line of its own whenever it runs.
pub(crate) const DEVICE_TOOLS: [&str; 16] = [
    "nvidia-smi",
    "rocm-smi",
    "amd-smi",
    "ibstat",
    "ibstatus",
    "ibv_devinfo",
    "ibv_devices",
    "show_gids",
    "lspci",
    "nvbandwidth",
    "p2pBandwidthLatencyTest",
    "bandwidthTest",
    "rocm-bandwidth-test",
    "TransferBench",
    "dcgmi",
    "ethtool",
];

/// Other programs that start a pasted command line (launchers, wrappers).
const OTHER_PROGRAMS: [&str; 9] = [
    "lsmod", "mpirun", "mpiexec", "srun", "numactl", "sudo", "kubectl", "docker", "cat",
];

/// `PROGRAM_INITIALS[b]`: which known programs start with the byte `b`, as
/// bits (bit `i` for `DEVICE_TOOLS[i]`, bit 16 + `j` for
/// `OTHER_PROGRAMS[j]`): a word is compared only with the one or two
/// names that share its first byte, not with every name.
const PROGRAM_INITIALS: [u32; 256] = {
    assert!(DEVICE_TOOLS.len() <= 16 && OTHER_PROGRAMS.len() <= 16);
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < DEVICE_TOOLS.len() {
        t[DEVICE_TOOLS[i].as_bytes()[0] as usize] |= 1 << i;
        i += 1;
    }
    let mut i = 0;
    while i < OTHER_PROGRAMS.len() {
        t[OTHER_PROGRAMS[i].as_bytes()[0] as usize] |= 1 << (16 + i);
        i += 1;
    }
    t
};

/// Whether `prog` is one of `DEVICE_TOOLS` or `OTHER_PROGRAMS`.
fn is_known_program(prog: &str) -> bool {
    let Some(&b) = prog.as_bytes().first() else {
        return false;
    };
    let mut bits = PROGRAM_INITIALS[usize::from(b)];
    while bits != 0 {
        let i = bits.trailing_zeros() as usize;
        let name = if i < 16 {
            DEVICE_TOOLS[i]
        } else {
            OTHER_PROGRAMS[i - 16]
        };
        if name == prog {
            return true;
        }
        bits &= bits - 1;
    }
    false
}

/// Where the bytes a command line's checks look for (`@`, and `/` or
/// `_`) next occur in the text being scanned: one search from a line
/// answers for every line up to the next occurrence, where a search per
/// line would set up a memchr call on each. A slice outside the text
/// ([`Finds::none`]) is searched itself.
pub(crate) struct Finds<'h> {
    hay: &'h [u8],
    /// `(from, at)`: the first `@` at or after byte `from` is at `at`
    /// (`usize::MAX`: none); `None` before the first search.
    at: Option<(usize, usize)>,
    /// The same for the first `/` or `_`.
    slash: Option<(usize, usize)>,
}

impl<'h> Finds<'h> {
    /// No text: every slice is searched itself.
    pub(crate) fn none() -> Finds<'static> {
        Finds::new(&[])
    }

    /// For slices of `hay`, asked about in the order of the text (a
    /// slice before the last one searched from is searched again).
    pub(crate) const fn new(hay: &'h [u8]) -> Finds<'h> {
        Finds {
            hay,
            at: None,
            slash: None,
        }
    }

    /// Where `@` is in `t`: memchr's answer on `t`.
    fn at(&mut self, t: &str) -> Option<usize> {
        let hay = self.hay;
        find_in(hay, t, &mut self.at, |b| crate::read::find_byte(b'@', b))
    }

    /// Whether `t` holds a `/` or a `_`.
    fn slash_or_underscore(&mut self, t: &str) -> bool {
        let hay = self.hay;
        find_in(hay, t, &mut self.slash, |b| {
            crate::read::find_byte2(b'/', b'_', b)
        })
        .is_some()
    }
}

/// `find(t)`, answered from `next` (the last search over `hay`) when `t`
/// is a slice of `hay` at or after where that search started; otherwise
/// `hay` is searched from `t` on and `next` remembers it.
fn find_in(
    hay: &[u8],
    t: &str,
    next: &mut Option<(usize, usize)>,
    find: impl Fn(&[u8]) -> Option<usize>,
) -> Option<usize> {
    let off = (t.as_ptr() as usize).wrapping_sub(hay.as_ptr() as usize);
    if off > hay.len() || t.len() > hay.len() - off {
        return find(t.as_bytes());
    }
    let at = match *next {
        Some((from, at)) if from <= off && at >= off => at,
        _ => {
            let at = find(&hay[off..]).map_or(usize::MAX, |k| off + k);
            *next = Some((off, at));
            at
        }
    };
    (at < off + t.len()).then(|| at - off)
}

/// If `t` (a trimmed line) is a shell prompt or a bare command line, the
/// command (possibly empty).
pub fn prompt_command(t: &str) -> Option<&str> {
    prompt_command_in(t, &mut Finds::none())
}

/// [`prompt_command`], its searches answered by `finds` (the scanner's,
/// over the whole text).
pub(crate) fn prompt_command_in<'t>(t: &'t str, finds: &mut Finds) -> Option<&'t str> {
    // Asked of every line: each form below is looked for only where the
    // line starts with its first byte (in the order they are tried).
    let first = *t.as_bytes().first()?;
    // A command quoted as markdown inline code: `` `ethtool -S eth0` ``.
    if first == b'`'
        && let Some(inner) = t.strip_prefix('`').and_then(|r| r.strip_suffix('`'))
        && !inner.contains('`')
    {
        return prompt_command_in(inner.trim(), finds);
    }
    if let Some(cmd) = after_prompt(t, finds) {
        return Some(cmd.trim());
    }
    match first {
        // A container shell: `Apptainer> cmd`, `Singularity> cmd`.
        b'A' | b'S' => {
            for p in ["Apptainer> ", "Singularity> "] {
                if let Some(rest) = t.strip_prefix(p) {
                    return Some(rest.trim());
                }
            }
        }
        // `$ cmd`: no tool prints a line that starts so.
        b'$' => {
            if let Some(rest) = t.strip_prefix("$ ") {
                return Some(rest.trim());
            }
            if t == "$" {
                return Some("");
            }
        }
        // `# ./bandwidthTest` or `# ibstat`: a root prompt, only when a
        // known command follows (tools print `# ` comment lines of their own).
        b'#' => {
            if let Some(rest) = t.strip_prefix("# ")
                && is_command_in(crate::evidence::trim(rest), finds)
            {
                return Some(rest.trim());
            }
        }
        _ => {}
    }
    // A shell's default prompt: `sh-5.1# cmd`, `bash-4.2$ cmd`.
    // (Every such shell's name starts with one of these bytes.)
    // (`split_once(' ')` by memchr: the std search sets up a searcher.)
    if matches!(t.as_bytes().first(), Some(b's' | b'b' | b'z' | b'k' | b'd'))
        && let Some(sp) = crate::read::find_byte(b' ', t.as_bytes())
        && is_shell_prompt(&t[..sp])
    {
        return Some(t[sp + 1..].trim());
    }
    is_command_in(t, finds).then_some(t)
}

/// `sh-5.1#`, `bash-4.2$`, `zsh%` (a shell's name and version, then the
/// prompt character).
fn is_shell_prompt(head: &str) -> bool {
    let Some(body) = head.strip_suffix(['#', '$', '%']) else {
        return false;
    };
    let (name, version) = body.split_once('-').unwrap_or((body, ""));
    matches!(name, "sh" | "bash" | "zsh" | "ksh" | "dash")
        && version.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

/// `user@host:~$ cmd`, `[root@host dir]# cmd`, `(env) user@host:/x# cmd`.
fn after_prompt<'t>(t: &'t str, finds: &mut Finds) -> Option<&'t str> {
    // Asked of every line: most lines are answered by the last search
    // over the text (`Finds`). (`@` is ASCII: the byte is the character.)
    let at = finds.at(t)?;
    // The prompt is the first word(s) up to `$ ` / `# ` / `$`/`#` at the end.
    let head_end = t[at..].find(['$', '#']).map(|k| at + k)?;
    let head = &t[..head_end];
    if head.contains("  ") || head.len() > 120 {
        return None;
    }
    let user = head[..at].rsplit([' ', '(', ')', '[']).next()?;
    if user.is_empty()
        || !user
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
    {
        return None;
    }
    let host = &head[at + 1..];
    let host_ok = host
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        && (host.contains(':') || host.ends_with(']') || !host.contains(' '));
    if !host_ok {
        return None;
    }
    let rest = &t[head_end + 1..];
    if rest.is_empty() || rest.starts_with(' ') {
        Some(rest)
    } else {
        None
    }
}

/// The first word of `t` as `split_whitespace` finds it, and the text
/// after it; `None` when `t` is blank. A plain ASCII word is found byte by
/// byte, anything else by `split_whitespace` itself.
pub(super) fn first_word(t: &str) -> Option<(&str, &str)> {
    let b = t.as_bytes();
    let end = b
        .iter()
        .position(|c| matches!(c, b'\t'..=b'\r' | b' ') || !c.is_ascii())
        .unwrap_or(b.len());
    if end > 0 && b.get(end).is_none_or(|c| c.is_ascii()) {
        return Some((&t[..end], &t[end..]));
    }
    let rest = t.trim_start();
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    (end > 0).then(|| rest.split_at(end))
}

/// `false` only where [`is_command`] is: `t` starts with a plain ASCII
/// word without `/` whose first byte starts no known program name (nor
/// `osu_`, `ib_`, `./`) and which does not end in `_perf`. Most lines of
/// tool output (numbers, capitalised words) end here after one look at
/// their first word.
fn may_be_command(t: &str, finds: &mut Finds) -> bool {
    let b = t.as_bytes();
    let Some(&c) = b.first() else {
        return false;
    };
    if !c.is_ascii()
        || c.is_ascii_whitespace()
        || PROGRAM_INITIALS[usize::from(c)] != 0
        || matches!(c, b'o' | b'i' | b'.' | b'/' | 0x0B)
    {
        return true;
    }
    // Past that byte only a `/` in the first word, or the `_` of its
    // `_perf`, can make it a program: a line with neither is none (one
    // memchr look, where a rule of dashes is one long word).
    if !finds.slash_or_underscore(t) {
        return false;
    }
    let mut end = 1;
    while let Some(&c) = b.get(end) {
        if matches!(c, b'\t'..=b'\r' | b' ') {
            break;
        }
        if c == b'/' || !c.is_ascii() {
            return true;
        }
        end += 1;
    }
    b[..end].ends_with(b"_perf")
}

/// Whether `t` starts with a known program (or `./prog`, `/path/prog`)
/// followed by nothing, a flag or a subcommand word.
pub(crate) fn is_command(t: &str) -> bool {
    is_command_in(t, &mut Finds::none())
}

/// [`is_command`], its search answered by `finds`.
fn is_command_in(t: &str, finds: &mut Finds) -> bool {
    may_be_command(t, finds) && known_command(t)
}

/// [`is_command`] without its cheap refusal (`may_be_command`): the
/// answer the refusal must agree with (tested on every capture line).
#[inline(always)]
fn known_command(t: &str) -> bool {
    let Some((first, after)) = first_word(t) else {
        return false;
    };
    let prog = match first.bytes().rposition(|b| b == b'/') {
        Some(i) => &first[i + 1..],
        None => first,
    };
    let known = is_known_program(prog)
        || prog.ends_with("_perf")
        || prog.starts_with("osu_")
        || (prog.starts_with("ib_") && (prog.ends_with("_bw") || prog.ends_with("_lat")))
        || (first.starts_with("./") && prog.len() > 1);
    if !known {
        return false;
    }
    match after.words().next() {
        None => true,
        Some(w) => {
            w.starts_with('-')
                || (prog == "sudo" || prog == "numactl" || prog == "mpirun" || prog == "srun")
                || matches!(
                    w,
                    "topo" | "nvlink" | "topology" | "static" | "metric" | "|"
                )
                || first.starts_with("./")
                || w.starts_with('/')
                || w.contains('=')
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`prompt_command`] and [`is_command`] as they were before their
    /// first-byte filters: the same answers on every line.
    fn prompt_command_before(t: &str) -> Option<&str> {
        if let Some(inner) = t.strip_prefix('`').and_then(|r| r.strip_suffix('`'))
            && !inner.contains('`')
        {
            return prompt_command_before(inner.trim());
        }
        if let Some(cmd) = after_prompt(t, &mut Finds::none()) {
            return Some(cmd.trim());
        }
        for p in ["Apptainer> ", "Singularity> "] {
            if let Some(rest) = t.strip_prefix(p) {
                return Some(rest.trim());
            }
        }
        if let Some(rest) = t.strip_prefix("$ ") {
            return Some(rest.trim());
        }
        if let Some(rest) = t.strip_prefix("# ")
            && known_command(rest.trim())
        {
            return Some(rest.trim());
        }
        if t == "$" {
            return Some("");
        }
        if matches!(t.as_bytes().first(), Some(b's' | b'b' | b'z' | b'k' | b'd'))
            && let Some((head, rest)) = t.split_once(' ')
            && is_shell_prompt(head)
        {
            return Some(rest.trim());
        }
        known_command(t).then_some(t)
    }

    /// [`Finds`] over a whole text answers as a search of each line does,
    /// lines asked in order, again, and backwards.
    #[test]
    fn finds_over_the_text_answer_as_a_search_per_line() {
        let mut texts = vec![
            "u@h:~$ ls\nx/y z\n# ibstat\n`ib_write_bw`\n___\n@\n/\n\n a_perf -x\nq@r# s\n"
                .to_string(),
            "no bytes here\nor here\nsh-5.1# /usr/bin/x\nosu_bw".to_string(),
        ];
        texts.extend(crate::evidence::capture_texts());
        for text in &texts {
            let lines: Vec<&str> = crate::evidence::lines(text).map(str::trim).collect();
            let mut finds = Finds::new(text.as_bytes());
            for t in lines.iter().chain(&lines).chain(lines.iter().rev()) {
                assert_eq!(prompt_command_in(t, &mut finds), prompt_command(t), "{t:?}");
                assert_eq!(is_command_in(t, &mut finds), is_command(t), "{t:?}");
                let mut none = Finds::none();
                assert_eq!(
                    finds.at(t),
                    crate::read::find_byte(b'@', t.as_bytes()),
                    "{t:?}"
                );
                assert_eq!(
                    none.at(t),
                    crate::read::find_byte(b'@', t.as_bytes()),
                    "{t:?}"
                );
                let slash = crate::read::find_byte2(b'/', b'_', t.as_bytes()).is_some();
                assert_eq!(finds.slash_or_underscore(t), slash, "{t:?}");
            }
        }
    }

    #[test]
    fn first_byte_filters_change_no_answer() {
        let mut lines: Vec<String> = Vec::new();
        let heads = [
            "",
            " ",
            "\t",
            "\u{b}",
            "\u{a0}",
            "\u{3000}",
            "# ",
            "#",
            "$ ",
            "$",
            "`",
            "> ",
            "Apptainer> ",
            "Singularity> ",
            "sh-5.1# ",
            "bash$ ",
            "root@h:~# ",
            "[u@h d]$ ",
        ];
        let words = [
            "",
            "ibstat",
            "ibstatus",
            "./x",
            ".",
            "/",
            "/usr/bin/ib_write_bw",
            "ib_read_lat",
            "all_reduce_perf",
            "x/y_perf",
            "y_perf\u{e9}",
            "osu_bw",
            "caf\u{e9}",
            "Port",
            "1234",
            "a\u{b}b",
            "nvidia-smi",
            "Transfer",
            "TransferBench",
            "sudo",
            "s",
            "o",
            "i",
            "`",
            "$",
            "#",
        ];
        let tails = [
            "",
            " ",
            " -a",
            " topo",
            " x=1",
            " /dev/x",
            "`",
            " | grep x",
            "\tnvlink",
            " word",
            "\u{a0}-v",
        ];
        for h in heads {
            for w in words {
                for t in tails {
                    lines.push(format!("{h}{w}{t}"));
                }
            }
        }
        for text in crate::evidence::capture_texts() {
            lines.extend(text.lines().map(String::from));
        }
        assert!(lines.len() > 5000);
        for l in &lines {
            for t in [l.as_str(), l.trim(), l.trim_start()] {
                assert_eq!(prompt_command(t), prompt_command_before(t), "{t:?}");
                assert_eq!(is_command(t), known_command(t), "{t:?}");
            }
        }
    }
}
