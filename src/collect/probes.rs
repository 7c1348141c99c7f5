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
        let mut out = child.stdout.take();
        let mut err = child.stderr.take();
        let t_out = std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(o) = out.as_mut() {
                let _ = o.read_to_end(&mut v);
            }
            v
        });
        let t_err = std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(e) = err.as_mut() {
                let _ = e.read_to_end(&mut v);
            }
            v
        });
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if start.elapsed() >= timeout => break None,
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(_) => break None,
            }
        };
        let Some(status) = status else {
            kill_group(&mut child);
            let _ = child.wait();
            self.hung.insert(tool.to_string());
            // The pipes close when the group dies; the readers then finish.
            let stdout = t_out.join().unwrap_or_default();
            let _ = t_err.join();
            return done(
                ProbeStatus::TimedOut,
                stdout,
                format!(
                    "{tool} {} did not finish in {:.0} s and was killed; it will not be called again",
                    args.join(" "),
                    self.timeout.as_secs_f64()
                ),
            );
        };
        let stdout = t_out.join().unwrap_or_default();
        let stderr = t_err.join().unwrap_or_default();
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
                    "{tool} {} exited with {status}{}",
                    args.join(" "),
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
