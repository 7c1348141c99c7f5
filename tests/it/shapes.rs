//! Issue 30's paste shapes that used to defeat the reader, each on a real
//! capture (its source in `captures/SOURCES.tsv`). Where a test wraps,
//! prefixes or cuts a real capture the way people paste it, the wrapping
//! is a SYNTHETIC edit and the test says so.

use wire_report::bundle::ProblemKind;
use wire_report::ingest::{Reading, read_transcript};

const IBSTAT: &str = "captures/h100-8nic-ndr400/ibstat-006-h100-cx7-ndr400-ib-all-active.txt";
const DEVINFO: &str = "captures/mlx4-cx3-heioy/ibv-devinfo-003-mlx4-cx3-two-hcas-tabs.txt";
const AMD_SMI: &str =
    "captures/mi300x-8gpu-amdsmi/amd-smi-topology-001-mi300x-8gpu-full-bdf-tables.txt";

fn text(path: &str) -> String {
    let t = std::fs::read_to_string(path).unwrap();
    t.lines().map(|l| format!("{l}\n")).collect()
}

fn read(path: &str, text: &str) -> Reading {
    read_transcript(path, text.as_bytes())
}

/// The facts a reading holds, as `(kind, line)` pairs: adapters and
/// ports, devices, links (by their ends).
fn facts(r: &Reading) -> Vec<String> {
    let mut out: Vec<String> = r
        .rdma
        .iter()
        .flat_map(|d| {
            std::iter::once(format!("adapter {} {}", d.name, d.source.line)).chain(
                d.ports
                    .iter()
                    .map(move |p| format!("port {} {} {}", d.name, p.port, p.source.line)),
            )
        })
        .collect();
    out.extend(
        r.topology
            .devices
            .iter()
            .map(|d| format!("device {} {}", d.id, d.source.line)),
    );
    out.extend(
        r.topology
            .links
            .iter()
            .map(|l| format!("link {}-{} {:?}", l.a, l.b, l.code)),
    );
    out.extend(
        r.measurements
            .iter()
            .map(|m| format!("cell {} {}", m.source.line, m.as_printed)),
    );
    out
}

fn shifted(r: &Reading, by: usize) -> Vec<String> {
    let mut r = r.clone();
    for d in &mut r.rdma {
        d.source.line += by;
        for p in &mut d.ports {
            p.source.line += by;
        }
    }
    for d in &mut r.topology.devices {
        d.source.line += by;
    }
    for m in &mut r.measurements {
        m.source.line += by;
    }
    facts(&r)
}

fn problems(r: &Reading) -> Vec<(Option<usize>, ProblemKind)> {
    r.problems.iter().map(|p| (p.line, p.kind)).collect()
}

fn problems_shifted(r: &Reading, by: usize) -> Vec<(Option<usize>, ProblemKind)> {
    r.problems
        .iter()
        .map(|p| (p.line.map(|l| l + by), p.kind))
        .collect()
}

/// SYNTHETIC wrapping of real captures: each in a code fence with a
/// question after it, as a ticket holds it.
#[test]
fn a_closing_fence_ends_the_block_and_the_prose_after_it_is_not_understood() {
    for path in [IBSTAT, DEVINFO, AMD_SMI] {
        let t = text(path);
        let alone = read(path, &t);
        assert!(!facts(&alone).is_empty(), "{path}");
        let n = t.lines().count();
        let pasted = format!("My output:\n```\n{t}```\nAny idea? Thanks!\n");
        let r = read(path, &pasted);
        assert_eq!(facts(&r), shifted(&alone, 2), "{path}");
        assert_eq!(problems(&r), problems_shifted(&alone, 2), "{path}");
        let lines = &r.transcript.as_ref().unwrap().lines;
        // The label before the fence and the question after it.
        assert_eq!(lines.not_understood_lines, [1, n + 4], "{path}");
    }
}

/// SYNTHETIC tail on real captures: a sentence typed right after the
/// output, no fence. The block is read; the sentence is one row not
/// understood (a problem at its line), never a rejection of the block.
#[test]
fn a_stray_last_line_is_not_understood_and_the_block_is_still_read() {
    for path in [IBSTAT, DEVINFO, AMD_SMI] {
        let t = text(path);
        let alone = read(path, &t);
        let n = t.lines().count();
        let r = read(path, &format!("{t}Any idea?\n"));
        assert_eq!(facts(&r), facts(&alone), "{path}");
        let lines = &r.transcript.as_ref().unwrap().lines;
        assert!(lines.not_understood_lines.contains(&(n + 1)), "{path}");
        assert!(
            r.problems
                .iter()
                .all(|p| p.kind != ProblemKind::Parse || p.line == Some(n + 1)),
            "{path}: {:?}",
            r.problems
        );
    }
}

/// SYNTHETIC quoting of a real capture: a mail reader's `>>>` (three
/// levels, no spaces) and six levels of `> `.
#[test]
fn mail_quoting_without_spaces_and_six_levels_of_quotes_come_off() {
    for path in [IBSTAT, DEVINFO, AMD_SMI] {
        let t = text(path);
        let alone = read(path, &t);
        for quote in [">>>", "> > > > > > ", ">>> ", ">\t"] {
            let q: String = t.lines().map(|l| format!("{quote}{l}\n")).collect();
            let r = read(path, &q);
            assert_eq!(facts(&r), facts(&alone), "{path} {quote:?}");
            assert_eq!(problems(&r), problems(&alone), "{path} {quote:?}");
        }
    }
}

const TOPO: &str =
    "captures/a100-sxm4-8gpu-4socket-3nic/nvidia-topo-003-a100-sxm4-40gb-4socket-3nic.txt";

/// SYNTHETIC prefixes on real captures: pdsh's and clush's `host: ` on
/// every line (after the command line, which has none), and a `% `
/// comment mark on every line.
#[test]
fn a_host_label_or_a_comment_mark_on_every_line_comes_off() {
    for path in [IBSTAT, DEVINFO, AMD_SMI, TOPO] {
        let t = text(path);
        let alone = read(path, &t);
        let pdsh: String = t.lines().map(|l| format!("gpu-node-07: {l}\n")).collect();
        let r = read(path, &format!("$ pdsh -w gpu-node-07 cat out.txt\n{pdsh}"));
        assert_eq!(facts(&r), shifted(&alone, 1), "{path} pdsh");
        let pct: String = t
            .lines()
            .map(|l| {
                if l.is_empty() {
                    "%\n".into()
                } else {
                    format!("% {l}\n")
                }
            })
            .collect();
        let r = read(path, &pct);
        assert_eq!(facts(&r), facts(&alone), "{path} %");
        assert_eq!(problems(&r), problems(&alone), "{path} %");
    }
    // A field name at the margin on one line of many is no host label.
    let mlx4 = "captures/mlx4-cx3-heioy/ibstat-003-mlx4-port-query-ca-colon-no-indent.txt";
    assert!(!read(mlx4, &text(mlx4)).rdma.is_empty());
}

/// SYNTHETIC joins of real captures of one machine (an RTX 2080 Ti pair,
/// five RTX 5060 Ti): `topo -m` then `topo -p2p p` pasted back to back
/// with no command line between them are two tables, each read as it is
/// alone; and the other way round.
#[test]
fn topo_m_and_topo_p2p_back_to_back_are_two_tables() {
    for dir in ["rtx2080ti-2gpu-autodl", "rtx5060ti-5gpu-epyc"] {
        let file = |prefix: &str| {
            std::fs::read_dir(format!("captures/{dir}"))
                .unwrap()
                .flatten()
                .map(|e| e.path().display().to_string())
                .find(|p| p.contains(prefix))
                .unwrap()
        };
        let (m, p2p) = (file("/nvidia-topo-"), file("/nvidia-p2p-status-"));
        let (tm, tp) = (text(&m), text(&p2p));
        let (rm, rp) = (read(&m, &tm), read(&p2p, &tp));
        for (first, second, a, b) in [(&tm, &tp, &rm, &rp), (&tp, &tm, &rp, &rm)] {
            let r = read(&m, &format!("{first}{second}"));
            let tools: Vec<&str> = r
                .transcript
                .iter()
                .flat_map(|t| &t.blocks)
                .map(|b| b.tool.as_str())
                .collect();
            let want: Vec<&str> = [a, b]
                .iter()
                .map(|x| x.transcript.as_ref().unwrap().tool.as_str())
                .collect();
            assert_eq!(tools, want, "{dir}");
            // A GPU both tables name is one device (kept at its first
            // line); every link of either table is there.
            let ids = |x: &Reading| -> Vec<String> {
                let mut v: Vec<String> = x.topology.devices.iter().map(|d| d.id.clone()).collect();
                v.extend(
                    x.topology
                        .links
                        .iter()
                        .map(|l| format!("{}-{} {:?}", l.a, l.b, l.code)),
                );
                v
            };
            let mut both = ids(a);
            both.extend(ids(b));
            let mut got = ids(&r);
            both.sort();
            got.sort();
            both.dedup();
            assert_eq!(got, both, "{dir}");
        }
    }
}

/// SYNTHETIC: a real `topo -m` capture as vim shows it with `:set list`
/// and `listchars=tab:→\ ` (each tab an arrow and the blanks to the next
/// tab stop), copied from the terminal: the same matrix.
#[test]
fn tabs_drawn_as_vim_listchars_arrows_are_tabs_again() {
    let path = "captures/rtx-a6000-3gpu-nvlink-bridge/nvidia-topo-006-3x-rtx-a6000-nvlink-bridge-pair-tabs.txt";
    let t = text(path);
    assert!(t.contains('\t'));
    let drawn: String = t
        .lines()
        .map(|l| {
            let mut s = String::new();
            let mut col = 0;
            for c in l.chars() {
                if c == '\t' {
                    let w = 8 - col % 8;
                    s.push('→');
                    s.push_str(&" ".repeat(w - 1));
                    col += w;
                } else {
                    s.push(c);
                    col += 1;
                }
            }
            s + "\n"
        })
        .collect();
    let alone = read(path, &t);
    let r = read(path, &drawn);
    assert_eq!(facts(&r), facts(&alone));
    assert_eq!(problems(&r), problems(&alone));
    assert_eq!(r.topology.links.len(), 3);
}

const LSMOD: &str = "captures/nv18-8gpu-6nic-peermem-nccl1737/lsmod-001-grep-nvidia-peermem-loaded-8x-nv18-gh-3714u15.txt";

/// SYNTHETIC join of real captures: five tools' outputs and then the rows
/// of `lsmod | grep nvidia` (its prompt line taken off) in one fence with
/// no prompt between them, a question after it: six blocks, each tool's
/// facts as it has them alone, the module listing included.
#[test]
fn many_outputs_in_one_fence_with_no_prompts_are_each_read_lsmod_rows_last() {
    let parts = [
        IBSTAT,
        DEVINFO,
        TOPO,
        "captures/a100-sxm4-8gpu-superbench/nccl-tests-001-allreduce-perf-8xA100-sxm4-40gb.txt",
        "captures/a100-sxm4-1gpu/nvbandwidth-003-v0.8-a100-single-gpu-h2d-sm-bdf-in-device-line.txt",
    ];
    let mut pasted = String::from("```\n");
    let mut want = Vec::new();
    let mut at = 1;
    for p in parts {
        let t = text(p);
        want.extend(shifted(&read(p, &t), at));
        at += t.lines().count();
        pasted.push_str(&t);
    }
    let rows: String = text(LSMOD)
        .lines()
        .skip(1)
        .map(|l| format!("{l}\n"))
        .collect();
    pasted.push_str(&rows);
    pasted.push_str("```\nWhy is GPUDirect RDMA not used?\n");
    let r = read("pasted.txt", &pasted);
    let tools: Vec<&str> = r
        .transcript
        .iter()
        .flat_map(|t| &t.blocks)
        .map(|b| b.tool.as_str())
        .collect();
    assert_eq!(
        tools,
        [
            "ibstat",
            "ibv-devinfo",
            "nvidia-smi-topo",
            "nccl-tests",
            "nvbandwidth",
            "lsmod"
        ]
    );
    let mut got = facts(&r);
    got.sort();
    want.sort();
    assert_eq!(got, want);
    assert_eq!(r.modules.len(), 1);
    let peermem = r.modules[0]
        .rows
        .iter()
        .find(|m| m.name == "nvidia_peermem");
    assert_eq!(peermem.map(|m| m.source.line), Some(at + 4));
    // Only the question after the fence is not understood.
    let lines = &r.transcript.as_ref().unwrap().lines;
    assert_eq!(lines.not_understood_lines, [at + 10]);
}

/// SYNTHETIC edit of a real `grep -E 'LnkCap|LnkSta'` loop over four
/// ConnectX-7s: each device's `Lnk` lines after the bare bus id a loop
/// echoes (`for d in ...; do echo $d; lspci -s $d -vvv | grep Lnk; done`),
/// with and without the domain. Each link is named by its bus id; the
/// same capture without ids still reads as links of unstated devices.
#[test]
fn a_lnk_grep_loop_with_bare_bus_ids_names_each_link() {
    let path = "captures/cx7-4nic-lnk-grep/lspci-002-4x-cx7-grep-lnkcap-lnksta-only-no-device-headers-libkmod.txt";
    let t = text(path);
    let ids = [
        "0000:1a:00.0",
        "0000:3c:00.0",
        "0000:4d:00.0",
        "0000:5e:00.0",
    ];
    for domain in [true, false] {
        let mut k = 0;
        let mut edited = String::new();
        for l in t.lines().skip(1).filter(|l| !l.starts_with("lspci:")) {
            if l.trim_start().starts_with("LnkCap:") {
                let id = if domain { ids[k] } else { &ids[k][5..] };
                edited.push_str(id);
                edited.push('\n');
                k += 1;
            }
            edited.push_str(l);
            edited.push('\n');
        }
        let r = read(path, &edited);
        let got: Vec<(&str, Option<u32>, usize)> = r
            .pcie
            .iter()
            .map(|p| (p.address.as_str(), p.current_width_lanes, p.source.line))
            .collect();
        let want: Vec<(&str, Option<u32>, usize)> = (0..4)
            .map(|i| {
                let id = if domain { ids[i] } else { &ids[i][5..] };
                (id, Some(16), 2 + 5 * i)
            })
            .collect();
        assert_eq!(got, want, "domain {domain}");
        let lines = &r.transcript.as_ref().unwrap().lines;
        assert_eq!(lines.not_understood, 0);
    }
    let alone = read(path, &t);
    assert_eq!(alone.pcie.len(), 4);
    assert!(
        alone
            .pcie
            .iter()
            .all(|p| p.address.starts_with("unknown #"))
    );
}

/// SYNTHETIC cut of a real `topo -m` (8 A100s, 3 NICs): its rows pasted
/// without the header line, with the legend and without it. The columns
/// are the rows' devices in order (the matrix is square), so every device,
/// link and affinity is read, and a note says the header was implied.
#[test]
fn topo_m_rows_without_their_header_read_as_the_whole_matrix() {
    let t = text(TOPO);
    let alone = read(TOPO, &t);
    let rows: String = t.lines().skip(1).map(|l| format!("{l}\n")).collect();
    let no_legend: String = rows
        .lines()
        .take_while(|l| !l.starts_with("Legend"))
        .map(|l| format!("{l}\n"))
        .collect();
    for cut in [rows, no_legend] {
        let r = read(TOPO, &cut);
        assert_eq!(shifted(&r, 1), facts(&alone));
        let affinity = |r: &Reading| -> Vec<String> {
            r.topology
                .devices
                .iter()
                .map(|d| format!("{} {:?} {:?}", d.id, d.cpu_affinity, d.numa_node))
                .collect()
        };
        assert_eq!(affinity(&r), affinity(&alone));
        let notes = &r.transcript.as_ref().unwrap().notes;
        assert!(
            notes
                .iter()
                .any(|n| n.line == 1 && n.text.contains("no header line"))
        );
    }
}

/// Real (hustcat/k8s-rdma-device-plugin issue #8): `ibv_devinfo` in a
/// container given one VF of eight, its one device between eight of its
/// own `Failed to open device` lines at the margin. The device is read;
/// those lines are the tool's own messages, skipped, not read.
#[test]
fn ibv_devinfo_between_its_failed_to_open_device_lines_reads_the_device() {
    let path =
        "captures/mlx4-vf-k8s-container/ibv-devinfo-011-mlx4-vf-failed-to-open-device-lines.txt";
    let r = read(path, &text(path));
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    assert_eq!(r.rdma.len(), 1);
    let d = &r.rdma[0];
    assert_eq!((d.name.as_str(), d.source.line), ("mlx4_2", 6));
    assert_eq!(d.ports.len(), 1);
    assert_eq!(d.ports[0].link_layer.as_deref(), Some("InfiniBand"));
    let lines = &r.transcript.as_ref().unwrap().lines;
    assert_eq!(lines.not_understood, 0);
    let own = lines
        .skipped_by_reason
        .iter()
        .find(|(why, _)| why.contains("could not open"));
    assert_eq!(own.map(|x| x.1), Some(8));
}
