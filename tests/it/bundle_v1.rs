//! Bundles written by schema version 1 (pretty JSON, one object per cell,
//! full paths in every source) still load. The fixtures are real: written
//! by `collect --from` of this repository before version 2, from
//! `captures/dgx1v-v100-8gpu-1nic` and `captures/rtx3090-4gpu`.

use std::path::Path;
use wire_report::render::answers::answers;

use wire_report::bundle::Bundle;
use wire_report::evidence::measurement::{Direction, Kind, P2p};

fn load(name: &str) -> Bundle {
    let path = Path::new("tests/fixtures").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    Bundle::from_json(&text, &path).unwrap()
}

#[test]
fn loads_a_version_1_topology_bundle() {
    let b = load("v1-dgx1v-bundle.json");
    assert_eq!(b.host.name, "dgx1v-v100-8gpu-1nic");
    assert_eq!(b.topology.devices.len(), 9);
    assert_eq!(b.topology.links.len(), 36);
    let l = &b.topology.links[0];
    assert_eq!(
        (l.a.as_str(), l.b.as_str(), l.nvlinks),
        ("GPU0", "GPU1", Some(1))
    );
    assert_eq!(
        l.sources[0].file.as_str(),
        "captures/dgx1v-v100-8gpu-1nic/nvidia-topo-009-dgx1v-v100-sxm2-hybrid-cube-mesh-mlx5.txt"
    );
    assert_eq!((l.sources[0].line, l.sources[1].line), (2, 3));
    assert_eq!(b.transcripts.len(), 1);
    assert!(b.transcripts[0].text.contains("GPU0"));
}

#[test]
fn loads_a_version_1_measurement_bundle_cell_by_cell() {
    let b = load("v1-rtx3090-bundle.json");
    assert_eq!(b.measurements.len(), 128);
    let m = &b.measurements[5];
    assert_eq!(
        (m.src.as_deref(), m.dst.as_deref()),
        (Some("GPU1"), Some("GPU1"))
    );
    assert_eq!(m.bandwidth_bytes_per_s, Some(829_350_000_000.0));
    assert_eq!(m.as_printed, "829.35 GB/s");
    assert_eq!(m.source.line, 31);
    assert!(m.source.file.ends_with("no-trailing-note.txt"));
    assert_eq!(
        (m.kind, m.direction, m.p2p),
        (Kind::D2d, Direction::Uni, P2p::Disabled)
    );
    assert_eq!(answers(m)[5], "within one GPU's memory");
    // Every version 1 sentence of p2pBandwidthLatencyTest reads as a fact.
    assert!(
        b.measurements
            .iter()
            .all(|m| m.questions.legacy == Default::default())
    );
    assert_eq!(
        b.measurements
            .iter()
            .filter(|m| m.latency_s.is_some())
            .count(),
        64
    );
}

#[test]
fn a_migrated_version_1_bundle_writes_as_version_3_and_reads_back_equal() {
    for name in ["v1-dgx1v-bundle.json", "v1-rtx3090-bundle.json"] {
        let b = load(name);
        assert_eq!(b.schema_version, wire_report::bundle::SCHEMA_VERSION);
        let text = b.to_json();
        assert!(text.starts_with("{\"schema_version\":3,"), "{name}");
        assert!(text.contains("\"series\":["), "{name}");
        assert_eq!(
            Bundle::from_json(&text, Path::new(name)).unwrap(),
            b,
            "{name}"
        );
    }
}

/// Every capture node: version 3 loses nothing (every cell, every source,
/// every question's answer comes back), and stays within 4x the bytes of
/// the transcripts it holds over the corpus (3.95x; the dense tables of
/// TransferBench's presets and `dcgmi nvlink -s` print a fact every 6
/// bytes or fewer and run 10-20x on their own).
#[test]
fn every_capture_round_trips_through_version_3() {
    let nodes = wire_report::inputs::ingest(&["captures".into()]).unwrap();
    assert!(nodes.len() > 50);
    let (mut transcript_bytes, mut bundle_bytes) = (0, 0);
    for n in nodes {
        let text = n.bundle.to_json();
        let back = Bundle::from_json(&text, Path::new("b.json")).unwrap();
        let name = &n.bundle.host.name;
        for (a, b) in back.measurements.iter().zip(&n.bundle.measurements) {
            assert_eq!(a, b, "{name}");
        }
        assert_eq!(back, n.bundle, "{name}");
        transcript_bytes += n
            .bundle
            .transcripts
            .iter()
            .map(|t| t.text.len())
            .sum::<usize>();
        bundle_bytes += text.len();
    }
    let ratio = bundle_bytes as f64 / transcript_bytes as f64;
    assert!(ratio <= 4.0, "bundles are {ratio:.2}x their transcripts");
}
