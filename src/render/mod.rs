//! Render: bundles become a static site, in memory. Nothing here touches
//! the filesystem; the caller writes [`Site::files`] through one choke
//! point. Deterministic: the same bundles give the same bytes (no clock,
//! ordered maps only, plotters writing SVG text without fonts).
//!
//! Layout of a site:
//! ```text
//! index.html                  every node: headline facts, findings, evidence
//! style.css
//! nodes/<node>/index.html     topology, matrices, sweeps, ladder, models,
//!                             interpretation, diagnosis
//! nodes/<node>/t<i>.html      each transcript, escaped, with line anchors
//! nodes/<node>/bundle.json    the bundle, downloadable
//! ```
//! `<node>` and `t<i>` are slugs, decided for every node and transcript by
//! [`view::Slugs::decide`] before any view is built; nothing else makes one.
//!
//! Each node is analysed once ([`analyse`]: its [`NodeFacts`] and its
//! findings) before anything is drawn; the pages, the fleet and the ticket
//! summary read that analysis. The words of a finding are chosen in
//! [`explain`], the words of a diff in [`diff`], and every number is
//! written by [`format`].

pub mod answers;
pub mod charts;
pub mod diff;
pub mod explain;
pub mod fleet;
pub mod format;
pub mod key_figures;
pub mod ladder_chart;
pub mod markdown;
pub mod model_charts;
pub mod single;
pub mod trust;
pub mod verdicts;
pub mod view;

use std::collections::BTreeMap;

use askama::Template;

use crate::bundle::Bundle;
use crate::diagnosis::{self, Diagnosed};
use crate::facts::NodeFacts;
use view::{Mode, NodeSlugs, NodeView, Slugs, TranscriptView};

/// One node as render sees it: its bundle, its facts and its findings,
/// each computed once.
pub struct Analysed<'a> {
    pub bundle: &'a Bundle,
    pub facts: NodeFacts,
    pub findings: Vec<Diagnosed>,
    /// The checks of the diagnosis flow and the verdict ([`diagnosis::assess`]).
    pub checks: Vec<diagnosis::Check>,
    pub verdict: diagnosis::Verdict,
}

impl<'a> Analysed<'a> {
    pub fn of(bundle: &'a Bundle) -> Analysed<'a> {
        let facts = NodeFacts::of(bundle);
        let a = diagnosis::assess(bundle, &facts);
        Analysed {
            bundle,
            facts,
            findings: a.findings,
            checks: a.checks,
            verdict: a.verdict,
        }
    }
}

/// Every node analysed, in parallel, in the order given.
pub fn analyse(bundles: &[Bundle]) -> Vec<Analysed<'_>> {
    use rayon::prelude::*;
    bundles.par_iter().map(Analysed::of).collect()
}

/// The stylesheet, embedded in the binary.
pub const CSS: &str = include_str!("../../static/style.css");

/// A rendered site: relative path to bytes.
#[derive(Debug, Default)]
pub struct Site {
    pub files: BTreeMap<String, Vec<u8>>,
}

/// One row of the index.
pub struct NodeSummary {
    pub name: String,
    pub href: String,
    /// One of [`view::index::VERDICTS`].
    pub verdict: &'static str,
    /// The verdict as a CSS class: `v-critical`, `v-incomplete`...
    pub verdict_class: String,
    /// `6 of 8 checks that apply ran`, and what to run next.
    pub coverage: String,
    pub next: String,
    /// The top finding in words, and the link to its evidence line (from
    /// the index).
    pub top_finding: String,
    pub top_href: String,
    pub gpus: String,
    pub nics: String,
    pub shape: String,
    pub critical: usize,
    pub warning: usize,
    pub info: usize,
    pub collected: Vec<String>,
    pub missing: String,
    pub problems: usize,
    /// Each kind of finding the node has, with its worst severity, once.
    pub kinds: Vec<(&'static str, crate::diagnosis::Severity)>,
}

/// One kind of finding across the nodes: how many have it, and which.
pub struct FindingGroup {
    pub severity: &'static str,
    pub kind: &'static str,
    /// What the kind says, in a few words (`adapter across a host bridge`).
    pub title: &'static str,
    /// The nodes (name, link), most severe node first, at most
    /// [`GROUP_LIST`] of them; `more` counts the rest.
    pub nodes: Vec<(String, String)>,
    pub more: usize,
    pub count: usize,
}

/// Nodes listed by name in one group of the index; past it a count (the
/// node list below names every node once).
const GROUP_LIST: usize = 60;

/// Above this many nodes the index lists nodes compactly, by verdict, and
/// not one table row each: a fleet's index stays small enough to open.
pub const DETAILED_ROWS: usize = 256;

/// A topology signature, how many nodes have it, and (at most
/// [`GROUP_LIST`] of) them as (name, link).
pub type TopologyGroup = (String, usize, Vec<(String, String)>);

/// One heatmap cell: text, inline colour, whether it is flagged.
pub struct FleetCell {
    pub text: String,
    pub style: String,
    pub outlier: bool,
}

/// One node's heatmap row.
pub struct FleetRow {
    pub name: String,
    pub href: String,
    pub cells: Vec<FleetCell>,
}

/// The fleet part of the index (two nodes or more).
pub struct FleetView {
    /// Topology signature, how many nodes have it, and (at most
    /// [`GROUP_LIST`] of) them.
    pub groups: Vec<TopologyGroup>,
    /// Why the node x metric grid is not drawn, when it is not.
    pub grid_note: String,
    pub columns: Vec<String>,
    pub rows: Vec<FleetRow>,
    pub outliers: Vec<String>,
    pub hidden_metrics: usize,
}

#[derive(Template)]
#[template(path = "index.html")]
struct IndexPage<'a> {
    title: String,
    css_href: &'a str,
    inline_css: &'a str,
    home_href: &'a str,
    version: &'a str,
    nodes: &'a Triage,
    fleet: Option<FleetView>,
}

#[derive(Template)]
#[template(path = "node.html")]
struct NodePage<'a> {
    title: String,
    css_href: &'a str,
    inline_css: &'a str,
    home_href: &'a str,
    version: &'a str,
    node: &'a NodeView,
}

#[derive(Template)]
#[template(path = "transcript.html")]
struct TranscriptPage<'a> {
    title: String,
    css_href: &'a str,
    inline_css: &'a str,
    home_href: &'a str,
    version: &'a str,
    t: &'a TranscriptView,
}

/// Most metrics shown as heatmap columns; the rest are counted.
const FLEET_COLUMNS: usize = 16;

/// The fleet comparison, for two nodes or more: `nodes` is what each node
/// left for it, `slugs` each node's slug in the same order; `link` makes a
/// node's link from its slug.
fn fleet_view(
    nodes: Vec<fleet::FleetNode>,
    slugs: &[String],
    link: &dyn Fn(&str) -> String,
) -> Option<FleetView> {
    if nodes.len() < 2 {
        return None;
    }
    let names: Vec<String> = nodes.iter().map(|n| n.name.clone()).collect();
    let f = fleet::fleet_from(nodes);
    let nodes = || names.iter().zip(slugs);
    let groups = topology_groups(nodes(), &f.signatures, link);
    // The metrics most nodes have first.
    let mut metrics = f.metrics.clone();
    metrics.sort_by_key(|k| {
        (
            std::cmp::Reverse(f.values.values().filter(|m| m.contains_key(k)).count()),
            k.clone(),
        )
    });
    let hidden = metrics.len().saturating_sub(FLEET_COLUMNS);
    metrics.truncate(FLEET_COLUMNS);
    let flagged: std::collections::BTreeSet<(&str, &str)> = f
        .outliers
        .iter()
        .map(|o| (o.node.as_str(), o.metric.as_str()))
        .collect();
    // The grid only where it is dense: most cells filled, few enough rows
    // to read. A sparse grid of thousands of rows says less than the
    // outliers above it and costs most of the index.
    let filled: usize = names
        .iter()
        .map(|n| {
            metrics
                .iter()
                .filter(|k| f.values.get(n).is_some_and(|m| m.contains_key(*k)))
                .count()
        })
        .sum();
    let cells = names.len() * metrics.len();
    let fill = if cells == 0 {
        0.0
    } else {
        filled as f64 / cells as f64
    };
    let dense = names.len() <= DETAILED_ROWS && fill >= 0.5;
    let grid_note = format!(
        "{} nodes x {} metrics, {:.0}% of the cells filled: the grid is drawn only where it is dense (half its cells filled or more, at most {DETAILED_ROWS} nodes); the outliers above compare every node with those wired like it.",
        names.len(),
        metrics.len(),
        100.0 * fill
    );
    let rows = nodes()
        .filter(|_| dense)
        .map(|(name, s)| {
            let cells = metrics
                .iter()
                .map(|k| fleet_cell(&f, &flagged, name, k))
                .collect();
            FleetRow {
                name: name.clone(),
                href: link(s),
                cells,
            }
        })
        .collect();
    let outliers = f.outliers.iter().map(outlier_line).collect();
    Some(FleetView {
        groups,
        grid_note,
        columns: metrics.into_iter().map(|k| k.0).collect(),
        rows,
        outliers,
        hidden_metrics: hidden,
    })
}

/// The nodes grouped by wiring signature, most nodes first: each group's
/// signature, its node count and (at most [`GROUP_LIST`] of) its nodes as
/// (name, link).
fn topology_groups<'a>(
    nodes: impl Iterator<Item = (&'a String, &'a String)>,
    signatures: &[String],
    link: &dyn Fn(&str) -> String,
) -> Vec<TopologyGroup> {
    let mut groups: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for ((name, s), signature) in nodes.zip(signatures) {
        groups
            .entry(signature.clone())
            .or_default()
            .push((name.clone(), link(s)));
    }
    let mut groups: Vec<TopologyGroup> = groups
        .into_iter()
        .map(|(sig, mut nodes)| {
            let count = nodes.len();
            nodes.truncate(GROUP_LIST);
            (sig, count, nodes)
        })
        .collect();
    groups.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    groups
}

/// One cell of the fleet grid: node `name`'s median and worst of metric
/// `k` in GB/s, shaded darker the further its worst falls below the
/// fleet's median; empty where the node has no such figure.
fn fleet_cell(
    f: &fleet::Fleet,
    flagged: &std::collections::BTreeSet<(&str, &str)>,
    name: &str,
    k: &fleet::MetricKey,
) -> FleetCell {
    match f.values.get(name).and_then(|m| m.get(k)) {
        Some(v) => {
            let (med, _) = f.stats.get(k).map(|s| s.0).unwrap_or((f64::NAN, 0.0));
            let ratio = if med > 0.0 { v.worst / med } else { 1.0 };
            let light = (97.0 - 40.0 * (1.0 - ratio.clamp(0.0, 1.0))).round();
            FleetCell {
                text: format!("{:.1} / {:.1}", v.median / 1e9, v.worst / 1e9),
                style: format!("background:hsl(0,70%,{light}%)"),
                outlier: flagged.contains(&(name, k.0.as_str())),
            }
        }
        None => FleetCell {
            text: String::new(),
            style: String::new(),
            outlier: false,
        },
    }
}

/// An outlier in words, against the nodes wired like it.
fn outlier_line(o: &fleet::Outlier) -> String {
    format!(
        "{}: {} {} is {}{} against a median of {} (MAD {}) among nodes wired like it",
        o.node,
        o.metric,
        o.which,
        format::gbs_fixed(o.value, 2),
        o.at.as_ref().map(|a| format!(", {a},")).unwrap_or_default(),
        format::gbs_fixed(o.fleet_median, 2),
        format::gbs_fixed(o.fleet_mad, 2)
    )
}

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn summary(v: &NodeView, href: String) -> NodeSummary {
    // Links of a node's page are relative to it; the index is two up.
    let base = href.strip_suffix("index.html").unwrap_or("");
    let (top_finding, top_href) = match &v.top_finding {
        Some((s, l)) => (
            s.clone(),
            l.as_ref()
                .map(|l| format!("{base}{}", l.href))
                .unwrap_or_default(),
        ),
        None => (String::new(), String::new()),
    };
    NodeSummary {
        name: v.name.clone(),
        href,
        verdict: v.verdict,
        verdict_class: view::index::verdict_class(v.verdict),
        coverage: v.coverage.clone(),
        next: v.next.clone().unwrap_or_default(),
        top_finding,
        top_href,
        gpus: v.gpus_named.clone(),
        nics: v.nics_named.clone(),
        shape: v.shape.clone(),
        critical: v.critical,
        warning: v.warning,
        info: v.info,
        collected: v.collected.clone(),
        missing: if v.missing.is_empty() {
            String::new()
        } else {
            format!("{} kinds", v.missing.len())
        },
        problems: v.problems.len(),
        kinds: {
            let mut k: Vec<(&'static str, crate::diagnosis::Severity)> = Vec::new();
            for f in &v.findings {
                let sev = crate::diagnosis::Severity::of(f.severity);
                match k.iter_mut().find(|x| x.0 == f.kind) {
                    Some(x) => x.1 = x.1.min(sev),
                    None => k.push((f.kind, sev)),
                }
            }
            k
        },
    }
}

/// Index rows by severity (verdict, then critical, warning and info
/// counts, then name), and the count of nodes of each verdict.
fn triage(mut rows: Vec<NodeSummary>) -> Triage {
    use std::cmp::Reverse;
    rows.sort_by_key(|r| {
        (
            view::index::verdict_rank(r.verdict),
            Reverse(r.critical),
            Reverse(r.warning),
            Reverse(r.info),
            r.name.clone(),
        )
    });
    let verdicts = view::index::VERDICTS
        .iter()
        .map(|v| {
            let n = rows.iter().filter(|r| r.verdict == *v).count();
            (*v, view::index::verdict_class(v), n)
        })
        .collect();
    let groups = finding_groups(&rows);
    let detailed = rows.len() <= DETAILED_ROWS;
    Triage {
        rows,
        verdicts,
        groups,
        detailed,
    }
}

/// Every kind of finding with the nodes that have it, most severe kind
/// first, then the most nodes.
fn finding_groups(rows: &[NodeSummary]) -> Vec<FindingGroup> {
    let mut by: BTreeMap<(crate::diagnosis::Severity, &'static str), Vec<&NodeSummary>> =
        BTreeMap::new();
    for r in rows {
        for (kind, sev) in &r.kinds {
            by.entry((*sev, kind)).or_default().push(r);
        }
    }
    let mut groups: Vec<FindingGroup> = by
        .into_iter()
        .map(|((sev, kind), nodes)| FindingGroup {
            severity: sev.as_str(),
            kind,
            title: explain::kind_title(kind),
            count: nodes.len(),
            more: nodes.len().saturating_sub(GROUP_LIST),
            nodes: nodes
                .iter()
                .take(GROUP_LIST)
                .map(|n| (n.name.clone(), n.href.clone()))
                .collect(),
        })
        .collect();
    groups.sort_by_key(|g| {
        (
            crate::diagnosis::Severity::of(g.severity),
            std::cmp::Reverse(g.count),
        )
    });
    groups
}

/// The index rows, most severe first, and the count of each verdict.
pub struct Triage {
    pub rows: Vec<NodeSummary>,
    pub verdicts: Vec<(&'static str, String, usize)>,
    /// Each kind of finding across the nodes.
    pub groups: Vec<FindingGroup>,
    /// One table row per node (small sites), else a compact list by verdict.
    pub detailed: bool,
}

/// The multi-page site.
pub fn render_site(bundles: &[Bundle]) -> anyhow::Result<Site> {
    use rayon::prelude::*;
    let slugs = Slugs::decide(bundles);
    let nodes = analyse(bundles);
    let views: Vec<NodeView> = nodes
        .par_iter()
        .zip(slugs.nodes())
        .map(|(n, s)| view::node_view(n, s, Mode::Site))
        .collect();
    let mut site = Site::default();
    site.files
        .insert("style.css".into(), CSS.as_bytes().to_vec());
    let summaries: Vec<NodeSummary> = views
        .iter()
        .map(|v| summary(v, format!("nodes/{}/index.html", v.slug)))
        .collect();
    let fleet_nodes = fleet_nodes(&nodes);
    let node_slugs: Vec<String> = slugs.nodes().iter().map(|s| s.node.clone()).collect();
    site.files.insert(
        "index.html".into(),
        index_page(summaries, fleet_nodes, &node_slugs)?,
    );
    // Pages of each node, rendered in parallel and gathered in order.
    let pages: Vec<anyhow::Result<Files>> = views
        .par_iter()
        .zip(bundles)
        .zip(slugs.nodes())
        .map(|((v, b), s)| node_files(v, b, s, None))
        .collect();
    for p in pages {
        site.files.extend(p?);
    }
    Ok(site)
}

/// What the fleet needs of every node, for nodes already analysed.
fn fleet_nodes(nodes: &[Analysed<'_>]) -> Vec<fleet::FleetNode> {
    if nodes.len() < 2 {
        return Vec::new();
    }
    nodes
        .iter()
        .map(|n| fleet::FleetNode::of(n.bundle, &n.facts))
        .collect()
}

/// The site's `index.html`: one row per node, and the fleet for two or
/// more (`fleet` and `slugs` in the order of `summaries`).
pub fn index_page(
    summaries: Vec<NodeSummary>,
    fleet: Vec<fleet::FleetNode>,
    slugs: &[String],
) -> anyhow::Result<Vec<u8>> {
    let summaries = triage(summaries);
    let index = IndexPage {
        title: "wire-report".into(),
        css_href: "style.css",
        inline_css: "",
        home_href: "index.html",
        version: VERSION,
        nodes: &summaries,
        fleet: fleet_view(fleet, slugs, &|slug| format!("nodes/{slug}/index.html")),
    };
    Ok(index.render()?.into_bytes())
}

/// One node of a streaming render: its files, its index row, and what the
/// fleet needs of it (absent when `with_fleet` is false), from its bundle
/// alone; `raw` is the bundle file's bytes when the node was read from one,
/// copied as the node's `bundle.json`.
pub struct RenderedNode {
    pub files: Files,
    pub summary: NodeSummary,
    pub fleet: Option<fleet::FleetNode>,
}

/// Renders one node for a site whose node slugs were decided beforehand.
pub fn render_node(
    b: &Bundle,
    node_slug: String,
    raw: Option<Vec<u8>>,
    with_fleet: bool,
) -> anyhow::Result<RenderedNode> {
    let slugs = NodeSlugs::of(node_slug, b);
    let n = Analysed::of(b);
    let v = view::node_view(&n, &slugs, Mode::Site);
    let files = node_files(&v, b, &slugs, raw)?;
    Ok(RenderedNode {
        files,
        summary: summary(&v, format!("nodes/{}/index.html", v.slug)),
        fleet: with_fleet.then(|| fleet::FleetNode::of(b, &n.facts)),
    })
}

/// Relative paths and contents.
pub type Files = Vec<(String, Vec<u8>)>;

/// The files of one node: its page, its transcripts, its bundle (`raw`
/// when given: the input's own bytes).
fn node_files(
    v: &NodeView,
    b: &Bundle,
    slugs: &NodeSlugs,
    raw: Option<Vec<u8>>,
) -> anyhow::Result<Files> {
    let mut out = Vec::new();
    let dir = format!("nodes/{}", slugs.node);
    let page = NodePage {
        title: format!("{}: wire-report", v.name),
        css_href: "../../style.css",
        inline_css: "",
        home_href: "../../index.html",
        version: VERSION,
        node: v,
    };
    out.push((format!("{dir}/index.html"), page.render()?.into_bytes()));
    for (t, slug) in v.transcript_views.iter().zip(&slugs.transcripts) {
        let page = TranscriptPage {
            title: format!("{} / {}", v.name, t.name),
            css_href: "../../style.css",
            inline_css: "",
            home_href: "../../index.html",
            version: VERSION,
            t,
        };
        out.push((format!("{dir}/{slug}.html"), page.render()?.into_bytes()));
    }
    // The input's bytes when it was a bundle; else the bundle as written.
    let json = match raw {
        Some(bytes) => bytes,
        None => {
            // As it always was here: without the file's trailing newline.
            let mut json = b.to_json_bytes();
            json.pop();
            json
        }
    };
    out.push((format!("{dir}/bundle.json"), json));
    Ok(out)
}

/// One self-contained HTML file (CSS and SVG inline) for a ticket, in
/// memory; `wire-report render --single-file` streams the same pieces
/// ([`single`]).
pub fn render_single_file(bundles: &[Bundle]) -> anyhow::Result<String> {
    let names = view::node_slugs(bundles.iter().map(|b| b.host.name.as_str()));
    let with_fleet = bundles.len() > 1;
    let mut parts = Vec::new();
    let (mut summaries, mut fleet) = (Vec::new(), Vec::new());
    for (b, slug) in bundles.iter().zip(&names) {
        let n = single::node(b, slug.clone(), with_fleet)?;
        parts.push(n.html);
        summaries.push(n.summary);
        fleet.extend(n.fleet);
    }
    let title = single::title(&summaries);
    let mut out = single::head(title, summaries, fleet, &names)?;
    for p in parts {
        out.push_str(&p);
    }
    out.push_str(&single::foot()?);
    Ok(out)
}

#[cfg(test)]
mod tests;
