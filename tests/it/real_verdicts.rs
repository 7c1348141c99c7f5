//! Verdicts on single real captures, hand-checked against the transcript
//! text (which line each value comes from): the cases behind the truth
//! table in `diagnosis.rs` (moved from there: a file stays under 700
//! lines).

use std::path::PathBuf;

use wire_report::diagnosis::{self, Diagnosed, Finding};

#[test]
fn a_cloud_nic_beside_bluefield_ports_in_ibstatus_is_not_trained_down() {
    // DeepEP #17 (H20 x8, "bf3 *4"): ibstatus shows mlx5_0 at 200 Gb/sec
    // (4X HDR), its GID from a 00:16:3e (Xen / cloud) MAC, beside 4X NDR
    // 400 Gb/sec ports. ibstatus names no adapter model, and a full-width
    // port one generation down is how another adapter looks: no warning.
    let b =
        wire_report::inputs::load_nodes(&[PathBuf::from("captures/h20-8gpu-bf3-roce-deepep17")])
            .unwrap()
            .remove(0);
    let rates: Vec<(String, Option<f64>)> = b
        .rdma
        .iter()
        .map(|d| (d.name.clone(), d.ports[0].rate_bytes_per_s))
        .collect();
    assert_eq!(rates[0], ("mlx5_0".into(), Some(25e9)), "{rates:?}");
    assert_eq!(rates[1].1, Some(50e9), "{rates:?}");
    let names: Vec<&str> = diagnosis::diagnose(&b)
        .iter()
        .map(|d| d.finding.name())
        .collect();
    assert!(!names.contains(&"rdma-port-below-rate"), "{names:?}");
    // The cut last block is said, once.
    assert_eq!(names, ["truncated"], "{names:?}");
}

#[test]
fn a_port_of_one_card_at_10_gbps_beside_its_25_gbps_sibling_is_trained_down() {
    // charlie0129/blog, NFS over RDMA, the t3640 host's ibstatus: mlx5_0
    // `rate: 10 Gb/sec (1X QDR)` (line 8) and mlx5_1 `rate: 25 Gb/sec
    // (1X EDR)` (line 17), both `4: ACTIVE`, default GIDs ending
    // `fed9:8ff6` (line 3) and `fed9:8ff7` (line 12): one dual-port card.
    let b = wire_report::inputs::load_nodes(&[PathBuf::from("captures/cx4lx-25g-t3640-nfsordma")])
        .unwrap()
        .remove(0);
    let below: Vec<(String, u32, f64, f64, usize)> = diagnosis::diagnose(&b)
        .into_iter()
        .filter_map(|d| match d.finding {
            Finding::RdmaPortBelowRate {
                device,
                port,
                rate_bytes_per_s,
                best_bytes_per_s,
                ..
            } => Some((
                device,
                port,
                rate_bytes_per_s,
                best_bytes_per_s,
                d.evidence[0].line,
            )),
            _ => None,
        })
        .collect();
    // 10 and 25 Gb/s as bytes per second; the port's block starts on line 2.
    assert_eq!(below, [("mlx5_0".to_string(), 1, 1.25e9, 3.125e9, 2)]);
    // The ft2000 host (same post): mlx5_0 25 Gb/sec active, mlx5_1 `1: DOWN`
    // / `3: Disabled` (lines 15-16): nothing below rate, one port unused.
    let b = wire_report::inputs::load_nodes(&[PathBuf::from("captures/cx4lx-25g-ft2000-nfsordma")])
        .unwrap()
        .remove(0);
    let names: Vec<&str> = diagnosis::diagnose(&b)
        .iter()
        .map(|d| d.finding.name())
        .collect();
    assert_eq!(names, ["rdma-port-unused"]);
}

#[test]
fn two_gpus_under_one_pex8747_share_its_x16_uplink() {
    // Supermicro X11DPG-OT (hw-probe `lspci -vvnn`, six blocks): root port
    // 17:00.0 `Bus: primary=17, secondary=18` (line 8); PEX 8747 upstream
    // port 18:00.0 `secondary=19` (line 75), `LnkSta: Speed 8GT/s, Width
    // x16` (line 99); downstream ports 19:08.0 -> bus 1a (line 142) and
    // 19:10.0 -> bus 1b (line 215); GPUs 1a:00.0 and 1b:00.0 idle at
    // `LnkSta: Speed 2.5GT/s, Width x16` (lines 310, 375) under `LnkCap:
    // ... Speed 8GT/s, Width x16` (lines 306, 371).
    let b =
        wire_report::inputs::load_nodes(&[PathBuf::from("captures/supermicro-x11dpg-ot-pex8747")])
            .unwrap()
            .remove(0);
    let read: Vec<String> = b
        .pcie
        .iter()
        .map(|p| {
            format!(
                "{} {} up {} at {} GT/s x{}",
                p.address,
                p.role.as_deref().unwrap_or("-"),
                p.upstream.len(),
                p.current_speed_gt_per_s.unwrap(),
                p.current_width_lanes.unwrap()
            )
        })
        .collect();
    assert_eq!(
        read,
        [
            "17:00.0 bridge up 0 at 8 GT/s x16",
            "18:00.0 bridge up 1 at 8 GT/s x16",
            "19:08.0 bridge up 2 at 2.5 GT/s x16",
            "19:10.0 bridge up 2 at 2.5 GT/s x16",
            "1a:00.0 gpu up 3 at 2.5 GT/s x16",
            "1b:00.0 gpu up 3 at 2.5 GT/s x16",
        ]
    );
    let found: Vec<String> = diagnosis::diagnose(&b)
        .iter()
        .map(|d| match &d.finding {
            Finding::SwitchUplinkOversubscribed {
                switch,
                uplink_link,
                devices,
                sum_bytes_per_s,
                uplink_bytes_per_s,
            } => format!(
                "{switch} {uplink_link} {} {:.2}",
                devices.len(),
                sum_bytes_per_s / uplink_bytes_per_s
            ),
            Finding::PcieSpeedDown { address, .. } => format!("slow {address}"),
            other => other.name().to_string(),
        })
        .collect();
    // The ports' links are the GPUs' links, judged once on the GPUs.
    assert_eq!(
        found,
        [
            "slow 1a:00.0",
            "slow 1b:00.0",
            "18:00.0 PCIe Gen3 x16 2 2.00"
        ]
    );
}

#[test]
fn a_thunderbolt_switch_with_one_device_shares_nothing() {
    // Dell XPS 13 9370 (hw-probe `lspci -vvnn`, four blocks): root port
    // 00:1c.4 `secondary=02` (line 6); JHL6540 upstream port 02:00.0
    // `secondary=03` (line 79) at `LnkSta: Speed 8GT/s (ok), Width x4`
    // (line 103); downstream port 03:02.0 `secondary=38` (line 151); USB
    // controller 38:00.0 at `Speed 2.5GT/s (ok), Width x4` (line 244).
    let b =
        wire_report::inputs::load_nodes(&[PathBuf::from("captures/dell-xps13-9370-tb3-switch")])
            .unwrap()
            .remove(0);
    let usb = b.pcie.iter().find(|p| p.address == "38:00.0").unwrap();
    assert_eq!(usb.upstream, ["03:02.0", "02:00.0", "00:1c.4"]);
    assert_eq!(usb.role, None);
    let facts = wire_report::facts::NodeFacts::of(&b);
    assert!(facts.switches.is_empty(), "{:?}", facts.switches);
    assert!(diagnosis::diagnose(&b).is_empty());
}

#[test]
fn a_loaded_nvidia_peermem_in_a_real_lsmod_keeps_the_node_silent() {
    // NCCL #1737, gh-3714u15: `lsmod | grep nvidia` then `nvidia-smi topo
    // -m` (8 GPUs, NIC0..NIC5), one node. Hand-checked against the text.
    use wire_report::evidence::lsmod::{Said, state};
    let dir = PathBuf::from("captures/nv18-8gpu-6nic-peermem-nccl1737");
    let b = wire_report::inputs::load_nodes(std::slice::from_ref(&dir))
        .unwrap()
        .remove(0);
    let [l] = &b.modules[..] else {
        panic!("{:?}", b.modules)
    };
    // Line 1: the prompt and its command; lines 2-9 the eight rows.
    assert_eq!(l.command.as_deref(), Some("lsmod | grep nvidia"));
    assert_eq!(l.rows.len(), 8);
    // Line 5: `nvidia_peermem         16384  0`.
    assert!(matches!(state(&b.modules, "nvidia_peermem"), Some(Said::Loaded(s)) if s.line == 5));
    // nv_peer_mem: not matched by `grep nvidia`, but the nvidia row
    // (line 6) lists its holders and they do not name it.
    assert!(matches!(state(&b.modules, "nv_peer_mem"), Some(Said::Absent(s)) if s.line == 6));
    let facts = wire_report::facts::NodeFacts::of(&b);
    assert_eq!((facts.gpus.len(), facts.nics.len()), (8, 6));
    let kinds: Vec<&str> = diagnosis::diagnose(&b)
        .iter()
        .map(|d| d.finding.name())
        .collect();
    assert!(!kinds.contains(&"no-peer-memory-module"), "{kinds:?}");
    // The same listing without the module (a synthetic edit: its row and
    // its name in the holders taken out) warns, naming both modules.
    let dir_text = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let lsmod = dir_text("lsmod-001-grep-nvidia-peermem-loaded-8x-nv18-gh-3714u15.txt")
        .lines()
        .filter(|l| !l.starts_with("nvidia_peermem"))
        .map(|l| l.replace("nvidia_peermem,", ""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut edited = wire_report::bundle::Bundle::new(b.host.clone());
    edited.absorb(wire_report::ingest::read_transcript(
        "lsmod.txt",
        lsmod.as_bytes(),
    ));
    edited.absorb(wire_report::ingest::read_transcript(
        "topo.txt",
        dir_text("nvidia-topo-021-8x-nv18-6nic-gh-3714u15-rows-gpu0-2-truncated.txt").as_bytes(),
    ));
    let warned: Vec<Diagnosed> = diagnosis::diagnose(&edited)
        .into_iter()
        .filter(|d| d.finding.name() == "no-peer-memory-module")
        .collect();
    assert_eq!(warned.len(), 1);
    let Finding::NoPeerMemoryModule {
        gpus,
        adapters,
        absent,
        ..
    } = &warned[0].finding
    else {
        unreachable!()
    };
    assert_eq!((*gpus, adapters.len()), (8, 6));
    assert_eq!(absent, &["nvidia_peermem", "nv_peer_mem"]);
}

#[test]
fn a_real_lsmod_whose_nvidia_holders_name_no_peer_memory_module_is_warned() {
    // UCX #9908, gpu1. Hand-checked against the text: `ibv_devinfo -vv`
    // line 3 `hca_id:\tmlx5_0`, line 131 `hca_id:\tmlx5_1`; lsmod line 1
    // `$ lsmod|grep gdrdrv`, line 3 `nvidia 54001664 1361
    // nvidia_uvm,gdrdrv,nvidia_modeset`.
    use wire_report::evidence::lsmod::{Said, state};
    let b = wire_report::inputs::load_nodes(&[PathBuf::from(
        "captures/cx6-hdr-gpu1-no-peermem-ucx9908",
    )])
    .unwrap()
    .remove(0);
    let [l] = &b.modules[..] else {
        panic!("{:?}", b.modules)
    };
    assert_eq!(l.command.as_deref(), Some("lsmod|grep gdrdrv"));
    let rows: Vec<(&str, u64, Option<u64>)> = l
        .rows
        .iter()
        .map(|r| (r.name.as_str(), r.size_bytes, r.used))
        .collect();
    assert_eq!(
        rows,
        [("gdrdrv", 24576, Some(0)), ("nvidia", 54001664, Some(1361))]
    );
    // `grep gdrdrv` would not print either module's row: the nvidia row's
    // holders (line 3) are what rule them out.
    for m in ["nvidia_peermem", "nv_peer_mem"] {
        assert!(
            matches!(state(&b.modules, m), Some(Said::Absent(s)) if s.line == 3),
            "{m}"
        );
    }
    let d: Vec<Diagnosed> = diagnosis::diagnose(&b)
        .into_iter()
        .filter(|d| d.finding.name() == "no-peer-memory-module")
        .collect();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].severity.as_str(), "warning");
    let Finding::NoPeerMemoryModule {
        gpus,
        gpu_driver,
        adapters,
        dma_buf,
        absent,
    } = &d[0].finding
    else {
        unreachable!()
    };
    assert_eq!(
        (*gpus, gpu_driver.as_deref(), *dma_buf),
        (0, Some("nvidia"), None)
    );
    assert_eq!(adapters, &["mlx5_0", "mlx5_1"]);
    assert_eq!(absent, &["nvidia_peermem", "nv_peer_mem"]);
    let lines: Vec<(bool, usize)> = d[0]
        .evidence
        .iter()
        .map(|s| (s.file.contains("lsmod"), s.line))
        .collect();
    assert_eq!(lines, [(false, 3), (false, 131), (true, 3)]);
}
