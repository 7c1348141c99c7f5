//! Render throughput: the shipped captures, ingested once, replicated to
//! 1,024 node bundles on disk; then, timed: load every bundle, render the
//! site, write it. Prints wall seconds and peak resident memory of the
//! timed part (VmHWM, reset before it through /proc/self/clear_refs).
//!
//! Run: `cargo bench --bench render` (NODES=n to change the count).

use std::path::PathBuf;
use std::time::Instant;

use wire_report::render;

fn vm_hwm_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn main() {
    let nodes: usize = std::env::var("NODES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let base = wire_report::inputs::load_nodes(&[PathBuf::from("captures")]).expect("captures/");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let input = dir.path().join("fleet");
    for i in 0..nodes {
        let mut b = base[i % base.len()].clone();
        b.host.name = format!("node{i:04}-{}", b.host.name);
        let d = input.join(&b.host.name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("bundle.json"), b.to_json()).unwrap();
    }
    drop(base);
    let bytes_in: u64 = walkdir::WalkDir::new(&input)
        .into_iter()
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum();
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let start = Instant::now();
    let bundles = wire_report::inputs::load_nodes(std::slice::from_ref(&input)).unwrap();
    let loaded = start.elapsed().as_secs_f64();
    let site = render::render_site(&bundles).unwrap();
    let rendered = start.elapsed().as_secs_f64();
    let out = dir.path().join("site");
    wire_report::fs::write_site(&out, &site.files).unwrap();
    let total = start.elapsed().as_secs_f64();
    let bytes_out: usize = site.files.values().map(Vec::len).sum();
    println!(
        "render: {nodes} nodes ({:.1} MB of bundles) -> {} files, {:.1} MB: load {loaded:.2} s, render {:.2} s, write {:.2} s, total {total:.2} s wall; peak RSS {} MiB",
        bytes_in as f64 / 1e6,
        site.files.len(),
        bytes_out as f64 / 1e6,
        rendered - loaded,
        total - rendered,
        vm_hwm_kib().map_or("unknown".into(), |k| (k / 1024).to_string())
    );
    let page = |p: &str| site.files.get(p).map_or(0, Vec::len);
    let heaviest_node = site
        .files
        .iter()
        .filter(|(p, _)| p.starts_with("nodes/") && p.ends_with("/index.html"))
        .map(|(_, v)| v.len())
        .max()
        .unwrap_or(0);
    println!(
        "pages: fleet index.html {:.0} KB, heaviest node index.html {:.0} KB",
        page("index.html") as f64 / 1e3,
        heaviest_node as f64 / 1e3
    );
}
