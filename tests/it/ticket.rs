//! `render --format md`: the ticket summary, read back with a markdown
//! parser so that structure (table cells, list items) is checked, not
//! just substrings.

use assert_cmd::Command;
use pulldown_cmark::{Event, Parser, Tag, TagEnd};

fn md(args: &[&str]) -> String {
    let out = Command::cargo_bin("wire-report")
        .unwrap()
        .arg("render")
        .args(args)
        .args(["--format", "md"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

/// Table rows as cell texts, and list items as texts.
fn structure(text: &str) -> (Vec<Vec<String>>, Vec<String>) {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut items = Vec::new();
    let (mut in_cell, mut in_item) = (false, false);
    let opts = pulldown_cmark::Options::ENABLE_TABLES;
    for ev in Parser::new_ext(text, opts) {
        match ev {
            Event::Start(Tag::TableRow | Tag::TableHead) => rows.push(Vec::new()),
            Event::Start(Tag::TableCell) => {
                in_cell = true;
                rows.last_mut().unwrap().push(String::new());
            }
            Event::End(TagEnd::TableCell) => in_cell = false,
            Event::Start(Tag::Item) => {
                in_item = true;
                items.push(String::new());
            }
            Event::End(TagEnd::Item) => in_item = false,
            Event::Text(t) | Event::Code(t) => {
                if in_cell {
                    rows.last_mut().unwrap().last_mut().unwrap().push_str(&t);
                }
                if in_item {
                    items.last_mut().unwrap().push_str(&t);
                }
            }
            _ => {}
        }
    }
    (rows, items)
}

#[test]
fn findings_name_their_evidence_lines() {
    let text = md(&["captures/dgx1v-v100-8gpu-1nic"]);
    assert!(text.starts_with("### wire-report: dgx1v-v100-8gpu-1nic"));
    let (_, all_items) = structure(&text);
    // The verdict's checks are items too, one per step of the flow.
    let steps = wire_report::diagnosis::checks::STEPS;
    let checks = all_items
        .iter()
        .filter(|i| steps.iter().any(|s| i.starts_with(&format!("{} ", s.id))))
        .count();
    assert_eq!(checks, steps.len(), "{text}");
    assert!(text.contains("**Verdict: warning**"), "{text}");
    let items: Vec<String> = all_items
        .into_iter()
        .filter(|i| {
            ["critical", "warning", "info"]
                .iter()
                .any(|s| i.starts_with(s))
        })
        .collect();
    // Host hop, the far adapter across the socket (GPU4-7) and across a
    // host bridge (GPU0-1), and the injection share.
    assert_eq!(items.len(), 4, "{text}");
    // One adapter for eight GPUs is one cause: one finding naming all four
    // GPUs on the other socket.
    let cross: Vec<&String> = items
        .iter()
        .filter(|i| i.contains("across the socket boundary"))
        .collect();
    assert_eq!(cross.len(), 1);
    assert!(
        cross[0].contains("GPUs GPU4, GPU5, GPU6, GPU7: their closest adapter, mlx5_0"),
        "{}",
        cross[0]
    );
    assert!(
        items
            .iter()
            .all(|i| i.contains("nvidia-topo-009-dgx1v-v100-sxm2-hybrid-cube-mesh-mlx5.txt:"))
    );
    assert!(
        items
            .iter()
            .any(|i| i.contains("8 GPUs share 1 adapter") && i.contains("MODEL"))
    );
}

#[test]
fn key_figures_are_whole_table_rows_with_unit_size_and_source() {
    let text = md(&["captures/cx3-qdr-graph500"]);
    let (rows, _) = structure(&text);
    assert!(rows.len() > 3);
    assert!(rows.iter().all(|r| r.len() == 4), "{rows:?}");
    let write = rows
        .iter()
        .find(|r| r[0] == "perftest rdma-write bandwidth, avg, one direction, buffers not stated")
        .unwrap();
    // 3665.25 MB/sec (perftest MB = 2^20 bytes) at 8 MiB = 3.843 GB/s.
    assert!(
        write[1].starts_with("3.843 GB/s mlx4_0 at 8 MiB (printed 3665.25 MB/sec; "),
        "{write:?}"
    );
    assert!(write[1].ends_with("perftest-bw-004-ib-write-bw-a-cx3-qdr-mbsec-client.txt:40)"));
    let lat = rows
        .iter()
        .find(|r| r[0] == "perftest rdma-write latency, avg, one direction, buffers not stated")
        .unwrap();
    assert!(lat[1].starts_with("1.030 us mlx4_0 at 2 B"), "{lat:?}");
}

#[test]
fn redact_removes_the_host_name_and_out_writes_a_file() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("ticket.md");
    Command::cargo_bin("wire-report")
        .unwrap()
        .args([
            "render",
            "captures/cx3-qdr-graph500",
            "--format",
            "md",
            "--redact",
            "--out",
        ])
        .arg(&file)
        .assert()
        .success()
        .stdout("");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("cx3-qdr-graph500"), "{text}");
    assert!(text.starts_with("### wire-report: host-"));
    assert!(text.contains("mlx4_0 port 2: Down"), "{text}");
}

#[test]
fn a_single_file_carries_its_bundles_and_reads_back_as_them() {
    use std::path::PathBuf;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ticket.html");
    let nodes = ["captures/dgx1v-v100-8gpu-1nic", "captures/rtx3090-4gpu"];
    let out = crate::common::wr()
        .arg("render")
        .args(nodes)
        .arg("--single-file")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Read back: the same bundles, node for node.
    let want = wire_report::inputs::load_nodes(&nodes.map(PathBuf::from)).unwrap();
    let got = wire_report::inputs::load_nodes(std::slice::from_ref(&file)).unwrap();
    assert_eq!(got.len(), 2);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w);
    }
    // check and diff take it as they take bundles.
    let check = crate::common::wr()
        .arg("check")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&check.stdout).lines().count(), 2);
    let diff = crate::common::wr()
        .args(["diff", "captures/rtx3090-4gpu"])
        .arg({
            // One node's report against its captures.
            let one = dir.path().join("one.html");
            crate::common::wr()
                .args(["render", "captures/rtx3090-4gpu", "--single-file"])
                .arg(&one)
                .assert()
                .success();
            one
        })
        .output()
        .unwrap();
    assert_eq!(
        diff.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&diff.stdout)
    );
}

#[test]
fn an_embedded_bundle_cannot_end_its_script() {
    // Synthetic: a transcript whose text would close the <script> early.
    let mut b =
        wire_report::inputs::load_nodes(&[std::path::PathBuf::from("captures/rtx3090-4gpu")])
            .unwrap()
            .remove(0);
    b.transcripts[0]
        .text
        .push_str("\n</script><script>alert(1)</script>\n");
    let html = wire_report::render::render_single_file(std::slice::from_ref(&b)).unwrap();
    assert!(
        !html.contains("</script><script>alert(1)"),
        "the transcript ended the script"
    );
    let embedded = wire_report::render::single::embedded_bundles(&html);
    assert_eq!(embedded.len(), 1);
    let back = wire_report::bundle::Bundle::from_json(embedded[0], std::path::Path::new("t.html"))
        .unwrap();
    assert_eq!(back, b);
}
