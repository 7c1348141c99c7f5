//! Network interface statistics: `ethtool -S <interface>` (the driver's
//! counters: pause frames per priority, ECN marks, CNPs, discards, symbol
//! and FCS errors...).
//!
//! Counters are cumulative since the driver loaded, so one reading says
//! little; two readings of the same interface in one transcript (pasted
//! before and after a run, or a live collection's start and end) give
//! what grew in between. The parser returns one [`InterfaceStats`] per
//! reading; [`settle`] names a reading from the command line that printed
//! it and folds readings of one interface into first and last.
//!
//! Per-queue and per-channel counters (`rx3_packets`, `ch7_poll`,
//! `rx_queue_0_drops`, bnx2x's `[0]: rx_bytes`) are passed over: the port
//! and function totals carry what a diagnosis needs.

use crate::evidence::SplitWords;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ParseError, Parsed, Source, numbered_lines};

/// The counters of one network interface, from one or more readings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InterfaceStats {
    /// `ens1f0np0`, from the command line that printed the reading; none
    /// when the paste did not keep it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
    /// How many readings were folded: 1 is a total since the driver
    /// loaded; 2 or more give each counter's growth between the first and
    /// the last.
    pub readings: u32,
    pub counters: Vec<StatCounter>,
    /// The first reading's first line.
    pub source: Source,
}

/// One counter as `ethtool -S` printed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StatCounter {
    /// As printed: `rx_prio3_pause`, `np_cnp_sent`, `rx_discards_phy`.
    pub name: String,
    /// The last reading (a count since the driver loaded; `_bytes`
    /// counters count bytes).
    pub value: u64,
    /// Last minus first reading; none from one reading, or when the
    /// counter went backwards (a driver reload or a counter reset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<u64>,
    /// The last reading's line.
    pub source: Source,
}

/// Whether a counter counts congestion signals rather than errors (mlx5
/// `np_ecn_marked_roce_packets`, `np_cnp_sent`, `rp_cnp_handled`; ethtool
/// `rx_pause_ctrl_phy`, `rx_prio3_pause`, `rx_ecn_mark`). Lowercase names.
pub fn is_congestion_counter(name: &str) -> bool {
    ["ecn", "cnp", "pause"].iter().any(|k| name.contains(k))
}

/// The interface an `ethtool -S <if>` (or `--statistics`) command line
/// names, after any prompt, quoted as markdown inline code or not. A line
/// that runs ethtool more than once (`ethtool -S a; ethtool -S b`) names
/// none: its readings could be of either.
pub fn interface_of_command(line: &str) -> Option<String> {
    // The program is a word that ends in `ethtool`: a line without it
    // (nearly every line this is asked of) names none, without splitting.
    if !has!(line, "ethtool") {
        return None;
    }
    let line = line.trim().trim_matches('`');
    let is_ethtool = |w: &&str| w.rsplit('/').next() == Some("ethtool");
    if line.words().filter(is_ethtool).count() > 1 {
        return None;
    }
    let mut words = line.words().skip_while(|w| !is_ethtool(w));
    words.next()?;
    let flag = words.next()?;
    if flag != "-S" && flag != "--statistics" {
        return None;
    }
    let name = words.find(|w| !w.starts_with('-'))?;
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.@:".contains(&b));
    ok.then(|| name.to_string())
}

/// `After:` or `Before benchmarking:`: words and a colon with nothing
/// after it, as `NIC statistics:` is; people label the readings they paste.
/// A counter name with its value cut off (`rx_bytes:`) is no label.
fn is_label(t: &str) -> bool {
    t.strip_suffix(':').is_some_and(|w| {
        w.len() <= 80
            && !w.contains([':', '_'])
            && (w.contains(' ') || w.starts_with(|c: char| c.is_ascii_uppercase()))
    })
}

/// `name: value`, with an annotation after ` #` removed.
fn counter_row(line: &str) -> Option<(&str, u64)> {
    let t = crate::evidence::trim(before_annotation(line));
    // `t.rsplit_once(':')`, the colon found by memrchr.
    let colon = crate::read::rfind_byte(b':', t.as_bytes())?;
    let name = crate::evidence::trim(&t[..colon]);
    if name.is_empty() {
        return None;
    }
    Some((name, crate::evidence::trim(&t[colon + 1..]).parse().ok()?))
}

/// `line.split(" #").next()`: the first `#` after a space found by memchr
/// (no substring searcher built a line).
fn before_annotation(line: &str) -> &str {
    let b = line.as_bytes();
    crate::read::byte_indices(b'#', b)
        .find(|&i| i > 0 && b[i - 1] == b' ')
        .map_or(line, |i| &line[..i - 1])
}

/// Per-queue, per-channel and per-ring counters (`rx3_packets`,
/// `tx_queue_1_bytes`, `ch0_arm`, `[2]: rx_bytes`, `rxq0: rx_bytes`).
fn per_queue(name: &str) -> bool {
    // `rx_queue_0_packets` is one queue's; `tx_queue_stopped` the function's.
    let numbered_queue = name
        .match_indices("queue_")
        .any(|(i, m)| name[i + m.len()..].starts_with(|c: char| c.is_ascii_digit()));
    if name.starts_with('[') || numbered_queue || name.contains(':') {
        return true;
    }
    let digits_after = |p: &str| {
        name.strip_prefix(p).is_some_and(|r| {
            let d = r.bytes().take_while(u8::is_ascii_digit).count();
            d > 0 && r[d..].starts_with('_')
        })
    };
    ["rx", "tx", "ch", "rxq", "txq", "xdpsq"]
        .iter()
        .any(|p| digits_after(p))
}

pub fn looks_like_ethtool_stats(text: &str, lines: &[&str]) -> bool {
    if has!(text, "NIC statistics:") && lines.iter().any(|l| l.trim() == "NIC statistics:") {
        return true;
    }
    // `ethtool -S eth0 | grep pause` keeps only rows: every one a
    // counter, some of them rx_/tx_ ones.
    // Labels, markdown fences and the `ethtool -S` line itself may sit
    // between the rows.
    let other = |l: &str| is_label(l) || l.starts_with("```") || interface_of_command(l).is_some();
    // One pass, no list: the first other line ends the look (most blocks
    // that come here, the table's last entry, are not ethtool's).
    let (mut rows, mut rx_tx) = (0, 0);
    for l in lines
        .iter()
        .map(|l| crate::evidence::trim(l))
        .filter(|l| !l.is_empty())
    {
        if counter_row(l).is_none() && !other(l) {
            return false;
        }
        rows += 1;
        rx_tx += usize::from(l.starts_with("rx_") || l.starts_with("tx_"));
    }
    rows >= 2 && rx_tx >= 2
}

/// Parses `ethtool -S` output: `NIC statistics:` then `name: value`
/// rows; an `ethtool -S <if>` line starts a reading of that interface.
pub fn parse_ethtool_stats(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let mut cur: Option<InterfaceStats> = None;
    let mut pending_name: Option<String> = None;
    // The interface of the last command line: every reading printed
    // under it (`NIC statistics:` twice, or `After:` between two pastes
    // of its rows) is of that interface, until another command.
    let mut under: Option<String> = None;
    let mut queues = 0usize;
    for (n, l) in numbered_lines(text) {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(name) = interface_of_command(t) {
            out.interfaces.extend(cur.take());
            pending_name = Some(name.clone());
            under = Some(name);
            continue;
        }
        if t == "NIC statistics:" {
            out.interfaces.extend(cur.take());
            cur = Some(reading(pending_name.take().or(under.clone()), n));
            continue;
        }
        if is_label(t) {
            // `After:`: the rows below are the next reading.
            out.interfaces.extend(cur.take());
            continue;
        }
        let Some((name, value)) = counter_row(t) else {
            out.bad_row(n, format!("expected `name: count`, found `{t}`"));
            continue;
        };
        if per_queue(name) {
            queues += 1;
            continue;
        }
        if name.contains(char::is_whitespace) {
            out.bad_row(n, format!("expected `name: count`, found `{t}`"));
            continue;
        }
        let r = cur.get_or_insert_with(|| reading(pending_name.take().or(under.clone()), n));
        r.counters.push(StatCounter {
            name: name.to_string(),
            value,
            delta: None,
            source: Source::line(n),
        });
    }
    out.interfaces.extend(cur);
    cut_at_the_end(text, &mut out);
    if queues > 0
        && let Some(first) = out.interfaces.first()
    {
        let line = first.source.line;
        out.note(
            line,
            format!("{queues} per-queue or per-channel counter rows passed over"),
        );
    }
    if out.interfaces.iter().all(|r| r.counters.is_empty()) {
        return Err(ParseError::new(
            1,
            "`NIC statistics:` and `name: count` rows",
        ));
    }
    out.interfaces.retain(|r| !r.counters.is_empty());
    Ok(out)
}

/// An unreadable last line without a `:` is a counter cut mid-name: the
/// paste stops there (truncated), not a row the parser misread.
fn cut_at_the_end(text: &str, out: &mut Parsed) {
    let last = numbered_lines(text)
        .filter(|(_, l)| !l.trim().is_empty())
        .last();
    let Some((n, l)) = last else { return };
    if l.contains(':') {
        return;
    }
    if let Some(i) = out.issues.iter().position(|i| i.line == n) {
        out.issues.remove(i);
        out.truncated(
            n,
            format!("the paste stops inside a counter row (`{}`)", l.trim()),
        );
    }
}

fn reading(interface: Option<String>, line: usize) -> InterfaceStats {
    InterfaceStats {
        interface,
        readings: 1,
        counters: Vec::new(),
        source: Source::line(line),
    }
}

/// Names the readings before the first named one from `command` (the
/// command line that printed the block, when the paste kept it), then
/// folds readings of one named interface, in order, into one: each
/// counter's last value and its growth since the first reading.
pub fn settle(stats: &mut Vec<InterfaceStats>, command: Option<&str>) {
    if let Some(name) = command.and_then(interface_of_command) {
        for s in stats.iter_mut().take_while(|s| s.interface.is_none()) {
            s.interface = Some(name.clone());
        }
    }
    let mut out: Vec<InterfaceStats> = Vec::with_capacity(stats.len());
    for s in stats.drain(..) {
        let earlier = s
            .interface
            .as_ref()
            .and_then(|n| out.iter_mut().find(|o| o.interface.as_ref() == Some(n)));
        match earlier {
            Some(o) => fold(o, s),
            None => out.push(s),
        }
    }
    *stats = out;
}

/// `later` read after `first`: counters in both get a delta; counters only
/// in `later` are kept without one.
fn fold(first: &mut InterfaceStats, later: InterfaceStats) {
    first.readings += later.readings;
    // By name, once: a reading may hold tens of thousands of counters.
    let mut at: std::collections::HashMap<String, usize> = first
        .counters
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.to_string(), i))
        .collect();
    for c in later.counters {
        match at.get(c.name.as_str()).map(|&i| &mut first.counters[i]) {
            Some(f) => {
                let start = f.value - f.delta.unwrap_or(0);
                f.delta = c.value.checked_sub(start);
                f.value = c.value;
                f.source = c.source;
            }
            None => {
                at.insert(c.name.to_string(), first.counters.len());
                first.counters.push(c);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_annotation_is_split_s_first_piece() {
        for l in [
            "",
            "#",
            " #",
            "rx_bytes: 12 # after",
            "a#b #c #d",
            "##  # x",
            "\u{e9} #\u{e9}",
            "x\u{a0}#y",
            "rx_pause: 0",
        ] {
            assert_eq!(
                before_annotation(l),
                l.split(" #").next().unwrap_or(l),
                "{l:?}"
            );
        }
    }

    #[test]
    fn reads_counters_and_passes_over_per_queue_rows() {
        let p = parse_ethtool_stats(
            "NIC statistics:\n     rx_packets: 10\n     rx0_packets: 4\n     ch3_arm: 1\n     rx_queue_0_drops: 2\n     tx_queue_stopped: 0\n     rx_prio3_pause: 7\n",
        )
        .unwrap();
        assert_eq!(p.interfaces.len(), 1);
        let names: Vec<&str> = p.interfaces[0]
            .counters
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["rx_packets", "tx_queue_stopped", "rx_prio3_pause"]);
        assert_eq!(p.notes.len(), 1);
    }

    #[test]
    fn two_readings_of_one_interface_give_deltas_and_a_reset_gives_none() {
        let text = "$ ethtool -S ens1f0\nNIC statistics:\n     rx_pause_ctrl_phy: 100\n     rx_crc_errors_phy: 9\n$ ethtool -S ens1f0\nNIC statistics:\n     rx_pause_ctrl_phy: 160\n     rx_crc_errors_phy: 2\n";
        let mut p = parse_ethtool_stats(text).unwrap();
        assert_eq!(p.interfaces.len(), 2);
        settle(&mut p.interfaces, None);
        assert_eq!(p.interfaces.len(), 1);
        let s = &p.interfaces[0];
        assert_eq!(s.interface.as_deref(), Some("ens1f0"));
        assert_eq!(s.readings, 2);
        assert_eq!(s.counters[0].value, 160);
        assert_eq!(s.counters[0].delta, Some(60));
        assert_eq!(s.counters[0].source.line, 7);
        assert_eq!(s.counters[1].delta, None);
    }

    #[test]
    fn the_pasted_command_names_the_first_reading() {
        let text = "NIC statistics:\n     rx_pause_ctrl_phy: 1\nroot@h:~# ethtool -S eth3\nNIC statistics:\n     rx_pause_ctrl_phy: 4\n";
        let mut p = parse_ethtool_stats(text).unwrap();
        settle(&mut p.interfaces, Some("ethtool -S eth3 | grep pause"));
        assert_eq!(p.interfaces.len(), 1);
        assert_eq!(p.interfaces[0].counters[0].delta, Some(3));
        // Unnamed readings are never folded into one another.
        let mut q =
            parse_ethtool_stats("NIC statistics:\n rx_a_b: 1\nNIC statistics:\n rx_a_b: 2\n")
                .unwrap();
        settle(&mut q.interfaces, None);
        assert_eq!(q.interfaces.len(), 2);
        assert!(q.interfaces[0].counters[0].delta.is_none());
    }

    #[test]
    fn grep_output_and_annotations_are_read_and_a_bad_row_is_named() {
        let lines = [
            "     rx_pause_ctrl_phy: 0",
            "     tx_pause_ctrl_phy: 1266552",
        ];
        assert!(looks_like_ethtool_stats("", &lines));
        assert!(!looks_like_ethtool_stats("", &["GPU0: 1", "GPU1: 2"]));
        let p = parse_ethtool_stats(
            "NIC statistics:\n     rx_symbol_err_phy: 386  # symbol errors: 386\n     rx_bytes: twelve\n",
        )
        .unwrap();
        assert_eq!(p.interfaces[0].counters[0].value, 386);
        assert_eq!(p.issues.len(), 1);
        assert_eq!(p.issues[0].line, 3);
    }

    #[test]
    fn command_lines_name_interfaces() {
        assert_eq!(
            interface_of_command("[root@n1 ~]# /usr/sbin/ethtool -S ens1f0np0").as_deref(),
            Some("ens1f0np0")
        );
        assert_eq!(interface_of_command("ethtool -i eth0"), None);
        assert_eq!(interface_of_command("ethtool -S"), None);
    }

    #[test]
    fn a_label_between_pasted_readings_starts_the_next_of_the_same_interface() {
        // byteps #179: `ethtool -S enp178s0f0 |grep prio` before and after
        // a benchmark, the second paste under `After:` with no command.
        let text = "Before benchmarking:\n`ethtool -S enp178s0f0 |grep prio`\n     rx_prio0_bytes: 100\n     tx_prio0_bytes: 7\nAfter:\n     rx_prio0_bytes: 160\n     tx_prio0_bytes: 7\n";
        let lines: Vec<&str> = text.lines().collect();
        assert!(looks_like_ethtool_stats(text, &lines));
        let mut p = parse_ethtool_stats(text).unwrap();
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        assert_eq!(p.interfaces.len(), 2);
        settle(&mut p.interfaces, None);
        assert_eq!(p.interfaces.len(), 1);
        let s = &p.interfaces[0];
        assert_eq!(s.interface.as_deref(), Some("enp178s0f0"));
        assert_eq!(
            (s.counters[0].delta, s.counters[1].delta),
            (Some(60), Some(0))
        );
        // A counter whose value was cut is no label.
        assert!(!is_label("rx_prio0_bytes:"));
        assert!(is_label("After:") && is_label("Before benchmarking:"));
    }

    #[test]
    fn a_line_running_ethtool_twice_names_no_interface() {
        assert_eq!(
            interface_of_command("ethtool -S eth0 | grep pause; ethtool -S eth1 | grep pause"),
            None
        );
        assert_eq!(
            interface_of_command("`ethtool -S enp178s0f0 |grep prio`").as_deref(),
            Some("enp178s0f0")
        );
    }

    #[test]
    fn a_paste_cut_inside_the_last_row_is_truncated() {
        let p = parse_ethtool_stats("NIC statistics:\n     rx_packets: 8\n     tx\n").unwrap();
        assert_eq!(p.issues.len(), 1);
        assert_eq!(p.issues[0].kind, crate::evidence::IssueKind::Truncated);
        assert_eq!(p.issues[0].line, 3);
    }
}
