//! What both benches share: running the real binary (or a baseline
//! command) as a child and reading what it cost from the kernel (wait4's
//! rusage: user + system CPU seconds, peak resident set), and medians.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// One child run.
#[derive(Debug, Clone, Copy)]
pub struct Cost {
    pub wall_s: f64,
    /// User + system CPU seconds of the child.
    pub cpu_s: f64,
    /// User CPU seconds alone.
    pub user_s: f64,
    /// Peak resident set of the child, KiB (ru_maxrss).
    pub max_rss_kib: i64,
}

/// Runs `cmd` to completion (stdout and stderr discarded) and returns its
/// cost; panics when it fails, since a failed run measures nothing.
// The child is reaped by wait4 (which also reports its rusage), not wait().
#[allow(clippy::zombie_processes)]
pub fn run(cmd: &mut Command) -> Cost {
    let start = Instant::now();
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the command starts");
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    let wall_s = start.elapsed().as_secs_f64();
    assert!(pid > 0, "wait4 failed");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{cmd:?} failed ({status})"
    );
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Cost {
        wall_s,
        cpu_s: secs(ru.ru_utime) + secs(ru.ru_stime),
        user_s: secs(ru.ru_utime),
        max_rss_kib: ru.ru_maxrss,
    }
}

/// This process's own CPU seconds so far: (user, system), from getrusage.
// Only the ingest bench measures itself in process.
#[allow(dead_code)]
pub fn self_cpu() -> (f64, f64) {
    // SAFETY: rusage is plain data; getrusage fills it for this process.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) }, 0);
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (secs(ru.ru_utime), secs(ru.ru_stime))
}

/// The wire-report binary of this build (release under `cargo bench`).
pub fn wr() -> Command {
    Command::new(env!("CARGO_BIN_EXE_wire-report"))
}

/// `cp -r from to`: the baseline that only moves the bytes.
pub fn cp(from: &Path, to: &Path) -> Command {
    let mut c = Command::new("cp");
    c.arg("-r").arg(from).arg(to);
    c
}

/// Median of each field over runs (fields taken separately).
pub fn median(runs: &[Cost]) -> Cost {
    let med = |f: &dyn Fn(&Cost) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Cost {
        wall_s: med(&|c| c.wall_s),
        cpu_s: med(&|c| c.cpu_s),
        user_s: med(&|c| c.user_s),
        max_rss_kib: med(&|c| c.max_rss_kib as f64) as i64,
    }
}

/// Bytes of every file under `dir`.
pub fn tree_bytes(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}
