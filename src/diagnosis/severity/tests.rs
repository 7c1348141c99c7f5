use super::*;

#[test]
fn every_finding_kind_has_a_row_and_every_row_a_known_kind() {
    use crate::diagnosis::Finding;
    for k in Finding::KINDS {
        assert!(
            Why::ALL.iter().any(|w| w.row().kind == k),
            "{k} has no row in the severity table"
        );
    }
    for w in Why::ALL {
        assert!(
            Finding::KINDS.contains(&w.row().kind),
            "{w:?} judges an unknown kind"
        );
    }
    let mut seen = std::collections::BTreeSet::new();
    for w in Why::ALL {
        assert!(seen.insert(w), "{w:?} twice in Why::ALL");
    }
}

#[test]
fn geforce_parts_are_consumer_and_data_center_parts_are_not() {
    assert!(consumer_part("NVIDIA GeForce RTX 3090"));
    assert!(consumer_part("GeForce RTX 2080 Ti"));
    assert!(consumer_part("NVIDIA RTX 4090"));
    assert!(consumer_part("NVIDIA GeForce RTX 5060 Ti"));
    assert!(!consumer_part("NVIDIA RTX 6000 Ada Generation"));
    assert!(!consumer_part("NVIDIA RTX 4000 Ada Generation"));
    assert!(!consumer_part("NVIDIA GeForce GTX 1080 Ti"));
    assert!(consumer_part("NVIDIA GeForce GTX 1660 SUPER"));
    assert!(!consumer_part("NVIDIA RTX 5880 Ada Generation"));
    assert!(!consumer_part(
        "NVIDIA RTX PRO 6000 Blackwell Server Edition"
    ));
    assert!(!consumer_part("NVIDIA TITAN RTX"));
    assert!(!consumer_part("Quadro RTX 8000"));
    assert!(!consumer_part("NVIDIA RTX A6000"));
    assert!(!consumer_part("NVIDIA H100 80GB HBM3"));
    assert!(!consumer_part("NVIDIA L4"));
    assert!(!consumer_part("Tesla V100-SXM2-32GB"));
}
