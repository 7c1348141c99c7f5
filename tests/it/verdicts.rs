//! `wire-report check` on the shipped captures, and the other outputs
//! agreeing with it: the index row, the node page, the single file and
//! the markdown summary say the same verdict and the same severities, in
//! the same order, for every node.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;
use wire_report::render;

use crate::common::wr;

/// `check captures --json`, by node name.
fn check_json() -> BTreeMap<String, Value> {
    let out = wr().args(["check", "captures", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "--fail-on none exits 0");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["node"].as_str().unwrap().to_string(), n.clone()))
        .collect()
}

fn severities(node: &Value) -> Vec<String> {
    node["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["severity"].as_str().unwrap().to_string())
        .collect()
}

/// The severity and kind of a node page's findings, in page order (a
/// run of one kind and severity is one entry on the page).
fn page_severities(html: &str) -> Vec<String> {
    html.split("<div class=\"finding sev-")
        .skip(1)
        .map(|s| {
            let sev = s.split('"').next().unwrap();
            let kind = s.split("<span class=\"muted\">").nth(1).unwrap();
            let kind = kind.split(['<', ',']).next().unwrap();
            format!("{sev} {kind}")
        })
        .collect()
}

/// The same from `check --json`: runs of one kind and severity as one.
fn grouped(node: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in node["findings"].as_array().unwrap() {
        let key = format!(
            "{} {}",
            f["severity"].as_str().unwrap(),
            f["kind"].as_str().unwrap()
        );
        if out.last() != Some(&key) {
            out.push(key);
        }
    }
    out
}

/// The verdict a node page leads with.
fn page_verdict(html: &str) -> String {
    let at = html.find("<h2>Verdict: <span class=\"verdict v-").unwrap();
    html[at..]
        .split('>')
        .nth(2)
        .unwrap()
        .split('<')
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn every_node_has_a_verdict_and_its_checks_and_none_is_ok_unexamined() {
    let nodes = check_json();
    assert!(nodes.len() > 100, "{} nodes", nodes.len());
    for (name, n) in &nodes {
        let verdict = n["verdict"].as_str().unwrap();
        assert!(
            ["critical", "warning", "incomplete", "ok"].contains(&verdict),
            "{name}: {verdict}"
        );
        let checks = n["checks"].as_array().unwrap();
        assert!(checks.len() >= 6, "{name}: {} checks", checks.len());
        let not_checked: Vec<&Value> = checks
            .iter()
            .filter(|c| c["state"] == "not-checked")
            .collect();
        if verdict == "ok" {
            assert!(not_checked.is_empty(), "{name} is ok with {not_checked:?}");
        }
        for c in not_checked {
            assert!(c["needs"].as_str().is_some_and(|s| !s.is_empty()), "{c}");
        }
        for c in checks.iter().filter(|c| c["state"] == "not-applicable") {
            assert!(c["why"].as_str().is_some_and(|s| !s.is_empty()), "{c}");
        }
        // The verdict is the worst finding, or what the checks say.
        let sev = severities(n);
        let expected = if sev.iter().any(|s| s == "critical") {
            "critical"
        } else if sev.iter().any(|s| s == "warning") {
            "warning"
        } else if checks.iter().any(|c| c["state"] == "not-checked") {
            "incomplete"
        } else {
            "ok"
        };
        assert_eq!(verdict, expected, "{name}");
        for f in n["findings"].as_array().unwrap() {
            for key in ["kind", "severity", "devices", "text", "reason", "evidence"] {
                assert!(!f[key].is_null(), "{name}: finding without {key}: {f}");
            }
        }
    }
    // GeForce boxes stage peer copies by design: not critical.
    for geforce in ["rtx3090-4gpu", "rtx2080ti-2gpu-autodl"] {
        assert_ne!(nodes[geforce]["verdict"], "critical", "{geforce}");
        let staging = nodes[geforce]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["kind"] == "silent-staging")
            .unwrap();
        assert_eq!(staging["severity"], "info");
        assert!(
            staging["reason"].as_str().unwrap().contains("by design"),
            "{staging}"
        );
    }
    // 18 links the GPUs have, all Down.
    assert_eq!(nodes["dcgmi-2gpu-nvlink-down"]["verdict"], "warning");
    // A peer path at 43% of the staged one.
    assert_eq!(
        nodes["pcie-6gpu-p2p-slower-than-staged"]["verdict"],
        "critical"
    );
    // Healthy as far as seen (NV18 everywhere, one PIX adapter per GPU):
    // nothing worse than info, and not ok either, for what did not run.
    let h200 = &nodes["h200-8gpu-nv18-10nic-sprocket"];
    assert_eq!(h200["verdict"], "incomplete");
    assert!(severities(h200).iter().all(|s| s == "info"), "{h200}");
}

#[test]
fn fail_on_sets_the_exit_code_by_the_worst_verdict() {
    let code = |args: &[&str]| wr().arg("check").args(args).output().unwrap().status.code();
    assert_eq!(code(&["captures", "--fail-on", "critical"]), Some(1));
    assert_eq!(code(&["captures", "--fail-on", "warning"]), Some(1));
    assert_eq!(code(&["captures", "--fail-on", "none"]), Some(0));
    // A node whose worst is info does not fail a warning gate.
    assert_eq!(
        code(&["captures/rtx3090-4gpu", "--fail-on", "warning"]),
        Some(0)
    );
    assert_eq!(
        code(&["captures/dcgmi-2gpu-nvlink-down", "--fail-on", "warning"]),
        Some(1)
    );
    assert_eq!(code(&["captures", "--fail-on", "sometimes"]), Some(2));
    assert_eq!(code(&["no-such-dir"]), Some(2));
    // One line per node, naming what did not run.
    let out = wr()
        .args(["check", "captures/h200-8gpu-nv18-10nic-sprocket"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with("h200-8gpu-nv18-10nic-sprocket  incomplete  (")
            && text.contains("not checked: ")
            && text.contains("rdma-ports"),
        "{text}"
    );
}

#[test]
fn index_node_pages_single_file_and_markdown_agree_with_check() {
    let nodes = check_json();
    let bundles = wire_report::inputs::load_nodes(&[PathBuf::from("captures")]).unwrap();
    let site = render::render_site(&bundles).unwrap().files;
    let index = std::str::from_utf8(&site["index.html"]).unwrap();
    let mut seen = 0;
    for b in &bundles {
        let name = &b.host.name;
        let want = &nodes[name];
        let verdict = want["verdict"].as_str().unwrap();
        let sev = severities(want);
        // The index row: `<a href="nodes/<slug>/index.html">name</a>` and
        // the verdict's badge in the next cell.
        let row_at = index
            .find(&format!("\">{name}</a></td>"))
            .unwrap_or_else(|| panic!("{name} not on the index"));
        let row = &index[row_at..];
        let badge = row.split("<span class=\"verdict ").nth(1).unwrap();
        let shown = badge.split('>').nth(1).unwrap().split('<').next().unwrap();
        assert_eq!(shown, verdict, "{name}: index");
        let href = index[..row_at].rsplit("<a href=\"").next().unwrap();
        let page = std::str::from_utf8(&site[href]).unwrap();
        assert_eq!(page_verdict(page), verdict, "{name}: node page");
        assert_eq!(page_severities(page), grouped(want), "{name}: node page");
        // What to do is open (and so printed) under every finding.
        assert_eq!(
            page.matches("<details class=\"todo\" open>").count(),
            grouped(want).len(),
            "{name}"
        );
        // The single file of this node alone.
        let single = render::render_single_file(std::slice::from_ref(b)).unwrap();
        assert_eq!(page_verdict(&single), verdict, "{name}: single file");
        assert_eq!(
            page_severities(&single),
            grouped(want),
            "{name}: single file"
        );
        // The markdown summary.
        let md = render::markdown::render_markdown(std::slice::from_ref(b));
        assert!(
            md.contains(&format!("**Verdict: {verdict}**")),
            "{name}: markdown\n{md}"
        );
        let md_sev: Vec<String> = md
            .lines()
            .filter_map(|l| l.strip_prefix("- **"))
            .map(|l| l.split("**").next().unwrap().to_string())
            .collect();
        assert_eq!(md_sev, sev, "{name}: markdown");
        seen += 1;
    }
    assert_eq!(seen, nodes.len());
}

#[test]
fn the_readme_prints_the_checks_and_the_severity_table_as_the_code_has_them() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let checks = wire_report::diagnosis::checks::markdown_table();
    let severity = wire_report::diagnosis::severity::markdown_table();
    assert!(
        readme.contains(&checks),
        "README.md lacks the check list; paste:\n{checks}"
    );
    assert!(
        readme.contains(&severity),
        "README.md lacks the severity table; paste:\n{severity}"
    );
}

#[test]
fn a_node_that_cannot_be_read_is_its_own_verdict_and_fails_the_gate() {
    // Synthetic: a cut bundle beside a real node's transcripts.
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good");
    std::fs::create_dir_all(&good).unwrap();
    for e in std::fs::read_dir("captures/rtx3090-4gpu").unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), good.join(e.file_name())).unwrap();
    }
    let bad = dir.path().join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(
        bad.join("bundle.json"),
        "{\"schema_version\": 3, \"host\": {\"na",
    )
    .unwrap();
    let run = |fail_on: &str| {
        wr().args(["check", "--json", "--fail-on", fail_on])
            .arg(dir.path())
            .output()
            .unwrap()
    };
    let out = run("none");
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let verdicts: Vec<(&str, &str)> = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["node"].as_str().unwrap(), n["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(verdicts, [("bad", "unreadable"), ("good", "incomplete")]);
    assert_eq!(run("critical").status.code(), Some(1));
}
