//! Captures their authors cut short: each one SOURCES.tsv calls cut is
//! flagged `truncated` at the line where it stops, or is listed with the
//! reason no parser can tell. Every capture here is real and unedited.

use wire_report::bundle::ProblemKind;
use wire_report::ingest::read_transcript;

/// The captures whose SOURCES.tsv line says they were cut (TRUNCATED,
/// "cut", "elided", "snip"), and how each is flagged: a `truncated`
/// problem at a line, its message's start. Values checked by eye against
/// each capture's last (or first) lines.
const CUT: &[(&str, usize, &str)] = &[
    // NCCL logs cut inside their last line: its prefix without a
    // message, or a channel line before its `via`.
    (
        "nccl-info-001-p2p-ipc-read",
        18,
        "the log stops inside an NCCL line",
    ),
    (
        "nccl-info-002-init-complete",
        10,
        "the log stops inside an NCCL line",
    ),
    (
        "nccl-info-004-python-logging",
        13,
        "the log stops inside an NCCL line",
    ),
    (
        "nccl-info-006-p2p-direct-pointer",
        13,
        "the log stops inside an NCCL line",
    ),
    (
        "nccl-info-010-nccl-2.4.7",
        17,
        "the log stops inside an NCCL line",
    ),
    (
        "nccl-info-012-h800",
        17,
        "the log stops inside an NCCL line",
    ),
    (
        "nccl-info-013-p2p-direct-pointer",
        16,
        "the log stops inside an NCCL line",
    ),
    (
        "nccl-info-014-mpirun",
        16,
        "the log stops inside an NCCL line",
    ),
    ("nccl-info-015-efa", 19, "the log stops inside an NCCL line"),
    (
        "nccl-info-016-rccl",
        15,
        "the log stops inside an NCCL line",
    ),
    (
        "nccl-info-008-2.29.2",
        17,
        "the log stops inside an NCCL line",
    ),
    // nccl-tests run cut above its rows (NCCL's lines read too).
    ("nccl-info-005-h20", 13, "the results table has no rows"),
    // NCCL #814 as the search index kept it: the three unidirectional
    // matrices whole, then only the bidirectional staged matrix's header.
    (
        "p2pBandwidthLatencyTest-007-6gpu",
        28,
        "cut after line 28: rows 0..5 of `Bidirectional P2P=Disabled",
    ),
    (
        "p2pBandwidthLatencyTest-008-6gpu",
        28,
        "cut after line 28: rows 0..5 of `Bidirectional P2P=Disabled",
    ),
    (
        "bandwidthTest-003-p100-pcie",
        20,
        "the paste stops inside a table header",
    ),
    (
        "ibstat-008-ibstatus-h20-roce",
        34,
        "the last port block lacks state, rate or link_layer",
    ),
    (
        "nvidia-p2p-status-004-5x-rtx5060ti",
        10,
        "cut after line 10: the rest of the legend (its `U` line)",
    ),
    (
        "nvidia-topo-021-8x-nv18",
        5,
        "cut after line 5: rows GPU3..NIC5 of the topology matrix",
    ),
    (
        "nvidia-topo-018-4x-h100",
        16,
        "cut after line 16: the rest of the legend (its `NV#` line)",
    ),
    (
        "nvlink-status-006-gb200",
        23,
        "cut at line 23 by whoever captured it (`...`)",
    ),
    (
        "rocm-topo-009-4gpu-pcie",
        23,
        "cut after line 23: the rest of rocm-smi's output",
    ),
    (
        "rocm-topo-010-mi250x",
        11,
        "cut after line 11: the rest of rocm-smi's output",
    ),
    (
        "amd-smi-topology-003-mi300x",
        21,
        "cut after line 21: the tables after WEIGHT TABLE",
    ),
    (
        "p2pBandwidthLatencyTest-004-4gpu",
        1,
        "cut before line 1: the test's banner",
    ),
    (
        "p2pBandwidthLatencyTest-006-8x-h100",
        22,
        "cut after line 22: rows 0..7 of",
    ),
    (
        "p2pBandwidthLatencyTest-006-8x-h100",
        1,
        "cut before line 1: the test's banner",
    ),
    ("nvbandwidth-006-v0.2", 36, "cut after line 36: the rows of"),
    (
        "transferbench-004-a2a",
        1,
        "cut before line 1: TransferBench's banner",
    ),
    (
        "nccl-tests-012-rccl",
        59,
        "cut after line 59: the rest of the run",
    ),
    (
        "nvidia-smi-q-001-2x-rtx4060ti",
        84,
        "`Attached GPUs : 2` (line 8) but the capture shows 1",
    ),
    (
        "nvidia-smi-q-003-maxwell",
        1,
        "the capture starts inside a GPU's PCI block",
    ),
    (
        "nccl-tests-006-all-reduce-gb200",
        2,
        "the table's column header is not in the transcript",
    ),
    // Search-index excerpts of nccl-tests tables that stop after a row:
    // the run's end (and its `Avg bus bandwidth`) is not there.
    (
        "nccl-tests-014-broadcast-2node-v100",
        17,
        "cut after line 17: the rest of the run",
    ),
    (
        "nccl-tests-016-nccl1-all-reduce-test",
        12,
        "cut after line 12: the rest of the run",
    ),
    (
        "nvbandwidth-002-h100-sm",
        9,
        "cut after line 9: the rest of test",
    ),
    (
        "nvlink-status-002-dgx1",
        11,
        "cut at line 11 by whoever captured it (`[snip]`)",
    ),
    (
        "osu-002-osu-bw",
        1,
        "cut before line 1: the `# OSU MPI ... Test` title line",
    ),
    // A collective's sweep kept to 1 KiB (the default goes to 1 MiB).
    (
        "osu-005-osu-reduce",
        16,
        "cut after line 16: the sizes of `OSU MPI-CUDA Reduce Latency Test v7.3` above 1024 bytes",
    ),
    (
        "p2pBandwidthLatencyTest-002-8x-k80",
        1,
        "cut before line 1: the test's banner",
    ),
    (
        "rocm-bandwidth-test-002-v2.6.0-2x-radeon",
        38,
        "cut after line 38: rows 1..2 of",
    ),
    (
        "transferbench-002-v1.3x-scaling",
        19,
        "the 13-CU row is cut after 1 of 6 values",
    ),
    (
        "lspci-007-vmd-domain-10000",
        4,
        "cut at line 4 by whoever captured it (`...`)",
    ),
    (
        "ethtool-S-001-cx4lx",
        25,
        "the paste stops inside a counter row",
    ),
    // numactl that promises more nodes than it shows; counter dumps
    // that stop inside a row or a name.
    (
        "numactl-004-8-nodes",
        3,
        "numactl: 8 nodes available, 4 shown",
    ),
    (
        "rdma-counters-003-perfquery",
        25,
        "counters: the paste ends mid-row",
    ),
    (
        "rdma-counters-004-grep-s",
        12,
        "counters: the paste ends mid-row",
    ),
    (
        "rdma-counters-005-cd-printf",
        41,
        "counters: the paste ends mid-row",
    ),
];

/// Cut captures no parser can tell are cut, and why.
const CUT_NOT_DETECTABLE: &[(&str, &str)] = &[
    // NCCL logs whose last line, cut, still reads as a line: a bare
    // word (`sh9-machine-...-64df4c`, `localRa`), an Init line without
    // its end (not read: no `Init COMPLETE`), a `via` cut to
    // `SHM/direct/d` (read: its transport is whole).
    (
        "nccl-info-003-nvls",
        "the last Init line is cut before its end",
    ),
    ("nccl-info-007-shm", "cut inside the host name: a bare word"),
    (
        "nccl-info-011-shm",
        "cut inside the via, after its transport",
    ),
    (
        "nccl-info-017-bare",
        "bare lines: the last is a word of one",
    ),
    (
        "nccl-info-018-ib-disabled",
        "cut after `comm`: a message of its own",
    ),
    // A `grep prio` paste cut after a whole row: nothing in the rows says
    // more followed (the Before reading, longer, is not a rule).
    (
        "ethtool-S-001-mlx5-prio-before-after",
        "cut after a whole row of a grep",
    ),
    // Two complete runs; nvbandwidth does not print how many it will run
    // (the author left out the later ones).
    ("nvbandwidth-007-v0.10.0", "each run is complete"),
    // `nvidia-smi nvlink -R` cut inside a link line: read as a row that
    // cannot be read (`Remote Device 00`, line 24), a parse problem.
    (
        "nvlink-status-006-hgx-h100-nvlink-R",
        "the last row is unreadable",
    ),
    // The author elided the legend (`...`, noted at its line); all 16
    // rows the header names are there.
    ("other-002-ppu-smi", "only the legend elided"),
    // The author elided progress output (`....`, noted); both tables run
    // to their `Averages` lines.
    (
        "transferbench-005-p2p-preset",
        "only progress output elided",
    ),
    // numactl and lstopo cut at a whole line: nothing says more followed.
    (
        "numactl-005-distances-only",
        "the author left out the node lines; the matrix is whole",
    ),
    (
        "lstopo-001-pascal83",
        "the tutorial's excerpt ends after a whole device line",
    ),
    ("lstopo-003-hwloc1", "cut after a whole PU line"),
    (
        "lstopo-005-hwloc-ls",
        "the page's PUs are cut to two whole lines",
    ),
];

/// Whether `file` is one of the captures cut short (flagged as such).
pub fn is_cut_capture(file: &str) -> bool {
    CUT.iter().any(|(f, _, _)| file.contains(f))
}

/// Whether `text` holds `word` with no letter either side.
fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(char::is_alphabetic) && !after.is_some_and(char::is_alphabetic)
    })
}

#[test]
fn cut_captures_are_flagged_as_cut() {
    let sources = std::fs::read_to_string("captures/SOURCES.tsv").unwrap();
    let mut failures = Vec::new();
    let mut seen = 0;
    for row in sources.lines().skip(1) {
        let file = row.split('\t').next().unwrap();
        let low = row.to_lowercase();
        let cut = row.contains("TRUNCATED")
            || file.contains("truncated")
            || has_word(&low, "cut")
            || low.contains("elided")
            || low.contains("[snip]");
        if !cut {
            continue;
        }
        seen += 1;
        if CUT_NOT_DETECTABLE.iter().any(|(f, _)| file.contains(f)) {
            continue;
        }
        let path = format!("captures/{file}");
        let r = read_transcript(&path, &std::fs::read(&path).unwrap());
        let flags: Vec<_> = CUT.iter().filter(|(f, _, _)| file.contains(f)).collect();
        if flags.is_empty() {
            failures.push(format!("{file}: not in CUT; problems {:?}", r.problems));
        }
        for (_, line, start) in flags {
            let hit = r.problems.iter().any(|p| {
                p.kind == ProblemKind::Truncated
                    && p.line == Some(*line)
                    && p.message.starts_with(start)
            });
            if !hit {
                failures.push(format!("{file}:{line}: `{start}` not in {:?}", r.problems));
            }
        }
    }
    assert!(seen >= 23, "found {seen} cut captures in SOURCES.tsv");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
