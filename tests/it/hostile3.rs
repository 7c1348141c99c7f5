//! Hostile inputs, round three (issue 28): what a mutator cannot reach,
//! such as file kinds at output paths, links planted in an output folder,
//! names that collide, sizes and broken standard streams. Each test builds
//! its attack in a temporary folder (big inputs are generated here, never
//! committed) and drives the real binary.

use std::path::Path;

use crate::common::wr;

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path)
        .unwrap()
        .file_type()
        .is_fifo()
}

/// A reader of `fifo`, open before this returns (so a writer finds it),
/// that collects everything until the writer closes.
fn read_fifo(fifo: &Path) -> std::thread::JoinHandle<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo)
        .unwrap();
    std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = [0u8; 65536];
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        // Non-blocking: 0 bytes before any arrived means no writer yet.
        while std::time::Instant::now() < deadline {
            match f.read(&mut buf) {
                Ok(0) if !got.is_empty() => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("{e}"),
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        got
    })
}

/// Every output path (`render --single-file`, `render --format md --out`,
/// `diff --html`, `collect --from --out`) that is a FIFO is written into
/// (a reader gets the bytes) and stays a FIFO; with no reader it is
/// refused at once, not replaced. A link to `/dev/null` stays a link and
/// `/dev/null` a device. `-` is standard output. Before: as root, the
/// temporary file was renamed over the FIFO, the device or the link.
#[test]
fn an_output_that_is_a_fifo_device_or_link_is_written_into_never_replaced() {
    let d = tempfile::tempdir().unwrap();
    let node = "captures/rtx3090-4gpu";
    let runs: [&[&str]; 4] = [
        &["render", node, "--single-file"],
        &["render", node, "--format", "md", "--out"],
        &["diff", node, node, "--html"],
        &["collect", "--quiet", "--from", node, "--out"],
    ];
    for (i, args) in runs.iter().enumerate() {
        let fifo = d.path().join(format!("fifo{i}"));
        mkfifo(&fifo);
        let reader = read_fifo(&fifo);
        wr().args(*args)
            .arg(&fifo)
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .success();
        // Checked before the join: a replaced FIFO leaves its reader waiting.
        assert!(is_fifo(&fifo), "{args:?} replaced the FIFO");
        let got = reader.join().unwrap();
        assert!(got.len() > 1000, "{args:?}: {} bytes read", got.len());
        // No reader: refused at once, and the FIFO stays.
        let out = wr()
            .args(*args)
            .arg(&fifo)
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(err.contains("FIFO with no reader"), "{args:?}: {err}");
        assert!(is_fifo(&fifo), "{args:?} replaced the FIFO");
        // A link to a device stays a link.
        let link = d.path().join(format!("null{i}"));
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        wr().args(*args).arg(&link).assert().success();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
    // `-` is standard output, for every output path.
    let node = &format!("{}/captures/rtx3090-4gpu", env!("CARGO_MANIFEST_DIR"));
    for args in [
        &["render", node, "--single-file", "-"][..],
        &["diff", node, node, "--html", "-"],
    ] {
        let out = wr().current_dir(d.path()).args(args).assert().success();
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        assert!(stdout.contains("<html"), "{args:?}");
        assert!(!d.path().join("-").exists(), "{args:?} wrote a file `-`");
    }
}

/// A link to a regular file at an output path: the link stays and its
/// target gets the new bytes.
#[test]
fn an_output_link_to_a_file_keeps_the_link_and_updates_its_target() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("real.html");
    std::fs::write(&target, "old").unwrap();
    let link = d.path().join("report.html");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    wr().args(["render", "captures/rtx3090-4gpu", "--single-file"])
        .arg(&link)
        .assert()
        .success();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(std::fs::read_to_string(&target).unwrap().contains("<html"));
}

/// A folder link planted in a site (`site/nodes/<slug> -> elsewhere`) is
/// never written through: the render refuses and names it, and the user's
/// file in `elsewhere` is untouched. Before: `elsewhere/index.html` was
/// overwritten.
#[test]
fn a_folder_link_planted_in_the_site_is_never_written_through() {
    let d = tempfile::tempdir().unwrap();
    let site = d.path().join("site");
    let elsewhere = d.path().join("elsewhere");
    std::fs::create_dir_all(site.join("nodes")).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("index.html"), "precious").unwrap();
    std::os::unix::fs::symlink(&elsewhere, site.join("nodes/rtx3090-4gpu")).unwrap();
    let out = wr()
        .args(["render", "captures/rtx3090-4gpu", "--out"])
        .arg(&site)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("is a link inside the site folder"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&elsewhere)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["index.html"]);
    assert_eq!(
        std::fs::read_to_string(elsewhere.join("index.html")).unwrap(),
        "precious"
    );
}

/// Copies every file of capture `name` into `dir` (created).
fn copy_capture(name: &str, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for e in std::fs::read_dir(Path::new("captures").join(name)).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
}

fn bundles_under(dir: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            n += bundles_under(&p);
        } else if p.file_name().is_some_and(|f| f == "bundle.json") {
            n += 1;
        }
    }
    n
}

/// Node folders whose names map to one safe folder name (`node 1`,
/// `node_1`, `node:1`, `node*1`; names differing only in bytes that are
/// not UTF-8; names sharing their first 100 bytes) each get their own
/// bundle: a collision gets a suffix and a warning. Before: each
/// overwrote the last, exit 0.
#[test]
fn node_folders_whose_names_collide_each_keep_their_bundle() {
    use std::os::unix::ffi::OsStrExt;
    let long = "x".repeat(100);
    let names: [&[u8]; 8] = [
        b"node 1",
        b"node_1",
        b"node:1",
        b"node*1",
        b"a\xff",
        b"a\xfe",
        format!("{long}-a").leak().as_bytes(),
        format!("{long}-b").leak().as_bytes(),
    ];
    let d = tempfile::tempdir().unwrap();
    let caps = ["rtx3090-4gpu", "dgx1v-v100-8gpu-1nic"];
    for (i, n) in names.iter().enumerate() {
        let dir = d.path().join("in").join(std::ffi::OsStr::from_bytes(n));
        copy_capture(caps[i % 2], &dir);
    }
    let out = d.path().join("out");
    let run = wr()
        .args(["collect", "--from"])
        .arg(d.path().join("in"))
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let err = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    assert_eq!(bundles_under(&out), 8, "{err}");
    assert_eq!(
        err.matches("of an earlier node; written to").count(),
        5,
        "{err}"
    );
}

/// Runs `args` with stderr `err`, returning the exit code.
fn run_with_stderr(args: &[&str], dir: &Path, err: std::process::Stdio) -> Option<i32> {
    let bin = assert_cmd::cargo::cargo_bin("wire-report");
    let mut child = std::process::Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap();
    child.wait().unwrap().code()
}

/// A closed or full stderr (`2>&1 | true`, `2>/dev/full`) loses the
/// messages, never the work: the bundle and the site are written and the
/// exit code is 0. Before: `collect --from` panicked at its first progress
/// line (exit 101) and wrote no bundle; render panicked after writing.
#[test]
fn a_closed_or_full_stderr_never_stops_the_work() {
    let d = tempfile::tempdir().unwrap();
    let cap = format!("{}/captures/rtx3090-4gpu", env!("CARGO_MANIFEST_DIR"));
    let full = || {
        std::process::Stdio::from(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
    };
    let closed = || {
        let mut fds = [0; 2];
        // SAFETY: pipe fills two descriptors; the read end is closed at
        // once, so every write to the other fails with EPIPE.
        unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            libc::close(fds[0]);
            <std::process::Stdio as std::os::fd::FromRawFd>::from_raw_fd(fds[1])
        }
    };
    for (i, err) in [full(), closed()].into_iter().enumerate() {
        let b = format!("b{i}.json");
        let code = run_with_stderr(&["collect", "--from", &cap, "--out", &b], d.path(), err);
        assert_eq!(code, Some(0), "collect, stderr {i}");
        assert!(d.path().join(&b).is_file(), "collect, stderr {i}");
    }
    let code = run_with_stderr(&["render", &cap, "--out", "site"], d.path(), full());
    assert_eq!(code, Some(0));
    assert!(d.path().join("site/index.html").is_file());
}

/// Escape sequences, BEL, CR and newlines in folder, file and transcript
/// names reach neither the terminal nor the markdown as they are: they are
/// shown as `\u{1b}`, and a newline in a file name cannot forge a `wrote`
/// line. Before: the window title was set, the screen cleared, a line forged.
#[test]
fn control_characters_from_names_never_reach_the_terminal_or_the_markdown() {
    let d = tempfile::tempdir().unwrap();
    let node = d.path().join("node\u{1b}]2;PWNED\u{7}\u{1b}[31mRED");
    copy_capture("dgx1v-v100-8gpu-1nic", &node);
    std::fs::write(
        node.join("a\nwrote ok.json (n: 9 transcripts)\nb\u{1b}[2J.txt"),
        "GPU0\tGPU1\nzz \u{1b}]8;;http:evil\u{7}click\n",
    )
    .unwrap();
    let b = d.path().join("b.json");
    let run = wr()
        .args(["collect", "--from"])
        .arg(&node)
        .arg("--out")
        .arg(&b)
        .assert()
        .success();
    let err = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err}");
    assert!(
        !err.lines().any(|l| l.starts_with("wrote ok.json")),
        "{err}"
    );
    assert!(err.contains("\\u{1b}]2;PWNED"), "{err}");
    let md = wr()
        .args(["render", "--format", "md"])
        .arg(&b)
        .assert()
        .success();
    let md = String::from_utf8_lossy(&md.get_output().stdout).into_owned();
    assert!(
        !md.chars()
            .any(|c| c == '\u{1b}' || c == '\u{7}' || c == '\0'),
        "{md}"
    );
}

/// `collect --from capture --out file` (quiet).
fn collect_to(capture: &str, out: &Path) {
    wr().args(["collect", "--quiet", "--from"])
        .arg(Path::new("captures").join(capture))
        .arg("--out")
        .arg(out)
        .assert()
        .success();
}

/// A fleet of good bundles and one cut short (then one of a newer
/// schema): the site, the single file, the markdown and the diff render
/// the good nodes, name the bad one with what failed, and exit 1. Before:
/// exit 2 and nothing for the good nodes (a site without its index).
#[test]
fn one_bad_bundle_in_a_fleet_is_named_and_the_rest_rendered() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f");
    for n in ["rtx3090-4gpu", "a100-pcie-2gpu-no-nvlink"] {
        collect_to(n, &f.join(n).join("bundle.json"));
    }
    let full = d.path().join("full.json");
    collect_to("dgx1v-v100-8gpu-1nic", &full);
    let full = std::fs::read_to_string(&full).unwrap();
    std::fs::create_dir_all(f.join("broken")).unwrap();
    let cut = full[..3000].to_string();
    let newer = full.replacen("\"schema_version\":3", "\"schema_version\":4", 1);
    assert_ne!(newer, full);
    // A cut bundle is named by its folder; a newer one still by its host.
    for (what, text, name) in [
        ("cut", cut, "broken"),
        ("newer", newer, "dgx1v-v100-8gpu-1nic"),
    ] {
        std::fs::write(f.join("broken/bundle.json"), text).unwrap();
        let site = d.path().join(format!("site-{what}"));
        let run = wr()
            .arg("render")
            .arg(&f)
            .arg("--out")
            .arg(&site)
            .assert()
            .code(1);
        let err = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
        assert!(err.contains("broken/bundle.json"), "{what}: {err}");
        let index = std::fs::read_to_string(site.join("index.html")).unwrap();
        for n in ["rtx3090-4gpu", "a100-pcie-2gpu-no-nvlink", name] {
            assert!(index.contains(n), "{what}: {n} not on the index");
        }
        let single = d.path().join(format!("{what}.html"));
        wr().arg("render")
            .arg(&f)
            .arg("--single-file")
            .arg(&single)
            .assert()
            .code(1);
        assert!(
            std::fs::read_to_string(&single)
                .unwrap()
                .contains("rtx3090-4gpu")
        );
        let md = wr()
            .arg("render")
            .arg(&f)
            .args(["--format", "md"])
            .assert()
            .code(1);
        let md = String::from_utf8_lossy(&md.get_output().stdout).into_owned();
        assert_eq!(md.matches("### wire-report: ").count(), 3, "{what}: {md}");
        assert!(md.contains("this node could not be loaded"), "{what}: {md}");
        let diff = wr().arg("diff").arg(&f).arg(&f).assert().code(1);
        let text = String::from_utf8_lossy(&diff.get_output().stdout).into_owned();
        assert!(text.contains("0 change(s) for the worse"), "{what}: {text}");
    }
}

/// Node folders that are links into a shared store of bundles are
/// rendered (the walk follows links, as `diff` and `collect` do). Before:
/// `render` said `0 nodes`, exit 0.
#[test]
fn node_folders_linked_to_a_store_of_bundles_are_rendered() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("store");
    collect_to("rtx3090-4gpu", &store.join("a/bundle.json"));
    collect_to("dgx1v-v100-8gpu-1nic", &store.join("b/bundle.json"));
    let fleet = d.path().join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    std::os::unix::fs::symlink(store.join("a"), fleet.join("nodeA")).unwrap();
    std::os::unix::fs::symlink(store.join("b"), fleet.join("nodeB")).unwrap();
    let md = wr()
        .arg("render")
        .arg(&fleet)
        .args(["--format", "md"])
        .assert()
        .success();
    let md = String::from_utf8_lossy(&md.get_output().stdout).into_owned();
    assert_eq!(md.matches("### wire-report: ").count(), 2, "{md}");
}

/// A folder past PATH_MAX under a fleet (3000 levels of `x/`): the good
/// node is rendered and the deep entry is a node of its own whose problem
/// names it. Before: `render` exited 2 (`failed to walk`) with nothing
/// written, and `collect --from` filed the problem under the parent.
#[test]
fn an_entry_the_walk_cannot_enter_is_named_and_the_rest_rendered() {
    let d = tempfile::tempdir().unwrap();
    let fleet = d.path().join("fleet");
    copy_capture("rtx3090-4gpu", &fleet.join("good"));
    // Made relative to an open folder, one level at a time: no path past
    // PATH_MAX is ever given to the kernel here.
    let c = |s: &str| std::ffi::CString::new(s).unwrap();
    let p = c(fleet.to_str().unwrap());
    // SAFETY: plain POSIX calls on valid NUL-terminated names; each
    // descriptor is closed once its child is open.
    unsafe {
        let mut fd = libc::open(p.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY);
        assert!(fd >= 0);
        let x = c("x");
        for _ in 0..3000 {
            assert_eq!(libc::mkdirat(fd, x.as_ptr(), 0o755), 0);
            let n = libc::openat(fd, x.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY);
            libc::close(fd);
            assert!(n >= 0);
            fd = n;
        }
        libc::close(fd);
    }
    let md = wr()
        .arg("render")
        .arg(&fleet)
        .args(["--format", "md"])
        .assert()
        .success();
    let md = String::from_utf8_lossy(&md.get_output().stdout).into_owned();
    assert!(
        md.contains("### wire-report: good"),
        "{}",
        &md[..md.len().min(2000)]
    );
    assert!(md.contains("skipped"), "{}", &md[..md.len().min(2000)]);
    let site = d.path().join("site");
    wr().arg("render")
        .arg(&fleet)
        .arg("--out")
        .arg(&site)
        .assert()
        .success();
    assert!(site.join("nodes/good/index.html").is_file());
}

/// `collect --from --redact` redacts: no host name, no port GUID in the
/// bundle. Before: the flag was ignored (byte-identical output).
#[test]
fn collect_from_honours_redact() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r.json");
    wr().args([
        "collect",
        "--quiet",
        "--redact",
        "--from",
        "captures/h100-8nic-ndr400",
        "--out",
    ])
    .arg(&out)
    .assert()
    .success();
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(!text.contains("h100-8nic-ndr400"));
    assert!(!text.contains("0x58a2e10300a7820e"));
    assert!(text.contains("\"name\":\"host-"));
}

/// Numbers from the command line are range-checked before they reach a
/// `Duration`, a loop or a formula: exit 2 with the flag named, at once.
/// Before: `--tool-timeout 1e19` panicked, `--gpus 0-4294967295` never
/// ended, `--ib-rate 1e308` printed `inf GB/s` with exit 0.
#[test]
fn numbers_from_the_command_line_are_range_checked() {
    let d = tempfile::tempdir().unwrap();
    for (args, says) in [
        (
            &["collect", "--no-sweep", "--tool-timeout", "1e19"][..],
            "--tool-timeout must be",
        ),
        (
            &[
                "collect",
                "--no-sweep",
                "--benchmarks",
                "--benchmark-budget",
                "1e300",
            ],
            "--benchmark-budget must be",
        ),
        (&["collect", "--budget", "1e300"], "--budget must be"),
        (
            &[
                "placement",
                "captures/dgx1v-v100-8gpu-1nic",
                "--gpus",
                "0-4294967295",
            ],
            "no node has GPU4294967295",
        ),
        (&["model", "ceiling", "--ib-rate", "1e308"], "too large"),
    ] {
        let mut cmd = wr();
        cmd.args(args);
        if args[0] == "collect" {
            cmd.arg("--out").arg(d.path().join("o"));
        }
        cmd.timeout(std::time::Duration::from_secs(30))
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
    }
}

/// A saved sysfs tree whose `numa_node` is past u32 (4294967296): no NUMA
/// node is recorded. Before: it wrapped to NUMA 0.
#[test]
fn a_numa_node_past_u32_is_no_node() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path();
    std::fs::create_dir_all(t.join("proc/sys/kernel")).unwrap();
    std::fs::write(t.join("proc/sys/kernel/hostname"), "numatest\n").unwrap();
    std::fs::create_dir_all(t.join("sys/bus/pci/devices")).unwrap();
    for (a, numa) in [
        ("0000:01:00.0", "4294967296"),
        ("0000:02:00.0", "4294967297"),
    ] {
        let dev = t.join("sys/devices/pci0000:00/0000:00:01.0").join(a);
        std::fs::create_dir_all(&dev).unwrap();
        for (f, v) in [
            ("class", "0x030200"),
            ("vendor", "0x10de"),
            ("device", "0x20b0"),
        ] {
            std::fs::write(dev.join(f), format!("{v}\n")).unwrap();
        }
        std::fs::write(dev.join("numa_node"), format!("{numa}\n")).unwrap();
        std::os::unix::fs::symlink(
            format!("../../../devices/pci0000:00/0000:00:01.0/{a}"),
            t.join("sys/bus/pci/devices").join(a),
        )
        .unwrap();
    }
    let out = d.path().join("o");
    wr().args(["collect", "--no-sweep", "--quiet", "--sysfs-root"])
        .arg(t)
        .arg("--out")
        .arg(&out)
        .env("PATH", "/nonexistent")
        .assert()
        .success();
    let b: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("bundle.json")).unwrap()).unwrap();
    let devices = b["topology"]["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 2, "{devices:?}");
    for dev in devices {
        assert!(dev.get("numa_node").is_none_or(|n| n.is_null()), "{dev}");
    }
}

/// A Slurm node list whose first name starts with `-` never reaches
/// ib_write_bw as an option: the pair is refused before anything runs.
/// Before: `ib_write_bw ... --out_json_file=/tmp/x`.
#[test]
fn a_slurm_node_name_starting_with_a_dash_never_reaches_a_tool_as_an_option() {
    let d = tempfile::tempdir().unwrap();
    let bin = d.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let log = d.path().join("argv.log");
    let tool = bin.join("ib_write_bw");
    std::fs::write(
        &tool,
        format!("#!/bin/sh\necho \"$@\" >> {}\nexit 1\n", log.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = wr()
        .args([
            "collect",
            "--no-sweep",
            "--benchmarks",
            "--tool-timeout",
            "2",
        ])
        .args(["--benchmark-budget", "3", "--quiet", "--out"])
        .arg(d.path().join("o"))
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("SLURM_NTASKS", "2")
        .env("SLURM_PROCID", "1")
        .env("SLURM_JOB_NODELIST", "--out_json_file=/tmp/x,n2")
        .env("SLURM_JOB_ID", "7")
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    assert!(err.contains("starts with `-`"), "{err}");
    assert!(!log.exists(), "ib_write_bw ran");
}

/// A transcript over 128 MB given as a FILE to `placement`, `model fit` or
/// `render` is refused at the cap `collect --from` uses for a node
/// folder's transcripts. Before: read up to 1 GiB and parsed (a 1 GB nccl
/// log asked for 19 GB). Sparse: nothing big is written to disk.
#[test]
fn a_transcript_file_over_the_cap_is_refused_by_every_command() {
    let d = tempfile::tempdir().unwrap();
    let big = d.path().join("log.txt");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(129_000_000)
        .unwrap();
    let single = d.path().join("r.html");
    for args in [
        &["placement", "--gpus", "0,1"][..],
        &["model", "fit"],
        &["render", "--single-file", single.to_str().unwrap()],
    ] {
        wr().args(args)
            .arg(&big)
            .timeout(std::time::Duration::from_secs(120))
            .assert()
            .code(2)
            .stderr(predicates::str::contains("larger than 128 MB"));
    }
}

/// Hostile turn 3, case 18: a transcript saved with a UTF-8 BOM, with old
/// Mac line ends (CR alone) or as UTF-16 (PowerShell's `>`) is read like
/// the plain one; a bundle opened and saved with a BOM still loads. Before:
/// the topology was lost, CR-only read nothing, UTF-16 was "binary".
#[test]
fn a_bom_cr_line_ends_or_utf16_read_like_the_plain_transcript() {
    let t = tempfile::tempdir().unwrap();
    let plain = std::fs::read_to_string(
        "captures/dgx1v-v100-8gpu-1nic/nvidia-topo-009-dgx1v-v100-sxm2-hybrid-cube-mesh-mlx5.txt",
    )
    .unwrap();
    let mut u16le = vec![0xff, 0xfe];
    u16le.extend(plain.encode_utf16().flat_map(u16::to_le_bytes));
    let mut u16be = vec![0xfe, 0xff];
    u16be.extend(plain.encode_utf16().flat_map(u16::to_be_bytes));
    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend(plain.as_bytes());
    let shapes: [(&str, Vec<u8>); 5] = [
        ("plain", plain.as_bytes().to_vec()),
        ("bom", bom),
        ("cr", plain.replace('\n', "\r").into_bytes()),
        ("u16le", u16le),
        ("u16be", u16be),
    ];
    let mut links = Vec::new();
    for (name, bytes) in shapes {
        let dir = t.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("topo.txt"), bytes).unwrap();
        let out = t.path().join(format!("{name}.json"));
        wr().args(["collect", "--quiet", "--from"])
            .arg(&dir)
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        let b: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(
            b["problems"].as_array().map_or(0, Vec::len),
            0,
            "{name}: {}",
            b["problems"]
        );
        links.push((name, b["topology"]["links"].as_array().unwrap().len()));
    }
    assert!(links[0].1 > 20, "{links:?}");
    assert!(links.iter().all(|l| l.1 == links[0].1), "{links:?}");
    // UTF-16 without its mark (little and big endian) reads too.
    for (name, bytes) in [
        (
            "u16le-bare",
            plain
                .encode_utf16()
                .flat_map(u16::to_le_bytes)
                .collect::<Vec<u8>>(),
        ),
        (
            "u16be-bare",
            plain.encode_utf16().flat_map(u16::to_be_bytes).collect(),
        ),
    ] {
        let dir = t.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("topo.txt"), bytes).unwrap();
        let out = t.path().join(format!("{name}.json"));
        wr().args(["collect", "--quiet", "--from"])
            .arg(&dir)
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        let b: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(
            b["topology"]["links"].as_array().unwrap().len(),
            links[0].1,
            "{name}"
        );
    }
    // A bundle with a BOM loads (it was read as a transcript and refused).
    let mut with_bom = b"\xef\xbb\xbf".to_vec();
    with_bom.extend(std::fs::read(t.path().join("plain.json")).unwrap());
    std::fs::write(t.path().join("bom-bundle.json"), with_bom).unwrap();
    wr().arg("placement")
        .arg(t.path().join("bom-bundle.json"))
        .args(["--gpus", "0,1"])
        .assert()
        .success()
        .stdout(predicates::str::contains("GPU0-GPU1"));
}

/// Hostile turn 3, case 21: the same transcript reached twice (a folder
/// given with one inside it; two links to one file) is read once, and the
/// second name is said. Before: twice the transcripts and the cells.
#[test]
fn the_same_transcript_reached_twice_is_read_once() {
    let t = tempfile::tempdir().unwrap();
    wr().args([
        "collect",
        "--quiet",
        "--from",
        "captures",
        "captures/rtx3090-4gpu",
        "--out",
    ])
    .arg(t.path().join("all"))
    .assert()
    .code(predicates::function::function(|c: &i32| *c == 0 || *c == 1));
    let once = |p: &Path| -> (usize, usize) {
        let b: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        (
            b["transcripts"].as_array().unwrap().len(),
            b["measurements"]["cells"].as_array().unwrap().len(),
        )
    };
    let node = t.path().join("all/rtx3090-4gpu/bundle.json");
    assert_eq!(once(&node).0, 1);
    // Two links to one file in one node.
    let n = t.path().join("linked");
    std::fs::create_dir(&n).unwrap();
    let src = std::fs::canonicalize("captures/rtx3090-4gpu").unwrap();
    let file = std::fs::read_dir(&src)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::os::unix::fs::symlink(&file, n.join("a.txt")).unwrap();
    std::os::unix::fs::symlink(&file, n.join("b.txt")).unwrap();
    wr().args(["collect", "--quiet", "--from"])
        .arg(&n)
        .arg("--out")
        .arg(t.path().join("l.json"))
        .assert()
        .success();
    assert_eq!(once(&t.path().join("l.json")), once(&node));
    let b: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.path().join("l.json")).unwrap()).unwrap();
    assert_eq!(b["problems"][0]["kind"], "duplicate");
    assert!(
        b["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("a.txt")
    );
}

/// Hostile turn 3, case 11: a collection diffed with itself has no change,
/// even when an error counter grew while it ran (the same standing fault
/// on both sides). Before: "1 change for the worse", exit 1.
#[test]
fn a_collection_diffed_with_itself_has_no_change() {
    let n = "captures/cx2-qdr-loopback-corrupt-packet";
    wr().args(["diff", n, n])
        .assert()
        .success()
        .stdout(predicates::str::contains("0 change(s) for the worse"));
}

/// Hostile turn 3, case 17: a 256-byte host name (and two 255-byte ones)
/// no longer sinks the fleet's site: the node folder is cut with a digest
/// of the name kept, and each node gets its own. Before: exit 2.
#[test]
fn host_names_past_a_file_name_get_short_distinct_folders() {
    let t = tempfile::tempdir().unwrap();
    let good = t.path().join("good.json");
    collect_to("rtx3090-4gpu", &good);
    let mut b: serde_json::Value = serde_json::from_slice(&std::fs::read(&good).unwrap()).unwrap();
    let mut names = Vec::new();
    for (i, name) in [
        "h".repeat(256),
        "h".repeat(255),
        format!("{}x", "h".repeat(254)),
    ]
    .iter()
    .enumerate()
    {
        b["host"]["name"] = serde_json::Value::String(name.clone());
        let p = t.path().join(format!("long{i}.json"));
        std::fs::write(&p, b.to_string()).unwrap();
        names.push(p);
    }
    let site = t.path().join("site");
    wr().arg("render")
        .arg(&good)
        .args(&names)
        .arg("--out")
        .arg(&site)
        .assert()
        .success();
    let folders: Vec<String> = std::fs::read_dir(site.join("nodes"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(folders.len(), 4, "{folders:?}");
    assert!(folders.iter().all(|f| f.len() <= 100), "{folders:?}");
}
