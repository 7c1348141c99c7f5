//! `peer_copy_bw`: the small peer-to-peer copy program of the curriculum's
//! lab "Measure a GPU pair" (`hip/peer_copy_bw.cpp`, and its CUDA twin
//! `cuda/peer_copy_bw.cu`), usually pasted as several runs, one per
//! ordered GPU pair, with or without the shell prompts that started them.
//!
//! Each run prints two lines on stdout:
//! - `device D reading device S: direct peer path` (or `NO direct path,
//!   will stage`): the runtime's peer-access answer for destination D
//!   reading the memory of source S. The second answer is the seed's
//!   silent fallback: the copy still runs, through host memory, and only
//!   this line says so. Both answers are kept as topology facts (as the
//!   live sweep keeps its own `canAccessPeer` answers), so a refused pair
//!   is the diagnosis's `no-peer-path`.
//! - `N MiB x I iters: X GB/s unidirectional, W wrong bytes`: one cell.
//!
//! What the program fixes, and the transcript therefore does not print:
//! the figure is the total bytes of the `I` timed copies (S to D, one
//! stream, one after another) over the time between two device events;
//! three untimed copies go first (a constant of the program: the first
//! copy pays for setting the path up); GB is 1e9 bytes; every byte of the
//! destination is compared afterwards, `W` counting those that differ. The
//! printed size is the byte count shifted right by 20, so it is whole MiB,
//! rounded down (a run of under 1 MiB prints 0, and its size is not known).
//!
//! Failures go to stderr, and a paste that kept them holds
//! `HIP <file>:<line> '<call>': <message>` (`CUDA ...` for the CUDA
//! build), `need two distinct valid device ids; found N`, `byte count must
//! be positive`, or the enable-peer-access call's own message: each is the
//! run's failure, a `tool-error` problem.

use super::super::topology::P2pCell;
use super::super::{Source, numbered_lines};
use super::*;
use crate::evidence::scan::{SkipReason, prompt_command};

/// The program's name, as the cells name their tool.
const PROGRAM: &str = "peer_copy_bw";
/// The tool's name in problems (the tool table's).
const TOOL: &str = "peer-copy-bw";
/// The untimed copies before the timed ones: a constant of the program
/// (its warm-up loop runs three times whatever the arguments), so every
/// run had them though no line says so.
const WARMUP_COPIES: u64 = 3;
/// The test every cell belongs to (the program runs one test).
const TEST: &str = "peer_copy_bw unidirectional peer copy";

/// The two answers of the pair line, as printed.
const DIRECT: &str = "direct peer path";
const STAGED: &str = "NO direct path, will stage";

pub fn looks_like_peer_copy_bw(text: &str, lines: &[&str]) -> bool {
    let trimmed = || lines.iter().map(|l| crate::evidence::trim(l));
    (has!(text, " reading device ") && trimmed().any(|t| pair_line(t).is_some()))
        || (has!(text, " wrong bytes") && trimmed().any(|t| matches!(result_line(t), Ok(Some(_)))))
        || has!(text, "need two distinct valid device ids; found")
        // A run that failed before printing anything: the runtime check's
        // line names the program's source file.
        || (has!(text, "peer_copy_bw.c") && trimmed().any(is_error_line))
}

/// `device D reading device S: <answer>`, the header of one run.
pub fn is_pair_line(t: &str) -> bool {
    pair_line(t).is_some()
}

/// One run's pair line: source and destination device, and whether the
/// runtime said the destination can read the source directly.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Pair {
    src: usize,
    dst: usize,
    direct: bool,
    line: usize,
}

/// `(src, dst, direct)` of a pair line.
fn pair_line(t: &str) -> Option<(usize, usize, bool)> {
    let rest = t.strip_prefix("device ")?;
    let (dst, rest) = rest.split_once(" reading device ")?;
    let (src, answer) = rest.split_once(": ")?;
    let direct = match answer.trim() {
        DIRECT => true,
        STAGED => false,
        _ => return None,
    };
    Some((src.parse().ok()?, dst.parse().ok()?, direct))
}

/// A result line's numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Figure<'a> {
    mib: u64,
    iters: u64,
    gbs: f64,
    printed: &'a str,
    wrong: u64,
}

/// `N MiB x I iters: X GB/s unidirectional, W wrong bytes`. `Ok(None)`:
/// not shaped as one (no `N MiB` start); `Err`: shaped as one, but a part
/// is missing or not a number.
fn result_line(t: &str) -> Result<Option<Figure<'_>>, String> {
    let w: Vec<&str> = t.words().collect();
    if w.len() < 2 || w[1] != "MiB" || !w[0].bytes().all(|b| b.is_ascii_digit()) {
        return Ok(None);
    }
    let expected = || "`N MiB x I iters: X GB/s unidirectional, W wrong bytes`".to_string();
    let [
        mib,
        _,
        "x",
        iters,
        "iters:",
        gbs,
        "GB/s",
        "unidirectional,",
        wrong,
        "wrong",
        "bytes",
    ] = w.as_slice()
    else {
        return Err(expected());
    };
    let figure = Figure {
        mib: mib.parse().map_err(|_| expected())?,
        iters: iters.parse().map_err(|_| expected())?,
        gbs: parse_number(gbs).ok_or_else(|| format!("a bandwidth in GB/s, found `{gbs}`"))?,
        printed: gbs,
        wrong: wrong.parse().map_err(|_| expected())?,
    };
    Ok(Some(figure))
}

/// A line the program writes to stderr when a run fails.
fn is_error_line(t: &str) -> bool {
    let runtime_check = ["HIP ", "CUDA "].iter().any(|p| {
        t.strip_prefix(p)
            .is_some_and(|r| r.contains(" '") && r.contains("': "))
    });
    runtime_check
        || t.starts_with("need two distinct valid device ids; found")
        || t == "byte count must be positive"
        || t.starts_with("hipDeviceEnablePeerAccess: ")
        || t.starts_with("cudaDeviceEnablePeerAccess: ")
}

/// The start of one of the program's lines, cut: what a paste that stops
/// mid-line leaves as its last line.
fn is_cut_line(t: &str) -> bool {
    "device reading".starts_with(t) || t.starts_with("device ") || is_cut_result(t)
}

/// The words of a result line; `#` stands for a number.
const RESULT_WORDS: [&str; 11] = [
    "#",
    "MiB",
    "x",
    "#",
    "iters:",
    "#",
    "GB/s",
    "unidirectional,",
    "#",
    "wrong",
    "bytes",
];

/// Whether `t` is the start of a result line and no more: each word the
/// word the program prints there (the last one perhaps cut inside), from
/// `N MiB` on. A whole line of another shape is not a cut.
fn is_cut_result(t: &str) -> bool {
    let w: Vec<&str> = t.words().collect();
    if w.len() < 2 || w.len() > RESULT_WORDS.len() {
        return false;
    }
    let number = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let whole = w.len() == RESULT_WORDS.len() && w[w.len() - 1] == "bytes";
    !whole
        && w.iter()
            .zip(RESULT_WORDS)
            .enumerate()
            .all(|(i, (x, want))| {
                let last = i == w.len() - 1;
                match (want, last) {
                    ("#", _) => number(x),
                    (_, true) => want.starts_with(x),
                    (_, false) => *x == want,
                }
            })
}

/// The byte count a kept prompt line asked `peer_copy_bw` for: its third
/// argument, or the program's default (256 MiB) when it was given two.
fn asked_bytes(command: &str) -> Option<u64> {
    let mut w = command.words();
    w.by_ref().find(|x| x.rsplit('/').next() == Some(PROGRAM))?;
    let args: Vec<&str> = w.collect();
    match args.len() {
        0..=2 => Some(256 << 20),
        _ => args[2].parse().ok(),
    }
}

/// Reads every run of the transcript: each result line is a cell, each
/// pair line a peer-access fact, each stderr line a failed run.
pub fn parse_peer_copy_bw(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let mut gpus = Ids::new("GPU");
    let last = numbered_lines(text)
        .filter(|(_, l)| !l.trim().is_empty())
        .last()
        .map_or(0, |(n, _)| n);
    // The run whose pair line was read and whose result line was not yet.
    let mut open: Option<Pair> = None;
    // The byte count the last kept prompt line asked for.
    let mut asked: Option<u64> = None;
    for (n, l) in numbered_lines(text) {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        if let Some((src, dst, direct)) = pair_line(t) {
            no_result(open.take(), &mut out);
            open = Some(Pair {
                src,
                dst,
                direct,
                line: n,
            });
            out.topology
                .p2p
                .push(peer_answer(src, dst, direct, n, &mut gpus));
            continue;
        }
        match result_line(t) {
            Ok(Some(f)) => {
                let size = size_of(&f, asked.take());
                out.measurements
                    .push(cell(n, &f, size, open.take(), &mut gpus));
                continue;
            }
            Err(_) if n == last && is_cut_result(t) => {
                open = None;
                out.truncated(n, format!("the paste stops inside a result line (`{t}`)"));
                continue;
            }
            Err(e) => {
                out.row::<()>(TOOL, Err(ParseError::new(n, e)));
                open = None;
                continue;
            }
            Ok(None) => {}
        }
        if is_error_line(t) {
            // The run stopped: its figure will never come.
            open = None;
            out.tool_error(n, format!("{PROGRAM}: {t}"));
        } else if let Some(command) = prompt_command(t) {
            // A prompt kept between two runs read as one block: the next
            // run starts, and the line is no output of the program's.
            no_result(open.take(), &mut out);
            asked = asked_bytes(command);
            out.skipped_lines.push((n, SkipReason::Prompt.as_str()));
        } else if n == last && is_cut_line(t) {
            // A cut pair line starts a new run: the open one has no result.
            if t.starts_with('d') {
                no_result(open.take(), &mut out);
            }
            open = None;
            out.truncated(
                n,
                format!("the paste stops inside a line of the program's (`{t}`)"),
            );
        } else if t.starts_with("device ") && t.contains(" reading device ") {
            out.row::<()>(
                TOOL,
                Err(ParseError::new(
                    n,
                    format!("`device D reading device S: {DIRECT}` or `...: {STAGED}`"),
                )),
            );
        } else {
            // Not a line the program prints (a note typed into the paste).
            out.unread_lines.push(n);
        }
    }
    no_result(open, &mut out);
    Ok(out)
}

/// A run whose pair line was printed and whose result line is not in the
/// transcript (and no error line says why): cut there.
fn no_result(open: Option<Pair>, out: &mut Parsed) {
    if let Some(p) = open {
        out.cut(
            p.line,
            format!(
                "the result line of the run copying GPU{} to GPU{}",
                p.src, p.dst
            ),
        );
    }
}

/// The pair line as a topology fact: the copy's source and destination
/// (the destination is the device that reads), and the answer as printed
/// up to its comma.
fn peer_answer(src: usize, dst: usize, direct: bool, line: usize, gpus: &mut Ids) -> P2pCell {
    let status = if direct { DIRECT } else { "NO direct path" };
    P2pCell {
        src: gpus.get(src).to_string(),
        dst: gpus.get(dst).to_string(),
        status: status.to_string(),
        supported: direct,
        source: Source::line(line),
    }
}

/// A run's size in bytes: what its prompt line asked for when that agrees
/// with the printed whole MiB, else the printed MiB (exact for the default
/// and any size typed as whole MiB; a run under 1 MiB prints 0 and has no
/// size).
fn size_of(f: &Figure<'_>, asked: Option<u64>) -> Option<u64> {
    match asked {
        Some(bytes) if bytes >> 20 == f.mib && bytes > 0 => Some(bytes),
        _ => (f.mib > 0).then(|| f.mib.saturating_mul(1 << 20)),
    }
}

/// One result line as a cell; `pair` is its run's pair line, when the
/// paste kept it (without it the devices and the peer access are unknown).
fn cell(
    line: usize,
    f: &Figure<'_>,
    size: Option<u64>,
    pair: Option<Pair>,
    gpus: &mut Ids,
) -> Measurement {
    let mut m = Measurement::new(PROGRAM, line, Kind::P2pCopy, TEST, Statistic::Avg);
    if let Some(p) = pair {
        m.src = Some(gpus.get(p.src));
        m.dst = Some(gpus.get(p.dst));
    }
    m.direction = Direction::Uni;
    m.size_bytes = size;
    m.bandwidth_bytes_per_s = Some(f.gbs * GB);
    m.as_printed = crate::evidence::printed(f.printed, "GB/s");
    m.p2p = match pair.map(|p| p.direct) {
        Some(true) => P2p::Enabled,
        Some(false) => P2p::NoPeerAccess,
        None => P2p::Unknown,
    };
    m.buffers = Buffers::Device;
    m.iterations = Some(f.iters);
    m.warmup_iterations = Some(WARMUP_COPIES);
    m.verification = Verification::Checked { errors: f.wrong };
    let q = &mut m.questions;
    q.unit = Unit::GigabytesPerS;
    q.direction = DirectionNote::SourceToDestination;
    // One stream, the copies one after another, timed by device events.
    q.outstanding = Outstanding::OneTransfer { timer: Timer::Gpu };
    q.path = Path::GpuToGpu {
        access: pair.map(|p| p.direct),
    };
    q.context = Context::OneTransferAtATime;
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::IssueKind;

    /// Three runs of a CUDA build as pasted from a terminal: a direct
    /// pair, a pair the runtime refuses (with its prompt and a size), and
    /// a run that corrupted its copy. Written by hand from the program's
    /// format strings (no real capture of it exists).
    const RUNS: &str = "\
$ ./peer_copy_bw 0 1
device 1 reading device 0: direct peer path
256 MiB x 20 iters: 263.7 GB/s unidirectional, 0 wrong bytes
$ ./peer_copy_bw 0 2 1073741824
device 2 reading device 0: NO direct path, will stage
1024 MiB x 20 iters: 20.8 GB/s unidirectional, 0 wrong bytes
$ ./peer_copy_bw 1 0
device 0 reading device 1: direct peer path
256 MiB x 20 iters: 251.4 GB/s unidirectional, 512 wrong bytes
";

    fn ends(m: &Measurement) -> (&str, &str) {
        (
            m.src.as_deref().unwrap_or_default(),
            m.dst.as_deref().unwrap_or_default(),
        )
    }

    #[test]
    fn a_result_line_fills_every_field_of_its_cell() {
        let p = parse_peer_copy_bw(RUNS).unwrap();
        assert_eq!(p.measurements.len(), 3);
        let m = &p.measurements[0];
        assert_eq!(m.tool.as_str(), "peer_copy_bw");
        assert_eq!(m.source.line, 3);
        assert_eq!(m.kind, Kind::P2pCopy);
        assert_eq!(m.test.as_str(), TEST);
        assert_eq!(ends(m), ("GPU0", "GPU1"));
        assert_eq!(m.direction, Direction::Uni);
        assert_eq!(m.statistic, Statistic::Avg);
        assert_eq!(m.size_bytes, Some(256 * 1_048_576));
        assert_eq!(m.bandwidth_bytes_per_s, Some(263.7e9));
        assert_eq!(m.latency_s, None);
        assert_eq!(m.as_printed.as_str(), "263.7 GB/s");
        assert_eq!(m.p2p, P2p::Enabled);
        assert_eq!(m.buffers, Buffers::Device);
        assert_eq!(m.copy_engine, CopyEngine::Unknown);
        assert_eq!((m.iterations, m.warmup_iterations), (Some(20), Some(3)));
        assert_eq!((m.queue_depth, m.qps), (None, None));
        assert_eq!(m.verification, Verification::Checked { errors: 0 });
        let q = &m.questions;
        assert_eq!(q.unit, Unit::GigabytesPerS);
        assert_eq!(q.direction, DirectionNote::SourceToDestination);
        assert_eq!(q.message_size, Default::default());
        assert_eq!(
            q.outstanding,
            Outstanding::OneTransfer { timer: Timer::Gpu }
        );
        assert_eq!(q.path, Path::GpuToGpu { access: Some(true) });
        assert_eq!(q.context, Context::OneTransferAtATime);
        // The prompts are passed over, and nothing else is said.
        assert_eq!(
            p.skipped_lines,
            [
                (1, "shell prompt or command line"),
                (4, "shell prompt or command line"),
                (7, "shell prompt or command line")
            ]
        );
        assert!(p.unread_lines.is_empty());
        assert!(p.issues.is_empty(), "{:?}", p.issues);
    }

    #[test]
    fn a_pair_without_a_direct_path_is_staged_and_a_topology_fact() {
        let p = parse_peer_copy_bw(RUNS).unwrap();
        let m = &p.measurements[1];
        assert_eq!(ends(m), ("GPU0", "GPU2"));
        assert_eq!(m.p2p, P2p::NoPeerAccess);
        assert_eq!(
            m.questions.path,
            Path::GpuToGpu {
                access: Some(false)
            }
        );
        assert_eq!(m.size_bytes, Some(1 << 30));
        assert_eq!(m.bandwidth_bytes_per_s, Some(20.8e9));
        let answers: Vec<_> = p.topology.p2p.iter().map(P2pCell::row).collect();
        assert_eq!(
            answers,
            [
                ("GPU0", "GPU1", "direct peer path", true, 2),
                ("GPU0", "GPU2", "NO direct path", false, 5),
                ("GPU1", "GPU0", "direct peer path", true, 8),
            ]
        );
    }

    #[test]
    fn wrong_bytes_are_a_failed_check() {
        let p = parse_peer_copy_bw(RUNS).unwrap();
        let m = &p.measurements[2];
        assert_eq!(ends(m), ("GPU1", "GPU0"));
        assert_eq!(m.verification, Verification::Checked { errors: 512 });
        // The figure is kept: the diagnosis says the data was wrong.
        assert_eq!(m.bandwidth_bytes_per_s, Some(251.4e9));
    }

    #[test]
    fn a_figure_without_its_pair_line_keeps_peer_access_unknown() {
        let p = parse_peer_copy_bw("256 MiB x 20 iters: 21.1 GB/s unidirectional, 0 wrong bytes\n")
            .unwrap();
        let m = &p.measurements[0];
        assert_eq!((m.src.clone(), m.dst.clone()), (None, None));
        assert_eq!(m.p2p, P2p::Unknown);
        assert_eq!(m.questions.path, Path::GpuToGpu { access: None });
        assert_eq!(m.bandwidth_bytes_per_s, Some(21.1e9));
        assert!(p.issues.is_empty());
        // Under 1 MiB the program prints 0 MiB: no size.
        let p = parse_peer_copy_bw("0 MiB x 20 iters: 0.4 GB/s unidirectional, 0 wrong bytes\n")
            .unwrap();
        assert_eq!(p.measurements[0].size_bytes, None);
    }

    #[test]
    fn a_whole_last_line_of_another_shape_is_no_cut() {
        let head = &RUNS[..RUNS.find("$ ./peer_copy_bw 1 0").unwrap()];
        // Whole, but not the program's: unreadable at its line.
        let text = format!("{head}256 MiB x 20 iters: 20.1 GB/s bidirectional, 0 wrong bytes");
        let p = parse_peer_copy_bw(&text).unwrap();
        assert_eq!(
            (p.issues.len(), p.issues[0].kind, p.issues[0].line),
            (1, IssueKind::Unreadable, 7)
        );
        // A bare number is no line of the program's: not understood.
        let p = parse_peer_copy_bw(&format!("{head}42")).unwrap();
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        assert_eq!(p.unread_lines, [7]);
    }

    #[test]
    fn a_kept_prompt_gives_the_exact_size_the_printed_mib_rounds_down() {
        let run = |prompt: &str| {
            let text = format!(
                "{prompt}\ndevice 1 reading device 0: direct peer path\n1 MiB x 20 iters: 20.1 GB/s unidirectional, 0 wrong bytes\n"
            );
            parse_peer_copy_bw(&text).unwrap().measurements[0].size_bytes
        };
        assert_eq!(run("$ ./peer_copy_bw 0 1 1572864"), Some(1_572_864));
        // A prompt that disagrees with the printed MiB is not believed.
        assert_eq!(run("$ ./peer_copy_bw 0 1 9999999999"), Some(1 << 20));
        // Two arguments: the default size, 256 MiB, is not this run's 1 MiB.
        assert_eq!(run("$ ./peer_copy_bw 0 1"), Some(1 << 20));
    }

    #[test]
    fn a_cut_last_line_is_truncated_and_the_runs_before_it_are_read() {
        for cut in [
            "256 MiB x 20 iters: 26",
            "256 MiB x",
            "256 MiB",
            "device 3 reading dev",
        ] {
            let text = format!(
                "{}{cut}",
                &RUNS[..RUNS.find("$ ./peer_copy_bw 1 0").unwrap()]
            );
            let p = parse_peer_copy_bw(&text).unwrap();
            assert_eq!(p.measurements.len(), 2, "{cut}");
            assert_eq!(p.issues.len(), 1, "{cut}: {:?}", p.issues);
            assert_eq!(
                (p.issues[0].kind, p.issues[0].line),
                (IssueKind::Truncated, 7)
            );
        }
        // A pair line and no result: that run was cut.
        let p = parse_peer_copy_bw("device 1 reading device 0: direct peer path\n").unwrap();
        assert!(p.measurements.is_empty());
        assert_eq!(
            (p.issues[0].kind, p.issues[0].line),
            (IssueKind::Truncated, 1)
        );
        assert!(p.issues[0].message.contains("GPU0 to GPU1"));
    }

    #[test]
    fn error_lines_are_failed_runs() {
        let text = "\
device 2 reading device 0: NO direct path, will stage
CUDA cuda/peer_copy_bw.cu:61 'cudaMalloc(&dst, bytes)': out of memory
need two distinct valid device ids; found 4
HIP hip/peer_copy_bw.cpp:38 'hipGetDeviceCount(&ndev)': no ROCm-capable device is detected
";
        assert!(looks_like_peer_copy_bw(
            text,
            &text.lines().collect::<Vec<_>>()
        ));
        let p = parse_peer_copy_bw(text).unwrap();
        assert!(p.measurements.is_empty());
        let errors: Vec<_> = p.issues.iter().map(|i| (i.kind, i.line)).collect();
        // The first run failed after its pair line: no cut is said for it.
        assert_eq!(
            errors,
            [
                (IssueKind::ToolError, 2),
                (IssueKind::ToolError, 3),
                (IssueKind::ToolError, 4)
            ]
        );
        assert!(
            p.issues[0]
                .message
                .starts_with("peer_copy_bw: CUDA cuda/peer_copy_bw.cu:61")
        );
        // An error alone is recognised by the program's source file.
        let alone = "HIP hip/peer_copy_bw.cpp:38 'hipGetDeviceCount(&ndev)': no ROCm-capable device is detected\n";
        assert!(looks_like_peer_copy_bw(
            alone,
            &alone.lines().collect::<Vec<_>>()
        ));
    }

    #[test]
    fn an_unreadable_line_is_reported_and_the_rest_is_read() {
        let text = "\
device 1 reading device 0: direct peer path
256 MiB x 20 iters: fast GB/s unidirectional, 0 wrong bytes
device 2 reading device 0: maybe
note: ran while the node was idle
device 0 reading device 1: direct peer path
256 MiB x 20 iters: 262.0 GB/s unidirectional, 0 wrong bytes
";
        let p = parse_peer_copy_bw(text).unwrap();
        assert_eq!(p.measurements.len(), 1);
        assert_eq!(ends(&p.measurements[0]), ("GPU1", "GPU0"));
        let bad: Vec<_> = p.issues.iter().map(|i| (i.kind, i.line)).collect();
        assert_eq!(
            bad,
            [(IssueKind::Unreadable, 2), (IssueKind::Unreadable, 3)]
        );
        assert!(p.issues[0].message.contains("`fast`"));
        assert_eq!(p.unread_lines, [4]);
    }

    #[test]
    fn other_copy_tools_are_not_taken_for_it() {
        let lines = |t: &'static str| t.lines().collect::<Vec<_>>();
        let nvb = "nvbandwidth Version: v0.4\nmemcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)\n";
        assert!(!looks_like_peer_copy_bw(nvb, &lines(nvb)));
        assert!(looks_like_peer_copy_bw(RUNS, &lines(RUNS)));
    }
}
