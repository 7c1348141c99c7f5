//! `--redact` leaves nothing that names a machine or a person, in any
//! output of any command: a SYNTHETIC node whose transcripts carry known
//! secrets (host, peer, user, IPv4, IPv6, MAC, GUIDs, GIDs in every form,
//! a GPU serial and UUID, an lspci serial number; built here as
//! `hostile/turn3/03-redact-leaks/gen.sh` builds it) and real captures
//! (a prompt `vyl@csegpu1` and a peer `csegpu2`, GUIDs, UUIDs, addresses)
//! go through `render` (site, single file, markdown), `collect --from` and
//! a live `collect`; every file written and every file name is searched
//! for every original value. Nothing is over-redacted either: each redacted
//! node's verdict, findings and checks equal the plain one's.

use std::path::{Path, PathBuf};

use crate::common::wr;
use wire_report::bundle::Bundle;

/// The secrets of the synthetic node (as gen.sh names them).
const SYNTHETIC: &[&str] = &[
    "synthetic",
    "secrethost-a17",
    "peerhost-b22",
    "alice",
    "10.77.66.55",
    "255:255:10:77:66:56",
    "fd00:abcd:1234",
    "0c:42:a1:de:ad:01",
    "0e:42:a1:ff:fe:de:ad:01",
    "0e42:a1ff:fede:ad01",
    "0a4d:4237",
    "0c-42-a1-ff-ff-de-ad-01",
    "0c42a10300deadbe",
    "0c42:a103:00de:adbf",
    "1320121054321",
    "8f3e2a1b-1234-5678-9abc-def012345678",
];

/// Real captures and secrets known to be in them (each bundle's typed
/// secrets are added: GUIDs, GIDs, UUIDs, NCCL hosts).
const REAL: &[(&str, &[&str])] = &[
    ("cx7-ndr-ib-read", &["vyl", "csegpu1", "csegpu2"]),
    ("h100-8nic-ndr400", &["58a2e10300a7820e"]),
    ("rtx4060ti-2gpu", &["5fd2f5bb-12a1-ad58-a590-2f48aa312d92"]),
    ("roce-cx5-proxmox", &["192.168.6.132"]),
    ("h100-roce-moc", &["169.254.103.56"]),
];

/// The first file of `captures/<node>/` whose name starts with `prefix`.
fn capture(node: &str, prefix: &str) -> String {
    let dir = Path::new("captures").join(node);
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    names.sort();
    std::fs::read_to_string(&names[0]).unwrap()
}

/// SYNTHETIC: gen.sh's node, in `<root>/synthetic/`.
fn synthetic(root: &Path) -> PathBuf {
    let (h, u, ip4, ip6, mac) = (
        "secrethost-a17",
        "alice",
        "10.77.66.55",
        "fd00:abcd:1234::55",
        "0c:42:a1:de:ad:01",
    );
    let n = root.join("synthetic");
    std::fs::create_dir_all(&n).unwrap();
    let put = |name: &str, text: String| std::fs::write(n.join(name), text).unwrap();
    let smi = capture("rtx4060ti-2gpu", "nvidia-smi-q-001")
        .replacen(
            "Serial Number                         : N/A",
            "Serial Number                         : 1320121054321",
            1,
        )
        .replace(
            "GPU-5fd2f5bb-12a1-ad58-a590-2f48aa312d92",
            "GPU-8f3e2a1b-1234-5678-9abc-def012345678",
        );
    put("smi-q.txt", format!("{u}@{h}:~$ nvidia-smi -q\n{smi}"));
    put(
        "ibstat.txt",
        capture("h100-8nic-ndr400", "ibstat-006")
            .replace("0x58a2e10300a7820e", "0x0c42a10300deadbe"),
    );
    put(
        "devinfo.txt",
        capture("cx6-hdr-gpu1-no-peermem-ucx9908", "ibv-devinfo-010")
            .replace("88e9:a4ff:ff25:a462", "0c42:a103:00de:adbf")
            .replace(
                "fe80:0000:0000:0000:0c42:a103:00de:adbf",
                "fe80:0000:0000:0000:0e42:a1ff:fede:ad01",
            ),
    );
    put(
        "gids.txt",
        format!(
            "# show_gids\nDEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n\
             ---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\n\
             mlx5_0\t1\t0\tfe80:0000:0000:0000:0e42:a1ff:fede:ad01\t\t\tv2\teth-{h}\n\
             mlx5_0\t1\t1\t0000:0000:0000:0000:0000:ffff:0a4d:4237\t{ip4}  \tv2\teth-{h}\n\
             mlx5_0\t1\t2\tfd00:abcd:1234:0000:0000:0000:0000:0055\t\t\tv2\teth-{h}\n\
             n_gids_found=3\n"
        ),
    );
    let nccl = capture("a100-sxm4-8gpu-superbench", "nccl-tests-001")
        .replace(" on localhost ", &format!(" on {h} "));
    put(
        &format!("nccl-{h}-{ip4}.txt"),
        format!(
            "{u}@{h}:~/nccl-tests$ mpirun -H {h},peerhost-b22 ./build/all_reduce_perf -b 8 -e 1G\n\
             {h}:112424:112424 [0] NCCL INFO Bootstrap : Using eth0:{ip4}<0>\n\
             {h}:112424:112424 [0] NCCL INFO NET/Socket : Using [0]eth0:{ip4}<0> [1]eth1:[{ip6}]<0>\n\
             {h}:112424:112424 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [MAC {mac}] ; OOB eth0:{ip4}<0>\n\
             {nccl}"
        ),
    );
    let mut perf = format!("{u}@{h}:~$ ib_write_bw -d mlx5_0 -x 3 --report_gbits peerhost-b22\n");
    for l in capture("cx7-ndr-ib-read", "perftest-bw-002").lines() {
        perf.push_str(
            &l.replace("vyl@csegpu1", &format!("{u}@{h}"))
                .replace("csegpu2", "peerhost-b22"),
        );
        perf.push('\n');
        if l.starts_with(" local address:") {
            perf.push_str(" GID: fe:80:00:00:00:00:00:00:0e:42:a1:ff:fe:de:ad:01\n");
        }
        if l.starts_with(" remote address:") {
            perf.push_str(" GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:77:66:56\n");
        }
    }
    put("perftest.txt", perf);
    put(
        "lspci.txt",
        capture("supermicro-x11dpg-ot-pex8747", "lspci-005").replace(
            "Device Serial Number ...",
            "Device Serial Number 0c-42-a1-ff-ff-de-ad-01",
        ),
    );
    put(
        &format!("ip-addr-{h}-{u}.txt"),
        format!(
            "2: eth0: <BROADCAST> mtu 9000\n    link/ether {mac} brd ff:ff:ff:ff:ff:ff\n    inet {ip4}/24\n    inet6 {ip6}/64\n"
        ),
    );
    n
}

/// The secrets a bundle's typed fields hold: its name, GUIDs, GIDs,
/// UUIDs, the hosts NCCL names.
fn typed_secrets(b: &Bundle) -> Vec<String> {
    let mut out = vec![b.host.name.clone()];
    for d in &b.rdma {
        out.extend(d.node_guid.iter().cloned());
        for p in &d.ports {
            out.extend(p.port_guid.iter().cloned());
            let gids = p.gids.iter().map(|g| g.gid.clone());
            out.extend(gids.filter(|g| g.chars().any(|c| c.is_ascii_hexdigit() && c != '0')));
        }
    }
    out.extend(b.topology.devices.iter().filter_map(|d| d.uuid.clone()));
    for n in &b.nccl {
        out.extend(n.devices.iter().filter_map(|d| d.host.clone()));
        out.extend(n.paths.iter().filter_map(|p| p.host.clone()));
    }
    out.retain(|s| s != "localhost");
    out.into_iter()
        .map(|s| s.trim_start_matches("0x").to_lowercase())
        .collect()
}

/// Every file under `dir` (or `dir` itself), with its path relative to
/// `dir` and its text.
fn files(dir: &Path) -> Vec<(String, String)> {
    if dir.is_file() {
        let text = String::from_utf8_lossy(&std::fs::read(dir).unwrap()).into_owned();
        return vec![(
            dir.file_name().unwrap().to_string_lossy().into_owned(),
            text,
        )];
    }
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            let text = String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).into_owned();
            (rel, text)
        })
        .collect()
}

/// Every place a secret is left in what `what` wrote to `out`: names and
/// contents, compared in lower case.
fn leaks(what: &str, out: &Path, secrets: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for (rel, text) in files(out) {
        let (rel_l, text_l) = (rel.to_lowercase(), text.to_lowercase());
        for s in secrets {
            if rel_l.contains(s.as_str()) {
                found.push(format!("{what}: `{s}` in the name {rel}"));
            }
            if let Some(i) = text_l.find(s.as_str()) {
                let boundary = |k: &usize| text_l.is_char_boundary(*k);
                let at = (0..=i.saturating_sub(40)).rev().find(boundary).unwrap_or(0);
                let end = ((i + s.len() + 20).min(text_l.len())..=text_l.len())
                    .find(boundary)
                    .unwrap_or(text_l.len());
                found.push(format!("{what}: `{s}` in {rel}: …{}…", &text_l[at..end]));
            }
        }
    }
    found
}

/// What a render says of a node: verdict, counts, checks, finding kinds.
fn verdicts(b: &Bundle) -> String {
    let s = wire_report::render::render_node(b, "n".into(), None, false)
        .unwrap()
        .summary;
    format!(
        "{} {} | {} {} {} | {} | {} | {} {} | {:?} | {}",
        s.verdict,
        s.verdict_class,
        s.critical,
        s.warning,
        s.info,
        s.coverage,
        s.missing,
        s.gpus,
        s.nics,
        s.kinds,
        s.problems
    )
}

#[test]
fn redaction_leaves_no_secret_in_any_output_of_any_command_and_keeps_the_verdicts() {
    let d = tempfile::tempdir().unwrap();
    let node = synthetic(d.path());
    let mut inputs = vec![node.clone()];
    inputs.extend(REAL.iter().map(|(n, _)| Path::new("captures").join(n)));
    // Every secret: the synthetic ones, the known real ones, and each
    // plain bundle's typed ones.
    let plain = wire_report::inputs::load_nodes(&inputs).unwrap();
    let mut secrets: Vec<String> = SYNTHETIC.iter().map(|s| s.to_string()).collect();
    secrets.extend(
        REAL.iter()
            .flat_map(|(n, s)| std::iter::once(*n).chain(s.iter().copied()))
            .map(str::to_lowercase),
    );
    for b in &plain {
        secrets.extend(typed_secrets(b));
    }
    secrets.sort();
    secrets.dedup();
    assert!(secrets.len() > 40, "{secrets:?}");
    // Every original value is there to leak: the plain outputs hold each.
    let plain_out = d.path().join("plain");
    wr().arg("collect")
        .arg("--quiet")
        .arg("--from")
        .args(&inputs)
        .arg("--out")
        .arg(&plain_out)
        .assert()
        .success();
    let plain_text: String = files(&plain_out)
        .into_iter()
        .map(|(r, t)| r + &t)
        .collect::<String>()
        .to_lowercase();
    for s in &secrets {
        assert!(
            plain_text.contains(s.as_str()),
            "`{s}` is not in the plain bundles"
        );
    }

    let out = |name: &str| d.path().join(name);
    wr().arg("render")
        .args(&inputs)
        .arg("--redact")
        .arg("--out")
        .arg(out("site"))
        .assert()
        .success();
    wr().arg("render")
        .args(&inputs)
        .arg("--redact")
        .arg("--single-file")
        .arg(out("single.html"))
        .assert()
        .success();
    wr().arg("render")
        .args(&inputs)
        .args(["--redact", "--format", "md", "--out"])
        .arg(out("summary.md"))
        .assert()
        .success();
    wr().arg("collect")
        .arg("--quiet")
        .arg("--redact")
        .arg("--from")
        .args(&inputs)
        .arg("--out")
        .arg(out("bundles"))
        .assert()
        .success();
    // The synthetic node alone into one bundle file.
    wr().args(["collect", "--quiet", "--redact", "--from"])
        .arg(&node)
        .arg("--out")
        .arg(out("one.json"))
        .assert()
        .success();
    // A redacted bundle renders again, without --redact.
    wr().arg("render")
        .arg(out("bundles"))
        .arg("--out")
        .arg(out("site-again"))
        .assert()
        .success();

    let mut found = Vec::new();
    for what in [
        "site",
        "single.html",
        "summary.md",
        "bundles",
        "one.json",
        "site-again",
    ] {
        found.extend(leaks(what, &out(what), &secrets));
    }
    assert!(
        found.is_empty(),
        "{} leaks:\n{}",
        found.len(),
        found.join("\n")
    );

    // Not over-redacted: each node's verdict, checks and findings as
    // before; bus ids, device names, models survive.
    let redacted = wire_report::inputs::load_nodes(&[out("bundles")]).unwrap();
    assert_eq!(redacted.len(), plain.len());
    let mut names: Vec<String> = redacted.iter().map(|b| b.host.name.clone()).collect();
    names.sort();
    assert_eq!(
        names,
        ["host-1", "host-2", "host-3", "host-4", "host-5", "host-6"]
    );
    for (p, r) in plain.iter().zip(&redacted) {
        assert_eq!(
            verdicts(p),
            verdicts(r),
            "{} as {}",
            p.host.name,
            r.host.name
        );
    }
    let text = std::fs::read_to_string(out("summary.md")).unwrap();
    for kept in [
        "mlx5_0",
        "0000:",
        "A100-SXM4-40GB",
        "RTX 4060 Ti",
        "Connection type : RC",
    ] {
        assert!(
            text.contains(kept) || files(&out("bundles")).iter().any(|(_, t)| t.contains(kept)),
            "`{kept}` was redacted"
        );
    }
}

fn fake_tool(dir: &Path, name: &str, body: &str) {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, format!("{text}\n")).unwrap();
}

#[test]
fn live_redaction_names_the_folder_by_the_placeholder_and_leaves_no_secret() {
    let d = tempfile::tempdir().unwrap();
    let node = synthetic(d.path());
    // A machine named secrethost-a17 whose tools print the synthetic
    // transcripts (saved beside the bundle: they are redacted too).
    let sys = d.path().join("sys");
    write(&sys, "proc/sys/kernel/hostname", "secrethost-a17");
    write(
        &sys,
        "sys/class/infiniband/mlx5_0/node_guid",
        "0c42:a103:00de:adbe",
    );
    write(
        &sys,
        "sys/class/infiniband/mlx5_0/ports/1/state",
        "4: ACTIVE",
    );
    let bin = d.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let cat = |f: &str| {
        format!(
            "cat '{}'",
            std::fs::canonicalize(node.join(f)).unwrap().display()
        )
    };
    fake_tool(&bin, "ibv_devinfo", &cat("devinfo.txt"));
    fake_tool(&bin, "ibstat", &cat("ibstat.txt"));
    fake_tool(&bin, "lspci", &cat("lspci.txt"));
    fake_tool(
        &bin,
        "nvidia-smi",
        &format!(
            "case \"$*\" in *-q*) {};; *) exit 1;; esac",
            cat("smi-q.txt")
        ),
    );
    let out = d.path().join("out");
    wr().env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .args([
            "collect",
            "--quiet",
            "--no-sweep",
            "--redact",
            "--sysfs-root",
        ])
        .arg(&sys)
        .arg("--out")
        .arg(out.join("{host}"))
        .assert()
        .success();
    // `{host}` is the placeholder.
    let made: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(made, ["host-1"]);
    let all = files(&out);
    assert!(all.len() > 2, "{all:?}");
    let b: Bundle =
        serde_json::from_str(&std::fs::read_to_string(out.join("host-1/bundle.json")).unwrap())
            .unwrap();
    assert!(b.system.as_ref().unwrap().redacted);
    assert!(!b.rdma.is_empty() && !b.transcripts.is_empty());
    let secrets: Vec<String> = SYNTHETIC[1..].iter().map(|s| s.to_string()).collect();
    let found = leaks("live collect", &out, &secrets);
    assert!(
        found.is_empty(),
        "{} leaks:\n{}",
        found.len(),
        found.join("\n")
    );
}

/// Every shipped capture redacted in one run (one numbering, as `render
/// captures --redact` does it) keeps its verdict, checks and findings.
#[test]
fn redacting_every_shipped_capture_keeps_every_verdict() {
    let plain = wire_report::inputs::load_nodes(&[PathBuf::from("captures")]).unwrap();
    assert!(plain.len() > 100);
    let mut r = wire_report::bundle::redact::Redactor::new();
    for b in &plain {
        r.host(&b.host.name);
    }
    for p in &plain {
        let mut b = p.clone();
        r.redact(&mut b, &mut []).unwrap();
        assert!(b.host.name.starts_with("host-"), "{}", b.host.name);
        assert_eq!(
            verdicts(p),
            verdicts(&b),
            "{} as {}",
            p.host.name,
            b.host.name
        );
    }
}
