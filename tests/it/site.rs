//! The rendered site: the golden copy in `site/` (UPDATE_SITE=1 rewrites
//! it), links and anchors that resolve, escaping of transcript text,
//! determinism, and the single-file report.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use wire_report::bundle::{Bundle, Host, Origin};
use wire_report::render;

pub(crate) fn captures_site() -> BTreeMap<String, Vec<u8>> {
    let bundles = wire_report::inputs::load_nodes(&[PathBuf::from("captures")]).unwrap();
    render::render_site(&bundles).unwrap().files
}

#[test]
fn golden_site_matches_a_fresh_render() {
    let files = captures_site();
    let root = Path::new("site");
    if std::env::var_os("UPDATE_SITE").is_some() {
        wire_report::fs::write_site(root, &files).unwrap();
    }
    let mut on_disk = BTreeSet::new();
    for e in walkdir::WalkDir::new(root) {
        let e = e.unwrap();
        if e.file_type().is_file() && e.file_name() != wire_report::fs::SITE_MANIFEST {
            on_disk.insert(
                e.path()
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/"),
            );
        }
    }
    let rendered: BTreeSet<String> = files.keys().cloned().collect();
    let orphans: Vec<_> = on_disk.difference(&rendered).collect();
    let missing: Vec<_> = rendered.difference(&on_disk).collect();
    assert!(
        orphans.is_empty() && missing.is_empty(),
        "site/ is stale (run UPDATE_SITE=1 cargo test --test it site::golden): orphans {orphans:?}, missing {missing:?}"
    );
    for (rel, bytes) in &files {
        let old = std::fs::read(root.join(rel)).unwrap();
        assert!(
            old == *bytes,
            "site/{rel} differs from a fresh render (run UPDATE_SITE=1 cargo test --test it site::golden)"
        );
    }
}

#[test]
fn render_is_deterministic() {
    assert_eq!(captures_site(), captures_site());
}

/// `href="..."` and `id="..."` values in one HTML page.
fn attrs<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
    let pat = format!("{name}=\"");
    html.match_indices(&pat)
        .filter_map(|(i, _)| {
            let rest = &html[i + pat.len()..];
            rest.find('"').map(|e| &rest[..e])
        })
        .collect()
}

#[test]
fn every_link_and_anchor_resolves_and_nothing_is_fetched_from_outside() {
    let files = captures_site();
    let ids: BTreeMap<&str, BTreeSet<&str>> = files
        .iter()
        .filter(|(k, _)| k.ends_with(".html"))
        .map(|(k, v)| {
            (
                k.as_str(),
                attrs(std::str::from_utf8(v).unwrap(), "id")
                    .into_iter()
                    .collect(),
            )
        })
        .collect();
    let mut checked = 0;
    for (page, bytes) in &files {
        if !page.ends_with(".html") {
            continue;
        }
        let html = std::str::from_utf8(bytes).unwrap();
        assert!(
            !html.contains("src=\"http") && !html.contains("href=\"http"),
            "{page} fetches from outside"
        );
        assert!(
            !html.contains("@import") && !html.contains("url(http"),
            "{page} imports a remote resource"
        );
        for href in attrs(html, "href").into_iter().chain(attrs(html, "src")) {
            let (path, frag) = href.split_once('#').unwrap_or((href, ""));
            let target = if path.is_empty() {
                page.clone()
            } else {
                let base = Path::new(page).parent().unwrap_or(Path::new(""));
                normalize(&base.join(path))
            };
            assert!(
                files.contains_key(&target),
                "{page}: link `{href}` points to missing `{target}`"
            );
            if !frag.is_empty() {
                assert!(
                    ids.get(target.as_str()).is_some_and(|s| s.contains(frag)),
                    "{page}: anchor `{href}` not found"
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 1000, "only {checked} links checked");
}

fn normalize(p: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            _ => {}
        }
    }
    parts.join("/")
}

#[test]
fn transcript_text_is_escaped_everywhere() {
    // SYNTHETIC: a real nvlink --status capture with a hostile GPU name.
    let real = std::fs::read_to_string(
        "captures/rtx-a6000-3gpu-nvlink-bridge/nvlink-status-001-3x-rtx-a6000-one-gpu-links-inactive.txt",
    )
    .unwrap();
    let hostile = real.replace("NVIDIA RTX A6000", "<script>alert(1)</script>");
    let mut b = Bundle::new(Host {
        name: "synthetic-<b>evil</b>".into(),
        origin: Origin::Ingested,
    });
    b.absorb(wire_report::ingest::read_transcript(
        "synthetic/nvlink-<img src=x>.txt",
        hostile.as_bytes(),
    ));
    assert_eq!(b.transcripts.len(), 1);
    assert!(
        b.topology.devices[0]
            .name
            .as_deref()
            .unwrap()
            .contains("<script>")
    );
    let site = render::render_site(std::slice::from_ref(&b)).unwrap();
    let single = render::render_single_file(std::slice::from_ref(&b)).unwrap();
    let mut pages: Vec<String> = site
        .files
        .iter()
        .filter(|(k, _)| k.ends_with(".html"))
        .map(|(_, v)| String::from_utf8(v.clone()).unwrap())
        .collect();
    pages.push(single);
    for html in &pages {
        // The single file's own bundle carriers are the only scripts.
        let own = html
            .matches("<script type=\"application/json\" class=\"wire-report-bundle\"")
            .count();
        assert_eq!(
            html.matches("<script").count(),
            own,
            "a raw <script> reached the page"
        );
        assert!(!html.contains("<img src=x"), "a raw <img> reached the page");
        assert!(!html.contains("<b>evil"), "the node name was not escaped");
    }
    let shown = pages.iter().find_map(|h| {
        h.find("alert(1)")
            .map(|i| h[i.saturating_sub(40)..i + 40].to_string())
    });
    assert!(
        pages
            .iter()
            .any(|h| h.contains("&#60;script&#62;alert(1)&#60;")),
        "escaped name not shown: {shown:?}"
    );
}

#[test]
fn single_file_report_is_self_contained() {
    let bundles =
        wire_report::inputs::load_nodes(&[PathBuf::from("captures/rtx2080ti-2gpu-autodl")])
            .unwrap();
    let html = render::render_single_file(&bundles).unwrap();
    assert!(html.contains("<style>") && !html.contains("<link rel=\"stylesheet\""));
    assert!(html.contains("<svg"));
    let ids: BTreeSet<&str> = attrs(&html, "id").into_iter().collect();
    for href in attrs(&html, "href") {
        let frag = href
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("non-local link {href}"));
        assert!(
            frag.is_empty() || ids.contains(frag),
            "anchor {href} missing"
        );
    }
    // The finding that matters on this node, with its evidence link.
    assert!(html.contains("silent-staging"));
    assert!(html.len() < 1_500_000, "{} bytes", html.len());
}

/// The rows of the index: each row's cells as text, tags stripped.
fn index_rows(html: &str) -> Vec<Vec<String>> {
    let strip = |s: &str| {
        let mut out = String::new();
        let mut in_tag = false;
        for c in s.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.trim().to_string()
    };
    let body = html
        .split("<table class=\"index\">")
        .nth(1)
        .unwrap()
        .split("<tbody>")
        .nth(1)
        .unwrap()
        .split("</tbody>")
        .next()
        .unwrap();
    body.split("</tr>")
        .filter(|r| r.contains("<td"))
        .map(|r| {
            r.split("</td>")
                .filter(|c| c.contains("<td"))
                .map(|c| strip(&c[c.find("<td").unwrap()..]))
                .collect()
        })
        .collect()
}

#[test]
fn index_is_a_triage_page_most_severe_first_with_each_top_finding_and_named_hardware() {
    let files = captures_site();
    let html = std::str::from_utf8(&files["index.html"]).unwrap();
    let rows = index_rows(html);
    // One row per node directory under captures/.
    let nodes = wire_report::inputs::load_nodes(&[PathBuf::from("captures")]).unwrap();
    assert_eq!(rows.len(), nodes.len());
    let rank = |v: &str| {
        ["critical", "warning", "incomplete", "ok"]
            .iter()
            .position(|x| v.starts_with(x))
            .unwrap_or_else(|| panic!("verdict `{v}`"))
    };
    let ranks: Vec<usize> = rows.iter().map(|r| rank(&r[1])).collect();
    assert!(
        ranks.windows(2).all(|w| w[0] <= w[1]),
        "not sorted by severity: {ranks:?}"
    );
    assert!(ranks[0] == 0, "the shipped captures hold critical findings");
    let without_findings: std::collections::BTreeSet<String> = nodes
        .iter()
        .filter(|b| wire_report::render::Analysed::of(b).findings.is_empty())
        .map(|b| b.host.name.clone())
        .collect();
    for r in &rows {
        // A node with findings shows the top one in words; every verdict
        // says how many of its checks ran.
        assert_eq!(
            without_findings.contains(&r[0]),
            r[2].starts_with("none"),
            "{}: top finding `{}`",
            r[0],
            r[2]
        );
        assert!(r[1].contains("checks that apply ran"), "{r:?}");
        assert!(
            !r[3].contains("not described") && !r[4].contains("not described"),
            "{r:?}"
        );
    }
    let row = |name: &str| rows.iter().find(|r| r[0] == name).unwrap();
    assert_eq!(row("rtx3090-4gpu")[3], "4 x GeForce RTX 3090");
    assert_eq!(row("a100-sxm4-80gb-8gpu")[3], "8 x NVIDIA A100-SXM4-80GB");
    assert_eq!(row("mi300x-8gpu-k8s")[3], "8 x AMD Instinct MI300X");
    assert_eq!(row("tesla-t4")[3], "1 x Tesla T4");
    // `nvidia-smi -q` says 2 attached; the capture shows one GPU's section.
    assert_eq!(
        row("rtx4060ti-2gpu")[3],
        "2: 1 x NVIDIA GeForce RTX 4060 Ti"
    );
    assert_eq!(row("dgx1v-v100-8gpu-1nic")[3], "8 (model not named)");
    assert!(
        row("h100-8nic-ndr400")[4].starts_with("8 x MT4129, 1 x MT41692"),
        "{:?}",
        row("h100-8nic-ndr400")
    );
    assert!(row("soft-roce-k8s")[4].contains("rxe0"));
    // Counts by verdict at the top, and an offline filter.
    assert!(html.contains("<span class=\"verdict v-critical\">"));
    assert!(
        html.contains("id=\"only-findings\"")
            && std::str::from_utf8(&files["style.css"])
                .unwrap()
                .contains("#only-findings:checked ~ .scroll table.index tr.r-v-ok")
    );
    // A dark style and a print style (what to do expanded).
    let css = std::str::from_utf8(&files["style.css"]).unwrap();
    assert!(css.contains("@media (prefers-color-scheme: dark)"));
    assert!(css.contains("@media print") && css.contains("details::details-content"));
}

#[test]
fn no_empty_furniture_and_no_chart_text_under_11_px() {
    let files = captures_site();
    for (page, bytes) in files.iter().filter(|(k, _)| k.ends_with(".html")) {
        let html = std::str::from_utf8(bytes).unwrap();
        for (i, _) in html.match_indices("font-size=\"") {
            let v: f64 = html[i + 11..].split('"').next().unwrap().parse().unwrap();
            assert!(v >= 11.0, "{page}: SVG text at {v} px");
        }
        assert!(
            !html.contains("Not computed"),
            "{page}: an empty model panel"
        );
        assert!(!html.contains("href=\"\""), "{page}: an empty link");
        assert!(html.matches("Views not drawn").count() <= 1, "{page}");
    }
    // DGX-1V: a topology only, so no ladder; its models run on the
    // product tables, and what the ladder needs is said once.
    let dgx = std::str::from_utf8(&files["nodes/dgx1v-v100-8gpu-1nic/index.html"]).unwrap();
    assert!(!dgx.contains("<h2>Ladder</h2>"));
    assert!(dgx.contains("<title>injection cliff: "));
    assert!(dgx.contains("Views not drawn for lack of evidence: the ladder needs"));
}

/// `render` on the command line loads, renders and writes one node at a
/// time; what it writes is the golden site, file for file.
#[test]
fn streaming_render_writes_the_golden_site() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("site");
    crate::common::wr()
        .args(["render", "captures", "--out"])
        .arg(&out)
        .assert()
        .success();
    let files = |root: &std::path::Path| -> Vec<(String, Vec<u8>)> {
        walkdir::WalkDir::new(root)
            .sort_by_file_name()
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let rel = e.path().strip_prefix(root).unwrap().display().to_string();
                (rel, std::fs::read(e.path()).unwrap())
            })
            .collect()
    };
    let (mine, golden) = (files(&out), files(std::path::Path::new("site")));
    assert_eq!(mine.len(), golden.len());
    for ((a, x), (b, y)) in mine.iter().zip(&golden) {
        assert_eq!(a, b);
        assert!(x == y, "{a} differs from the golden site");
    }
}

/// A bundle rendered into a site is offered for download as the very bytes
/// it was read from (here a version 1 bundle stays version 1).
#[test]
fn a_bundle_input_is_copied_into_the_site_byte_for_byte() {
    let d = tempfile::tempdir().unwrap();
    let node = d.path().join("fleet/dgx1v");
    std::fs::create_dir_all(&node).unwrap();
    let v1 = std::fs::read("tests/fixtures/v1-dgx1v-bundle.json").unwrap();
    std::fs::write(node.join("bundle.json"), &v1).unwrap();
    let out = d.path().join("site");
    crate::common::wr()
        .arg("render")
        .arg(d.path().join("fleet"))
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let copy = out.join("nodes/dgx1v-v100-8gpu-1nic/bundle.json");
    assert_eq!(std::fs::read(copy).unwrap(), v1);
    let page = std::fs::read_to_string(out.join("nodes/dgx1v-v100-8gpu-1nic/index.html")).unwrap();
    assert!(page.contains("GPU7"));
}

#[test]
fn a_live_bundle_plots_its_host_memcpy_sweep_with_no_empty_link_and_problems_said_once() {
    use wire_report::bundle::{Probe, ProbeStatus, Problem, ProblemKind};
    use wire_report::evidence::measurement::{Kind, Measurement, Statistic};
    // Synthetic: the shape of a live collect on a machine without GPU tools.
    let mut b = Bundle::new(Host {
        name: "live-node".into(),
        origin: Origin::Live,
    });
    for (stat, scale) in [
        (Statistic::Median, 1.0),
        (Statistic::Max, 1.2),
        (Statistic::Min, 0.8),
    ] {
        for size in [4096u64, 65536, 1 << 20] {
            let mut m = Measurement::new("wire-report", 0, Kind::H2h, "host memcpy", stat);
            m.source.file = "host memcpy sweep".into();
            m.size_bytes = Some(size);
            m.bandwidth_bytes_per_s = Some(scale * 10e9);
            b.measurements.push(m);
        }
    }
    b.probes.push(Probe {
        name: "nvidia-smi topo -m".into(),
        status: ProbeStatus::Absent,
        duration_s: 0.0,
        transcript: None,
        message: "nvidia-smi is not on PATH".into(),
    });
    b.problems.push(Problem {
        file: "nvidia-smi topo -m".into(),
        line: None,
        kind: ProblemKind::Probe,
        message: "nvidia-smi is not on PATH".into(),
    });
    let site = render::render_site(&[b]).unwrap();
    let page = std::str::from_utf8(&site.files["nodes/live-node/index.html"]).unwrap();
    assert!(!page.contains("href=\"\""), "an empty link");
    assert_eq!(
        page.matches("nvidia-smi is not on PATH").count(),
        1,
        "problem said twice"
    );
    assert!(
        page.contains("median of the repetitions") && page.contains("slowest of the repetitions")
    );
    assert!(page.contains("<h2>Size sweeps</h2>"));
    assert!(!page.contains("<h2>Transcripts</h2>"), "an empty section");
}

#[test]
fn heatmap_scales_leave_the_diagonal_out() {
    let files = captures_site();
    let page = std::str::from_utf8(&files["nodes/rtx2080ti-2gpu-autodl/index.html"]).unwrap();
    let matrix = page.split("<div class=\"vmatrix\">").nth(1).unwrap();
    let cells: Vec<&str> = matrix
        .split("<td style=\"")
        .skip(1)
        .map(|c| c.split('"').next().unwrap())
        .take(4)
        .collect();
    // 2 x 2: the diagonal grey, the two links coloured on their own scale,
    // the better of them at the darkest shade.
    assert_eq!(cells[0], "background:#e5e7eb");
    assert_eq!(cells[3], "background:#e5e7eb");
    assert!(cells[1].starts_with("background:hsl(") && cells[2].starts_with("background:hsl("));
    assert!(
        cells[1..3].contains(&"background:hsl(210,70%,45%);color:#fff"),
        "{cells:?}"
    );
}

#[test]
fn latency_sweeps_get_their_own_microsecond_axis() {
    let files = captures_site();
    let page = std::str::from_utf8(&files["nodes/a100-sxm4-8gpu-superbench/index.html"]).unwrap();
    let latency = page
        .split("<svg")
        .find(|s| s.contains("latency (log; us = 1e-6 s)"))
        .expect("a latency chart");
    // Power-of-two sizes: a binary size axis.
    assert!(latency.contains("KiB = 1024 bytes") && latency.contains("1 KiB"));
}

#[test]
fn no_output_names_the_folders_of_the_machine_that_rendered_it() {
    // The captures given by their absolute path: every output names them
    // from `captures/` on, never from `/` (transcript pages, the markdown
    // summary, the single file, the bundles).
    let abs = std::fs::canonicalize("captures").unwrap();
    let root = abs.parent().unwrap().display().to_string();
    let node = abs.join("dgx1v-v100-8gpu-1nic");
    let out = tempfile::tempdir().unwrap();
    let site = out.path().join("site");
    let single = out.path().join("one.html");
    let md = out.path().join("t.md");
    let ok = |args: &[&std::ffi::OsStr]| {
        let o = crate::common::wr().args(args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    ok(&[
        "render".as_ref(),
        node.as_os_str(),
        "--out".as_ref(),
        site.as_os_str(),
    ]);
    ok(&[
        "render".as_ref(),
        node.as_os_str(),
        "--single-file".as_ref(),
        single.as_os_str(),
    ]);
    ok(&[
        "render".as_ref(),
        node.as_os_str(),
        "--format".as_ref(),
        "md".as_ref(),
        "--out".as_ref(),
        md.as_os_str(),
    ]);
    let mut files = 0;
    for e in walkdir::WalkDir::new(out.path()) {
        let e = e.unwrap();
        if !e.file_type().is_file() {
            continue;
        }
        files += 1;
        let text = String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).into_owned();
        assert!(
            !text.contains(&root),
            "{} names `{root}`",
            e.path().display()
        );
    }
    assert!(files >= 5, "{files} files");
    // And the node is named from the folder given on.
    let page = std::fs::read_to_string(single).unwrap();
    assert!(
        page.contains("dgx1v-v100-8gpu-1nic/nvidia-topo-"),
        "no relative name"
    );
}
