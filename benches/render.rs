//! Render as users run it: `wire-report render FLEET --out SITE` in a child
//! process over 1,024 and then 4,096 node bundles on disk (the shipped
//! captures, ingested once and replicated under new node names), with the
//! wall time and the peak RSS the kernel reports (wait4's ru_maxrss).
//! Beside it in the same run, paired: `cp -r` of the input tree, the
//! baseline that only moves the bytes.
//!
//! Then, per size, the outputs that stream as well (`--single-file`,
//! `--format md`, `--redact`), with their peak RSS.
//!
//! Run: `cargo bench --bench render` (RUNS=n paired runs per size, default
//! 3). A benchmark, not a test: nothing here asserts a time.

mod common;

use std::path::{Path, PathBuf};

use common::{median, run, tree_bytes, wr};

fn main() {
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let base = wire_report::inputs::load_nodes(&[PathBuf::from("captures")]).expect("captures/");
    std::fs::create_dir_all("target").unwrap();
    let dir = tempfile::tempdir_in("target").expect("a directory under target/");
    for nodes in [1024, 4096] {
        let input = dir.path().join(format!("fleet{nodes}"));
        fleet(&base, &input, nodes);
        let bytes_in = tree_bytes(&input);
        let (mut mine, mut cp) = (Vec::new(), Vec::new());
        let (mut bytes_out, mut index_bytes) = (0, 0);
        for i in 0..runs {
            let site = dir.path().join(format!("site{nodes}-{i}"));
            mine.push(run(wr().arg("render").arg(&input).arg("--out").arg(&site)));
            bytes_out = tree_bytes(&site);
            index_bytes = std::fs::metadata(site.join("index.html")).map_or(0, |m| m.len());
            let copy = dir.path().join(format!("copy{nodes}-{i}"));
            cp.push(run(&mut common::cp(&input, &copy)));
        }
        let (m, c) = (median(&mine), median(&cp));
        println!(
            "render {nodes} nodes ({:.1} MB of bundles -> {:.1} MB of site, index {:.2} MB): {:.2} s wall, {:.2} CPU-s, peak RSS {:.0} MiB (median of {runs}); cp -r {:.2} s wall: {:.1}x",
            bytes_in as f64 / 1e6,
            bytes_out as f64 / 1e6,
            index_bytes as f64 / 1e6,
            m.wall_s,
            m.cpu_s,
            m.max_rss_kib as f64 / 1024.0,
            c.wall_s,
            m.wall_s / c.wall_s
        );
        other_outputs(&input, dir.path(), nodes, runs);
    }
    // Nothing is deleted until every run is timed: on an ext4 without a
    // journal, creating inodes just after deleting thousands scans the
    // inode table (`recently_deleted`), and the runs would measure that.
    // The temporary directory goes when `dir` drops.
}

/// The other outputs of `render`, which stream too: `--single-file`,
/// `--format md` and a `--redact`ed site, each with its peak RSS (these
/// used to hold every node in memory; compare 1,024 with 4,096 nodes).
fn other_outputs(input: &Path, dir: &Path, nodes: usize, runs: usize) {
    let modes: [(&str, &[&str]); 3] = [
        ("--single-file", &["--single-file"]),
        ("--format md", &["--format", "md", "--out"]),
        ("--redact (site)", &["--redact", "--out"]),
    ];
    for (k, (name, args)) in modes.into_iter().enumerate() {
        let mut costs = Vec::new();
        let mut bytes_out = 0;
        for i in 0..runs {
            let out = dir.join(format!("out{nodes}-{k}-{i}"));
            costs.push(run(wr().arg("render").arg(input).args(args).arg(&out)));
            bytes_out = tree_bytes(&out);
        }
        let m = median(&costs);
        println!(
            "render {nodes} nodes {name} ({:.1} MB out): {:.2} s wall, {:.2} CPU-s, peak RSS {:.0} MiB (median of {runs})",
            bytes_out as f64 / 1e6,
            m.wall_s,
            m.cpu_s,
            m.max_rss_kib as f64 / 1024.0
        );
    }
}

/// `n` node directories, each a capture's bundle under a new node name.
fn fleet(base: &[wire_report::bundle::Bundle], to: &Path, n: usize) {
    for i in 0..n {
        let mut b = base[i % base.len()].clone();
        b.host.name = format!("node{i:04}-{}", b.host.name);
        let d = to.join(&b.host.name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("bundle.json"), b.to_json_bytes()).unwrap();
    }
}
