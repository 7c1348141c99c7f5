//! The curriculum's own lab program, `peer_copy_bw`, read end to end on
//! a synthetic paste (no real capture of it is public): its figures, its
//! peer-access answers, its failed run, and the pair the diagnosis names.

use std::path::PathBuf;

use wire_report::diagnosis::{self, Finding};
use wire_report::evidence::Tool;
use wire_report::evidence::measurement::{P2p, Verification};

const FIXTURE: &str = "tests/fixtures/synthetic/synthetic-peer-copy-bw-4x-a100-pcie-nvlink-pairs";

fn bundle() -> wire_report::bundle::Bundle {
    wire_report::inputs::ingest(&[PathBuf::from(FIXTURE)])
        .unwrap()
        .remove(0)
        .bundle
}

#[test]
fn every_run_of_the_paste_is_read_synthetic() {
    let b = bundle();
    assert_eq!(b.transcripts.len(), 1);
    let t = &b.transcripts[0];
    assert_eq!(t.tool, Tool::PeerCopyBw);
    // The five prompts are passed over; only the SYNTHETIC note is not
    // the program's.
    assert_eq!((t.lines.read, t.lines.skipped), (9, 5));
    assert_eq!(t.lines.not_understood_lines, [1]);
    let cells: Vec<_> = b
        .measurements
        .iter()
        .map(|m| {
            (
                m.src.as_deref().unwrap_or_default(),
                m.dst.as_deref().unwrap_or_default(),
                m.p2p,
                m.size_bytes,
                m.bandwidth_bytes_per_s,
                m.source.line,
            )
        })
        .collect();
    assert_eq!(
        cells,
        [
            (
                "GPU0",
                "GPU1",
                P2p::Enabled,
                Some(256 << 20),
                Some(263.7e9),
                4
            ),
            (
                "GPU1",
                "GPU0",
                P2p::Enabled,
                Some(256 << 20),
                Some(264.2e9),
                7
            ),
            (
                "GPU0",
                "GPU2",
                P2p::NoPeerAccess,
                Some(256 << 20),
                Some(20.6e9),
                10
            ),
            (
                "GPU2",
                "GPU0",
                P2p::NoPeerAccess,
                Some(1 << 30),
                Some(21.1e9),
                13
            ),
        ]
    );
    assert!(
        b.measurements
            .iter()
            .all(|m| m.verification == Verification::Checked { errors: 0 })
    );
    // The refused run (device 4 of four) is the tool's own error.
    assert_eq!(b.problems.len(), 1, "{:?}", b.problems);
    assert_eq!(b.problems[0].line, Some(15));
    assert!(
        b.problems[0]
            .message
            .contains("need two distinct valid device ids")
    );
}

#[test]
fn the_diagnosis_names_the_pair_that_stages_synthetic() {
    let b = bundle();
    let d = diagnosis::diagnose(&b);
    let no_path: Vec<_> = d
        .iter()
        .filter_map(|x| match &x.finding {
            Finding::NoPeerPath { a, b, pairs, .. } => Some((a.as_str(), b.as_str(), *pairs)),
            _ => None,
        })
        .collect();
    assert_eq!(no_path, [("GPU0", "GPU2", 1)]);
    // The failed run is said too, at its line.
    let failed: Vec<_> = d
        .iter()
        .filter(|x| matches!(x.finding, Finding::ToolFailed { .. }))
        .map(|x| x.evidence[0].line)
        .collect();
    assert_eq!(failed, [15]);
}
