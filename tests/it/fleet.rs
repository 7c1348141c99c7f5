//! Fleets built from real captures: copies of one real node's transcripts
//! as identical nodes, plus nodes whose copy was edited to one degraded link
//! (those edits are SYNTHETIC and named so in the file name). The outlier
//! check, the fleet index and `diff` must find exactly the edited device.

use crate::common::wr;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

use wire_report::inputs::load_nodes;
use wire_report::render::diff::{Area, diff_view as diff};
use wire_report::render::fleet::fleet;

const P2P_3090: &str = "captures/rtx3090-4gpu/p2pBandwidthLatencyTest-003-4x-rtx3090-no-p2p-tabs-expanded-no-trailing-note.txt";
const TOPO_DGX1V: &str =
    "captures/dgx1v-v100-8gpu-1nic/nvidia-topo-009-dgx1v-v100-sxm2-hybrid-cube-mesh-mlx5.txt";
const IBSTAT_CX3: &str =
    "captures/cx3-qdr-graph500/ibstat-001-mlx4-cx3-ib40-eth-port-tmux-borders.txt";

/// GPU0 -> GPU1 of the P2P-enabled write matrix at half its bandwidth.
const DEGRADE_P2P: (&str, &str) = (
    "     0 832.89   5.90   5.90   5.90",
    "     0 832.89   2.95   5.90   5.90",
);

/// Copies `src` into `root/node/`; with an edit, the copy is renamed
/// `synthetic-...` and the edit must apply exactly once.
fn node(root: &Path, node: &str, src: &str, edit: Option<(&str, &str)>) -> PathBuf {
    let dir = root.join(node);
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(src).unwrap();
    let name = Path::new(src).file_name().unwrap().to_str().unwrap();
    let (name, text) = match edit {
        Some((from, to)) => {
            assert_eq!(
                text.matches(from).count(),
                1,
                "edit must apply once to {src}"
            );
            (
                format!("synthetic-degraded-{name}"),
                text.replacen(from, to, 1),
            )
        }
        None => (name.to_string(), text),
    };
    std::fs::write(dir.join(name), text).unwrap();
    dir
}

/// Five RTX 3090 nodes (node05 with one degraded pair) and three DGX-1V
/// topologies: two kinds of hardware, grouped apart.
fn test_fleet(root: &Path, degraded: bool) {
    for n in 1..=5 {
        let edit = (degraded && n == 5).then_some(DEGRADE_P2P);
        node(root, &format!("node0{n}"), P2P_3090, edit);
    }
    for n in 1..=3 {
        node(root, &format!("dgx0{n}"), TOPO_DGX1V, None);
    }
}

#[test]
fn the_outlier_check_flags_the_degraded_node_and_only_it() {
    let d = tempfile::tempdir().unwrap();
    test_fleet(d.path(), true);
    let bundles = load_nodes(&[d.path().to_path_buf()]).unwrap();
    assert_eq!(bundles.len(), 8);
    let f = fleet(&bundles);
    assert!(!f.outliers.is_empty());
    for o in &f.outliers {
        assert_eq!(o.node, "node05", "{o:?}");
        assert_eq!(o.which, "worst");
        assert!((o.value - 2.95e9).abs() < 1e6, "{o:?}");
        assert!((o.fleet_median - 5.89e9).abs() < 2e7, "{o:?}");
        // Attributed to the edited pair and its line in the synthetic copy.
        let at = o.at.as_deref().unwrap();
        assert!(at.starts_with("GPU0->GPU1 (") && at.ends_with("synthetic-degraded-p2pBandwidthLatencyTest-003-4x-rtx3090-no-p2p-tabs-expanded-no-trailing-note.txt:36)"), "{at}");
    }
    // Without the edit nobody stands out.
    let d2 = tempfile::tempdir().unwrap();
    test_fleet(d2.path(), false);
    assert!(
        fleet(&load_nodes(&[d2.path().to_path_buf()]).unwrap())
            .outliers
            .is_empty()
    );
}

#[test]
fn fleet_index_groups_by_topology_and_names_the_outlier() {
    let d = tempfile::tempdir().unwrap();
    test_fleet(d.path(), true);
    let site = d.path().join("site");
    Command::cargo_bin("wire-report")
        .unwrap()
        .args(["render"])
        .arg(d.path())
        .arg("--out")
        .arg(&site)
        .assert()
        .success();
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(index.contains("<h2>Fleet</h2>"));
    let outliers: Vec<&str> = index
        .split("<li>")
        .filter(|l| l.contains("against a median"))
        .collect();
    assert!(!outliers.is_empty());
    assert!(
        outliers.iter().all(|l| l.starts_with("node05:")),
        "{outliers:?}"
    );
    // Two groups: 5 nodes alike (no topology; the GPUs their
    // p2pBandwidthLatencyTest names), 3 DGX-1V.
    assert!(index.contains("<strong>5 node(s)</strong>: 4 x GeForce RTX 3090"));
    assert!(index.contains("<strong>3 node(s)</strong>: 8 x GPU (model not stated); 1 NICs;"));
    assert_eq!(index.matches("class=\"outlier\"").count(), 1);
    for n in ["node01", "node05", "dgx03"] {
        assert!(site.join("nodes").join(n).join("index.html").is_file());
    }
}

#[test]
fn diff_of_identical_collections_is_quiet() {
    let d = tempfile::tempdir().unwrap();
    test_fleet(&d.path().join("a"), false);
    test_fleet(&d.path().join("b"), false);
    wr().arg("diff")
        .arg(d.path().join("a"))
        .arg(d.path().join("b"))
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "0 change(s) for the worse, 0 for the better",
        ));
}

#[test]
fn diff_attributes_each_change_to_its_device() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("before"), d.path().join("after"));
    test_fleet(&a, false);
    test_fleet(&b, true);
    // One DGX-1V pair lost its NVLink; one ConnectX-3 port went down.
    std::fs::remove_dir_all(b.join("dgx02")).unwrap();
    let topo = std::fs::read_to_string(TOPO_DGX1V).unwrap();
    let row0 = "GPU0     X      NV1     NV1";
    let row1 = "GPU1    NV1      X      NV2";
    assert_eq!(topo.matches(row0).count() + topo.matches(row1).count(), 2);
    let edited = topo
        .replace(row0, "GPU0     X      SYS     NV1")
        .replace(row1, "GPU1    SYS      X      NV2");
    std::fs::create_dir_all(b.join("dgx02")).unwrap();
    std::fs::write(b.join("dgx02/synthetic-degraded-nvidia-topo.txt"), edited).unwrap();
    node(&a, "ib01", IBSTAT_CX3, None);
    node(
        &b,
        "ib01",
        IBSTAT_CX3,
        Some(("State: Active", "State: Down  ")),
    );

    let old = load_nodes(std::slice::from_ref(&a)).unwrap();
    let new = load_nodes(std::slice::from_ref(&b)).unwrap();
    let dd = diff(&old, &new);
    let sig: Vec<_> = dd.changes.iter().filter(|c| c.significant).collect();
    assert_eq!(sig.len(), 3, "{:#?}", dd.changes);
    let topo = sig.iter().find(|c| c.area == Area::Topology).unwrap();
    assert_eq!(
        (topo.node.as_str(), topo.what.as_str()),
        ("dgx02", "GPU0-GPU1")
    );
    assert!(
        topo.before.starts_with("direct-link") && topo.after.starts_with("cross-socket"),
        "{topo:?}"
    );
    assert!(topo.why.contains("down the ladder"));
    let port = sig.iter().find(|c| c.area == Area::RdmaPort).unwrap();
    assert_eq!(
        (port.node.as_str(), port.what.as_str()),
        ("ib01", "mlx4_0 port 1")
    );
    let bw = sig.iter().find(|c| c.area == Area::Bandwidth).unwrap();
    assert_eq!(bw.node, "node05");
    assert!(bw.what.contains("GPU0->GPU1"), "{bw:?}");
    assert!(bw.why.starts_with("-50.0%"), "{bw:?}");
    // The other 319 p2p figures of node05 and all of node01-04 stayed within.
    assert_eq!(dd.figures_compared - dd.within_spread, 1);

    // The CLI: exit 1, JSON and HTML say the same.
    let html = d.path().join("diff.html");
    let out = wr()
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .arg("--json")
        .arg("--html")
        .arg(&html)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let changes = v["changes"].as_array().unwrap();
    assert_eq!(
        changes.iter().filter(|c| c["significant"] == true).count(),
        3
    );
    assert!(
        changes
            .iter()
            .any(|c| c["area"] == "rdma-port" && c["node"] == "ib01")
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("GPU0-GPU1") && page.contains("mlx4_0 port 1"));
    assert!(!page.contains("http://") && !page.contains("https://"));

    // The other way round every change is an improvement: reported as
    // better, exit 0 (dgx02's node directory and node05's figures too).
    wr().arg("diff")
        .arg(&b)
        .arg(&a)
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "(better) dgx02 topology GPU0-GPU1: cross-socket",
        ))
        .stdout(predicate::str::contains(
            "(better) ib01 rdma-port mlx4_0 port 1",
        ))
        .stdout(predicate::str::contains("takes 50% less time"))
        .stdout(predicate::str::contains(
            "0 change(s) for the worse, 3 for the better",
        ));
}

#[test]
fn diff_of_a_missing_input_is_one_line_exit_2() {
    wr().args(["diff", "no/such/dir", "captures/rtx3090-4gpu"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("no/such/dir").and(predicate::str::contains("panicked").not()),
        );
}

#[test]
fn a_fleet_index_groups_nodes_by_finding_and_lists_them_compactly() {
    use wire_report::diagnosis::Severity;
    use wire_report::render::{self, NodeSummary};
    // Synthetic rows (the index's input): 4,096 nodes, a third with an
    // adapter across a host bridge, some critical.
    let summaries: Vec<NodeSummary> = (0..4096)
        .map(|i| {
            let (verdict, kinds) = match i % 3 {
                0 => (
                    "warning",
                    vec![("nic-across-host-bridge", Severity::Warning)],
                ),
                1 if i % 100 == 1 => ("critical", vec![("wrong-results", Severity::Critical)]),
                _ => ("incomplete", vec![("truncated", Severity::Info)]),
            };
            NodeSummary {
                name: format!("gpu-node-{i:04}"),
                href: format!("nodes/gpu-node-{i:04}/index.html"),
                verdict,
                verdict_class: format!("v-{verdict}"),
                coverage: "3 of 8 checks that apply ran".into(),
                next: "peer-path: nvidia-smi topo -p2p r".into(),
                top_finding: "a sentence".into(),
                top_href: String::new(),
                gpus: "8 x NVIDIA H100 80GB HBM3".into(),
                nics: "8 x MT4129".into(),
                shape: "every GPU pair direct-link (NV18)".into(),
                critical: usize::from(verdict == "critical"),
                warning: usize::from(verdict == "warning"),
                info: usize::from(verdict == "incomplete"),
                collected: vec!["nvidia-smi-topo".into()],
                missing: "4 kinds".into(),
                problems: 0,
                kinds,
            }
        })
        .collect();
    let slugs: Vec<String> = (0..4096).map(|i| format!("gpu-node-{i:04}")).collect();
    let html =
        String::from_utf8(render::index_page(summaries, Vec::new(), &slugs).unwrap()).unwrap();
    assert!(html.len() <= 1_500_000, "{} bytes", html.len());
    // Grouped by finding kind, with the count.
    assert!(html.contains("<strong>1366 node(s)</strong>: adapter across a host bridge"));
    // Every node is still named once in the lists by verdict.
    for i in [0, 1, 4095] {
        assert!(html.contains(&format!(">gpu-node-{i:04}</a>")), "{i}");
    }
    // No one-row-per-node table at this size.
    assert!(!html.contains("<table class=\"index\">"));
}
