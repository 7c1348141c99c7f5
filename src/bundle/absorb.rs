//! Merging what one transcript yielded into a node's bundle.

use super::{Bundle, Problem, ProblemKind};
use crate::evidence::rdma::RdmaDevice;
use crate::ingest::Reading;

/// What [`Bundle::absorb`] added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Absorbed {
    /// A transcript was recognised and added.
    pub transcript: bool,
    /// Problems added: the reading's own and any conflicts it raised.
    pub problems: usize,
}

impl Bundle {
    /// Merges `r` into the bundle: topology (a disagreement with what is
    /// already known becomes a `conflict` problem, the first fact kept),
    /// cells, adapters (by name), PCIe links, the transcript and problems.
    pub fn absorb(&mut self, r: Reading) -> Absorbed {
        let before = self.problems.len();
        for c in self.topology.merge(r.topology) {
            self.problems.push(Problem {
                file: c.other.file.to_string(),
                line: Some(c.other.line),
                kind: ProblemKind::Conflict,
                message: format!("disagrees with {}:{}: {}", c.kept.file, c.kept.line, c.what),
            });
        }
        self.problems.extend(r.problems);
        let mut measurements = r.measurements;
        self.keep_figures_within_cap(&mut measurements);
        // The first file's cells move in whole (no copy of every cell).
        if self.measurements.is_empty() {
            self.measurements = measurements;
        } else {
            self.measurements.extend(measurements);
        }
        merge_rdma(&mut self.rdma, r.rdma);
        self.pcie.extend(r.pcie);
        self.interfaces.extend(r.interfaces);
        self.modules.extend(r.modules);
        self.nccl.extend(r.nccl);
        self.numa.extend(r.numa);
        self.counters.extend(r.counters);
        let transcript = r.transcript.is_some();
        self.transcripts.extend(r.transcript);
        Absorbed {
            transcript,
            problems: self.problems.len() - before,
        }
    }
}

/// The most figures one node's bundle keeps: hundreds of times what any
/// real run prints (the largest shipped capture has 280 in one file), and
/// few enough that every command loads such a bundle in well under a GiB.
/// A log that repeats a sweep for hours stops being read here instead of
/// making a bundle nothing can render. The same cap holds when a bundle is
/// loaded.
pub const MAX_FIGURES: usize = 200_000;

impl Bundle {
    /// Cuts `new` to what fits under [`MAX_FIGURES`]; the figures left out
    /// are one problem at the first line they came from.
    fn keep_figures_within_cap(
        &mut self,
        new: &mut Vec<crate::evidence::measurement::Measurement>,
    ) {
        let room = MAX_FIGURES.saturating_sub(self.measurements.len());
        if new.len() <= room {
            return;
        }
        let first = &new[room];
        let lines = new[room..].iter().map(|m| m.source.line);
        let (from, to) = (lines.clone().min().unwrap_or(0), lines.max().unwrap_or(0));
        self.problems.push(Problem {
            file: first.source.file.to_string(),
            line: Some(from),
            kind: ProblemKind::Parse,
            message: format!(
                "{} figures from lines {from}..{to} not kept: a node's bundle keeps at most {MAX_FIGURES} \
                 (the rest of a log that repeats its run; split the file to read them all)",
                new.len() - room
            ),
        });
        new.truncate(room);
    }
}

/// Folds adapters from another transcript of the node: same name, same
/// adapter; a port's missing facts are filled in, facts already known kept.
pub fn merge_rdma(into: &mut Vec<RdmaDevice>, from: Vec<RdmaDevice>) {
    for d in from {
        let Some(mine) = into.iter_mut().find(|x| x.name == d.name) else {
            into.push(d);
            continue;
        };
        mine.ca_type = mine.ca_type.take().or(d.ca_type);
        mine.firmware = mine.firmware.take().or(d.firmware);
        mine.node_guid = mine.node_guid.take().or(d.node_guid);
        mine.transport = mine.transport.take().or(d.transport);
        mine.board_id = mine.board_id.take().or(d.board_id);
        for p in d.ports {
            match mine.ports.iter_mut().find(|x| x.port == p.port) {
                None => mine.ports.push(p),
                Some(q) => {
                    macro_rules! fill {
                        ($($f:ident),*) => { $( if q.$f.is_none() { q.$f = p.$f.clone(); } )* };
                    }
                    fill!(
                        state,
                        active,
                        physical_state,
                        link_up,
                        rate_bytes_per_s,
                        rate_as_printed,
                        width,
                        speed,
                        active_mtu_bytes,
                        max_mtu_bytes,
                        link_layer,
                        lid,
                        sm_lid,
                        port_guid
                    );
                    if q.gids.is_empty() {
                        q.gids = p.gids;
                    }
                    if q.counters.is_empty() {
                        q.counters = p.counters;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Host, Origin};
    use crate::evidence::measurement::{Kind, Measurement, Statistic};

    fn reading(file: &'static str, figures: usize) -> Reading {
        let mut m = Measurement::new(
            "nccl-tests",
            1,
            Kind::Allreduce,
            "allreduce",
            Statistic::Avg,
        );
        m.source.file = file.into();
        m.bandwidth_bytes_per_s = Some(1e9);
        let measurements = (0..figures)
            .map(|i| {
                let mut c = m.clone();
                c.source.line = 10 + i;
                c
            })
            .collect();
        Reading {
            measurements,
            ..Reading::default()
        }
    }

    /// Hostile turn 3, case 10: a 120 MB log that repeats its run made a
    /// 658 MB bundle nothing could load in 8 GiB. A node keeps at most
    /// MAX_FIGURES figures; the rest are one problem at their lines, and a
    /// bundle with more is refused on load with a one-line reason.
    #[test]
    fn a_node_keeps_at_most_the_cap_of_figures_and_says_where_it_stopped() {
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        b.absorb(reading("a.txt", MAX_FIGURES - 5));
        assert!(b.problems.is_empty());
        b.absorb(reading("b.txt", 12));
        assert_eq!(b.measurements.len(), MAX_FIGURES);
        assert_eq!(b.problems.len(), 1);
        let p = &b.problems[0];
        assert_eq!((p.file.as_str(), p.line), ("b.txt", Some(15)));
        assert!(
            p.message
                .starts_with("7 figures from lines 15..21 not kept"),
            "{}",
            p.message
        );
        // Once full, a whole file's figures are one problem.
        b.absorb(reading("c.txt", 3));
        assert_eq!(b.measurements.len(), MAX_FIGURES);
        assert!(
            b.problems[1]
                .message
                .starts_with("3 figures from lines 10..12")
        );
        // Written past the cap (by hand, or an older collect): refused on
        // load, naming the file.
        b.measurements.push(b.measurements[0].clone());
        let err = Bundle::from_json(&b.to_json(), std::path::Path::new("big.json"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("big.json") && err.contains("at most 200000"),
            "{err}"
        );
    }
}
