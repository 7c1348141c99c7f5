//! Port counters read repeatedly in a real transcript: what grew, and the
//! finding it makes (the truth table in `diagnosis.rs` lists the node).

use std::path::PathBuf;

use wire_report::diagnosis::{self, Finding};

#[test]
fn one_corrupt_packet_on_a_looped_connectx2_is_a_port_error_that_grew() {
    // Chester Gillon's notes: ConnectX-2 (mlx4_0) with its ports 1 and 2
    // cabled to each other, `pckt_drop` corrupting one packet sent on port
    // 1 while the sysfs counters were printed every 10 s. Hand-checked
    // against the transcript text.
    let b = wire_report::inputs::load_nodes(&[PathBuf::from(
        "captures/cx2-qdr-loopback-corrupt-packet",
    )])
    .unwrap()
    .remove(0);
    assert!(b.problems.is_empty(), "{:?}", b.problems);
    let d = &b.rdma[0];
    assert_eq!(d.name, "mlx4_0");
    let port = |n: u32| d.ports.iter().find(|p| p.port == n).unwrap();
    let grown = |n: u32| -> Vec<(&str, u64)> {
        port(n)
            .counters
            .iter()
            .map(|c| (c.name.as_str(), c.delta))
            .collect()
    };
    // Port 2, 80 s table (lines 15-19) to 100 s table (lines 46-51):
    // port_rcv_data 16615703415 -> 24940535099; the error counter is not
    // in the 80 s table (zero: the tool prints non-zero counters only, and
    // its 90 s row `1(+1)`, line 32, says it was zero 10 s before) and is
    // 1 at 100 s (line 48).
    assert_eq!(
        grown(2),
        [
            ("port_rcv_data", 8_324_831_684),
            ("port_rcv_packets", 8_113_907),
            ("port_rcv_remote_physical_errors", 1),
            ("port_xmit_data", 8_365_650_668),
            ("port_xmit_packets", 8_154_569),
            ("port_xmit_wait", 5_614_750),
        ]
    );
    // Port 1 sent the corrupt packet; none of its own counters is an error.
    assert!(grown(1).iter().all(|(n, _)| n.starts_with("port_")));
    assert_eq!(grown(1).len(), 5);
    let ds = diagnosis::diagnose(&b);
    assert_eq!(ds.len(), 1, "{ds:?}");
    let Finding::PortErrorsGrew {
        device,
        port: Some(2),
        counters,
    } = &ds[0].finding
    else {
        panic!("{:?}", ds[0].finding)
    };
    assert_eq!(device, "mlx4_0");
    assert_eq!(
        counters,
        &[("port_rcv_remote_physical_errors".to_string(), 1)]
    );
    // Evidence: the port's first row (line 15) and the counter's last (48).
    let lines: Vec<usize> = ds[0].evidence.iter().map(|s| s.line).collect();
    assert_eq!(lines, [15, 48]);
}
