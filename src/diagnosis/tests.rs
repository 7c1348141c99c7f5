//! Rules on synthetic bundles: the kinds no shipped capture makes fire
//! (the truth table in `tests/it/diagnosis.rs` names them) and the edges
//! of the others. Every fixture here is synthetic.

use super::*;
use crate::bundle::{Host, Origin};
use crate::evidence::measurement::{Kind, Measurement, P2p, Statistic, Verification};
use crate::evidence::rdma::{RdmaDevice, RdmaPort};

fn bundle() -> Bundle {
    Bundle::new(Host {
        name: "n".into(),
        origin: Origin::Ingested,
    })
}

fn cell(p2p: P2p, bw: f64, line: usize) -> Measurement {
    let mut m = Measurement::new(
        "p2pBandwidthLatencyTest",
        line,
        Kind::P2pCopy,
        "t",
        Statistic::Avg,
    );
    m.src = Some("GPU0".into());
    m.dst = Some("GPU1".into());
    m.p2p = p2p;
    m.bandwidth_bytes_per_s = Some(bw);
    m.questions.unit = crate::evidence::answers::Unit::GigabytesPerS;
    m
}

fn port(port: u32, active: bool, physical: &str, gbit: Option<f64>) -> RdmaPort {
    RdmaPort {
        port,
        active: Some(active),
        state: Some(if active { "Active" } else { "Down" }.into()),
        physical_state: Some(physical.into()),
        link_up: Some(physical == "LinkUp"),
        rate_bytes_per_s: gbit.map(|g| g * 1e9 / 8.0),
        rate_as_printed: gbit.map(|g| g.to_string()),
        link_layer: Some("InfiniBand".into()),
        ..RdmaPort::default()
    }
}

fn device(name: &str, ports: Vec<RdmaPort>) -> RdmaDevice {
    RdmaDevice {
        ports,
        ..RdmaDevice::new(
            name,
            Source {
                file: "ibstat.txt".into(),
                line: 1,
            },
        )
    }
}

fn kinds(b: &Bundle) -> Vec<(Severity, &'static str)> {
    diagnose(b)
        .iter()
        .map(|d| (d.severity, d.finding.name()))
        .collect()
}

#[test]
fn p2p_enabled_close_to_disabled_is_silent_staging() {
    let mut b = bundle();
    b.measurements.push(cell(P2p::Disabled, 5.71e9, 16));
    b.measurements.push(cell(P2p::Enabled, 5.72e9, 20));
    let d = diagnose(&b);
    assert_eq!(d.len(), 1);
    // No transcript names the model: whether it should copy peer to peer
    // is not known.
    assert_eq!(d[0].severity, Severity::Warning);
    assert!(matches!(
        d[0].finding,
        Finding::SilentStaging { pairs: 1, .. }
    ));
    assert_eq!(d[0].evidence.len(), 2);
    // The same figures on a data-center part, and on a GeForce RTX part
    // (the severity table: broken, and by design).
    let named = |model: &str| {
        let mut b = b.clone();
        for id in ["GPU0", "GPU1"] {
            let mut g = crate::evidence::topology::Device::new(
                id,
                crate::evidence::topology::DeviceKind::Gpu,
                Source::line(1),
            );
            g.name = Some(model.into());
            b.topology.devices.push(g);
        }
        diagnose(&b)
    };
    let d = named("NVIDIA A100-PCIE-40GB");
    assert_eq!(d[0].severity, Severity::Critical);
    assert_eq!(d[0].why, crate::diagnosis::Why::StagesOnPeerCapablePart);
    let d = named("NVIDIA GeForce RTX 3090");
    assert_eq!(d[0].severity, Severity::Info);
    assert_eq!(d[0].why, crate::diagnosis::Why::StagesByDesign);
    // Figures whose unit no transcript states are graded C: they cannot
    // raise the finding above info, and it says why.
    let mut weak = named("NVIDIA A100-PCIE-40GB");
    assert!(!weak[0].weak_figures);
    let mut b2 = b.clone();
    for m in &mut b2.measurements {
        m.questions.unit = crate::evidence::answers::Unit::NotStated;
    }
    weak = diagnose(&b2);
    assert_eq!(weak[0].severity, Severity::Info);
    assert!(weak[0].weak_figures);
    assert_eq!(weak[0].why.severity(), Severity::Warning);
    // A real NVLink pair: enabled far above disabled, nothing to say.
    let mut b = bundle();
    b.measurements.push(cell(P2p::Disabled, 20e9, 16));
    b.measurements.push(cell(P2p::Enabled, 250e9, 20));
    assert!(diagnose(&b).is_empty());
}

#[test]
fn staging_compares_cells_of_one_size_only() {
    // Enabled at 4 KiB equals disabled at 64 MiB by chance: not staging.
    let mut b = bundle();
    let mut dis = cell(P2p::Disabled, 5.7e9, 16);
    dis.size_bytes = Some(64 << 20);
    let mut en = cell(P2p::Enabled, 5.7e9, 20);
    en.size_bytes = Some(4096);
    b.measurements.extend([dis, en]);
    assert!(diagnose(&b).is_empty());
}

#[test]
fn a_lone_port_down_is_a_warning() {
    // Synthetic: a single-port adapter in Polling (no link partner).
    let mut b = bundle();
    b.rdma
        .push(device("mlx5_0", vec![port(1, false, "Polling", None)]));
    assert_eq!(kinds(&b), [(Severity::Warning, "rdma-port-down")]);
    // The same port beside an active sibling is the spare: unused, info.
    let mut b = bundle();
    b.rdma.push(device(
        "mlx5_0",
        vec![
            port(1, true, "LinkUp", Some(100.0)),
            port(2, false, "Polling", None),
        ],
    ));
    assert_eq!(kinds(&b), [(Severity::Info, "rdma-port-unused")]);
}

#[test]
fn a_slower_port_of_one_layer_is_named() {
    let mut b = bundle();
    b.rdma
        .push(device("mlx5_0", vec![port(1, true, "LinkUp", Some(200.0))]));
    b.rdma
        .push(device("mlx5_1", vec![port(1, true, "LinkUp", Some(100.0))]));
    let d = diagnose(&b);
    assert_eq!(d.len(), 1);
    let Finding::RdmaPortBelowRate {
        device,
        rate_bytes_per_s,
        best_bytes_per_s,
        ..
    } = &d[0].finding
    else {
        panic!("{d:?}");
    };
    assert_eq!(device, "mlx5_1");
    assert_eq!((*rate_bytes_per_s, *best_bytes_per_s), (12.5e9, 25e9));
}

#[test]
fn wrong_values_are_critical() {
    let mut b = bundle();
    let mut m = Measurement::new(
        "nccl-tests",
        30,
        Kind::Allreduce,
        "all_reduce",
        Statistic::Avg,
    );
    m.bandwidth_bytes_per_s = Some(100e9);
    m.verification = Verification::Checked { errors: 3 };
    b.measurements.push(m);
    let d = diagnose(&b);
    assert_eq!(kinds(&b), [(Severity::Critical, "wrong-results")]);
    assert!(matches!(
        d[0].finding,
        Finding::WrongResults { errors: 3, .. }
    ));
}

#[test]
fn a_failed_check_without_a_count_is_critical_and_claims_no_count() {
    // Old nccl-tests print the largest deviation, not a count: two printed
    // rows over tolerance are two failed rows, not "2 wrong values".
    let mut b = bundle();
    for line in [30, 31] {
        let mut m = Measurement::new(
            "nccl-tests",
            line,
            Kind::Allgather,
            "allgather out-of-place",
            Statistic::Avg,
        );
        m.verification = Verification::Failed;
        b.measurements.push(m);
    }
    let d = diagnose(&b);
    assert_eq!(kinds(&b), [(Severity::Critical, "wrong-results")]);
    assert!(matches!(
        d[0].finding,
        Finding::WrongResults {
            errors: 0,
            failed_rows: 2,
            ..
        }
    ));
    let s = crate::render::explain::summary(&d[0].finding);
    assert!(
        s.contains("failed its own data check on 2 printed row(s)"),
        "{s}"
    );
    assert!(!s.contains("wrong value(s)"), "{s}");
}

#[test]
fn far_below_the_ports_data_rate() {
    // 4X QDR (40 Gb/s nominal, 4.0 GB/s of data): 0.9 GB/s is 22%.
    let mut b = bundle();
    b.rdma
        .push(device("mlx4_0", vec![port(1, true, "LinkUp", Some(40.0))]));
    let mut m = Measurement::new(
        "perftest",
        40,
        Kind::RdmaWrite,
        "ib_write_bw",
        Statistic::Avg,
    );
    m.src = Some("mlx4_0".into());
    m.bandwidth_bytes_per_s = Some(0.9e9);
    m.size_bytes = Some(1 << 20);
    m.questions.unit = crate::evidence::answers::Unit::GigabytesPerS;
    b.measurements.push(m.clone());
    let d = diagnose(&b);
    assert_eq!(kinds(&b), [(Severity::Warning, "far-below-ceiling")]);
    let Finding::FarBelowCeiling { ceiling, .. } = &d[0].finding else {
        unreachable!()
    };
    assert_eq!(ceiling.bytes_per_s, 4e9);
    // 1.1 GB/s is 27.5% of 4.0 (it was 22% of the 5.0 read without encoding).
    b.measurements[0].bandwidth_bytes_per_s = Some(1.1e9);
    assert!(diagnose(&b).is_empty());
}

#[test]
fn counters_that_grow_during_one_collection_are_named() {
    use crate::evidence::rdma::Counter;
    let c = |name: &str, delta: u64| Counter {
        name: name.into(),
        group: "counters".into(),
        start: 10,
        end: 10 + delta,
        delta,
        source: None,
    };
    let mut p = port(1, true, "LinkUp", Some(100.0));
    p.link_layer = Some("Ethernet".into());
    p.counters = vec![
        c("symbol_error", 3),
        c("link_downed", 1),
        c("port_xmit_data", 9_000_000),
        c("np_cnp_sent", 40),
        c("port_rcv_errors", 0),
    ];
    let mut b = bundle();
    b.rdma.push(device("mlx5_0", vec![p]));
    let d = diagnose(&b);
    assert_eq!(
        kinds(&b),
        [
            (Severity::Warning, "port-errors-grew"),
            (Severity::Info, "congestion-signals")
        ]
    );
    let Finding::PortErrorsGrew { counters, .. } = &d[0].finding else {
        unreachable!()
    };
    assert_eq!(
        counters,
        &[
            ("symbol_error".to_string(), 3),
            ("link_downed".to_string(), 1)
        ]
    );
}

#[test]
fn interface_counters_that_grow_between_two_ethtool_readings_are_named() {
    // Synthetic: two `ethtool -S` readings of one RoCE interface.
    let text = "$ ethtool -S ens1f0np0\nNIC statistics:\n     rx_symbol_err_phy: 5\n     rx_prio3_pause: 100\n     rx_bytes_phy: 10\n$ ethtool -S ens1f0np0\nNIC statistics:\n     rx_symbol_err_phy: 9\n     rx_prio3_pause: 400\n     rx_bytes_phy: 90\n";
    let mut p = crate::evidence::ethtool::parse_ethtool_stats(text).unwrap();
    crate::evidence::ethtool::settle(&mut p.interfaces, None);
    let mut b = bundle();
    b.interfaces = p.interfaces;
    let d = diagnose(&b);
    assert_eq!(
        kinds(&b),
        [
            (Severity::Warning, "port-errors-grew"),
            (Severity::Info, "congestion-signals")
        ]
    );
    let Finding::PortErrorsGrew {
        device,
        port,
        counters,
    } = &d[0].finding
    else {
        unreachable!()
    };
    assert_eq!((device.as_str(), *port), ("ens1f0np0", None));
    assert_eq!(counters, &[("rx_symbol_err_phy".to_string(), 4)]);
    let Finding::CongestionSignals { counters, .. } = &d[1].finding else {
        unreachable!()
    };
    assert_eq!(counters, &[("rx_prio3_pause".to_string(), 300)]);
    // The last reading's row is cited.
    assert!(d[0].evidence.iter().any(|s| s.line == 8));
    // One reading: totals since the driver loaded say nothing about now.
    b.interfaces.iter_mut().for_each(|i| {
        i.readings = 1;
        i.counters.iter_mut().for_each(|c| c.delta = None);
    });
    assert!(diagnose(&b).is_empty());
}

#[test]
fn a_slow_gpu_link_is_a_note_and_a_slow_adapter_link_a_warning() {
    let link = |role: Option<&str>| crate::evidence::pcie::PcieLink {
        address: "01:00.0".into(),
        current_speed_gt_per_s: Some(8.0),
        max_speed_gt_per_s: Some(16.0),
        role: role.map(String::from),
        source: Source::line(1),
        ..Default::default()
    };
    for (role, want) in [
        (None, Severity::Info),
        (Some("gpu"), Severity::Info),
        (Some("nic"), Severity::Warning),
    ] {
        let mut b = bundle();
        b.pcie.push(link(role));
        assert_eq!(kinds(&b), vec![(want, "pcie-speed-down")], "{role:?}");
    }
}

#[test]
fn an_untrained_slot_and_a_port_above_a_device_raise_nothing_of_their_own() {
    // An empty slot reads `Width x0`; a port shares its link with the
    // device below it, which carries the finding (here an idle GPU).
    let link = |addr: &str, up: &[&str], width: u32, role: &str| crate::evidence::pcie::PcieLink {
        address: addr.into(),
        current_speed_gt_per_s: Some(2.5),
        max_speed_gt_per_s: Some(8.0),
        current_width_lanes: Some(width),
        max_width_lanes: Some(16),
        role: Some(role.into()),
        upstream: up.iter().map(|u| u.to_string()).collect(),
        source: Source::line(1),
        ..Default::default()
    };
    let mut b = bundle();
    b.pcie = vec![
        link("19:08.0", &[], 0, "bridge"),
        link("19:10.0", &[], 16, "bridge"),
        link("1b:00.0", &["19:10.0"], 16, "gpu"),
    ];
    assert_eq!(kinds(&b), vec![(Severity::Info, "pcie-speed-down")]);
}

#[test]
fn pairs_of_unknown_class_are_not_counted_as_host_hops() {
    use crate::evidence::topology::{Device, DeviceKind, Link, LinkClass};
    let mut b = bundle();
    for g in ["GPU0", "GPU1", "GPU2"] {
        b.topology
            .devices
            .push(Device::new(g, DeviceKind::Gpu, Source::line(1)));
    }
    b.topology.links = vec![
        Link::new("GPU0", "GPU1", LinkClass::DirectLink, Source::line(2)),
        Link::new("GPU0", "GPU2", LinkClass::PcieHost, Source::line(3)),
        Link::new("GPU1", "GPU2", LinkClass::Unknown, Source::line(4)),
    ];
    let d = diagnose(&b);
    let hop = d
        .iter()
        .find_map(|d| match d.finding {
            Finding::HostHopInGroup {
                direct_pairs,
                other_pairs,
                gpu_pairs,
                unknown_pairs,
                ..
            } => Some((direct_pairs, other_pairs, gpu_pairs, unknown_pairs)),
            _ => None,
        })
        .expect("a host hop");
    assert_eq!(hop, (1, 1, 2, 1));
}

#[test]
fn devices_under_one_switch_beyond_its_uplink_are_named() {
    // Synthetic live tree (facts::switches): a GPU and an adapter at Gen4
    // x16 under a switch whose uplink is Gen4 x16.
    let mut b = crate::facts::switches::synthetic_tree();
    let d = diagnose(&b);
    let f = d
        .iter()
        .find(|d| d.finding.name() == "switch-uplink-oversubscribed")
        .expect("fires");
    assert_eq!(f.severity, Severity::Info);
    let Finding::SwitchUplinkOversubscribed {
        switch,
        devices,
        sum_bytes_per_s,
        uplink_bytes_per_s,
        ..
    } = &f.finding
    else {
        unreachable!()
    };
    assert_eq!(switch, "0000:01:00.0");
    assert_eq!(devices.len(), 2);
    assert_eq!(*sum_bytes_per_s, 2.0 * uplink_bytes_per_s);
    // The adapter trained at x8 and the GPU at x8: their sum equals the
    // uplink, which is not oversubscribed.
    for p in &mut b.pcie {
        if p.address.starts_with("0000:03") || p.address.starts_with("0000:04") {
            p.current_width_lanes = Some(8);
        }
    }
    assert!(
        !kinds(&b)
            .iter()
            .any(|k| k.1 == "switch-uplink-oversubscribed")
    );
}

#[test]
fn pause_frames_growing_while_cnps_stay_flat_is_pfc_doing_dcqcns_work() {
    use crate::evidence::rdma::Counter;
    // Synthetic: a live collection read the interface twice (pause
    // received +97,000) and the RDMA port's hw_counters at its start and
    // end (CNPs handled and sent, ECN-marked RoCE packets: flat).
    let text = "$ ethtool -S ens1f0np0\n     rx_prio3_pause: 1204\n     rx_ecn_mark: 0\n     tx_pause_storm_warning_events: 0\n$ ethtool -S ens1f0np0\n     rx_prio3_pause: 98204\n     rx_ecn_mark: 0\n     tx_pause_storm_warning_events: 2\n";
    let mut p = crate::evidence::ethtool::parse_ethtool_stats(text).unwrap();
    crate::evidence::ethtool::settle(&mut p.interfaces, None);
    let flat = |name: &str| Counter {
        name: name.into(),
        group: "hw_counters".into(),
        start: 120,
        end: 120,
        delta: 0,
        source: None,
    };
    let mut port = port(1, true, "LinkUp", Some(400.0));
    port.counters = vec![
        flat("rp_cnp_handled"),
        flat("np_cnp_sent"),
        flat("np_ecn_marked_roce_packets"),
    ];
    let mut b = Bundle::new(Host {
        name: "n".into(),
        origin: Origin::Live,
    });
    b.interfaces = p.interfaces.clone();
    b.rdma.push(device("mlx5_0", vec![port.clone()]));
    let d = diagnose(&b);
    let pause: Vec<_> = d
        .iter()
        .filter(|d| d.finding.name() == "pause-without-ecn")
        .collect();
    assert_eq!(pause.len(), 1, "{d:?}");
    assert_eq!(pause[0].severity, Severity::Warning);
    let Finding::PauseWithoutEcn { pauses, flat, .. } = &pause[0].finding else {
        unreachable!()
    };
    // Frames, not storm events; the RoCE counters, not the netdev's ECN.
    assert_eq!(pauses, &[("rx_prio3_pause".to_string(), 97_000)]);
    assert!(!flat.iter().any(|f| f == "rx_ecn_mark"), "{flat:?}");
    // CNPs handled grew: congestion control is working, nothing inverted.
    let mut working = b.clone();
    working.rdma[0].ports[0].counters[0].end = 9_000;
    working.rdma[0].ports[0].counters[0].delta = 8_880;
    assert!(
        diagnose(&working)
            .iter()
            .all(|d| d.finding.name() != "pause-without-ecn")
    );
    // The RoCE counters never read (ethtool alone): ECN's state is not
    // known, and the pause is a congestion signal, no more.
    let mut alone = b.clone();
    alone.rdma.clear();
    let names: Vec<&str> = diagnose(&alone).iter().map(|d| d.finding.name()).collect();
    assert_eq!(names, ["congestion-signals"], "{names:?}");
}

#[test]
fn host_hops_are_judged_by_how_the_node_is_built() {
    use crate::evidence::topology::{Device, DeviceKind, Link, LinkClass};
    let node = |n: usize, direct: &dyn Fn(usize, usize) -> Option<u32>| {
        let mut b = bundle();
        for i in 0..n {
            b.topology.devices.push(Device::new(
                format!("GPU{i}"),
                DeviceKind::Gpu,
                Source::line(1),
            ));
        }
        for i in 0..n {
            for j in i + 1..n {
                let (a, c) = (format!("GPU{i}"), format!("GPU{j}"));
                let mut l = Link::new(&a, &c, LinkClass::CrossSocket, Source::line(2));
                if let Some(nv) = direct(i, j) {
                    l.class = LinkClass::DirectLink;
                    l.nvlinks = Some(nv);
                }
                b.topology.links.push(l);
            }
        }
        b
    };
    let why = |b: &Bundle| {
        diagnose(b)
            .iter()
            .filter(|d| d.finding.name() == "host-hop-in-group")
            .map(|d| d.why)
            .collect::<Vec<_>>()
    };
    // Two bridge pairs: built that way.
    let bridges = node(4, &|i, j| (j == i + 1 && i % 2 == 0).then_some(4));
    assert_eq!(why(&bridges), [Why::HostHopBetweenDesignGroups]);
    // An NVSwitch fabric with one pair not joined: a fault.
    let hole = node(8, &|i, j| (!(i == 0 && j == 1)).then_some(18));
    assert_eq!(why(&hole), [Why::HostHopOnSwitchedFabric]);
    // A GPU with no link at all beside six joined all to all.
    let alone = node(7, &|i, j| (j < 6 && i < 6).then_some(18));
    assert_eq!(why(&alone), [Why::HostHopSplitsGroups]);
    // Every pair NV18 but GPU0's, NV12: six of its links are down.
    let weak = node(8, &|i, _| Some(if i == 0 { 12 } else { 18 }));
    let d = diagnose(&weak);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(matches!(
        &d[0].finding,
        Finding::NvlinksInactive { gpu, inactive: 6, total: Some(18), .. } if gpu == "GPU0"
    ));
}

#[test]
fn nccl_on_sockets_beside_rdma_adapters_is_a_fallback() {
    use crate::evidence::nccl::NcclInit;
    // Synthetic: NCCL's `Using network Socket` on a node whose ibstat
    // shows an active ConnectX port.
    let mut b = bundle();
    b.rdma
        .push(device("mlx5_0", vec![port(1, true, "LinkUp", Some(200.0))]));
    b.nccl.push(NcclInit {
        net: Some("Socket".into()),
        net_source: Some(Source::line(12)),
        ..NcclInit::default()
    });
    let d = diagnose(&b);
    let f: Vec<_> = d
        .iter()
        .filter(|d| d.finding.name() == "nccl-socket-fallback")
        .collect();
    assert_eq!(f.len(), 1, "{d:?}");
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(f[0].evidence[0].line, 12);
    // No adapter anywhere: sockets are all there is.
    b.rdma.clear();
    assert!(
        diagnose(&b)
            .iter()
            .all(|d| d.finding.name() != "nccl-socket-fallback")
    );
}

mod host_side;

#[test]
fn a_pair_refused_one_way_and_reachable_the_other_has_a_peer_path() {
    let access =
        |src: &str, dst: &str, supported: bool, line: usize| crate::evidence::topology::P2pCell {
            src: src.into(),
            dst: dst.into(),
            status: if supported { "True" } else { "False" }.into(),
            supported,
            source: Source {
                file: "rocm-smi.txt".into(),
                line,
            },
        };
    let mut b = bundle();
    b.topology.p2p.push(access("GPU0", "GPU1", true, 4));
    b.topology.p2p.push(access("GPU1", "GPU0", false, 5));
    assert!(!kinds(&b).iter().any(|(_, k)| *k == "no-peer-path"));
    // Refused both ways, it has none.
    b.topology.p2p[0].supported = false;
    assert!(kinds(&b).iter().any(|(_, k)| *k == "no-peer-path"));
}
