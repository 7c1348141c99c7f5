//! Generators for what a byte mutator cannot reach (issue 28): the file
//! system around the tool. Each case builds a small world in a fresh
//! temporary folder and runs the real binary in it (under a time limit):
//!
//! - `near-names`: a fleet whose node folders differ by one odd character
//!   (`node 1`, `node_1`, `node:1`, `node*1`, invalid UTF-8, a newline),
//!   by case, or share a long prefix. Every node must keep a bundle of its
//!   own through `collect --from`, and a page of its own through `render`.
//! - `output-kinds`: every output path of every command made a FIFO, a
//!   device (as root), a link to a file, to a folder or to nothing, a
//!   folder, or a site with a folder link planted in it. What was there
//!   must still be there, of the same kind, and nothing outside the
//!   output may change.
//!
//! A case that breaks a rule, panics (exit 101) or runs past its limit is
//! a finding: its world is described in `/tmp/fuzz-findings/`.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::Rng;

pub const NEAR_NAMES: &str = "near-names";
pub const OUTPUT_KINDS: &str = "output-kinds";

/// How long one command of a case may run: a small fleet renders in well
/// under a second; a command blocked on a FIFO nobody reads would not end.
const LIMIT: Duration = Duration::from_secs(60);

/// The outcome of one case: `Ok` or what rule it broke.
pub type Outcome = Result<(), String>;

/// The binary under test: `WR`, or the release build beside this example.
fn binary() -> PathBuf {
    if let Some(p) = std::env::var_os("WR") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("own path");
    // target/release/examples/fuzz -> target/release/wire-report
    exe.parent()
        .and_then(Path::parent)
        .map(|d| d.join("wire-report"))
        .expect("a target folder")
}

/// Runs the binary with `args` in `dir`; its exit code, or an error when
/// it panicked, was killed or ran past [`LIMIT`].
fn run(dir: &Path, args: &[OsString]) -> Result<i32, String> {
    let mut child = Command::new(binary())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", binary().display()))?;
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            let mut err = String::new();
            if let Some(mut s) = child.stderr.take() {
                use std::io::Read;
                let _ = s.read_to_string(&mut err);
            }
            return match status.code() {
                Some(101) => Err(format!("panicked: {}", err.trim())),
                Some(c) => Ok(c),
                None => Err(format!("killed by a signal ({status}): {}", err.trim())),
            };
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("ran over {} s", LIMIT.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn os(s: &str) -> OsString {
    OsString::from(s)
}

/// A real transcript (a small one) for a node folder.
fn real_transcripts() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new("captures")
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.file_name() != "SOURCES.tsv")
        .filter(|e| e.metadata().is_ok_and(|m| m.len() < 64 * 1024))
        .map(|e| std::fs::canonicalize(e.path()).expect("a capture path"))
        .collect();
    v.sort();
    v
}

/// A name one odd change away from `base`.
fn near(base: &str, rng: &mut Rng) -> Vec<u8> {
    let mut b = base.as_bytes().to_vec();
    let i = rng.below(b.len());
    match rng.below(9) {
        0 => b[i] = b' ',
        1 => b[i] = b'_',
        2 => b[i] = b':',
        3 => b[i] = b'*',
        4 => b[i] = 0xff,
        5 => b[i] = b'\n',
        6 => b.make_ascii_uppercase(),
        7 => b.insert(i, 0x1b),
        _ => {
            // A shared long prefix: names that differ only past 100 bytes.
            let mut long = vec![b'n'; 100 + rng.below(140)];
            long.push(b'0' + rng.below(10) as u8);
            b = long;
        }
    }
    b
}

/// Bundles under `dir`, counted.
fn count_named(dir: &Path, name: &str) -> usize {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == name)
        .count()
}

/// One `near-names` case: 2 to 6 node folders with near names, each with
/// a real transcript; every node must have its own bundle and page.
pub fn near_names(case: u64, work: &Path) -> Outcome {
    let mut rng = Rng::for_case(NEAR_NAMES, case);
    let files = real_transcripts();
    let fleet = work.join("fleet");
    std::fs::create_dir(&fleet).map_err(|e| e.to_string())?;
    let base = ["node1", "gpu-a01", "h100_7"][rng.below(3)];
    let mut names: Vec<Vec<u8>> = vec![base.as_bytes().to_vec()];
    let shown = |names: &[Vec<u8>]| -> String {
        let v: Vec<String> = names
            .iter()
            .map(|n| String::from_utf8_lossy(n).escape_debug().to_string())
            .collect();
        v.join(" | ")
    };
    for _ in 0..1 + rng.below(5) {
        let n = near(base, &mut rng);
        if !names.contains(&n) {
            names.push(n);
        }
    }
    for n in &names {
        let d = fleet.join(OsString::from_vec(n.clone()));
        std::fs::create_dir(&d).map_err(|e| format!("{e}"))?;
        let f = &files[rng.below(files.len())];
        std::fs::copy(f, d.join(f.file_name().expect("a file name"))).map_err(|e| e.to_string())?;
    }
    let code = run(
        work,
        &[
            os("collect"),
            os("--quiet"),
            os("--from"),
            os("fleet"),
            os("--out"),
            os("out"),
        ],
    )?;
    if code > 1 {
        return Err(format!("collect --from exited {code}"));
    }
    let bundles = count_named(&work.join("out"), "bundle.json");
    if bundles != names.len() {
        return Err(format!(
            "{} node folders, {bundles} bundles: {}",
            names.len(),
            shown(&names)
        ));
    }
    let code = run(work, &[os("render"), os("out"), os("--out"), os("site")])?;
    if code > 1 {
        return Err(format!("render exited {code}"));
    }
    let pages = std::fs::read_dir(work.join("site/nodes"))
        .map(|d| d.count())
        .unwrap_or(0);
    if pages != names.len() {
        return Err(format!(
            "{} nodes, {pages} node pages: {}",
            names.len(),
            shown(&names)
        ));
    }
    Ok(())
}

/// What a path held before a command ran, to compare with after.
#[derive(Debug, PartialEq)]
enum Kind {
    Fifo,
    Device,
    Link(PathBuf),
    Dir,
    File,
}

fn kind_of(p: &Path) -> Option<Kind> {
    let m = std::fs::symlink_metadata(p).ok()?;
    let t = m.file_type();
    Some(if t.is_symlink() {
        Kind::Link(std::fs::read_link(p).ok()?)
    } else if t.is_fifo() {
        Kind::Fifo
    } else if t.is_char_device() || t.is_block_device() {
        Kind::Device
    } else if t.is_dir() {
        Kind::Dir
    } else {
        Kind::File
    })
}

/// Drains a FIFO for as long as the case runs, so a writer never blocks
/// (opened read-write: the open itself never waits for a writer).
fn drain(fifo: PathBuf) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let Ok(mut f) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
        else {
            return;
        };
        let mut buf = vec![0u8; 1 << 16];
        let start = Instant::now();
        while start.elapsed() < LIMIT + Duration::from_secs(5) {
            match f.read(&mut buf) {
                Ok(n) if n > 0 => continue,
                _ => std::thread::sleep(Duration::from_millis(5)),
            }
            if fifo.with_extension("done").exists() {
                return;
            }
        }
    })
}

fn mkfifo(p: &Path) -> Result<(), String> {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: a plain libc call with a NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o644) } != 0 {
        return Err(format!("mkfifo: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// A character device like /dev/null (1, 3), made here: only as root.
fn mknod_null(p: &Path) -> Result<bool, String> {
    // SAFETY: plain libc calls; the path is NUL-terminated.
    unsafe {
        if libc::geteuid() != 0 {
            return Ok(false);
        }
        let c =
            std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
        if libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) != 0 {
            return Err(format!("mknod: {}", std::io::Error::last_os_error()));
        }
    }
    Ok(true)
}

/// One `output-kinds` case: one command, its output path made one odd
/// kind of file. What was there stays, and the world outside the output
/// is untouched.
pub fn output_kinds(case: u64, work: &Path) -> Outcome {
    let mut rng = Rng::for_case(OUTPUT_KINDS, case);
    let files = real_transcripts();
    // Inputs: two one-node folders, and their bundles.
    for n in ["a", "b"] {
        let d = work.join("in").join(n);
        std::fs::create_dir_all(&d).map_err(|e| e.to_string())?;
        let f = &files[rng.below(files.len())];
        std::fs::copy(f, d.join("t.txt")).map_err(|e| e.to_string())?;
    }
    let outside = work.join("outside");
    std::fs::create_dir(&outside).map_err(|e| e.to_string())?;
    std::fs::write(outside.join("keep.txt"), "the user's file\n").map_err(|e| e.to_string())?;
    std::fs::write(outside.join("index.html"), "the user's page\n").map_err(|e| e.to_string())?;
    // What a link given as the output itself points at: the user chose
    // it, so it is written (a link to a file keeps the link).
    let elsewhere = work.join("elsewhere");
    std::fs::create_dir(&elsewhere).map_err(|e| e.to_string())?;
    std::fs::write(elsewhere.join("keep.txt"), "a file\n").map_err(|e| e.to_string())?;
    let p = work.join("o");
    // (command, whether its output is a folder)
    let commands: [(&[&str], bool); 6] = [
        (&["render", "in", "--out", "o"], true),
        (&["render", "in", "--single-file", "o"], false),
        (&["render", "in", "--format", "md", "--out", "o"], false),
        (&["diff", "in/a", "in/b", "--html", "o"], false),
        (
            &["collect", "--quiet", "--from", "in/a", "--out", "o"],
            false,
        ),
        (&["collect", "--quiet", "--from", "in", "--out", "o"], true),
    ];
    let (args, folder) = commands[rng.below(commands.len())];
    let mut fifo = None;
    match rng.below(7) {
        0 if !folder => {
            mkfifo(&p)?;
            fifo = Some(drain(p.clone()));
        }
        1 if !folder => {
            if !mknod_null(&p)? {
                mkfifo(&p)?;
                fifo = Some(drain(p.clone()));
            }
        }
        2 if !folder => symlink(elsewhere.join("keep.txt"), &p).map_err(|e| e.to_string())?,
        3 => symlink(&elsewhere, &p).map_err(|e| e.to_string())?,
        4 => symlink(work.join("nowhere"), &p).map_err(|e| e.to_string())?,
        5 if folder => {
            // A site with a folder link planted where a node's pages go.
            std::fs::create_dir_all(p.join("nodes")).map_err(|e| e.to_string())?;
            symlink(&outside, p.join("nodes/a")).map_err(|e| e.to_string())?;
            symlink(&outside, p.join("nodes/in")).map_err(|e| e.to_string())?;
        }
        _ => std::fs::create_dir(&p).map_err(|e| e.to_string())?,
    }
    // A regular file or nothing may become anything the command writes.
    let before = kind_of(&p).filter(|k| *k != Kind::File);
    let planted: Vec<(PathBuf, Option<Kind>)> = ["nodes/a", "nodes/in"]
        .iter()
        .map(|n| (p.join(n), kind_of(&p.join(n))))
        .collect();
    let args: Vec<OsString> = args.iter().map(|a| os(a)).collect();
    let code = run(work, &args);
    let _ = std::fs::write(p.with_extension("done"), "");
    if let Some(t) = fifo {
        let _ = t.join();
    }
    let code = code?;
    if code > 2 {
        return Err(format!("{args:?} exited {code}"));
    }
    let after = kind_of(&p);
    // A folder made for a folder output stays a folder; anything else
    // stays exactly what it was (a link keeps its target).
    if before.is_some() && after != before {
        return Err(format!(
            "{args:?}: the output was {before:?}, is now {after:?}"
        ));
    }
    for (q, k) in planted {
        if k.is_some() && kind_of(&q) != k {
            return Err(format!("{args:?}: the planted {} changed", q.display()));
        }
    }
    let kept = std::fs::read_to_string(outside.join("keep.txt")).unwrap_or_default();
    let page = std::fs::read_to_string(outside.join("index.html")).unwrap_or_default();
    let extra = std::fs::read_dir(&outside).map(|d| d.count()).unwrap_or(0);
    if kept != "the user's file\n" {
        return Err(format!(
            "{args:?}: a file outside the output was overwritten"
        ));
    }
    if page != "the user's page\n" || extra != 2 {
        return Err(format!(
            "{args:?}: the folder outside the output changed ({extra} entries)"
        ));
    }
    Ok(())
}

/// Runs `cases` cases of a file-system target; the findings, described.
pub fn run_target(target: &str, cases: u64) -> (u64, Vec<String>) {
    let mut found = Vec::new();
    let mut ran = 0;
    for case in 0..cases {
        let work =
            std::env::temp_dir().join(format!("wr-fuzz-{}-{target}-{case}", std::process::id()));
        let _ = std::fs::remove_dir_all(&work);
        if let Err(e) = std::fs::create_dir_all(&work) {
            found.push(format!("case {case}: cannot make {}: {e}", work.display()));
            break;
        }
        let outcome = match target {
            NEAR_NAMES => near_names(case, &work),
            _ => output_kinds(case, &work),
        };
        ran += 1;
        if let Err(e) = outcome {
            found.push(format!("{target} case {case}: {e}"));
        }
        let _ = std::fs::remove_dir_all(&work);
    }
    (ran, found)
}
