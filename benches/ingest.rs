//! Ingest end to end, as users run it: `wire-report collect --from CORPUS
//! --out DIR` (walk, read, detect, parse, bundle, write every node's
//! bundle, one sync at the end) over the shipped captures replicated until
//! there are 20 MB of transcripts, in a child process whose CPU time
//! (user + system, from wait4) and peak RSS the kernel reports. Beside it in
//! the same run, paired: `cp -r` of the same tree, the baseline that only
//! moves the bytes (reads every input file, writes a copy). MB = 1e6 bytes
//! of transcripts in.
//!
//! Prints MB/s per CPU-second for both and their ratio, the same ingest in
//! process with nothing written (parsers and bundles alone), the same with
//! every file already in memory (detect, parse, bundle: the measure issue
//! 13 was filed against), the floor (the file operations ingest cannot
//! avoid, with no parsing at all), the bundles' bytes over the
//! transcripts' bytes, and peak RSS at 1,024 nodes vs all.
//!
//! Run: `cargo bench --bench ingest` (RUNS=n paired runs, default 5;
//! BENCH_DIR=dir for the scratch directory, default `target`). A
//! benchmark, not a test: nothing here asserts a time.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Cost, median, run, tree_bytes, wr};
use wire_report::bundle::{Bundle, Host, Origin};

const TARGET_BYTES: u64 = 20_000_000;
const SMALL: usize = 1024;

fn main() {
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    // On the disk cargo builds on (not /tmp, which may be tmpfs), unless
    // BENCH_DIR names another place (`/dev/shm`: the same run without a
    // disk filesystem's cost of creating files).
    let scratch = std::env::var("BENCH_DIR").unwrap_or_else(|_| "target".into());
    std::fs::create_dir_all(&scratch).unwrap();
    let dir = tempfile::tempdir_in(&scratch).expect("a scratch directory");
    println!("scratch directory: {}", dir.path().display());
    let corpus = dir.path().join("corpus");
    let nodes = replicate(Path::new("captures"), &corpus, TARGET_BYTES);
    let bytes_in = tree_bytes(&corpus);
    println!(
        "ingest corpus: captures/ replicated to {} node directories, {:.1} MB of transcripts",
        nodes.len(),
        bytes_in as f64 / 1e6
    );

    let (mut mine, mut base, mut floor_cpu) = (Vec::new(), Vec::new(), Vec::new());
    let mut cat = Vec::new();
    let mut bundle_bytes = 0;
    for i in 0..runs {
        let out = dir.path().join(format!("bundles{i}"));
        mine.push(run(wr()
            .args(["collect", "--quiet", "--from"])
            .arg(&corpus)
            .arg("--out")
            .arg(&out)));
        bundle_bytes = tree_bytes(&out);
        let copy = dir.path().join(format!("copy{i}"));
        base.push(run(&mut common::cp(&corpus, &copy)));
        // `cat` over the same files (and `find` naming them): the target's
        // baseline, reading only.
        cat.push(run(Command::new("sh")
            .args(["-c", "find \"$1\" -type f -exec cat {} + > /dev/null", "sh"])
            .arg(&corpus)));
        floor_cpu.push(floor(&corpus, &dir.path().join(format!("floor{i}"))));
    }
    // Deleted only now: on an ext4 without a journal, creating inodes just
    // after deleting thousands makes every create scan the inode table
    // (`recently_deleted`), and both commands would measure that instead.
    for i in 0..runs {
        std::fs::remove_dir_all(dir.path().join(format!("bundles{i}"))).unwrap();
        std::fs::remove_dir_all(dir.path().join(format!("copy{i}"))).unwrap();
        std::fs::remove_dir_all(dir.path().join(format!("floor{i}"))).unwrap();
    }
    let (m, b) = (median(&mine), median(&base));
    let mbs = |c: &Cost| bytes_in as f64 / 1e6 / c.cpu_s;
    println!(
        "collect --from: {:.2} s wall, {:.2} CPU-s ({:.2} user + {:.2} system): {:.1} MB/s per CPU-second (median of {runs})",
        m.wall_s,
        m.cpu_s,
        m.user_s,
        m.cpu_s - m.user_s,
        mbs(&m)
    );
    println!(
        "collect --from, user CPU alone: {:.1} MB/s per user CPU-second",
        bytes_in as f64 / 1e6 / m.user_s
    );
    println!(
        "baseline cp -r: {:.2} s wall, {:.2} CPU-s ({:.2} user + {:.2} system): {:.1} MB/s per CPU-second; collect costs {:.1}x its CPU",
        b.wall_s,
        b.cpu_s,
        b.user_s,
        b.cpu_s - b.user_s,
        mbs(&b),
        m.cpu_s / b.cpu_s
    );
    let c = median(&cat);
    println!(
        "baseline cat (find -exec cat): {:.2} s wall, {:.2} CPU-s ({:.2} user + {:.2} system): {:.1} MB/s per CPU-second; collect's rate is {:.2}x cat's (target >= 0.3x), {:.2}x cp -r's",
        c.wall_s,
        c.cpu_s,
        c.user_s,
        c.cpu_s - c.user_s,
        mbs(&c),
        c.cpu_s / m.cpu_s,
        b.cpu_s / m.cpu_s
    );
    println!(
        "bundles: {:.1} MB, {:.2}x the transcripts' bytes",
        bundle_bytes as f64 / 1e6,
        bundle_bytes as f64 / bytes_in as f64
    );

    in_process(&corpus, bytes_in, runs);
    in_memory(&nodes, bytes_in, runs);
    floor_cpu.sort_by(|a, b| (a.0 + a.1).total_cmp(&(b.0 + b.1)));
    let (u, s) = floor_cpu[floor_cpu.len() / 2];
    println!(
        "floor (walk, read every file, one atomic file per node, one sync; no parsing): {:.2} CPU-s ({u:.2} user + {s:.2} system): {:.1} MB/s per CPU-second; collect costs {:.1}x the floor",
        u + s,
        bytes_in as f64 / 1e6 / (u + s),
        m.cpu_s / (u + s)
    );

    // Peak RSS against the node count: the first 1,024 nodes, then all.
    let rss = |paths: &[PathBuf]| {
        let out = dir.path().join("rss");
        let c = run(wr()
            .args(["collect", "--quiet", "--from"])
            .args(paths)
            .arg("--out")
            .arg(&out));
        std::fs::remove_dir_all(&out).unwrap();
        c.max_rss_kib
    };
    let small = rss(&nodes[..SMALL]);
    let all = rss(&nodes);
    println!(
        "peak RSS: {SMALL} nodes {:.1} MiB, {} nodes {:.1} MiB",
        small as f64 / 1024.0,
        nodes.len(),
        all as f64 / 1024.0
    );
}

/// Copies every node directory of `captures` into `to` again and again
/// (`r000-<node>`, `r001-<node>`...) until they hold `bytes`; returns them.
fn replicate(captures: &Path, to: &Path, bytes: u64) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(captures)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut out = Vec::new();
    let mut copied = 0;
    for i in 0.. {
        if copied >= bytes {
            break;
        }
        let src = &dirs[i % dirs.len()];
        let name = src.file_name().unwrap().to_string_lossy();
        let dst = to.join(format!("r{:03}-{name}", i / dirs.len()));
        std::fs::create_dir_all(&dst).unwrap();
        for f in std::fs::read_dir(src).unwrap().filter_map(Result::ok) {
            if f.path().is_file() {
                copied += std::fs::copy(f.path(), dst.join(f.file_name())).unwrap();
            }
        }
        out.push(dst);
    }
    out
}

/// The same ingest inside this process with nothing written: every node
/// read, detected, parsed, bundled and serialised to a buffer that is then
/// dropped. What the parsers and the bundle cost without the disk (the
/// scanner's figure of issue 13). Median of `runs`, by this process's CPU.
fn in_process(corpus: &Path, bytes_in: u64, runs: usize) {
    let mut cpu = Vec::new();
    let mut buf = Vec::new();
    for _ in 0..runs {
        let (u0, s0) = common::self_cpu();
        wire_report::inputs::ingest_each(&[corpus.to_path_buf()], |n| {
            buf.clear();
            n.bundle.write_json(&mut buf);
            Ok(())
        })
        .unwrap();
        let (u1, s1) = common::self_cpu();
        cpu.push((u1 - u0, s1 - s0));
    }
    print_median(
        "in process, nothing written (read, detect, parse, bundle, serialise)",
        cpu,
        bytes_in,
    );
}

/// Prints the median of `cpu` (user, system CPU seconds per run) and the
/// MB/s per CPU-second it gives for `bytes_in`.
fn print_median(what: &str, mut cpu: Vec<(f64, f64)>, bytes_in: u64) {
    cpu.sort_by(|a, b| (a.0 + a.1).total_cmp(&(b.0 + b.1)));
    let (u, s) = cpu[cpu.len() / 2];
    println!(
        "{what}: {:.2} CPU-s ({u:.2} user + {s:.2} system): {:.1} MB/s per CPU-second",
        u + s,
        bytes_in as f64 / 1e6 / (u + s)
    );
}

/// Issue 13's own measure (the bench it was filed against): every file
/// already in memory, then per node detect, parse and bundle (the
/// transcript's sha256 included), and drop the bundle: no walk, no file
/// read, nothing serialised. Median of `runs`, by this process's CPU.
fn in_memory(nodes: &[PathBuf], bytes_in: u64, runs: usize) {
    let files: Vec<Vec<(String, Vec<u8>)>> = nodes
        .iter()
        .map(|dir| {
            let mut f: Vec<PathBuf> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            f.sort();
            f.into_iter()
                .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
                .collect()
        })
        .collect();
    let mut cpu = Vec::new();
    let mut cells = 0;
    for _ in 0..runs {
        let (u0, s0) = common::self_cpu();
        for node in &files {
            let mut b = Bundle::new(Host {
                name: "bench".into(),
                origin: Origin::Ingested,
            });
            for (path, bytes) in node {
                b.absorb(wire_report::ingest::read_transcript(path, bytes));
            }
            cells += b.measurements.len();
        }
        let (u1, s1) = common::self_cpu();
        cpu.push((u1 - u0, s1 - s0));
    }
    assert!(cells > 0, "the corpus gave no measurement");
    print_median(
        "in memory, files already read (detect, parse, bundle; issue 13's measure)",
        cpu,
        bytes_in,
    );
}

/// The file operations `collect --from` cannot do without, and nothing
/// else, in this process: walk the corpus, read every file, and per node
/// write one file as big as its transcripts (a bundle holds at least them)
/// atomically (temporary file, rename) into its own directory under `out`,
/// then one sync. No detection, parsing or serialising: what ingest would
/// cost if understanding the transcripts were free. Returns this process's
/// (user, system) CPU seconds.
fn floor(corpus: &Path, out: &Path) -> (f64, f64) {
    let (u0, s0) = common::self_cpu();
    let mut node: Vec<u8> = Vec::new();
    let mut dir: Option<PathBuf> = None;
    let flush = |dir: &Option<PathBuf>, node: &mut Vec<u8>| {
        if let Some(d) = dir {
            let to = out.join(d.file_name().unwrap()).join("bundle.json");
            wire_report::fs::write_unsynced(&to, node).unwrap();
        }
        node.clear();
    };
    for e in walkdir::WalkDir::new(corpus)
        .follow_links(true)
        .sort_by_file_name()
    {
        let e = e.unwrap();
        if !e.file_type().is_file() {
            continue;
        }
        let parent = e.path().parent().map(Path::to_path_buf);
        if parent != dir {
            flush(&dir, &mut node);
            dir = parent;
        }
        let cap = wire_report::inputs::MAX_TRANSCRIPT_BYTES;
        node.extend_from_slice(&wire_report::fs::read_capped(e.path(), cap).unwrap());
    }
    flush(&dir, &mut node);
    wire_report::fs::sync_dirs(&[out]).unwrap();
    let (u1, s1) = common::self_cpu();
    (u1 - u0, s1 - s0)
}
