//! `diff OLD NEW`: what changed between two collections of the same nodes,
//! and whether it matters. Topology classes, PCIe link width and speed,
//! RDMA port state and rate, error counters that grew, and bandwidth that
//! moved beyond the spread the measurement itself showed (not every
//! wiggle). Each change names its node and its device or pair.
//!
//! This module returns typed changes: names, numbers and enums, no words.
//! `render::diff` writes them as text, JSON or a page.
//!
//! Nodes are matched by name, except where the caller pairs them
//! ([`diff_paired`]): `--pair OLD=NEW`, or the one node of each side when
//! each side holds exactly one (a before/after of one machine collected
//! into differently named folders). Each such pairing is part of the
//! outcome, so the output can say that names were not compared.
//!
//! - [`devices`]: topology pairs, PCIe links, RDMA ports and their counters
//! - [`parts`]: GPUs, adapters, links and ports listed on one side only,
//!   and which topology device of one side is which of the other
//! - [`figures`]: bandwidth figures and the spread they were measured with

mod devices;
mod figures;
mod parts;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::bundle::Bundle;
use crate::evidence::measurement::{Direction, Statistic};
use crate::evidence::topology::LinkClass;

pub(crate) use devices::is_error_counter;
pub use figures::DEFAULT_RELATIVE_SPREAD;

/// What part of a node a change is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Area {
    Node,
    Gpu,
    Adapter,
    Topology,
    Nvlink,
    Pcie,
    RdmaPort,
    Counter,
    PeerMemory,
    Bandwidth,
}

impl Area {
    pub fn as_str(self) -> &'static str {
        match self {
            Area::Node => "node",
            Area::Gpu => "gpu",
            Area::Adapter => "adapter",
            Area::Topology => "topology",
            Area::Nvlink => "nvlink",
            Area::Pcie => "pcie",
            Area::RdmaPort => "rdma-port",
            Area::Counter => "counter",
            Area::PeerMemory => "peer-memory",
            Area::Bandwidth => "bandwidth",
        }
    }
}

/// One change of one node.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub node: String,
    pub kind: ChangeKind,
}

/// What changed, with the values before and after.
#[derive(Debug, Clone, PartialEq)]
pub enum ChangeKind {
    /// Collected before, not after.
    NodeGone,
    /// Collected after, not before.
    NodeNew,
    /// A GPU, adapter, link or port listed before and not after (while
    /// the new collection still lists its kind: a tool not run is no loss).
    Gone(Listed),
    /// One listed after and not before.
    Appeared(Listed),
    /// A pair of devices changed class or link code.
    ClassChanged {
        a: String,
        b: String,
        from: PairLink,
        to: PairLink,
    },
    /// A PCIe link changed width (and maybe speed).
    PcieWidth {
        device: PcieDevice,
        from: PcieState,
        to: PcieState,
    },
    /// A PCIe link changed speed, same width.
    PcieSpeed {
        device: PcieDevice,
        from: PcieState,
        to: PcieState,
    },
    /// An RDMA port changed state, physical state or rate.
    PortState {
        device: String,
        port: u32,
        from: PortState,
        to: PortState,
    },
    /// An error counter of an RDMA port grew between the collections or
    /// while the new one ran.
    CounterGrew {
        device: String,
        port: u32,
        group: String,
        counter: String,
        /// Its value at the end of the old collection, when it was read.
        before: Option<u64>,
        after: u64,
        /// Growth while the new collection ran.
        delta: u64,
    },
    /// A GPUDirect RDMA peer-memory module was loaded in one collection
    /// and not in the other (the module it was, when loaded).
    PeerMemory {
        from: Option<String>,
        to: Option<String>,
    },
    /// A bandwidth figure moved beyond its spread.
    Bandwidth {
        figure: Figure,
        before_bytes_per_s: f64,
        after_bytes_per_s: f64,
        /// (after - before) / before.
        relative_change: f64,
        /// The largest relative spread either collection measured; 0 when
        /// neither measured one.
        spread: f64,
        /// The relative change beyond which the figure is reported.
        threshold: f64,
    },
}

/// A part of a node that one collection lists and the other does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Part {
    Gpu,
    /// A network adapter (an RDMA device, or a NIC of the topology).
    Adapter,
    /// A pair of devices the topology describes.
    Link,
    /// One NVLink of a GPU, active.
    Nvlink,
    /// A port of an RDMA adapter listed on both sides.
    RdmaPort,
}

/// One GPU, adapter, link or port, as its own side names it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub part: Part,
    /// `GPU3`, `mlx5_2`, `GPU0-NIC1`, `GPU2 link 5`, `mlx5_0 port 2`.
    pub id: String,
    /// What else identifies it: a model, a PCI bus id, a CA type, a class.
    pub detail: Option<String>,
}

/// The class and code of a pair of devices.
#[derive(Debug, Clone, PartialEq)]
pub struct PairLink {
    pub class: LinkClass,
    pub code: Option<String>,
}

/// A PCIe device: its address, and its name when known.
#[derive(Debug, Clone, PartialEq)]
pub struct PcieDevice {
    pub address: String,
    pub name: Option<String>,
}

/// A PCIe link's current width and speed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PcieState {
    pub width_lanes: Option<u32>,
    pub speed_gt_per_s: Option<f64>,
    pub generation: Option<u32>,
}

/// An RDMA port's state and rate.
#[derive(Debug, Clone, PartialEq)]
pub struct PortState {
    pub state: Option<String>,
    pub physical_state: Option<String>,
    pub active: Option<bool>,
    pub link_up: Option<bool>,
    pub rate_bytes_per_s: Option<f64>,
    pub rate_as_printed: Option<String>,
}

/// A bandwidth figure: the same tool, test, pair, direction, size and
/// statistic in both collections.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub tool: String,
    pub test: String,
    pub src: Option<String>,
    pub dst: Option<String>,
    pub direction: Direction,
    pub size_bytes: Option<u64>,
    pub statistic: Statistic,
}

/// Which way a change went for the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trend {
    Worse,
    Better,
    /// Neither (a node newly collected, a code that changed in place).
    Neutral,
}

impl Trend {
    pub fn as_str(self) -> &'static str {
        match self {
            Trend::Worse => "worse",
            Trend::Better => "better",
            Trend::Neutral => "neutral",
        }
    }
}

/// Worse when `after < before`, better when above, of two optional values.
fn trend_of<T: PartialOrd>(before: Option<T>, after: Option<T>) -> Trend {
    match (before, after) {
        (Some(b), Some(a)) if a < b => Trend::Worse,
        (Some(b), Some(a)) if a > b => Trend::Better,
        _ => Trend::Neutral,
    }
}

impl ChangeKind {
    /// Which way the change went: fewer lanes, a slower figure, a port
    /// down, a class further down the ladder are worse; their opposites
    /// better.
    pub fn trend(&self) -> Trend {
        match self {
            ChangeKind::NodeGone => Trend::Worse,
            ChangeKind::NodeNew => Trend::Neutral,
            // A GPU, adapter, link or port lost is capacity lost.
            ChangeKind::Gone(_) => Trend::Worse,
            // One that comes (back) is capacity gained; a pair newly
            // described is the tool saying more, not the machine doing more.
            ChangeKind::Appeared(l) => match l.part {
                Part::Link => Trend::Neutral,
                _ => Trend::Better,
            },
            // Classes sort from the closest (self, direct link) down.
            ChangeKind::ClassChanged { from, to, .. } => trend_of(Some(to.class), Some(from.class)),
            ChangeKind::PcieWidth { from, to, .. } => trend_of(from.width_lanes, to.width_lanes),
            ChangeKind::PcieSpeed { from, to, .. } => {
                match trend_of(from.speed_gt_per_s, to.speed_gt_per_s) {
                    Trend::Neutral => trend_of(from.generation, to.generation),
                    t => t,
                }
            }
            ChangeKind::PortState { from, to, .. } => {
                let up = |p: &PortState| p.active != Some(false) && p.link_up != Some(false);
                match (up(from), up(to)) {
                    (true, false) => Trend::Worse,
                    (false, true) => Trend::Better,
                    _ => trend_of(from.rate_bytes_per_s, to.rate_bytes_per_s),
                }
            }
            ChangeKind::CounterGrew { .. } => Trend::Worse,
            // Losing the module sends GPUDirect RDMA through host memory.
            ChangeKind::PeerMemory { from, to } => match (from, to) {
                (Some(_), None) => Trend::Worse,
                (None, Some(_)) => Trend::Better,
                _ => Trend::Neutral,
            },
            ChangeKind::Bandwidth {
                relative_change, ..
            } => {
                if *relative_change < 0.0 {
                    Trend::Worse
                } else {
                    Trend::Better
                }
            }
        }
    }

    pub fn area(&self) -> Area {
        match self {
            ChangeKind::NodeGone | ChangeKind::NodeNew => Area::Node,
            ChangeKind::Gone(l) | ChangeKind::Appeared(l) => match l.part {
                Part::Gpu => Area::Gpu,
                Part::Adapter => Area::Adapter,
                Part::Link => Area::Topology,
                Part::Nvlink => Area::Nvlink,
                Part::RdmaPort => Area::RdmaPort,
            },
            ChangeKind::ClassChanged { .. } => Area::Topology,
            ChangeKind::PcieWidth { .. } | ChangeKind::PcieSpeed { .. } => Area::Pcie,
            ChangeKind::PortState { .. } => Area::RdmaPort,
            ChangeKind::CounterGrew { .. } => Area::Counter,
            ChangeKind::PeerMemory { .. } => Area::PeerMemory,
            ChangeKind::Bandwidth { .. } => Area::Bandwidth,
        }
    }
}

impl Change {
    /// Whether it matters for the exit status: something got worse (a
    /// class or link, a port, an error counter, a figure beyond its
    /// spread, a node gone). An improvement is reported, as better, and
    /// does not count.
    pub fn significant(&self) -> bool {
        self.kind.trend() == Trend::Worse
    }
}

/// Two nodes compared although their names differ, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pairing {
    pub old: String,
    pub new: String,
    pub by: PairedBy,
}

/// Why two differently named nodes were compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PairedBy {
    /// Each side holds exactly one node.
    OnlyNodes,
    /// The caller said so (`--pair OLD=NEW`).
    Asked,
}

/// A pairing the caller asked for that cannot be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PairError {
    #[error("no node named `{name}` in the old collection (it holds {known})")]
    NoOld { name: String, known: String },
    #[error("no node named `{name}` in the new collection (it holds {known})")]
    NoNew { name: String, known: String },
    #[error("node `{name}` is paired twice")]
    Twice { name: String },
}

/// The outcome of a diff.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// By node, then area; within an area, in the order found.
    pub changes: Vec<Change>,
    /// Bandwidth figures compared, and how many moved within their spread.
    pub figures_compared: usize,
    pub within_spread: usize,
    /// Nodes compared whatever their names (their changes are under the
    /// new name).
    pub pairings: Vec<Pairing>,
}

impl Diff {
    pub fn significant(&self) -> usize {
        self.changes.iter().filter(|c| c.significant()).count()
    }
}

/// Compares node by node: matched by name, or the one node of each side
/// when each holds exactly one.
pub fn diff(old: &[Bundle], new: &[Bundle]) -> Diff {
    diff_paired(old, new, &[]).expect("no pairing asked, none can fail")
}

/// A few names of a side, for a message.
fn some_names(by: &BTreeMap<&str, &Bundle>) -> String {
    let mut s: Vec<String> = by.keys().take(5).map(|n| format!("`{n}`")).collect();
    if by.len() > 5 {
        s.push(format!("and {} more", by.len() - 5));
    }
    s.join(", ")
}

/// [`diff`], with the nodes named in `pairs` (old name, new name)
/// compared with each other whatever their names; the others by name.
pub fn diff_paired(
    old: &[Bundle],
    new: &[Bundle],
    pairs: &[(String, String)],
) -> Result<Diff, PairError> {
    let old_by: BTreeMap<&str, &Bundle> = old.iter().map(|b| (b.host.name.as_str(), b)).collect();
    let new_by: BTreeMap<&str, &Bundle> = new.iter().map(|b| (b.host.name.as_str(), b)).collect();
    let mut pairings = Vec::new();
    for (o, n) in pairs {
        if !old_by.contains_key(o.as_str()) {
            return Err(PairError::NoOld {
                name: o.clone(),
                known: some_names(&old_by),
            });
        }
        if !new_by.contains_key(n.as_str()) {
            return Err(PairError::NoNew {
                name: n.clone(),
                known: some_names(&new_by),
            });
        }
        for (name, side) in [(o, 0), (n, 1)] {
            let seen = pairings.iter().any(|p: &Pairing| match side {
                0 => p.old == *name,
                _ => p.new == *name,
            });
            if seen {
                return Err(PairError::Twice { name: name.clone() });
            }
        }
        pairings.push(Pairing {
            old: o.clone(),
            new: n.clone(),
            by: PairedBy::Asked,
        });
    }
    if let ([o], [n]) = (old, new)
        && pairs.is_empty()
        && o.host.name != n.host.name
    {
        pairings.push(Pairing {
            old: o.host.name.clone(),
            new: n.host.name.clone(),
            by: PairedBy::OnlyNodes,
        });
    }
    // Old name -> new name: the pairings, then every other name that
    // both sides hold and no pairing took.
    let mut matched: BTreeMap<&str, &str> = pairings
        .iter()
        .map(|p| (p.old.as_str(), p.new.as_str()))
        .collect();
    let taken: std::collections::BTreeSet<&str> = matched.values().copied().collect();
    for name in old_by.keys() {
        if !matched.contains_key(name) && new_by.contains_key(name) && !taken.contains(name) {
            matched.insert(name, name);
        }
    }
    let new_matched: std::collections::BTreeSet<&str> = matched.values().copied().collect();
    let mut changes = Vec::new();
    let at = |node: &str, kind| Change {
        node: node.to_string(),
        kind,
    };
    for name in old_by.keys().filter(|n| !matched.contains_key(*n)) {
        changes.push(at(name, ChangeKind::NodeGone));
    }
    for name in new_by.keys().filter(|n| !new_matched.contains(*n)) {
        changes.push(at(name, ChangeKind::NodeNew));
    }
    let (mut compared, mut within) = (0, 0);
    for (o, n) in &matched {
        let (ob, nb) = (old_by[o], new_by[n]);
        let mut found = Vec::new();
        let ids = parts::Identity::of(ob, nb);
        parts::listed_apart(ob, nb, &ids, &mut found);
        devices::topology(ob, nb, &ids, &mut found);
        devices::pcie(ob, nb, &mut found);
        devices::rdma(ob, nb, &mut found);
        devices::peer_memory(ob, nb, &mut found);
        let f = figures::bandwidth(ob, nb, &mut found);
        compared += f.compared;
        within += f.within_spread;
        changes.extend(found.into_iter().map(|k| at(n, k)));
    }
    changes.sort_by(|a, b| a.node.cmp(&b.node).then(a.kind.area().cmp(&b.kind.area())));
    Ok(Diff {
        changes,
        figures_compared: compared,
        within_spread: within,
        pairings,
    })
}
