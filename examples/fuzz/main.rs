//! Fuzzing over the real captures (issue 14): every parser of the tool
//! table (`wire_report::evidence::tools::TOOLS`), and bundle loading plus
//! render, fed real transcripts and bundles mutated at random (byte flips,
//! truncation, line duplication and swaps, huge and tiny numbers, NUL and
//! non-UTF-8 bytes).
//!
//! ```text
//! cargo run --release --features fuzz --example fuzz -- --cases 40000 --bundle-cases 2000
//! cargo build --release && cargo run --release --features fuzz --example fuzz -- --cases 0 --bundle-cases 0 --fs-cases 200
//! ```
//!
//! `--fs-cases N` runs the file-system generators of `files.rs` (near node
//! names, odd kinds of file at every output path) against the release
//! binary (`WR` names another).
//!
//! Each target runs in a child process (this binary with `--child`) under
//! limits: address space of its start plus 1 GiB (`setrlimit(RLIMIT_AS)`),
//! and 10 s per input (a watchdog thread). Inputs are derived from
//! (target, case number) alone, so the parent can rebuild the one a child
//! died on. A panic, a hang or an allocation failure writes its input to
//! `/tmp/fuzz-findings/` and the run goes on from the next case; the exit
//! status is 1 when anything was found. This is a mutator of our own (a
//! seeded splitmix64), not cargo-fuzz: the toolchain here is stable.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use wire_report::evidence::tools::TOOLS;

mod files;

const HANG_S: u64 = 10;
const MEMORY_BYTES: u64 = 1 << 30;
const FINDINGS: &str = "/tmp/fuzz-findings";
const BUNDLE_TARGET: &str = "bundle-render";

/// A small, fast, seedable generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn for_case(target: &str, case: u64) -> Rng {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for b in target.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x1000_0000_01b3);
        }
        Rng(h ^ case.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Numbers that have broken parsers and charts: sizes, indices, denormals,
/// overflows, signs, non-numbers.
const NUMBERS: &[&str] = &[
    "4294967295",
    "2147483648",
    "18446744073709551616",
    "100000",
    "0",
    "-1",
    "-0",
    "1e-320",
    "1e308",
    "1.8e308",
    "NaN",
    "inf",
    "-inf",
    "0.000",
    "99999999999999999999",
    "GPU[4294967295]",
    "GPU[100000]",
    "1e-45",
    "4.9e-324",
];

/// One to four random mutations of `base`.
fn mutate(base: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut v = base.to_vec();
    for _ in 0..1 + rng.below(4) {
        match rng.below(9) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 => {
                let n = rng.below(v.len() + 1);
                v.truncate(n);
            }
            2 | 3 => {
                let mut lines: Vec<Vec<u8>> =
                    v.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
                let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
                if rng.below(2) == 0 {
                    let l = lines[a].clone();
                    for _ in 0..1 + rng.below(3) {
                        lines.insert(b, l.clone());
                    }
                } else {
                    lines.swap(a, b);
                }
                v = lines.join(&b'\n');
            }
            4 | 5 => replace_number(&mut v, rng),
            8 => {
                // A block printed once per job: a run of lines repeated
                // until the input is about a megabyte (what made one
                // reader's memory grow with the square of its input).
                let lines: Vec<&[u8]> = v.split(|b| *b == b'\n').collect();
                let a = rng.below(lines.len());
                let b = (a + 1 + rng.below(8)).min(lines.len());
                let block = lines[a..b].join(&b'\n');
                let times = (1 << 20) / (block.len() + 1).max(64);
                let mut out = lines[..b].join(&b'\n');
                for _ in 0..times {
                    out.push(b'\n');
                    out.extend_from_slice(&block);
                }
                out.push(b'\n');
                out.extend(lines[b..].join(&b'\n'));
                v = out;
            }
            6 => {
                let i = rng.below(v.len() + 1);
                v.insert(i, 0);
            }
            _ => {
                let i = rng.below(v.len() + 1);
                let bad: &[u8] =
                    [&[0xff, 0xfe][..], &[0xc3][..], &[0xed, 0xa0, 0x80][..]][rng.below(3)];
                v.splice(i..i, bad.iter().copied());
            }
        }
    }
    v
}

/// The real inputs of each target: the captures a tool's detector takes
/// (all captures when it takes none), or every capture node's bundle.
fn corpus(target: &str) -> Vec<Vec<u8>> {
    if target == BUNDLE_TARGET {
        return wire_report::inputs::ingest(&[PathBuf::from("captures")])
            .expect("captures/ is readable")
            .into_iter()
            .map(|n| n.bundle.to_json().into_bytes())
            .collect();
    }
    let spec = TOOLS
        .iter()
        .find(|s| s.name == target)
        .expect("a tool of the table");
    let all: Vec<Vec<u8>> = walkdir::WalkDir::new("captures")
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.file_name() != "SOURCES.tsv")
        .filter_map(|e| std::fs::read(e.path()).ok())
        .collect();
    let mine: Vec<Vec<u8>> = all
        .iter()
        .filter(|b| {
            let t = String::from_utf8_lossy(b);
            let lines: Vec<&str> = t.lines().collect();
            (spec.detect)(&t, &lines)
        })
        .cloned()
        .collect();
    if mine.is_empty() { all } else { mine }
}

fn input(target: &str, corpus: &[Vec<u8>], case: u64) -> Vec<u8> {
    let mut rng = Rng::for_case(target, case);
    let base = &corpus[rng.below(corpus.len())];
    if target == BUNDLE_TARGET && rng.below(5) != 0 {
        // Most cases keep the JSON valid, so they reach render: hostile
        // numbers in place of real ones.
        let mut v = base.clone();
        for _ in 0..1 + rng.below(3) {
            replace_number(&mut v, &mut rng);
        }
        return v;
    }
    mutate(base, &mut rng)
}

/// Replaces one run of digits in `v` by a hostile number (in a bundle,
/// only by the ones that stay JSON).
fn replace_number(v: &mut Vec<u8>, rng: &mut Rng) {
    let digits: Vec<usize> = (0..v.len()).filter(|i| v[*i].is_ascii_digit()).collect();
    if digits.is_empty() {
        return;
    }
    let s = digits[rng.below(digits.len())];
    let e = (s..v.len())
        .find(|i| !v[*i].is_ascii_digit() && v[*i] != b'.')
        .unwrap_or(v.len());
    let n = NUMBERS[rng.below(NUMBERS.len())].as_bytes();
    v.splice(s..e, n.iter().copied());
}

/// Runs one input through the target; `true` when the input was taken
/// (a bundle loaded and rendered, a transcript parsed).
fn run_case(target: &str, bytes: &[u8]) -> bool {
    if target == BUNDLE_TARGET {
        let text = String::from_utf8_lossy(bytes);
        let path = std::path::Path::new("fuzz.json");
        let Ok(b) = wire_report::bundle::Bundle::from_json(&text, path) else {
            return false;
        };
        let one = std::slice::from_ref(&b);
        let html = wire_report::render::render_single_file(one);
        let _ = wire_report::render::markdown::render_markdown(one);
        return html.is_ok();
    }
    let spec = TOOLS
        .iter()
        .find(|s| s.name == target)
        .expect("a tool of the table");
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    let _ = (spec.detect)(&text, &lines);
    (spec.parse)(&text).is_ok()
}

fn save(target: &str, what: &str, case: u64, bytes: &[u8]) -> String {
    let _ = std::fs::create_dir_all(FINDINGS);
    let p = format!("{FINDINGS}/{target}-{what}-{case}.bin");
    let _ = std::fs::write(&p, bytes);
    p
}

/// The child: cases `from..to` of one target, each case number written to
/// stdout (8 bytes) before it runs.
fn child(target: &str, from: u64, to: u64) -> ExitCode {
    let corpus = Arc::new(corpus(target));
    // SAFETY: plain libc calls on this process's own limits.
    unsafe {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let vm_kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmSize:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0);
        let lim = libc::rlimit {
            rlim_cur: vm_kb * 1024 + MEMORY_BYTES,
            rlim_max: vm_kb * 1024 + MEMORY_BYTES,
        };
        libc::setrlimit(libc::RLIMIT_AS, &lim);
    }
    let current = Arc::new(AtomicU64::new(u64::MAX));
    {
        let (current, corpus, target) = (current.clone(), corpus.clone(), target.to_string());
        std::thread::spawn(move || {
            let (mut seen, mut since) = (u64::MAX, Instant::now());
            loop {
                std::thread::sleep(Duration::from_millis(200));
                let now = current.load(Ordering::SeqCst);
                if now != seen {
                    (seen, since) = (now, Instant::now());
                } else if now != u64::MAX && since.elapsed() > Duration::from_secs(HANG_S) {
                    let p = save(&target, "hang", now, &input(&target, &corpus, now));
                    eprintln!("{target}: case {now} ran over {HANG_S} s: {p}");
                    std::process::exit(3);
                }
            }
        });
    }
    std::panic::set_hook(Box::new(|_| {}));
    let (mut panics, mut taken) = (0u64, 0u64);
    for case in from..to {
        current.store(case, Ordering::SeqCst);
        let bytes = case.to_le_bytes();
        // SAFETY: writes 8 bytes from a live buffer to our stdout.
        unsafe { libc::write(1, bytes.as_ptr().cast(), 8) };
        let data = input(target, &corpus, case);
        match std::panic::catch_unwind(|| run_case(target, &data)) {
            Ok(ok) => taken += u64::from(ok),
            Err(_) => {
                panics += 1;
                let p = save(target, "panic", case, &data);
                eprintln!("{target}: case {case} panicked: {p}");
            }
        }
    }
    eprintln!(
        "{target}: {taken} of {} inputs were taken (parsed, or loaded and rendered)",
        to - from
    );
    // 10 + panics: the parent counts them.
    ExitCode::from(if panics > 0 {
        10 + panics.min(200) as u8
    } else {
        0
    })
}

/// Counts of one target's run.
#[derive(Default)]
struct Tally {
    cases: u64,
    panics: u64,
    hangs: u64,
    aborts: u64,
}

/// The parent: runs a target's cases in children, restarting after a
/// child that hung or died on one case.
fn parent_target(target: &str, cases: u64) -> Tally {
    let exe = std::env::current_exe().expect("own path");
    let mut t = Tally::default();
    let mut from = 0;
    while from < cases {
        let mut c = Command::new(&exe)
            .args(["--child", target, &from.to_string(), &cases.to_string()])
            .env("RAYON_NUM_THREADS", "1")
            .stdout(Stdio::piped())
            .spawn()
            .expect("start a child");
        let mut out = Vec::new();
        let _ = c.stdout.take().expect("piped").read_to_end(&mut out);
        let status = c.wait().expect("child status");
        let last = out
            .chunks_exact(8)
            .last()
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
        t.cases += (out.len() / 8) as u64;
        match (status.code(), last) {
            (Some(0), _) | (_, None) => break,
            (Some(c), _) if c >= 10 => {
                t.panics += (c - 10) as u64;
                break;
            }
            (Some(3), Some(l)) => {
                t.hangs += 1;
                from = l + 1;
            }
            (_, Some(l)) => {
                t.aborts += 1;
                let corpus = corpus(target);
                let p = save(target, "abort", l, &input(target, &corpus, l));
                eprintln!("{target}: case {l} killed the child ({status}): {p}");
                from = l + 1;
            }
        }
    }
    t
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        let n = |i: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(0);
        return child(&args[1], n(2), n(3));
    }
    let flag = |name: &str, default: u64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1)?.parse().ok())
            .unwrap_or(default)
    };
    let cases = flag("--cases", 2000);
    let bundle_cases = flag("--bundle-cases", 100);
    let only: Option<&String> = args
        .iter()
        .position(|a| a == "--target")
        .and_then(|i| args.get(i + 1));
    let mut targets: Vec<(&str, u64)> = TOOLS.iter().map(|s| (s.name, cases)).collect();
    targets.push((BUNDLE_TARGET, bundle_cases));
    let mut found = false;
    let mut total = 0;
    println!(
        "target\tcases\tpanics\thangs>{HANG_S}s\taborts(memory>{}GiB or signal)\tseconds",
        MEMORY_BYTES >> 30
    );
    for (target, n) in targets
        .into_iter()
        .filter(|(t, _)| only.is_none_or(|o| o == t))
    {
        let start = Instant::now();
        let t = parent_target(target, n);
        found |= t.panics + t.hangs + t.aborts > 0;
        total += t.cases;
        println!(
            "{target}\t{}\t{}\t{}\t{}\t{:.1}",
            t.cases,
            t.panics,
            t.hangs,
            t.aborts,
            start.elapsed().as_secs_f64()
        );
    }
    let fs_cases = flag("--fs-cases", 0);
    for target in [files::NEAR_NAMES, files::OUTPUT_KINDS] {
        if fs_cases == 0 || only.is_some_and(|o| o != target) {
            continue;
        }
        let start = Instant::now();
        let (ran, findings) = files::run_target(target, fs_cases);
        for f in &findings {
            eprintln!("{f}");
        }
        found |= !findings.is_empty();
        total += ran;
        println!(
            "{target}\t{ran}\t{} rule(s) broken\t\t\t{:.1}",
            findings.len(),
            start.elapsed().as_secs_f64()
        );
    }
    println!("total\t{total}");
    if found {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
