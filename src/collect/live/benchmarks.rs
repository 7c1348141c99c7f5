//! `collect --benchmarks`: the installed vendor benchmarks of the tool
//! table, each parsed by the same parsers as captures so the report holds
//! their figures beside ours; then `ib_write_bw`, in loopback on the first
//! active RDMA port or as this node's side of a two-node pair.

use std::time::{Duration, Instant};

use super::recorder::{Policy, Recorder};
use crate::bundle::{PeerLink, Role};
use crate::bundle::{ProbeStatus, ProblemKind};
use crate::collect::pair;
use crate::evidence::tools::{Stage, live_commands};

/// What is left of the benchmarks' shared budget (at least a second, so a
/// late command still gets a chance to start).
struct Budget {
    start: Instant,
    total: Duration,
}

impl Budget {
    fn left(&self) -> Duration {
        self.total
            .saturating_sub(self.start.elapsed())
            .max(Duration::from_secs(1))
    }
}

/// Runs every benchmark within `budget` all together.
pub(super) fn run(rec: &mut Recorder, budget: Duration, pair: Option<&pair::Plan>) {
    let budget = Budget {
        start: Instant::now(),
        total: budget,
    };
    for cmd in live_commands(Stage::Benchmark) {
        let name = format!("benchmark {}", cmd.command_line());
        let out = rec.runner.run_for(cmd.program, cmd.args, budget.left());
        rec.command(name, cmd.file, out, Policy::Benchmark);
    }
    match pair {
        Some(plan) => pair_side(rec, plan, budget.left()),
        None => loopback(rec, &budget),
    }
}

/// The first active RDMA port: (device, port), or `device:port`.
fn first_active_port(rec: &Recorder) -> Option<(String, u32)> {
    rec.b.rdma.iter().find_map(|d| {
        d.ports
            .iter()
            .find(|p| p.active == Some(true))
            .map(|p| (d.name.clone(), p.port))
    })
}

/// The two-node `ib_write_bw`: this side of the pair, linked in the bundle.
fn pair_side(rec: &mut Recorder, plan: &pair::Plan, budget: Duration) {
    let mut plan = plan.clone();
    if plan.device.is_none() {
        plan.device = first_active_port(rec).map(|(d, p)| format!("{d}:{p}"));
    }
    // The client connects to the server node's address: Slurm's NodeAddr
    // when Slurm formed the pair, else the name as given.
    let address = match (&plan.role, &plan.address, &plan.peer) {
        (Role::Client, Some(a), _) => Some(a.clone()),
        (Role::Client, None, Some(peer)) => {
            let out = rec.runner.run("scontrol", &["show", "node", "-o", peer]);
            Some(
                pair::node_addr(&String::from_utf8_lossy(&out.stdout))
                    .unwrap_or_else(|| peer.clone()),
            )
        }
        _ => None,
    };
    let side = match plan.role {
        Role::Server => "server",
        Role::Client => "client",
    };
    let name = format!(
        "benchmark ib_write_bw pair {side}{}",
        plan.peer
            .as_ref()
            .map(|p| format!(" with {p}"))
            .unwrap_or_default()
    );
    let file = format!("ib_write_bw-pair-{side}.txt");
    // Absent from PATH comes back as an absent probe, not retried.
    let out = pair::run(&mut rec.runner, &plan, address.as_deref(), budget);
    let ok = out.status == ProbeStatus::Ok;
    let printed = !out.stdout.is_empty();
    rec.command(name, &file, out, Policy::Benchmark);
    rec.b.peer = Some(PeerLink {
        role: plan.role.clone(),
        peer: plan.peer.clone(),
        address,
        tool: "ib_write_bw".into(),
        transcript: printed.then_some(file),
        via: plan.via.to_string(),
        job: plan.job.clone(),
        ok,
    });
}

/// How long the loopback server may take to finish once its client has.
const SERVER_GRACE: Duration = Duration::from_secs(10);

/// Waits for `child` at most `limit`, then stops it. True when it had to
/// be stopped.
fn wait_or_stop(child: &mut std::process::Child, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return false,
            Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return true;
            }
        }
    }
}

/// `ib_write_bw` loopback: a server and a client on the same active port.
/// The server is waited for at most [`SERVER_GRACE`] after its client (at
/// once when the client failed), then stopped; its output is read while it
/// runs, so a full pipe cannot block it.
fn loopback(rec: &mut Recorder, budget: &Budget) {
    let name = "benchmark ib_write_bw loopback";
    let port = first_active_port(rec);
    let (exe, (dev, port)) = match (rec.runner.which("ib_write_bw"), port) {
        (Some(exe), Some(port)) => (exe, port),
        (None, _) => {
            let why = "ib_write_bw is not on PATH";
            return rec.probe(name, ProbeStatus::Absent, Duration::ZERO, why.into());
        }
        (Some(_), None) => {
            let why = "no active RDMA port for a loopback test";
            return rec.probe(name, ProbeStatus::Absent, Duration::ZERO, why.into());
        }
    };
    let port = port.to_string();
    let args = ["-d", &dev, "-i", &port, "--report_gbits", "-a"];
    let mut server = std::process::Command::new(&exe)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn();
    let reader = server
        .as_mut()
        .ok()
        .and_then(|s| s.stdout.take())
        .map(|mut so| {
            std::thread::spawn(move || {
                let mut text = Vec::new();
                let _ = std::io::Read::read_to_end(&mut so, &mut text);
                text
            })
        });
    std::thread::sleep(Duration::from_millis(500));
    let client = [&args[..], &["localhost"]].concat();
    let out = rec.runner.run_for("ib_write_bw", &client, budget.left());
    if let Ok(mut server) = server {
        let grace = if out.status == ProbeStatus::Ok {
            SERVER_GRACE.min(budget.left())
        } else {
            Duration::ZERO
        };
        if wait_or_stop(&mut server, grace) && out.status == ProbeStatus::Ok {
            rec.problem(
                name,
                ProblemKind::Probe,
                format!(
                    "the ib_write_bw loopback server had not finished {} s after its client and was stopped",
                    grace.as_secs()
                ),
            );
        }
        let text = reader.and_then(|r| r.join().ok()).unwrap_or_default();
        if !text.is_empty() {
            let _ = rec.transcript("ib_write_bw-server.txt", text);
        }
    }
    rec.command(
        name.into(),
        "ib_write_bw-client.txt",
        out,
        Policy::Benchmark,
    );
}
