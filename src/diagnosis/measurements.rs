//! Rules on what the figures themselves say: P2P copies staged through the
//! host, runs that reported wrong data or failed, transcripts cut short,
//! figures far below their path's ceiling, and the unit traps (bits, sums
//! of both directions).

use std::collections::{BTreeMap, BTreeSet};

use super::{Diagnosed, FAR_BELOW, Finding, Severity, push};
use crate::bundle::{Bundle, ProblemKind};
use crate::evidence::Source;
use crate::evidence::measurement::{Direction, Kind, Measurement, P2p, Statistic, Verification};
use crate::evidence::topology::P2pCell;
use crate::facts::{CeilingSource, NodeFacts, PathCeiling};

/// P2P-enabled within this fraction of P2P-disabled is the staging
/// fingerprint (seed section 3.5: the fallback works and is slow).
const STAGING_SIMILARITY: f64 = 0.10;

/// A staging comparison compares like with like: the same transcript,
/// pair, direction, message size and statistic.
type CellKey = (String, String, String, Direction, Option<u64>, Statistic);

fn key(m: &Measurement) -> Option<CellKey> {
    Some((
        m.source.file.to_string(),
        m.src.as_ref()?.to_string(),
        m.dst.as_ref()?.to_string(),
        m.direction,
        m.size_bytes,
        m.statistic,
    ))
}

/// An unordered GPU pair.
fn pair(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

/// Pairs a tool says have no peer path, each with the first cell saying so.
fn no_peer_path(b: &Bundle) -> BTreeMap<(String, String), &P2pCell> {
    let mut out = BTreeMap::new();
    for c in b
        .topology
        .p2p
        .iter()
        .filter(|c| !c.supported && c.src != c.dst)
    {
        out.entry(pair(&c.src, &c.dst)).or_insert(c);
    }
    out
}

pub(super) fn silent_staging(b: &Bundle, out: &mut Vec<Diagnosed>) {
    // Pair -> (P2P enabled, P2P disabled) unidirectional cells, same transcript.
    type Pair<'a> = (Option<&'a Measurement>, Option<&'a Measurement>);
    let mut pairs: BTreeMap<CellKey, Pair<'_>> = BTreeMap::new();
    for m in &b.measurements {
        if m.kind != Kind::P2pCopy
            || m.bandwidth_bytes_per_s.is_none()
            || m.direction != Direction::Uni
        {
            continue;
        }
        let Some(k) = key(m) else { continue };
        let e = pairs.entry(k).or_default();
        match m.p2p {
            P2p::Enabled => e.0 = Some(m),
            P2p::Disabled => e.1 = Some(m),
            P2p::Unknown => {}
        }
    }
    let flagged: Vec<_> = pairs
        .iter()
        .filter_map(|((_, src, dst, ..), pair)| {
            let (Some(en), Some(dis)) = pair else {
                return None;
            };
            let (e, d) = (
                en.bandwidth_bytes_per_s.unwrap_or(0.0),
                dis.bandwidth_bytes_per_s.unwrap_or(0.0),
            );
            (d > 0.0 && (e - d).abs() <= STAGING_SIMILARITY * d)
                .then_some((src, dst, *en, *dis, e, d))
        })
        .collect();
    let no_path = no_peer_path(b);
    let staged: BTreeSet<(String, String)> = flagged.iter().map(|f| pair(f.0, f.1)).collect();
    // One finding per node makes the point; the matrices show the rest.
    if let Some(&(src, dst, en, dis, e, d)) = flagged.first() {
        push(
            out,
            Severity::Critical,
            Finding::SilentStaging {
                src: src.clone(),
                dst: dst.clone(),
                enabled_bytes_per_s: e,
                disabled_bytes_per_s: d,
                pairs: staged.len(),
                p2p_status: no_path.get(&pair(src, dst)).map(|c| c.status.clone()),
            },
            vec![en.source.clone(), dis.source.clone()],
        );
    }
    // A tool's "no peer path" the figures have not already shown: the same
    // cause, said by the topology instead of the copies.
    let unshown: Vec<_> = no_path
        .iter()
        .filter(|(k, _)| !staged.contains(*k))
        .collect();
    if let Some(((a, bb), c)) = unshown.first() {
        push(
            out,
            Severity::Warning,
            Finding::NoPeerPath {
                a: a.clone(),
                b: bb.clone(),
                status: c.status.clone(),
                pairs: unshown.len(),
            },
            vec![c.source.clone()],
        );
    }
}

pub(super) fn wrong_results(b: &Bundle, out: &mut Vec<Diagnosed>) {
    // Per tool and test: values counted wrong, rows failed without a count.
    let mut per: BTreeMap<(String, String), (u64, u64, Source)> = BTreeMap::new();
    // The cells of one printed half-row (time, algbw, busbw) share its
    // `#wrong`: count it once per file, line and test.
    let mut counted: std::collections::BTreeSet<(String, usize, String)> = Default::default();
    for m in &b.measurements {
        let (errors, failed) = match m.verification {
            Verification::Checked { errors } if errors > 0 => (errors, 0),
            Verification::Failed => (0, 1),
            _ => continue,
        };
        if counted.insert((m.source.file.to_string(), m.source.line, m.test.to_string())) {
            let e = per
                .entry((m.tool.to_string(), m.test.to_string()))
                .or_insert((0, 0, m.source.clone()));
            e.0 += errors;
            e.1 += failed;
        }
    }
    for ((tool, what), (errors, failed_rows, src)) in per {
        push(
            out,
            Severity::Critical,
            Finding::WrongResults {
                tool,
                what,
                errors,
                failed_rows,
            },
            vec![src],
        );
    }
}

/// Whether a tool's error is its own data check failing (nvbandwidth:
/// `data check failed`, the pattern-compare assertion).
fn data_check(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("data check") || m.contains("checking the pattern") || m.contains("memcmppattern")
}

/// Whether a tool failed because it could not open or stat a device
/// (`ibpanic: ... stat of IB device 'mlx5_8' failed: No such file or
/// directory`; ibstatus in the same capture reads that device Active): a
/// gap in the capture, not a fault of the node.
fn missing_device(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("no such file or directory") || m.contains("no such device")
}

pub(super) fn tool_failures(b: &Bundle, out: &mut Vec<Diagnosed>) {
    // One data-check failure per transcript and test, with every line of it.
    let mut checks: BTreeMap<String, (String, String, Vec<Source>)> = BTreeMap::new();
    for p in &b.problems {
        let src = Source {
            file: p.file.clone().into(),
            line: p.line.unwrap_or(1),
        };
        let tool = b
            .transcripts
            .iter()
            .find(|t| t.path == p.file)
            .map(|t| t.tool.as_str().to_string())
            .unwrap_or_default();
        match p.kind {
            ProblemKind::ToolError if data_check(&p.message) => {
                let e = checks
                    .entry(p.file.clone())
                    .or_insert_with(|| (tool, p.message.clone(), Vec::new()));
                e.2.push(src);
            }
            ProblemKind::ToolError => {
                let capture_defect = missing_device(&p.message);
                push(
                    out,
                    if capture_defect {
                        Severity::Info
                    } else {
                        Severity::Warning
                    },
                    Finding::ToolFailed {
                        tool,
                        message: p.message.clone(),
                        capture_defect,
                    },
                    vec![src],
                )
            }
            ProblemKind::Truncated => push(
                out,
                Severity::Info,
                Finding::Truncated {
                    file: p.file.clone(),
                    message: p.message.clone(),
                },
                vec![src],
            ),
            _ => {}
        }
    }
    for (tool, message, sources) in checks.into_values() {
        // The test's name, as the message quotes it.
        let test = message.split('`').nth(1).unwrap_or_default().to_string();
        push(
            out,
            Severity::Critical,
            Finding::DataCheckFailed {
                tool,
                test,
                message,
            },
            sources,
        );
    }
}

pub(super) fn far_below_ceiling(b: &Bundle, facts: &NodeFacts, out: &mut Vec<Diagnosed>) {
    // Best figure per series, with its ceiling.
    type Series = (String, String, Option<String>, Option<String>);
    let mut best: BTreeMap<Series, (&Measurement, PathCeiling)> = BTreeMap::new();
    for m in &b.measurements {
        if !matches!(m.statistic, Statistic::Avg | Statistic::Peak) {
            continue;
        }
        let Some(bw) = m.bandwidth_bytes_per_s else {
            continue;
        };
        let Some(c) = facts.ceiling(m) else { continue };
        let k = (
            m.source.file.to_string(),
            m.test.to_string(),
            m.src.as_ref().map(|x| x.to_string()),
            m.dst.as_ref().map(|x| x.to_string()),
        );
        match best.get(&k) {
            Some((prev, _)) if prev.bandwidth_bytes_per_s.unwrap_or(0.0) >= bw => {}
            _ => {
                best.insert(k, (m, c));
            }
        }
    }
    for ((_, test, src, dst), (m, ceiling)) in best {
        let bw = m.bandwidth_bytes_per_s.unwrap_or(0.0);
        if bw >= FAR_BELOW * ceiling.bytes_per_s {
            continue;
        }
        let software_rdma = match &ceiling.from {
            CeilingSource::RdmaPort { device, .. } => {
                crate::facts::ports::is_software_rdma(b, device)
            }
            _ => false,
        };
        push(
            out,
            Severity::Warning,
            Finding::FarBelowCeiling {
                test,
                src,
                dst,
                measured_bytes_per_s: bw,
                peak: m.statistic == Statistic::Peak,
                size_bytes: m.size_bytes,
                software_rdma,
                ceiling,
            },
            vec![m.source.clone()],
        );
    }
}

pub(super) fn unit_traps(b: &Bundle, out: &mut Vec<Diagnosed>) {
    // The largest figure of each transcript printed in bits, and of each
    // bidirectional test between two different endpoints: one finding each.
    let mut bits: BTreeMap<String, &Measurement> = BTreeMap::new();
    let mut bi: BTreeMap<(String, String), &Measurement> = BTreeMap::new();
    let bigger =
        |a: &Measurement, b: &Measurement| b.bandwidth_bytes_per_s > a.bandwidth_bytes_per_s;
    for m in &b.measurements {
        if m.bandwidth_bytes_per_s.is_none() {
            continue;
        }
        if m.as_printed.contains("Gb/sec") {
            let e = bits.entry(m.source.file.to_string()).or_insert(m);
            if bigger(e, m) {
                *e = m;
            }
        }
        if m.direction == Direction::Bi && m.statistic != Statistic::Sum && m.src != m.dst {
            let e = bi
                .entry((m.source.file.to_string(), m.test.to_string()))
                .or_insert(m);
            if bigger(e, m) {
                *e = m;
            }
        }
    }
    for m in bits.into_values() {
        push(
            out,
            Severity::Info,
            Finding::BitsNotBytes {
                tool: m.tool.to_string(),
                example_as_printed: m.as_printed.to_string(),
                example_bytes_per_s: m.bandwidth_bytes_per_s.unwrap_or(0.0),
            },
            vec![m.source.clone()],
        );
    }
    for m in bi.into_values() {
        push(
            out,
            Severity::Info,
            Finding::BidirectionalSum {
                tool: m.tool.to_string(),
                test: m.test.to_string(),
                example_bytes_per_s: m.bandwidth_bytes_per_s.unwrap_or(0.0),
            },
            vec![m.source.clone()],
        );
    }
}
