//! Parsers that recover: one damaged row of a real capture is a problem
//! naming its line (the original file's), and every other row is read.
//! Each damage is a SYNTHETIC edit of a real capture (named in the test);
//! the values asserted were checked by eye against the capture's lines.

use wire_report::bundle::ProblemKind;
use wire_report::ingest::{Reading, read_transcript};

/// The real capture at `path` with line `n` (1-based) replaced by
/// `damage`: a synthetic edit, read as a user would feed it.
fn damaged(path: &str, edits: &[(usize, &str)]) -> Reading {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = String::new();
    for (i, l) in text.lines().enumerate() {
        match edits.iter().find(|e| e.0 == i + 1) {
            Some((_, d)) => out.push_str(d),
            None => out.push_str(l),
        }
        out.push('\n');
    }
    read_transcript(path, out.as_bytes())
}

/// The cells read from line `n`, as printed.
fn cells_at(r: &Reading, n: usize) -> Vec<String> {
    r.measurements
        .iter()
        .filter(|m| m.source.line == n)
        .map(|m| m.as_printed.to_string())
        .collect()
}

/// The problems at line `n`: kind and message.
fn problems_at(r: &Reading, n: usize) -> Vec<(ProblemKind, String)> {
    r.problems
        .iter()
        .filter(|p| p.line == Some(n))
        .map(|p| (p.kind, p.message.clone()))
        .collect()
}

/// Lines with a problem of kind `Parse` (a row not read, or in part).
fn unreadable_lines(r: &Reading) -> Vec<usize> {
    r.problems
        .iter()
        .filter(|p| p.kind == ProblemKind::Parse)
        .filter_map(|p| p.line)
        .collect()
}

#[test]
fn nccl_tests_keeps_the_rows_around_a_glued_and_a_short_row() {
    // Synthetic edits of a real capture: line 30 glues the out-of-place
    // time and algbw (`35.910.23`), line 40 is cut after its algbw.
    let path =
        "captures/a100-sxm4-8gpu-superbench/nccl-tests-001-allreduce-perf-8xA100-sxm4-40gb.txt";
    let r = damaged(
        path,
        &[
            (
                30,
                "        8192          2048   float     sum    35.910.23    0.40    N/A    36.07    0.23    0.40    N/A",
            ),
            (
                40,
                "     8388608       2097152   float     sum    162.0   51.79",
            ),
        ],
    );
    assert!(r.transcript.is_some(), "{:?}", r.problems);
    // Line 29 and 31 as printed (checked by eye): 4096 B and 16384 B.
    assert_eq!(
        cells_at(&r, 29),
        [
            "0.11 GB/s",
            "0.20 GB/s",
            "35.92 us",
            "0.11 GB/s",
            "0.20 GB/s",
            "36.11 us"
        ]
    );
    assert_eq!(cells_at(&r, 31).len(), 6);
    // The glued pair loses its two cells; the busbw and in-place half stay.
    assert_eq!(
        cells_at(&r, 30),
        ["0.40 GB/s", "0.23 GB/s", "0.40 GB/s", "36.07 us"]
    );
    let p30 = problems_at(&r, 30);
    assert_eq!(p30.len(), 2, "{p30:?}");
    assert!(p30[0].1.contains("`35.910.23`"), "{p30:?}");
    // The short row is named; 8 MiB rows before and after are read.
    assert!(cells_at(&r, 40).is_empty());
    assert_eq!(
        problems_at(&r, 40),
        [(
            ProblemKind::Parse,
            "nccl-tests: expected size, count, type, [redop], [root] and 8 timing columns; found 6 values".to_string()
        )]
    );
    assert_eq!(cells_at(&r, 39)[0], "37.44 GB/s");
    assert_eq!(cells_at(&r, 41)[0], "74.23 GB/s");
    // The trailer is still read: `# Avg bus bandwidth    : 68.4048`.
    assert_eq!(cells_at(&r, 52), ["68.4048 GB/s"]);
    assert_eq!(unreadable_lines(&r), [30, 30, 40]);
    // The line accounting names them as not understood.
    let lines = &r.transcript.as_ref().unwrap().lines;
    assert_eq!(lines.not_understood_lines, [30, 40]);
}

#[test]
fn rocm_bandwidth_test_keeps_the_rows_around_a_glued_row_and_a_short_size_row() {
    // Synthetic edit of a real capture: in the unidirectional peak matrix,
    // row 2 (line 60) has its cells for columns 4 and 5 glued together.
    let path =
        "captures/mi210-4gpu-archer2/rocm-bandwidth-test-001-mi210-4gpu-4numa-archer2-uni-bidi.txt";
    let r = damaged(
        path,
        &[(
            60,
            "2         N/A         N/A         N/A         N/A         26.97726.977      26.975      26.975",
        )],
    );
    assert!(r.transcript.is_some(), "{:?}", r.problems);
    // Rows 1 and 3 as printed (lines 58 and 62, checked by eye).
    assert_eq!(
        cells_at(&r, 58),
        ["26.977 GB/s", "26.975 GB/s", "26.975 GB/s", "26.975 GB/s"]
    );
    assert_eq!(
        cells_at(&r, 62),
        ["26.975 GB/s", "26.977 GB/s", "26.975 GB/s", "26.977 GB/s"]
    );
    // Row 2 keeps columns 6 and 7; the glued pair is lost, named twice.
    assert_eq!(cells_at(&r, 60), ["26.975 GB/s", "26.975 GB/s"]);
    assert_eq!(unreadable_lines(&r), [60, 60]);
    assert!(problems_at(&r, 60)[0].1.contains("`26.97726.977`"));

    // Synthetic edit of another real capture: the 4 MB row of a size
    // table (line 24) lost its peak column.
    let path = "captures/amd-instinct-8gpu-sweep/rocm-bandwidth-test-004-v2.6.0-s0-d4-unidir-per-size-cpu-to-gpu.txt";
    let r = damaged(
        path,
        &[(24, "4 MB          153.201        27.378         152.641")],
    );
    assert_eq!(unreadable_lines(&r), [24]);
    assert!(cells_at(&r, 24).is_empty());
    // 2 MB and 8 MB (lines 23 and 25) are read; the sweep reaches 512 MB
    // (line 31), so nothing is flagged as cut.
    assert_eq!(cells_at(&r, 23).len(), 4);
    assert!(cells_at(&r, 23).contains(&"26.749 GB/s".to_string()));
    assert!(cells_at(&r, 25).contains(&"27.996 GB/s".to_string()));
    assert!(cells_at(&r, 31).contains(&"28.675 GB/s".to_string()));
    assert!(
        r.problems.iter().all(|p| p.kind != ProblemKind::Truncated),
        "{:?}",
        r.problems
    );
}

#[test]
fn p2p_bandwidth_latency_test_loses_a_garbled_cell_not_its_row() {
    // Synthetic edits of a real capture: line 31 has `5.9O` (a letter O),
    // line 37 glues GPU1's diagonal to its next cell (`832.005.90`).
    let path = "captures/rtx3090-4gpu/p2pBandwidthLatencyTest-003-4x-rtx3090-no-p2p-tabs-expanded-no-trailing-note.txt";
    let r = damaged(
        path,
        &[
            (31, "     1   5.9O 829.35   5.89   5.89"),
            (37, "     1   5.90 832.005.90   5.89"),
        ],
    );
    assert!(r.transcript.is_some(), "{:?}", r.problems);
    // As printed on lines 30, 32, 36 and 38 (checked by eye).
    assert_eq!(
        cells_at(&r, 30),
        ["831.56 GB/s", "5.90 GB/s", "5.89 GB/s", "5.89 GB/s"]
    );
    assert_eq!(cells_at(&r, 31), ["829.35 GB/s", "5.89 GB/s", "5.89 GB/s"]);
    assert_eq!(cells_at(&r, 32).len(), 4);
    assert_eq!(cells_at(&r, 37), ["5.90 GB/s", "5.89 GB/s"]);
    assert_eq!(
        cells_at(&r, 38),
        ["5.90 GB/s", "5.90 GB/s", "831.12 GB/s", "5.90 GB/s"]
    );
    assert_eq!(unreadable_lines(&r), [31, 37, 37]);
    assert!(problems_at(&r, 31)[0].1.contains("`5.9O`"));
    // The matrices after them are read: line 45, the last bidirectional row.
    assert_eq!(cells_at(&r, 45)[3], "835.74 GB/s");
}

#[test]
fn osu_keeps_the_rows_around_a_glued_row() {
    // Synthetic edit of a real capture: the 4096-byte row (line 19) has
    // its bandwidth glued to its validation (`3844.87Pass`).
    let path =
        "captures/gh200-cscs/osu-004-osu-bibw-cuda-v7.5-validation-gh200-mpich-libnl-stderr.txt";
    let r = damaged(path, &[(19, "4096                 3844.87Pass")]);
    assert!(r.transcript.is_some(), "{:?}", r.problems);
    assert!(cells_at(&r, 19).is_empty());
    assert_eq!(
        problems_at(&r, 19),
        [(
            ProblemKind::Parse,
            "osu: expected 3 columns (size, value, validation), found 2".to_string()
        )]
    );
    // Lines 18 and 20 as printed (checked by eye), and the last row.
    assert_eq!(cells_at(&r, 18), ["2019.51 MB/s"]);
    assert_eq!(cells_at(&r, 20), ["6123.96 MB/s"]);
    assert_eq!(cells_at(&r, 29), ["46437.18 MB/s"]);
    assert_eq!(unreadable_lines(&r), [19]);
    // The sweep reaches 4194304 bytes: not cut.
    assert!(r.problems.iter().all(|p| p.kind != ProblemKind::Truncated));
    // Cut after line 25 (a synthetic cut of the same capture): flagged.
    let text = std::fs::read_to_string(path).unwrap();
    let cut: String = text.lines().take(25).map(|l| format!("{l}\n")).collect();
    let r = read_transcript(path, cut.as_bytes());
    assert_eq!(
        problems_at(&r, 25),
        [(
            ProblemKind::Truncated,
            "cut after line 25: the sizes of `OSU MPI-CUDA Bi-Directional Bandwidth Test v7.5` above 262144 bytes (the default sweep ends at 4194304) not in the transcript".to_string()
        )]
    );
}

#[test]
fn nvbandwidth_loses_a_short_row_and_a_garbled_cell_not_the_matrix() {
    // Synthetic edits of a real capture: row 2 (line 25) lost its last
    // two values, row 5 (line 28) has `371.O2` (a letter O).
    let path =
        "captures/h100-8gpu-azure-ndv5/nvbandwidth-001-v0.4-8x-h100-azure-ndv5-d2d-read-ce.txt";
    let r = damaged(
        path,
        &[
            (
                25,
                "2    372.05    370.90       N/A    370.90    372.96    370.38",
            ),
            (
                28,
                "5    371.O2    370.51    371.92    372.18    370.90       N/A    372.05    370.90",
            ),
        ],
    );
    assert!(r.transcript.is_some(), "{:?}", r.problems);
    assert!(cells_at(&r, 25).is_empty());
    assert_eq!(
        problems_at(&r, 25),
        [(
            ProblemKind::Parse,
            "nvbandwidth: expected 8 values after row 2, found 6".to_string()
        )]
    );
    // Row 5 keeps its six other numbers (the diagonal is N/A).
    assert_eq!(
        cells_at(&r, 28),
        [
            "370.51 GB/s",
            "371.92 GB/s",
            "372.18 GB/s",
            "370.90 GB/s",
            "372.05 GB/s",
            "370.90 GB/s"
        ]
    );
    // Rows 1, 3 and 7 as printed (lines 24, 26, 30; checked by eye).
    assert_eq!(cells_at(&r, 24)[0], "370.90 GB/s");
    assert_eq!(cells_at(&r, 26).len(), 7);
    assert_eq!(cells_at(&r, 30)[6], "370.90 GB/s");
    // The SUM line after the matrix is read, and nothing is cut.
    assert_eq!(cells_at(&r, 32), ["20785.58 GB/s"]);
    assert_eq!(unreadable_lines(&r), [25, 28]);
    assert!(r.problems.iter().all(|p| p.kind != ProblemKind::Truncated));
}

#[test]
fn transferbench_a2a_loses_a_glued_pair_and_a_bad_row_not_the_matrix() {
    // Synthetic edits of a real capture: GPU 02's row (line 6) glues its
    // GPU 06 and GPU 07 cells; GPU 05's label (line 9) is garbled.
    let path =
        "captures/mi350x-8gpu/transferbench-004-a2a-summary-8xMI350X-stotal-rtotal-truncated.txt";
    let r = damaged(
        path,
        &[
            (
                6,
                "GPU 02   51.088     53.446        N/A     51.342     50.888     51.300     51.23451.445       360.743     356.218",
            ),
            (
                9,
                "GPU O5   51.185     50.992     51.319     50.922     51.126        N/A     53.104     51.351       359.999     356.455",
            ),
        ],
    );
    assert!(r.transcript.is_some(), "{:?}", r.problems);
    // Row GPU 02 keeps columns 0, 1, 3, 4, 5 (checked by eye); the STotal
    // after the glued pair is not read as a GPU 07 cell.
    assert_eq!(
        cells_at(&r, 6),
        [
            "51.088 GB/s",
            "53.446 GB/s",
            "51.342 GB/s",
            "50.888 GB/s",
            "51.300 GB/s"
        ]
    );
    assert!(cells_at(&r, 9).is_empty());
    assert_eq!(unreadable_lines(&r), [6, 6, 9]);
    assert_eq!(
        problems_at(&r, 9),
        [(
            ProblemKind::Parse,
            "TransferBench: expected a GPU number after `GPU`".to_string()
        )]
    );
    // Rows GPU 01, 03, 04, 06 and 07 as printed (lines 5, 7, 8, 10, 11).
    assert_eq!(cells_at(&r, 5)[0], "51.083 GB/s");
    assert_eq!(cells_at(&r, 7)[0], "52.899 GB/s");
    assert_eq!(cells_at(&r, 8).len(), 7);
    assert_eq!(cells_at(&r, 10)[5], "53.114 GB/s");
    assert_eq!(cells_at(&r, 11)[6], "50.978 GB/s");
}

/// The link between `a` and `b` (either order): its code and class.
fn link(r: &Reading, a: &str, b: &str) -> Option<(Option<String>, String)> {
    r.topology
        .links
        .iter()
        .find(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a))
        .map(|l| (l.code.clone(), format!("{:?}", l.class)))
}

#[test]
fn nvidia_smi_topo_cut_after_five_rows_keeps_them_and_flags_the_cut() {
    // Synthetic cut of a real capture after GPU4's row (line 6), the
    // issue's "topo matrix cut after 5 rows".
    let path =
        "captures/a100-sxm4-8gpu-4socket-3nic/nvidia-topo-003-a100-sxm4-40gb-4socket-3nic.txt";
    let text = std::fs::read_to_string(path).unwrap();
    let cut: String = text.lines().take(6).map(|l| format!("{l}\n")).collect();
    let r = read_transcript(path, cut.as_bytes());
    assert!(r.transcript.is_some(), "{:?}", r.problems);
    // Every device the header names is kept; those whose rows were cut
    // are known by the header (line 1) alone, with no affinity.
    let devs: Vec<(&str, usize)> = r
        .topology
        .devices
        .iter()
        .map(|d| (d.id.as_str(), d.source.line))
        .collect();
    assert_eq!(
        devs,
        [
            ("GPU0", 2),
            ("GPU1", 3),
            ("GPU2", 4),
            ("GPU3", 5),
            ("GPU4", 6),
            ("GPU5", 1),
            ("GPU6", 1),
            ("GPU7", 1),
            ("NIC0", 1),
            ("NIC1", 1),
            ("NIC2", 1)
        ]
    );
    assert_eq!(r.topology.devices[5].numa_node, None);
    // As printed (checked by eye): GPU0-GPU4 NV12; GPU2 on NUMA 1 with
    // CPUs 20-39,100-119 (line 4). The five rows read tell their pairs
    // with the cut devices too: GPU0-NIC0 PXB (line 2), GPU2-NIC1 NODE
    // and GPU3-NIC2 PXB (lines 4, 5), GPU4-GPU7 NV12 (line 6); the pairs
    // among the cut devices are not told.
    assert_eq!(link(&r, "GPU0", "GPU4").unwrap().0.as_deref(), Some("NV12"));
    assert_eq!(link(&r, "GPU0", "NIC0").unwrap().0.as_deref(), Some("PXB"));
    assert_eq!(link(&r, "GPU2", "NIC1").unwrap().0.as_deref(), Some("NODE"));
    assert_eq!(link(&r, "GPU3", "NIC2").unwrap().0.as_deref(), Some("PXB"));
    assert_eq!(link(&r, "GPU4", "GPU7").unwrap().0.as_deref(), Some("NV12"));
    assert!(link(&r, "GPU5", "NIC0").is_none());
    // 10 pairs among the five rows, 5 x 6 with the cut devices.
    assert_eq!(r.topology.links.len(), 40);
    let gpu2 = &r.topology.devices[2];
    assert_eq!((gpu2.numa_node, gpu2.source.line), (Some(1), 4));
    assert_eq!(
        problems_at(&r, 6),
        [(
            ProblemKind::Truncated,
            "cut after line 6: rows GPU5..NIC2 of the topology matrix not in the transcript"
                .to_string()
        )]
    );
    // Cut mid-row: GPU5's row stops after three cells (line 7).
    let cut = format!("{cut}GPU5    NV12    NV12    NV12\n");
    let r = read_transcript(path, cut.as_bytes());
    assert_eq!(r.topology.devices.len(), 11);
    assert_eq!(r.topology.links.len(), 40);
    assert_eq!(unreadable_lines(&r), [7]);
    assert!(
        problems_at(&r, 7)
            .iter()
            .any(|p| p.0 == ProblemKind::Truncated
                && p.1.starts_with("cut after line 7: rows GPU5..NIC2"))
    );
}

#[test]
fn nvidia_smi_topo_keeps_a_row_whose_affinity_is_garbled() {
    // Synthetic edit of a real capture: GPU3's CPU affinity (line 5) reads
    // `20-39,1OO-119` (letters O).
    let path =
        "captures/a100-sxm4-8gpu-4socket-3nic/nvidia-topo-003-a100-sxm4-40gb-4socket-3nic.txt";
    let r = damaged(
        path,
        &[(
            5,
            "GPU3    NV12    NV12    NV12     X      NV12    NV12    NV12    NV12    SYS     NODE    PXB     20-39,1OO-119   1",
        )],
    );
    assert!(r.transcript.is_some(), "{:?}", r.problems);
    assert_eq!(r.topology.devices.len(), 11);
    assert_eq!(unreadable_lines(&r), [5]);
    assert!(problems_at(&r, 5)[0].1.contains("`20-39,1OO-119`"));
    // Its links are read; GPU3-NIC2 is PXB as printed on line 5 and 12.
    assert_eq!(link(&r, "GPU3", "NIC2").unwrap().0.as_deref(), Some("PXB"));
    assert_eq!(r.topology.devices[4].numa_node, Some(2));
}

#[test]
fn rocm_smi_and_amd_smi_lose_a_garbled_cell_not_the_table() {
    // Synthetic edits of a real capture: GPU1's weight to GPU2 reads
    // `l5` (line 8), GPU2's NUMA line is garbled (line 31).
    let path = "captures/mi300a-4apu/rocm-topo-001-mi300a-4apu-xgmi.txt";
    let r = damaged(
        path,
        &[
            (
                8,
                "GPU1   15           0            l5           15           ",
            ),
            (31, "GPU[2]\t\t: (Topology) Numa Node: two"),
        ],
    );
    assert!(r.transcript.is_some(), "{:?}", r.problems);
    assert_eq!(unreadable_lines(&r), [8, 31]);
    assert_eq!(r.topology.devices.len(), 4);
    // GPU1-GPU2 keeps its hops and link type (XGMI, line 22).
    assert_eq!(link(&r, "GPU1", "GPU2").unwrap().0.as_deref(), Some("XGMI"));
    // GPU3 on NUMA 3 (line 33), GPU2's node not read.
    assert_eq!(r.topology.devices[3].numa_node, Some(3));
    assert_eq!(r.topology.devices[2].numa_node, None);

    // amd-smi: one cell of the ACCESS table (line 5) garbled.
    let path = "captures/mi300x-8gpu-amdsmi/amd-smi-topology-001-mi300x-8gpu-full-bdf-tables.txt";
    let r = damaged(
        path,
        &[(
            5,
            "0000:38:00.0 ENABLED      ENABLED      ENABLED      ENAB1ED      ENABLED      ENABLED      ENABLED      ENABLED",
        )],
    );
    assert!(r.transcript.is_some(), "{:?}", r.problems);
    assert_eq!(unreadable_lines(&r), [5]);
    assert_eq!(r.topology.devices.len(), 8);
    // 8 x 7 access cells less the garbled one.
    assert_eq!(r.topology.p2p.len(), 55);
}

#[test]
fn rocm_smi_filtered_view_reads_gpu_index_as_a_label() {
    // Synthetic: the real capture's Numa Nodes section (lines 26-35 of
    // rocm-topo-001) as `rocm-smi -d 2 --showtoponuma` prints it, GPU 2 only.
    let text = "============================ ROCm System Management Interface ============================\n\
======================================= Numa Nodes =======================================\n\
GPU[2]\t\t: (Topology) Numa Node: 2\n\
GPU[2]\t\t: (Topology) Numa Affinity: 2\n\
================================== End of ROCm SMI Log ===================================\n";
    let r = read_transcript("synthetic-rocm-smi-d2.txt", text.as_bytes());
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let d = &r.topology.devices;
    assert_eq!(d.len(), 1);
    assert_eq!(
        (d[0].id.as_str(), d[0].numa_node, d[0].source.line),
        ("GPU2", Some(2), 3)
    );
}

#[test]
fn nvidia_smi_topo_keeps_the_matrix_around_a_short_row() {
    // Synthetic edit of a real capture: GPU2's row (line 4) lost all but
    // two of its cells.
    let path =
        "captures/a100-sxm4-8gpu-4socket-3nic/nvidia-topo-003-a100-sxm4-40gb-4socket-3nic.txt";
    let r = damaged(path, &[(4, "GPU2    NV12    NV12")]);
    assert!(r.transcript.is_some(), "{:?}", r.problems);
    assert_eq!(unreadable_lines(&r), [4]);
    assert_eq!(r.topology.devices.len(), 11);
    // GPU2's pairs are told by the other rows (checked by eye): NV12 to
    // GPU0 (line 2), PXB to NIC2 (line 12), NODE to NIC1 (line 11).
    assert_eq!(link(&r, "GPU0", "GPU2").unwrap().0.as_deref(), Some("NV12"));
    assert_eq!(link(&r, "GPU2", "NIC2").unwrap().0.as_deref(), Some("PXB"));
    assert_eq!(link(&r, "GPU2", "NIC1").unwrap().0.as_deref(), Some("NODE"));
    let l = r
        .topology
        .links
        .iter()
        .find(|l| l.a == "GPU2" && l.b == "NIC2")
        .unwrap();
    assert_eq!(l.sources.iter().map(|s| s.line).collect::<Vec<_>>(), [12]);
    // GPU3's affinity (line 5) is still read; GPU2 has none.
    assert_eq!(r.topology.devices[3].numa_node, Some(1));
    assert_eq!(r.topology.devices[2].numa_node, None);
}
