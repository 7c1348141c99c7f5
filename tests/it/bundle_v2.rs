//! Bundles written by schema version 2 (the seven answers as sentences,
//! six per series and the message size per cell) still load, and their
//! sentences become facts. The fixtures are real: written by
//! `collect --from captures/<node> --out tests/fixtures/v2-<node>-bundle.json`
//! with this repository at commit 92bf400 (the last version 2 writer), one
//! per tool family: perftest (`a100-gdr-pod-client`), bandwidthTest
//! (`a100-80gb-pcie-dell`), OSU (`gh200-eessi-2node`), TransferBench
//! (`amd-transferbench-iterations`), nvbandwidth (`h100-8gpu-nvbandwidth-sm`),
//! rocm-bandwidth-test (`mi100-2gpu-dual-epyc`) and nccl-tests
//! (`a100-sxm4-8gpu-superbench`).

use std::path::Path;

use wire_report::bundle::Bundle;
use wire_report::evidence::answers::{Legacy, Path as PathFacts, Unit};
use wire_report::render::answers::answers;

const NODES: [&str; 7] = [
    "a100-gdr-pod-client",
    "a100-80gb-pcie-dell",
    "gh200-eessi-2node",
    "amd-transferbench-iterations",
    "h100-8gpu-nvbandwidth-sm",
    "mi100-2gpu-dual-epyc",
    "a100-sxm4-8gpu-superbench",
];

fn fixture(node: &str) -> (String, Bundle) {
    let path = Path::new("tests/fixtures").join(format!("v2-{node}-bundle.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    let b = Bundle::from_json(&text, &path).unwrap();
    (text, b)
}

/// Every sentence version 2 wrote for these tools reads back as a fact:
/// nothing is left as legacy text.
#[test]
fn version_2_sentences_become_facts() {
    for node in NODES {
        let (text, b) = fixture(node);
        assert!(text.starts_with("{\"schema_version\":2,"), "{node}");
        assert!(!b.measurements.is_empty(), "{node}");
        for m in &b.measurements {
            assert_eq!(m.questions.legacy, Legacy::default(), "{node}: {m:?}");
        }
    }
}

/// The migrated facts are the facts a fresh ingest of the same transcripts
/// writes, cell for cell.
#[test]
fn migrated_facts_equal_a_fresh_ingest() {
    for node in NODES {
        let (_, old) = fixture(node);
        let fresh = wire_report::inputs::ingest(&[Path::new("captures").join(node)]).unwrap();
        let fresh = &fresh[0].bundle;
        assert_eq!(old.measurements.len(), fresh.measurements.len(), "{node}");
        for (a, b) in old.measurements.iter().zip(&fresh.measurements) {
            assert_eq!(a.source, b.source, "{node}");
            assert_eq!(a.questions, b.questions, "{node} line {}", a.source.line);
        }
    }
}

/// Some facts, spelled out: perftest's unit, port and GPU buffers; nccl's
/// ranks and nodes.
#[test]
fn migrated_facts_say_what_the_sentences_said() {
    let (_, b) = fixture("a100-gdr-pod-client");
    let m = &b.measurements[0];
    assert_eq!(m.questions.unit, Unit::GigabitsPerS);
    let PathFacts::Rdma(r) = &m.questions.path else {
        panic!("{:?}", m.questions.path)
    };
    assert_eq!(r.gpu_memory.as_deref(), Some("CUDA"));
    assert!(answers(m)[5].starts_with("client side, device mlx5_"));
    let (_, b) = fixture("a100-sxm4-8gpu-superbench");
    let m = &b.measurements[0];
    assert!(
        matches!(m.questions.path, PathFacts::Ranks { ranks: 8, .. }),
        "{:?}",
        m.questions.path
    );
}

/// A sentence this crate never wrote (edited by hand, or from a fork) is
/// kept and shown as it is, and survives a write in version 3.
#[test]
fn an_unknown_sentence_is_kept_and_shown_as_is() {
    let (text, _) = fixture("mi100-2gpu-dual-epyc");
    let odd = "the rack was on fire";
    let edited = text.replacen(
        "\"direction\":\"unidirectional: row agent copies to column agent\"",
        &format!("\"direction\":\"{odd}\""),
        1,
    );
    assert_ne!(edited, text);
    let b = Bundle::from_json(&edited, Path::new("edited.json")).unwrap();
    let kept: Vec<_> = b
        .measurements
        .iter()
        .filter(|m| m.questions.legacy.direction.as_deref() == Some(odd))
        .collect();
    assert!(!kept.is_empty());
    assert!(kept.iter().all(|m| answers(m)[1] == odd));
    let back = Bundle::from_json(&b.to_json(), Path::new("v3.json")).unwrap();
    assert_eq!(back, b);
}
