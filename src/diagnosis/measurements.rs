//! Rules on what the figures themselves say: P2P copies staged through the
//! host, runs that reported wrong data or failed, transcripts cut short,
//! figures far below their path's ceiling, and the unit traps (bits, sums
//! of both directions).

use std::collections::{BTreeMap, BTreeSet};

use super::severity::consumer_part;
use super::{Diagnosed, FAR_BELOW, Finding, Why, push};
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
/// Access is asked one direction at a time (rocm-smi, rocm_bandwidth_test
/// and the runtime print each ordered pair): a pair with any direction
/// supported has a peer path, and is left out.
fn no_peer_path(b: &Bundle) -> BTreeMap<(String, String), &P2pCell> {
    let mut out = BTreeMap::new();
    let mut reachable = BTreeSet::new();
    for c in b.topology.p2p.iter().filter(|c| c.src != c.dst) {
        if c.supported {
            reachable.insert(pair(&c.src, &c.dst));
        } else {
            out.entry(pair(&c.src, &c.dst)).or_insert(c);
        }
    }
    out.retain(|k, _| !reachable.contains(k));
    out
}

/// P2P-enabled below this fraction of P2P-disabled is a peer path slower
/// than the detour through the host (the ACS / IOMMU fingerprint); at or
/// below [`PEER_HALF`] it is critical.
const PEER_SLOWER: f64 = 1.0 - STAGING_SIMILARITY;
const PEER_HALF: f64 = 0.5;

/// Which row judges a staged peer copy on this GPU: a GeForce RTX part
/// stages by design, any other named part should not, and a part no
/// transcript names is not known either way.
fn staging_why(facts: &NodeFacts, gpu: &str) -> Why {
    match facts.gpu_model(gpu) {
        Some(m) if consumer_part(m) => Why::StagesByDesign,
        Some(_) => Why::StagesOnPeerCapablePart,
        None => Why::StagesPartNotNamed,
    }
}

/// Each GPU pair's P2P-enabled and P2P-disabled unidirectional cells
/// from one transcript, at one direction, size and statistic.
fn enabled_and_disabled(b: &Bundle) -> Vec<(&Measurement, &Measurement)> {
    type Pair<'a> = (Option<&'a Measurement>, Option<&'a Measurement>);
    let mut pairs: BTreeMap<CellKey, Pair<'_>> = BTreeMap::new();
    for m in &b.measurements {
        if m.kind != Kind::P2pCopy
            || m.bandwidth_bytes_per_s.is_none_or(|x| x <= 0.0)
            || m.direction != Direction::Uni
            || m.src == m.dst
        {
            continue;
        }
        let Some(k) = key(m) else { continue };
        let e = pairs.entry(k).or_default();
        match m.p2p {
            // A pair the tool says cannot peer is compared as well: its
            // "enabled" figure is the staged one, as the figures show.
            P2p::Enabled | P2p::NoPeerAccess => e.0 = Some(m),
            P2p::Disabled => e.1 = Some(m),
            P2p::Unknown => {}
        }
    }
    pairs
        .into_values()
        .filter_map(|(e, d)| Some((e?, d?)))
        .collect()
}

/// The message size of a figure: as printed, else the buffer its tool
/// always moves (`facts::trust::tool_buffer_bytes`).
fn size_of(m: &Measurement) -> Option<u64> {
    m.size_bytes
        .or_else(|| crate::facts::trust::tool_buffer_bytes(m.tool.as_str()))
}

fn bw(m: &Measurement) -> f64 {
    m.bandwidth_bytes_per_s.unwrap_or(0.0)
}

fn ends(m: &Measurement) -> (String, String) {
    (
        m.src.as_deref().unwrap_or_default().to_string(),
        m.dst.as_deref().unwrap_or_default().to_string(),
    )
}

pub(super) fn silent_staging(b: &Bundle, facts: &NodeFacts, out: &mut Vec<Diagnosed>) {
    let both = enabled_and_disabled(b);
    let flagged: Vec<_> = both
        .iter()
        .filter(|(e, d)| (bw(e) - bw(d)).abs() <= STAGING_SIMILARITY * bw(d))
        .collect();
    let no_path = no_peer_path(b);
    let staged: BTreeSet<(String, String)> = flagged
        .iter()
        .map(|(e, _)| {
            let (s, d) = ends(e);
            pair(&s, &d)
        })
        .collect();
    // One finding per node makes the point; the matrices show the rest.
    if let Some((en, dis)) = flagged.first() {
        let (src, dst) = ends(en);
        push(
            out,
            staging_why(facts, &src),
            Finding::SilentStaging {
                p2p_status: no_path.get(&pair(&src, &dst)).map(|c| c.status.clone()),
                src,
                dst,
                enabled_bytes_per_s: bw(en),
                disabled_bytes_per_s: bw(dis),
                size_bytes: size_of(en),
                pairs: staged.len(),
            },
            vec![en.source.clone(), dis.source.clone()],
        );
    }
    peer_slower_than_staged(&both, out);
    // A tool's "no peer path" the figures have not already shown: the same
    // cause, said by the topology instead of the copies.
    let unshown: Vec<_> = no_path
        .iter()
        .filter(|(k, _)| !staged.contains(*k))
        .collect();
    if let Some(((a, bb), c)) = unshown.first() {
        let by_design =
            c.status.eq_ignore_ascii_case("GNS") || facts.gpu_model(a).is_some_and(consumer_part);
        push(
            out,
            if by_design {
                Why::NoPeerPathByDesign
            } else {
                Why::NoPeerPathPlatform
            },
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

/// Peer copies slower than the staged copies of the same pair: the pair
/// with the lowest ratio is named, every such pair counted.
fn peer_slower_than_staged(both: &[(&Measurement, &Measurement)], out: &mut Vec<Diagnosed>) {
    let slower: Vec<_> = both
        .iter()
        .filter(|(e, d)| bw(e) < PEER_SLOWER * bw(d))
        .collect();
    let Some((en, dis)) = slower
        .iter()
        .min_by(|a, b| (bw(a.0) / bw(a.1)).total_cmp(&(bw(b.0) / bw(b.1))))
    else {
        return;
    };
    let pairs: BTreeSet<(String, String)> = slower
        .iter()
        .map(|(e, _)| {
            let (s, d) = ends(e);
            pair(&s, &d)
        })
        .collect();
    let (src, dst) = ends(en);
    push(
        out,
        if bw(en) <= PEER_HALF * bw(dis) {
            Why::PeerHalfOfStaged
        } else {
            Why::PeerSlowerThanStaged
        },
        Finding::PeerSlowerThanStaged {
            src,
            dst,
            enabled_bytes_per_s: bw(en),
            disabled_bytes_per_s: bw(dis),
            size_bytes: size_of(en),
            pairs: pairs.len(),
        },
        vec![en.source.clone(), dis.source.clone()],
    );
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
            Why::WrongResults,
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
    // A run whose figures already count wrong values (`wrong-results`):
    // its `Out of bounds values ... FAILED` and `#wrong` lines are the same
    // corruption, said once there.
    let corrupted: BTreeSet<&str> = b
        .measurements
        .iter()
        .filter(|m| {
            matches!(
                m.verification,
                Verification::Checked { errors: 1.. } | Verification::Failed
            )
        })
        .map(|m| &*m.source.file)
        .collect();
    for p in &b.problems {
        if p.kind == ProblemKind::ToolError
            && corrupted.contains(p.file.as_str())
            && !data_check(&p.message)
        {
            continue;
        }
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
                        Why::ToolMissedDevice
                    } else {
                        Why::ToolFailed
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
                Why::Truncated,
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
            Why::DataCheckFailed,
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
            if software_rdma {
                Why::FarBelowCeilingSoftwareRdma
            } else {
                Why::FarBelowCeiling
            },
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
            Why::BitsNotBytes,
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
            Why::BidirectionalSum,
            Finding::BidirectionalSum {
                tool: m.tool.to_string(),
                test: m.test.to_string(),
                example_bytes_per_s: m.bandwidth_bytes_per_s.unwrap_or(0.0),
            },
            vec![m.source.clone()],
        );
    }
}
