//! The two-node check by hand (`--peer listen` / `--peer HOST`), with the
//! SYNTHETIC stand-in `tests/standins/ib_write_bw` on PATH: the TCP
//! rendezvous between the two processes is real, the printed figures are
//! a real captured pair's (see the stand-in's header).

use std::path::{Path, PathBuf};
use std::process::Command;

fn path_with_standin() -> String {
    let standins = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/standins");
    format!(
        "{}:{}",
        standins.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn collect(out: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_wire-report"));
    c.args([
        "collect",
        "--no-sweep",
        "--quiet",
        "--tool-timeout",
        "5",
        "--out",
    ])
    .arg(out)
    .args(extra)
    .env("PATH", path_with_standin())
    .env_remove("SLURM_NTASKS")
    .env_remove("SLURM_STEP_NUM_TASKS");
    c
}

fn bundle(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("bundle.json")).unwrap()).unwrap()
}

/// A port per test process, so parallel runs do not collide.
fn port(offset: u32) -> String {
    (20000 + (std::process::id() % 20000) + offset).to_string()
}

#[test]
fn server_and_client_each_keep_their_side_and_name_the_pair() {
    let d = tempfile::tempdir().unwrap();
    let (a, b): (PathBuf, PathBuf) = (d.path().join("a"), d.path().join("b"));
    let p = port(0);
    let mut server = collect(
        &a,
        &[
            "--peer",
            "listen",
            "--peer-port",
            &p,
            "--benchmark-budget",
            "30",
        ],
    )
    .spawn()
    .unwrap();
    // The client starts at once and retries until the server listens.
    let client = collect(
        &b,
        &[
            "--peer",
            "127.0.0.1",
            "--peer-port",
            &p,
            "--benchmark-budget",
            "30",
        ],
    )
    .output()
    .unwrap();
    assert!(
        client.status.success(),
        "{}",
        String::from_utf8_lossy(&client.stderr)
    );
    assert!(server.wait().unwrap().success());

    let (sa, sb) = (bundle(&a), bundle(&b));
    assert_eq!(sa["peer"]["role"], "server");
    assert_eq!(sa["peer"]["ok"], true);
    assert_eq!(sa["peer"]["transcript"], "ib_write_bw-pair-server.txt");
    assert_eq!(sb["peer"]["role"], "client");
    assert_eq!(sb["peer"]["address"], "127.0.0.1");
    assert_eq!(sb["peer"]["via"], "--peer");
    assert!(a.join("ib_write_bw-pair-server.txt").is_file());
    assert!(b.join("ib_write_bw-pair-client.txt").is_file());
    // The client's transcript is parsed: a size sweep in Gb/s (converted once).
    let client_bundle = b.join("bundle.json");
    let text = std::fs::read_to_string(&client_bundle).unwrap();
    let cells = wire_report::bundle::Bundle::from_json(&text, &client_bundle)
        .unwrap()
        .measurements;
    let rows: Vec<_> = cells
        .iter()
        .filter(|m| {
            m.tool == "perftest"
                && m.statistic == wire_report::evidence::measurement::Statistic::Avg
        })
        .collect();
    assert!(rows.len() > 10, "{rows:?}");
    let biggest = rows.iter().max_by_key(|m| m.size_bytes).unwrap();
    assert_eq!(biggest.size_bytes, Some(8388608));
    assert!(biggest.as_printed.contains("Gb/sec"));
    // The node pages say who paired with whom.
    let site = d.path().join("site");
    let r = Command::new(env!("CARGO_BIN_EXE_wire-report"))
        .arg("render")
        .arg(&b)
        .arg("--out")
        .arg(&site)
        .output()
        .unwrap();
    assert!(r.status.success());
    let page = std::fs::read_dir(site.join("nodes"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("index.html");
    let page = std::fs::read_to_string(page).unwrap();
    assert!(page.contains("Two-node check: this node ran the ib_write_bw client against 127.0.0.1 (paired by --peer); completed"), "{page}");
    // The server prints only its last row.
    assert!(
        sa["measurements"]["cells"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["size_bytes"] == 8388608)
    );
}

#[test]
fn a_client_with_nobody_listening_is_a_failed_probe_not_a_failed_collection() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("c");
    let r = collect(
        &out,
        &[
            "--peer",
            "127.0.0.1",
            "--peer-port",
            &port(7),
            // Time for a few refusals even on a loaded machine; the try
            // the budget's end cuts short is told as the refusals before it.
            "--benchmark-budget",
            "5",
        ],
    )
    .output()
    .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let b = bundle(&out);
    assert_eq!(b["peer"]["ok"], false);
    assert_eq!(b["peer"]["role"], "client");
    let probe = b["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "benchmark ib_write_bw pair client with 127.0.0.1")
        .unwrap();
    assert_eq!(probe["status"], "failed");
    assert!(
        probe["message"].as_str().unwrap().contains("attempt"),
        "{probe}"
    );
    assert!(
        b["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["kind"] == "probe")
    );
}
