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

#[test]
fn rocm_smi_link_accessibility_is_each_gpu_pairs_peer_access() {
    // captures/rocm50-notes-2gpu-topoaccess (ROCm 5.0 release notes' sample
    // of `rocm-smi --showtopoaccess`), GPU1's row turned to False here.
    let text = "======================= ROCm System Management Interface =======================
===================== Link accessibility between two GPUs ======================
GPU0 GPU1
GPU0 True True
GPU1 False True
============================= End of ROCm SMI Log ==============================
";
    let p = parse_rocm_smi(text).unwrap();
    assert!(p.issues.is_empty(), "{:?}", p.issues);
    let cells: Vec<_> = p.topology.p2p.iter().map(P2pCell::row).collect();
    assert_eq!(
        cells,
        [
            ("GPU0", "GPU1", "True", true, 4),
            ("GPU1", "GPU0", "False", false, 5)
        ]
    );
    // Anything else in a cell is a problem at its line.
    let odd = text.replace("GPU1 False True", "GPU1 Maybe True");
    let p = parse_rocm_smi(&odd).unwrap();
    assert_eq!(p.issues.len(), 1, "{:?}", p.issues);
    assert_eq!(p.issues[0].line, 5);
}
