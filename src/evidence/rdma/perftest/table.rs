//! A perftest results table: its header, its rows and the cells read
//! from them.

use super::*;

/// The header line of a results table.
#[derive(Clone)]
pub(super) struct TableHead {
    /// Column names, units stripped.
    cols: Vec<String>,
    /// A latency table (`t_min[usec]`...) rather than a bandwidth one.
    latency: bool,
    /// Bytes per second in one printed bandwidth unit, and that unit.
    bw_factor: Option<(f64, &'static str)>,
}

/// Reads the `#bytes ...` header line: the columns and the bandwidth unit.
pub(super) fn table_head(hn: usize, head: &str) -> Result<TableHead, ParseError> {
    let cols: Vec<String> = perftest_columns(head);
    let latency = cols.iter().any(|c| c.starts_with("t_"));
    let bw_factor = if head.contains("[Gb/sec]") {
        Some((GBIT_BYTES, "Gb/sec"))
    } else if head.contains("[MB/sec]") {
        Some((MIB, "MB/sec"))
    } else if head.contains("[MiB/sec]") {
        Some((MIB, "MiB/sec"))
    } else {
        None
    };
    if !latency && bw_factor.is_none() {
        return Err(ParseError::new(
            hn,
            "a `BW average[MB/sec]`, `[MiB/sec]` or `[Gb/sec]` column, or `t_min[usec]`",
        ));
    }
    Ok(TableHead {
        cols,
        latency,
        bw_factor,
    })
}

/// Where and how a results table ended.
pub(super) struct TableEnd {
    /// The position after the table's last row.
    next: usize,
    rows: usize,
    /// Ended by a dashes line or another non-row line, not by the file's end.
    closed: bool,
    /// perftest warned about the CPU frequency before or inside the table.
    cpu_warning: bool,
}

/// A results row: a size in bytes, then at least one more number.
pub(super) fn is_data_row(t: &str) -> bool {
    let mut w = t.words();
    w.next().is_some_and(|x| x.parse::<u64>().is_ok())
        && w.next().is_some_and(|x| x.parse::<f64>().is_ok())
}

/// Reads the results table whose header is at `start` and whose rows
/// begin at `rows` (the line after it, unless two runs were pasted
/// interleaved); returns the position after it.
pub(super) fn perftest_table(
    lines: &[(usize, &str)],
    start: usize,
    rows: usize,
    run: &PerftestRun<'_>,
    out: &mut Parsed,
) -> Result<usize, ParseError> {
    let (hn, head) = lines[start];
    let head = table_head(hn, head)?;
    // Everything a cell says that does not change from row to row.
    let title: Text = match &run.title {
        Some(t) => t.clone().into(),
        None => "perftest (header not captured)".into(),
    };
    let mut template = Measurement::new("perftest", hn, run.kind(), title, Statistic::Avg);
    perftest_cell(
        &mut template,
        run,
        head.latency,
        head.bw_factor.map(|x| x.1),
    );
    let end = read_table_rows(lines, rows, &head, &template, run, out)?;
    let i = end.next;
    if end.rows == 0 || !end.closed {
        let at = lines.get(i.saturating_sub(1)).map_or(hn, |x| x.0);
        if end.rows == 0 {
            out.truncated(at, "the results table has no rows");
        } else if i >= lines.len() {
            out.truncated(
                at,
                "the results table is not closed by a dashes line (cut short?)",
            );
        }
    }
    if end.cpu_warning {
        out.note(hn, "perftest warned that CPU frequency is not at its maximum: cycle-based timings may be skewed");
    }
    Ok(i)
}

/// Reads rows from `start` until a dashes line, a line that is not a row,
/// or the end of the transcript.
pub(super) fn read_table_rows(
    lines: &[(usize, &str)],
    start: usize,
    head: &TableHead,
    template: &Measurement,
    run: &PerftestRun<'_>,
    out: &mut Parsed,
) -> Result<TableEnd, ParseError> {
    let mut end = TableEnd {
        next: start,
        rows: 0,
        closed: false,
        cpu_warning: run.cpu_freq_warning,
    };
    // Room for the rows ahead (lines that start with a digit: at least as
    // many as the rows read), so a long table's measurements are not moved
    // again at each doubling.
    let ahead = lines[end.next.min(lines.len())..]
        .iter()
        .take_while(|(_, l)| {
            let t = l.trim_start();
            t.as_bytes().first().is_some_and(u8::is_ascii_digit) || t.starts_with("Conflicting")
        })
        .count();
    out.measurements
        .reserve(ahead * head.cols.len().saturating_sub(2));
    // One buffer for every row's words (not a growing Vec per row).
    let mut toks: Vec<&str> = Vec::with_capacity(head.cols.len() + 1);
    while let Some((n, l)) = lines.get(end.next) {
        let t = crate::evidence::trim(l);
        if t.starts_with("Conflicting CPU frequency values detected") {
            end.cpu_warning = true;
            end.next += 1;
            continue;
        }
        if t.starts_with("---") {
            end.closed = true;
            break;
        }
        toks.clear();
        toks.extend(t.words());
        // Values glued where one overflowed its field, cut apart when the
        // pieces make the row whole and in the order times must have.
        if toks.len() < head.cols.len() {
            let split = unglued(&toks);
            if split.len() == head.cols.len() && times_in_order(&split, &head.cols) {
                out.notes.push(crate::evidence::Note {
                    line: *n,
                    text: "values printed without a space between them (one overflowed its field) cut apart after each one's two decimals".into(),
                });
                toks = split;
            }
        }
        // Anything that is not a data row ends the table (a server's
        // "Waiting for client" banner, a blank line).
        if toks.first().is_none_or(|x| x.parse::<u64>().is_err()) {
            end.closed = true;
            break;
        }
        // A row that cannot be read (or only in part) is a problem at its
        // line; the table goes on.
        // Its cells go straight into the parse's measurements (reserved
        // above), not through a Vec a row.
        let cells = &mut out.measurements;
        let bad = table_row(*n, &toks, head, template, run, end.cpu_warning, cells);
        if let Some(e) = bad {
            out.bad_row(e.line, format!("perftest: expected {}", e.expected));
        }
        end.rows += 1;
        end.next += 1;
    }
    Ok(end)
}

/// The cells of one data row (line `n`), pushed onto `cells`: one per known
/// statistic column; returns why the row could not be read in full (a row
/// that cannot be read pushes none). A row with fewer cells than columns
/// (two values glued together, `2465.901216.65`, that [`unglued`] could
/// not cut apart) keeps the cells left of the first word that is not a
/// plain number; the rest are lost.
pub(super) fn table_row(
    n: usize,
    toks: &[&str],
    head: &TableHead,
    template: &Measurement,
    run: &PerftestRun<'_>,
    cpu_warning: bool,
    cells: &mut Vec<Measurement>,
) -> Option<ParseError> {
    let cols = &head.cols;
    // A row whose cells cannot all be read keeps none of them.
    let at = cells.len();
    if toks.len() == cols.len() {
        let read = table_cells(n, toks, head, template, run, cpu_warning, cells);
        return read.err().inspect(|_| cells.truncate(at));
    }
    let wrong = ParseError::new(
        n,
        format!(
            "{} columns ({}), found {}",
            cols.len(),
            cols.join(" "),
            toks.len()
        ),
    );
    if toks.len() > cols.len() {
        return Some(wrong);
    }
    let plain = |t: &&&str| t.bytes().filter(|b| *b == b'.').count() <= 1;
    let k = toks.iter().take_while(|t| plain(t)).count();
    let kept = TableHead {
        cols: cols[..k].to_vec(),
        ..head.clone()
    };
    if table_cells(n, &toks[..k], &kept, template, run, cpu_warning, cells).is_err() {
        cells.truncate(at);
    }
    let lost = cols[k..].join(", ");
    let e = ParseError::new(
        n,
        format!(
            "{} columns ({}), found {}; `{}` is not one number: {lost} not read",
            cols.len(),
            cols.join(" "),
            toks.len(),
            toks.get(k).unwrap_or(&"")
        ),
    );
    Some(e)
}

/// The words of a row with every word made of values glued together
/// (`2465.901216.65`) cut into them, each value being digits, a point and
/// two decimals as perftest prints its times. A word that is not wholly
/// such values (a message rate's six decimals, `1.2.3`) stays as it is.
pub(super) fn unglued<'a>(toks: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::with_capacity(toks.len() + 1);
    for &t in toks {
        match two_decimal_values(t) {
            Some(values) if values.len() > 1 => out.extend(values),
            _ => out.push(t),
        }
    }
    out
}

/// Whether a latency row's times, as `cols` name them, are in the order
/// they must be: the minimum below the typical and average, the 99th
/// percentile below the 99.9th, and all of them at most the maximum. A
/// row cut apart wrongly would break it.
fn times_in_order(toks: &[&str], cols: &[String]) -> bool {
    let at = |name: &str| {
        cols.iter()
            .position(|c| c == name)
            .and_then(|i| toks.get(i)?.parse::<f64>().ok())
    };
    let below = |a: &str, b: &str| match (at(a), at(b)) {
        (Some(x), Some(y)) => x <= y,
        _ => true,
    };
    below("t_min", "t_typical")
        && below("t_min", "t_avg")
        && below("99% percentile", "99.9% percentile")
        && ["t_typical", "t_avg", "99% percentile", "99.9% percentile"]
            .iter()
            .all(|c| below(c, "t_max"))
}

/// `t` cut into values of digits, a point and two digits, if it is wholly
/// made of them.
pub(super) fn two_decimal_values(t: &str) -> Option<Vec<&str>> {
    let mut values = Vec::new();
    let mut rest = t;
    while !rest.is_empty() {
        let point = rest.find('.')?;
        let end = point + 3;
        let value = rest.get(..end)?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(&value[..point]) || !digits(&value[point + 1..]) {
            return None;
        }
        values.push(value);
        rest = &rest[end..];
    }
    Some(values)
}

/// The cells of a row whose tokens line up with `head`'s columns, pushed
/// onto `cells` (the caller drops them when this fails part-way).
pub(super) fn table_cells(
    n: usize,
    toks: &[&str],
    head: &TableHead,
    template: &Measurement,
    run: &PerftestRun<'_>,
    cpu_warning: bool,
    cells: &mut Vec<Measurement>,
) -> Result<(), ParseError> {
    let cols = &head.cols;
    if toks.len() < 2 {
        return Err(ParseError::new(n, "a byte count and an iteration count"));
    }
    let size: u64 = toks[0]
        .parse()
        .map_err(|_| ParseError::new(n, format!("a byte count, found `{}`", toks[0])))?;
    let iters: u64 = toks[1]
        .parse()
        .map_err(|_| ParseError::new(n, format!("an iteration count, found `{}`", toks[1])))?;
    for (c, v) in cols.iter().zip(toks).skip(2) {
        let value = parse_number(v)
            .ok_or_else(|| ParseError::new(n, format!("a number in `{c}`, found `{v}`")))?;
        let (stat, is_bw) = match c.as_str() {
            "BW peak" => (Statistic::Peak, true),
            "BW average" => (Statistic::Avg, true),
            "t_min" => (Statistic::Min, false),
            "t_max" => (Statistic::Max, false),
            "t_typical" => (Statistic::Typical, false),
            "t_avg" => (Statistic::Avg, false),
            "t_stdev" => (Statistic::Stdev, false),
            "99% percentile" => (Statistic::P99, false),
            "99.9% percentile" => (Statistic::P999, false),
            _ => continue,
        };
        // A peak of 0.00 is not a measurement: the run said it would not
        // measure peak, or this is a server's side.
        if stat == Statistic::Peak && (run.no_peak || value == 0.0) {
            continue;
        }
        let mut m = template.clone();
        m.source = Source::line(n);
        m.statistic = stat;
        m.size_bytes = Some(size);
        m.iterations = Some(iters);
        if cpu_warning {
            m.questions.context = Context::CpuFrequencyWarning;
        }
        if is_bw {
            // A latency table with a `BW` column in a unit we do not know
            // (`BW average[usec]`): that cell is not read, the row is.
            let Some((f, unit)) = head.bw_factor else {
                continue;
            };
            m.bandwidth_bytes_per_s = Some(value * f);
            m.as_printed = crate::evidence::printed(v, unit);
        } else {
            m.latency_s = Some(value * 1e-6);
            m.as_printed = crate::evidence::printed(v, "usec");
        }
        cells.push(m);
    }
    Ok(())
}

/// Column names of a perftest table header, units stripped:
/// `#bytes #iterations BW peak[MB/sec] ...` -> `#bytes`, `#iterations`, `BW peak`...
pub(super) fn perftest_columns(head: &str) -> Vec<String> {
    let mut cols = Vec::new();
    let mut cur = String::new();
    for tok in head.words() {
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(tok);
        if tok.starts_with('#') || tok.ends_with(']') {
            let name = cur.split('[').next().unwrap_or("").trim().to_string();
            cols.push(name);
            cur.clear();
        }
    }
    cols
}
