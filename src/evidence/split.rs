//! Splitting a block where another tool's output begins: two transcripts
//! pasted one after the other with no command line between them (ibstat's
//! output, then `nvidia-smi topo -m`'s) are two blocks, not one.
//!
//! A tool's *header* is a line it prints at the top of its output and
//! nowhere else (`CA 'mlx5_0'`, `hca_id:`, the `GPU0 ... CPU Affinity`
//! row, `nvbandwidth Version:`). A segment from the scanner is cut before
//! a header line when the text before it is not already that tool's
//! output; the rule some tools draw right above their title (perftest's
//! `-----`, dcgmi's `+-----+`) goes with the header. Pure: text
//! and line numbers in, the same lines out, regrouped.

use std::borrow::Cow;
use std::sync::OnceLock;

use super::Tool;
use super::scan::Segment;
use super::tools::{Header, TOOLS};

/// The tool whose output starts at `line` (as the scanner left it), if
/// the line is such a header: the [`Header`]s of the tool table, tried
/// where the trimmed line starts with one of their first bytes.
pub fn header_tool(line: &str) -> Option<Tool> {
    let first = trimmed_first(line)?;
    let candidates = &headers()[usize::from(first)];
    if candidates.is_empty() {
        return None;
    }
    let t = super::trim(line);
    candidates
        .iter()
        .find(|(_, h)| (h.is)(line, t))
        .map(|&(tool, _)| tool)
}

/// The headers of the tool table by the bytes they may start with, in
/// the table's order; built once.
fn headers() -> &'static [Vec<(Tool, &'static Header)>] {
    static BY_FIRST: OnceLock<Vec<Vec<(Tool, &'static Header)>>> = OnceLock::new();
    BY_FIRST.get_or_init(|| {
        let mut by_first = vec![Vec::new(); 256];
        for spec in TOOLS {
            if let Some(h) = &spec.header {
                for &b in h.first {
                    by_first[usize::from(b)].push((spec.tool, h));
                }
            }
        }
        by_first
    })
}

/// The rule or box edge `tool` draws right above its title (perftest's
/// `-----`, dcgmi's `+-----+`): one line, which goes with the title.
fn opens_title(tool: Tool, t: &str) -> bool {
    let Some(rule) = tool.spec().header.as_ref().and_then(|h| h.rule) else {
        return false;
    };
    t.len() >= 3 && t.starts_with(&rule[..1]) && t.chars().all(|c| rule.contains(c))
}

/// The first byte of `line.trim()`: the first past leading spaces and
/// tabs where that is a plain ASCII byte no trim takes off, found
/// without trimming; else the trimmed line's.
fn trimmed_first(line: &str) -> Option<u8> {
    let b = line.as_bytes();
    match b.get(super::blanks(b)) {
        Some(&c) if c.is_ascii_graphic() => Some(c),
        None => None,
        _ => super::trim(line).as_bytes().first().copied(),
    }
}

/// `seg` cut before every header line whose tool is not the one the text
/// before it already is; `seg` itself when there is no such line.
pub fn split_at_headers(seg: Segment<'_>) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    split_and_detect(seg, &mut out);
    out.into_iter().map(|(s, _)| s).collect()
}

/// [`split_at_headers`], each part pushed onto `out` with the tool
/// [`detect`](super::detect) finds in it; the segment is split into
/// lines once for the cuts and every detection.
pub fn split_and_detect<'a>(seg: Segment<'a>, out: &mut Vec<(Segment<'a>, Option<Tool>)>) {
    split_and_detect_lines(seg, None, out);
}

/// [`split_and_detect`], given `seg`'s text already split into lines as
/// [`push_lines`](super::push_lines) splits it ([`Scan::whole_lines`]),
/// or `None` to split it here.
///
/// [`Scan::whole_lines`]: super::scan::Scan::whole_lines
pub(crate) fn split_and_detect_lines<'a>(
    seg: Segment<'a>,
    split: Option<&[&'a str]>,
    out: &mut Vec<(Segment<'a>, Option<Tool>)>,
) {
    let mut own: Vec<&str> = Vec::new();
    let lines: &[&str] = match split {
        Some(lines) => lines,
        None => {
            // One line per line number: the scanner's count sizes the list.
            own.reserve_exact(seg.lines.len());
            super::push_lines(&seg.text, &mut own);
            &own
        }
    };
    // Without a `\r` the lines are the text's pieces between single `\n`s:
    // a run of them is a slice of the text and splits back into itself,
    // so detection needs no joined copy and no second split.
    let plain = crate::read::find_byte(b'\r', seg.text.as_bytes()).is_none();
    let mut cuts = if lines.len() == seg.lines.len() {
        header_cuts(&seg.text, lines, plain)
    } else {
        Vec::new()
    };
    // `lsmod` rows with no header after another tool's output.
    if lines.len() == seg.lines.len()
        && let Some(k) = super::lsmod::rows_at_end(lines)
    {
        let start = cuts.last().map_or(0, |c| c.0);
        if k > start {
            let found = detect_joined(&seg.text, &lines[start..k], plain);
            if found != Some(Tool::Lsmod) {
                cuts.push((k, found));
            }
        }
    }
    if cuts.is_empty() {
        let tool = if !plain && lines.iter().any(|l| l.ends_with('\r')) {
            super::detect(&seg.text)
        } else {
            super::detect_in(&seg.text, lines)
        };
        drop(own);
        out.push((seg, tool));
        return;
    }
    let at: Vec<usize> = cuts.iter().map(|&(cut, _)| cut).collect();
    for (part, range) in cut_at(&seg, lines, &at) {
        let before = cuts.iter().find(|&&(cut, _)| cut == range.end);
        let tool = match before {
            // A part that ends at a cut was detected there, as the same
            // lines less the last `\n` (and a last empty line): no
            // detector tells the two apart (`detection_ignores_a_final_newline`).
            Some(&(_, tool)) if plain => tool,
            // The part's text is these lines, each followed by `\n`.
            _ if plain => super::detect_in(&part.text, &lines[range]),
            _ => super::detect(&part.text),
        };
        out.push((part, tool));
    }
}

/// Where [`split_at_headers`] cuts `lines` (`text`'s, one per line
/// number): before each header line whose tool the text before it is
/// not; with each cut, the tool detected in that text. `plain`: `text`
/// holds no `\r`.
fn header_cuts(text: &str, lines: &[&str], plain: bool) -> Vec<(usize, Option<Tool>)> {
    let mut cuts = Vec::new();
    let mut start = 0;
    let mut own: Option<Tool> = None;
    for (i, l) in lines.iter().enumerate() {
        let Some(tool) = header_tool(l) else {
            continue;
        };
        if own == Some(tool) {
            continue;
        }
        let mut cut = i;
        if cut > start && opens_title(tool, lines[cut - 1].trim()) {
            cut -= 1;
        }
        if lines[start..cut].iter().all(|l| l.trim().is_empty()) {
            own = Some(tool);
            continue;
        }
        let found = detect_joined(text, &lines[start..cut], plain);
        if found == Some(tool) {
            own = Some(tool);
            continue;
        }
        // `topo -p2p`'s header (`GPU0 GPU1 ...`) heads rocm-smi's tables
        // too: it starts a block only after another tool's output, and
        // after rocm-smi's only where a row of P2P statuses follows it.
        if tool == Tool::NvidiaSmiP2p {
            let statuses = || {
                lines[i + 1..]
                    .iter()
                    .find(|l| !l.trim().is_empty())
                    .is_some_and(|l| super::topology::nvidia::is_p2p_row(l))
            };
            match found {
                None => continue,
                Some(Tool::RocmSmiTopo) if !statuses() => continue,
                _ => {}
            }
        }
        cuts.push((cut, found));
        start = cut;
        own = Some(tool);
    }
    cuts
}

/// [`detect`](super::detect) of `run.join("\n")`, where `run` is a
/// non-empty run of `text`'s lines. Without a `\r` in `text` that join is
/// the slice of `text` from the run's first line to the end of its last,
/// and it splits into `run` less a last empty line (`lines` ends at the
/// final `\n`).
fn detect_joined(text: &str, run: &[&str], plain: bool) -> Option<Tool> {
    let (Some(first), Some(last)) = (run.first(), run.last()) else {
        return super::detect("");
    };
    if !plain {
        return super::detect(&run.join("\n"));
    }
    let at = |l: &str| l.as_ptr() as usize - text.as_ptr() as usize;
    let joined = &text[at(first)..at(last) + last.len()];
    let run = match run.split_last() {
        Some((&"", rest)) => rest,
        _ => run,
    };
    super::detect_in(joined, run)
}

/// `seg` (split into `lines`) cut at `cuts`, each part with its range of
/// `lines`; parts that are all blank are left out.
fn cut_at<'a>(
    seg: &Segment<'a>,
    lines: &[&str],
    cuts: &[usize],
) -> Vec<(Segment<'a>, std::ops::Range<usize>)> {
    let mut out = Vec::with_capacity(cuts.len() + 1);
    let mut bounds = vec![0];
    bounds.extend(cuts);
    bounds.push(lines.len());
    for (k, w) in bounds.windows(2).enumerate() {
        let (a, b) = (w[0], w[1]);
        if lines[a..b].iter().all(|l| l.trim().is_empty()) {
            continue;
        }
        let mut text = String::with_capacity(lines[a..b].iter().map(|l| l.len() + 1).sum());
        for l in &lines[a..b] {
            text.push_str(l);
            text.push('\n');
        }
        let part = Segment {
            command: if k == 0 { seg.command.clone() } else { None },
            prompt_line: if k == 0 {
                seg.prompt_line.clone()
            } else {
                None
            },
            text: Cow::Owned(text),
            lines: seg.lines[a..b].to_vec(),
        };
        out.push((part, a..b));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::pcie::is_lspci_device;
    use crate::evidence::scan::scan;

    #[test]
    fn ibstat_then_topo_without_a_command_line_are_two_segments() {
        let text = "CA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Active\n\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV12\t0-63\n";
        let segs: Vec<Segment> = scan(text)
            .segments
            .into_iter()
            .flat_map(split_at_headers)
            .collect();
        assert_eq!(segs.len(), 2);
        assert_eq!(segs[0].lines, vec![1, 2, 3, 4]);
        assert_eq!(segs[1].lines, vec![5, 6]);
    }

    #[test]
    fn lsmod_after_ibstat_without_a_command_line_is_its_own_segment() {
        // Synthetic: ibstat's output, then lsmod's header and rows.
        let text = "CA 'mlx5_0'\n\tCA type: MT4123\nModule                  Size  Used by\nnvidia_peermem         16384  0\n";
        let segs = split_at_headers(scan(text).segments.remove(0));
        assert_eq!(segs.len(), 2);
        assert_eq!(segs[1].lines, vec![3, 4]);
    }

    #[test]
    fn a_rule_above_a_title_goes_with_it_and_repeats_do_not_split() {
        let text = "CA 'mlx5_0'\n\tPort 1:\n-----\n  RDMA_Write BW Test\n x\n-----\n  RDMA_Write BW Test\n";
        let segs = split_at_headers(scan(text).segments.remove(0));
        assert_eq!(segs.len(), 2);
        assert_eq!(segs[1].lines, vec![3, 4, 5, 6, 7]);
        assert!(header_tool("00:01.0 PCI bridge: Intel").is_some());
        assert!(header_tool("   0     1.00    2.00").is_none());
    }

    /// What lets a cut part keep the tool detected before the cut: every
    /// detector answers alike for lines joined with `\n` and for the same
    /// lines each followed by `\n` (a last empty line then counts), over
    /// runs of every capture.
    #[test]
    fn detection_ignores_a_final_newline() {
        fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    files(&p, out);
                } else {
                    out.push(p);
                }
            }
        }
        let mut paths = Vec::new();
        files(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("captures"),
            &mut paths,
        );
        let mut runs = 0;
        for p in paths {
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue;
            };
            if text.contains('\r') {
                continue;
            }
            let lines: Vec<&str> = text.lines().collect();
            // Every run from the top that ends at a blank line or the end.
            for end in (1..=lines.len()).filter(|&e| e == lines.len() || lines[e - 1].is_empty()) {
                let run = &lines[..end];
                let joined = run.join("\n");
                let bare = match run.split_last() {
                    Some((&"", rest)) => rest,
                    _ => run,
                };
                let ended = format!("{joined}\n");
                for s in super::super::TOOLS {
                    assert_eq!(
                        (s.detect)(&joined, bare),
                        (s.detect)(&ended, run),
                        "{} on {} lines 1-{end}",
                        s.name,
                        p.display()
                    );
                }
                runs += 1;
            }
        }
        assert!(runs > 100);
    }

    #[test]
    fn trimmed_first_is_the_first_byte_of_str_trim() {
        for s in [
            "",
            " ",
            "\t",
            " \t x",
            "x",
            "  GPU0",
            "\u{b}C",
            " \u{a0}C",
            "\u{3000}",
            "\u{e9}",
            " \r",
            "\x0cD",
            "\t\t# nThread",
            "        8",
        ] {
            assert_eq!(
                trimmed_first(s),
                s.trim().as_bytes().first().copied(),
                "{s:?}"
            );
        }
    }

    #[test]
    fn a_twelve_byte_word_with_a_multi_byte_character_is_no_lspci_address() {
        assert!(!is_lspci_device("0000\u{e9}000000 foo: bar"));
        // Found by never_panics: a nccl-tests size cell with one digit
        // replaced by a 4-byte char used to panic slicing at byte 5.
        assert!(!is_lspci_device("16\u{10000}777216 x: y"));
        assert!(is_lspci_device(
            "0000:01:00.0 VGA compatible controller: NVIDIA"
        ));
    }

    #[test]
    fn a_vmd_domain_of_five_digits_is_an_lspci_address() {
        // Behind an Intel VMD the domain is 0x10000 and up (lspci prints
        // `%04x`, so five digits); up to eight digits are a domain.
        assert!(is_lspci_device(
            "10000:e1:00.0 Non-Volatile memory controller: Sandisk Corp"
        ));
        assert!(is_lspci_device(
            "10000:e0:06.0 PCI bridge: Intel Corporation"
        ));
        assert!(is_lspci_device("0001e5a3:00:00.0 3D controller: NVIDIA"));
        assert_eq!(
            header_tool("10000:e1:00.0 Non-Volatile memory controller: Kingston"),
            Some(Tool::Lspci)
        );
        // Not a domain: three or nine digits, a non-hex one, no bus.
        assert!(!is_lspci_device("100:e1:00.0 x: y"));
        assert!(!is_lspci_device("100000000:e1:00.0 x: y"));
        assert!(!is_lspci_device("1000g:e1:00.0 x: y"));
        assert!(!is_lspci_device("10000:e1 x: y"));
        // An lspci block after ibstat's, no command line between: split.
        let text = "CA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\n10000:e1:00.0 Non-Volatile memory controller: X\n\tLnkSta:\tSpeed 8GT/s, Width x4\n";
        let segs = split_at_headers(scan(text).segments.remove(0));
        assert_eq!(segs.len(), 2);
        assert_eq!(segs[1].lines, vec![4, 5]);
    }
}
