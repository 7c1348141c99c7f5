//! Hostile inputs and hostile machines (issue 14): each test builds the
//! attack (synthetic; small fixtures live in `tests/fixtures/hostile/`),
//! runs the real binary, and asserts that nothing is lost, nothing hangs
//! and nothing is written where it must not be.

use std::path::Path;

use crate::common::wr;

/// `render --out DIR` into a folder that already holds a user's pages,
/// styles and a `nodes/*/bundle.json`: they all survive, and a second
/// render still removes the pages of a node the first one wrote and the
/// second one no longer has.
#[test]
fn render_out_never_removes_files_it_did_not_write() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path();
    let mine = [
        "notes.html",
        "theme.css",
        "docs/old/index.html",
        "nodes/mine/bundle.json",
        "nodes/mine/index.html",
    ];
    for rel in mine {
        let p = out.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, format!("user file {rel}")).unwrap();
    }
    wr().args([
        "render",
        "captures/dgx1-p100-8gpu-4nic",
        "captures/rtx3090-4gpu",
        "--out",
    ])
    .arg(out)
    .assert()
    .success();
    for rel in mine {
        let text = std::fs::read_to_string(out.join(rel)).unwrap();
        assert_eq!(text, format!("user file {rel}"), "{rel} was changed");
    }
    let nodes = |out: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(out.join("nodes"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let before = nodes(out);
    assert_eq!(before.len(), 3, "{before:?}");
    wr().args(["render", "captures/dgx1-p100-8gpu-4nic", "--out"])
        .arg(out)
        .assert()
        .success();
    let after = nodes(out);
    assert_eq!(
        after.len(),
        2,
        "the second node's pages were not removed: {after:?}"
    );
    for rel in mine {
        assert!(out.join(rel).is_file(), "{rel} was removed");
    }
}

/// A bare machine for a live collect: a sysfs root holding only a hostname,
/// and a PATH with no vendor tools except the ones a test puts there.
struct Bare {
    root: tempfile::TempDir,
    bin: tempfile::TempDir,
}

impl Bare {
    fn new(hostname: &str) -> Bare {
        let root = tempfile::tempdir().unwrap();
        let p = root.path().join("proc/sys/kernel");
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join("hostname"), format!("{hostname}\n")).unwrap();
        Bare {
            root,
            bin: tempfile::tempdir().unwrap(),
        }
    }

    fn tool(&self, name: &str, body: &str) {
        use std::os::unix::fs::PermissionsExt;
        let p = self.bin.path().join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn collect(&self) -> assert_cmd::Command {
        let mut c = wr();
        c.env("PATH", self.bin.path())
            .env_remove("SLURMD_NODENAME")
            .env_remove("SLURM_JOB_ID")
            .env_remove("SLURM_PROCID")
            .args(["collect", "--quiet", "--no-sweep", "--sysfs-root"])
            .arg(self.root.path());
        c
    }
}

/// Every file under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(dir).unwrap().display().to_string())
        .collect();
    v.sort();
    v
}

#[test]
fn a_hostname_or_slurm_name_never_writes_outside_out() {
    let d = tempfile::tempdir().unwrap();
    let m = Bare::new("../../x");
    m.collect()
        .arg("--out")
        .arg(d.path().join("a/b/{host}"))
        .assert()
        .success();
    m.collect()
        .env("SLURMD_NODENAME", "../../y")
        .env("SLURM_JOB_ID", "../../job")
        .arg("--out")
        .arg(d.path().join("a/b/{host}-{job}"))
        .assert()
        .success();
    let files = files_under(d.path());
    assert!(
        files.iter().all(|f| f.starts_with("a/b/")),
        "written outside a/b/: {files:?}"
    );
    assert!(
        files.contains(&"a/b/_._.._x/bundle.json".to_string()),
        "{files:?}"
    );
    assert!(
        files.contains(&"a/b/_._.._y-_._.._job/bundle.json".to_string()),
        "{files:?}"
    );
}

#[test]
fn an_absolute_hostname_without_out_stays_in_the_working_directory() {
    let cwd = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("x");
    let m = Bare::new(&target.display().to_string());
    m.collect().current_dir(cwd.path()).assert().success();
    assert!(!target.exists(), "wrote into {}", target.display());
    let files = files_under(cwd.path());
    assert!(
        files.len() == 1
            && files[0].starts_with("wire-report-_")
            && files[0].ends_with("_x/bundle.json"),
        "{files:?}"
    );
}

/// The bundle a live collect wrote into `out`.
fn bundle_in(out: &Path) -> wire_report::bundle::Bundle {
    let text = std::fs::read_to_string(out.join("bundle.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A tool that exits at once but leaves a child holding its stdout: the
/// timeout covers the whole process group and its pipes, so collect does
/// not wait for the child (before: it waited the child's 1000 s).
#[test]
fn a_tool_whose_child_holds_stdout_cannot_outlast_the_timeout() {
    let m = Bare::new("hostile-node");
    m.tool("nvidia-smi", "/bin/sleep 1000 &\necho x");
    let out = tempfile::tempdir().unwrap();
    m.collect()
        .args(["--tool-timeout", "1"])
        .arg("--out")
        .arg(out.path())
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    let b = bundle_in(out.path());
    let p = b
        .probes
        .iter()
        .find(|p| p.name == "nvidia-smi topo -m")
        .unwrap();
    assert_eq!(
        p.status,
        wire_report::bundle::ProbeStatus::TimedOut,
        "{p:?}"
    );
    assert!(p.message.contains("still held its output"), "{}", p.message);
}

/// A tool that never stops printing: its output is cut at the cap, kept,
/// and the cut is said (before: buffered until memory ran out).
#[test]
fn a_tool_that_never_stops_printing_is_cut_and_kept() {
    let m = Bare::new("hostile-node");
    m.tool(
        "nvidia-smi",
        "case \"$1\" in topo) exec /usr/bin/yes nvlink;; esac; exit 1",
    );
    let out = tempfile::tempdir().unwrap();
    m.collect()
        .args(["--tool-timeout", "20"])
        .arg("--out")
        .arg(out.path())
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .success();
    let b = bundle_in(out.path());
    let p = b
        .probes
        .iter()
        .find(|p| p.name == "nvidia-smi topo -m")
        .unwrap();
    assert!(p.message.contains("cut there"), "{p:?}");
    let file = out.path().join(p.transcript.as_ref().unwrap());
    let len = std::fs::metadata(&file).unwrap().len() as usize;
    assert_eq!(len, wire_report::collect::probes::STDOUT_CAP);
    assert!(
        b.problems.iter().any(|q| q.message.contains("cut there")),
        "the cut is not a problem of the bundle"
    );
}

/// `--redact` on hosts named like the bundle's own words: every live
/// collect succeeds, the hostname is gone, and the NUMA nodes survive
/// (before: JSON text was rewritten; `node` lost every NUMA node, the
/// others exited 2 and wrote nothing).
#[test]
fn redact_keeps_the_bundle_whole_whatever_the_host_is_called() {
    let names = [
        "node", "host", "kind", "name", "file", "links", "status", "ok", "live", "probe",
    ];
    for name in names {
        let m = Bare::new(name);
        for (n, cpus) in [("node0", "0-3"), ("node1", "4-7")] {
            let d = m.root.path().join("sys/devices/system/node").join(n);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("cpulist"), cpus).unwrap();
        }
        let out = tempfile::tempdir().unwrap();
        m.collect()
            .arg("--redact")
            .arg("--out")
            .arg(out.path())
            .assert()
            .success();
        let b = bundle_in(out.path());
        assert!(b.host.name.starts_with("host-"), "{name}: {}", b.host.name);
        let sys = b.system.as_ref().unwrap();
        assert!(sys.redacted);
        assert_eq!(sys.numa_nodes.len(), 2, "{name}: NUMA nodes lost");
        assert!(b.probes.iter().all(|p| !p.name.is_empty()), "{name}");
    }
}

/// A transcript whose file name carries blank lines, raw HTML, a
/// `javascript:` link and a forged "Findings: none": in the ticket summary
/// it stays inside its code span (before: it broke out into markup).
#[test]
fn a_file_name_cannot_forge_the_markdown_summary() {
    let d = tempfile::tempdir().unwrap();
    let node = d.path().join("node");
    std::fs::create_dir(&node).unwrap();
    let evil = "x`\n\n<img src=x onerror=alert(1)>\n\n[click](javascript:alert(1))\n\n**Findings:** none\n\n`.txt";
    std::fs::copy(
        "captures/rtx3090-4gpu/p2pBandwidthLatencyTest-003-4x-rtx3090-no-p2p-tabs-expanded-no-trailing-note.txt",
        node.join(evil),
    )
    .unwrap();
    let out = wr()
        .args(["render", "--format", "md"])
        .arg(&node)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let md = String::from_utf8(out).unwrap();
    assert!(
        md.contains("onerror"),
        "the evidence line is not there:\n{md}"
    );
    // What a ticket system shows: the summary as HTML (CommonMark with
    // tables, as GitHub and GitLab read it).
    let mut html = String::new();
    let opts = pulldown_cmark::Options::ENABLE_TABLES;
    pulldown_cmark::html::push_html(&mut html, pulldown_cmark::Parser::new_ext(&md, opts));
    assert!(!html.contains("<img"), "{html}");
    assert!(!html.contains("href=\"javascript:"), "{html}");
    assert!(!html.contains("<strong>Findings:</strong> none"), "{html}");
    assert!(html.contains("<strong>Findings</strong> (3)"), "{html}");
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

const TOPO: &str =
    "captures/dgx1-p100-8gpu-4nic/nvidia-topo-001-dgx1-p100-soc-legend-mangled-header.txt";

/// A FIFO and a link to `/dev/zero` beside a real transcript: each is
/// skipped with a problem naming it, the transcript is read, nothing waits
/// (before: `collect`, `placement` and `model fit` hung on the FIFO, and
/// `/dev/zero` was read until memory ran out).
#[test]
fn fifos_and_devices_are_skipped_with_a_problem_never_opened() {
    let d = tempfile::tempdir().unwrap();
    let node = d.path().join("node");
    std::fs::create_dir(&node).unwrap();
    std::fs::copy(TOPO, node.join("topo.txt")).unwrap();
    mkfifo(&node.join("fifo.txt"));
    std::os::unix::fs::symlink("/dev/zero", node.join("zero.txt")).unwrap();
    let limit = std::time::Duration::from_secs(20);
    wr().args(["collect", "--from"])
        .arg(&node)
        .args(["--out", "-"])
        .timeout(limit)
        .assert()
        .success()
        .stderr(predicates::str::contains("fifo.txt: is not a regular file"))
        .stderr(predicates::str::contains("zero.txt: is not a regular file"));
    for args in [&["placement", "--gpus", "0,1"][..], &["model", "fit"][..]] {
        let mut c = wr();
        c.args(&args[..1]);
        if args[0] == "model" {
            c.arg("fit");
        }
        c.arg(node.join("fifo.txt"));
        if args[0] == "placement" {
            c.args(&args[1..]);
        }
        c.timeout(limit)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("is not a regular file"));
    }
    let m = Bare::new("fifo-node");
    let h = m.root.path().join("proc/sys/kernel/hostname");
    std::fs::remove_file(&h).unwrap();
    mkfifo(&h);
    let out = tempfile::tempdir().unwrap();
    m.collect()
        .arg("--out")
        .arg(out.path())
        .timeout(limit)
        .assert()
        .success();
    assert_eq!(bundle_in(out.path()).host.name, "localhost");
}

/// A node folder of links into a shared store is read like the files
/// themselves, and a link loop is a problem, not a hang (before: "no files
/// found").
#[test]
fn symlinked_transcripts_are_followed_without_loops() {
    let d = tempfile::tempdir().unwrap();
    let node = d.path().join("node");
    std::fs::create_dir(&node).unwrap();
    let target = std::fs::canonicalize(TOPO).unwrap();
    std::os::unix::fs::symlink(&target, node.join("topo.txt")).unwrap();
    std::os::unix::fs::symlink(&node, node.join("loop")).unwrap();
    let out = wr()
        .args(["collect", "--from"])
        .arg(&node)
        .args(["--out", "-"])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let b: wire_report::bundle::Bundle = serde_json::from_slice(&out).unwrap();
    assert_eq!(b.transcripts.len(), 1);
    assert_eq!(b.topology.gpus().count(), 8);
}

/// A bundle whose `schema_version` was removed is said to be one, not
/// read as a transcript of an unknown tool.
#[test]
fn a_bundle_without_schema_version_is_named_as_such() {
    let d = tempfile::tempdir().unwrap();
    let out = wr()
        .args(["collect", "--from", TOPO, "--out", "-"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let mut v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    v.as_object_mut().unwrap().remove("schema_version");
    let f = d.path().join("old.json");
    std::fs::write(&f, v.to_string()).unwrap();
    wr().args(["render", "--single-file"])
        .arg(d.path().join("r.html"))
        .arg(&f)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("looks like a wire-report bundle"))
        .stderr(predicates::str::contains("no `schema_version`"));
}

const HOSTILE: &str = "tests/fixtures/hostile";

/// Transcripts with repeated rows (synthetic fixture 14), and a bundle
/// whose lists repeat a key: `diff B B` finds no change, and the repeats
/// are one problem naming the file (before: dozens of changes).
#[test]
fn a_bundle_diffed_with_itself_reports_no_change() {
    let d = tempfile::tempdir().unwrap();
    for name in ["nvlink-plus-q-spliced", "topo-duplicate-rows"] {
        let node = d.path().join(name);
        std::fs::create_dir(&node).unwrap();
        let src = Path::new(HOSTILE)
            .join("14-diff-self-false-positive")
            .join(format!("{name}.txt"));
        std::fs::copy(&src, node.join(format!("{name}.txt"))).unwrap();
        let b = d.path().join(format!("{name}.json"));
        wr().args(["collect", "--from"])
            .arg(&node)
            .arg("--out")
            .arg(&b)
            .assert()
            .success()
            .stderr(predicates::str::contains("repeat a key already present"));
        // The same bundle with its first topology link and PCIe entry
        // written twice, as an older wire-report could have.
        let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&b).unwrap()).unwrap();
        for ptr in ["/topology/links", "/pcie"] {
            let list = v.pointer_mut(ptr).unwrap();
            if let Some(first) = list.as_array().and_then(|a| a.first().cloned()) {
                let mut changed = first.clone();
                if let Some(o) = changed.as_object_mut() {
                    o.insert("code".into(), "SYS".into());
                    o.insert("current_width_lanes".into(), 1.into());
                }
                list.as_array_mut().unwrap().push(changed);
            }
        }
        let doubled = d.path().join(format!("{name}-doubled.json"));
        std::fs::write(&doubled, v.to_string()).unwrap();
        for (x, y) in [(&b, &b), (&doubled, &doubled), (&node, &node)] {
            wr().arg("diff")
                .arg(x)
                .arg(y)
                .assert()
                .success()
                .stdout(predicates::str::starts_with(
                    "0 change(s) for the worse, 0 for the better",
                ));
        }
    }
}

/// A busbw printed as 1e-320 (fixture 05) and a bundle latency of 1.8e308 s
/// (fixture 06): render finishes, and each value is a problem naming its
/// line, left out of the figures (before: plotters' log axis never
/// finished).
#[test]
fn absurd_values_are_problems_not_endless_charts() {
    let d = tempfile::tempdir().unwrap();
    let limit = std::time::Duration::from_secs(60);
    for input in [
        "05-hang-render-denormal-busbw",
        "06-hang-render-bundle-latency/bundle.json",
    ] {
        wr().arg("render")
            .arg(Path::new(HOSTILE).join(input))
            .arg("--single-file")
            .arg(d.path().join("r.html"))
            .timeout(limit)
            .assert()
            .success();
        let html = std::fs::read_to_string(d.path().join("r.html")).unwrap();
        assert!(html.contains("outside what a machine can show"), "{input}");
    }
    wr().args(["collect", "--out", "-", "--from"])
        .arg(Path::new(HOSTILE).join("05-hang-render-denormal-busbw"))
        .timeout(limit)
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "nccl-tests.txt:50: a bandwidth of",
        ))
        .stderr(predicates::str::contains(
            "(printed `1e-320 GB/s`) is outside",
        ));
}

/// Synthetic: a whole-machine `lspci -vvv` of 20000 PCI domains, each a
/// root port, a switch's upstream port and two GPUs below it (80000
/// functions, 20000 switches). Collect and render finish within the
/// guard: before, each switch and each link was checked against every
/// device (a switch-uplink pass of minutes, a PCIe-link pass of hours).
#[test]
fn a_machine_of_thousands_of_pcie_switches_renders_without_a_quadratic_hang() {
    let d = tempfile::tempdir().unwrap();
    let node = d.path().join("many-switches");
    std::fs::create_dir(&node).unwrap();
    let link = "\t\tLnkCap:\tPort #0, Speed 8GT/s, Width x16, ASPM not supported\n\
                \t\tLnkSta:\tSpeed 8GT/s, Width x16\n";
    let mut text = String::new();
    for n in 0..20_000 {
        let dom = format!("{n:05x}");
        text += &format!(
            "{dom}:00:01.0 PCI bridge: Intel Corporation Sky Lake-E PCI Express Root Port A (rev 04)\n\
             \tBus: primary=00, secondary=01, subordinate=02, sec-latency=0\n\
             \tCapabilities: [90] Express (v2) Root Port (Slot+), MSI 00\n{link}\n\
             {dom}:01:00.0 PCI bridge: PLX Technology, Inc. PEX 8747 48-Lane, 5-Port PCI Express Gen 3 (8.0 GT/s) Switch (rev ca)\n\
             \tBus: primary=01, secondary=02, subordinate=02, sec-latency=0\n\
             \tCapabilities: [68] Express (v2) Upstream Port, MSI 00\n{link}\n"
        );
        for f in ["02:00.0", "02:01.0"] {
            text +=
                &format!("{dom}:{f} 3D controller: NVIDIA Corporation GV100GL (rev a1)\n{link}\n");
        }
    }
    std::fs::write(node.join("lspci-vvv.txt"), text).unwrap();
    let limit = std::time::Duration::from_secs(120);
    let out = d.path().join("b");
    wr().args(["collect", "--from"])
        .arg(&node)
        .arg("--out")
        .arg(&out)
        .timeout(limit)
        .assert()
        .success();
    let md = wr()
        .arg("render")
        .arg(out.join("bundle.json"))
        .args(["--format", "md"])
        .timeout(limit)
        .assert()
        .success();
    let md = String::from_utf8_lossy(&md.get_output().stdout).into_owned();
    // One finding per switch (two Gen3 x16 GPUs under a Gen3 x16 uplink).
    assert!(
        md.contains("**Findings** (20000)"),
        "{}",
        &md[..md.len().min(600)]
    );
    assert_eq!(md.matches("PCIe switch with uplink").count(), 20000);
}

/// Synthetic around a real capture: `$ env` printing 100000 variables,
/// then the h100-lmdeploy-1gpu transcript (its 36 lines of check_env,
/// then the topology). The env lines go with the topology's block and
/// are not understood, each found once: before, every one was looked up
/// by a scan of the whole block (over five minutes, debug build).
#[test]
fn a_long_dump_before_a_tool_block_is_accounted_without_a_quadratic_hang() {
    let d = tempfile::tempdir().unwrap();
    let node = d.path().join("env-dump");
    std::fs::create_dir(&node).unwrap();
    let topo = std::fs::read_to_string(
        "captures/h100-lmdeploy-1gpu/nvidia-topo-020-1x-h100-lmdeploy-check-env-embedded.txt",
    )
    .unwrap();
    let mut text = String::from("$ env\n");
    for i in 0..100_000 {
        text += &format!("SOME_ENV_VAR_{i}=value {i}\n");
    }
    text += &topo;
    std::fs::write(node.join("t.txt"), text).unwrap();
    let out = d.path().join("b");
    wr().args(["collect", "--from"])
        .arg(&node)
        .arg("--out")
        .arg(&out)
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .success();
    let b = bundle_in(&out);
    let t = &b.transcripts[0];
    // 100000 variables and check_env's 35 non-blank lines.
    assert_eq!(t.lines.not_understood, 100_035);
    assert_eq!(t.lines.not_understood_lines[0], 2);
    assert_eq!(b.topology.gpus().count(), 1);
}
