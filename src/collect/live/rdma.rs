//! RDMA adapters: their ports as sysfs (and, with feature `rdma`,
//! libibverbs) describe them, merged with what the tools said, and the
//! port counters' change over the collection.

use super::recorder::{Policy, Recorder};
use crate::bundle::ProbeStatus;
use crate::collect::probes::Output;
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

/// One `ethtool -S` reading of each RDMA adapter's network interface, taken
/// at the start of the collection (with the per-tool timeout).
pub(super) fn ethtool_start(rec: &mut Recorder, root: &Root) -> Vec<(String, Output)> {
    let mut out = Vec::new();
    for iface in sysfs::rdma_interfaces(root) {
        let o = rec.runner.run("ethtool", &["-S", &iface]);
        let absent = o.status == ProbeStatus::Absent;
        out.push((iface, o));
        if absent {
            // Not installed: one probe says so, the other interfaces are not tried.
            break;
        }
    }
    out
}

/// Reads each interface again and saves both readings as one transcript
/// (`ethtool-S-<if>.txt`), read by the same parser as a pasted one: the
/// counters' growth during the collection.
pub(super) fn ethtool_end(rec: &mut Recorder, start: Vec<(String, Output)>) {
    for (iface, first) in start {
        let name = format!("ethtool -S {iface}");
        let file = format!("ethtool-S-{iface}.txt");
        if first.status != ProbeStatus::Ok {
            rec.command(name, &file, first, Policy::Benchmark);
            continue;
        }
        let second = rec.runner.run("ethtool", &["-S", &iface]);
        let mut text = format!("$ {name}\n").into_bytes();
        text.extend(&first.stdout);
        let both_read = second.status == ProbeStatus::Ok;
        if both_read {
            text.extend(format!("\n$ {name}\n").as_bytes());
            text.extend(&second.stdout);
        }
        let message = if both_read {
            "read at the start and the end of the collection".to_string()
        } else {
            format!("the second reading failed: {}", second.message)
        };
        let o = Output {
            status: first.status,
            stdout: text,
            message,
            duration: first.duration + second.duration,
        };
        rec.command(name, &file, o, Policy::Benchmark);
    }
}
