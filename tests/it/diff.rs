//! `diff` as people use it on tickets: one node collected twice into
//! differently named folders, fleets whose nodes were renamed, adapters
//! and GPUs that go or come, and a page that tells worse from better.
//! Topologies with adapters removed are SYNTHETIC edits of a real capture
//! (`captures/dgx1-v100-4nic`), named so in their file names.

use std::path::Path;

use crate::common::wr;
use predicates::prelude::*;

const TOPO_4NIC: &str =
    "captures/dgx1-v100-4nic/nvidia-topo-002-dgx1-v100-4x-mlx5-nic-order-0-2-1-3-tabs.txt";

/// The real 4-adapter topology into `dir`, less the devices in `drop`
/// (their rows and columns; the rest of the matrix as it was).
fn topo(dir: &Path, drop: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    let text = std::fs::read_to_string(TOPO_4NIC).unwrap();
    if drop.is_empty() {
        std::fs::write(dir.join("nvidia-topo.txt"), text).unwrap();
        return;
    }
    let gone = |h: &str| drop.contains(&h);
    let header: Vec<&str> = text.lines().next().unwrap().split('\t').collect();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let cells: Vec<&str> = line.split('\t').collect();
        if gone(cells[0]) {
            continue;
        }
        let in_matrix = i == 0 || cells[0].starts_with("GPU") || cells[0].starts_with("mlx5_");
        out.push(match in_matrix {
            true => cells
                .iter()
                .enumerate()
                .filter(|(c, _)| !header.get(*c).is_some_and(|h| gone(h)))
                .map(|(_, v)| *v)
                .collect::<Vec<_>>()
                .join("\t"),
            false => line.to_string(),
        });
    }
    std::fs::write(
        dir.join("synthetic-devices-removed-nvidia-topo.txt"),
        out.join("\n"),
    )
    .unwrap();
}

/// Before: the first diff compared nodes by folder name only, so the same
/// node in `before/node-a` and `after/node-b` gave a fake "no longer
/// collected" regression, exit 1, and hid the real changes.
#[test]
fn one_node_on_each_side_is_compared_whatever_the_folder_names() {
    let d = tempfile::tempdir().unwrap();
    topo(&d.path().join("before/node-a"), &[]);
    topo(&d.path().join("after/node-b"), &[]);
    wr().arg("diff")
        .arg(d.path().join("before"))
        .arg(d.path().join("after"))
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "node `node-a` (before) compared with `node-b` (after): each side holds one node",
        ))
        .stdout(predicate::str::contains("no longer collected").not())
        .stdout(predicate::str::contains(
            "0 change(s) for the worse, 0 for the better",
        ));
    // The JSON says so too.
    let out = wr()
        .arg("diff")
        .arg(d.path().join("before"))
        .arg(d.path().join("after"))
        .arg("--json")
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["paired"][0]["before"], "node-a");
    assert_eq!(v["paired"][0]["by"], "only-nodes");
}

/// Before: a node going from 4 adapters to 1 read as one class change
/// (the adapter left was now `NIC0`, matched with the first one by
/// position); now: three adapters gone, each worse, and no class change.
#[test]
fn a_node_that_lost_three_of_four_adapters_has_three_adapters_gone() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("before"), d.path().join("after"));
    topo(&a.join("n1"), &[]);
    topo(&b.join("n1"), &["mlx5_0", "mlx5_2", "mlx5_3"]);
    let out = wr()
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .arg("--json")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let changes = v["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 3, "{changes:#?}");
    for (c, nic) in changes.iter().zip(["mlx5_0", "mlx5_2", "mlx5_3"]) {
        assert_eq!(c["area"], "adapter", "{c}");
        assert_eq!(c["trend"], "worse", "{c}");
        assert!(c["what"].as_str().unwrap().contains(nic), "{c}");
    }
    // The other way round: three adapters appear, better, exit 0.
    wr().arg("diff")
        .arg(&b)
        .arg(&a)
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "(better) n1 adapter NIC1 (mlx5_2): not listed -> listed",
        ))
        .stdout(predicate::str::contains(
            "0 change(s) for the worse, 3 for the better",
        ));
}

/// A GPU that is no longer listed is one change, worse, not a change per
/// pair it was in; back again, it is better.
#[test]
fn a_gpu_gone_is_one_change_for_the_worse() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("before"), d.path().join("after"));
    topo(&a.join("n1"), &[]);
    topo(&b.join("n1"), &["GPU7"]);
    wr().arg("diff")
        .arg(&a)
        .arg(&b)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "n1 gpu GPU7: listed -> not listed (the GPU is no longer listed",
        ))
        .stdout(predicate::str::contains(
            "1 change(s) for the worse, 0 for the better",
        ));
    wr().arg("diff")
        .arg(&b)
        .arg(&a)
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "(better) n1 gpu GPU7: not listed -> listed",
        ))
        .stdout(predicate::str::contains(
            "0 change(s) for the worse, 1 for the better",
        ));
}

/// `--pair OLD=NEW` compares renamed nodes of a fleet; a name that is not
/// there is a usage error naming it (exit 2).
#[test]
fn renamed_nodes_of_a_fleet_are_compared_when_paired() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("before"), d.path().join("after"));
    topo(&a.join("node07"), &[]);
    topo(&a.join("node08"), &["mlx5_0", "mlx5_2", "mlx5_3"]);
    topo(&b.join("gpu-a07"), &["mlx5_2", "mlx5_3"]);
    topo(&b.join("gpu-a08"), &[]);
    // Unpaired: two nodes gone, two new.
    wr().arg("diff")
        .arg(&a)
        .arg(&b)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "node07 node node: present -> absent",
        ));
    let html = d.path().join("diff.html");
    wr().arg("diff")
        .arg(&a)
        .arg(&b)
        .args(["--pair", "node07=gpu-a07", "--pair", "node08=gpu-a08"])
        .arg("--html")
        .arg(&html)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "node `node07` (before) compared with `gpu-a07` (after), as --pair asks",
        ))
        .stdout(predicate::str::contains("no longer collected").not())
        .stdout(predicate::str::contains(
            "2 change(s) for the worse, 3 for the better",
        ));
    // The page tells worse from better by colour and by words, in dark
    // mode and in print too.
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(
        page.matches("<tr class=\"t-worse significant\">").count(),
        2
    );
    assert_eq!(page.matches("<tr class=\"t-better\">").count(), 3);
    assert_eq!(page.matches("\u{25bc} worse</td>").count(), 2);
    assert_eq!(page.matches("\u{25b2} better</td>").count(), 3);
    assert!(page.contains("Compared across names: node `node07`"));
    let dark = &page[page.find("@media (prefers-color-scheme: dark)").unwrap()..];
    assert!(
        dark.contains("tr.t-worse td"),
        "no dark-mode colour for worse rows"
    );
    let print = &page[page.rfind("@media print").unwrap()..];
    assert!(
        print.contains("tr.t-better td"),
        "no print colour for better rows"
    );

    wr().arg("diff")
        .arg(&a)
        .arg(&b)
        .args(["--pair", "node09=gpu-a07"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--pair: no node named `node09` in the old collection (it holds `node07`, `node08`)",
        ));
    wr().arg("diff")
        .arg(&a)
        .arg(&b)
        .args(["--pair", "node07"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`node07` is not OLD=NEW"));
}
