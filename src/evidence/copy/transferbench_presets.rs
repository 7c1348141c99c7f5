//! TransferBench's `scaling` and `p2p` presets, read the way its source
//! prints them (TransferBench.cpp, `RunScalingBenchmark` and
//! `RunPeerToPeerBenchmarks`, v1.3x-v1.5x):
//!
//! - scaling: `- Copying <N> bytes from GPU <g> to other devices`, then a
//!   `NumCUs  CPU00 ... GPU00 ...` table: one row per CU count, each value
//!   `t.transferBandwidth` of one GFX-executed copy from GPU g to the
//!   column's device, printed `%7.2f` GB/s (bytes / 1e9 / ms * 1000), and
//!   a closing ` Best  v(cus)...` row.
//! - p2p: `Bytes Per Direction <N>`, then `Unidirectional copy peak
//!   bandwidth GB/s [Local read / Remote write] (GPU-Executor: GFX)` with
//!   ` SRC+EXE\DST` columns and `CPU 00  ->` rows (the source device
//!   executes); with `SHOW_ITERATIONS` each row is followed by `min`,
//!   `max` and ` sd` rows. The `Bidirectional` table has three rows per
//!   source: `->` (source to column, measured while the reverse copy
//!   runs), `<-` (column to source, the reverse copy) and `<->` (their
//!   sum, printed by adding the two: noted, not read again). Each value is the transfer's average over its iterations
//!   (`numBytesActual / 1e9 / avgTime * 1000`); `N/A` is a pair not run.
//!   The `Averages (During ...)` lines are TransferBench's own means of the
//!   cells above and are not read again.

use super::{Buffers, CopyEngine, GB, Kind, Measurement, Statistic, Text, parse_number};
use crate::evidence::SplitWords;
use crate::evidence::answers::{Context, DirectionNote, Outstanding, Path, Unit};
use crate::evidence::{IssueKind, Parsed, numbered_lines};

pub fn is_scaling(text: &str) -> bool {
    // The whole-text searches first: a line pass only where they match.
    has!(text, "GPU-GFX Scaling benchmark:")
        || has!(text, "- Copying ")
            && has!(text, "NumCUs ")
            && text.lines().any(|l| l.trim_start().starts_with("NumCUs "))
}

pub fn is_p2p(text: &str) -> bool {
    has!(text, "copy peak bandwidth GB/s [")
        || has!(text, "SRC+EXE\\DST")
            && text
                .lines()
                .any(|l| l.trim_start().starts_with("SRC+EXE\\DST"))
}

/// `CPU00`, `GPU 03` -> `CPU0`, `GPU3`.
fn device(kind: &str, idx: &str) -> Option<String> {
    let i: u32 = idx.parse().ok().filter(|i| *i < 100_000)?;
    matches!(kind, "CPU" | "GPU").then(|| format!("{kind}{i}"))
}

/// Column names of a header: `CPU00 GPU00` or `CPU 00 GPU 00`.
fn columns(tokens: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        if (t == "CPU" || t == "GPU")
            && let Some(d) = tokens.get(i + 1).and_then(|x| device(t, x))
        {
            out.push(d);
            i += 2;
            continue;
        }
        if let Some(d) = t.get(..3).and_then(|k| device(k, &t[3..])) {
            out.push(d);
        }
        i += 1;
    }
    out
}

fn kind_of(src: &str, dst: &str) -> Kind {
    match (src.starts_with("CPU"), dst.starts_with("CPU")) {
        (true, true) => Kind::H2h,
        (true, false) => Kind::H2d,
        (false, true) => Kind::D2h,
        _ if src == dst => Kind::D2d,
        _ => Kind::P2pCopy,
    }
}

fn buffers(src: &str, dst: &str) -> Buffers {
    match (src.starts_with("CPU"), dst.starts_with("CPU")) {
        (false, false) => Buffers::Device,
        (true, true) => Buffers::Host,
        _ => Buffers::Mixed,
    }
}

/// The scaling preset's table.
pub fn parse_scaling(text: &str) -> Parsed {
    let mut out = Parsed::default();
    let mut bytes: Option<u64> = None;
    let mut exe: Option<String> = None;
    let mut cols: Vec<String> = Vec::new();
    // The table runs from its `NumCUs` header to its `Best` row: text that
    // ends in between was cut (the CU counts to come are not printed).
    let mut open = false;
    let mut last = 0;
    // One buffer for every line's words (not a Vec per line).
    let mut toks: Vec<&str> = Vec::new();
    for (n, l) in numbered_lines(text) {
        let t = l.trim();
        if !t.is_empty() {
            last = n;
        }
        if let Some(rest) = t.strip_prefix("- Copying ") {
            let w: Vec<&str> = rest.words().collect();
            bytes = w.first().and_then(|v| v.parse().ok());
            exe = w
                .iter()
                .position(|x| *x == "GPU")
                .and_then(|k| w.get(k + 1))
                .and_then(|i| device("GPU", i));
            continue;
        }
        toks.clear();
        toks.extend(t.words());
        if toks.first() == Some(&"NumCUs") {
            cols = columns(&toks[1..]);
            open = true;
            continue;
        }
        if toks.first() == Some(&"Best") {
            open = false;
            out.note(
                n,
                "the `Best` row repeats the highest value of each column; not read again",
            );
            continue;
        }
        let Some(cus) = toks.first().and_then(|c| c.parse::<u32>().ok()) else {
            continue;
        };
        if cols.is_empty() {
            out.bad_row(n, "a `NumCUs CPU00 ... GPU00` header before this row");
            continue;
        }
        let vals = &toks[1..];
        if vals.len() < cols.len() {
            out.truncated(
                n,
                format!(
                    "the {cus}-CU row is cut after {} of {} values; its values are not read",
                    vals.len(),
                    cols.len()
                ),
            );
            continue;
        }
        let src = exe.clone().unwrap_or_else(|| "GPU (not stated)".into());
        // What every cell of the row says the same: made once, shared.
        let src_text = Text::from(&src);
        let executor = Text::from(format!("{cus} CU(s) of {src}"));
        let route = Text::from(format!("{src} -> {src} -> the column's device"));
        for (dst, v) in cols.iter().zip(vals) {
            let Some(bw) = parse_number(v) else {
                out.bad_row(n, format!("a GB/s value, found `{v}`"));
                continue;
            };
            let mut m = Measurement::new(
                "TransferBench",
                n,
                kind_of(&src, dst),
                "scaling preset",
                Statistic::Avg,
            );
            m.src = Some(src_text.clone());
            m.dst = Some(dst.into());
            m.size_bytes = bytes;
            m.bandwidth_bytes_per_s = Some(bw * GB);
            m.as_printed = crate::evidence::printed(v, "GB/s");
            m.buffers = buffers(&src, dst);
            m.copy_engine = CopyEngine::Sm;
            let q = &mut m.questions;
            q.unit = Unit::GigabytesPerS;
            q.direction = DirectionNote::SourceToDestination;
            q.outstanding = Outstanding::Executor {
                executor: executor.clone(),
            };
            // The same words for every cell of the series (the cell's dst).
            q.path = Path::Transfer {
                route: route.clone(),
            };
            q.context = Context::OneTransferAtATime;
            out.measurements.push(m);
        }
    }
    // A row cut mid-way already says where the text stops.
    if open && !out.issues.iter().any(|i| i.kind == IssueKind::Truncated) {
        out.cut(last, "the rest of the table and its `Best` row");
    }
    out
}

/// Which table of the p2p preset a row belongs to.
#[derive(Clone, Copy, PartialEq)]
enum Table {
    Uni,
    Bi,
}

/// A p2p table's column names (`SRC\DST  CPU 00 ... GPU 07`), and room
/// for its cells (a row per device, three for a bidirectional table: `->`,
/// `<-`, `<->`) before its rows: the measurements are not moved at each
/// doubling.
fn header_columns(t: &str, table: Option<Table>, out: &mut Parsed) -> Vec<Text> {
    let toks: Vec<&str> = t.words().collect();
    let cols: Vec<Text> = columns(&toks[1..]).into_iter().map(Text::from).collect();
    let per_row = if table == Some(Table::Bi) { 3 } else { 1 };
    out.measurements.reserve(cols.len() * cols.len() * per_row);
    cols
}

/// The p2p preset's tables.
pub fn parse_p2p(text: &str) -> Parsed {
    let mut out = Parsed::default();
    let mut bytes: Option<u64> = None;
    let mut table: Option<Table> = None;
    let mut title = String::new();
    let mut facts = TitleFacts::of("");
    let mut tests: Vec<(&str, Text)> = Vec::new();
    let mut cols: Vec<Text> = Vec::new();
    // A table is open from its title to its `Averages` line (releases
    // before those lines end a table at its last row): text that ends
    // inside one, with fewer `->` rows than its header names, was cut.
    let mut open = false;
    let mut rows = 0usize;
    let mut last = 0;
    // One buffer for every line's words (not a Vec per line).
    let mut toks: Vec<&str> = Vec::new();
    for (n, l) in numbered_lines(text) {
        let t = l.trim();
        if !t.is_empty() {
            last = n;
        }
        if let Some(v) = t.strip_prefix("Bytes Per Direction") {
            bytes = v.trim().parse().ok();
            continue;
        }
        if t.contains("copy peak bandwidth GB/s") {
            table = Some(if t.starts_with("Bidirectional") {
                Table::Bi
            } else {
                Table::Uni
            });
            title = t.to_string();
            facts = TitleFacts::of(t);
            tests.clear();
            open = true;
            rows = 0;
            continue;
        }
        if t.starts_with("SRC+EXE\\DST") || t.starts_with("SRC\\DST") {
            cols = header_columns(t, table, &mut out);
            continue;
        }
        if t.starts_with("Averages (During") {
            open = false;
            out.note(
                n,
                "TransferBench's own mean of the cells above; not read again",
            );
            continue;
        }
        if t == "...." || t == "..." {
            out.note(n, "elided by whoever captured it");
            continue;
        }
        toks.clear();
        toks.extend(t.words());
        let (Some(kind), Some(idx), Some(tag)) = (toks.first(), toks.get(1), toks.get(2)) else {
            continue;
        };
        let Some(row) = device(kind, idx) else {
            continue;
        };
        let Some(table) = table else {
            out.bad_row(n, "a `copy peak bandwidth GB/s` title before this row");
            continue;
        };
        let Some((stat, reverse)) = row_tag(&mut out, n, &row, tag) else {
            continue;
        };
        if *tag == "->" {
            rows += 1;
        }
        let vals = &toks[3..];
        if vals.len() < cols.len() {
            out.truncated(
                n,
                format!(
                    "the row is cut after {} of {} values; its values are not read",
                    vals.len(),
                    cols.len()
                ),
            );
            continue;
        }
        let test = test_name(&mut tests, &title, tag);
        let row = Text::from(row);
        for (col, v) in cols.iter().zip(vals) {
            if *v == "N/A" {
                continue;
            }
            let Some(bw) = parse_number(v) else {
                out.bad_row(n, format!("a GB/s value or N/A, found `{v}`"));
                continue;
            };
            let (src, dst) = if reverse { (col, &row) } else { (&row, col) };
            let at = Cell {
                line: n,
                test: &test,
                facts,
                table,
                tag,
                stat,
                bytes,
            };
            out.measurements.push(p2p_cell(&at, src, dst, bw, v));
        }
    }
    if open && rows < cols.len() {
        out.cut(
            last,
            format!(
                "{} of the {} rows of `{title}`",
                cols.len() - rows,
                cols.len()
            ),
        );
    }
    out
}

/// The test name of `tag`'s rows under `title` (`<title> <tag>`), made
/// once per title and tag (`tests` is emptied at each title) and shared.
fn test_name<'a>(tests: &mut Vec<(&'a str, Text)>, title: &str, tag: &'a str) -> Text {
    if let Some((_, x)) = tests.iter().find(|(k, _)| *k == tag) {
        return x.clone();
    }
    let x = Text::from(format!("{title} {tag}"));
    tests.push((tag, x.clone()));
    x
}

/// What a p2p row's tag says: its statistic, and whether its values went
/// from the column to the row (`<-`); `None` for rows not read (noted).
fn row_tag(out: &mut Parsed, n: usize, row: &str, tag: &str) -> Option<(Statistic, bool)> {
    Some(match tag {
        "->" => (Statistic::Avg, false),
        "<-" => (Statistic::Avg, true),
        "<->" => {
            // `sumBw = avgBandwidth[0][dst] + avgBandwidth[1][dst]`: the
            // two rows above, added; they are the measurements.
            out.note(
                n,
                format!("{row} <->: the sum of the `->` and `<-` rows above; not read again"),
            );
            return None;
        }
        "min" => (Statistic::Min, false),
        "max" => (Statistic::Max, false),
        "sd" => {
            out.note(n, "per-iteration standard deviation row; not read");
            return None;
        }
        other => {
            out.bad_row(
                n,
                format!("`->`, `<-`, `<->`, `min`, `max` or `sd`, found `{other}`"),
            );
            return None;
        }
    })
}

/// What a p2p table's title says of its cells: which end executes, by
/// which engine, and the route (`None`: not said). Read once per title,
/// not per cell.
#[derive(Clone, Copy)]
struct TitleFacts {
    remote_read: bool,
    gpu_engine: CopyEngine,
    route: Option<&'static str>,
}

impl TitleFacts {
    fn of(title: &str) -> TitleFacts {
        TitleFacts {
            remote_read: title.contains("[Remote read"),
            gpu_engine: if title.contains("GPU-Executor: DMA") {
                CopyEngine::Ce
            } else if title.contains("GPU-Executor: GFX") {
                CopyEngine::Sm
            } else {
                CopyEngine::Unknown
            },
            route: if title.contains("[Local read / Remote write]") {
                Some("source -> source (local read) -> destination (remote write)")
            } else if title.contains("[Remote read / Local write]") {
                Some("source (remote read) -> destination -> destination (local write)")
            } else {
                None
            },
        }
    }
}

/// Where a p2p cell was printed: its line, table and row tag.
struct Cell<'a> {
    line: usize,
    /// `<title> <tag>`.
    test: &'a Text,
    facts: TitleFacts,
    table: Table,
    tag: &'a str,
    stat: Statistic,
    bytes: Option<u64>,
}

/// One value of the p2p preset: `bw` GB/s from `src` to `dst`, printed `v`.
fn p2p_cell(at: &Cell<'_>, src: &Text, dst: &Text, bw: f64, v: &str) -> Measurement {
    let mut m = Measurement::new(
        "TransferBench",
        at.line,
        kind_of(src, dst),
        at.test.clone(),
        at.stat,
    );
    m.src = Some(src.clone());
    m.dst = Some(dst.clone());
    m.size_bytes = at.bytes;
    m.bandwidth_bytes_per_s = Some(bw * GB);
    m.as_printed = crate::evidence::printed(v, "GB/s");
    m.buffers = buffers(src, dst);
    // The executor: the copy's source (local read) or destination
    // (remote read); a CPU executes with threads, a GPU as the
    // title says.
    let exe = if at.facts.remote_read { dst } else { src };
    m.copy_engine = if exe.starts_with("CPU") {
        CopyEngine::Unknown
    } else {
        at.facts.gpu_engine
    };
    let q = &mut m.questions;
    q.unit = Unit::GigabytesPerS;
    // `<-` rows: the column's device copied to the row's (src and dst
    // say so); the words for a read test's matrix would be wrong here.
    q.direction = if at.tag == "<-" {
        DirectionNote::SourceToDestination
    } else {
        DirectionNote::RowToColumn
    };
    // `Bytes Per Direction` is the cell's size. The title says which end
    // executes: the source (local read, remote write) or the destination.
    if let Some(route) = at.facts.route {
        q.path = Path::Transfer {
            route: route.into(),
        };
    }
    q.context = match at.table {
        Table::Uni => Context::OneTransferAtATime,
        Table::Bi => Context::ReverseCopyAtOnce,
    };
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_rows_become_cells_and_a_cut_row_is_flagged() {
        let p = parse_scaling(
            "GPU-GFX Scaling benchmark:\n- Copying 1024 bytes from GPU 1 to other devices\nNumCUs   CPU00   GPU00   GPU01\n   1     1.50    2.00    3.00\n   2     1.60\n",
        );
        assert_eq!(p.measurements.len(), 3);
        let m = &p.measurements[2];
        assert_eq!(
            (m.src.as_deref(), m.dst.as_deref()),
            (Some("GPU1"), Some("GPU1"))
        );
        assert_eq!(m.kind, Kind::D2d);
        assert_eq!(m.bandwidth_bytes_per_s, Some(3.0e9));
        assert_eq!(p.issues[0].line, 5);
    }

    /// Synthetic: the p2p preset's shape as TransferBench's source prints
    /// it (bidirectional table with `->`, `<-`, `<->`).
    #[test]
    fn p2p_bidirectional_rows_say_which_way_each_value_went() {
        let p = parse_p2p(
            "Bytes Per Direction 64\nBidirectional copy peak bandwidth GB/s [Local read / Remote write] (GPU-Executor: GFX)\n     SRC\\DST    GPU 00    GPU 01\n  GPU 00  ->       N/A     50.00\n  GPU 00 <-        N/A     40.00\n  GPU 00 <->       N/A     90.00\n",
        );
        let got: Vec<(&str, &str, f64)> = p
            .measurements
            .iter()
            .map(|m| {
                (
                    m.src.as_deref().unwrap(),
                    m.dst.as_deref().unwrap(),
                    m.bandwidth_bytes_per_s.unwrap(),
                )
            })
            .collect();
        assert_eq!(got, vec![("GPU0", "GPU1", 50e9), ("GPU1", "GPU0", 40e9)]);
        assert_eq!(p.notes[0].line, 6, "the sum row is noted");
        // Synthetic: one `->` row of the two the header names, no
        // `Averages` line: the text stops inside the table.
        assert_eq!(p.issues.len(), 1);
        assert_eq!(p.issues[0].kind, IssueKind::Truncated);
        assert_eq!(p.issues[0].line, 6);
    }

    #[test]
    fn a_p2p_table_with_every_row_is_whole_without_an_averages_line() {
        // Synthetic, in the shape of releases that print no `Averages`.
        let head = "Unidirectional copy peak bandwidth GB/s [Local read / Remote write] (GPU-Executor: GFX)\n SRC+EXE\\DST    GPU 00    GPU 01\n  GPU 00  ->   1000.00     50.00\n";
        let whole = format!("{head}  GPU 01  ->     50.00   1000.00\n");
        assert!(parse_p2p(&whole).issues.is_empty());
        let cut = parse_p2p(head);
        assert_eq!(cut.measurements.len(), 2);
        assert_eq!(cut.issues[0].kind, IssueKind::Truncated);
        assert!(
            cut.issues[0]
                .message
                .starts_with("cut after line 3: 1 of the 2 rows")
        );
    }
}
