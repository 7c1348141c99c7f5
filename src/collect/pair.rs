//! Two-node checks: `ib_write_bw` between two nodes, server on one, client
//! on the other. Under Slurm with two tasks, task 0 serves and task 1
//! connects to task 0's node (the first of the step's node list, at its
//! `NodeAddr`); by hand, `--peer listen` and `--peer HOST`. Each side keeps
//! its own transcript, and both bundles name the pair.

use std::time::{Duration, Instant};

use super::probes::{Output, Runner};
use crate::bundle::ProbeStatus;
use crate::bundle::Role;

/// perftest's default TCP port for the out-of-band exchange.
pub const DEFAULT_PORT: u16 = 18515;

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub role: Role,
    pub peer: Option<String>,
    pub address: Option<String>,
    pub via: &'static str,
    pub job: Option<String>,
    pub port: u16,
    /// `-d DEVICE` (and `-i PORT` when given as `mlx5_0:1`).
    pub device: Option<String>,
}

/// Expands a Slurm host list (`n[1-3,7]`, `gpu-[01-04]`, `a,b`,
/// `rack[1-2]-n[1-2]`) into names, in order. `None` when malformed.
pub fn expand_hostlist(list: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for item in split_top(list)? {
        let mut names = vec![String::new()];
        let mut rest = item.as_str();
        while !rest.is_empty() {
            match rest.find('[') {
                None => {
                    names.iter_mut().for_each(|n| n.push_str(rest));
                    rest = "";
                }
                Some(open) => {
                    let close = open + rest[open..].find(']')?;
                    let prefix = &rest[..open];
                    let mut parts = Vec::new();
                    for r in rest[open + 1..close].split(',') {
                        let (a, b) = r.split_once('-').unwrap_or((r, r));
                        let (lo, hi): (u64, u64) = (a.parse().ok()?, b.parse().ok()?);
                        if hi < lo || hi - lo > 100_000 {
                            return None;
                        }
                        let width = a.len();
                        parts.extend((lo..=hi).map(|i| format!("{i:0width$}")));
                    }
                    names = names
                        .iter()
                        .flat_map(|n| parts.iter().map(move |p| format!("{n}{prefix}{p}")))
                        .collect();
                    rest = &rest[close + 1..];
                }
            }
        }
        out.extend(names.into_iter().filter(|n| !n.is_empty()));
    }
    (!out.is_empty()).then_some(out)
}

/// Splits at commas outside brackets.
fn split_top(s: &str) -> Option<Vec<String>> {
    let (mut depth, mut cur, mut out) = (0i32, String::new(), Vec::new());
    for c in s.trim().chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return None;
        }
        if c == ',' && depth == 0 {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    if depth != 0 {
        return None;
    }
    out.push(cur);
    Some(out)
}

/// The pair from a Slurm step of exactly two tasks: task 0 serves, task 1
/// connects to the first node of the step. `None` outside such a step.
pub fn from_slurm(env: &dyn Fn(&str) -> Option<String>) -> Option<Result<Plan, String>> {
    let tasks = env("SLURM_STEP_NUM_TASKS").or_else(|| env("SLURM_NTASKS"))?;
    if tasks.trim() != "2" {
        return None;
    }
    let rank = env("SLURM_PROCID")?;
    let list = env("SLURM_STEP_NODELIST").or_else(|| env("SLURM_JOB_NODELIST"))?;
    let Some(nodes) = expand_hostlist(&list) else {
        return Some(Err(format!("cannot read the Slurm node list `{list}`")));
    };
    let me = env("SLURMD_NODENAME");
    let job = env("SLURM_JOB_ID");
    let port = env("SLURM_JOB_ID")
        .and_then(|j| j.parse::<u64>().ok())
        // A job's own port, so two pair jobs on shared nodes do not collide.
        .map_or(DEFAULT_PORT, |j| DEFAULT_PORT + (j % 1000) as u16);
    let plan = match rank.trim() {
        "0" => Plan {
            role: Role::Server,
            peer: nodes.iter().find(|n| Some(*n) != me.as_ref()).cloned(),
            address: None,
            via: "slurm",
            job,
            port,
            device: None,
        },
        "1" => Plan {
            role: Role::Client,
            peer: Some(nodes[0].clone()),
            address: None,
            via: "slurm",
            job,
            port,
            device: None,
        },
        r => return Some(Err(format!("SLURM_PROCID `{r}` in a two-task step"))),
    };
    Some(Ok(plan))
}

/// `--peer listen` or `--peer HOST`.
pub fn from_flag(peer: &str, port: u16) -> Plan {
    let server = peer == "listen";
    Plan {
        role: if server { Role::Server } else { Role::Client },
        peer: (!server).then(|| peer.to_string()),
        address: (!server).then(|| peer.to_string()),
        via: "--peer",
        job: None,
        port,
        device: None,
    }
}

/// `NodeAddr` of a Slurm node from `scontrol show node -o NAME`.
pub fn node_addr(scontrol_output: &str) -> Option<String> {
    scontrol_output
        .split_whitespace()
        .find_map(|w| w.strip_prefix("NodeAddr="))
        // (An address is never an option of the ib_write_bw it is given to.)
        .filter(|a| !a.is_empty() && *a != "(null)" && !a.starts_with('-'))
        .map(str::to_string)
}

/// `ib_write_bw` arguments for one side.
pub fn args(plan: &Plan, address: Option<&str>) -> Vec<String> {
    let mut a = Vec::new();
    if let Some(d) = &plan.device {
        let (dev, port) = d
            .split_once(':')
            .map_or((d.as_str(), None), |(d, p)| (d, Some(p)));
        a.extend(["-d".to_string(), dev.to_string()]);
        if let Some(p) = port {
            a.extend(["-i".to_string(), p.to_string()]);
        }
    }
    a.extend(["-a", "--report_gbits", "-p"].map(String::from));
    a.push(plan.port.to_string());
    if let Some(addr) = address {
        a.push(addr.to_string());
    }
    a
}

/// Whether a failed client run may succeed if tried again: perftest fails
/// at once when its server is not listening yet (`Couldn't connect to
/// node1:18515`, `Unable to init the socket connection`). Anything else
/// (`Did not detect devices`, `No IB devices found`, a device or option
/// it refuses) fails the same way every time.
fn worth_retrying(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "couldn't connect",
        "could not connect",
        "unable to init the socket connection",
        "connection refused",
        "failed to exchange data",
    ]
    .iter()
    .any(|w| m.contains(w))
}

/// Runs this side within `budget`. The server waits for its client; the
/// client retries while the server is not yet listening (perftest fails
/// at once when nobody answers) until the budget is spent, and stops at
/// once, with the tool's words, on an error no retry mends.
pub fn run(runner: &mut Runner, plan: &Plan, address: Option<&str>, budget: Duration) -> Output {
    let start = Instant::now();
    let args = args(plan, address);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut tries = 0;
    let mut refused: Option<Output> = None;
    loop {
        let left = budget
            .saturating_sub(start.elapsed())
            .max(Duration::from_secs(1));
        let mut out = runner.run_for("ib_write_bw", &args, left);
        tries += 1;
        // A retry cut short by the end of the budget, before perftest
        // connected (it prints each side's `local address` once it has),
        // says no more than the refusals before it: the server never
        // answered. One that connected and then ran out of time keeps its
        // time-out and its output.
        if out.status == ProbeStatus::TimedOut
            && !String::from_utf8_lossy(&out.stdout).contains("local address")
            && let Some(earlier) = refused.take()
        {
            out = earlier;
        }
        let retry = plan.role == Role::Client
            && out.status == ProbeStatus::Failed
            && worth_retrying(&out.message)
            && start.elapsed() + Duration::from_millis(500) < budget;
        if !retry {
            if tries > 1 {
                out.message = format!("{} (attempt {tries})", out.message)
                    .trim()
                    .to_string();
            }
            out.duration = start.elapsed();
            return out;
        }
        refused = Some(out);
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_server_not_yet_listening_is_worth_another_try() {
        assert!(worth_retrying(
            " Couldn't connect to node1:18515\n Unable to init the socket connection"
        ));
        assert!(!worth_retrying(
            " Did not detect devices \n If device exists, check if driver is up"
        ));
        assert!(!worth_retrying("No IB devices found"));
        assert!(!worth_retrying("IB device mlx5_9 not found"));
    }

    #[test]
    fn slurm_host_lists_expand_like_scontrol() {
        assert_eq!(expand_hostlist("n[1-3]").unwrap(), ["n1", "n2", "n3"]);
        assert_eq!(
            expand_hostlist("gpu-[01-02,10]").unwrap(),
            ["gpu-01", "gpu-02", "gpu-10"]
        );
        assert_eq!(expand_hostlist("a,b[7],c").unwrap(), ["a", "b7", "c"]);
        assert_eq!(
            expand_hostlist("r[1-2]-n[1-2]").unwrap(),
            ["r1-n1", "r1-n2", "r2-n1", "r2-n2"]
        );
        assert!(expand_hostlist("n[1-").is_none());
        assert!(expand_hostlist("n[3-1]").is_none());
    }

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(a, _)| *a == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn two_task_step_makes_task0_server_and_task1_its_client() {
        let e0 = env(&[
            ("SLURM_NTASKS", "2"),
            ("SLURM_PROCID", "0"),
            ("SLURM_JOB_NODELIST", "n[2-3]"),
            ("SLURMD_NODENAME", "n2"),
            ("SLURM_JOB_ID", "42"),
        ]);
        let p = from_slurm(&e0).unwrap().unwrap();
        assert_eq!(
            (p.role, p.peer.as_deref(), p.port),
            (Role::Server, Some("n3"), DEFAULT_PORT + 42)
        );
        let e1 = env(&[
            ("SLURM_NTASKS", "2"),
            ("SLURM_PROCID", "1"),
            ("SLURM_JOB_NODELIST", "n[2-3]"),
            ("SLURMD_NODENAME", "n3"),
            ("SLURM_JOB_ID", "42"),
        ]);
        let p = from_slurm(&e1).unwrap().unwrap();
        assert_eq!((p.role, p.peer.as_deref()), (Role::Client, Some("n2")));
        // Three tasks, or no Slurm: no pair.
        assert!(
            from_slurm(&env(&[
                ("SLURM_NTASKS", "3"),
                ("SLURM_PROCID", "0"),
                ("SLURM_JOB_NODELIST", "n[1-3]")
            ]))
            .is_none()
        );
        assert!(from_slurm(&env(&[])).is_none());
        assert_eq!(
            node_addr("NodeName=n1 Arch=x86_64 NodeAddr=127.0.0.1 NodeHostName=n1").as_deref(),
            Some("127.0.0.1")
        );
    }

    #[test]
    fn device_and_port_become_perftest_flags() {
        let mut p = from_flag("10.0.0.1", 18515);
        p.device = Some("mlx5_0:1".into());
        assert_eq!(
            args(&p, Some("10.0.0.1")).join(" "),
            "-d mlx5_0 -i 1 -a --report_gbits -p 18515 10.0.0.1"
        );
        assert_eq!(
            args(&from_flag("listen", 9000), None).join(" "),
            "-a --report_gbits -p 9000"
        );
    }
}
