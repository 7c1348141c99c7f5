//! The recorder: where every live step's outcome enters the bundle. A step
//! runs a command or a closure; the recorder times it and keeps its probe
//! (ok, absent, failed, timed out...), its transcript (saved raw and parsed
//! like a capture) and its problems, by one policy. Steps decide what to
//! run; they do not build probes or problems by hand.

use std::time::{Duration, Instant};

use super::Collected;
use crate::bundle::{Bundle, Host, Origin, Problem, ProblemKind, System};
use crate::bundle::{Probe, ProbeStatus};
use crate::collect::probes::{Output, Runner};
use crate::ingest::read_transcript;

/// How a command's outcome becomes problems. Inventory tools and
/// benchmarks have always differed in two details, kept as they were.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Policy {
    /// The node's inventory: a tool that is not installed is a problem (the
    /// report lacks its view); output no parser reads is explained in the
    /// probe's message (the parse problem itself is already recorded).
    Inventory,
    /// Optional benchmarks: one that is not installed is no problem; output
    /// no parser reads is a probe problem of its own.
    Benchmark,
}

/// A live collection in progress: the bundle, the raw transcripts to save
/// beside it, the probes so far, the command runner and the progress bar.
pub(super) struct Recorder {
    pub b: Bundle,
    /// Shared by every command, so a tool that hung is not called again.
    pub runner: Runner,
    raw: Vec<(String, Vec<u8>)>,
    probes: Vec<Probe>,
    bar: Option<indicatif::ProgressBar>,
}

impl Recorder {
    /// A recorder for `host`; with `progress`, a bar of `steps` steps.
    pub fn new(host: String, tool_timeout: Duration, progress: bool, steps: usize) -> Recorder {
        let bar = progress.then(|| {
            let b = indicatif::ProgressBar::new(steps as u64);
            b.set_style(
                indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        });
        Recorder {
            b: Bundle::new(Host {
                name: host,
                origin: Origin::Live,
            }),
            runner: Runner::new(tool_timeout),
            raw: Vec::new(),
            probes: Vec::new(),
            bar,
        }
    }

    /// Advances the progress bar, saying what runs now. The plan's count
    /// is an estimate (a tool found late adds steps): a step past it
    /// raises the total, so the bar never reads 14/13.
    pub fn step(&self, msg: &str) {
        if let Some(b) = &self.bar {
            b.set_message(msg.to_string());
            if b.length().is_some_and(|len| b.position() >= len) {
                b.inc_length(1);
            }
            b.inc(1);
        }
    }

    /// A problem not tied to a line: `file` names the probe or transcript.
    pub fn problem(&mut self, file: &str, kind: ProblemKind, message: String) {
        self.b.problems.push(Problem {
            file: file.into(),
            line: None,
            kind,
            message,
        });
    }

    /// A probe that ran nothing (its duration given, often zero).
    pub fn probe(
        &mut self,
        name: impl Into<String>,
        status: ProbeStatus,
        duration: Duration,
        message: String,
    ) {
        self.probes.push(Probe {
            name: name.into(),
            status,
            duration_s: duration.as_secs_f64(),
            transcript: None,
            message,
        });
    }

    /// Runs `f`, timed, and records the status and message it returns as
    /// the probe `name`. `f` adds its evidence and problems to the bundle.
    pub fn timed(&mut self, name: &str, f: impl FnOnce(&mut Recorder) -> (ProbeStatus, String)) {
        let t = Instant::now();
        let (status, message) = f(self);
        self.probe(name, status, t.elapsed(), message);
    }

    /// Parses `bytes` into the bundle like a captured file and keeps them
    /// to save as `file`. `Err` says why no parser read them (the problem
    /// is in the bundle too).
    pub fn transcript(&mut self, file: &str, bytes: Vec<u8>) -> Result<(), String> {
        let reading = read_transcript(file, &bytes);
        let why = reading.first_problem().unwrap_or_default();
        self.raw.push((file.to_string(), bytes));
        if self.b.absorb(reading).transcript {
            Ok(())
        } else {
            Err(why)
        }
    }

    /// Records what a command did: its probe `name`, its output as the
    /// transcript `file` when it printed any, and a problem when it did not
    /// succeed (as `policy` counts success).
    pub fn command(&mut self, name: String, file: &str, out: Output, policy: Policy) {
        let mut probe = Probe {
            name,
            status: out.status,
            duration_s: out.duration.as_secs_f64(),
            transcript: None,
            message: out.message,
        };
        // Only a command that ran prints: absent and skipped ones never do.
        if !out.stdout.is_empty() {
            let read = self.transcript(file, out.stdout);
            probe.transcript = Some(file.to_string());
            if let Err(why) = read
                && probe.status == ProbeStatus::Ok
            {
                probe.status = ProbeStatus::Unrecognized;
                if policy == Policy::Inventory {
                    probe.message =
                        format!("{} printed output no parser recognises ({why})", probe.name);
                }
            }
        }
        let quiet = match policy {
            Policy::Inventory => [ProbeStatus::Ok, ProbeStatus::Unrecognized],
            Policy::Benchmark => [ProbeStatus::Ok, ProbeStatus::Absent],
        };
        if !quiet.contains(&probe.status) {
            let message = if probe.message.is_empty() {
                format!("{}: {:?}", probe.name, probe.status)
            } else {
                probe.message.clone()
            };
            self.problem(&probe.name.clone(), ProblemKind::Probe, message);
        }
        self.probes.push(probe);
    }

    /// The finished collection, with the system facts and every probe.
    pub fn finish(mut self, system: System) -> Collected {
        self.b.system = Some(system);
        self.b.probes = self.probes;
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
        Collected {
            bundle: self.b,
            raw: self.raw,
        }
    }
}
