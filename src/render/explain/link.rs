//! Sentences for findings about a link: a PCIe link narrower or slower
//! than it can run, NVLinks down, an RDMA port down, unused or below its
//! fabric's rate, and error or congestion counters that grew.

use super::{gbs, pcie_label};
use crate::diagnosis::{Finding, PcieSpeed};

/// A PCIe link speed in words: `16 GT/s`, or `Gen4` where only the
/// generation is stated.
fn pcie_speed(s: PcieSpeed) -> String {
    match s {
        PcieSpeed::GtPerS(v) => format!("{v} GT/s"),
        PcieSpeed::Generation(g) => format!("Gen{g}"),
    }
}

/// The sentence of an RDMA port that is not in use.
fn port_unused(device: &str, port: u32, layer: Option<&str>, physical: Option<&str>) -> String {
    format!(
        "{device} port {port} ({}) is not in use: physical state {}. Nothing measured here went through it.",
        layer.unwrap_or("link layer not stated"),
        physical.unwrap_or("not stated")
    )
}

/// The sentence of an RDMA port that is down.
fn port_down(device: &str, port: u32, state: Option<&str>, physical: Option<&str>) -> String {
    format!(
        "{device} port {port}: state {}, physical state {}. No number measured through it means anything until it is Active / LinkUp.",
        state.unwrap_or("not stated"),
        physical.unwrap_or("not stated")
    )
}

/// The sentence of a GPU's inactive NVLinks, against the links its
/// model is built with where that is known.
fn nvlinks_inactive(
    gpu: &str,
    inactive: usize,
    total: Option<usize>,
    designed: Option<usize>,
) -> String {
    match (total, designed) {
        (_, Some(d)) if inactive == d => format!(
            "{gpu}: none of the {d} NVLinks its model is built with is active: no NVLink bridge or board link reaches it."
        ),
        (_, Some(d)) => {
            format!("{gpu}: {inactive} of the {d} NVLinks its model is built with are inactive.")
        }
        (Some(t), None) => format!("{gpu}: {inactive} of {t} NVLinks inactive."),
        (None, None) => {
            format!("{gpu}: every NVLink inactive (NVML could not read any link).")
        }
    }
}

/// The sentence of a PCIe link narrower than the card can run, and
/// whether its slot explains it.
fn width_down(label: &str, (c, m): (u32, u32), slot: Option<u32>) -> String {
    let share = c * 100 / m;
    match slot {
        Some(s) if s > c => format!(
            "{label} runs at x{c} of x{m} lanes though its slot has x{s}: at most {share}% of its PCIe bandwidth."
        ),
        Some(s) => format!(
            "{label} runs at x{c} of the x{m} the card can: its slot has x{s}, so this is the slot, not a fault."
        ),
        None => format!(
            "{label} runs at x{c} of the x{m} the card can (at most {share}% of its PCIe bandwidth); the transcript does not show the slot's width, which decides whether this is a fault."
        ),
    }
}

/// `name +delta` for each counter, largest first.
fn counters(cs: &[(String, u64)]) -> String {
    cs.iter()
        .map(|(n, d)| format!("{n} +{d}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `mlx5_0 port 1` (sysfs port counters) or `interface ens1f0` (`ethtool -S`).
fn counted_on(device: &str, port: Option<u32>) -> String {
    match port {
        Some(p) => format!("{device} port {p}"),
        None => format!("interface {device}"),
    }
}

/// Port counters are read at a live collection's start and end, or in a
/// transcript's repeated tables; an interface's between its first and last
/// `ethtool -S` reading.
fn grew_when(port: Option<u32>) -> &'static str {
    match port {
        Some(_) => "between its first and last readings",
        None => "between the first and last `ethtool -S` reading",
    }
}

/// The sentence of a finding about a link (PCIe, NVLink, RDMA port);
/// [`summary`](super::summary) sends exactly these kinds here.
pub(super) fn link_summary(f: &Finding) -> String {
    match f {
        Finding::PcieWidthDown {
            address,
            name,
            current_lanes: c,
            max_lanes: m,
            slot_lanes,
        } => width_down(&pcie_label(address, name.as_deref()), (*c, *m), *slot_lanes),
        Finding::PcieSpeedDown {
            address,
            name,
            current,
            max,
        } => format!(
            "{} links at {} of {}. GPUs drop speed when idle; check again under load before replacing anything.",
            pcie_label(address, name.as_deref()),
            pcie_speed(*current),
            pcie_speed(*max)
        ),
        Finding::NvlinksInactive {
            gpu,
            inactive,
            total,
            designed,
        } => nvlinks_inactive(gpu, *inactive, *total, *designed),
        Finding::RdmaPortUnused {
            device,
            port,
            link_layer,
            physical_state,
        } => port_unused(
            device,
            *port,
            link_layer.as_deref(),
            physical_state.as_deref(),
        ),
        Finding::RdmaPortDown {
            device,
            port,
            state,
            physical_state,
        } => port_down(device, *port, state.as_deref(), physical_state.as_deref()),
        Finding::RdmaPortBelowRate {
            device,
            port,
            link_layer,
            rate_bytes_per_s,
            best_bytes_per_s,
        } => format!(
            "{device} port {port} is active at {} while other {} ports run at {}.",
            gbs(*rate_bytes_per_s),
            link_layer.as_deref().unwrap_or_default(),
            gbs(*best_bytes_per_s)
        ),
        Finding::PortErrorsGrew {
            device,
            port,
            counters: cs,
        } => format!(
            "{}: error counters grew {} ({}).",
            counted_on(device, *port),
            grew_when(*port),
            counters(cs)
        ),
        Finding::CongestionSignals {
            device,
            port,
            counters: cs,
        } => format!(
            "{}: congestion signals grew {} ({}).",
            counted_on(device, *port),
            grew_when(*port),
            counters(cs)
        ),
        // Not a link kind: [`summary`](super::summary) never sends one.
        other => other.name().to_string(),
    }
}
