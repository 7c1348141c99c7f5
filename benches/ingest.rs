//! Ingest throughput: every transcript in `captures/`, ingested again and
//! again on one thread until at least 100 MB have gone through detection,
//! parsing and the bundle, then MB/s (1 MB = 1e6 bytes) per core.
//!
//! Run: `cargo bench --bench ingest`. A benchmark, not a test: nothing here
//! asserts a time.

use std::time::Instant;

use wire_report::bundle::{Bundle, Host, Origin};

const TARGET_BYTES: usize = 100_000_000;

fn main() {
    let files: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new("captures")
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.file_name() != "SOURCES.tsv")
        .map(|e| {
            (
                e.path().display().to_string(),
                std::fs::read(e.path()).expect("readable capture"),
            )
        })
        .collect();
    let corpus: usize = files.iter().map(|f| f.1.len()).sum();
    let rounds = TARGET_BYTES.div_ceil(corpus);
    // Warm-up round outside the timing.
    let mut sink = 0usize;
    sink += round(&files);
    let start = Instant::now();
    for _ in 0..rounds {
        sink += round(&files);
    }
    let secs = start.elapsed().as_secs_f64();
    if std::env::var_os("INGEST_PROFILE").is_some() {
        profile(&files, rounds);
    }
    let bytes = corpus * rounds;
    println!(
        "ingest: {} files, {corpus} bytes per round, {rounds} rounds = {:.1} MB in {secs:.3} s on 1 thread: {:.1} MB/s per core (cells produced: {sink})",
        files.len(),
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 / secs
    );
}

/// One pass over the corpus, one bundle per file (as a node directory of
/// one file would be); returns how many measurement cells came out.
fn round(files: &[(String, Vec<u8>)]) -> usize {
    let mut cells = 0;
    for (path, bytes) in files {
        let mut b = Bundle::new(Host {
            name: "bench".into(),
            origin: Origin::Ingested,
        });
        b.absorb(wire_report::ingest::read_transcript(path, bytes));
        cells += b.measurements.len() + b.topology.links.len();
    }
    cells
}

/// Where the time goes: detection alone, then detection and parsing.
fn profile(files: &[(String, Vec<u8>)], rounds: usize) {
    let texts: Vec<&str> = files
        .iter()
        .map(|f| std::str::from_utf8(&f.1).unwrap())
        .collect();
    let t = Instant::now();
    for _ in 0..rounds {
        for x in &texts {
            std::hint::black_box(wire_report::evidence::detect(x));
        }
    }
    println!("  detect only: {:.3} s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    for _ in 0..rounds {
        for x in &texts {
            if let Some(tool) = wire_report::evidence::detect(x) {
                std::hint::black_box(wire_report::evidence::parse(tool, x).ok());
            }
        }
    }
    println!("  detect + parse: {:.3} s", t.elapsed().as_secs_f64());
    let mut per: std::collections::BTreeMap<&str, (f64, usize)> = Default::default();
    for x in &texts {
        let Some(tool) = wire_report::evidence::detect(x) else {
            continue;
        };
        let t = Instant::now();
        for _ in 0..rounds {
            std::hint::black_box(wire_report::evidence::parse(tool, x).ok());
        }
        let e = per.entry(tool.as_str()).or_default();
        e.0 += t.elapsed().as_secs_f64();
        e.1 += x.len() * rounds;
    }
    for (tool, (secs, bytes)) in per {
        println!(
            "  {tool:28} {:7.3} s {:8.1} MB/s",
            secs,
            bytes as f64 / 1e6 / secs
        );
    }
}
