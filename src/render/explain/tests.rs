use super::*;

#[test]
fn every_kind_has_an_explanation_with_what_to_do() {
    let kinds = [
        Finding::Truncated {
            file: String::new(),
            message: String::new(),
        },
        Finding::ToolFailed {
            tool: String::new(),
            message: String::new(),
            capture_defect: true,
        },
    ];
    for k in kinds {
        let md = explanation(&k);
        assert!(md.contains("What to do"), "{}", k.name());
    }
}

#[test]
fn a_finding_reads_with_its_numbers() {
    let f = Finding::PcieWidthDown {
        address: "0000:17:00.0".into(),
        name: Some("GPU0".into()),
        current_lanes: 8,
        max_lanes: 16,
        slot_lanes: Some(16),
    };
    assert_eq!(
        summary(&f),
        "0000:17:00.0 (GPU0) runs at x8 of x16 lanes though its slot has x16: at most 50% of its PCIe bandwidth."
    );
}

#[test]
fn a_shared_uplink_names_switch_devices_and_sum() {
    let f = Finding::SwitchUplinkOversubscribed {
        switch: "0000:01:00.0".into(),
        uplink_link: "PCIe Gen4 x16".into(),
        uplink_bytes_per_s: 31.5e9,
        devices: vec![
            ("0000:03:00.0".into(), 31.5e9),
            ("0000:04:00.0".into(), 31.5e9),
        ],
        sum_bytes_per_s: 63e9,
    };
    let s = summary(&f);
    assert!(s.starts_with("PCIe switch with uplink 0000:01:00.0 (PCIe Gen4 x16, 31.50 GB/s per direction): the 2 devices under it (0000:03:00.0 at 31.50 GB/s, 0000:04:00.0 at 31.50 GB/s) can carry 63.00 GB/s per direction together (each link at its top speed and negotiated width), 2.0x the uplink."), "{s}");
    assert!(explanation(&f).contains("What to do"));
}

#[test]
fn a_tiny_figure_against_a_port_without_a_printed_rate_reads_with_its_digits() {
    // Soft-RoCE: `3.06 MB/sec` against the 2.5 Gb/s ibv_devinfo's width and
    // speed give; two decimals of GB/s would print it as 0.00.
    let f = |software_rdma| Finding::FarBelowCeiling {
        test: "Send BW Test".into(),
        src: Some("rxe0".into()),
        dst: None,
        measured_bytes_per_s: 3_208_642.56,
        peak: false,
        size_bytes: Some(65536),
        software_rdma,
        ceiling: crate::facts::PathCeiling {
            bytes_per_s: 312.5e6,
            from: CeilingSource::RdmaPort {
                device: "rxe0".into(),
                port: 1,
                rate_as_printed: None,
                link: Some("Ethernet 2.5 Gb/s".into()),
            },
        },
    };
    assert_eq!(
        summary(&f(false)),
        "Send BW Test rxe0: best 0.00321 GB/s (average) at 65536 bytes (64 KiB) is 1% of the path's ceiling 0.31 GB/s (rxe0 port 1: Ethernet 2.5 Gb/s, from its width and speed)."
    );
    // Software RDMA: the stated rate is the kernel's mapping, the CPU the
    // limit; the explanation is the one for software RDMA.
    let s = summary(&f(true));
    assert!(
        s.ends_with("rxe0 is software RDMA (Soft-RoCE or soft-iWARP): the kernel does the RDMA work on the host CPU over an ordinary Ethernet interface, and the rate its port states is the kernel's mapping of that interface's link speed, not an adapter's."),
        "{s}"
    );
    assert!(explanation(&f(true)).contains("iperf3"));
    assert!(!explanation(&f(false)).contains("iperf3"));
}

#[test]
fn a_gpu_far_by_the_cpu_0_assumption_says_so_even_with_cpus_given() {
    // `numactl -C 0-5 -m1`: the CPUs hold the GPU's affinity, the memory
    // node is judged by taking the node that holds CPU 0 to be node 0.
    let f = |node_zero_assumed| Finding::ProcessFarFromGpu {
        gpus: vec!["GPU0".into()],
        gpu_numa_nodes: vec![],
        nics: vec![],
        near_gpus: 0,
        cpus: Some("0-5".into()),
        cpu_nodes: vec![],
        mem_nodes: vec![1],
        command: Some("numactl -C 0-5 -m1 bandwidthTest".into()),
        node_zero_assumed,
    };
    let s = summary(&f(true));
    assert!(
        s.contains("GPU GPU0 off those node(s) by its CPU affinity, taking the node that holds CPU 0 (the boot CPU) to be node 0"),
        "{s}"
    );
    let s = summary(&f(false));
    assert!(s.contains("GPU GPU0 outside those CPUs' reach"), "{s}");
    assert!(!s.contains("CPU 0"), "{s}");
}

#[test]
fn a_tool_failure_names_its_tool_once() {
    // The problem's message already starts with the tool's name.
    let f = Finding::ToolFailed {
        tool: "perftest".into(),
        message:
            "perftest: Completion with error at client; Failed status 10: wr_id 0 syndrom 0x88"
                .into(),
        capture_defect: false,
    };
    assert_eq!(
        summary(&f),
        "perftest: Completion with error at client; Failed status 10: wr_id 0 syndrom 0x88"
    );
}
