//! Header-less fragments, clones and embedded blocks from `captures-wild/`
//! (and the few real transcripts found for the tools added with them):
//! values checked by eye against the transcript line named in each
//! comment.

use std::path::Path;

use wire_report::bundle::Bundle;
use wire_report::evidence::measurement::Direction;
use wire_report::render::answers::answers;

fn node(name: &str) -> Bundle {
    let dir = Path::new("captures").join(name);
    let mut v = wire_report::inputs::ingest(&[dir]).unwrap();
    assert_eq!(v.len(), 1);
    v.remove(0).bundle
}

/// lspci-002: `lspci ... -vvv | grep -E 'LnkCap|LnkSta'` for four
/// ConnectX-7 functions, no device lines. Lines 2/7/12/17 read
/// "LnkCap: Port #0, Speed 32GT/s, Width x16", lines 3/8/13/18
/// "LnkSta: Speed 32GT/s (ok), Width x16 (ok)"; lines 6/11/16/21 are
/// lspci's libkmod warning. Which device each pair belongs to is not
/// stated by the transcript.
#[test]
fn lnk_lines_without_device_headers_read_as_links_of_unstated_devices() {
    let b = node("cx7-4nic-lnk-grep");
    let lines: Vec<usize> = b.pcie.iter().map(|p| p.source.line).collect();
    assert_eq!(lines, vec![2, 7, 12, 17]);
    for p in &b.pcie {
        assert!(p.address.starts_with("unknown #"), "{}", p.address);
        assert!(
            p.name
                .as_deref()
                .unwrap()
                .contains("not stated by the transcript")
        );
        assert_eq!(p.max_speed_gt_per_s, Some(32.0));
        assert_eq!(p.current_speed_gt_per_s, Some(32.0));
        assert_eq!(
            (p.max_width_lanes, p.current_width_lanes),
            (Some(16), Some(16))
        );
        assert!(!p.speed_downgraded && !p.width_downgraded);
    }
    let t = &b.transcripts[0];
    assert_eq!(
        t.blocks[0]
            .command
            .as_deref()
            .map(|c| c.contains("grep -E")),
        Some(true)
    );
    assert_eq!((t.lines.read, t.lines.not_understood), (16, 0));
    let warned: Vec<usize> = t
        .notes
        .iter()
        .filter(|n| n.text.contains("libkmod"))
        .map(|n| n.line)
        .collect();
    assert_eq!(warned, vec![6, 11, 16, 21]);
    assert!(b.problems.is_empty(), "{:?}", b.problems);
}

/// rocm-topo-002: `python3 -m sglang.check_env` in an Apptainer shell; its
/// environment dump (lines 2-39) then rocm-smi's link-type table at lines
/// 42-47: line 45 "GPU0   0   XGMI", line 46 "GPU1   XGMI   0". Line 49
/// (`ulimit soft: 8192`) is the environment dump again, after rocm-smi's
/// end banner.
#[test]
fn rocm_smi_inside_a_longer_log_is_read_from_its_banner() {
    let b = node("mi300a-2apu-apptainer");
    let t = &b.transcripts[0];
    assert_eq!(t.tool.as_str(), "rocm-smi-topo");
    assert_eq!((t.blocks[0].first_line, t.blocks[0].last_line), (42, 49));
    let l = &b.topology.links[0];
    assert_eq!((l.a.as_str(), l.b.as_str()), ("GPU0", "GPU1"));
    assert_eq!(l.code.as_deref(), Some("XGMI"));
    assert_eq!(l.sources[0].line, 45);
    assert!(t.notes.iter().any(|n| n.line == 49));
    // The environment dump is not a tool's output: not understood, listed.
    assert_eq!(t.lines.not_understood_lines, (2..=39).collect::<Vec<_>>());
    assert!(b.problems.is_empty(), "{:?}", b.problems);
}

/// dcgmi-nvlink-001 (NVIDIA/dcgm-exporter#576): lines 7, 9, ... 21 each
/// "U U U ... U" (18 letters) under `gpuId 0:` ... `gpuId 7:` (lines 6,
/// 8, ... 20). dcgmi-nvlink-002 (NVIDIA/DCGM#198): 18 `D` per GPU for
/// gpuId 0 (line 6) and 1 (line 8).
#[test]
fn dcgmi_nvlink_status_reads_every_link_letter() {
    let b = node("h100-8gpu-dcgmi-nvlink-up");
    assert_eq!(b.transcripts[0].tool.as_str(), "dcgmi-nvlink");
    assert_eq!(b.topology.devices.len(), 8);
    assert_eq!(b.topology.devices[7].source.line, 20);
    assert_eq!(b.topology.nvlink.len(), 8 * 18);
    assert!(b.topology.nvlink.iter().all(|p| p.active));
    let last = b.topology.nvlink.last().unwrap();
    assert_eq!(
        (last.gpu.as_str(), last.link, last.source.line),
        ("GPU7", Some(17), 21)
    );
    assert!(last.rate_bytes_per_s.is_none(), "dcgmi prints no rate");
    let b = node("dcgmi-2gpu-nvlink-down");
    assert_eq!(b.topology.nvlink.len(), 2 * 18);
    assert!(
        b.topology
            .nvlink
            .iter()
            .all(|p| !p.active && p.as_printed == "D (down)")
    );
    assert_eq!(b.topology.nvlink[18].source.line, 9);
    assert_eq!(b.transcripts[0].lines.not_understood, 0);
}

fn cell<'a>(
    b: &'a Bundle,
    line: usize,
    src: &str,
    dst: &str,
) -> Vec<&'a wire_report::evidence::measurement::Measurement> {
    b.measurements
        .iter()
        .filter(|m| {
            m.source.line == line && m.src.as_deref() == Some(src) && m.dst.as_deref() == Some(dst)
        })
        .collect()
}

/// transferbench-002 (scaling preset, cut): line 3 "- Copying 67108864
/// bytes from GPU 0 to other devices"; line 7 (1 CU) "14.11 14.02 20.30
/// 20.25 20.17 20.38" for CPU00 CPU01 GPU00 GPU01 GPU02 GPU03; line 18 (12
/// CUs) ends "33.43 33.49 32.55"; line 19 "13  13.10" is cut after one
/// value.
#[test]
fn transferbench_scaling_preset_reads_every_complete_row() {
    let b = node("transferbench-scaling-preset");
    assert_eq!(b.measurements.len(), 12 * 6);
    let m = cell(&b, 7, "GPU0", "CPU0")[0];
    assert_eq!(m.bandwidth_bytes_per_s, Some(14.11e9));
    assert_eq!(m.size_bytes, Some(67_108_864));
    assert_eq!(m.kind.as_str(), "d2h");
    let m = cell(&b, 7, "GPU0", "GPU0")[0];
    assert_eq!(
        (m.kind.as_str(), m.as_printed.as_str()),
        ("d2d", "20.30 GB/s")
    );
    let m = cell(&b, 18, "GPU0", "GPU3")[0];
    assert_eq!(
        (m.kind.as_str(), m.as_printed.as_str()),
        ("p2p-copy", "32.55 GB/s")
    );
    assert!(answers(m)[4].contains("12 CU(s) of GPU0"));
    let cut: Vec<(Option<usize>, String)> = b
        .problems
        .iter()
        .map(|p| (p.line, format!("{:?}", p.kind)))
        .collect();
    assert_eq!(cut, vec![(Some(19), "Truncated".to_string())]);
}

/// transferbench-005 (p2p preset, MI350X): line 6 "CPU 00 -> 92.21
/// 102.51 45.11 ..."; line 9 "GPU 00 -> ... 2132.28 57.39" (GPU0 to
/// itself, to GPU1); bidirectional GPU 03 rows at lines 43-45: to GPU 06
/// "38.96" (->), "40.37" (<-, GPU6 to GPU3), "79.33" (<->, their sum, noted). The
/// diagonal of the bidirectional table is N/A (not run): no cell.
#[test]
fn transferbench_p2p_preset_reads_both_tables_with_their_directions() {
    let b = node("mi350x-8gpu-transferbench-p2p");
    assert_eq!(b.measurements.len(), 100 + 10 * 2 * 9);
    let m = cell(&b, 6, "CPU0", "CPU1")[0];
    assert_eq!(
        (m.kind.as_str(), m.bandwidth_bytes_per_s),
        ("h2h", Some(102.51e9))
    );
    assert_eq!(m.size_bytes, Some(268_435_456));
    let m = cell(&b, 9, "GPU0", "GPU0")[0];
    assert_eq!(
        (m.kind.as_str(), m.as_printed.as_str()),
        ("d2d", "2132.28 GB/s")
    );
    assert_eq!(cell(&b, 9, "GPU0", "GPU1")[0].as_printed, "57.39 GB/s");
    let there = cell(&b, 43, "GPU3", "GPU6")[0];
    assert_eq!(
        (there.as_printed.as_str(), there.direction),
        ("38.96 GB/s", Direction::Uni)
    );
    let back = cell(&b, 44, "GPU6", "GPU3")[0];
    assert_eq!(back.as_printed, "40.37 GB/s");
    assert!(answers(back)[6].contains("reverse copy"));
    // The `<->` row is the two above added (TransferBench's `sumBw`):
    // noted, not a cell of its own.
    assert!(cell(&b, 45, "GPU3", "GPU6").is_empty());
    assert!(b.transcripts[0].notes.iter().any(|n| n.line == 45));
    assert!(cell(&b, 43, "GPU3", "GPU3").is_empty());
    assert!(b.problems.is_empty(), "{:?}", b.problems);
}

/// osu-002: an OSU bandwidth table without its title line (`# OSU MPI
/// Bandwidth Test` or `... Bi-Directional Bandwidth Test`): osu_bw and
/// osu_bibw print the same columns, so the direction is not stated, in
/// the cell and in its answer.
#[test]
fn an_untitled_osu_bandwidth_table_states_no_direction() {
    let b = node("osu-bw-rdma-fragment");
    assert!(!b.measurements.is_empty());
    for m in &b.measurements {
        assert_eq!(m.direction, Direction::NotStated, "line {}", m.source.line);
        assert!(answers(m)[1].starts_with("not stated by the transcript"));
    }
}

/// other-002: `ppu-smi topo -mp` for 16 PPUs in the order PPU0 PPU2 ...
/// PPU14 PPU1 ... PPU15 (line 1); every row ends "0-1,64-65  0" (lines
/// 2-17). Its link codes use nvidia-smi's words but SYS joins PPUs that
/// all report NUMA node 0, so they are noted, not read; the rear groups
/// (lines 23-24) are noted.
#[test]
fn ppu_smi_clone_reads_devices_and_affinity_not_its_link_codes() {
    let b = node("ppu-16-topo");
    assert_eq!(b.transcripts[0].tool.as_str(), "ppu-smi-topo");
    let ids: Vec<&str> = b.topology.devices.iter().map(|d| d.id.as_str()).collect();
    // In device order; each keeps the line it was printed on.
    assert_eq!(ids[..3], ["PPU0", "PPU1", "PPU2"]);
    assert_eq!(b.topology.devices[1].source.line, 10);
    assert_eq!(b.topology.devices.len(), 16);
    let last = &b.topology.devices[15];
    assert_eq!((last.id.as_str(), last.source.line), ("PPU15", 17));
    for d in &b.topology.devices {
        assert_eq!(d.numa_node, Some(0));
        let cpus: Vec<(u32, u32)> = d
            .cpu_affinity
            .iter()
            .flatten()
            .map(|r| (r.first, r.last))
            .collect();
        assert_eq!(cpus, vec![(0, 1), (64, 65)]);
    }
    assert!(b.topology.links.is_empty(), "link codes are not read");
    let notes: Vec<usize> = b.transcripts[0].notes.iter().map(|n| n.line).collect();
    assert!(
        notes.contains(&19) && notes.contains(&23) && notes.contains(&24),
        "{notes:?}"
    );
    assert_eq!(b.transcripts[0].lines.not_understood, 0);
}

/// h100-lmdeploy-1gpu: `lmdeploy check_env` prints 36 lines of Python and
/// build facts (lines 1-36) before `NVIDIA Topology:` and the one-row
/// matrix (lines 37-38). That text goes with the matrix's block, but no
/// fact comes from it: it is listed as not understood, not counted read
/// (line 29 is blank).
#[test]
fn text_read_along_with_a_block_counts_only_where_a_fact_cites_it() {
    let b = node("h100-lmdeploy-1gpu");
    let t = &b.transcripts[0];
    let expected: Vec<usize> = (1..=36).filter(|&l| l != 29).collect();
    assert_eq!(t.lines.not_understood_lines, expected);
    assert_eq!(b.topology.gpus().count(), 1);
}

/// a100-gdr-pod-client: perftest prints 9 lines before its title (its
/// cuda_memory.c). Two of them give the run's context, which its parser reads:
/// `initializing CUDA` (line 1) and `[pid = 38, dev = 0] device name =
/// [NVIDIA A100-SXM4-80GB]` (line 5, the GPU on every row's path). They
/// count as read. The other 7 (device listing, context creation, the
/// buffer's address) carry nothing it reads: skipped as the tool's own,
/// none of them "not understood".
#[test]
fn perftest_setup_lines_before_its_title_are_read_or_skipped_as_its_own() {
    let b = node("a100-gdr-pod-client");
    let t = b
        .transcripts
        .iter()
        .find(|t| t.path.contains("perftest-bw-010"))
        .unwrap();
    assert!(t.lines.not_understood_lines.iter().all(|&l| l > 9));
    let own = t
        .lines
        .skipped_by_reason
        .iter()
        .find(|(r, _)| r.contains("the tool's own setup line"))
        .map(|x| x.1);
    assert_eq!(own, Some(7));
    let path = format!("{:?}", b.measurements[0].questions.path);
    assert!(path.contains("A100-SXM4-80GB"), "{path}");
}
