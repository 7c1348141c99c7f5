//! The old nccl-tests formats and wide values, read from the real
//! transcripts in captures/: every row's cells, their units and the
//! run's warm-up and iteration counts.

use super::*;
use crate::evidence::IssueKind;

/// The cell of `test` (`... out-of-place` / `... in-place`) and `stat`
/// at the row of `line`.
fn cell<'a>(p: &'a Parsed, line: usize, half: &str, stat: Statistic) -> &'a Measurement {
    p.measurements
        .iter()
        .find(|m| m.source == Source::line(line) && m.test.ends_with(half) && m.statistic == stat)
        .unwrap_or_else(|| panic!("no {half} {stat:?} cell at line {line}"))
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() <= 1e-9 * b.abs().max(1e-12))
}

/// NVIDIA/nccl issue #120: NCCL 1's all_reduce test, the header the
/// first nccl-tests also printed (`bytes N type op time algbw busbw
/// res`), times in ms. Every row is read under that header (not as a
/// header-less fragment) and its times are ms, not us.
#[test]
fn bytes_n_op_res_header_times_are_milliseconds() {
    let text = include_str!(
        "../../../captures/nccl1-1gpu-allreduce-test-ms-times-nccl120/nccl-tests-016-nccl1-all-reduce-test-bytes-N-op-res-header-time-in-ms-truncated.txt"
    );
    let p = parse_nccl_tests(text).unwrap();
    // 10 rows (lines 3-12), 6 cells each.
    assert_eq!(p.measurements.len(), 60);
    let (alg, bus, avg) = (Statistic::Algbw, Statistic::Busbw, Statistic::Avg);
    // `10000000 10000000 char sum 0.064 157.38 0.00 0e+00 0.005 2083.77 0.00 0e+00`
    let t = cell(&p, 3, "out-of-place", avg);
    assert_eq!(t.size_bytes, Some(10_000_000));
    assert!(close(t.latency_s, 0.064e-3), "{:?}", t.latency_s);
    assert_eq!(t.as_printed.as_str(), "0.064 ms");
    assert_eq!(t.questions.unit, Unit::Milliseconds);
    assert_eq!(t.verification, Verification::Checked { errors: 0 });
    assert!(close(
        cell(&p, 3, "out-of-place", alg).bandwidth_bytes_per_s,
        157.38e9
    ));
    assert!(close(
        cell(&p, 3, "out-of-place", bus).bandwidth_bytes_per_s,
        0.0
    ));
    assert!(close(
        cell(&p, 3, "in-place", alg).bandwidth_bytes_per_s,
        2083.77e9
    ));
    assert!(close(cell(&p, 3, "in-place", avg).latency_s, 0.005e-3));
    // `10000000 2500000 int sum 0.068 146.14 0.00 0e+00 0.015 688.37 ...`
    assert!(close(cell(&p, 7, "in-place", avg).latency_s, 0.015e-3));
    assert!(close(
        cell(&p, 7, "in-place", alg).bandwidth_bytes_per_s,
        688.37e9
    ));
    // The header is there: no "header not in the transcript", no row
    // problem; only the cut (no trailer).
    assert!(
        p.issues
            .iter()
            .all(|i| i.kind == IssueKind::Truncated && i.line == 12)
    );
    assert_eq!(p.issues.len(), 1, "{:?}", p.issues);
}

/// The same rows pasted without their two header lines: the times are
/// still ms, because only ms makes each row's size over its time its
/// algbw (as us, 10 MB would have moved in 64 ns).
#[test]
fn header_less_rows_of_the_2017_format_are_ms_by_their_algbw() {
    let text = include_str!(
        "../../../captures/nccl1-1gpu-allreduce-test-ms-times-nccl120/nccl-tests-016-nccl1-all-reduce-test-bytes-N-op-res-header-time-in-ms-truncated.txt"
    );
    let rows: String = text.lines().skip(2).map(|l| format!("{l}\n")).collect();
    let p = parse_nccl_tests(&rows).unwrap();
    let t = cell(&p, 1, "out-of-place", Statistic::Avg);
    assert!(close(t.latency_s, 0.064e-3), "{:?}", t.latency_s);
    assert_eq!(t.as_printed.as_str(), "0.064 ms");
    // A current table's rows without their header stay us (two rows made
    // up for this test in the current format).
    let now = "  8388608   2097152   float   sum   -1   76.11  110.22  192.88   0   75.52  111.08  194.39   0\n 16777216   4194304   float   sum   -1   141.0  118.98  208.22   0   140.6  119.32  208.81   0\n";
    let p = parse_nccl_tests(now).unwrap();
    let t = cell(&p, 1, "out-of-place", Statistic::Avg);
    assert!(close(t.latency_s, 76.11e-6), "{:?}", t.latency_s);
}

/// NVIDIA/nccl-tests issue #82: the format before `#wrong` (a `root`
/// column, no `redop`; `error` N/A with `-c 0`) and its `nThread` line
/// `warmup iters: 10 iters: 100 validation: 0` without `agg iters`.
#[test]
fn old_format_root_column_and_its_warmup_count() {
    let text = include_str!(
        "../../../captures/v100-2node-broadcast-old-format-nccl-tests82/nccl-tests-014-broadcast-2node-v100-old-format-warmup10-iters100-validation0-truncated.txt"
    );
    let p = parse_nccl_tests(text).unwrap();
    assert_eq!(p.measurements.len(), 6);
    for m in &p.measurements {
        assert_eq!(m.kind, Kind::Broadcast, "root 0, no redop");
        assert_eq!((m.warmup_iterations, m.iterations), (Some(10), Some(100)));
        assert_eq!(m.verification, Verification::NotVerified);
        assert_eq!(m.size_bytes, Some(8));
    }
    // `8 2 float 0 45.82 0.00 0.00 N/A 38.17 0.00 0.00 N/A`
    assert!(close(
        cell(&p, 17, "out-of-place", Statistic::Avg).latency_s,
        45.82e-6
    ));
    assert!(close(
        cell(&p, 17, "in-place", Statistic::Avg).latency_s,
        38.17e-6
    ));
    assert!(close(
        cell(&p, 17, "in-place", Statistic::Busbw).bandwidth_bytes_per_s,
        0.0
    ));
    assert_eq!(
        cell(&p, 17, "in-place", Statistic::Avg).questions.unit,
        Unit::Microseconds
    );
}

/// NixOS/nixpkgs PR #251856: algbw and busbw past their `%6.2f` width
/// (`1808.47`, `560642.14`). nccl-tests puts two literal spaces between
/// every field in every release, so a wide value widens the row and
/// never touches its neighbour: the words are still the columns.
#[test]
fn values_wider_than_their_field_are_read() {
    let text = include_str!(
        "../../../captures/rtx4090-1gpu-reduce-overflow-nixpkgs251856/nccl-tests-015-reduce-1x-rtx4090-algbw-overflows-6-wide-field.txt"
    );
    let p = parse_nccl_tests(text).unwrap();
    // One row's six cells and the `Avg bus bandwidth` cell.
    assert_eq!(p.measurements.len(), 7);
    let row = 10;
    let out_alg = cell(&p, row, "out-of-place", Statistic::Algbw);
    assert_eq!(out_alg.kind, Kind::Reduce, "redop sum, root 0");
    assert_eq!(out_alg.size_bytes, Some(33_554_432));
    assert_eq!(
        (out_alg.warmup_iterations, out_alg.iterations),
        (Some(5), Some(20))
    );
    assert!(close(out_alg.bandwidth_bytes_per_s, 1808.47e9));
    assert!(close(
        cell(&p, row, "out-of-place", Statistic::Avg).latency_s,
        18.55e-6
    ));
    let in_bus = cell(&p, row, "in-place", Statistic::Busbw);
    assert!(close(in_bus.bandwidth_bytes_per_s, 560_642.14e9));
    assert_eq!(in_bus.verification, Verification::Checked { errors: 0 });
    assert!(close(
        cell(&p, row, "in-place", Statistic::Avg).latency_s,
        0.06e-6
    ));
    let avg = p
        .measurements
        .iter()
        .find(|m| m.test.ends_with("Avg bus bandwidth"));
    assert!(close(avg.unwrap().bandwidth_bytes_per_s, 281_225e9));
    assert!(p.issues.is_empty(), "{:?}", p.issues);
}

/// A paste that lost every `#` (NVIDIA/nccl issue #583 shows the
/// `nThread` line so, with runs of blanks inside it): its counts are
/// still the run's. The nThread and header lines are #583's; the row
/// is made up in the old format's shape for this test.
#[test]
fn an_unhashed_nthread_line_gives_the_counts() {
    let text = concat!(
        " nThread 1 nGpus 1 minBytes 32 maxBytes 8589934592 step: 2(factor) warmup iters: 5       iters: 20 validation: 1 single_test: 0 test_buffer_kind: 2\n",
        "       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n",
        "          32             8   float     sum    10.00    0.00    0.00  0e+00    10.00    0.00    0.00  0e+00\n",
    );
    let p = parse_nccl_tests(text).unwrap();
    assert_eq!(p.measurements.len(), 6);
    assert!(
        p.measurements
            .iter()
            .all(|m| (m.warmup_iterations, m.iterations) == (Some(5), Some(20)))
    );
}

#[test]
fn column_names_of_both_headers() {
    let (names, ms) =
        column_names("bytes N type op time algbw busbw res time algbw busbw res").unwrap();
    assert!(ms);
    assert_eq!(names[..4], ["size", "count", "type", "redop"]);
    assert_eq!(names[7], "error");
    let (names, ms) = column_names("size count type root time algbw busbw error").unwrap();
    assert!(!ms);
    assert_eq!(names[3], "root");
    assert!(column_names("bytes sent 1024").is_none());
}
