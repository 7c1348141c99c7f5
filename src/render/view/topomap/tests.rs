//! The map's data against real captures: what is boxed, what is a mesh,
//! what the notes say; and that the drawing links every figure.

use super::*;
use crate::bundle::{Host, Origin};

/// The bundle of one capture folder or file.
fn bundle(path: &str) -> Bundle {
    let mut b = Bundle::new(Host {
        name: "n".into(),
        origin: Origin::Ingested,
    });
    let files: Vec<std::path::PathBuf> = match std::fs::read_dir(path) {
        Ok(dir) => {
            let mut f: Vec<_> = dir.map(|e| e.unwrap().path()).collect();
            f.sort();
            f
        }
        Err(_) => vec![path.into()],
    };
    for f in files {
        let p = f.to_string_lossy().to_string();
        let bytes = std::fs::read(&f).unwrap();
        b.absorb(crate::ingest::read_transcript(&p, &bytes));
    }
    b
}

fn map_of(path: &str) -> TopoMap {
    let b = bundle(path);
    map(&b, &NodeFacts::of(&b))
}

/// Every box under the NUMA boxes, depth first: (code, members).
fn switch_boxes(m: &TopoMap) -> Vec<(String, Vec<String>)> {
    fn walk(items: &[Item], out: &mut Vec<(String, Vec<String>)>) {
        for i in items {
            if let Item::Box(b) = i {
                out.push((b.code.clone(), b.members.clone()));
                walk(&b.items, out);
            }
        }
    }
    let mut out = Vec::new();
    for n in &m.numa {
        walk(&n.items, &mut out);
    }
    out
}

fn ids(s: &str) -> Vec<String> {
    s.split(' ').map(String::from).collect()
}

#[test]
fn gpus_with_no_link_described_are_said_so_not_counted_as_zero_of_n() {
    // Two A100s whose NVLinks are all inactive: no link class is stated.
    let notes = map_of(
        "captures/a100-pcie-2gpu-no-nvlink/nvlink-status-004-2x-a100-pcie-no-nvlink-all-inactive.txt",
    )
    .notes;
    assert!(
        notes.contains(
            &"No link between these 2 GPUs (1 pair) was read from the transcripts: none is drawn."
                .to_string()
        ),
        "{notes:?}"
    );
    assert!(
        !notes.iter().any(|n| n.contains("describes 0 of")),
        "{notes:?}"
    );
    // A matrix cut after three rows still counts the pairs it holds.
    let notes = map_of(
        "captures/nv18-8gpu-6nic-peermem-nccl1737/nvidia-topo-021-8x-nv18-6nic-gh-3714u15-rows-gpu0-2-truncated.txt",
    )
    .notes;
    assert!(
        notes.contains(
            &"The transcript describes 18 of 28 GPU pairs; the others are not drawn.".to_string()
        ),
        "{notes:?}"
    );
}

#[test]
fn an_mi300x_full_xgmi_mesh_is_one_mesh_with_one_label_not_28_edges() {
    let m = map_of("captures/mi300x-8gpu-amdsmi");
    assert_eq!(m.scaleup.meshes.len(), 1, "{:?}", m.scaleup);
    assert!(m.scaleup.edges.is_empty());
    let mesh = &m.scaleup.meshes[0];
    assert_eq!((mesh.members.len(), mesh.common_pairs), (8, 28));
    assert!(!mesh.nvswitch && mesh.exceptions.is_empty());
    let svg = svgs(&m, &|_| "t0.html#L1".into()).scaleup;
    assert_eq!(svg.matches("<path class=\"edge").count(), 0);
    // One label for the common link: the bar's, and no code beside a spoke.
    assert_eq!(
        svg.matches(&format!(">full mesh: every GPU pair {}<", mesh.code))
            .count(),
        1
    );
}

#[test]
fn h800_switches_hold_each_gpu_with_its_adapter_inside_one_pxb_tree_per_socket() {
    let m = map_of("captures/h800-8gpu-10nic");
    let boxes = switch_boxes(&m);
    assert_eq!(
        boxes[..5],
        [
            (
                "PXB".into(),
                ids("GPU0 GPU1 GPU2 GPU3 NIC1 NIC2 NIC3 NIC4 NIC9")
            ),
            ("PIX".into(), ids("GPU0 NIC1")),
            ("PIX".into(), ids("GPU1 NIC2")),
            ("PIX".into(), ids("GPU2 NIC3")),
            ("PIX".into(), ids("GPU3 NIC4")),
        ]
    );
    assert_eq!(boxes.len(), 10, "{boxes:?}");
    // Containment says every PIX and PXB pair: no dashed edge is left.
    assert!(m.pcie_edges.is_empty(), "{:?}", m.pcie_edges);
    // NVLink is the other panel: one NVSwitch mesh, no PCIe code in it.
    assert!(m.scaleup.meshes[0].nvswitch);
    assert!(m.scaleup.edges.is_empty());
}

#[test]
fn a_dgx1_cube_mesh_stays_edge_by_edge_and_its_adapter_shares_a_switch() {
    let m = map_of("captures/dgx1v-v100-8gpu-1nic");
    assert!(m.scaleup.meshes.is_empty());
    assert_eq!(m.scaleup.edges.len(), 16);
    assert_eq!(switch_boxes(&m), [("PIX".into(), ids("GPU2 GPU3 NIC0"))]);
    assert!(m.pcie_edges.is_empty());
}

#[test]
fn a_pcie_switch_box_without_a_matrix_gets_its_tree_from_lspci() {
    let m = map_of("captures/supermicro-x11dpg-ot-pex8747");
    assert_eq!(m.devices.len(), 2);
    assert_eq!(m.devices[0].lines, ["GPU 1a:00.0", "GV102"]);
    assert_eq!(m.numa.len(), 1);
    assert_eq!(m.numa[0].label, ["NUMA node 0"]);
    let Item::Box(sw) = &m.numa[0].items[0] else {
        panic!("{:?}", m.numa[0].items)
    };
    assert_eq!((sw.kind, sw.code.as_str()), (BoxKind::Bridge, "sysfs"));
    assert_eq!(sw.members, ["1a:00.0", "1b:00.0"]);
    assert!(
        sw.label[0].starts_with("PCIe switch 18:00.0"),
        "{:?}",
        sw.label
    );
    assert!(m.scaleup.is_empty());
}

#[test]
fn every_edge_spoke_box_and_device_of_a_drawn_map_is_linked() {
    for node in [
        "captures/dgx1v-v100-8gpu-1nic",
        "captures/h800-8gpu-10nic",
        "captures/mi300x-8gpu-amdsmi",
        "captures/amd-8gpu-two-xgmi-hives",
    ] {
        let m = map_of(node);
        let p = svgs(&m, &|s| format!("t0.html#L{}", s.line));
        for svg in [&p.pcie, &p.scaleup] {
            for tag in [
                "<path class=\"edge",
                "<line class=\"spoke\"",
                "<g class=\"device\"",
            ] {
                for (i, _) in svg.match_indices(tag) {
                    assert!(
                        svg[..i].ends_with("\">")
                            && svg[..i]
                                .rsplit("<a href=\"t0.html#L")
                                .next()
                                .is_some_and(|r| !r.contains('<')),
                        "{node}: {tag} at {i} is not linked"
                    );
                }
            }
        }
    }
}

#[test]
fn device_names_from_transcripts_are_escaped_in_text_and_attributes() {
    let mut b = bundle("captures/dgx1v-v100-8gpu-1nic");
    b.topology.devices[8].name = Some("<b>\"evil\"&".into());
    let m = map(&b, &NodeFacts::of(&b));
    let svg = svgs(&m, &|_| String::new()).pcie;
    assert!(!svg.contains("<b>") && !svg.contains("\"evil\""));
    assert!(svg.contains("&lt;b&gt;&quot;evil&quot;&amp;"));
    // No line known: no link at all, not an empty one.
    assert!(!svg.contains("<a href"));
}

#[test]
fn every_map_fits_the_width_of_an_800_px_page() {
    for node in [
        "captures/h800-8gpu-10nic",
        "captures/nv12-8gpu-10nic-epyc",
        "captures/mi300x-8gpu-amdsmi",
        "captures/dgx1v-v100-8gpu-1nic",
    ] {
        let p = svgs(&map_of(node), &|_| String::new());
        for svg in [&p.pcie, &p.scaleup] {
            let w: f64 = svg
                .split("width=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .and_then(|w| w.parse().ok())
                .unwrap();
            assert!(w <= layout::MAX_W, "{node}: {w}");
        }
    }
}

#[test]
fn a_sysfs_switch_boxes_the_devices_under_its_bridge_and_names_the_bridge() {
    // The synthetic live tree of facts::switches: a GPU and a
    // two-function adapter under one switch, a GPU under a root port.
    let mut b = crate::facts::switches::synthetic_tree();
    for (id, kind, addr) in [
        ("GPU0", DeviceKind::Gpu, "0000:03:00.0"),
        ("GPU1", DeviceKind::Gpu, "0000:81:00.0"),
        ("NIC0", DeviceKind::Nic, "0000:04:00.0"),
    ] {
        let mut d = Device::new(id, kind, Source::line(1));
        d.pci_bus_id = Some(addr.into());
        b.topology.devices.push(d);
    }
    let m = map(&b, &NodeFacts::of(&b));
    assert_eq!(switch_boxes(&m), [("sysfs".into(), ids("GPU0 NIC0"))]);
    let svg = svgs(&m, &|_| String::new()).pcie;
    assert!(svg.contains(r#"<g class="switch" data-members="GPU0 NIC0" data-code="sysfs">"#));
    assert!(svg.contains(">PCIe switch 0000:01:00.0<"), "{svg}");
}

#[test]
fn a_matrix_cut_after_three_rows_still_shows_its_mesh_and_how_much_is_described() {
    let m = map_of(
        "captures/nv18-8gpu-6nic-peermem-nccl1737/nvidia-topo-021-8x-nv18-6nic-gh-3714u15-rows-gpu0-2-truncated.txt",
    );
    let mesh = &m.scaleup.meshes[0];
    assert_eq!(
        (mesh.common_pairs, mesh.described, mesh.pairs()),
        (18, 18, 28)
    );
    assert!(m.scaleup.edges.is_empty());
    let svg = svgs(&m, &|_| String::new()).scaleup;
    assert!(
        svg.contains(">NVSwitch (inferred): NV18 in the 18 of 28 pairs described<"),
        "{svg}"
    );
}
