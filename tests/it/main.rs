//! The integration tests, as one binary (one link, one process start):
//! each file drives one part of wire-report from the outside, on the real
//! captures under `captures/` unless a fixture says it is synthetic.

mod common;

mod bundle_v1;
mod bundle_v2;
mod captures;
mod charts;
mod cli;
mod counters;
mod cut_captures;
mod diagnosis;
mod diff;
mod fake_cuda;
mod fleet;
mod fragments;
mod gpu_buffers;
mod hostile;
mod hostile3;
mod live;
mod measurements;
mod metamorphic;
mod models;
mod never_panics;
mod numa_counters;
mod pair;
mod parse_gaps;
mod peer_copy_bw;
mod real_verdicts;
mod recovery;
mod redact;
mod runs;
mod shapes;
mod site;
mod streaming;
mod ticket;
mod topology_map;
mod verdicts;
mod wire;
