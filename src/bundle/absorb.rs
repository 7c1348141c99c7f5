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
        // The first file's cells move in whole (no copy of every cell).
        if self.measurements.is_empty() {
            self.measurements = r.measurements;
        } else {
            self.measurements.extend(r.measurements);
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
