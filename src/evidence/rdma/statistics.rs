//! `ibv_display_local_infiniband_device_statistics` (Chester Gillon's
//! `ibv_message_passing`): every 10 s it reads the sysfs counters of every
//! local RDMA device (`<dev>/hw_counters`, `<dev>/ports/<n>/counters` and
//! `<dev>/ports/<n>/hw_counters`) and prints a table of those that are not
//! zero, each with its growth since the previous sample:
//!
//! ```text
//! Statistics after 90 seconds
//! Counter name                     Device  Port  Counter value(delta)
//! rq_num_oos                       mlx4_0        1(+1)
//! port_rcv_remote_physical_errors  mlx4_0     2  1(+1)
//! ```
//!
//! Two or more tables of one port's counters give their growth between the
//! first table and the last, as a live collection's start and end readings
//! do ([`super::Counter`]). A counter missing from the first table started
//! at zero when a later row says so by itself: its value minus the growth
//! it prints since the sample before is zero (counters only grow). Rows of
//! per-device counters (no port) are not a port's and are passed over with
//! a note.

use crate::evidence::SplitWords;
use std::collections::BTreeMap;

use super::{Counter, device, port};
use crate::evidence::{ParseError, Parsed, Source, numbered_lines};

/// `Statistics after 90 seconds`.
fn is_table_title(line: &str) -> bool {
    // Every line of every block not yet recognised comes here: words are
    // taken one by one, nothing is collected.
    let mut w = line.words();
    w.next() == Some("Statistics")
        && w.next() == Some("after")
        && w.next().is_some_and(|n| n.parse::<u64>().is_ok())
        && w.next() == Some("seconds")
        && w.next().is_none()
}

/// `Counter name  Device  Port  Counter value(delta)`.
fn is_column_header(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("Counter name") && t.contains("Device") && t.ends_with("Counter value(delta)")
}

pub fn looks_like_device_statistics(text: &str, lines: &[&str]) -> bool {
    // A title line holds `Statistics`: no line pass without it.
    has!(text, "Statistics")
        && lines
            .windows(2)
            .any(|w| is_table_title(w[0]) && is_column_header(w[1]))
}

/// One row: a counter's value in one table, and the growth it printed
/// since the sample before (none when it did not change).
struct Row {
    name: String,
    device: String,
    port: Option<u32>,
    value: u64,
    grew: Option<u64>,
}

/// `1(+1)` or `768`.
fn value_cell(t: &str) -> Option<(u64, Option<u64>)> {
    match t.split_once("(+") {
        Some((v, d)) => Some((v.parse().ok()?, Some(d.strip_suffix(')')?.parse().ok()?))),
        None => Some((t.parse().ok()?, None)),
    }
}

fn is_name(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 128
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
}

/// `name device [port] value`: a per-device counter has no port.
fn row(line: &str) -> Option<Row> {
    let w: Vec<&str> = line.words().collect();
    let (name, device, port, value) = match w.as_slice() {
        [n, d, p, v] => (*n, *d, Some(p.parse().ok()?), *v),
        [n, d, v] => (*n, *d, None, *v),
        _ => return None,
    };
    if !is_name(name) || !is_name(device) {
        return None;
    }
    let (value, grew) = value_cell(value)?;
    Some(Row {
        name: name.to_string(),
        device: device.to_string(),
        port,
        value,
        grew,
    })
}

/// The files of `ports/<n>/counters` (the IB PortCounters the kernel
/// exposes, drivers/infiniband/core/sysfs.c); any other per-port counter
/// the tool read is from `ports/<n>/hw_counters`.
fn group_of(name: &str) -> &'static str {
    const PORT_COUNTERS: &[&str] = &[
        "symbol_error",
        "link_error_recovery",
        "link_downed",
        "local_link_integrity_errors",
        "excessive_buffer_overrun_errors",
        "multicast_rcv_packets",
        "multicast_xmit_packets",
        "unicast_rcv_packets",
        "unicast_xmit_packets",
        "VL15_dropped",
    ];
    if name.starts_with("port_") || PORT_COUNTERS.contains(&name) {
        "counters"
    } else {
        "hw_counters"
    }
}

/// One counter's readings, in the order the tables were printed: the
/// table's index, the value, the printed growth, the line.
type Readings = Vec<(usize, u64, Option<u64>, usize)>;

pub fn parse_device_statistics(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let mut tables = 0usize;
    // (device, port, name) -> readings; the first line each port was seen.
    let mut seen: BTreeMap<(String, u32, String), Readings> = BTreeMap::new();
    let mut first_line: BTreeMap<(String, u32), usize> = BTreeMap::new();
    let mut order: Vec<(String, u32)> = Vec::new();
    let mut per_device: Vec<(usize, String)> = Vec::new();
    let mut before: Vec<usize> = Vec::new();
    for (n, l) in numbered_lines(text) {
        let t = l.trim();
        if t.is_empty() || is_column_header(t) {
            continue;
        }
        if is_table_title(t) {
            tables += 1;
            continue;
        }
        if tables == 0 {
            before.push(n);
            continue;
        }
        let Some(r) = row(t) else {
            out.bad_row(
                n,
                format!("expected `counter device [port] value(+growth)`, found `{t}`"),
            );
            continue;
        };
        let Some(p) = r.port else {
            per_device.push((n, r.name));
            continue;
        };
        let key = (r.device.clone(), p);
        if !first_line.contains_key(&key) {
            first_line.insert(key.clone(), n);
            order.push(key);
        }
        seen.entry((r.device, p, r.name))
            .or_default()
            .push((tables - 1, r.value, r.grew, n));
    }
    if tables == 0 || first_line.is_empty() {
        return Err(ParseError::new(
            1,
            "`Statistics after N seconds` tables with per-port counter rows",
        ));
    }
    // One note per line, so each is accounted as passed over.
    for n in before {
        out.note(
            n,
            "before the first `Statistics after` table: not the tool's table, passed over",
        );
    }
    for (n, name) in per_device {
        out.note(
            n,
            format!("`{name}` is a per-device counter (no port column): not a port's, passed over"),
        );
    }
    let last = tables - 1;
    let mut unknown: Vec<(usize, String)> = Vec::new();
    for (dev, p) in &order {
        let at = first_line[&(dev.clone(), *p)];
        let d = device(&mut out.rdma, dev, at);
        let port = port(d, *p, at);
        let mine = seen.iter().filter(|((sd, sp, _), _)| sd == dev && sp == p);
        for ((_, _, name), r) in mine {
            match grown(r, last) {
                Some((start, end)) => port.counters.push(Counter {
                    name: name.clone(),
                    group: group_of(name).to_string(),
                    start,
                    end,
                    delta: end - start,
                    source: r.last().map(|x| Source::line(x.3)),
                }),
                None => unknown.push((r[0].3, format!("{name} ({dev} port {p})"))),
            }
        }
    }
    if tables < 2 {
        out.note(
            first_line.values().min().copied().unwrap_or(1),
            "one table: counters are totals since boot, no growth is known",
        );
    }
    for (line, what) in unknown {
        out.note(
            line,
            format!("{what}: its value at the first table is not known (missing there, not zero by its own row) or it went back; no growth claimed"),
        );
    }
    Ok(out)
}

/// A counter's value at the first table and the last, when the text says
/// both: it is in the last table, and in the first or provably zero there;
/// it did not go back (a reset).
fn grown(r: &Readings, last: usize) -> Option<(u64, u64)> {
    let (first_table, value, grew, _) = r[0];
    let start = if first_table == 0 {
        value
    } else if value == grew? {
        // Zero at the sample before this row; counters only grow, so zero
        // at every earlier table too.
        0
    } else {
        return None;
    };
    let &(t, end, _, _) = r.last()?;
    (t == last && end >= start).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::super::RdmaDevice;
    use super::*;

    /// ConnectX-2 (mlx4_0), ports 1 and 2 looped, one corrupt packet sent
    /// on port 1: Chester-Gillon/ibv_message_passing's notes, verbatim.
    const CX2: &str = include_str!(
        "../../../captures/cx2-qdr-loopback-corrupt-packet/ibv-device-statistics-001-mlx4-ib-loopback-corrupt-packet-excerpt.txt"
    );

    fn counter<'a>(d: &'a RdmaDevice, port: u32, name: &str) -> &'a Counter {
        let p = d.ports.iter().find(|p| p.port == port).unwrap();
        p.counters.iter().find(|c| c.name == name).unwrap()
    }

    #[test]
    fn three_real_tables_give_each_port_counter_its_growth() {
        let lines: Vec<&str> = CX2.lines().collect();
        assert!(looks_like_device_statistics(CX2, &lines));
        let p = parse_device_statistics(CX2).unwrap();
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        assert_eq!(p.rdma.len(), 1);
        let d = &p.rdma[0];
        assert_eq!(d.name, "mlx4_0");
        assert_eq!(d.ports.iter().map(|p| p.port).collect::<Vec<_>>(), [1, 2]);
        // Line 10, `port_xmit_data ... 1  16614976221(+4205280921)`, to
        // line 41, `... 1  24939810988(+4205842292)`.
        let x = counter(d, 1, "port_xmit_data");
        assert_eq!((x.start, x.end), (16_614_976_221, 24_939_810_988));
        assert_eq!(x.delta, 8_324_834_767);
        assert_eq!(x.group, "counters");
        // Missing at 80 s, `1(+1)` at 90 s (line 32): zero before, so it
        // grew by one; `1` again at 100 s (line 56).
        let e = counter(d, 2, "port_rcv_remote_physical_errors");
        assert_eq!((e.start, e.end, e.delta), (0, 1, 1));
        // rq_num_oos and sq_num_oos are the device's (no port column),
        // lines 23-24 and 39-40.
        let noted = |pre: &str| -> Vec<usize> {
            let mut v: Vec<usize> = p
                .notes
                .iter()
                .filter(|n| n.text.starts_with(pre))
                .map(|n| n.line)
                .collect();
            v.sort_unstable();
            v
        };
        assert_eq!(noted("`rq_num_oos`"), [23, 39]);
        assert_eq!(noted("`sq_num_oos`"), [24, 40]);
        // The author's lines and pckt_drop's command and output, 1-5.
        assert_eq!(noted("before the first"), [1, 3, 4, 5]);
    }

    #[test]
    fn a_counter_missing_at_first_without_proof_of_zero_claims_no_growth() {
        let t = "Statistics after 10 seconds\nCounter name  Device  Port  Counter value(delta)\nport_rcv_data  mlx5_0  1  10(+10)\n\nStatistics after 20 seconds\nCounter name  Device  Port  Counter value(delta)\nport_rcv_data  mlx5_0  1  30(+20)\nsymbol_error  mlx5_0  1  7(+2)\nlink_downed  mlx5_0  1  3\n";
        let p = parse_device_statistics(t).unwrap();
        let d = &p.rdma[0];
        assert_eq!(counter(d, 1, "port_rcv_data").delta, 20);
        // 7 with +2 since the sample before: it was 5 there, and the first
        // table does not say what it was at 10 s; `3` unchanged likewise.
        assert_eq!(d.ports[0].counters.len(), 1);
        assert_eq!(p.notes.len(), 2);
        assert!(p.notes.iter().all(|n| n.text.contains("no growth claimed")));
    }

    #[test]
    fn one_table_is_read_but_grows_nothing_and_a_bad_row_is_named() {
        let t = "Statistics after 10 seconds\nCounter name  Device  Port  Counter value(delta)\nport_rcv_data  mlx5_0  1  10(+10)\nport_rcv_data mlx5_0 one 12\n";
        let p = parse_device_statistics(t).unwrap();
        assert_eq!(p.rdma[0].ports[0].counters[0].delta, 0);
        assert_eq!(p.issues.len(), 1);
        assert_eq!(p.issues[0].line, 4);
        assert!(p.notes.iter().any(|n| n.text.starts_with("one table")));
        assert!(parse_device_statistics("Statistics after 10 seconds\n").is_err());
        assert!(!looks_like_device_statistics(
            "",
            &["Statistics after 10 seconds", "x"]
        ));
    }

    #[test]
    fn a_counter_that_went_back_claims_no_growth() {
        let t = "Statistics after 10 seconds\nCounter name  Device  Port  Counter value(delta)\nport_rcv_data  mlx5_0  1  10\n\nStatistics after 10 seconds\nCounter name  Device  Port  Counter value(delta)\nport_rcv_data  mlx5_0  1  4(+4)\n";
        let p = parse_device_statistics(t).unwrap();
        assert!(p.rdma[0].ports[0].counters.is_empty());
        assert!(p.notes[0].text.contains("went back"));
    }
}
