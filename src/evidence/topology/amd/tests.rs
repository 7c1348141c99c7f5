use super::*;

#[test]
fn classifies_amd_pairs_by_type_numa_and_hops() {
    assert_eq!(
        amd_class(Some("XGMI"), Some(1), (None, None), None, None),
        LinkClass::DirectLink
    );
    assert_eq!(
        amd_class(Some("PCIE"), Some(3), (Some(0), Some(0)), None, None),
        LinkClass::CrossSocket
    );
    assert_eq!(
        amd_class(Some("PCIE"), Some(2), (Some(0), Some(1)), None, None),
        LinkClass::CrossSocket
    );
    assert_eq!(
        amd_class(Some("PCIE"), Some(2), (None, None), None, None),
        LinkClass::PcieHost
    );
    assert_eq!(
        amd_class(Some("PCIE"), None, (Some(1), Some(1)), None, None),
        LinkClass::PcieHost
    );
    assert_eq!(
        amd_class(Some("PCIE"), None, (None, None), None, None),
        LinkClass::Unknown
    );
    assert_eq!(
        amd_class(None, None, (None, None), Some(5e10), None),
        LinkClass::DirectLink
    );
    assert_eq!(
        amd_class(None, None, (None, None), Some(0.0), None),
        LinkClass::Unknown
    );
    assert_eq!(
        amd_class(Some("NVLINK"), None, (None, None), None, None),
        LinkClass::Unknown
    );
}

#[test]
fn xgmi_two_hops_away_and_weight_only_pairs() {
    // Two xGMI hops: through another GPU, not a direct link.
    assert_eq!(
        amd_class(Some("XGMI"), Some(2), (None, None), None, Some(30)),
        LinkClass::Unknown
    );
    // A weight table alone: 15 is one xGMI hop; 30 and 45 are two and
    // three; 72 is a PCIe path across sockets.
    assert_eq!(
        amd_class(None, None, (None, None), None, Some(15)),
        LinkClass::DirectLink
    );
    for w in [30, 45, 40, 72] {
        assert_eq!(
            amd_class(None, None, (None, None), None, Some(w)),
            LinkClass::Unknown,
            "{w}"
        );
    }
}

#[test]
fn reads_both_numa_line_styles() {
    assert_eq!(rocm_gpu_index("GPU[12]\t\t: x").map(|g| g.0), Some(12));
    assert_eq!(rocm_gpu_index("GPU 3          : x").map(|g| g.0), Some(3));
    assert_eq!(rocm_gpu_index("CPU 3"), None);
}
