//! Property tests: no input, however damaged, panics a parser. Inputs are
//! arbitrary text and real captures mangled at random (truncated, lines
//! dropped or duplicated, bytes replaced).

use proptest::prelude::*;
use wire_report::bundle::{Bundle, Host, Origin};
use wire_report::evidence::{self, Tool};

fn captures() -> Vec<String> {
    walkdir::WalkDir::new("captures")
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.file_name() != "SOURCES.tsv")
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect()
}

fn run_all(text: &str) {
    let _ = evidence::detect(text);
    // Every parser, whether or not its detector would pick the text.
    for t in Tool::all() {
        let _ = evidence::parse(t, text);
    }
    let mut b = Bundle::new(Host {
        name: "p".into(),
        origin: Origin::Ingested,
    });
    b.absorb(wire_report::ingest::read_transcript(
        "p.txt",
        text.as_bytes(),
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC*") {
        run_all(&s);
    }

    #[test]
    fn matrix_like_text_never_panics(
        rows in proptest::collection::vec(
            proptest::collection::vec(
                prop_oneof![
                    Just("X".to_string()), Just("NV4".to_string()), Just("GPU0".to_string()),
                    Just("GPU1".to_string()), Just("N/A".to_string()), Just("0-3".to_string()),
                    Just("PCIE".to_string()), Just("XGMI".to_string()), Just("0".to_string()),
                    Just("=== Link Type between two GPUs ===".to_string()),
                    Just("WEIGHT TABLE:".to_string()), Just("0000:0c:00.0".to_string()),
                    Just("NIC Legend:".to_string()), Just("Link 0: 1 GB/s".to_string()),
                    Just("|  NvLink Link Status  |".to_string()), Just("gpuId 0:".to_string()),
                    Just("U U D X _".to_string()), Just("LnkCap:\tSpeed 32GT/s, Width x16".to_string()),
                    Just("NumCUs".to_string()), Just("GPU-GFX Scaling benchmark:".to_string()),
                    Just("CA 'mlx5_0'".to_string()), Just("0: ".to_string()),
                    Just("Dec 01 10:00:00 h p[1]: ".to_string()),
                    "[ -~]{0,6}",
                ],
                0..8,
            ),
            0..10,
        ),
        sep in prop_oneof![Just("\t"), Just(" "), Just("   "), Just("")],
    ) {
        let text: String = rows.iter().map(|r| r.join(sep) + "\n").collect();
        run_all(&text);
    }

    #[test]
    fn damaged_real_captures_never_panic(
        which in 0usize..1000,
        cut in 0usize..10_000,
        drop_line in 0usize..200,
        dup_line in 0usize..200,
        pos in 0usize..10_000,
        byte in any::<char>(),
    ) {
        let caps = captures();
        let text = &caps[which % caps.len()];
        let mut lines: Vec<&str> = text.lines().collect();
        if !lines.is_empty() {
            let d = dup_line % lines.len();
            lines.insert(d, lines[d]);
            lines.remove(drop_line % lines.len());
        }
        let mut s = lines.join("\n");
        if !s.is_empty() {
            let mut p = pos % s.len();
            while !s.is_char_boundary(p) { p -= 1; }
            s.insert(p, byte);
            let mut c = cut % (s.len() + 1);
            while !s.is_char_boundary(c) { c -= 1; }
            s.truncate(c);
        }
        run_all(&s);
    }
}

/// Synthetic hostile inputs (`tests/fixtures/hostile/`): an index read from
/// the text (`4294967295`, `GPU[100000]`) never sizes memory or a loop.
/// Each is read alone; what comes out is bounded by the text's size.
#[test]
fn hostile_indices_are_bounded_by_the_text() {
    for (dir, cells, problem_line) in [
        ("01-oom-nvbandwidth-row-index/nvbandwidth.txt", 3, None),
        ("02-oom-p2p-row-index/p2p.txt", 2, Some(3)),
        // A `GPU[k]` index is a label (a filtered view lists one GPU): one
        // device, named by it, and nothing sized by it.
        ("03-abort-rocm-smi-gpu-index/rocm.txt", 0, None),
        ("04-cpu-rocm-smi-gpu-index/rocm.txt", 0, None),
    ] {
        let path = format!("tests/fixtures/hostile/{dir}");
        let text = std::fs::read(&path).unwrap();
        let r = wire_report::ingest::read_transcript(&path, &text);
        assert_eq!(r.measurements.len(), cells, "{path}: {:?}", r.measurements);
        assert!(r.topology.devices.len() <= 2, "{path}");
        assert!(r.topology.links.len() <= 1, "{path}");
        assert_eq!(
            r.problems.first().and_then(|p| p.line),
            problem_line,
            "{path}: {:?}",
            r.problems
        );
    }
}

/// A perftest latency header whose `BW average` column has a time unit
/// (synthetic: the shape a fuzzer found) once hit an `expect`; the row's
/// latency is read and the unknown column is not.
#[test]
fn perftest_bw_column_in_an_unknown_unit_does_not_panic() {
    let text = " #bytes #iterations    t_min[usec]    BW average[usec]\n 2       1000          1.00           2.00\n---\n";
    let p = evidence::parse(Tool::Perftest, text).unwrap();
    assert_eq!(p.measurements.len(), 1, "{:?}", p.measurements);
    assert_eq!(p.measurements[0].latency_s, Some(1e-6));
}
