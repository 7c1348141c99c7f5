//! What a run says and what it leaves behind: `-q` and `-v` on every
//! subcommand, one closing line after a run over many nodes, and no
//! output left by a render that failed (an empty folder, pages no
//! manifest lists, temporary files of a render that was killed).

use std::path::Path;

use crate::common::wr;
use predicates::prelude::*;

const A: &str = "captures/rtx3090-4gpu";
const B: &str = "captures/dgx1v-v100-8gpu-1nic";
const C: &str = "captures/cx3-qdr-graph500";

/// Before: `-q` was a flag of `collect` only, and no subcommand took `-v`.
#[test]
fn every_subcommand_takes_quiet_and_verbose() {
    let d = tempfile::tempdir().unwrap();
    let site = d.path().join("site");
    // Quiet: nothing on stderr, the same outputs and exit status.
    wr().args(["-q", "render", A, "--out"])
        .arg(&site)
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
    assert!(site.join("index.html").is_file());
    wr().args(["render", A, "--quiet", "--out"])
        .arg(&site)
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
    // Verbose: each node's pages, then the closing line.
    let v = wr()
        .args(["render", A, "-v", "--out"])
        .arg(&site)
        .assert()
        .success()
        .get_output()
        .stderr
        .clone();
    let v = String::from_utf8(v).unwrap();
    let lines: Vec<&str> = v.lines().collect();
    assert_eq!(lines.len(), 2, "{v}");
    assert!(lines[0].contains("rtx3090-4gpu"), "{v}");
    assert!(
        lines[1].ends_with(&format!("1 nodes) under {}", site.display())),
        "{v}"
    );
    for args in [
        &["check", A, "-q"][..],
        &["check", A, "-v"],
        &["diff", A, A, "-q"],
        &["diff", A, A, "--verbose"],
        &["placement", B, "--gpus", "0,1", "-q"],
        &["schema", "-v"],
        &["completions", "bash", "-q"],
        &["man", "-v"],
    ] {
        let plain: Vec<&str> = args
            .iter()
            .copied()
            .filter(|a| !matches!(*a, "-q" | "-v" | "--verbose"))
            .collect();
        let expected = wr().args(&plain).output().unwrap().status.code();
        let got = wr().args(args).output().unwrap();
        assert_eq!(got.status.code(), expected, "{args:?}");
        if args.contains(&"-q") {
            assert!(
                got.stderr.is_empty(),
                "{args:?}: {}",
                String::from_utf8_lossy(&got.stderr)
            );
        }
    }
    wr().args(["render", A, "-q", "-v"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
}

/// Copies of real nodes, one folder each.
fn fleet(root: &Path, nodes: &[(&str, &str)]) {
    for (name, src) in nodes {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for f in std::fs::read_dir(src).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
        }
    }
}

/// Before: `collect --from` over many nodes printed every file it read and
/// every bundle, and no closing line. Now: warnings and one summary line;
/// `-v` adds each file and bundle; `-q` says nothing.
#[test]
fn collect_from_many_nodes_ends_with_one_summary_line() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in");
    fleet(&input, &[("n1", A), ("n2", B), ("n3", C)]);
    let out = d.path().join("bundles");
    let run = |flag: Option<&str>| {
        let mut c = wr();
        c.args(["collect", "--from"])
            .arg(&input)
            .arg("--out")
            .arg(&out);
        c.args(flag);
        let o = c.assert().success().get_output().stderr.clone();
        String::from_utf8(o).unwrap()
    };
    let err = run(None);
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("collected 3 nodes: 3 bundles written under ")
            && last.contains(" transcripts read, 0 problems in 0 files"),
        "{err}"
    );
    assert!(!err.lines().any(|l| l.starts_with("read ")), "{err}");
    let verbose = run(Some("-v"));
    assert!(verbose.lines().any(|l| l.starts_with("read ")), "{verbose}");
    assert_eq!(
        verbose.lines().filter(|l| l.starts_with("wrote ")).count(),
        3,
        "{verbose}"
    );
    assert!(
        verbose
            .lines()
            .last()
            .unwrap()
            .starts_with("collected 3 nodes"),
        "{verbose}"
    );
    assert_eq!(run(Some("-q")), "");
    for n in ["n1", "n2", "n3"] {
        assert!(out.join(n).join("bundle.json").is_file());
    }
}

/// Before: `render no/such/dir --out site` exited 2 and left an empty `site/`.
#[test]
fn a_render_of_nothing_leaves_no_folder() {
    let d = tempfile::tempdir().unwrap();
    let site = d.path().join("site");
    wr().args(["render", "no/such/dir", "--out"])
        .arg(&site)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no/such/dir"));
    assert!(!site.exists());
}

/// `collect --from` of nothing leaves no empty output folder either.
#[test]
fn a_collect_of_nothing_leaves_no_folder() {
    let d = tempfile::tempdir().unwrap();
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = d.path().join("bundles");
    wr().args(["collect", "--from"])
        .arg(&empty)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no files found"));
    assert!(!out.exists());
    wr().args(["collect", "--from", "no/such/dir", "--out"])
        .arg(&out)
        .assert()
        .code(2);
    assert!(!out.exists());
}

/// Files under `site` that its manifest does not list (the manifest aside).
fn unlisted(site: &Path) -> Vec<String> {
    let manifest = std::fs::read_to_string(site.join(".wire-report-site")).unwrap();
    let listed: std::collections::BTreeSet<&str> =
        manifest.lines().filter(|l| !l.starts_with('#')).collect();
    let mut out = Vec::new();
    let mut stack = vec![site.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p.strip_prefix(site).unwrap().to_string_lossy().into_owned();
            if rel != ".wire-report-site" && !listed.contains(rel.as_str()) {
                out.push(rel);
            }
        }
    }
    out
}

/// Hostile case 16 (turn 3): a render that fails half way (ENOSPC there, a
/// page path that is a folder here) has written other nodes' pages that
/// its manifest never listed. Before: no later render removed them. Now
/// each node's files are journaled before they are written, and the next
/// render removes those it does not write again.
#[test]
fn pages_of_a_failed_render_are_removed_by_the_next() {
    let d = tempfile::tempdir().unwrap();
    let site = d.path().join("site");
    wr().args(["render", A, "--out"])
        .arg(&site)
        .assert()
        .success();
    let blocker = site.join("nodes/cx3-qdr-graph500/index.html");
    std::fs::create_dir_all(&blocker).unwrap();
    wr().args(["render", A, B, C, "--out"])
        .arg(&site)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a regular file"));
    assert!(
        site.join("nodes/dgx1v-v100-8gpu-1nic/index.html").is_file(),
        "the failed render wrote the second node's pages"
    );
    std::fs::remove_dir(&blocker).unwrap();
    wr().args(["render", A, "--out"])
        .arg(&site)
        .assert()
        .success();
    assert_eq!(unlisted(&site), Vec::<String>::new());
    assert!(!site.join("nodes/dgx1v-v100-8gpu-1nic").exists());
    assert!(!site.join(".wire-report-site.pending").exists());
}

/// Hostile case 16 (turn 3): `kill -9` mid-render leaves
/// `.wire-report-<pid>-XXXXXX.tmp` files. Before: no re-run removed them.
/// Now the next render into the folder removes those of processes that
/// are gone, and nothing else: a user's `.tmp` file, one of another name,
/// and one of a process still running stay.
#[test]
fn temporary_files_of_a_killed_render_are_removed_by_the_next() {
    let d = tempfile::tempdir().unwrap();
    let site = d.path().join("site");
    wr().args(["render", A, "--out"])
        .arg(&site)
        .assert()
        .success();
    // Process ids above the kernel's pid_max (at most 2^22): never running.
    let dead = [
        site.join(wire_report::fs::temp_name(2147483647, "a1B2c3")),
        site.join("nodes/rtx3090-4gpu")
            .join(wire_report::fs::temp_name(2147483646, "Zz9yX8")),
    ];
    let kept = [
        site.join("notes.tmp"),
        site.join(".wire-report-mine.tmp"),
        site.join(format!(
            "{}.bak",
            wire_report::fs::temp_name(2147483647, "a1B2c3")
        )),
        site.join(wire_report::fs::temp_name(std::process::id(), "x1y2z3")),
        // Another machine's, on a shared folder: its process id means nothing here.
        site.join(".wire-report-00000000-2147483647-a1B2c3.tmp"),
        site.join("nodes/rtx3090-4gpu/.wire-report-12ab-x1y2z3.tmp"),
    ];
    for f in dead.iter().chain(&kept) {
        std::fs::write(f, "x").unwrap();
    }
    wr().args(["render", A, "--out"])
        .arg(&site)
        .assert()
        .success();
    for f in &dead {
        assert!(!f.exists(), "{} was left", f.display());
    }
    for f in &kept {
        assert!(f.exists(), "{} was removed", f.display());
    }
}
