//! A diff in words: each typed change of [`crate::diff`] becomes a row
//! (node, area, device or pair, before, after, why it matters), written as
//! text, as JSON (`diff --json`, the rows serialised) or as one
//! self-contained HTML page.

use serde::Serialize;

use crate::bundle::Bundle;
use crate::diff::{
    Change, ChangeKind, DEFAULT_RELATIVE_SPREAD, Diff, Figure, Listed, PairLink, PairedBy, Part,
    PcieState, PortState,
};
use crate::render::explain::pcie_label;
use crate::render::format::{gbs, size_short};

pub use crate::diff::{Area, Trend};

/// One change as people read it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangeRow {
    pub node: String,
    pub area: Area,
    /// The device, pair or figure that changed.
    pub what: String,
    pub before: String,
    pub after: String,
    /// Whether it matters (see [`Change::significant`]).
    pub significant: bool,
    /// Worse, better or neither.
    pub trend: Trend,
    pub why: String,
}

impl ChangeRow {
    pub fn area_str(&self) -> &'static str {
        self.area.as_str()
    }

    /// The row's class on the page: `t-worse`, `t-better`, `t-neutral`.
    pub fn trend_class(&self) -> String {
        format!("t-{}", self.trend.as_str())
    }

    /// The trend in words with a mark that reads without colour (and in
    /// print): `▼ worse`, `▲ better`, `• info`.
    pub fn trend_words(&self) -> &'static str {
        match self.trend {
            Trend::Worse => "\u{25bc} worse",
            Trend::Better => "\u{25b2} better",
            Trend::Neutral => "\u{2022} info",
        }
    }
}

/// Two nodes compared although their names differ, and why, in words.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairRow {
    pub before: String,
    pub after: String,
    pub by: PairedBy,
    /// `node-a (before) compared with node-b (after): ...`.
    pub sentence: String,
}

/// A diff as people read it: its rows by node, area and device, the
/// count of figures compared, and the nodes compared across names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffView {
    /// Nodes compared whatever their names; their changes are listed
    /// under the new name.
    pub paired: Vec<PairRow>,
    pub changes: Vec<ChangeRow>,
    /// Bandwidth figures compared, and how many moved within their spread.
    pub figures_compared: usize,
    pub within_spread: usize,
}

/// Compares two collections and writes the outcome in words.
pub fn diff_view(old: &[Bundle], new: &[Bundle]) -> DiffView {
    DiffView::of(&crate::diff::diff(old, new))
}

/// [`diff_view`] with the nodes named in `pairs` (old, new) compared
/// whatever their names.
pub fn diff_view_paired(
    old: &[Bundle],
    new: &[Bundle],
    pairs: &[(String, String)],
) -> Result<DiffView, crate::diff::PairError> {
    Ok(DiffView::of(&crate::diff::diff_paired(old, new, pairs)?))
}

/// What, before, after and why, for a part listed on one side only.
fn listed_words(l: &Listed, gone: bool) -> (String, String, String, String) {
    let what = match &l.detail {
        Some(d) if !d.is_empty() => format!("{} ({d})", l.id),
        _ => l.id.clone(),
    };
    let why = match (l.part, gone) {
        (Part::Gpu, true) => {
            "the GPU is no longer listed (off the bus, disabled, or hidden from the tool): work sized for every GPU of the node no longer fits"
        }
        (Part::Gpu, false) => "a GPU is listed that was not: more GPUs to place work on",
        (Part::Adapter, true) => {
            "the adapter is no longer listed: the node loses its share of network injection, and the GPUs near it their nearest way out"
        }
        (Part::Adapter, false) => {
            "an adapter is listed that was not: the node gains network injection"
        }
        (Part::Link, true) => {
            "the topology lists both devices but no longer their pair: how they reach each other is not known"
        }
        (Part::Link, false) => "the topology now describes a pair it did not",
        (Part::Nvlink, true) => {
            "the NVLink is down or no longer listed: its GPU has that much less direct bandwidth, and traffic may route around or stage through PCIe"
        }
        (Part::Nvlink, false) => "an NVLink is up that was not: its GPU gains direct bandwidth",
        (Part::RdmaPort, true) => {
            "the port is no longer listed: its adapter loses that port's share of injection"
        }
        (Part::RdmaPort, false) => "a port is listed that was not",
    };
    let (before, after) = match gone {
        true => ("listed", "not listed"),
        false => ("not listed", "listed"),
    };
    (what, before.into(), after.into(), why.into())
}

fn pair_link(l: &PairLink) -> String {
    format!("{} ({})", l.class, l.code.as_deref().unwrap_or_default())
}

fn pcie_state(p: &PcieState) -> String {
    let speed = p
        .speed_gt_per_s
        .map(|s| format!("{s} GT/s"))
        .or(p.generation.map(|g| format!("Gen{g}")))
        .unwrap_or_else(|| "?".into());
    format!(
        "x{} {speed}",
        p.width_lanes.map_or("?".into(), |w| w.to_string())
    )
}

fn port_state(p: &PortState) -> String {
    format!(
        "{} / {} / {}",
        p.state.as_deref().unwrap_or_default(),
        p.physical_state.as_deref().unwrap_or_default(),
        p.rate_as_printed.as_deref().unwrap_or_default()
    )
}

/// `tool test GPU0->GPU1 at 8 MiB (avg)`.
fn figure(f: &Figure) -> String {
    let pair = match (&f.src, &f.dst) {
        (Some(s), Some(d)) => format!(" {s}->{d}"),
        (Some(s), None) => format!(" {s}"),
        _ => String::new(),
    };
    let size = f
        .size_bytes
        .map(|s| format!(" at {}", size_short(s as f64)))
        .unwrap_or_default();
    let stat = format!("{:?}", f.statistic).to_lowercase();
    format!("{} {}{pair}{size} ({stat})", f.tool, f.test)
}

/// What, before, after and why, for one change.
fn words(k: &ChangeKind) -> (String, String, String, String) {
    match k {
        ChangeKind::NodeGone => (
            "node".into(),
            "present".into(),
            "absent".into(),
            "no longer collected".into(),
        ),
        ChangeKind::NodeNew => (
            "node".into(),
            "absent".into(),
            "present".into(),
            "newly collected".into(),
        ),
        ChangeKind::Gone(l) => listed_words(l, true),
        ChangeKind::Appeared(l) => listed_words(l, false),
        ChangeKind::ClassChanged { a, b, from, to } => {
            let why = if to.class > from.class {
                "the pair moved down the ladder: copies and collectives between them now run a tier slower"
            } else if to.class < from.class {
                "the pair moved up the ladder: copies and collectives between them can run a tier faster"
            } else {
                "same class, different link count or code"
            };
            (
                format!("{a}-{b}"),
                pair_link(from),
                pair_link(to),
                why.into(),
            )
        }
        ChangeKind::PcieWidth { device, from, to } | ChangeKind::PcieSpeed { device, from, to } => {
            let share = match (from.width_lanes, to.width_lanes) {
                (Some(f), Some(t)) if f > 0 => format!("{}%", t * 100 / f),
                _ => "a different share".into(),
            };
            let why = match k {
                ChangeKind::PcieWidth { .. } if to.width_lanes < from.width_lanes => {
                    format!("the link lost lanes: it now carries at most {share} of what it did")
                }
                ChangeKind::PcieWidth { .. } => {
                    format!("the link gained lanes: it can carry {share} of what it did")
                }
                _ => "the link speed changed (GPUs slow their links when idle: compare under load)"
                    .into(),
            };
            (
                pcie_label(&device.address, device.name.as_deref()),
                pcie_state(from),
                pcie_state(to),
                why,
            )
        }
        ChangeKind::PortState {
            device,
            port,
            from,
            to,
        } => (
            format!("{device} port {port}"),
            port_state(from),
            port_state(to),
            match k.trend() {
                Trend::Worse => "the port went down or slower: the node loses that share of its network injection".into(),
                Trend::Better => "the port came up or got faster: the node gains network injection".into(),
                Trend::Neutral => "port state or rate changed".into(),
            },
        ),
        ChangeKind::CounterGrew {
            device,
            port,
            group,
            counter,
            before,
            after,
            delta,
        } => (
            format!("{device} port {port} {group}/{counter}"),
            before.map_or("not read".into(), |b| b.to_string()),
            after.to_string(),
            if *delta > 0 {
                format!(
                    "grew by {delta} while the new collection ran: errors on the link cost retransmissions, bandwidth and latency"
                )
            } else {
                "grew between the two collections: errors on the link cost retransmissions, bandwidth and latency".into()
            },
        ),
        ChangeKind::PeerMemory { from, to } => {
            let said = |m: &Option<String>| m.clone().unwrap_or_else(|| "none loaded".into());
            (
                "GPUDirect RDMA peer-memory module".into(),
                said(from),
                said(to),
                match k.trend() {
                    Trend::Worse => "the module is gone: unless dma-buf carries it, GPU buffers on the network now stage through host memory".into(),
                    Trend::Better => "a peer-memory module is loaded now: the adapter can reach GPU memory directly".into(),
                    Trend::Neutral => "peer-memory module changed".into(),
                },
            )
        }
        ChangeKind::Bandwidth {
            figure: f,
            before_bytes_per_s,
            after_bytes_per_s,
            relative_change,
            spread,
            threshold,
        } => bandwidth_words(
            f,
            *before_bytes_per_s,
            *after_bytes_per_s,
            *relative_change,
            *spread,
            *threshold,
        ),
    }
}

/// [`words`] of a bandwidth that moved beyond its threshold.
fn bandwidth_words(
    f: &Figure,
    before_bytes_per_s: f64,
    after_bytes_per_s: f64,
    relative_change: f64,
    spread: f64,
    threshold: f64,
) -> (String, String, String, String) {
    (
        figure(f),
        gbs(before_bytes_per_s),
        gbs(after_bytes_per_s),
        format!(
            "{:+.1}%, beyond the {:.1}% {}: a transfer of this kind takes {:.0}% {} time",
            relative_change * 100.0,
            threshold * 100.0,
            if spread > 0.0 {
                "spread the repetitions showed"
            } else {
                "default threshold (the tool reports no spread)"
            },
            // Time goes as 1 / bandwidth.
            ((before_bytes_per_s / after_bytes_per_s) - 1.0).abs() * 100.0,
            if after_bytes_per_s < before_bytes_per_s {
                "more"
            } else {
                "less"
            }
        ),
    )
}

fn row(c: &Change) -> ChangeRow {
    let (what, before, after, why) = words(&c.kind);
    ChangeRow {
        node: c.node.clone(),
        area: c.kind.area(),
        what,
        before,
        after,
        significant: c.significant(),
        trend: c.kind.trend(),
        why,
    }
}

/// The diff page's own styles (worse and better apart), after the site's.
const DIFF_CSS: &str = include_str!("../../static/diff.css");

#[derive(askama::Template)]
#[template(path = "diff.html")]
struct DiffPage<'a> {
    title: &'a str,
    css_href: &'a str,
    inline_css: &'a str,
    home_href: &'a str,
    version: &'a str,
    old: &'a str,
    new: &'a str,
    default_pct: f64,
    diff: &'a DiffView,
}

impl DiffView {
    /// The rows of a diff, by node, area and device or figure.
    pub fn of(d: &Diff) -> DiffView {
        let mut changes: Vec<ChangeRow> = d.changes.iter().map(row).collect();
        changes.sort_by(|a, b| {
            a.node
                .cmp(&b.node)
                .then(a.area.cmp(&b.area))
                .then(a.what.cmp(&b.what))
        });
        let paired = d
            .pairings
            .iter()
            .map(|p| PairRow {
                before: p.old.clone(),
                after: p.new.clone(),
                by: p.by,
                sentence: format!(
                    "node `{}` (before) compared with `{}` (after){}",
                    p.old,
                    p.new,
                    match p.by {
                        PairedBy::OnlyNodes =>
                            ": each side holds one node, so they are compared whatever their names",
                        PairedBy::Asked => ", as --pair asks",
                    }
                ),
            })
            .collect();
        DiffView {
            paired,
            changes,
            figures_compared: d.figures_compared,
            within_spread: d.within_spread,
        }
    }

    pub fn significant(&self) -> usize {
        self.changes.iter().filter(|c| c.significant).count()
    }

    /// One self-contained HTML page (styles inline, nothing fetched).
    pub fn to_html(&self, old: &str, new: &str) -> anyhow::Result<String> {
        use askama::Template;
        let page = DiffPage {
            title: "diff",
            css_href: "",
            inline_css: &format!("{}{}", crate::render::CSS, DIFF_CSS),
            home_href: "#",
            version: env!("CARGO_PKG_VERSION"),
            old,
            new,
            default_pct: DEFAULT_RELATIVE_SPREAD * 100.0,
            diff: self,
        };
        Ok(page.render()?)
    }

    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for p in &self.paired {
            s.push_str(&p.sentence);
            s.push('\n');
        }
        for c in &self.changes {
            s.push_str(&format!(
                "{}{} {} {}: {} -> {} ({})\n",
                match c.trend {
                    Trend::Worse => "",
                    Trend::Better => "(better) ",
                    Trend::Neutral => "(info) ",
                },
                c.node,
                c.area.as_str(),
                c.what,
                c.before,
                c.after,
                c.why
            ));
        }
        s.push_str(&format!(
            "{} change(s) for the worse, {} for the better; {} bandwidth figure(s) compared, {} within their spread\n",
            self.significant(),
            self.changes.iter().filter(|c| c.trend == Trend::Better).count(),
            self.figures_compared,
            self.within_spread
        ));
        s
    }
}
