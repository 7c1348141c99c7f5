use super::*;

#[test]
fn sysfs_paths_name_adapter_port_and_group() {
    let p = place("/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent").unwrap();
    assert_eq!(
        (p.adapter, p.port, p.group, p.name),
        ("mlx5_0", Some(1), "hw_counters", Some("np_cnp_sent"))
    );
    let p = place("mlx5_2/hw_counters/lifespan").unwrap();
    assert_eq!((p.adapter, p.port), ("mlx5_2", None));
    let p = place("/sys/class/infiniband/mlx5_1/ports/1/counters$").unwrap();
    assert_eq!((p.adapter, p.name), ("mlx5_1", None));
    assert!(place("/sys/class/net/eth0/statistics/rx_bytes").is_none());
}

#[test]
fn a_value_after_a_pci_path_with_colons_is_read() {
    let t = "/sys/devices/pci0000:00/0000:00:02.0/0000:3b:00.0/infiniband/mlx5_0/ports/1/counters/symbol_error:4\n";
    let lines: Vec<&str> = t.lines().collect();
    assert!(looks_like_counters(t, &lines));
    let p = parse_counters(t).unwrap();
    assert_eq!(p.counters[0].adapter.as_deref(), Some("mlx5_0"));
    assert_eq!(p.counters[0].values[0].value, 4);
}

#[test]
fn a_reset_between_readings_claims_no_growth() {
    let t = "/sys/class/infiniband/mlx5_0/ports/1/counters/a:10\n/sys/class/infiniband/mlx5_0/ports/1/counters/b:5\n/sys/class/infiniband/mlx5_0/ports/1/counters/a:12\n/sys/class/infiniband/mlx5_0/ports/1/counters/b:1\n";
    let p = parse_counters(t).unwrap();
    assert_eq!(p.counters.len(), 2);
    assert!(growth(&p.counters).is_empty());
}

#[test]
fn perfquerys_adapter_comes_from_its_command_line() {
    let t = "# Port counters: Lid 4 port 1 (CapMask: 0x1400)\nPortSelect:......................1\nSymbolErrorCounter:..............2\n";
    let mut p = parse_counters(t).unwrap();
    settle(&mut p, Some("perfquery -C mlx5_3 -P 1"));
    let d = &p.counters[0];
    assert_eq!(
        (d.adapter.as_deref(), d.lid, d.port),
        (Some("mlx5_3"), Some(4), Some(1))
    );
    assert_eq!(d.values[0].name, "SymbolErrorCounter");
}

#[test]
fn bare_values_and_other_text_are_no_counter_dump() {
    // `cat .../counters/*` prints values without names (the seed's Lab 3).
    let t = "0\n0\n1234\n";
    let lines: Vec<&str> = t.lines().collect();
    assert!(!looks_like_counters(t, &lines));
    assert!(parse_counters("hello\n").is_err());
}
