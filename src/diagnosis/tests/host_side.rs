//! Rules of the host side of the path on synthetic bundles: the
//! peer-memory module, GPU against host buffers, the process's binding,
//! and which adapters are closest to the GPUs.

use super::*;

#[test]
fn a_live_node_with_gpus_and_adapters_but_no_peer_memory_module_is_warned() {
    use crate::bundle::{Driver, System};
    let driver = |m: &str| Driver {
        module: m.into(),
        version: "1".into(),
    };
    let mut b = bundle();
    b.rdma
        .push(device("mlx5_0", vec![port(1, true, "LinkUp", Some(200.0))]));
    // Ingested transcripts say nothing about kernel modules: silent.
    assert!(diagnose(&b).is_empty());
    b.system = Some(System {
        drivers: vec![driver("nvidia"), driver("mlx5_core")],
        ..System::default()
    });
    assert_eq!(kinds(&b), [(Severity::Warning, "no-peer-memory-module")]);
    let d = diagnose(&b);
    let Finding::NoPeerMemoryModule {
        gpus,
        gpu_driver,
        adapters,
        dma_buf,
        ..
    } = &d[0].finding
    else {
        unreachable!()
    };
    assert_eq!(
        (*gpus, gpu_driver.as_deref(), adapters.as_slice(), *dma_buf),
        (0, Some("nvidia"), &["mlx5_0".to_string()][..], None)
    );
    // dma-buf may carry the path: worth knowing, not a fault.
    b.system.as_mut().unwrap().dma_buf = Some(true);
    assert_eq!(kinds(&b), [(Severity::Info, "no-peer-memory-module")]);
    // The module loaded: the path is there.
    b.system
        .as_mut()
        .unwrap()
        .drivers
        .push(driver("nvidia_peermem"));
    assert!(diagnose(&b).is_empty());
    // No GPU driver and no GPU: nothing to reach.
    b.system.as_mut().unwrap().drivers = vec![driver("mlx5_core")];
    assert!(diagnose(&b).is_empty());
}

#[test]
fn gpu_buffers_far_below_host_buffers_on_one_adapter_and_size_are_named() {
    use crate::evidence::measurement::Buffers;
    let run = |line: usize, size: u64, bw: f64, buffers: Buffers| {
        let mut m = Measurement::new(
            "perftest",
            line,
            Kind::RdmaWrite,
            "ib_write_bw",
            Statistic::Avg,
        );
        m.src = Some("mlx5_0".into());
        m.size_bytes = Some(size);
        m.bandwidth_bytes_per_s = Some(bw);
        m.buffers = buffers;
        m.questions.unit = crate::evidence::answers::Unit::GigabytesPerS;
        m
    };
    let mut b = bundle();
    b.measurements = vec![
        run(10, 65536, 20e9, Buffers::Unknown),
        run(11, 1 << 20, 23e9, Buffers::Unknown),
        run(30, 65536, 9e9, Buffers::Device),
        run(31, 1 << 20, 9.5e9, Buffers::Device),
        // Another size only one side ran: not compared.
        run(32, 1 << 23, 1e9, Buffers::Device),
    ];
    assert_eq!(kinds(&b), [(Severity::Warning, "gpu-buffers-below-host")]);
    let d = diagnose(&b);
    let Finding::GpuBuffersBelowHost {
        size_bytes,
        gpu_bytes_per_s,
        host_bytes_per_s,
        ..
    } = &d[0].finding
    else {
        unreachable!()
    };
    // The largest size both ran.
    assert_eq!(
        (*size_bytes, *gpu_bytes_per_s, *host_bytes_per_s),
        (1 << 20, 9.5e9, 23e9)
    );
    assert_eq!(
        d[0].evidence.iter().map(|s| s.line).collect::<Vec<_>>(),
        [31, 11]
    );
    // GPU buffers at 90% of host: the direct path works.
    b.measurements[3].bandwidth_bytes_per_s = Some(21e9);
    assert!(diagnose(&b).is_empty());
    // Only GPU-buffer runs: nothing to compare (the shipped --use_cuda captures).
    b.measurements.retain(|m| m.buffers == Buffers::Device);
    assert!(diagnose(&b).is_empty());
}

#[test]
fn a_process_bound_away_from_its_gpus_numa_node_is_named() {
    use crate::bundle::{Block, NumaNode, System};
    use crate::evidence::Tool;
    use crate::evidence::topology::{Device, DeviceKind};
    // Synthetic: two sockets, GPU0 on node 0, GPU1 on node 1.
    let mut b = bundle();
    for (id, node) in [("GPU0", 0), ("GPU1", 1)] {
        let mut d = Device::new(id, DeviceKind::Gpu, Source::line(2 + node as usize));
        d.numa_node = Some(node);
        b.topology.devices.push(d);
    }
    // A topology alone says nothing about where a job ran.
    assert!(diagnose(&b).is_empty());
    let node = |n: u32, cpus: &str| NumaNode {
        node: n,
        cpus: cpus.into(),
    };
    b.system = Some(System {
        cpus_allowed: Some("0-15".into()),
        mems_allowed: Some("0".into()),
        numa_nodes: vec![node(0, "0-15"), node(1, "16-31")],
        ..System::default()
    });
    assert_eq!(kinds(&b), [(Severity::Info, "process-far-from-gpu")]);
    let d = diagnose(&b);
    let Finding::ProcessFarFromGpu {
        gpus,
        gpu_numa_nodes,
        near_gpus,
        cpu_nodes,
        ..
    } = &d[0].finding
    else {
        unreachable!()
    };
    assert_eq!(
        (
            gpus.as_slice(),
            gpu_numa_nodes.as_slice(),
            *near_gpus,
            cpu_nodes.as_slice()
        ),
        (&["GPU1".to_string()][..], &[1][..], 1, &[0][..])
    );
    // Unbound (every CPU, every node): nothing to say.
    let sys = b.system.as_mut().unwrap();
    sys.cpus_allowed = Some("0-31".into());
    sys.mems_allowed = Some("0-1".into());
    assert!(diagnose(&b).is_empty());
    // A launcher line in a transcript: `numactl -N1 -m1` and figures of GPU0.
    b.system = None;
    let mut m = Measurement::new("bandwidthTest", 11, Kind::H2d, "h2d", Statistic::Avg);
    m.source.file = "bw.txt".into();
    m.dst = Some("GPU0".into());
    m.bandwidth_bytes_per_s = Some(12e9);
    b.measurements.push(m);
    b.transcripts.push(crate::bundle::Transcript {
        path: "bw.txt".into(),
        tool: Tool::BandwidthTest,
        sha256: String::new(),
        text: String::new(),
        notes: Vec::new(),
        blocks: vec![Block {
            tool: Tool::BandwidthTest,
            first_line: 2,
            last_line: 20,
            command: Some("numactl -N1 -m1 ./bandwidthTest".into()),
        }],
        lines: Default::default(),
    });
    assert_eq!(kinds(&b), [(Severity::Warning, "process-far-from-gpu")]);
    let d = diagnose(&b);
    assert_eq!(d[0].evidence[0].line, 1);
    let Finding::ProcessFarFromGpu { gpus, command, .. } = &d[0].finding else {
        unreachable!()
    };
    assert_eq!(gpus, &["GPU0".to_string()]);
    assert_eq!(command.as_deref(), Some("numactl -N1 -m1 ./bandwidthTest"));
}

#[test]
fn a_perftest_bound_to_the_other_socket_names_its_adapter() {
    use crate::bundle::{Block, Transcript};
    use crate::evidence::Tool;
    use crate::evidence::topology::{Device, DeviceKind};
    // Synthetic: mlx5_0 on node 0; `numactl -N1 -m1 ib_write_bw -d mlx5_0`.
    let mut b = bundle();
    let mut nic = Device::new("NIC0", DeviceKind::Nic, Source::line(5));
    nic.name = Some("mlx5_0".into());
    nic.numa_node = Some(0);
    b.topology.devices.push(nic);
    let mut m = Measurement::new(
        "perftest",
        30,
        Kind::RdmaWrite,
        "ib_write_bw",
        Statistic::Avg,
    );
    m.source.file = "bw.txt".into();
    m.src = Some("mlx5_0".into());
    m.bandwidth_bytes_per_s = Some(20e9);
    b.measurements.push(m);
    b.transcripts.push(Transcript {
        path: "bw.txt".into(),
        tool: Tool::Perftest,
        sha256: String::new(),
        text: String::new(),
        notes: Vec::new(),
        blocks: vec![Block {
            tool: Tool::Perftest,
            first_line: 2,
            last_line: 40,
            command: Some("numactl -N1 -m1 ib_write_bw -d mlx5_0 peer".into()),
        }],
        lines: Default::default(),
    });
    assert_eq!(kinds(&b), [(Severity::Warning, "process-far-from-gpu")]);
    let d = diagnose(&b);
    let Finding::ProcessFarFromGpu { gpus, nics, .. } = &d[0].finding else {
        unreachable!()
    };
    assert!(gpus.is_empty());
    assert_eq!(nics, &["mlx5_0".to_string()]);
}

/// A synthetic `nvidia-smi topo -m`: two GPUs, two adapters, both SYS
/// from GPU0 and PIX from GPU1.
fn two_nic_topology() -> Bundle {
    let text = "\tGPU0\tGPU1\tNIC0\tNIC1\n\
GPU0\t X \tSYS\tSYS\tSYS\n\
GPU1\tSYS\t X \tPIX\tPIX\n\
NIC0\tSYS\tPIX\t X \tPIX\n\
NIC1\tSYS\tPIX\tPIX\t X \n";
    let mut b = bundle();
    b.topology = crate::evidence::topology::nvidia::parse_topo_matrix(text)
        .unwrap()
        .topology;
    b
}

#[test]
fn equally_close_adapters_are_all_named_not_the_first() {
    let b = two_nic_topology();
    let d = diagnose(&b);
    let far: Vec<_> = d
        .iter()
        .filter_map(|d| match &d.finding {
            Finding::NicOnOtherSocket {
                gpus, nic, also, ..
            } => Some((gpus, nic, also)),
            _ => None,
        })
        .collect();
    assert_eq!(far.len(), 1, "{d:?}");
    assert_eq!(far[0].0, &vec!["GPU0".to_string()]);
    assert_eq!(far[0].1, "NIC0");
    assert_eq!(far[0].2, &vec!["NIC1".to_string()]);
}

#[test]
fn an_equally_close_adapter_on_the_gpus_numa_node_is_no_mis_pairing() {
    let mut b = two_nic_topology();
    for d in &mut b.topology.devices {
        match d.id.as_str() {
            "GPU0" => d.numa_node = Some(0),
            "NIC1" => d.numa_node = Some(0),
            "NIC0" => d.numa_node = Some(1),
            _ => {}
        }
    }
    assert!(!kinds(&b).contains(&(Severity::Warning, "nic-on-other-socket")));
    // The other adapter alone, on another node, is still far.
    for d in &mut b.topology.devices {
        if d.id == "NIC1" {
            d.numa_node = Some(1);
        }
    }
    assert!(kinds(&b).contains(&(Severity::Warning, "nic-on-other-socket")));
}
