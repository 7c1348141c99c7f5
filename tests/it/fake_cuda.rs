//! The CUDA backend against a FAKE libcuda (tests/fake_libcuda/, built here
//! with the system C compiler): enumeration, pairs, sweeps, verification
//! catching a corrupted byte, and cleanup on every path including injected
//! failures. The fake's numbers are meaningless and never reach a report;
//! what is tested is the logic. Every run fixes its sizes and repetitions
//! and passes no time budget, and the fake's clock is virtual, so what is
//! measured never depends on how fast or busy the machine is.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use wire_report::render::answers::answers;

use assert_cmd::Command;
use wire_report::bundle::ProbeStatus;
use wire_report::bundle::{Bundle, ProblemKind};
use wire_report::evidence::measurement::{Kind, P2p, Verification};

/// Builds the fake once per test run: `target/fake-libcuda/libcuda.so`.
fn fake_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fake-libcuda");
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("libcuda.so");
        let status =
            std::process::Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
                .args(["-shared", "-fPIC", "-O2", "-Wall", "-o"])
                .arg(&out)
                .arg("tests/fake_libcuda/fake_libcuda.c")
                .status()
                .expect("a C compiler (cc) to build the fake libcuda");
        assert!(status.success(), "building the fake libcuda failed");
        dir
    })
}

struct Run {
    bundle: Bundle,
    report: String,
}

/// A directory given by path, with tempdir's `path()`.
struct Dir(PathBuf);

impl Dir {
    fn path(&self) -> &Path {
        &self.0
    }
}

fn run(env: &[(&str, &str)]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    run_in(dir.path(), env, &[])
}

/// `run` into `out` with extra arguments to `collect`.
fn run_in(out: &Path, env: &[(&str, &str)], args: &[&str]) -> Run {
    let out = Dir(out.to_path_buf());
    let report = out.path().join("fake-report.txt");
    let mut cmd = Command::cargo_bin("wire-report").unwrap();
    cmd.env("LD_LIBRARY_PATH", fake_dir())
        .env("FAKE_CUDA_REPORT", &report)
        .env("PATH", "/usr/bin:/bin")
        .args([
            "collect",
            "--quiet",
            "--sizes",
            "4K,64K,1M",
            "--repeats",
            "3",
            "--out",
        ])
        .arg(out.path())
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.assert().success();
    let bundle: Bundle =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("bundle.json")).unwrap())
            .unwrap();
    let report = std::fs::read_to_string(&report).unwrap_or_default();
    Run { bundle, report }
}

fn cuda_cells(b: &Bundle) -> Vec<&wire_report::evidence::measurement::Measurement> {
    b.measurements
        .iter()
        .filter(|m| m.source.file == "cuda copy sweeps")
        .collect()
}

/// Everything the sweeps allocated, enabled or retained was given back.
fn assert_clean(report: &str) {
    for line in report.lines() {
        let (k, v) = line.split_once(' ').unwrap();
        if !matches!(
            k,
            "alloc_calls" | "retain_calls" | "held_warmup_min" | "held_warmup_max"
        ) {
            assert_eq!(v, "0", "leaked {k}: {report}");
        }
    }
    assert!(
        report.contains("alloc_calls"),
        "the fake wrote no report: {report:?}"
    );
}

fn probe<'a>(b: &'a Bundle, name: &str) -> &'a wire_report::bundle::Probe {
    b.probes.iter().find(|p| p.name == name).unwrap()
}

#[test]
fn enumerates_devices_pairs_and_every_copy_kind() {
    let r = run(&[("FAKE_CUDA_DEVICES", "3")]);
    let cells = cuda_cells(&r.bundle);
    // 3 devices x (H2D pinned, H2D pageable, D2H pinned, D2H pageable, D2D)
    // + 6 ordered pairs x (peer on, peer off); 3 sizes x 3 statistics each.
    assert_eq!(cells.len(), (3 * 5 + 6 * 2) * 3 * 3);
    assert_eq!(cells.len(), 243);
    assert!(
        cells
            .iter()
            .all(|m| m.iterations == Some(3) && m.warmup_iterations == Some(2))
    );
    assert!(
        cells
            .iter()
            .all(|m| m.verification == Verification::Checked { errors: 0 })
    );
    assert!(cells.iter().any(|m| m.kind == Kind::P2pCopy
        && m.p2p == P2p::Enabled
        && m.src.as_deref() == Some("GPU2")
        && m.dst.as_deref() == Some("GPU0")));
    assert!(
        cells
            .iter()
            .any(|m| m.kind == Kind::H2d && m.test.contains("pageable"))
    );
    assert!(cells.iter().all(|m| answers(m)[0].contains("CUDA events")));
    let p = probe(&r.bundle, "cuda copy sweeps");
    assert_eq!(p.status, ProbeStatus::Ok);
    assert!(p.message.contains("FAKE libcuda device 2"));
    assert!(
        p.message.contains(
            "planned 27 paths x 3 sizes (4 KiB to 1 MiB) x 3 repetitions (+2 warm-up), 16 copies per window, about "
        ),
        "{}",
        p.message
    );
    assert!(p.message.contains("ran 27 of 27 paths as planned"));
    // The host sweep, on the same settings.
    let host = probe(&r.bundle, "host memcpy sweep");
    assert!(
        host.message.starts_with(
            "planned 1 path x 3 sizes (4 KiB to 1 MiB) x 3 repetitions (+2 warm-up), about "
        ) && host
            .message
            .ends_with("; ran 3 sizes x 3 repetitions; 9 cells"),
        "{}",
        host.message
    );
    assert_clean(&r.report);
}

#[test]
fn slow_copies_change_nothing_that_is_measured() {
    // Every third copy takes a thousand times as long (virtual time).
    let r = run(&[("FAKE_CUDA_DEVICES", "2"), ("FAKE_CUDA_SLOW_EVERY", "3")]);
    let cells = cuda_cells(&r.bundle);
    assert_eq!(cells.len(), (2 * 5 + 2 * 2) * 3 * 3);
    assert!(cells.iter().all(|m| m.iterations == Some(3)));
    let p = probe(&r.bundle, "cuda copy sweeps");
    assert!(
        p.message.contains("ran 14 of 14 paths as planned"),
        "{}",
        p.message
    );
    assert_clean(&r.report);
}

#[test]
fn a_corrupted_byte_is_caught() {
    let r = run(&[("FAKE_CUDA_CORRUPT", "1"), ("FAKE_CUDA_DEVICES", "1")]);
    let bad = cuda_cells(&r.bundle)
        .iter()
        .filter(|m| matches!(m.verification, Verification::Checked { errors } if errors > 0))
        .count();
    assert!(bad > 0);
    assert!(
        r.bundle
            .problems
            .iter()
            .any(|p| p.kind == ProblemKind::ToolError && p.message.contains("wrong bytes"))
    );
    assert!(
        wire_report::diagnosis::diagnose(&r.bundle)
            .iter()
            .any(|d| d.finding.name() == "wrong-results")
    );
    assert_clean(&r.report);
}

#[test]
fn refused_peer_access_measures_only_the_staged_copy() {
    let r = run(&[("FAKE_CUDA_PEER_REFUSED", "1")]);
    let cells = cuda_cells(&r.bundle);
    assert!(!cells.iter().any(|m| m.p2p == P2p::Enabled));
    assert!(
        cells
            .iter()
            .any(|m| m.p2p == P2p::Disabled && answers(m)[5].contains("can access peer: no"))
    );
    let p = r
        .bundle
        .probes
        .iter()
        .find(|p| p.name == "cuda copy sweeps")
        .unwrap();
    assert!(p.message.contains("peer access not possible"));
    // The refusal is a finding: no peer path, every copy host-staged.
    let d = wire_report::diagnosis::diagnose(&r.bundle);
    let no_path: Vec<_> = d
        .iter()
        .filter(|d| d.finding.name() == "no-peer-path")
        .collect();
    assert_eq!(no_path.len(), 1, "{d:?}");
    assert!(matches!(
        &no_path[0].finding,
        wire_report::diagnosis::Finding::NoPeerPath { status, .. } if status == "cuda canAccessPeer = 0"
    ));
    assert_clean(&r.report);
}

#[test]
fn an_allocation_failure_is_recorded_and_everything_is_released() {
    // The 3rd cuMemAlloc fails: one sweep gives up its largest size.
    let r = run(&[("FAKE_CUDA_ALLOC_FAIL", "3")]);
    assert!(
        r.bundle
            .problems
            .iter()
            .any(|p| p.kind == ProblemKind::Probe && p.message.contains("out of memory (FAKE)"))
    );
    assert!(!cuda_cells(&r.bundle).is_empty());
    // One of the 14 paths could not have its largest buffers: the sizes
    // below were measured (hostile turn 3, case 22: before, the whole path
    // recorded nothing); the others ran whole.
    let p = probe(&r.bundle, "cuda copy sweeps");
    assert!(
        p.message.contains("ran 13 of 14 paths as planned")
            && p.message
                .contains("cuda H2D pageable host->GPU0: ran 2 of 3 sizes x 3 repetitions"),
        "{}",
        p.message
    );
    assert_clean(&r.report);
}

#[test]
fn no_device_and_no_library_are_recorded_and_collect_goes_on() {
    let r = run(&[("FAKE_CUDA_NO_DEVICE", "1")]);
    assert!(cuda_cells(&r.bundle).is_empty());
    let p = r
        .bundle
        .probes
        .iter()
        .find(|p| p.name == "cuda copy sweeps")
        .unwrap();
    assert_eq!(p.status, ProbeStatus::Failed);
    assert!(
        p.message.contains("no CUDA-capable device"),
        "{}",
        p.message
    );
    assert!(
        r.bundle.measurements.iter().any(|m| m.kind == Kind::H2h),
        "the host sweep still ran"
    );
    // Without the library at all (no LD_LIBRARY_PATH to the fake).
    let out = tempfile::tempdir().unwrap();
    Command::cargo_bin("wire-report")
        .unwrap()
        .env_remove("LD_LIBRARY_PATH")
        .args([
            "collect",
            "--quiet",
            "--sizes",
            "4K",
            "--repeats",
            "3",
            "--out",
        ])
        .arg(out.path())
        .assert()
        .success();
    let b: Bundle =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("bundle.json")).unwrap())
            .unwrap();
    let p = b
        .probes
        .iter()
        .find(|p| p.name == "cuda copy sweeps")
        .unwrap();
    assert_eq!(p.status, ProbeStatus::Absent);
}

/// The median bandwidth of a copy kind at `size`, GPU0's (or GPU0 -> GPU1's).
fn median_bw(b: &Bundle, label: &str, size: u64) -> f64 {
    let m = cuda_cells(b)
        .into_iter()
        .find(|m| {
            m.test.starts_with(&format!("cuda {label} "))
                && m.size_bytes == Some(size)
                && m.statistic == wire_report::evidence::measurement::Statistic::Median
                && m.src.as_deref().is_none_or(|s| s == "GPU0" || s == "host")
        })
        .unwrap_or_else(|| panic!("no {label} cell at {size}"));
    m.bandwidth_bytes_per_s.unwrap()
}

fn report_value(report: &str, key: &str) -> i64 {
    report
        .lines()
        .find_map(|l| l.strip_prefix(key)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {report}"))
}

#[test]
fn a_held_stream_and_back_to_back_copies_hide_the_submit_latency() {
    // Each call takes 50 us of host time; 1 MiB copies take 105 us at the
    // fake's 10 GB/s. A window timing one copy would read about 6.7 GB/s.
    let r = run(&[("FAKE_CUDA_SUBMIT_US", "50"), ("FAKE_CUDA_DEVICES", "2")]);
    for label in [
        "H2D pinned",
        "D2H pinned",
        "D2D",
        "peer copy, peer access enabled",
    ] {
        let bw = median_bw(&r.bundle, label, 1 << 20);
        assert!(
            (bw / 1e10 - 1.0).abs() < 0.001,
            "{label}: {bw} bytes/s, not the fake's 1e10"
        );
    }
    let d2d = cuda_cells(&r.bundle)
        .into_iter()
        .find(|m| m.test.starts_with("cuda D2D "))
        .unwrap();
    assert!(
        answers(d2d)[4].contains("16 copies back to back in each timed window"),
        "{}",
        answers(d2d)[4]
    );
    // Where the host buffers were allocated is said (the fake's bus ids are
    // not in this machine's sysfs, so: not bound, and why).
    assert!(
        answers(d2d)[5].contains(
            "host buffers not bound near the GPU: `/sys/bus/pci/devices/0000:10:00.0/local_cpulist`"
        ),
        "{}",
        answers(d2d)[5]
    );
    assert!(answers(d2d)[4].contains("the stream held by a wait on a host flag"));
    assert_clean(&r.report);
}

#[test]
fn a_download_that_writes_nothing_or_one_wrong_byte_fails_verification() {
    for mode in ["drop", "flip"] {
        let r = run(&[("FAKE_CUDA_D2H", mode), ("FAKE_CUDA_DEVICES", "2")]);
        let cells = cuda_cells(&r.bundle);
        assert!(!cells.is_empty());
        for m in cells {
            assert!(
                matches!(m.verification, Verification::Checked { errors } if errors > 0),
                "{mode}: {} at {:?} passed verification",
                m.test,
                m.size_bytes
            );
        }
        assert_clean(&r.report);
    }
}

#[test]
fn primary_contexts_are_retained_once_per_device_per_run() {
    let r = run(&[("FAKE_CUDA_DEVICES", "3")]);
    assert_eq!(report_value(&r.report, "retain_calls"), 3, "{}", r.report);
    assert_clean(&r.report);
}

#[test]
fn peer_off_copies_disable_access_found_on_and_restore_it() {
    // Another library left peer access on in both directions.
    let r = run(&[
        ("FAKE_CUDA_PEER_PREENABLED", "1"),
        ("FAKE_CUDA_DEVICES", "2"),
    ]);
    let on = median_bw(&r.bundle, "peer copy, peer access enabled", 1 << 20);
    let off = median_bw(&r.bundle, "peer copy, peer access disabled", 1 << 20);
    assert!(
        off < on / 3.0,
        "peer access off: {off} bytes/s, on: {on} bytes/s: access was not disabled"
    );
    // Found on, left on; nothing else left behind.
    assert_eq!(report_value(&r.report, "peer_enabled"), 2, "{}", r.report);
    for key in [
        "device_allocations",
        "host_allocations",
        "streams",
        "events",
    ] {
        assert_eq!(report_value(&r.report, key), 0, "{key}: {}", r.report);
    }
    assert!(
        r.bundle.problems.is_empty()
            || !r.bundle.problems.iter().any(|p| p.message.contains("cuda")),
        "{:?}",
        r.bundle.problems
    );
}

#[test]
fn an_unknown_result_code_is_reported_not_undefined() {
    // A newer driver's code that this build's CUresult does not know.
    let r = run(&[
        ("FAKE_CUDA_ALLOC_FAIL", "3"),
        ("FAKE_CUDA_ALLOC_FAIL_CODE", "77777"),
    ]);
    assert!(
        r.bundle
            .problems
            .iter()
            .any(|p| p.message.contains("cuMemAlloc") && p.message.contains("77777")),
        "{:?}",
        r.bundle.problems
    );
    assert_clean(&r.report);
}

#[test]
fn an_elapsed_time_of_zero_is_a_problem_not_infinite_bandwidth() {
    // Copies that take no time and calls that take no time.
    let r = run(&[
        ("FAKE_CUDA_BYTES_PER_MS", "0"),
        ("FAKE_CUDA_SUBMIT_US", "0"),
    ]);
    assert!(
        cuda_cells(&r.bundle)
            .iter()
            .all(|m| m.bandwidth_bytes_per_s.is_some_and(f64::is_finite)),
        "a cell with infinite bandwidth"
    );
    assert!(
        r.bundle
            .problems
            .iter()
            .any(|p| p.message.contains("elapsed time of 0 ms")),
        "{:?}",
        r.bundle.problems
    );
    assert_clean(&r.report);
}

#[test]
fn every_held_window_queues_nvbandwidths_four_warm_up_copies() {
    // nvbandwidth v0.8 (memcpy.cpp, WARMUP_COUNT 4) queues four copies
    // behind the hold, ahead of the start event; the fake counts the
    // copies between each wait on a flag and the next event.
    let r = run(&[("FAKE_CUDA_DEVICES", "2")]);
    assert_eq!(wire_report::collect::gpu::WINDOW_WARMUP, 4);
    assert_eq!(
        report_value(&r.report, "held_warmup_min"),
        4,
        "{}",
        r.report
    );
    assert_eq!(
        report_value(&r.report, "held_warmup_max"),
        4,
        "{}",
        r.report
    );
    let d2d = cuda_cells(&r.bundle)
        .into_iter()
        .find(|m| m.test.starts_with("cuda D2D "))
        .unwrap();
    assert!(
        answers(d2d)[4].contains("while 4 warm-up copies, the start event"),
        "{}",
        answers(d2d)[4]
    );
    assert_clean(&r.report);
}

#[test]
fn a_hold_that_never_releases_times_out_with_an_honest_error() {
    // The stream never sees its flag written: without a timeout the run
    // would hang. Each held path stops with the hold's own error, and the
    // paths that are not held still run.
    let r = run(&[
        ("FAKE_CUDA_DEVICES", "1"),
        ("FAKE_CUDA_HOLD_STUCK", "1"),
        ("WIRE_REPORT_HOLD_TIMEOUT_MS", "100"),
    ]);
    let msgs: Vec<&str> = r
        .bundle
        .problems
        .iter()
        .map(|p| p.message.as_str())
        .collect();
    for label in ["H2D pinned", "D2H pinned", "D2D"] {
        let m = msgs
            .iter()
            .find(|m| m.contains(&format!("cuda {label} ")))
            .unwrap_or_else(|| panic!("no problem for {label}: {msgs:?}"));
        assert!(
            m.contains("holding the stream on a host flag: the held stream did not finish within 0.1 s after its host flag was released"),
            "{m}"
        );
        assert!(!m.contains("allocation"), "{m}");
    }
    let p = probe(&r.bundle, "cuda copy sweeps");
    assert!(
        p.message.contains("ran 2 of 5 paths as planned"),
        "{}",
        p.message
    );
}

/// The saved tree with a display device (QEMU's VGA, 0000:00:02.0) ahead
/// of the NVIDIA GPU at 0000:99:00.0.
const DISPLAY_AHEAD: &str = "tests/fixtures/sysfs-display-ahead";

#[test]
fn a_display_device_ahead_renames_our_gpu_and_the_comparison_matches_by_bus_id() {
    let work = tempfile::tempdir().unwrap();
    let ours = work.path().join("ours-1");
    let env = [
        ("FAKE_CUDA_DEVICES", "1"),
        ("FAKE_CUDA_BUS_IDS", "0000:99:00.0"),
    ];
    let r = run_in(&ours, &env, &["--sysfs-root", DISPLAY_AHEAD]);
    // The topology numbers display devices in PCI order: the VGA device
    // is GPU0, CUDA's device 0 is GPU1, and its cells say so.
    let gpu1 = r
        .bundle
        .topology
        .devices
        .iter()
        .find(|d| d.id == "GPU1")
        .expect("GPU1 in the topology");
    assert_eq!(gpu1.pci_bus_id.as_deref(), Some("0000:99:00.0"));
    assert!(
        cuda_cells(&r.bundle)
            .iter()
            .any(|m| m.test == "cuda D2D GPU1->GPU1"),
        "{:?}",
        cuda_cells(&r.bundle)
            .iter()
            .map(|m| &m.test)
            .collect::<Vec<_>>()
    );
    // The references call it GPU0 / device 0 and give its bus id in their
    // own spelling: the stand-in nvbandwidth prints a real v0.8 transcript
    // (00000000:99:00), the ctypes reference `0000:99:00.0`.
    let nvb = std::process::Command::new("tests/standins/nvbandwidth")
        .args(["-t", "host_to_device_memcpy_ce", "-b", "1"])
        .output()
        .unwrap();
    assert!(nvb.status.success());
    std::fs::write(work.path().join("nvbandwidth-1.out"), &nvb.stdout).unwrap();
    let bw = cuda_cells(&r.bundle)
        .into_iter()
        .find(|m| {
            m.test == "cuda D2D GPU1->GPU1"
                && m.size_bytes == Some(1 << 20)
                && m.statistic == wire_report::evidence::measurement::Statistic::Median
        })
        .and_then(|m| m.bandwidth_bytes_per_s)
        .unwrap();
    let reference = serde_json::json!({
        "reference": "written by this test",
        "devices": [{"ordinal": 0, "pci_bus_id": "0000:99:00.0"}],
        "results": [{"kind": "D2D", "src": "GPU0", "dst": "GPU0", "size_bytes": 1 << 20,
                     "bytes_per_s": bw * 1.01, "checked": true}],
    });
    std::fs::write(
        work.path().join("reference-cuda-events.out"),
        reference.to_string(),
    )
    .unwrap();
    let out = std::process::Command::new("python3")
        .arg("scripts/device-compare.py")
        .arg(work.path())
        .args(["0.02", "1048576"])
        .output()
        .expect("python3 for the device check's comparison");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with("device check: 2 comparisons at +-2%, 1 PASS, 1 FAIL"),
        "{text}"
    );
    let line = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} line: {text}"))
            .to_string()
    };
    // Ours at 10 GB/s (the fake) against nvbandwidth's real 25.13 GB/s:
    // matched by bus id, so a FAIL, not "nothing compared".
    assert!(
        line("FAIL H2D pinned").contains("host->0000:99:00")
            && line("FAIL H2D pinned").contains("nvbandwidth SM    25.13 GB/s"),
        "{text}"
    );
    assert!(
        line("PASS D2D").contains("0000:99:00->0000:99:00")
            && line("PASS D2D").contains("cuda-events (ctypes)"),
        "{text}"
    );
    assert_clean(&r.report);
}
