//! A node's key figures: per tool, kind, direction, statistic, peer
//! access and buffers (host or GPU memory, and how a GPU buffer reached
//! the adapter: never one figure over both), the best and the worst figure — bandwidth at the largest
//! message (where a link shows its rate), latency at the smallest (where
//! it shows its overhead). The markdown summary and the node page both
//! show them; each writes its own words.

use std::collections::BTreeMap;

use crate::bundle::Bundle;
use crate::evidence::answers::{GpuRegistration, Path};
use crate::evidence::measurement::{Buffers, Direction, Kind, Measurement, P2p, Statistic};

/// One group of figures and its best and worst.
pub struct KeyFigure<'a> {
    pub tool: String,
    pub kind: Kind,
    pub direction: Direction,
    /// The statistic, lowercase (`avg`, `median`, `busbw`...).
    pub statistic: String,
    /// Latency figures (lower is better) rather than bandwidth.
    pub latency: bool,
    pub p2p: P2p,
    /// Where the buffers were, and how GPU ones were registered.
    pub buffers: Buffers,
    pub registration: GpuRegistration,
    pub best: &'a Measurement,
    pub worst: &'a Measurement,
    /// How many figures were compared at that size.
    pub count: usize,
}

impl KeyFigure<'_> {
    /// `one direction`, `both directions, summed`, or not stated; a
    /// collective has every rank sending and receiving at once.
    pub fn direction_words(&self) -> &'static str {
        if self.kind.is_collective() {
            return "a collective, every rank taking part";
        }
        match self.direction {
            Direction::Uni => "one direction",
            Direction::Bi => "both directions, summed",
            Direction::NotStated => "direction not stated by the transcript",
        }
    }

    /// `, peer access on`, `, peer access off`, or nothing.
    pub fn p2p_words(&self) -> &'static str {
        match self.p2p {
            P2p::Enabled => ", peer access on",
            P2p::Disabled => ", peer access off",
            P2p::NoPeerAccess => ", P2P asked for but no peer access (staged through the host)",
            P2p::Unknown => "",
        }
    }

    /// `, GPU buffers (DMA-BUF)`, `, host buffers`..., or `, buffers not
    /// stated` when the transcript does not say.
    pub fn buffers_words(&self) -> String {
        let how = self
            .registration
            .words()
            .map(|w| format!(" ({w})"))
            .unwrap_or_default();
        match self.buffers {
            Buffers::Device => format!(", GPU buffers{how}"),
            Buffers::HostPinned => ", pinned host buffers".into(),
            Buffers::HostPageable => ", pageable host buffers".into(),
            Buffers::Host => ", host buffers".into(),
            Buffers::Mixed => ", host and GPU buffers".into(),
            Buffers::Unknown => ", buffers not stated".into(),
        }
    }
}

/// How the GPU buffer of an RDMA run was registered.
fn registration(m: &Measurement) -> GpuRegistration {
    match &m.questions.path {
        Path::Rdma(r) => r.registration,
        _ => GpuRegistration::NotStated,
    }
}

/// The key figures of `b`, in a stable order. Local copies (a device to
/// itself) and statistics that are not a central value are left out.
pub fn key_figures(b: &Bundle) -> Vec<KeyFigure<'_>> {
    type Key = (
        String,
        &'static str,
        Direction,
        String,
        bool,
        P2p,
        Buffers,
        GpuRegistration,
    );
    let mut groups: BTreeMap<Key, Vec<&Measurement>> = BTreeMap::new();
    for m in &b.measurements {
        // A matrix's diagonal (a GPU to itself) is no pair; a host copy
        // (`host` to `host`, a live sweep's) is the figure itself.
        if (m.src.is_some() && m.src == m.dst && m.kind != Kind::H2h)
            || !matches!(
                m.statistic,
                Statistic::Avg
                    | Statistic::Median
                    | Statistic::Typical
                    | Statistic::Busbw
                    | Statistic::Sum
            )
        {
            continue;
        }
        let latency = m.bandwidth_bytes_per_s.is_none();
        if latency && m.latency_s.is_none() {
            continue;
        }
        let stat = format!("{:?}", m.statistic).to_lowercase();
        groups
            .entry((
                m.tool.to_string(),
                m.kind.as_str(),
                m.direction,
                stat,
                latency,
                m.p2p,
                m.buffers,
                registration(m),
            ))
            .or_default()
            .push(m);
    }
    let mut out = Vec::new();
    // The kind's name orders the groups; the figure keeps the kind itself.
    for ((tool, _, direction, statistic, latency, p2p, buffers, registration), ms) in groups {
        let value = |m: &Measurement| {
            if latency {
                -m.latency_s.unwrap_or(f64::INFINITY)
            } else {
                m.bandwidth_bytes_per_s.unwrap_or(0.0)
            }
        };
        let sizes = ms.iter().filter_map(|m| m.size_bytes);
        let at = if latency { sizes.min() } else { sizes.max() };
        let ms: Vec<&Measurement> = ms
            .into_iter()
            .filter(|m| at.is_none() || m.size_bytes == at)
            .collect();
        let best = ms.iter().max_by(|a, b| value(a).total_cmp(&value(b)));
        let worst = ms.iter().min_by(|a, b| value(a).total_cmp(&value(b)));
        let (Some(best), Some(worst)) = (best, worst) else {
            continue;
        };
        out.push(KeyFigure {
            tool,
            kind: best.kind,
            direction,
            statistic,
            latency,
            p2p,
            buffers,
            registration,
            best,
            worst,
            count: ms.len(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Host, Origin};

    fn one(kind: Kind) -> Bundle {
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        let mut m = Measurement::new("osu", 3, kind, "t", Statistic::Avg);
        m.size_bytes = Some(8);
        m.latency_s = Some(2e-6);
        m.direction = Direction::Uni;
        b.measurements.push(m);
        b
    }

    #[test]
    fn a_collective_is_not_said_to_go_one_direction() {
        let b = one(Kind::Allreduce);
        assert_eq!(
            key_figures(&b)[0].direction_words(),
            "a collective, every rank taking part"
        );
        let b = one(Kind::MpiPt2pt);
        assert_eq!(key_figures(&b)[0].direction_words(), "one direction");
    }
}
