//! The topology map against the matrix, edge by edge, on real captures:
//! every edge the map draws is a pair of the matrix with that code, and
//! every direct link of the matrix is drawn (as an edge, or through the
//! NVSwitch hub when every pair shows the same NV# code).

use std::collections::BTreeSet;
use std::path::PathBuf;

use wire_report::bundle::Bundle;
use wire_report::evidence::topology::LinkClass;
use wire_report::render;

/// The node's bundle and its rendered page.
fn node(name: &str) -> (Bundle, String) {
    let b = wire_report::inputs::load_nodes(&[PathBuf::from(format!("captures/{name}"))])
        .unwrap()
        .remove(0);
    let site = render::render_site(std::slice::from_ref(&b)).unwrap();
    let slug = render::view::slug(&b.host.name);
    let page = String::from_utf8(site.files[&format!("nodes/{slug}/index.html")].clone()).unwrap();
    (b, page)
}

/// The value of `name="..."` in one tag.
fn attr<'a>(tag: &'a str, name: &str) -> &'a str {
    let pat = format!(" {name}=\"");
    let i = tag
        .find(&pat)
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
        + pat.len();
    &tag[i..i + tag[i..].find('"').unwrap()]
}

/// The tags of the map that start with `open`.
fn tags<'a>(page: &'a str, open: &str) -> Vec<&'a str> {
    page.match_indices(open)
        .map(|(i, _)| &page[i..i + page[i..].find('>').unwrap()])
        .collect()
}

/// A drawn edge: its ends and its code.
type Edge = (String, String, String);
/// The hub: its GPUs and the code every pair of them shows.
type Hub = (Vec<String>, String);

/// Edges and the hub the map draws.
fn drawn(page: &str) -> (Vec<Edge>, Option<Hub>) {
    let edges = tags(page, "<path class=\"edge\"")
        .into_iter()
        .map(|t| {
            (
                attr(t, "data-a").into(),
                attr(t, "data-b").into(),
                attr(t, "data-code").into(),
            )
        })
        .collect();
    let hub = tags(page, "<g class=\"hub\"").first().map(|t| {
        (
            attr(t, "data-members")
                .split(' ')
                .map(String::from)
                .collect(),
            attr(t, "data-code").to_string(),
        )
    });
    (edges, hub)
}

/// The PCIe switches the map draws: members and code.
fn switches(page: &str) -> Vec<(Vec<String>, String)> {
    tags(page, "<g class=\"switch\"")
        .into_iter()
        .map(|t| {
            (
                attr(t, "data-members")
                    .split(' ')
                    .map(String::from)
                    .collect(),
                attr(t, "data-code").to_string(),
            )
        })
        .collect()
}

/// Checks the map of one node against its matrix; returns what was drawn.
fn check(name: &str) -> (usize, bool) {
    let (b, page) = node(name);
    let t = &b.topology;
    let (edges, hub) = drawn(&page);
    for (a, c, code) in &edges {
        let l = t
            .link(a, c)
            .unwrap_or_else(|| panic!("{name}: {a}-{c} drawn, not in the matrix"));
        assert_eq!(l.code.as_deref(), Some(code.as_str()), "{name}: {a}-{c}");
        assert!(
            matches!(l.class, LinkClass::DirectLink | LinkClass::PcieSwitch),
            "{name}: {a}-{c} is {} and drawn as a link",
            l.class
        );
    }
    let drawn_pairs: BTreeSet<(&str, &str)> = edges
        .iter()
        .flat_map(|(a, c, _)| [(a.as_str(), c.as_str()), (c.as_str(), a.as_str())])
        .collect();
    if let Some((members, code)) = &hub {
        for x in members {
            for y in members {
                if x != y {
                    let l = t
                        .link(x, y)
                        .unwrap_or_else(|| panic!("{name}: hub pair {x}-{y}"));
                    assert_eq!(l.code.as_deref(), Some(code.as_str()), "{name}: {x}-{y}");
                }
            }
        }
    }
    // Every switch drawn from the matrix: each pair of its members is PIX
    // there, or a direct link (whose code hides the PCIe path); every PIX
    // pair is drawn, as an edge or under one switch.
    let switches = switches(&page);
    for (members, code) in &switches {
        assert!(members.len() >= 2, "{name}: a switch of {members:?}");
        for x in members {
            for y in members {
                if x != y && code == "PIX" {
                    let l = t
                        .link(x, y)
                        .unwrap_or_else(|| panic!("{name}: switch pair {x}-{y}"));
                    assert!(
                        l.code.as_deref() == Some("PIX") || l.class == LinkClass::DirectLink,
                        "{name}: {x}-{y} is {:?} under one switch",
                        l.code
                    );
                }
            }
        }
    }
    let under_one = |a: &str, c: &str| {
        switches
            .iter()
            .any(|(m, _)| m.iter().any(|x| x == a) && m.iter().any(|x| x == c))
    };
    for l in t.links.iter().filter(|l| l.code.as_deref() == Some("PIX")) {
        assert!(
            drawn_pairs.contains(&(l.a.as_str(), l.b.as_str())) || under_one(&l.a, &l.b),
            "{name}: PIX pair {}-{} is not drawn",
            l.a,
            l.b
        );
    }
    let in_hub = |x: &str| hub.as_ref().is_some_and(|(m, _)| m.iter().any(|g| g == x));
    for l in t.links.iter().filter(|l| l.class == LinkClass::DirectLink) {
        assert!(
            drawn_pairs.contains(&(l.a.as_str(), l.b.as_str())) || (in_hub(&l.a) && in_hub(&l.b)),
            "{name}: direct link {}-{} ({:?}) is not drawn",
            l.a,
            l.b,
            l.code
        );
    }
    (edges.len(), hub.is_some())
}

#[test]
fn dgx1v_map_draws_the_hybrid_cube_mesh_link_by_link() {
    let (edges, hub) = check("dgx1v-v100-8gpu-1nic");
    // 16 NVLink pairs; no hub. The adapter and its two PIX GPUs sit under
    // one PCIe switch, drawn as such rather than as two dashed edges.
    assert_eq!((edges, hub), (16, false));
    let (_, page) = node("dgx1v-v100-8gpu-1nic");
    let sw = switches(&page);
    assert_eq!(sw.len(), 1, "{sw:?}");
    assert_eq!(sw[0].1, "PIX");
    assert_eq!(sw[0].0.len(), 3, "{sw:?}");
}

#[test]
fn nvswitch_node_map_draws_one_hub_and_the_adapters_pcie_switches() {
    let (edges, hub) = check("b300-8gpu-8nic-bond");
    assert!(hub);
    assert_eq!(edges, 8, "each adapter's PXB GPU");
}

#[test]
fn amd_two_hive_map_draws_two_meshes_of_four() {
    let (b, page) = node("amd-8gpu-two-xgmi-hives");
    let (edges, hub) = drawn(&page);
    assert!(hub.is_none());
    assert_eq!(edges.len(), 12);
    check("amd-8gpu-two-xgmi-hives");
    // No XGMI edge joins the hives.
    let numa = |id: &str| b.topology.device(id).and_then(|d| d.numa_node);
    assert!(edges.iter().all(|(a, c, _)| numa(a) == numa(c)));
}

#[test]
fn infiniband_only_node_draws_no_map_and_says_what_to_collect() {
    let (edges, hub) = check("h100-8nic-ndr400");
    assert_eq!((edges, hub), (0, false));
    let (_, page) = node("h100-8nic-ndr400");
    assert!(!page.contains("class=\"topomap\""));
    assert!(page.contains("topology (nvidia-smi topo -m"));
}

#[test]
fn node_pages_show_ports_pcie_p2p_weights_and_devices_the_bundle_holds() {
    let (_, ib) = node("h100-8nic-ndr400");
    assert!(ib.contains("<h3>RDMA adapters and ports</h3>"));
    // Rate as printed (bits), then the data it carries (bytes): NDR's 400
    // is already a data rate; QDR's 40 carries 32 Gb/s after 8b/10b.
    assert!(ib.contains("<td>400 Gb/s; data 50.00 GB/s</td>"));
    let (_, qdr) = node("cx3-qdr-graph500");
    assert!(qdr.contains("<td>40 Gb/s; data 4.000 GB/s</td>"));
    let (_, amd) = node("amd-8gpu-two-xgmi-hives");
    assert!(
        amd.contains("<h3>Link weights and hops</h3>")
            && amd.contains("<td>w15, 1 xgmi hop(s)</td>")
    );
    let (_, pcie) = node("maxwell-gpu");
    assert!(pcie.contains("<h3>PCIe links</h3>"));
    let (_, p2p) = node("l4-2gpu-p2p-cns");
    assert!(p2p.contains("<h3>Peer-to-peer support</h3>"));
    let (_, dgx) = node("dgx1v-v100-8gpu-1nic");
    assert!(dgx.contains("<td>12-23,36-47</td>"), "GPU affinity shown");
    // Key figures, as the markdown summary has them, with pair and line.
    let (_, rtx) = node("rtx2080ti-2gpu-autodl");
    assert!(rtx.contains("<h3>Key figures</h3>"));
    assert!(rtx.contains(
        "<td>5.720 GB/s GPU1\u{2192}GPU0 (p2pBandwidthLatencyTest-001-2x-rtx2080ti-no-p2p.txt:21)</td>"
    ));
    // No table without rows: a node with no RDMA evidence has no port table.
    assert!(!dgx.contains("RDMA adapters and ports"));
}
