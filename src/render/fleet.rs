//! The fleet view: many nodes side by side. The bug is usually the one node
//! (or pair, or port) that differs, so every node's headline figures are
//! compared with the fleet's median using a robust spread, the median
//! absolute deviation (Hampel's identifier: flag |x - median| > 3 x 1.4826
//! x MAD; Hampel, JASA 69, 1974; Leys et al., JESP 49, 2013), and nodes are
//! grouped by identical topology.

use std::collections::BTreeMap;

use crate::bundle::Bundle;
use crate::evidence::measurement::{Direction, Measurement, Statistic};
use crate::facts::NodeFacts;

/// A figure every node can have: its name and unit are in `label`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct MetricKey(pub String);

/// One node's value of one metric: the median of its figures and the worst.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeValue {
    pub median: f64,
    pub worst: f64,
    pub count: usize,
}

/// Where a node's worst figure of a metric came from: pair and size.
pub fn worst_at(b: &Bundle, key: &MetricKey) -> Option<String> {
    let mut worst: Option<(f64, &Measurement)> = None;
    for (k, bw, m) in figures(b) {
        if &k == key && worst.is_none_or(|w| bw < w.0) {
            worst = Some((bw, m));
        }
    }
    let m = worst?.1;
    let mut parts = Vec::new();
    match (&m.src, &m.dst) {
        (Some(s), Some(d)) => parts.push(format!("{s}->{d}")),
        (Some(s), None) => parts.push(s.to_string()),
        _ => {}
    }
    if let Some(size) = m.size_bytes {
        parts.push(format!(
            "at {}",
            crate::render::format::size_short(size as f64)
        ));
    }
    parts.push(format!("({}:{})", m.source.file, m.source.line));
    Some(parts.join(" "))
}

/// Bandwidth figures per metric: tool, kind and direction (sizes and pairs
/// pooled, so one bad pair pulls the node's worst value down), and the
/// slowest active RDMA port.
pub fn node_metrics(b: &Bundle, facts: &NodeFacts) -> BTreeMap<MetricKey, NodeValue> {
    let mut values: BTreeMap<MetricKey, Vec<f64>> = BTreeMap::new();
    for (key, bw, _) in figures(b) {
        values.entry(key).or_default().push(bw);
    }
    let rates = &facts.active_port_rates_bytes_per_s;
    if !rates.is_empty() {
        values.insert(
            MetricKey("rdma active port rate (GB/s)".into()),
            rates.clone(),
        );
    }
    values
        .into_iter()
        .map(|(k, mut v)| {
            v.sort_by(f64::total_cmp);
            let n = NodeValue {
                median: median(&v),
                worst: v[0],
                count: v.len(),
            };
            (k, n)
        })
        .collect()
}

/// Each bandwidth figure that counts for the fleet: metric, bytes/s, and
/// where it was measured (pair and size).
fn figures(b: &Bundle) -> Vec<(MetricKey, f64, &Measurement)> {
    let mut out = Vec::new();
    for m in &b.measurements {
        let Some(bw) = m.bandwidth_bytes_per_s else {
            continue;
        };
        if !matches!(
            m.statistic,
            Statistic::Avg | Statistic::Median | Statistic::Busbw | Statistic::Peak
        ) || bw <= 0.0
        {
            continue;
        }
        // Small messages say little about a link (collectives count by
        // bus bandwidth, at 1 MiB and more too).
        if m.size_bytes.is_some_and(|s| s < 1 << 20) {
            continue;
        }
        if m.src.is_some() && m.src == m.dst {
            continue;
        }
        let dir = match m.direction {
            Direction::Bi => " bidirectional",
            Direction::NotStated => " direction not stated",
            Direction::Uni => "",
        };
        let stat = format!("{:?}", m.statistic).to_lowercase();
        let key = MetricKey(format!("{} {}{dir} {stat} (GB/s)", m.tool, m.kind.as_str()));
        out.push((key, bw, m));
    }
    out
}

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The fleet's median and MAD of some values.
pub fn median_mad(values: &[f64]) -> Spread {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let m = median(&v);
    let mut dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
    dev.sort_by(f64::total_cmp);
    (m, median(&dev))
}

/// Hampel's threshold in MADs, and a floor so that a fleet of identical
/// nodes (MAD 0) does not flag a 1% wiggle.
const HAMPEL_K: f64 = 3.0;
const MAD_TO_SIGMA: f64 = 1.4826;
const MIN_RELATIVE: f64 = 0.05;

/// Whether `x` is an outlier of a fleet with this median and MAD.
pub fn is_outlier(x: f64, median: f64, mad: f64) -> bool {
    // Every fleet metric is a bandwidth or a rate: only a figure below its
    // group is worse; one above is not flagged.
    let limit = (HAMPEL_K * MAD_TO_SIGMA * mad).max(MIN_RELATIVE * median.abs());
    median - x > limit
}

/// One flagged value.
#[derive(Debug, Clone, PartialEq)]
pub struct Outlier {
    pub node: String,
    pub metric: String,
    /// `median` or `worst`.
    pub which: &'static str,
    pub value: f64,
    pub fleet_median: f64,
    pub fleet_mad: f64,
    /// For a worst value: the pair, size and source line it came from.
    pub at: Option<String>,
}

/// A median and a median absolute deviation.
pub type Spread = (f64, f64);

/// The fleet table: per metric, per node, and the outliers.
pub struct Fleet {
    /// Each node's [`topology_signature`], in the order given.
    pub signatures: Vec<String>,
    pub metrics: Vec<MetricKey>,
    /// Node name -> metric -> value.
    pub values: BTreeMap<String, BTreeMap<MetricKey, NodeValue>>,
    /// Metric -> (median, MAD) of node medians and of node worst values.
    pub stats: BTreeMap<MetricKey, (Spread, Spread)>,
    pub outliers: Vec<Outlier>,
}

/// Compares every node with the nodes wired like it (same topology
/// signature): different hardware is not an outlier, the odd one of a kind
/// is. Groups of fewer than three nodes with a metric are shown but not
/// judged: a spread needs a crowd.
pub fn fleet(bundles: &[Bundle]) -> Fleet {
    let facts: Vec<NodeFacts> = bundles.iter().map(NodeFacts::of).collect();
    fleet_of(bundles.iter().zip(&facts))
}

/// What the fleet needs of one node, kept when its bundle is dropped (a
/// streaming render holds only these).
#[derive(Debug, Clone)]
pub struct FleetNode {
    pub name: String,
    pub signature: String,
    pub values: BTreeMap<MetricKey, NodeValue>,
    /// [`worst_at`] of each metric the node has.
    pub worst_at: BTreeMap<MetricKey, String>,
}

impl FleetNode {
    pub fn of(b: &Bundle, facts: &NodeFacts) -> FleetNode {
        let values = node_metrics(b, facts);
        let worst_at = values
            .keys()
            .filter_map(|k| worst_at(b, k).map(|w| (k.clone(), w)))
            .collect();
        FleetNode {
            name: b.host.name.clone(),
            signature: topology_signature(b, facts),
            values,
            worst_at,
        }
    }
}

/// [`fleet`], with each node's facts already computed.
pub fn fleet_of<'a>(nodes: impl IntoIterator<Item = (&'a Bundle, &'a NodeFacts)>) -> Fleet {
    fleet_from(
        nodes
            .into_iter()
            .map(|(b, f)| FleetNode::of(b, f))
            .collect(),
    )
}

/// [`fleet`] from what each node left behind.
pub fn fleet_from(nodes: Vec<FleetNode>) -> Fleet {
    let by_name: BTreeMap<&str, &FleetNode> = nodes.iter().map(|n| (n.name.as_str(), n)).collect();
    let values: BTreeMap<String, BTreeMap<MetricKey, NodeValue>> = nodes
        .iter()
        .map(|n| (n.name.clone(), n.values.clone()))
        .collect();
    let signatures: Vec<String> = nodes.iter().map(|n| n.signature.clone()).collect();
    let group: BTreeMap<&str, &str> = nodes
        .iter()
        .map(|n| (n.name.as_str(), n.signature.as_str()))
        .collect();
    let mut metrics: Vec<MetricKey> = values.values().flat_map(|m| m.keys().cloned()).collect();
    metrics.sort();
    metrics.dedup();
    let mut stats = BTreeMap::new();
    let mut outliers = Vec::new();
    for k in &metrics {
        let present: Vec<(&String, &NodeValue)> = values
            .iter()
            .filter_map(|(n, m)| m.get(k).map(|v| (n, v)))
            .collect();
        let meds: Vec<f64> = present.iter().map(|(_, v)| v.median).collect();
        let worsts: Vec<f64> = present.iter().map(|(_, v)| v.worst).collect();
        let sm = median_mad(&meds);
        let sw = median_mad(&worsts);
        stats.insert(k.clone(), (sm, sw));
        let mut by_group: BTreeMap<&str, Vec<(&String, &NodeValue)>> = BTreeMap::new();
        for (n, v) in &present {
            by_group
                .entry(group.get(n.as_str()).copied().unwrap_or(""))
                .or_default()
                .push((n, v));
        }
        for members in by_group.values() {
            if members.len() < 3 {
                continue;
            }
            let gm = median_mad(&members.iter().map(|(_, v)| v.median).collect::<Vec<_>>());
            let gw = median_mad(&members.iter().map(|(_, v)| v.worst).collect::<Vec<_>>());
            for (node, v) in members {
                for (which, x, (m, mad)) in [("median", v.median, gm), ("worst", v.worst, gw)] {
                    if is_outlier(x, m, mad) {
                        outliers.push(Outlier {
                            node: (*node).clone(),
                            metric: k.0.clone(),
                            which,
                            value: x,
                            fleet_median: m,
                            fleet_mad: mad,
                            // The line of the node's worst figure of the metric.
                            at: by_name
                                .get(node.as_str())
                                .and_then(|n| n.worst_at.get(k).cloned()),
                        });
                    }
                }
            }
        }
    }
    outliers.sort_by(|a, b| a.node.cmp(&b.node).then(a.metric.cmp(&b.metric)));
    Fleet {
        signatures,
        metrics,
        values,
        stats,
        outliers,
    }
}

/// A node's hardware identity: GPU model and count, adapter model and
/// rate, and the class and code of every pair, so only nodes built alike
/// are compared. A node that states none of these is a group of its own
/// (its name), never pooled with other undescribed nodes.
pub fn topology_signature(b: &Bundle, facts: &NodeFacts) -> String {
    let mut parts = Vec::new();
    if !facts.gpus.is_empty() {
        let mut models: Vec<&str> = facts.gpu_names.values().map(String::as_str).collect();
        models.sort_unstable();
        models.dedup();
        parts.push(format!(
            "{} x {}",
            facts.gpus.len(),
            if models.is_empty() {
                "GPU (model not stated)".to_string()
            } else {
                models.join(" + ")
            }
        ));
    }
    // No topology: the GPUs other transcripts name (nvidia-smi -q, lspci,
    // an nccl-tests rank line), as the index counts them.
    if facts.gpus.is_empty() && !facts.named_gpus.is_empty() {
        let mut models: Vec<&str> = facts.named_gpus.iter().map(|g| g.model.as_str()).collect();
        models.sort_unstable();
        models.dedup();
        let count = facts.named_gpus.len().max(facts.attached_gpus.unwrap_or(0));
        parts.push(format!("{count} x {}", models.join(" + ")));
    }
    let mut adapters: BTreeMap<String, usize> = BTreeMap::new();
    for d in &b.rdma {
        let rate = d
            .ports
            .iter()
            .filter(|p| p.active == Some(true))
            .filter_map(crate::facts::port_data_rate)
            .fold(0.0f64, f64::max);
        let model = d.ca_type.as_deref().unwrap_or("adapter");
        let rate = if rate > 0.0 {
            format!("at {}", crate::render::format::gbs(rate))
        } else {
            "rate not stated".into()
        };
        *adapters.entry(format!("{model} {rate}")).or_default() += 1;
    }
    if !adapters.is_empty() {
        parts.push(
            adapters
                .iter()
                .map(|(k, n)| format!("{n} x {k}"))
                .collect::<Vec<_>>()
                .join(", "),
        );
    } else if !facts.nics.is_empty() {
        parts.push(format!("{} NICs", facts.nics.len()));
    }
    let t = &b.topology;
    if !t.links.is_empty() {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for l in &t.links {
            *counts
                .entry(format!(
                    "{} {}",
                    l.class,
                    l.code.clone().unwrap_or_default()
                ))
                .or_default() += 1;
        }
        parts.push(
            counts
                .iter()
                .map(|(k, n)| format!("{n} x {k}"))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    if parts.is_empty() {
        // Nothing names the hardware: compare only nodes measured alike
        // (the same tools over the same devices), else the node alone.
        let mut tools: Vec<&str> = b.measurements.iter().map(|m| m.tool.as_str()).collect();
        tools.sort_unstable();
        tools.dedup();
        let mut devices: Vec<&str> = b
            .measurements
            .iter()
            .flat_map(|m| [m.src.as_ref(), m.dst.as_ref()])
            .flatten()
            .map(|t| t.as_str())
            .collect();
        devices.sort_unstable();
        devices.dedup();
        if tools.is_empty() || devices.is_empty() {
            return format!("{} alone: hardware not described", b.host.name);
        }
        return format!(
            "hardware not described; measured by {} over {}",
            tools.join(", "),
            devices.join(", ")
        );
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hampel_flags_the_odd_one_and_not_wiggles() {
        let v = [370.9, 371.2, 370.5, 371.0, 250.0, 370.8];
        let (m, mad) = median_mad(&v);
        assert!(is_outlier(250.0, m, mad));
        assert!(!is_outlier(370.5, m, mad));
        // Identical fleet: MAD 0, a 1% difference is not an outlier.
        let (m, mad) = median_mad(&[100.0, 100.0, 100.0]);
        assert_eq!(mad, 0.0);
        assert!(!is_outlier(101.0, m, mad));
        assert!(is_outlier(80.0, m, mad));
        // Better than the group is not an outlier.
        assert!(!is_outlier(120.0, m, mad));
    }
}
