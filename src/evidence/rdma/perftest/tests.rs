use super::*;

#[test]
fn splits_two_column_header_lines() {
    let p = header_pairs(" Dual-port       : OFF\t\tDevice         : mlx5_0");
    assert_eq!(
        p,
        vec![
            ("Dual-port".into(), "OFF".into()),
            ("Device".into(), "mlx5_0".into())
        ]
    );
    let p = header_pairs(" rdma_cm QPs\t : OFF");
    assert_eq!(p, vec![("rdma_cm QPs".into(), "OFF".into())]);
    let p = header_pairs(" Data ex. method : rdma_cm \tTOS    : 41");
    assert_eq!(p[1], ("TOS".into(), "41".into()));
}

#[test]
fn perftest_columns_strip_units() {
    let c = perftest_columns(
        " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]",
    );
    assert_eq!(
        c,
        ["#bytes", "#iterations", "BW peak", "BW average", "MsgRate"]
    );
    let c = perftest_columns(" #bytes #iterations    t_min[usec]    99% percentile[usec]");
    assert_eq!(c, ["#bytes", "#iterations", "t_min", "99% percentile"]);
}

#[test]
fn a_run_stopped_by_a_completion_error_keeps_its_rows_and_says_so_once() {
    // The end of a real run (dranet's GKE demo, ib_write_bw on mlx5_3).
    let text = "                    RDMA_Write BW Test
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 32768      5000             376.54             376.29               1.435442
 65536      5000             381.50             381.41               0.727473
 Completion with error at client
 Failed status 10: wr_id 0 syndrom 0x88
scnt=128, ccnt=0
 Failed to complete run_iter_bw function successfully
";
    let p = parse_perftest(text).unwrap();
    assert_eq!(p.measurements.len(), 4);
    let errors: Vec<_> = p
        .issues
        .iter()
        .filter(|x| x.kind == crate::evidence::IssueKind::ToolError)
        .collect();
    assert_eq!(errors.len(), 1, "{:?}", p.issues);
    assert_eq!(errors[0].line, 5);
    assert_eq!(
        errors[0].message,
        format!(
            "perftest: Completion with error at client; Failed status 10: wr_id 0 syndrom 0x88; Failed to complete run_iter_bw function successfully{STATUS_10_AFTER_DEFAULT}"
        )
    );
    // Stopped after another size (synthetic: the rows cut at 32 KiB):
    // no word about the default size.
    let cut = text.replace(
        " 65536      5000             381.50             381.41               0.727473\n",
        "",
    );
    let p = parse_perftest(&cut).unwrap();
    let e = p
        .issues
        .iter()
        .find(|x| x.kind == crate::evidence::IssueKind::ToolError);
    assert!(!e.unwrap().message.contains("default"), "{e:?}");
}

#[test]
fn a_run_stopped_at_its_first_size_gets_no_word_from_the_run_before() {
    // Synthetic: a first run ending at 64 KiB, then a second run that
    // stops before its first row: the hint is about the run that stopped.
    let text = "                    RDMA_Write BW Test
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      5000             381.50             381.41               0.727473
                RDMA_Write BW Test
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 Completion with error at client
 Failed status 10: wr_id 0 syndrom 0x88
";
    let issues = parse_perftest(text).unwrap().issues;
    assert!(!issues[0].message.contains("default"), "{issues:?}");
}

#[test]
fn command_lines_say_whether_gpu_buffers_were_asked_for() {
    let (host, gpu) = (Some((false, false)), Some((true, false)));
    for (line, want) in [
        (
            "root@rdma-perftest-1:/# ib_write_bw 10.0.4.7 -a --report_gbits",
            host,
        ),
        (
            "ib_write_bw -d mlx5_3 --use_cuda=0 -a 10.0.4.8 --use_cuda_dmabuf",
            Some((true, true)),
        ),
        ("$ /usr/bin/ib_read_lat --use_rocm=1", gpu),
        ("sudo -E ib_send_lat -d mlx5_0", host),
        (" ib_write_bw 10.0.4.8 -a --report_gbits", host),
        ("[root@gpu1 ~]# ib_write_bw --use_cuda=0", gpu),
        ("(base) u@h:~$ ib_write_bw --use_cuda=0", gpu),
        (
            " Failed to complete run_iter_bw function successfully",
            None,
        ),
        ("RDMA_Write BW Test", None),
        // Prose naming the program is no command line (nor a buffer fact).
        ("I ran ib_write_bw between the nodes", None),
        ("Then ib_send_lat hangs", None),
    ] {
        assert_eq!(command_line(line), want, "{line}");
    }
}

#[test]
fn split_key_agrees_with_split_once() {
    for p in [
        "Device : mlx5_0",
        "a :b : c",
        "a: b :c",
        "a :",
        " :x",
        ":x : y",
        "no colon",
        "a::b : c",
        "ü :é : ß",
        "",
        " : ",
    ] {
        let want = p.split_once(" : ").or_else(|| p.split_once(" :"));
        assert_eq!(split_key(p), want, "{p:?}");
    }
}

/// Each cell's line, side and size, in the order read.
fn cells_by_side(p: &Parsed) -> Vec<(usize, Option<Side>, Option<u64>)> {
    (p.measurements.iter())
        .filter(|m| m.statistic == Statistic::Avg)
        .map(|m| {
            let side = match &m.questions.path {
                Path::Rdma(r) => Some(r.side),
                _ => None,
            };
            (m.source.line, side, m.size_bytes)
        })
        .collect()
}

// Cut from captures/ib-loopback-superbench-all-sizes (superbenchmark's
// tests/data/ib_loopback_all_sizes.log): a loopback's server and client
// writing into one log line by line; the headers of both tables come
// together, the client's rows follow, and the server's one row comes last.
const INTERLEAVED: &str = "************************************
* Waiting for client to connect... *
************************************
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
Dual-port       : OFF          Device         : ib0
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
Dual-port       : OFF          Device         : ib0
Link type       : IB
---------------------------------------------------------------------------------------
Link type       : IB
---------------------------------------------------------------------------------------
---------------------------------------------------------------------------------------
#bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
#bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
2          2000             5.32               5.30               2.778732
4          2000             10.65              10.64              2.788833
8388608    2000             23240.68            23240.68                  0.002905
---------------------------------------------------------------------------------------
8388608    2000             23240.68            23240.68                  0.002905
---------------------------------------------------------------------------------------
";

#[test]
fn two_runs_interleaved_line_by_line_are_two_tables() {
    let p = parse_perftest(INTERLEAVED).unwrap();
    assert!(p.issues.is_empty(), "{:?}", p.issues);
    // The rows under the two headers are the client's (titled second);
    // the row after them, under no header of its own, the server's.
    assert_eq!(
        cells_by_side(&p),
        [
            (17, Some(Side::Client), Some(2)),
            (18, Some(Side::Client), Some(4)),
            (19, Some(Side::Client), Some(8388608)),
            (21, Some(Side::Server), Some(8388608)),
        ]
    );
    // Without that last row, the server's table has no rows, and says so
    // at its header.
    let cut: String = INTERLEAVED
        .lines()
        .take(20)
        .map(|l| format!("{l}\n"))
        .collect();
    let p = parse_perftest(&cut).unwrap();
    assert_eq!(p.measurements.len(), 6);
    assert_eq!(p.issues.len(), 1, "{:?}", p.issues);
    assert_eq!(
        (p.issues[0].line, p.issues[0].message.as_str()),
        (15, "the results table has no rows")
    );
}

#[test]
fn two_runs_one_after_the_other_without_a_command_line_are_two_tables() {
    // captures/ib-loopback-superbench (the 8 MiB log), cut: the client's
    // output, then the server's, no command line or blank between.
    let text = "                        RDMA_Write BW Test
 Dual-port       : OFF\t\tDevice         : ib0
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 8388608    20000            24056.74            24056.72\t\t   0.003007
************************************
* Waiting for client to connect... *
************************************
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF\t\tDevice         : ib0
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 8388608    20000            24056.74            24056.72\t\t   0.003007
---------------------------------------------------------------------------------------
";
    let p = parse_perftest(text).unwrap();
    assert!(p.issues.is_empty(), "{:?}", p.issues);
    assert_eq!(
        cells_by_side(&p),
        [
            (4, Some(Side::Client), Some(8388608)),
            (12, Some(Side::Server), Some(8388608)),
        ]
    );
}

#[test]
fn values_glued_where_one_overflowed_its_field_are_cut_at_two_decimals() {
    assert_eq!(
        two_decimal_values("2465.901216.65"),
        Some(vec!["2465.90", "1216.65"])
    );
    assert_eq!(two_decimal_values("928.05"), Some(vec!["928.05"]));
    // A message rate's six decimals, a version, a bare count: not times.
    for t in [
        "0.727473", "1.435442", "1.2.3", "1000", "12.3", ".50", "5.5x",
    ] {
        assert_eq!(two_decimal_values(t), None, "{t}");
    }
    assert_eq!(
        unglued(&["2", "1000", "2465.901216.65", "37330.73"]),
        ["2", "1000", "2465.90", "1216.65", "37330.73"]
    );
}

#[test]
fn a_row_with_two_glued_values_is_read_whole() {
    // The server side of a real Soft-RoCE ib_send_lat (captures-wild
    // perftest-lat-002): t_stdev ran into the 99% percentile.
    let text = "                    Send Latency Test
 #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] 
 2       1000          453.06         37330.73     692.41            928.05           2465.901216.65                 37330.73
---------------------------------------------------------------------------------------
";
    let p = parse_perftest(text).unwrap();
    assert!(p.issues.is_empty(), "{:?}", p.issues);
    assert!(p.unread_lines.is_empty(), "{:?}", p.unread_lines);
    let printed: Vec<&str> = p
        .measurements
        .iter()
        .map(|m| m.as_printed.as_str())
        .collect();
    for v in [
        "2465.90 usec",
        "1216.65 usec",
        "37330.73 usec",
        "453.06 usec",
    ] {
        assert!(printed.contains(&v), "{v} in {printed:?}");
    }
    // The repair is said at its line.
    assert!(
        p.notes
            .iter()
            .any(|n| n.line == 3 && n.text.contains("cut apart"))
    );
    // A cut that would put the 99th percentile above the maximum is not
    // made: the row keeps what it read before the glued word, as before.
    let wrong = text.replace("2465.901216.65", "2465.9099999.65");
    let p = parse_perftest(&wrong).unwrap();
    assert_eq!(p.issues.len(), 1, "{:?}", p.issues);
    assert!(p.notes.iter().all(|n| !n.text.contains("cut apart")));
}
