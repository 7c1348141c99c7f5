//! Running vendor tools: only when present, each with a timeout, never
//! again after one hung (a wedged driver hangs every call of its tool),
//! their raw output kept as a transcript and parsed with the same parsers
//! as captured files. Whatever happens to a tool is recorded as a probe
//! result; collection always goes on.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::bundle::ProbeStatus;

/// The output of one command.
pub struct Output {
    pub status: ProbeStatus,
    pub stdout: Vec<u8>,
    pub message: String,
    pub duration: Duration,
}

/// Runs commands with a timeout each, remembering which tools hung.
pub struct Runner {
    pub timeout: Duration,
    hung: BTreeSet<String>,
    path: Option<std::ffi::OsString>,
}

impl Runner {
    pub fn new(timeout: Duration) -> Runner {
        Runner {
            timeout,
            hung: BTreeSet::new(),
            path: std::env::var_os("PATH"),
        }
    }

    /// The tool's full path when it is on PATH.
    pub fn which(&self, tool: &str) -> Option<PathBuf> {
        let path = self.path.as_ref()?;
        std::env::split_paths(path)
            .map(|d| d.join(tool))
            .find(|p| is_executable(p))
    }

    /// Runs `tool args`; stdout is kept, stderr goes into the message.
    pub fn run(&mut self, tool: &str, args: &[&str]) -> Output {
        let t = self.timeout;
        self.run_for(tool, args, t)
    }

    /// [`run`](Runner::run) with its own timeout (benchmarks run longer).
    pub fn run_for(&mut self, tool: &str, args: &[&str], timeout: Duration) -> Output {
        let start = Instant::now();
        let done = |status, stdout, message: String| Output {
            status,
            stdout,
            message,
            duration: start.elapsed(),
        };
        if self.hung.contains(tool) {
            return done(
                ProbeStatus::SkippedAfterHang,
                Vec::new(),
                format!("{tool} hung earlier in this collection; not called again"),
            );
        }
        let Some(exe) = self.which(tool) else {
            return done(
                ProbeStatus::Absent,
                Vec::new(),
                format!("{tool} is not on PATH"),
            );
        };
        let mut cmd = Command::new(&exe);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own process group, so a timeout kills whatever it started too.
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                return done(
                    ProbeStatus::Failed,
                    Vec::new(),
                    format!("{tool} could not be started: {e}"),
                );
            }
        };
        // Drain both pipes on threads so a chatty tool cannot block on a full pipe.
        let out = Pipe::drain(child.stdout.take(), STDOUT_CAP);
        let err = Pipe::drain(child.stderr.take(), STDERR_CAP);
        let ending = wait_for(&mut child, &out, &err, start + timeout);
        if !matches!(ending, Ending::Finished(_)) {
            // The whole group: the tool and whatever it started, so the
            // pipes close and the readers finish.
            kill_group(&mut child);
            let _ = child.wait();
            out.settle();
            err.settle();
        }
        let (stdout, stderr) = (out.take(), err.take());
        let cmdline = format!("{tool} {}", args.join(" "));
        let status = match ending {
            Ending::Finished(status) => status,
            Ending::Cut => {
                return done(
                    ProbeStatus::Failed,
                    stdout,
                    format!(
                        "{cmdline} printed more than {} MB: the first {} MB are kept (cut there) and the tool was stopped",
                        STDOUT_CAP / 1_000_000,
                        STDOUT_CAP / 1_000_000
                    ),
                );
            }
            Ending::TimedOut(exited) => {
                self.hung.insert(tool.to_string());
                let how = if exited {
                    "exited, but a process it started still held its output after"
                } else {
                    "did not finish in"
                };
                return done(
                    ProbeStatus::TimedOut,
                    stdout,
                    format!(
                        "{cmdline} {how} {:.0} s and its process group was killed; it will not be called again",
                        timeout.as_secs_f64()
                    ),
                );
            }
        };
        if status.success() {
            done(ProbeStatus::Ok, stdout, String::new())
        } else {
            let first = String::from_utf8_lossy(&stderr)
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim()
                .to_string();
            done(
                ProbeStatus::Failed,
                stdout,
                format!(
                    "{cmdline} exited with {status}{}",
                    if first.is_empty() {
                        String::new()
                    } else {
                        format!(": {first}")
                    }
                ),
            )
        }
    }
}

/// What a tool keeps of its standard output (bytes); beyond it the output
/// is cut and the tool stopped. A few MB: far above any inventory tool or
/// benchmark log, far below what hurts.
pub const STDOUT_CAP: usize = 8_000_000;
/// What is kept of standard error (only its first line is shown).
const STDERR_CAP: usize = 64 * 1024;

/// How waiting for a tool ended.
enum Ending {
    /// It exited and both pipes closed.
    Finished(std::process::ExitStatus),
    /// Its output passed [`STDOUT_CAP`].
    Cut,
    /// The deadline came first; `true` when the tool itself had exited
    /// and something it started still held a pipe.
    TimedOut(bool),
}

/// Waits until the tool has exited and both pipes are closed, its output
/// passes the cap, or the deadline: a tool that exits but leaves a child
/// holding stdout cannot make us wait past the deadline.
fn wait_for(child: &mut std::process::Child, out: &Pipe, err: &Pipe, deadline: Instant) -> Ending {
    let mut exit = None;
    loop {
        if exit.is_none() {
            match child.try_wait() {
                Ok(s) => exit = s,
                Err(_) => return Ending::TimedOut(false),
            }
        }
        if out.is_cut() {
            return Ending::Cut;
        }
        if let Some(s) = exit
            && out.is_done()
            && err.is_done()
        {
            return Ending::Finished(s);
        }
        if Instant::now() >= deadline {
            return Ending::TimedOut(exit.is_some());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// One pipe read on its own thread into a buffer of at most `cap` bytes.
struct Pipe {
    state: std::sync::Arc<PipeState>,
}

#[derive(Default)]
struct PipeState {
    buf: std::sync::Mutex<Vec<u8>>,
    done: std::sync::atomic::AtomicBool,
    cut: std::sync::atomic::AtomicBool,
}

impl Pipe {
    fn drain<R: Read + Send + 'static>(pipe: Option<R>, cap: usize) -> Pipe {
        use std::sync::atomic::Ordering::SeqCst;
        let state = std::sync::Arc::new(PipeState::default());
        let s = state.clone();
        std::thread::spawn(move || {
            if let Some(mut r) = pipe {
                let mut chunk = vec![0u8; 64 * 1024];
                loop {
                    let n = match r.read(&mut chunk) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    let mut buf = s.buf.lock().unwrap_or_else(|e| e.into_inner());
                    let room = cap.saturating_sub(buf.len());
                    buf.extend_from_slice(&chunk[..n.min(room)]);
                    if n > room {
                        // Dropping the read end stops a writer that never
                        // stops (it gets EPIPE); the group is killed too.
                        s.cut.store(true, SeqCst);
                        break;
                    }
                }
            }
            s.done.store(true, SeqCst);
        });
        Pipe { state }
    }

    fn is_done(&self) -> bool {
        self.state.done.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn is_cut(&self) -> bool {
        self.state.cut.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// After the group was killed: waits a moment for the reader to see the
    /// pipe close. A process that left the group (setsid) may hold it open
    /// for ever; then the reader is abandoned and what it read is kept.
    fn settle(&self) {
        for _ in 0..100 {
            if self.is_done() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// What was read so far.
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.state.buf.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        let pid = child.id() as i32;
        // SAFETY: kill(2) with a negative pid signals the process group we
        // created for this child; it has no memory-safety preconditions.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}
