use super::*;

#[test]
fn maps_every_nvidia_code_to_its_class() {
    assert_eq!(class_of_code("NV12"), (LinkClass::DirectLink, Some(12)));
    assert_eq!(class_of_code("PIX").0, LinkClass::PcieSwitch);
    assert_eq!(class_of_code("PXB").0, LinkClass::PcieSwitch);
    assert_eq!(class_of_code("PHB").0, LinkClass::PcieHost);
    assert_eq!(class_of_code("NODE").0, LinkClass::PcieHost);
    assert_eq!(class_of_code("SYS").0, LinkClass::CrossSocket);
    assert_eq!(class_of_code("SOC").0, LinkClass::CrossSocket);
    assert_eq!(class_of_code("NVX").0, LinkClass::Unknown);
    assert_eq!(class_of_code("C2C").0, LinkClass::Unknown);
}

#[test]
fn splits_an_affinity_that_ran_into_the_numa_column() {
    let mut d = Device::new("GPU0", DeviceKind::Gpu, Source::line(1));
    let cols = [Extra::CpuAffinity, Extra::NumaAffinity, Extra::GpuNumaId];
    assign_extras(&mut d, &cols, &["0-45,92-1370", "N/A"], 1).unwrap();
    assert_eq!(d.numa_node, Some(0));
    assert_eq!(
        d.cpu_affinity,
        Some(vec![
            CpuRange { first: 0, last: 45 },
            CpuRange {
                first: 92,
                last: 137
            }
        ])
    );
    // `0-45,92-13` is descending and `0-45,92-1` too: only one split is valid.
    let mut d = Device::new("GPU0", DeviceKind::Gpu, Source::line(1));
    let err = assign_extras(&mut d, &cols, &["0-912", "N/A"], 3).unwrap_err();
    assert_eq!(err.line, 3);
    assert!(err.expected.contains("split"), "{err}");
}

#[test]
fn keeps_the_one_readable_row_of_a_matrix_with_a_missing_cell() {
    // Synthetic: GPU1's row (line 3) lost a cell; GPU0's row alone tells
    // the pair and GPU0's affinity.
    let text = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV4\t0-3\nGPU1\tNV4\n";
    let p = parse_topo_matrix(text).unwrap();
    let ids: Vec<&str> = p.topology.devices.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["GPU0", "GPU1"]);
    let link = p.topology.link("GPU0", "GPU1").unwrap();
    assert_eq!((link.code.as_deref(), link.sources.len()), (Some("NV4"), 1));
    assert_eq!(link.sources[0].line, 2);
    assert_eq!(p.issues.len(), 1);
    assert_eq!(p.issues[0].line, 3);
}

#[test]
fn a_matrix_cut_after_its_header_keeps_the_devices_it_names() {
    let text = "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\n";
    assert!(looks_like_topo_matrix(
        text,
        &text.lines().collect::<Vec<_>>()
    ));
    let p = parse_topo_matrix(text).unwrap();
    let ids: Vec<&str> = p.topology.devices.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["GPU0", "GPU1", "NIC0"]);
    assert!(p.topology.devices.iter().all(|d| d.source.line == 1));
    assert!(p.topology.links.is_empty());
    assert_eq!(p.issues.len(), 1);
    assert!(
        p.issues[0].message.contains("rows GPU0..NIC0"),
        "{:?}",
        p.issues
    );
    // A header followed by prose is not a matrix cut after its header.
    let prose = "\tGPU0\tGPU1\tCPU Affinity\nsee below\n";
    assert!(!looks_like_topo_matrix(
        prose,
        &prose.lines().collect::<Vec<_>>()
    ));
}

#[test]
fn a_p2p_matrix_cut_after_its_header_keeps_the_gpus_it_names() {
    // Synthetic: the first line of a real `topo -p2p p` capture (raw
    // tabs, a trailing tab), the rows cut.
    let text = " \tGPU0\tGPU1\tGPU2\t\n";
    let lines: Vec<&str> = text.lines().collect();
    assert!(looks_like_p2p_status(text, &lines));
    let p = parse_p2p_status(text).unwrap();
    let ids: Vec<(&str, usize)> = p
        .topology
        .devices
        .iter()
        .map(|d| (d.id.as_str(), d.source.line))
        .collect();
    assert_eq!(ids, [("GPU0", 1), ("GPU1", 1), ("GPU2", 1)]);
    assert!(p.topology.p2p.is_empty());
    assert_eq!(p.issues.len(), 1);
    assert!(
        p.issues[0]
            .message
            .contains("rows GPU0..GPU2 of the P2P status matrix"),
        "{:?}",
        p.issues
    );
    // Not a header: one GPU, GPUs out of order, another column, prose.
    for other in [
        "\tGPU0\n",
        "\tGPU0\tGPU2\n",
        "\tGPU0\tGPU1\tCPU Affinity\n",
        "GPU0 GPU1 are the two cards\n",
    ] {
        let lines: Vec<&str> = other.lines().collect();
        assert!(!looks_like_p2p_status(other, &lines), "{other:?}");
    }
}
