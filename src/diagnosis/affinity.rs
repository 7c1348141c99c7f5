//! Process and NUMA affinity (seed sections 3.7, 6.2): a process bound to
//! CPUs or memory away from the NUMA node of the GPUs it used. Only where
//! a binding is known ([`crate::facts::affinity`]): a live collection's
//! own process, or a `numactl` / `taskset` line a transcript kept.

use super::{Diagnosed, Finding, Why, push};
use crate::bundle::Bundle;
use crate::facts::affinity::{bindings, placement};

pub(super) fn process_affinity(b: &Bundle, out: &mut Vec<Diagnosed>) {
    for binding in bindings(b) {
        let p = placement(b, &binding);
        if p.far.is_empty() && p.far_nics.is_empty() {
            continue;
        }
        // Away from every GPU it used: nearby adapters do not make up for
        // that (every staged byte still crosses the socket link); away from
        // every device it used at all (a perftest far from its adapter).
        // Near some GPUs: a process bound to one socket is near its own.
        let why = if p.near_gpus == 0 && (!p.far.is_empty() || p.near == 0) {
            Why::ProcessAwayFromEveryGpu
        } else {
            Why::ProcessAwayFromSomeDevices
        };
        let mut evidence = Vec::new();
        evidence.extend(binding.source.clone());
        for (g, _) in p.far.iter().chain(&p.far_nics) {
            if let Some(d) = b
                .topology
                .devices
                .iter()
                .find(|d| &d.id == g || d.name.as_ref() == Some(g))
            {
                evidence.push(d.source.clone());
            }
        }
        push(
            out,
            why,
            Finding::ProcessFarFromGpu {
                gpus: p.far.iter().map(|(g, _)| g.clone()).collect(),
                gpu_numa_nodes: p.far.iter().filter_map(|(_, n)| *n).collect(),
                nics: p.far_nics.iter().map(|(n, _)| n.clone()).collect(),
                near_gpus: p.near,
                cpus: binding.cpus_as_given.clone(),
                cpu_nodes: binding.cpu_nodes.iter().flatten().copied().collect(),
                mem_nodes: binding.mem_nodes.iter().flatten().copied().collect(),
                command: binding.command.clone(),
                node_zero_assumed: p.node_zero_assumed,
            },
            evidence,
        );
    }
}
