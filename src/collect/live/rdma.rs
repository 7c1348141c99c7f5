//! RDMA adapters: their ports as sysfs (and, with feature `rdma`,
//! libibverbs) describe them, merged with what the tools said, and the
//! port counters' change over the collection.

use super::recorder::Recorder;
use crate::bundle::ProbeStatus;
use crate::collect::sysfs::{self, CounterSnapshot, Root};

#[cfg(feature = "rdma")]
use crate::bundle::ProblemKind;

/// The ports sysfs lists, then (feature `rdma`) those libibverbs lists.
pub(super) fn ports(rec: &mut Recorder, root: &Root) {
    rec.timed("sysfs /sys/class/infiniband", |rec| {
        let rdma = sysfs::rdma_devices(root);
        let message = format!("{} RDMA device(s)", rdma.len());
        crate::bundle::merge_rdma(&mut rec.b.rdma, rdma);
        (ProbeStatus::Ok, message)
    });
    #[cfg(feature = "rdma")]
    rec.timed(
        "libibverbs devices",
        |rec| match crate::collect::verbs::devices() {
            Ok(devs) => {
                let message = format!("{} device(s) from libibverbs", devs.len());
                crate::bundle::merge_rdma(&mut rec.b.rdma, devs);
                (ProbeStatus::Ok, message)
            }
            Err(e) => {
                rec.problem("libibverbs", ProblemKind::Probe, e.clone());
                (ProbeStatus::Failed, e)
            }
        },
    );
}

/// Each port's counters: how much they changed between `start` and now.
pub(super) fn counters(rec: &mut Recorder, root: &Root, start: &CounterSnapshot) {
    let end = sysfs::rdma_counters(root);
    for ((dev, port), cs) in sysfs::counter_deltas(start, &end) {
        if let Some(p) = rec
            .b
            .rdma
            .iter_mut()
            .find(|d| d.name == dev)
            .and_then(|d| d.ports.iter_mut().find(|p| p.port == port))
        {
            p.counters = cs;
        }
    }
}
