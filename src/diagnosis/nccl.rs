//! What NCCL's own log says of the paths it chose (seed sections 2.3 and
//! 3.5): GPU pairs of one node joined through host shared memory (SHM, a
//! staged path), network traffic without GPUDirect RDMA (host staging on
//! both ends), and a fall back to TCP sockets on a node that has RDMA
//! adapters. NCCL picks its path silently; its INFO log is where the
//! choice is written down.

use super::severity::consumer_part;
use super::{Diagnosed, Finding, Why, push};
use crate::bundle::Bundle;
use crate::evidence::Source;
use crate::evidence::nccl::NcclTransport;
use crate::facts::NodeFacts;

pub(super) fn nccl_paths(b: &Bundle, facts: &NodeFacts, out: &mut Vec<Diagnosed>) {
    shm_between_gpus(b, facts, out);
    net_without_gdrdma(b, out);
    socket_fallback(b, facts, out);
}

/// SHM paths between ranks: NCCL uses shared memory only inside a node,
/// when it cannot (or was told not to) copy peer to peer.
fn shm_between_gpus(b: &Bundle, facts: &NodeFacts, out: &mut Vec<Diagnosed>) {
    let shm: Vec<_> = b
        .nccl
        .iter()
        .flat_map(|i| &i.paths)
        .filter(|p| p.transport == NcclTransport::Shm && p.src_rank != p.dst_rank)
        .collect();
    let Some(first) = shm.first() else { return };
    let mut pairs: Vec<(u32, u32)> = shm
        .iter()
        .map(|p| (p.src_rank.min(p.dst_rank), p.src_rank.max(p.dst_rank)))
        .collect();
    pairs.sort();
    pairs.dedup();
    let consumer = facts
        .gpu_names
        .values()
        .map(String::as_str)
        .chain(facts.named_gpus.iter().map(|g| g.model.as_str()))
        .any(consumer_part);
    push(
        out,
        if consumer {
            Why::NcclShmByDesign
        } else {
            Why::NcclShmBetweenGpus
        },
        Finding::NcclStagedPath {
            src_rank: first.src_rank,
            dst_rank: first.dst_rank,
            via: first.via.clone(),
            pairs: pairs.len(),
        },
        shm.iter().take(3).map(|p| p.source.clone()).collect(),
    );
}

/// Network paths whose adapter reaches GPU memory only through the host:
/// NCCL says `GPU Direct RDMA Disabled for HCA`, or its NET channels lack
/// `/GDRDMA`.
fn net_without_gdrdma(b: &Bundle, out: &mut Vec<Diagnosed>) {
    let disabled: Vec<&crate::evidence::nccl::NcclGpuDirect> = b
        .nccl
        .iter()
        .flat_map(|i| &i.gpu_direct)
        .filter(|g| !g.enabled)
        .collect();
    let enabled_somewhere = b.nccl.iter().flat_map(|i| &i.gpu_direct).any(|g| g.enabled);
    let net_paths: Vec<_> = b
        .nccl
        .iter()
        .flat_map(|i| &i.paths)
        .filter(|p| p.transport == NcclTransport::Net)
        .collect();
    // Over IB or RoCE only: sockets have no GPUDirect to lose (their own
    // finding), and EFA's OFI paths name GDR differently.
    let ib_paths: Vec<_> = net_paths
        .iter()
        .filter(|p| p.via.contains("NET/IB"))
        .collect();
    let staged_paths: Vec<_> = ib_paths
        .iter()
        .filter(|p| !p.via.contains("GDRDMA"))
        .collect();
    let (adapters, evidence): (Vec<String>, Vec<Source>) = if !disabled.is_empty() {
        let mut names: Vec<String> = disabled.iter().map(|g| g.adapter.clone()).collect();
        names.sort();
        names.dedup();
        (
            names,
            disabled.iter().take(3).map(|g| g.source.clone()).collect(),
        )
    } else if !staged_paths.is_empty() && !enabled_somewhere && staged_paths.len() == ib_paths.len()
    {
        (
            Vec::new(),
            staged_paths
                .iter()
                .take(3)
                .map(|p| p.source.clone())
                .collect(),
        )
    } else {
        return;
    };
    push(
        out,
        Why::NcclNetWithoutGdrdma,
        Finding::NcclNoGpuDirect {
            adapters,
            staged_paths: staged_paths.len(),
        },
        evidence,
    );
}

/// NCCL on TCP sockets while the node has RDMA adapters: the fabric is
/// there and NCCL is not using it (no IB device usable, the plugin
/// missing, `NCCL_IB_DISABLE`).
fn socket_fallback(b: &Bundle, facts: &NodeFacts, out: &mut Vec<Diagnosed>) {
    let Some(init) = b.nccl.iter().find(|i| {
        i.net
            .as_deref()
            .is_some_and(|n| n.eq_ignore_ascii_case("socket"))
    }) else {
        return;
    };
    let adapters: Vec<String> = b
        .rdma
        .iter()
        .map(|d| d.name.clone())
        .chain(facts.nics.iter().filter_map(|n| n.name.clone()))
        .chain(
            b.nccl
                .iter()
                .flat_map(|i| &i.adapters)
                .map(|a| a.name.clone()),
        )
        .collect();
    if adapters.is_empty() {
        return;
    }
    let mut adapters = adapters;
    adapters.sort();
    adapters.dedup();
    push(
        out,
        Why::NcclSocketWithRdma,
        Finding::NcclSocketFallback { adapters },
        vec![
            init.net_source
                .clone()
                .unwrap_or_else(|| init.source.clone()),
        ],
    );
}
