//! `render --single-file`, `--format md` and `--redact` write one node at a
//! time; what they write is what the in-memory renders of the same nodes
//! give, byte for byte.

use std::path::PathBuf;

use crate::common::wr;
use wire_report::bundle::Bundle;

/// Three real captures (one with two figures kinds, one RDMA, one ROCm):
/// enough for the fleet view and the index.
const NODES: [&str; 3] = [
    "captures/rtx3090-4gpu",
    "captures/cx7-ndr-ib-read",
    "captures/mi100-2gpu-dual-epyc",
];

fn bundles() -> Vec<Bundle> {
    let paths: Vec<PathBuf> = NODES.iter().map(PathBuf::from).collect();
    wire_report::inputs::load_nodes(&paths).unwrap()
}

#[test]
fn streamed_single_file_equals_the_in_memory_one() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("report.html");
    wr().arg("render")
        .args(NODES)
        .arg("--single-file")
        .arg(&file)
        .assert()
        .success();
    let got = std::fs::read_to_string(&file).unwrap();
    let want = wire_report::render::render_single_file(&bundles()).unwrap();
    assert!(
        got == want,
        "the streamed file differs from the in-memory render"
    );
    assert!(got.contains("rtx3090-4gpu") && got.contains("</html>"));
    // Nothing but the report is left beside it (the scratch file is gone).
    let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
    assert_eq!(left.len(), 1);
}

#[test]
fn streamed_markdown_equals_the_in_memory_one_in_a_file_and_on_stdout() {
    let want = wire_report::render::markdown::render_markdown(&bundles());
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("ticket.md");
    wr().arg("render")
        .args(NODES)
        .args(["--format", "md", "--out"])
        .arg(&file)
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), want);
    let out = wr()
        .arg("render")
        .args(NODES)
        .args(["--format", "md"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), want);
}

#[test]
fn streamed_redacted_site_equals_the_in_memory_one_and_names_no_host() {
    // One numbering for the run: every node named first, then each
    // node's secrets in node order.
    let mut redacted = bundles();
    let mut r = wire_report::bundle::redact::Redactor::new();
    for b in &redacted {
        r.host(&b.host.name);
    }
    for b in &mut redacted {
        r.redact(b, &mut []).unwrap();
    }
    let want = wire_report::render::render_site(&redacted).unwrap();
    let d = tempfile::tempdir().unwrap();
    let site = d.path().join("site");
    wr().arg("render")
        .args(NODES)
        .arg("--redact")
        .arg("--out")
        .arg(&site)
        .assert()
        .success();
    for (rel, bytes) in &want.files {
        let got = std::fs::read(site.join(rel)).unwrap();
        assert!(got == *bytes, "{rel} differs");
    }
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    for name in ["rtx3090-4gpu", "cx7-ndr-ib-read", "mi100-2gpu-dual-epyc"] {
        assert!(!index.contains(name), "{name} is in the redacted index");
    }
}
