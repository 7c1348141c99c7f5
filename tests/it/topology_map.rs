//! The topology map against the matrix, edge by edge, on real captures:
//! every edge the map draws is a pair of the matrix with that code, and
//! every direct link of the matrix is drawn (as an edge, or through a
//! mesh whose pairs show one code, its exceptions drawn as edges); every
//! PIX and PXB pair is drawn, by a switch box holding both or an edge.
//! And on the whole site of `captures/`: every map edge and every matrix
//! cell links to an existing line of a transcript page.

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
/// A mesh: its GPUs, the code most of its pairs show, and its kind
/// (`nvswitch` or `full-mesh`).
type Hub = (Vec<String>, String, String);

/// Edges (exceptions included) and the first mesh the map draws.
fn drawn(page: &str) -> (Vec<Edge>, Option<Hub>) {
    let edges = tags(page, "<path class=\"edge")
        .into_iter()
        .map(|t| {
            (
                attr(t, "data-a").into(),
                attr(t, "data-b").into(),
                attr(t, "data-code").into(),
            )
        })
        .collect();
    let hub = meshes(page).into_iter().next();
    (edges, hub)
}

/// Every mesh the map draws.
fn meshes(page: &str) -> Vec<Hub> {
    tags(page, "<g class=\"mesh\"")
        .into_iter()
        .map(|t| {
            (
                attr(t, "data-members")
                    .split(' ')
                    .map(String::from)
                    .collect(),
                attr(t, "data-code").to_string(),
                attr(t, "data-kind").to_string(),
            )
        })
        .collect()
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
    let exceptions: BTreeSet<(&str, &str)> = tags(&page, "<path class=\"edge exception\"")
        .into_iter()
        .map(|t| (attr(t, "data-a"), attr(t, "data-b")))
        .collect();
    for (a, c, code) in &edges {
        let l = t
            .link(a, c)
            .unwrap_or_else(|| panic!("{name}: {a}-{c} drawn, not in the matrix"));
        assert_eq!(l.code.as_deref(), Some(code.as_str()), "{name}: {a}-{c}");
        assert!(
            matches!(l.class, LinkClass::DirectLink | LinkClass::PcieSwitch)
                || exceptions.contains(&(a.as_str(), c.as_str())),
            "{name}: {a}-{c} is {} and drawn as a link",
            l.class
        );
    }
    let drawn_pairs: BTreeSet<(&str, &str)> = edges
        .iter()
        .flat_map(|(a, c, _)| [(a.as_str(), c.as_str()), (c.as_str(), a.as_str())])
        .collect();
    for (members, code, _) in meshes(&page) {
        for x in &members {
            for y in &members {
                if x != y && !drawn_pairs.contains(&(x.as_str(), y.as_str())) {
                    let l = t
                        .link(x, y)
                        .unwrap_or_else(|| panic!("{name}: mesh pair {x}-{y}"));
                    assert_eq!(l.code.as_deref(), Some(code.as_str()), "{name}: {x}-{y}");
                }
            }
        }
    }
    // Every switch drawn from the matrix: each pair of its members is PIX
    // there (PIX or PXB in a tree of switches), or a direct link (whose
    // code hides the PCIe path); every PIX and PXB pair is drawn, as an
    // edge or in one box.
    let switches = switches(&page);
    for (members, code) in &switches {
        assert!(members.len() >= 2, "{name}: a switch of {members:?}");
        let allowed: &[&str] = match code.as_str() {
            "PIX" => &["PIX"],
            "PXB" => &["PIX", "PXB"],
            _ => continue,
        };
        for x in members {
            for y in members {
                if x != y {
                    let l = t
                        .link(x, y)
                        .unwrap_or_else(|| panic!("{name}: switch pair {x}-{y}"));
                    assert!(
                        l.code.as_deref().is_some_and(|c| allowed.contains(&c))
                            || l.class == LinkClass::DirectLink,
                        "{name}: {x}-{y} is {:?} under one {code} box",
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
    for l in t.links.iter().filter(|l| l.class == LinkClass::PcieSwitch) {
        assert!(
            drawn_pairs.contains(&(l.a.as_str(), l.b.as_str())) || under_one(&l.a, &l.b),
            "{name}: PIX/PXB pair {}-{} is not drawn",
            l.a,
            l.b
        );
    }
    let meshed = meshes(&page);
    let in_one_mesh = |x: &str, y: &str| {
        meshed
            .iter()
            .any(|(m, _, _)| m.iter().any(|g| g == x) && m.iter().any(|g| g == y))
    };
    for l in t.links.iter().filter(|l| l.class == LinkClass::DirectLink) {
        assert!(
            drawn_pairs.contains(&(l.a.as_str(), l.b.as_str())) || in_one_mesh(&l.a, &l.b),
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
fn nvswitch_node_map_draws_one_hub_and_boxes_each_adapter_with_its_gpu() {
    let (edges, hub) = check("b300-8gpu-8nic-bond");
    assert!(hub);
    // Each adapter's PXB GPU shares a tree of switches with it: boxes,
    // not the 8 dashed edges of before.
    assert_eq!(edges, 0);
    let (_, page) = node("b300-8gpu-8nic-bond");
    assert_eq!(meshes(&page)[0].2, "nvswitch");
    assert!(switches(&page).iter().filter(|s| s.1 == "PXB").count() >= 4);
}

#[test]
fn amd_two_hive_map_draws_two_meshes_of_four_not_joined() {
    let (b, page) = node("amd-8gpu-two-xgmi-hives");
    let (edges, _) = drawn(&page);
    assert!(edges.is_empty());
    check("amd-8gpu-two-xgmi-hives");
    let m = meshes(&page);
    assert_eq!(m.len(), 2);
    // Each mesh is one hive: all its GPUs in one NUMA node.
    let numa = |id: &str| b.topology.device(id).and_then(|d| d.numa_node);
    for (members, code, kind) in &m {
        assert_eq!(
            (members.len(), code.as_str(), kind.as_str()),
            (4, "XGMI", "full-mesh")
        );
        assert!(members.iter().all(|g| numa(g) == numa(&members[0])));
    }
}

#[test]
fn mi300x_and_h800_dense_maps_draw_a_mesh_and_boxes_instead_of_edges() {
    let (edges, hub) = check("mi300x-8gpu-amdsmi");
    assert_eq!((edges, hub), (0, true));
    let (edges, hub) = check("h800-8gpu-10nic");
    assert_eq!((edges, hub), (0, true));
    check("nv12-8gpu-10nic-epyc");
    // A PCIe-switch box with no matrix: its switch, from lspci, holds
    // both GPUs.
    let (_, page) = node("supermicro-x11dpg-ot-pex8747");
    let sw = switches(&page);
    assert_eq!(sw.len(), 1, "{sw:?}");
    assert_eq!(
        sw[0],
        (vec!["1a:00.0".into(), "1b:00.0".into()], "sysfs".into())
    );
}

/// The `href` of the `<a>` that opens right before `at`, if the element
/// at `at` is its first child.
fn link_before(page: &str, at: usize) -> Option<&str> {
    let before = &page[..at];
    let open = before.rfind("<a href=\"")?;
    let rest = &before[open..];
    (rest.ends_with("\">") && rest.matches('<').count() == 1)
        .then(|| &rest["<a href=\"".len()..rest.len() - 2])
}

#[test]
fn every_map_edge_and_matrix_cell_of_the_captures_site_links_to_an_existing_line() {
    let files = crate::site::captures_site();
    let (mut edges, mut linked_edges, mut cells, mut linked_cells) = (0, 0, 0, 0);
    let mut unlinked = Vec::new();
    for (path, bytes) in &files {
        let Some(dir) = path
            .strip_prefix("nodes/")
            .and_then(|p| p.strip_suffix("/index.html"))
        else {
            continue;
        };
        let page = std::str::from_utf8(bytes).unwrap();
        let resolves = |href: &str| {
            let (file, anchor) = href.split_once('#').unwrap_or((href, ""));
            files.get(&format!("nodes/{dir}/{file}")).is_some_and(|t| {
                anchor.is_empty()
                    || std::str::from_utf8(t)
                        .unwrap()
                        .contains(&format!("id=\"{anchor}\""))
            })
        };
        for tag in ["<path class=\"edge", "<line class=\"spoke\""] {
            for (at, _) in page.match_indices(tag) {
                edges += 1;
                match link_before(page, at) {
                    Some(h) if h.contains("#") && resolves(h) => linked_edges += 1,
                    h => unlinked.push(format!("{dir}: {tag} {h:?}")),
                }
            }
        }
        // The class matrix under Topology: cells with a class, each with
        // text (a pair not described is empty and has no line).
        for (at, _) in page.match_indices("<td class=\"c-") {
            let td = &page[at..at + page[at..].find("</td>").unwrap()];
            let inner = &td[td.find('>').unwrap() + 1..];
            if inner.is_empty() {
                continue;
            }
            cells += 1;
            match inner
                .strip_prefix("<a href=\"")
                .and_then(|r| r.split('"').next())
            {
                Some(h) if resolves(h) => linked_cells += 1,
                h => unlinked.push(format!("{dir}: cell {inner} {h:?}")),
            }
        }
    }
    eprintln!(
        "map edges and spokes: {edges}, linked {linked_edges}; matrix cells: {cells}, linked {linked_cells}"
    );
    assert!(
        unlinked.is_empty(),
        "{} not linked: {:?}",
        unlinked.len(),
        &unlinked[..unlinked.len().min(10)]
    );
    assert!(edges > 100 && cells > 1000, "{edges} edges, {cells} cells");
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
