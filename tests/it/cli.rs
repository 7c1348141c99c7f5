//! The real binary, driven as a user or a launcher would: exit codes and
//! the text of every error.

use crate::common::wr;
use predicates::prelude::*;

const TOPO_A6000: &str = "captures/rtx-a6000-3gpu-nvlink-bridge/nvidia-topo-006-3x-rtx-a6000-nvlink-bridge-pair-tabs.txt";
const TOPO_DGX1V: &str =
    "captures/dgx1v-v100-8gpu-1nic/nvidia-topo-009-dgx1v-v100-sxm2-hybrid-cube-mesh-mlx5.txt";

#[test]
fn every_subcommand_has_help_with_examples() {
    for sub in ["collect", "render", "diff", "placement", "schema"] {
        wr().args([sub, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Example"));
    }
}

#[test]
fn collect_one_node_to_stdout() {
    let out = wr()
        .args([
            "collect",
            "--from",
            "captures/rtx-a6000-3gpu-nvlink-bridge",
            "--out",
            "-",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["schema_version"], 3);
    assert_eq!(v["host"]["name"], "rtx-a6000-3gpu-nvlink-bridge");
    assert_eq!(v["transcripts"].as_array().unwrap().len(), 2);
    assert_eq!(v["topology"]["links"][0]["code"], "NV4");
    assert_eq!(
        v["measurements"],
        serde_json::json!({"series": [], "cells": []})
    );
}

#[test]
fn collect_every_node_into_a_directory() {
    let d = tempfile::tempdir().unwrap();
    wr().args(["collect", "--from", "captures/", "--out"])
        .arg(d.path())
        .assert()
        .success();
    let b = d.path().join("mi300a-4apu/bundle.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(b).unwrap()).unwrap();
    assert_eq!(v["topology"]["links"][0]["class"], "direct-link");
}

#[test]
fn collect_with_fsync_per_file_writes_the_same_bundles() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    let from = ["captures/rtx3090-4gpu", "captures/mi300a-4apu"];
    wr().args(["collect", "--quiet", "--from"])
        .args(from)
        .arg("--out")
        .arg(&a)
        .assert()
        .success();
    wr().args(["collect", "--quiet", "--fsync", "--from"])
        .args(from)
        .arg("--out")
        .arg(&b)
        .assert()
        .success();
    for node in ["rtx3090-4gpu", "mi300a-4apu"] {
        let one = std::fs::read(a.join(node).join("bundle.json")).unwrap();
        assert!(one.len() > 1000, "{node}");
        assert_eq!(
            one,
            std::fs::read(b.join(node).join("bundle.json")).unwrap()
        );
    }
}

#[test]
fn collect_refuses_several_nodes_into_one_file() {
    let d = tempfile::tempdir().unwrap();
    wr().args(["collect", "--from", "captures/", "--out"])
        .arg(d.path().join("b.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("give --out a directory"));
}

#[test]
fn collect_warns_about_a_garbled_file_and_keeps_the_good_one() {
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(TOPO_A6000, d.path().join("good.txt")).unwrap();
    // A real matrix with one cell deleted from the GPU1 row (synthetic damage).
    let text = std::fs::read_to_string(TOPO_A6000).unwrap();
    let garbled = text.replacen("GPU1\tNV4\t X \tNODE", "GPU1\tNV4\t X ", 1);
    assert_ne!(garbled, text);
    std::fs::write(d.path().join("garbled.txt"), garbled).unwrap();
    let out = d.path().join("out.json");
    wr().args(["collect", "--from"])
        .arg(d.path())
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "garbled.txt:3: nvidia-smi-topo: expected 3 link codes after `GPU1` (one per device row); `0-31,64-95` in column 3 is not a link code",
        ));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    assert_eq!(v["transcripts"].as_array().unwrap().len(), 1);
    assert_eq!(v["problems"][0]["kind"], "parse");
    assert_eq!(v["problems"][0]["line"], 3);
}

#[test]
fn collect_exits_1_when_nothing_parses_empty_and_binary() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("empty.txt"), "").unwrap();
    std::fs::write(
        d.path().join("junk.bin"),
        [0x7f, b'E', b'L', b'F', 0, 0xff, 0xfe, b'\n'],
    )
    .unwrap();
    std::fs::write(d.path().join("notes.txt"), "hello\nworld\n").unwrap();
    let out = d.path().join("out.json");
    let assert = wr()
        .args(["collect", "--from"])
        .arg(d.path())
        .arg("--out")
        .arg(&out)
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("empty.txt:1: expected a transcript; the file is empty"),
        "{stderr}"
    );
    assert!(
        stderr.contains("junk.bin:1: expected UTF-8 or UTF-16 text; this looks like a binary file"),
        "{stderr}"
    );
    assert!(
        stderr.contains("notes.txt:1: expected a transcript of a known tool"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The problems are in the bundle too.
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    assert_eq!(v["problems"].as_array().unwrap().len(), 3);
}

#[test]
fn collect_from_a_missing_path_is_a_usage_error() {
    wr().args(["collect", "--from", "no/such/dir", "--out", "-"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "error: `no/such/dir` does not exist",
        ));
}

#[test]
fn collect_from_without_out_is_a_usage_error() {
    wr().args(["collect", "--from", "captures/rtx3090-4gpu"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("collect --from needs --out"));
}

#[test]
fn placement_accepts_a_direct_link_pair() {
    wr().args([
        "placement",
        TOPO_A6000,
        "--gpus",
        "0,1",
        "--require",
        "direct-link",
    ])
    .assert()
    .success()
    .stdout(predicate::str::contains(
        "worst class in GPU0,GPU1: direct-link (GPU0-GPU1, code NV4)",
    ));
}

#[test]
fn placement_refuses_a_group_spanning_a_host_hop() {
    wr().args([
        "placement",
        TOPO_A6000,
        "--gpus",
        "0-2",
        "--require",
        "direct-link",
    ])
    .assert()
    .code(1)
    .stdout(predicate::str::contains(
        "worst class in GPU0,GPU1,GPU2: pcie-host (GPU0-GPU2, code NODE)",
    ))
    .stdout(predicate::str::contains("REFUSED"));
    // Without --require it only reports.
    wr().args(["placement", TOPO_A6000, "--gpus", "0-2"])
        .assert()
        .success();
}

#[test]
fn placement_on_a_dgx1v_hybrid_cube_mesh() {
    // GPU0-GPU5 is SYS in the hybrid cube mesh.
    wr().args([
        "placement",
        TOPO_DGX1V,
        "--gpus",
        "0,1,2,3",
        "--require",
        "direct-link",
    ])
    .assert()
    .success();
    let out = wr()
        .args([
            "placement",
            TOPO_DGX1V,
            "--gpus",
            "0,5",
            "--require",
            "pcie-host",
            "--json",
        ])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["worst_class"], "cross-socket");
    assert_eq!(v["worst_code"], "SYS");
    assert_eq!(v["violated"], true);
}

#[test]
fn placement_reads_a_bundle() {
    let d = tempfile::tempdir().unwrap();
    let b = d.path().join("b.json");
    wr().args([
        "collect",
        "--from",
        "captures/amd-8gpu-two-xgmi-hives",
        "--out",
    ])
    .arg(&b)
    .assert()
    .success();
    wr().arg("placement")
        .arg(&b)
        .args(["--gpus", "0,4", "--require", "pcie-host"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "cross-socket (GPU0-GPU4, code PCIE)",
        ));
}

#[test]
fn placement_bad_inputs_exit_2_with_one_line() {
    let d = tempfile::tempdir().unwrap();
    let junk = d.path().join("junk.txt");
    std::fs::write(&junk, "not a topology\n").unwrap();
    wr().arg("placement")
        .arg(&junk)
        .args(["--gpus", "0,1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "junk.txt:1: expected a transcript of a known tool",
        ));
    // A real transcript that holds no topology.
    wr().args([
        "placement",
        "captures/cx3-qdr-graph500/perftest-bw-004-ib-write-bw-a-cx3-qdr-mbsec-client.txt",
        "--gpus",
        "0,1",
    ])
    .assert()
    .code(2)
    .stderr(predicate::str::contains("it holds no topology"));
    wr().args(["placement", TOPO_A6000, "--gpus", "0,9"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "GPU9 is not in the topology (it has GPU0, GPU1, GPU2)",
        ));
    wr().args([
        "placement",
        TOPO_A6000,
        "--gpus",
        "0,1",
        "--require",
        "fast",
    ])
    .assert()
    .code(2)
    .stderr(predicate::str::contains("`fast` is not a class"));
    let newer = d.path().join("newer.json");
    std::fs::write(&newer, r#"{"schema_version": 99}"#).unwrap();
    wr().arg("placement")
        .arg(&newer)
        .args(["--gpus", "0,1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "schema_version 99, newer than this wire-report reads (3)",
        ));
    let out = wr()
        .args(["placement", "no/such.txt", "--gpus", "0,1"])
        .assert()
        .code(2);
    let e = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.starts_with("error: failed to read `no/such.txt`"), "{e}");
}

#[test]
fn schema_is_json_schema_of_the_bundle() {
    let out = wr()
        .arg("schema")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["title"], "Bundle");
    let required = v["required"].as_array().unwrap();
    for f in [
        "schema_version",
        "generator",
        "host",
        "topology",
        "measurements",
        "transcripts",
        "problems",
    ] {
        assert!(required.iter().any(|r| r == f), "{f} not required");
    }
}

#[test]
fn render_writes_a_site_and_a_single_file() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("site");
    wr().args([
        "render",
        "captures/rtx3090-4gpu",
        "captures/dgx1v-v100-8gpu-1nic",
        "--out",
    ])
    .arg(&out)
    .assert()
    .success()
    .stderr(predicate::str::contains("2 nodes"));
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("nodes/rtx3090-4gpu/index.html"));
    let node = std::fs::read_to_string(out.join("nodes/rtx3090-4gpu/index.html")).unwrap();
    assert!(node.contains("silent-staging"));
    assert!(out.join("nodes/dgx1v-v100-8gpu-1nic/bundle.json").is_file());
    let single = d.path().join("report.html");
    wr().args(["render", "captures/rtx3090-4gpu", "--single-file"])
        .arg(&single)
        .assert()
        .success();
    assert!(
        std::fs::read_to_string(&single)
            .unwrap()
            .contains("<style>")
    );
    wr().args(["render", "no/such/place", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "error: `no/such/place` does not exist",
        ));
}

#[test]
fn completions_and_the_man_page_come_from_the_same_flags_as_help() {
    let out = wr().args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    let bash = String::from_utf8(out.stdout).unwrap();
    // Every subcommand is completed, `check` and its --fail-on values too.
    for word in [
        "collect",
        "render",
        "check",
        "diff",
        "--fail-on",
        "critical",
    ] {
        assert!(bash.contains(word), "bash completion lacks {word}");
    }
    let out = wr().arg("man").output().unwrap();
    assert!(out.status.success());
    let man = String::from_utf8(out.stdout).unwrap();
    assert!(
        man.contains(".TH wire-report 1"),
        "{}",
        &man[..200.min(man.len())]
    );
    assert!(man.contains("check"));
    assert_eq!(
        wr().args(["completions", "tcsh"])
            .output()
            .unwrap()
            .status
            .code(),
        Some(2)
    );
}
