//! `diff OLD NEW`: what changed between two collections of the same nodes,
//! and whether it matters. Topology classes, PCIe link width and speed,
//! RDMA port state and rate, error counters that grew, and bandwidth that
//! moved beyond the spread the measurement itself showed (not every
//! wiggle). Each change names its node and its device or pair.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::bundle::Bundle;
use crate::evidence::measurement::{Measurement, Statistic};
use crate::render::format::gbs;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Area {
    Node,
    Topology,
    Pcie,
    RdmaPort,
    Counter,
    Bandwidth,
}

/// One change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub node: String,
    pub area: Area,
    /// The device, pair or figure that changed.
    pub what: String,
    pub before: String,
    pub after: String,
    /// Whether it matters: a class or link got worse or better, a port
    /// changed state, an error counter grew, a figure moved beyond its spread.
    pub significant: bool,
    pub why: String,
}

/// The outcome of a diff.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    pub changes: Vec<Change>,
    /// Bandwidth figures compared, and how many moved within their spread.
    pub figures_compared: usize,
    pub within_spread: usize,
}

/// When a tool reports no spread of its own, a change below this fraction
/// is not reported.
pub const DEFAULT_RELATIVE_SPREAD: f64 = 0.10;

/// Counters whose growth means trouble (IB port counters and common
/// driver hw counters).
fn is_error_counter(name: &str) -> bool {
    [
        "err",
        "discard",
        "drop",
        "symbol",
        "downed",
        "recovery",
        "integrity",
        "overrun",
        "timeout",
    ]
    .iter()
    .any(|k| name.contains(k))
}

type CellKey = (
    String,
    String,
    Option<String>,
    Option<String>,
    String,
    Option<u64>,
);

fn cell_key(m: &Measurement) -> CellKey {
    (
        m.tool.to_string(),
        m.test.to_string(),
        m.src.as_ref().map(|s| s.to_string()),
        m.dst.as_ref().map(|s| s.to_string()),
        format!("{:?}", m.direction),
        m.size_bytes,
    )
}

/// Per figure: the central value and the relative spread the tool measured
/// (our sweeps record the fastest and slowest repetition), by statistic.
fn figures(b: &Bundle) -> BTreeMap<(CellKey, String), (f64, Option<f64>)> {
    let mut spread: BTreeMap<CellKey, (Option<f64>, Option<f64>)> = BTreeMap::new();
    for m in &b.measurements {
        if let Some(bw) = m.bandwidth_bytes_per_s {
            let e = spread.entry(cell_key(m)).or_default();
            match m.statistic {
                Statistic::Max => e.0 = Some(bw),
                Statistic::Min => e.1 = Some(bw),
                _ => {}
            }
        }
    }
    let mut out = BTreeMap::new();
    for m in &b.measurements {
        let Some(bw) = m.bandwidth_bytes_per_s else {
            continue;
        };
        if matches!(m.statistic, Statistic::Max | Statistic::Min) || bw <= 0.0 {
            continue;
        }
        let k = cell_key(m);
        let rel = spread
            .get(&k)
            .and_then(|(hi, lo)| Some((hi.as_ref()? - lo.as_ref()?) / bw));
        out.insert((k, format!("{:?}", m.statistic)), (bw, rel));
    }
    out
}

/// Compares node by node (matched by name).
pub fn diff(old: &[Bundle], new: &[Bundle]) -> Diff {
    let mut changes = Vec::new();
    let (mut compared, mut within) = (0, 0);
    let old_by: BTreeMap<&str, &Bundle> = old.iter().map(|b| (b.host.name.as_str(), b)).collect();
    let new_by: BTreeMap<&str, &Bundle> = new.iter().map(|b| (b.host.name.as_str(), b)).collect();
    for name in old_by.keys().filter(|n| !new_by.contains_key(*n)) {
        changes.push(Change {
            node: name.to_string(),
            area: Area::Node,
            what: "node".into(),
            before: "present".into(),
            after: "absent".into(),
            significant: true,
            why: "no longer collected".into(),
        });
    }
    for name in new_by.keys().filter(|n| !old_by.contains_key(*n)) {
        changes.push(Change {
            node: name.to_string(),
            area: Area::Node,
            what: "node".into(),
            before: "absent".into(),
            after: "present".into(),
            significant: false,
            why: "newly collected".into(),
        });
    }
    for (name, nb) in &new_by {
        let Some(ob) = old_by.get(name) else { continue };
        let mut push =
            |area, what: String, before: String, after: String, significant: bool, why: String| {
                changes.push(Change {
                    node: name.to_string(),
                    area,
                    what,
                    before,
                    after,
                    significant,
                    why,
                });
            };
        // Topology: class and code per pair.
        for nl in &nb.topology.links {
            let Some(ol) = ob.topology.link(&nl.a, &nl.b) else {
                continue;
            };
            if ol.class != nl.class || ol.code != nl.code {
                let show = |l: &crate::evidence::topology::Link| {
                    format!("{} ({})", l.class, l.code.clone().unwrap_or_default())
                };
                let why = if nl.class > ol.class {
                    "the pair moved down the ladder"
                } else if nl.class < ol.class {
                    "the pair moved up the ladder"
                } else {
                    "same class, different link count or code"
                };
                push(
                    Area::Topology,
                    format!("{}-{}", nl.a, nl.b),
                    show(ol),
                    show(nl),
                    true,
                    why.into(),
                );
            }
        }
        // PCIe: width and speed per address.
        for np in &nb.pcie {
            let Some(op) = ob.pcie.iter().find(|p| p.address == np.address) else {
                continue;
            };
            let show = |p: &crate::evidence::pcie::PcieLink| {
                let speed = p
                    .current_speed_gt_per_s
                    .map(|s| format!("{s} GT/s"))
                    .or(p.current_generation.map(|g| format!("Gen{g}")))
                    .unwrap_or_else(|| "?".into());
                format!(
                    "x{} {speed}",
                    p.current_width_lanes.map_or("?".into(), |w| w.to_string())
                )
            };
            if op.current_width_lanes != np.current_width_lanes
                || op.current_speed_gt_per_s != np.current_speed_gt_per_s
                || op.current_generation != np.current_generation
            {
                let narrower = np.current_width_lanes < op.current_width_lanes;
                let why = if op.current_width_lanes != np.current_width_lanes {
                    if narrower {
                        "the link lost lanes"
                    } else {
                        "the link gained lanes"
                    }
                } else {
                    "the link speed changed (GPUs slow their links when idle: compare under load)"
                };
                push(
                    Area::Pcie,
                    np.name
                        .clone()
                        .map(|n| format!("{} ({n})", np.address))
                        .unwrap_or_else(|| np.address.clone()),
                    show(op),
                    show(np),
                    true,
                    why.into(),
                );
            }
        }
        // RDMA ports: state, physical state, rate; counters that grew.
        for nd in &nb.rdma {
            let Some(od) = ob.rdma.iter().find(|d| d.name == nd.name) else {
                continue;
            };
            for npo in &nd.ports {
                let Some(opo) = od.ports.iter().find(|p| p.port == npo.port) else {
                    continue;
                };
                let what = format!("{} port {}", nd.name, npo.port);
                let show = |p: &crate::evidence::rdma::RdmaPort| {
                    format!(
                        "{} / {} / {}",
                        p.state.clone().unwrap_or_default(),
                        p.physical_state.clone().unwrap_or_default(),
                        p.rate_as_printed.clone().unwrap_or_default()
                    )
                };
                if opo.active != npo.active
                    || opo.link_up != npo.link_up
                    || opo.rate_bytes_per_s != npo.rate_bytes_per_s
                {
                    push(
                        Area::RdmaPort,
                        what.clone(),
                        show(opo),
                        show(npo),
                        true,
                        "port state or rate changed".into(),
                    );
                }
                for c in &npo.counters {
                    if !is_error_counter(&c.name) {
                        continue;
                    }
                    let before = opo
                        .counters
                        .iter()
                        .find(|x| x.name == c.name && x.group == c.group)
                        .map(|x| x.end);
                    let grew_between = before.is_some_and(|b| c.end > b);
                    if grew_between || c.delta > 0 {
                        push(
                            Area::Counter,
                            format!("{what} {}/{}", c.group, c.name),
                            before.map_or("not read".into(), |b| b.to_string()),
                            c.end.to_string(),
                            true,
                            if c.delta > 0 {
                                format!("grew by {} while the new collection ran", c.delta)
                            } else {
                                "grew between the two collections".into()
                            },
                        );
                    }
                }
            }
        }
        // Bandwidth beyond the measured spread.
        let of = figures(ob);
        for (k, (nv, nrel)) in figures(nb) {
            let Some((ov, orel)) = of.get(&k) else {
                continue;
            };
            compared += 1;
            let spread = nrel.into_iter().chain(*orel).fold(0.0f64, f64::max);
            let threshold = if spread > 0.0 {
                spread.max(0.02)
            } else {
                DEFAULT_RELATIVE_SPREAD
            };
            let rel = (nv - ov) / ov;
            if rel.abs() <= threshold {
                within += 1;
                continue;
            }
            let ((tool, test, src, dst, _, size), stat) = &k;
            let pair = match (src, dst) {
                (Some(s), Some(d)) => format!(" {s}->{d}"),
                (Some(s), None) => format!(" {s}"),
                _ => String::new(),
            };
            let size = size
                .map(|s| format!(" at {}", crate::render::format::size_short(s as f64)))
                .unwrap_or_default();
            push(
                Area::Bandwidth,
                format!("{tool} {test}{pair}{size} ({})", stat.to_lowercase()),
                gbs(*ov),
                gbs(nv),
                true,
                format!(
                    "{:+.1}%, beyond the {:.1}% {}",
                    rel * 100.0,
                    threshold * 100.0,
                    if spread > 0.0 {
                        "spread the repetitions showed"
                    } else {
                        "default threshold (the tool reports no spread)"
                    }
                ),
            );
        }
    }
    changes.sort_by(|a, b| {
        a.node
            .cmp(&b.node)
            .then(a.area.cmp(&b.area))
            .then(a.what.cmp(&b.what))
    });
    Diff {
        changes,
        figures_compared: compared,
        within_spread: within,
    }
}

impl Area {
    pub fn as_str(self) -> &'static str {
        match self {
            Area::Node => "node",
            Area::Topology => "topology",
            Area::Pcie => "pcie",
            Area::RdmaPort => "rdma-port",
            Area::Counter => "counter",
            Area::Bandwidth => "bandwidth",
        }
    }
}

impl Change {
    pub fn area_str(&self) -> &'static str {
        self.area.as_str()
    }
}

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
    diff: &'a Diff,
}

impl Diff {
    /// One self-contained HTML page (styles inline, nothing fetched).
    pub fn to_html(&self, old: &str, new: &str) -> anyhow::Result<String> {
        use askama::Template;
        let page = DiffPage {
            title: "diff",
            css_href: "",
            inline_css: crate::render::CSS,
            home_href: "#",
            version: env!("CARGO_PKG_VERSION"),
            old,
            new,
            default_pct: DEFAULT_RELATIVE_SPREAD * 100.0,
            diff: self,
        };
        Ok(page.render()?)
    }

    pub fn significant(&self) -> usize {
        self.changes.iter().filter(|c| c.significant).count()
    }

    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for c in &self.changes {
            s.push_str(&format!(
                "{}{} {} {}: {} -> {} ({})\n",
                if c.significant { "" } else { "(info) " },
                c.node,
                c.area.as_str(),
                c.what,
                c.before,
                c.after,
                c.why
            ));
        }
        s.push_str(&format!(
            "{} significant change(s); {} bandwidth figure(s) compared, {} within their spread\n",
            self.significant(),
            self.figures_compared,
            self.within_spread
        ));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_counters_are_told_from_traffic_counters() {
        assert!(is_error_counter("port_rcv_errors"));
        assert!(is_error_counter("link_downed"));
        assert!(is_error_counter("symbol_error"));
        assert!(!is_error_counter("port_xmit_data"));
    }
}
