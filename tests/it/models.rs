//! Models against the seed's examples, the real sweeps in `captures/`, and
//! the CLI (banner, JSON, error texts).

use crate::common::wr;
use std::path::Path;

use predicates::prelude::*;
use wire_report::evidence::measurement::Kind;
use wire_report::models::fit;

fn sweep_fits(dir: &str, kind: Kind, test_contains: &str) -> fit::SegmentedFit {
    let b = wire_report::inputs::load_source(&Path::new("captures").join(dir)).unwrap();
    let s = fit::sweeps(&b.measurements)
        .into_iter()
        .find(|s| s.kind == kind && s.test.contains(test_contains))
        .unwrap_or_else(|| panic!("no {kind:?} sweep in {dir}"));
    fit::fit_with_knees(&s.points, 3).unwrap()
}

#[test]
fn perftest_write_latency_sweep_fits_sanely() {
    // ib_write_lat -a on ConnectX-3 QDR: t_avg 1.03 us at 2 bytes, 2304.98 us
    // at 8 MiB. QDR 4X carries 32 Gb/s = 4 GB/s of data.
    let f = sweep_fits("cx3-qdr-graph500", Kind::RdmaWrite, "Latency");
    let small = &f.segments[0];
    assert!(
        (0.9e-6..1.2e-6).contains(&small.alpha_s),
        "alpha {}",
        small.alpha_s
    );
    let large = f.segments.last().unwrap();
    // 8 MiB / 2304.98 us = 3.64 GB/s: the large-message beta is near it, below 4 GB/s.
    assert!(
        (3.5e9..4.0e9).contains(&large.beta_bytes_per_s),
        "beta {}",
        large.beta_bytes_per_s
    );
    assert!(large.r_squared > 0.99);
    // The protocol switch near 1 KiB (inline data up to 220 bytes, MTU 2048) is reported.
    assert_eq!(f.knees_bytes.first(), Some(&1024.0));
}

#[test]
fn nccl_allreduce_sweep_fits_sanely() {
    // all_reduce_perf on 8x A100: ~35 us for tiny messages, algbw 134 GB/s at 8 GiB.
    let f = sweep_fits("a100-sxm4-8gpu-superbench", Kind::Allreduce, "out-of-place");
    let small = &f.segments[0];
    assert!(
        (30e-6..40e-6).contains(&small.alpha_s),
        "alpha {}",
        small.alpha_s
    );
    let large = f.segments.last().unwrap();
    assert!(
        (125e9..140e9).contains(&large.beta_bytes_per_s),
        "beta {}",
        large.beta_bytes_per_s
    );
    assert!(!f.knees_bytes.is_empty());
    // m* = alpha * beta for each segment.
    assert!((large.m_star_bytes - large.alpha_s * large.beta_bytes_per_s).abs() < 1.0);
}

#[test]
fn staging_cli_reproduces_the_seed_round_numbers() {
    let out = wr()
        .args([
            "model",
            "staging",
            "--bytes",
            "1000000000",
            "--pcie-gbs",
            "20",
            "--net-gbs",
            "10",
            // The seed's round numbers have no fixed cost per step.
            "--hop-latency-us",
            "0",
            "--json",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(v["model"].as_str().unwrap().starts_with("MODEL"));
    // At 4 KiB with 2 us per step, staged pays two more steps than direct.
    let out = wr()
        .args(["model", "staging", "--bytes", "4096", "--pcie-gbs", "20"])
        .args(["--net-gbs", "10", "--hop-latency-us", "2", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let small: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let gap = small["staged"]["pipelined_s"].as_f64().unwrap()
        - small["direct"]["pipelined_s"].as_f64().unwrap();
    assert!((gap - 4e-6).abs() < 1e-12, "{gap}");
    let staged = v["staged"]["serial_s"].as_f64().unwrap();
    let direct = v["direct"]["serial_s"].as_f64().unwrap();
    assert!(
        (staged - 0.30).abs() < 1e-12 && (direct - 0.20).abs() < 1e-12,
        "{staged} {direct}"
    );
    wr().args([
        "model",
        "staging",
        "--bytes",
        "1000000000",
        "--pcie-gbs",
        "20",
        "--net-gbs",
        "10",
        "--hop-latency-us",
        "0",
    ])
    .assert()
    .success()
    .stdout(predicate::str::starts_with("MODEL:"))
    .stdout(predicate::str::contains("300.000 ms"))
    .stdout(predicate::str::contains("200.000 ms"));
}

#[test]
fn injection_cli_and_its_errors() {
    wr().args([
        "model",
        "injection",
        "--gpus-per-node",
        "8",
        "--nics-per-node",
        "1",
        "--nic-gbs",
        "25",
        "--scaleup-gbs",
        "400",
    ])
    .assert()
    .success()
    .stdout(predicate::str::contains("per-GPU share:       3.125 GB/s"))
    .stdout(predicate::str::contains("(1/128)"));
    wr().args([
        "model",
        "injection",
        "--gpus-per-node",
        "8",
        "--nics-per-node",
        "0",
        "--nic-gbs",
        "25",
        "--scaleup-gbs",
        "400",
    ])
    .assert()
    .code(2)
    .stderr(predicate::str::contains(
        "error: a node with zero network adapters has no injection bandwidth",
    ));
    wr().args([
        "model",
        "staging",
        "--bytes",
        "0",
        "--pcie-gbs",
        "20",
        "--net-gbs",
        "10",
    ])
    .assert()
    .code(2)
    .stderr(predicate::str::contains(
        "error: message size (bytes) must be a positive number, got 0",
    ));
    wr().args([
        "model",
        "staging",
        "--bytes",
        "10",
        "--pcie-gbs=-1",
        "--net-gbs",
        "10",
    ])
    .assert()
    .code(2)
    .stderr(predicate::str::contains(
        "PCIe bandwidth (bytes/s) must be a positive number",
    ));
}

#[test]
fn ceiling_and_fit_cli() {
    wr().args(["model", "ceiling", "--nvlink-gen", "4", "--links", "18"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "NVLink4 x18: 450.0 GB/s per direction, 900.0 GB/s both directions",
        ));
    // QDR is 8b/10b: the rate alone and the width and speed agree on 4.0 GB/s.
    for args in [
        &["--ib-rate", "40"][..],
        &["--ib-width", "4X", "--ib-speed", "QDR"][..],
    ] {
        wr().args(["model", "ceiling"])
            .args(args)
            .assert()
            .success()
            .stdout(
                predicate::str::contains("4X QDR (40 Gb/s): 4.000 GB/s per direction").or(
                    predicate::str::contains("InfiniBand 4X QDR: 4.000 GB/s per direction"),
                ),
            );
    }
    wr().args(["model", "ceiling"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("give a link"));
    wr().args(["model", "ceiling", "--pcie-gen", "9"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("PCIe generation 9"));
    wr().args([
        "model",
        "fit",
        "captures/cx3-qdr-graph500/",
        "--kind",
        "rdma-write",
    ])
    .assert()
    .success()
    .stdout(predicate::str::contains("knees at 1024 bytes"));
    // A negative alpha is printed, but as a rejected line, never as a result.
    wr().args(["model", "fit", "captures/h100-roce-moc/"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "NOT SOUND, not a model result: alpha -657.408 us and m* -9.4 MiB are negative",
        ))
        .stdout(predicate::str::contains("the rejected line's numbers"))
        .stdout(predicate::str::contains(
            "a collective: beta is its size over the whole collective's time (nccl-tests' algbw), not a link's bandwidth",
        ));
    wr().args(["model", "fit", "captures/mi300a-4apu/"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("holds no size sweep"));
}
