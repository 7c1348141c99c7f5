//! The copy sweeps wire-report times itself: host memory copies (the host
//! tier, and what a staged copy pays) and GPU copies through each vendor
//! runtime that is installed.

use super::recorder::Recorder;
use crate::bundle::ProbeStatus;
use crate::bundle::{Bundle, ProblemKind, System};
use crate::collect::gpu::{self, Gpu, GpuApi, Unavailable};
use crate::collect::sweep::{self, HostBackend, Plan, Settings};
use crate::evidence::Source;
use crate::evidence::measurement::Verification;
use crate::evidence::text::Text;
use crate::evidence::topology::P2pCell;

/// Says before a sweep runs what it will measure and about how long it
/// takes, on stderr, when `announce`.
fn announce(announce: bool, name: &str, plan: &Plan) {
    if announce {
        if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            // Clears the progress bar's line, as the bar's own println does.
            crate::say::raw("\r\x1b[2K");
        }
        crate::say::line(format_args!("{name}: {}", plan.describe()));
    }
}

/// Host memory copies: one path, planned from `settings` before it runs.
pub(super) fn host(rec: &mut Recorder, settings: &Settings, sys: &System, announce_plan: bool) {
    const NAME: &str = "host memcpy sweep";
    // One copy per window: the monotonic clock around a host memcpy
    // costs nothing that a window of many would hide.
    let one = Settings {
        copies_per_window: 1,
        ..settings.clone()
    };
    let plan = Plan::new(&one, 1);
    announce(announce_plan, NAME, &plan);
    rec.timed(NAME, |rec| {
        let placement = format!(
            "process allowed on CPUs {} and NUMA nodes {}",
            sys.cpus_allowed.as_deref().unwrap_or("not stated"),
            sys.mems_allowed.as_deref().unwrap_or("not stated")
        );
        let context = crate::evidence::answers::Context::Uncontrolled {
            load_average: sys.load_average.clone().map(Into::into),
            gpu: false,
        };
        let r = sweep::run(&mut HostBackend::new(&placement), &plan);
        let cells = sweep::cells(&r, "host", &context, false);
        let message = format!(
            "planned {}; {}; {} cells",
            plan.describe(),
            r.ran(),
            cells.len()
        );
        let status = match &r.error {
            Some(e) => {
                rec.problem(NAME, ProblemKind::Probe, e.clone());
                ProbeStatus::Failed
            }
            None => ProbeStatus::Ok,
        };
        let bad: u64 = r.points.iter().map(|p| p.mismatched_bytes).sum();
        if bad > 0 {
            rec.problem(
                NAME,
                ProblemKind::ToolError,
                format!("{bad} bytes differed after host copies"),
            );
        }
        for mut m in cells {
            m.source.file = NAME.into();
            rec.b.measurements.push(m);
        }
        (status, message)
    });
}

/// One runtime's copy sweeps (CUDA, or HIP with feature `rocm`) over the
/// devices its `inventory` found: every path planned together from
/// `settings` before the first runs.
pub(super) fn gpu<A: GpuApi>(
    rec: &mut Recorder,
    settings: &Settings,
    sys: &System,
    announce_plan: bool,
    api: &A,
    inventory: Result<Vec<Gpu>, Unavailable>,
) {
    let name = format!("{} copy sweeps", A::NAME);
    rec.timed(&name, |rec| match inventory {
        Ok(gpus) => {
            let how = How {
                name: &name,
                settings,
                sys,
                announce: announce_plan,
            };
            gpu_sweeps(rec, &how, api, &gpus)
        }
        Err(why) => {
            let (status, message) = match why {
                Unavailable::NoLibrary => (
                    ProbeStatus::Absent,
                    format!(
                        "the {} runtime is not installed: no {} copies measured",
                        A::NAME,
                        A::NAME
                    ),
                ),
                Unavailable::NoDevice(e) => (
                    ProbeStatus::Failed,
                    format!("the {} runtime reports no usable device: {e}", A::NAME),
                ),
            };
            rec.problem(A::NAME, ProblemKind::Probe, message.clone());
            (status, message)
        }
    });
}

/// What a runtime's sweeps are run with.
struct How<'a> {
    name: &'a str,
    settings: &'a Settings,
    sys: &'a System,
    announce: bool,
}

fn gpu_sweeps<A: GpuApi>(
    rec: &mut Recorder,
    how: &How<'_>,
    api: &A,
    gpus: &[Gpu],
) -> (ProbeStatus, String) {
    let name = how.name;
    let ids = name_gpus(&mut rec.b, gpus);
    let id_of = |g: &Gpu| {
        ids.iter()
            .find(|(o, _)| *o == g.ordinal)
            .map(|x| x.1.clone())
            .unwrap_or_default()
    };
    let context = crate::evidence::answers::Context::Uncontrolled {
        load_average: how.sys.load_average.clone().map(Into::into),
        gpu: true,
    };
    let summary: Vec<String> = gpus
        .iter()
        .map(|g| {
            format!(
                "{} {} ({}, {} GiB)",
                id_of(g),
                g.name,
                g.pci_bus_id,
                g.memory_bytes >> 30
            )
        })
        .collect();
    let jobs = gpu::jobs(api, gpus, &id_of);
    let plan = Plan::new(how.settings, jobs.copies.len());
    announce(how.announce, name, &plan);
    let r = gpu::run_jobs(api, gpus, jobs, &plan, &context);
    for e in &r.errors {
        rec.problem(name, ProblemKind::Probe, e.clone());
    }
    let bad = r
        .cells
        .iter()
        .filter(|m| matches!(m.verification, Verification::Checked { errors } if errors > 0))
        .count();
    if bad > 0 {
        rec.problem(
            name,
            ProblemKind::ToolError,
            format!("{bad} {} copy results had wrong bytes", A::NAME),
        );
    }
    let file = Text::from(name.to_string());
    // The runtime's peer-access answers are topology facts: a pair it
    // refuses has no peer path (the diagnosis's `no-peer-path`).
    for (src, dst, can) in &r.peers {
        rec.b.topology.p2p.push(P2pCell {
            src: src.clone(),
            dst: dst.clone(),
            status: format!("{} canAccessPeer = {}", A::NAME, u8::from(*can)),
            supported: *can,
            source: Source {
                file: file.clone(),
                line: 1,
            },
        });
    }
    for mut m in r.cells {
        m.source.file = file.clone();
        rec.b.measurements.push(m);
    }
    let status = if r.errors.is_empty() {
        ProbeStatus::Ok
    } else {
        ProbeStatus::Failed
    };
    (
        status,
        format!(
            "{}; planned {}; {}{}",
            summary.join(", "),
            plan.describe(),
            r.ran,
            r.log.iter().map(|l| format!("; {l}")).collect::<String>()
        ),
    )
}

/// Each GPU's id as the topology names it (matched by PCI bus id, else
/// `GPU<ordinal>`), by ordinal; the matched topology devices take the
/// runtime's device name.
fn name_gpus(b: &mut Bundle, gpus: &[Gpu]) -> Vec<(i32, String)> {
    let norm = |s: &str| {
        s.trim()
            .to_ascii_lowercase()
            .trim_start_matches("0000")
            .to_string()
    };
    let same = |topo: Option<&str>, g: &Gpu| topo.is_some_and(|p| norm(p) == norm(&g.pci_bus_id));
    let ids = gpus
        .iter()
        .map(|g| {
            let id = b
                .topology
                .devices
                .iter()
                .find(|d| same(d.pci_bus_id.as_deref(), g))
                .map(|d| d.id.clone())
                .unwrap_or_else(|| format!("GPU{}", g.ordinal));
            (g.ordinal, id)
        })
        .collect();
    for g in gpus {
        if let Some(d) = b
            .topology
            .devices
            .iter_mut()
            .find(|d| same(d.pci_bus_id.as_deref(), g))
        {
            d.name = Some(g.name.clone());
        }
    }
    ids
}
