//! The diagnosis over every capture: a truth table. Each finding kind
//! names the real captures it fires on (exactly those, at that severity)
//! and a real capture where it correctly stays silent, with the reason.
//! Kinds no shipped capture makes fire are listed apart with the
//! synthetic unit test that covers them, so the gap stays visible.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use wire_report::diagnosis::{self, Diagnosed, Finding};

/// Every capture's findings, by node name.
fn findings() -> BTreeMap<String, Vec<Diagnosed>> {
    let bundles = wire_report::inputs::load_nodes(&[PathBuf::from("captures")]).unwrap();
    bundles
        .iter()
        .map(|b| (b.host.name.clone(), diagnosis::diagnose(b)))
        .collect()
}

/// A kind, its severity, the captures it fires on, and one capture where
/// it must not fire (with why that is right).
struct Row {
    kind: &'static str,
    severity: &'static str,
    fires: &'static [&'static str],
    silent: (&'static str, &'static str),
}

const TRUTH: &[Row] = &[
    Row {
        kind: "host-hop-in-group",
        severity: "warning",
        fires: &["amd-8gpu-two-xgmi-hives", "rtx-a6000-3gpu-nvlink-bridge"],
        silent: ("hgx-h100-8gpu", "NVSwitch: every pair is direct-link"),
    },
    Row {
        kind: "host-hop-in-group",
        severity: "info",
        fires: &[
            "amd-4gpu-pcie-two-socket",
            "dgx1-p100-8gpu-4nic",
            "dgx1-v100-4nic",
            "dgx1v-v100-8gpu-1nic",
            "l4-2gpu-cross-numa",
            "rtx2080ti-2gpu-autodl",
            "rtx4090-8gpu-2nic",
            "rtx5060ti-5gpu-epyc",
            "rtx5090-2gpu-threadripper",
        ],
        silent: ("a100-sxm4-1gpu", "one GPU has no pair"),
    },
    Row {
        kind: "silent-staging",
        severity: "critical",
        fires: &["rtx2080ti-2gpu-autodl", "rtx3090-4gpu"],
        silent: ("hgx-h100-8gpu", "P2P enabled runs far above disabled"),
    },
    Row {
        kind: "no-peer-path",
        severity: "warning",
        fires: &["l4-2gpu-p2p-cns"],
        silent: (
            "rtx2080ti-2gpu-autodl",
            "its NS pair is already the cause inside silent-staging: one cause, one finding",
        ),
    },
    Row {
        kind: "nic-on-other-socket",
        severity: "warning",
        fires: &[
            "a100-sxm4-8gpu-4socket-3nic",
            "dgx1v-v100-8gpu-1nic",
            "rtx4090-8gpu-2nic",
        ],
        silent: (
            "h100-8nic-ndr400",
            "every GPU has its own adapter on its switch",
        ),
    },
    Row {
        kind: "nic-across-host-bridge",
        severity: "warning",
        fires: &["dgx1v-v100-8gpu-1nic", "rtx4090-8gpu-2nic"],
        silent: (
            "a100-sxm4-8gpu-4socket-3nic",
            "GPU0-3 share a switch with their adapters (PXB); GPU4-7 are across the socket, a finding of its own",
        ),
    },
    Row {
        kind: "injection-share",
        severity: "warning",
        fires: &[
            "a100-sxm4-8gpu-4socket-3nic",
            "dgx1-p100-8gpu-4nic",
            "dgx1-v100-4nic",
            "dgx1v-v100-8gpu-1nic",
            "rtx4090-8gpu-2nic",
        ],
        silent: ("h100-8nic-ndr400", "eight adapters for eight GPUs"),
    },
    Row {
        kind: "pcie-width-down",
        severity: "info",
        fires: &["maxwell-gpu", "rtx3060-mobile-laptop", "rtx4060ti-2gpu"],
        silent: ("tesla-t4", "the card runs at the width it can"),
    },
    Row {
        kind: "pcie-speed-down",
        severity: "info",
        fires: &["rtx3060-mobile-laptop"],
        silent: ("tesla-t4", "the link runs at its capable speed"),
    },
    Row {
        kind: "nvlinks-inactive",
        severity: "info",
        fires: &[
            "a100-pcie-2gpu-no-nvlink",
            "dcgmi-2gpu-nvlink-down",
            "rtx-a6000-3gpu-nvlink-bridge",
        ],
        silent: (
            "h100-pcie-2gpu-nvlink-bridge",
            "12 of the 18 links listed are active: an H100 PCIe is built with 12",
        ),
    },
    Row {
        kind: "rdma-port-unused",
        severity: "info",
        fires: &[
            "cx3-qdr-graph500",
            "cx4-vpi-rdma-manual",
            "h100-cx7-eth-polling-gpud",
            "mlx4-cx3-heioy",
        ],
        silent: ("h100-8nic-ndr400", "every port is Active / LinkUp"),
    },
    Row {
        kind: "rdma-port-down",
        severity: "warning",
        fires: &["h100-cx7-eth-polling-gpud"],
        silent: (
            "cx4-vpi-rdma-manual",
            "its down port is Disabled: switched off, not a fault",
        ),
    },
    Row {
        kind: "wrong-results",
        severity: "critical",
        // all_reduce over two GH200 nodes (libfabric): 96 and 32 wrong
        // elements at 1 MiB. v100-8gpu-allgather-4g-oob: old nccl-tests,
        // largest error 1e+00 at 4 GiB, over the float tolerance.
        fires: &[
            "gh200-2node-slingshot-allreduce",
            "v100-8gpu-allgather-4g-oob",
        ],
        silent: (
            "a100-sxm4-8gpu-superbench",
            "every #wrong cell is 0 and the run printed `Out of bounds values : 0 OK`",
        ),
    },
    Row {
        kind: "data-check-failed",
        severity: "critical",
        fires: &["a100-sxm4-80gb-8gpu"],
        silent: (
            "rtx4090-8gpu",
            "nvbandwidth ran (cut short) without a data check failing",
        ),
    },
    Row {
        kind: "tool-failed",
        severity: "info",
        fires: &["a100-8nic-hdr200-azure"],
        silent: (
            "a100-sxm4-80gb-8gpu",
            "its nvbandwidth error is a data check: data-check-failed, not tool-failed",
        ),
    },
    Row {
        kind: "tool-failed",
        severity: "warning",
        // nccl-tests stopped on `Test NCCL failure ... unhandled cuda
        // error`: the node's stack failed the run, not the capture.
        // gh200-2node-slingshot-allreduce: `Out of bounds values : 4 FAILED`
        // and the #wrong cells at 1 MiB, read as the tool's own errors.
        fires: &[
            "gh200-2node-slingshot-allreduce",
            "rtx5090-2gpu-nccl-failure",
            "v100-8gpu-allgather-4g-oob",
        ],
        silent: (
            "hgx-h100-8gpu",
            "its p2pBandwidthLatencyTest ran to the end and printed no error",
        ),
    },
    Row {
        kind: "truncated",
        severity: "info",
        fires: &[
            "amd-4gpu-pcie-two-socket",
            "cx4lx-ethq-mlx5",
            "dgx1-v100-32gb",
            "gb200-nvl",
            "gb200-oke-mnnvl",
            "h100-4gpu-nv6-4nic",
            "h100-8gpu-nvbandwidth-sm",
            "hgx-h100-8gpu",
            "k80-8gpu",
            "maxwell-gpu",
            "mi250x-8gcd",
            "mi300x-8gpu-amdsmi-blog",
            "mi350x-8gpu",
            "mi355x-pollara-2node",
            "nvlink-4gpu-latency",
            "osu-bw-rdma-fragment",
            "radeon-pro-vii-2gpu",
            "rtx4060ti-2gpu",
            "rtx4090-8gpu",
            "rtx5060ti-5gpu-epyc",
            "rtx5090-2gpu-nccl-failure",
            "transferbench-scaling-preset",
        ],
        silent: ("cx3-qdr-graph500", "every transcript is whole"),
    },
    Row {
        kind: "bits-not-bytes",
        severity: "info",
        fires: &[
            "a100-gdr-pod-client",
            "a100-gdr-pod-server",
            "a40-roce-openshift",
            "amd-instinct-roce-loopback",
            "cx7-ndr-ib-read",
            "mi355x-8gpu-oci",
            "roce-cx5-proxmox",
            "soft-roce-rxe2-ipv6",
        ],
        silent: ("cx3-qdr-graph500", "perftest printed MB/sec"),
    },
    Row {
        kind: "bidirectional-sum",
        severity: "info",
        fires: &[
            "amd-instinct-roce-loopback",
            "k80-8gpu",
            "mi100-2gpu-dual-epyc",
            "mi210-4gpu-archer2",
            "mi50-2gpu",
            "roce-cx5-proxmox",
            "rtx2080ti-2gpu-autodl",
            "rtx3090-4gpu",
        ],
        silent: (
            "hgx-h100-8gpu",
            "no bidirectional figure between two endpoints",
        ),
    },
];

/// Kinds no shipped capture makes fire, and the synthetic unit test that
/// does. A capture that fires one moves it into [`TRUTH`].
const NO_REAL_CAPTURE: &[(&str, &str)] = &[
    // Needs a binding and the bound GPU's NUMA node: the one shipped
    // binding (p100-pcie-gearshifft, `numactl -m0 -N0 bandwidthTest`) comes
    // without a topology, so GPU0's node is unknown and it stays silent.
    (
        "process-far-from-gpu",
        "diagnosis::tests::a_process_bound_away_from_its_gpus_numa_node_is_named",
    ),
    // Needs a live collection (the kernel modules loaded): no capture is one.
    (
        "no-peer-memory-module",
        "diagnosis::tests::a_live_node_with_gpus_and_adapters_but_no_peer_memory_module_is_warned",
    ),
    // The shipped perftest runs with GPU buffers (a100-gdr-pod-*) have no
    // host-buffer run beside them to compare with.
    (
        "gpu-buffers-below-host",
        "diagnosis::tests::gpu_buffers_far_below_host_buffers_on_one_adapter_and_size_are_named",
    ),
    (
        // Needs a live bundle (sysfs bridge chains); none is shipped.
        "switch-uplink-oversubscribed",
        "diagnosis::tests::devices_under_one_switch_beyond_its_uplink_are_named",
    ),
    (
        "far-below-ceiling",
        "diagnosis::tests::far_below_the_ports_data_rate",
    ),
    // h100-cx7-eth-polling-gpud has four 100 Gb/s ConnectX-6 Dx (MT4125)
    // beside 400 Gb/s ConnectX-7s (MT4129): different adapters, correctly
    // silent since the rule compares ports of one adapter kind.
    (
        "rdma-port-below-rate",
        "diagnosis::tests::a_slower_port_of_one_layer_is_named",
    ),
    (
        "port-errors-grew",
        "diagnosis::tests::counters_that_grow_during_one_collection_are_named",
    ),
    (
        "congestion-signals",
        "diagnosis::tests::counters_that_grow_during_one_collection_are_named",
    ),
    // The shipped `ethtool -S` capture is one reading (totals since the
    // driver loaded): nothing can be said to have grown.
    (
        "port-errors-grew",
        "diagnosis::tests::interface_counters_that_grow_between_two_ethtool_readings_are_named",
    ),
    (
        "congestion-signals",
        "diagnosis::tests::interface_counters_that_grow_between_two_ethtool_readings_are_named",
    ),
];

#[test]
fn every_finding_kind_fires_where_it_should_and_nowhere_else() {
    let all = findings();
    let mut covered = BTreeSet::new();
    for row in TRUTH {
        covered.insert(row.kind);
        let fired: BTreeSet<&str> = all
            .iter()
            .filter(|(_, ds)| {
                ds.iter()
                    .any(|d| d.finding.name() == row.kind && d.severity.as_str() == row.severity)
            })
            .map(|(n, _)| n.as_str())
            .collect();
        let expected: BTreeSet<&str> = row.fires.iter().copied().collect();
        assert_eq!(fired, expected, "{} ({})", row.kind, row.severity);
        let (node, why) = row.silent;
        let ds = all.get(node).unwrap_or_else(|| panic!("no capture {node}"));
        assert!(
            ds.iter().all(|d| d.finding.name() != row.kind),
            "{} fires on {node}, which it must not: {why}",
            row.kind
        );
    }
    // Every finding on a real capture is a (kind, severity) row of the
    // table: a kind firing at a severity the table does not list fails.
    let untabled: Vec<String> = all
        .iter()
        .flat_map(|(node, ds)| ds.iter().map(move |d| (node, d)))
        .filter(|(_, d)| {
            !TRUTH
                .iter()
                .any(|r| r.kind == d.finding.name() && r.severity == d.severity.as_str())
        })
        .map(|(node, d)| format!("{node}: {} ({})", d.finding.name(), d.severity.as_str()))
        .collect();
    assert!(untabled.is_empty(), "in no row of the table: {untabled:#?}");
    // Every kind is either in the table or listed as lacking a real capture.
    for kind in Finding::KINDS {
        let listed = NO_REAL_CAPTURE.iter().any(|(k, _)| *k == kind);
        assert!(covered.contains(kind) != listed, "{kind}");
        if listed {
            assert!(
                all.values().flatten().all(|d| d.finding.name() != kind),
                "{kind} fires on a real capture now: move it into TRUTH"
            );
        }
    }
}

#[test]
fn a_qdr_port_is_judged_against_its_data_rate() {
    // ConnectX-3 4X QDR, perftest write at 3.84 GB/s: 96% of the 4.0 GB/s
    // that 40 Gb/s carries after 8b/10b, nowhere near "far below".
    let b = wire_report::inputs::load_nodes(&[PathBuf::from("captures/cx3-qdr-graph500")])
        .unwrap()
        .remove(0);
    let facts = wire_report::facts::NodeFacts::of(&b);
    let best = b
        .measurements
        .iter()
        .filter(|m| m.tool.as_str() == "perftest")
        .filter_map(|m| Some((m.bandwidth_bytes_per_s?, facts.ceiling(m)?)))
        .max_by(|x, y| x.0.total_cmp(&y.0))
        .unwrap();
    assert_eq!(best.1.bytes_per_s, 4e9);
    assert!(best.0 / best.1.bytes_per_s > 0.95, "{}", best.0);
}
