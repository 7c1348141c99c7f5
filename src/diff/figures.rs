//! Bandwidth figures compared across two collections: the same tool, test,
//! pair, direction, size and statistic, reported only when it moved beyond
//! the spread the repetitions showed (our sweeps record the fastest and
//! slowest repetition), or beyond [`DEFAULT_RELATIVE_SPREAD`] when the tool
//! reports none.

use std::collections::BTreeMap;

use super::{ChangeKind, Figure};
use crate::bundle::Bundle;
use crate::evidence::measurement::{Measurement, Statistic};

/// When a tool reports no spread of its own, a change below this fraction
/// is not reported.
pub const DEFAULT_RELATIVE_SPREAD: f64 = 0.10;

/// A measured spread is never taken as narrower than this.
const MIN_RELATIVE_SPREAD: f64 = 0.02;

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

/// One figure of one collection.
struct Value<'a> {
    bytes_per_s: f64,
    /// The relative spread its repetitions showed, when recorded.
    spread: Option<f64>,
    cell: &'a Measurement,
}

/// Per figure (cell and statistic): its central value and spread.
fn figures(b: &Bundle) -> BTreeMap<(CellKey, String), Value<'_>> {
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
        let v = Value {
            bytes_per_s: bw,
            spread: rel,
            cell: m,
        };
        out.insert((k, format!("{:?}", m.statistic)), v);
    }
    out
}

fn figure(m: &Measurement) -> Figure {
    Figure {
        tool: m.tool.to_string(),
        test: m.test.to_string(),
        src: m.src.as_ref().map(|s| s.to_string()),
        dst: m.dst.as_ref().map(|s| s.to_string()),
        direction: m.direction,
        size_bytes: m.size_bytes,
        statistic: m.statistic,
    }
}

/// How many figures were compared, and how many stayed within their spread.
pub(super) struct Compared {
    pub compared: usize,
    pub within_spread: usize,
}

/// Figures of both collections that moved beyond their spread.
pub(super) fn bandwidth(old: &Bundle, new: &Bundle, out: &mut Vec<ChangeKind>) -> Compared {
    let mut c = Compared {
        compared: 0,
        within_spread: 0,
    };
    let of = figures(old);
    for (k, n) in figures(new) {
        let Some(o) = of.get(&k) else {
            continue;
        };
        c.compared += 1;
        let spread = n.spread.into_iter().chain(o.spread).fold(0.0f64, f64::max);
        let threshold = if spread > 0.0 {
            spread.max(MIN_RELATIVE_SPREAD)
        } else {
            DEFAULT_RELATIVE_SPREAD
        };
        let rel = (n.bytes_per_s - o.bytes_per_s) / o.bytes_per_s;
        if rel.abs() <= threshold {
            c.within_spread += 1;
            continue;
        }
        out.push(ChangeKind::Bandwidth {
            figure: figure(n.cell),
            before_bytes_per_s: o.bytes_per_s,
            after_bytes_per_s: n.bytes_per_s,
            relative_change: rel,
            spread,
            threshold,
        });
    }
    c
}
