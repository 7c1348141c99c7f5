//! What the index says about one node: its verdict, its top finding, and
//! its GPUs and adapters in words, from any transcript that names them
//! (the topology first, then device lines of benchmarks, then RDMA tools).

use std::collections::BTreeMap;

use crate::bundle::Bundle;
use crate::diagnosis::Diagnosed;
use crate::facts::NodeFacts;

/// The verdicts of the index, most severe first ([`Verdict::ALL`]).
pub const VERDICTS: [&str; 4] = ["critical", "warning", "incomplete", "ok"];

/// The rank of a verdict in [`VERDICTS`] (0 is the most severe).
pub fn verdict_rank(v: &str) -> usize {
    VERDICTS
        .iter()
        .position(|x| *x == v)
        .unwrap_or(VERDICTS.len())
}

/// A verdict as a CSS class: `v-critical`, `v-incomplete`...
pub fn verdict_class(v: &str) -> String {
    format!("v-{}", v.replace(' ', "-"))
}

/// `n x MODEL` per model, in order of first appearance.
fn counted(models: &[&str]) -> String {
    let mut order: Vec<&str> = Vec::new();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for m in models {
        if !counts.contains_key(m) {
            order.push(m);
        }
        *counts.entry(m).or_default() += 1;
    }
    order
        .iter()
        .map(|m| format!("{} x {m}", counts[m]))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The GPUs in words: `8 x NVIDIA A100-SXM4-80GB`, `8 (model not named)`,
/// or why there is no count.
pub(super) fn gpus(b: &Bundle, facts: &NodeFacts) -> String {
    let topo_models: Vec<&str> = b
        .topology
        .gpus()
        .filter_map(|d| d.name.as_deref())
        .filter(|n| n.chars().any(|c| c.is_ascii_alphabetic()) && !n.contains(':'))
        .collect();
    let named: Vec<&str> = facts.named_gpus.iter().map(|g| g.model.as_str()).collect();
    let count = facts.gpu_count();
    if count == 0 {
        // lspci's class says which devices are GPUs, when no GPU tool ran.
        let mut on_bus: Vec<&str> = b
            .pcie
            .iter()
            .filter(|p| p.role.as_deref() == Some("gpu"))
            .map(|p| p.address.as_str())
            .collect();
        on_bus.dedup();
        if !on_bus.is_empty() {
            return format!(
                "{} on the PCIe bus ({}; no GPU tool's transcript)",
                on_bus.len(),
                short_list(&on_bus)
            );
        }
        return if facts.described {
            "none listed".into()
        } else {
            "not named in any transcript".into()
        };
    }
    let models = if !topo_models.is_empty() {
        topo_models
    } else {
        named
    };
    if models.len() == count {
        counted(&models)
    } else if models.is_empty() {
        format!("{count} (model not named)")
    } else {
        format!("{count}: {}", counted(&models))
    }
}

/// The network adapters in words: count, model and active port rates from
/// RDMA tools, else the adapters the topology lists.
pub(super) fn nics(b: &Bundle, facts: &NodeFacts) -> String {
    if !b.rdma.is_empty() {
        let mut names: Vec<&str> = b.rdma.iter().map(|d| d.name.as_str()).collect();
        names.dedup();
        let models: Vec<&str> = b.rdma.iter().filter_map(|d| d.ca_type.as_deref()).collect();
        let mut text = if models.len() == b.rdma.len() {
            counted(&models)
        } else {
            format!("{}", b.rdma.len())
        };
        text.push_str(&format!(" ({})", short_list(&names)));
        let ports: Vec<_> = b.rdma.iter().flat_map(|d| &d.ports).collect();
        let active: Vec<_> = ports.iter().filter(|p| p.active == Some(true)).collect();
        if !ports.is_empty() {
            let mut rates: Vec<&str> = active
                .iter()
                .filter_map(|p| p.rate_as_printed.as_deref())
                .collect();
            rates.sort();
            rates.dedup();
            // A port whose state no transcript gives (a counter table)
            // is neither active nor down.
            let known = ports.iter().filter(|p| p.active.is_some()).count();
            match ports.len() - known {
                0 => text.push_str(&format!(
                    "; {} of {} ports active",
                    active.len(),
                    ports.len()
                )),
                n if known == 0 => text.push_str(&format!("; {n} ports, state not stated")),
                n => text.push_str(&format!(
                    "; {} of {known} ports active, {n} state not stated",
                    active.len()
                )),
            }
            if !rates.is_empty() {
                text.push_str(&format!(" at {} as printed", rates_as_printed(&rates)));
            }
        }
        return text;
    }
    if !facts.nics.is_empty() {
        let names: Vec<&str> = facts
            .nics
            .iter()
            .map(|n| n.name.as_deref().unwrap_or(n.id.as_str()))
            .collect();
        return format!("{} ({})", facts.nics.len(), short_list(&names));
    }
    if !facts.measured_adapters.is_empty() {
        let names: Vec<&str> = facts.measured_adapters.iter().map(|s| s.as_str()).collect();
        return format!(
            "{} ({}) named by RDMA tests; ports not listed",
            names.len(),
            short_list(&names)
        );
    }
    if facts.described {
        "none listed".into()
    } else {
        "not named in any transcript".into()
    }
}

/// Up to four names, then how many more.
fn short_list(names: &[&str]) -> String {
    let mut s = names.iter().take(4).copied().collect::<Vec<_>>().join(", ");
    if names.len() > 4 {
        s.push_str(&format!(" and {} more", names.len() - 4));
    }
    s
}

/// The most severe finding (the diagnosis lists them most severe first).
/// The node's top finding: the diagnosis lists the most severe first,
/// hardware before notes about the evidence.
pub(super) fn top(diagnosed: &[Diagnosed]) -> Option<&Diagnosed> {
    diagnosed.first()
}

/// Port rates as printed: `ibstat`'s bare numbers take one `Gb/s`
/// (`100, 400 Gb/s`); `ibstatus` and sysfs rates carry their own unit
/// (`200 Gb/sec (4X HDR)`) and take none.
fn rates_as_printed(rates: &[&str]) -> String {
    let bare = |r: &str| r.parse::<f64>().is_ok();
    if rates.iter().all(|r| bare(r)) {
        return format!("{} Gb/s", rates.join(", "));
    }
    let each: Vec<String> = rates
        .iter()
        .map(|r| {
            if bare(r) {
                format!("{r} Gb/s")
            } else {
                r.to_string()
            }
        })
        .collect();
    each.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_rates_say_their_unit_once() {
        assert_eq!(rates_as_printed(&["100", "400"]), "100, 400 Gb/s");
        assert_eq!(
            rates_as_printed(&["200 Gb/sec (4X HDR)", "400 Gb/sec (4X NDR)"]),
            "200 Gb/sec (4X HDR), 400 Gb/sec (4X NDR)"
        );
        assert_eq!(
            rates_as_printed(&["200", "40 Gb/sec (4X QDR)"]),
            "200 Gb/s, 40 Gb/sec (4X QDR)"
        );
    }

    #[test]
    fn verdict_labels_are_the_diagnosis_verdicts_in_order() {
        use crate::diagnosis::Verdict;
        let labels: Vec<&str> = Verdict::ALL.iter().map(|v| v.as_str()).collect();
        assert_eq!(labels, VERDICTS);
        assert!(verdict_rank("critical") < verdict_rank("ok"));
    }

    #[test]
    fn models_are_counted_in_order() {
        assert_eq!(counted(&["A", "A", "B"]), "2 x A, 1 x B");
    }
}
