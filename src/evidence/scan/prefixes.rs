//! A line's prefixes: what launchers, loggers and quoting put in front
//! of a tool's line, taken off one after another.

/// Takes off, repeatedly, the prefixes launchers, loggers and quoting put
/// in front of a line: `[rank 3] `, `[1,0]<stdout>:`, `> `, an ISO
/// timestamp, a journald/syslog head (`Dec 01 10:00:00 host prog[123]: `),
/// a Slurm `srun -l` task label (`12: `).
#[inline]
pub fn strip_prefixes(line: &str) -> &str {
    // Asked of every line: the first look is made where it is asked, the
    // loop called only for a line that may have a prefix.
    if !may_have_prefix(line.as_bytes()) {
        return line;
    }
    strip_prefixes_from(line)
}

/// `false` only where no stripper takes anything off `b`, judged by its
/// first bytes: a `[` or `>` may open a prefix; blanks only where a digit
/// follows within a task label's padding (` 3: `); a number only where a
/// timestamp's `-` or a task label's `:` follows it; a month's initial
/// only where journald's `Dec 01 ...` can fit. An indented row or a
/// number (most lines) ends here.
#[inline]
pub(super) fn may_have_prefix(b: &[u8]) -> bool {
    let Some(&c) = b.first() else {
        return false;
    };
    match c {
        b'[' | b'>' => true,
        b' ' => b
            .iter()
            .take(5)
            .find(|c| **c != b' ')
            .is_some_and(u8::is_ascii_digit),
        b'0'..=b'9' => {
            let k = b.iter().take(6).take_while(|c| c.is_ascii_digit()).count();
            (k == 4 && b.get(4) == Some(&b'-')) || b.get(k) == Some(&b':')
        }
        _ => is_month_initial(c) && b.len() >= 16 && b[3] == b' ',
    }
}

/// [`strip_prefixes`] past its first look.
pub(super) fn strip_prefixes_from(mut line: &str) -> &str {
    loop {
        // Every prefix below starts with one of these bytes (a month's
        // initial for journald): most lines end here.
        if !line.as_bytes().first().is_some_and(|b| opens_prefix(*b)) {
            return line;
        }
        let before = line.len();
        // Only the strippers whose prefix can start with this byte, in
        // their order: no two take off a prefix of the same line (each
        // needs its own byte after the first: `[rank` or `[` and a digit,
        // a digit's `-` or `:`), so the prefixes come off as a pass of all
        // six would take them.
        line = match line.as_bytes()[0] {
            b'[' => strip_mpi_tag(strip_rank(line)),
            b'>' => strip_quote(line),
            b'0'..=b'9' => strip_task_label(strip_timestamp(line)),
            b' ' => strip_task_label(line),
            _ => strip_journald(line),
        };
        if line.len() == before {
            return line;
        }
    }
}

/// Whether a prefix [`strip_prefixes`] takes off can start with `b`.
pub(super) fn opens_prefix(b: u8) -> bool {
    matches!(b, b'[' | b'>' | b' ' | b'0'..=b'9') || is_month_initial(b)
}

/// The first letter of a month's short name (`Jan` ... `Dec`).
pub(super) fn is_month_initial(b: u8) -> bool {
    matches!(b, b'A' | b'D' | b'F' | b'J' | b'M' | b'N' | b'O' | b'S')
}

/// `[rank 12] ` or `[rank12]: `.
pub(super) fn strip_rank(line: &str) -> &str {
    let Some(rest) = line.strip_prefix("[rank") else {
        return line;
    };
    let rest = rest.trim_start_matches(' ');
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return line;
    }
    let Some(rest) = rest[digits..].strip_prefix(']') else {
        return line;
    };
    let rest = rest.strip_prefix(':').unwrap_or(rest);
    rest.strip_prefix(' ').unwrap_or(rest)
}

/// Open MPI's `--tag-output`: `[1,0]<stdout>:` (also `<stderr>`).
pub(super) fn strip_mpi_tag(line: &str) -> &str {
    let Some(rest) = line.strip_prefix('[') else {
        return line;
    };
    let Some(close) = rest.find("]<") else {
        return line;
    };
    let ids = &rest[..close];
    if ids.is_empty() || !ids.bytes().all(|b| b.is_ascii_digit() || b == b',') {
        return line;
    }
    let rest = &rest[close + 1..];
    for tag in ["<stdout>:", "<stderr>:", "<stddiag>:"] {
        if let Some(r) = rest.strip_prefix(tag) {
            return r;
        }
    }
    line
}

/// A markdown or e-mail quote: `> `, or a `>` with no space after it (a
/// mail reader's `>>>` nests three quotes without spaces, `>\t` quotes a
/// row that starts with a tab). One level a call; the loop in
/// [`strip_prefixes`] takes the others.
pub(super) fn strip_quote(line: &str) -> &str {
    line.strip_prefix("> ")
        .or_else(|| line.strip_prefix('>'))
        .unwrap_or(line)
}

/// `2024-05-01T12:00:00.123456789Z ` (kubectl logs `--timestamps`), also
/// with a space for the `T` and a numeric offset.
pub(super) fn strip_timestamp(line: &str) -> &str {
    let b = line.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let is = |i: usize, c: u8| b.get(i) == Some(&c);
    let date = (0..4).all(digit) && is(4, b'-') && digit(5) && digit(6) && is(7, b'-');
    let time = digit(8) && digit(9) && (is(10, b'T') || is(10, b' '));
    let clock = digit(11) && digit(12) && is(13, b':') && digit(14) && digit(15) && is(16, b':');
    if !(date && time && clock && digit(17) && digit(18)) {
        return line;
    }
    let mut i = 19;
    if is(i, b'.') || is(i, b',') {
        i += 1;
        while digit(i) {
            i += 1;
        }
    }
    if is(i, b'Z') {
        i += 1;
    } else if (is(i, b'+') || is(i, b'-')) && digit(i + 1) && digit(i + 2) {
        i += 3;
        if is(i, b':') {
            i += 1;
        }
        while digit(i) {
            i += 1;
        }
    }
    match b.get(i) {
        Some(b' ') => &line[i + 1..],
        None => "",
        _ => line,
    }
}

/// journald's and syslog's short format: `Dec 01 10:00:00 host prog[123]: `
/// or `Dec  1 10:00:00 host kernel: ` (month, day, clock, host, the
/// identifier with an optional pid, then `: `). The message after it is
/// kept as it was, its leading spaces included.
pub(super) fn strip_journald(line: &str) -> &str {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let b = line.as_bytes();
    // The month's name compared last: most capitalised lines fail the
    // byte looks first.
    if b.len() < 16
        || !is_month_initial(b[0])
        || b[3] != b' '
        || !MONTHS.iter().any(|m| line.starts_with(m))
    {
        return line;
    }
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let is = |i: usize, c: u8| b.get(i) == Some(&c);
    let day = (digit(4) || is(4, b' ')) && digit(5) && is(6, b' ');
    let clock = digit(7) && digit(8) && is(9, b':') && digit(10) && digit(11) && is(12, b':');
    if !(day && clock && digit(13) && digit(14) && is(15, b' ')) {
        return line;
    }
    let rest = &line[16..];
    let Some((host, rest)) = rest.split_once(' ') else {
        return line;
    };
    let word = |w: &str| {
        !w.is_empty()
            && w.bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"._-/@".contains(&c))
    };
    if !word(host) {
        return line;
    }
    let Some(colon) = rest.find(": ") else {
        return line;
    };
    let ident = &rest[..colon];
    let name = match ident.split_once('[') {
        Some((name, pid)) => {
            let ok = pid
                .strip_suffix(']')
                .is_some_and(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()));
            if !ok {
                return line;
            }
            name
        }
        None => ident,
    };
    if !word(name) {
        return line;
    }
    &rest[colon + 2..]
}

/// Slurm's `srun -l` label: the task number and `: ` (`0: `, `12: `),
/// right-aligned to the widest task number (` 3: `).
pub(super) fn strip_task_label(line: &str) -> &str {
    // Counted only as far as a label reaches (4 blanks, 5 digits): the
    // long indentation of a table's row, or a long number, is refused
    // after a few bytes.
    let b = line.as_bytes();
    let pad = b.iter().take(5).take_while(|c| **c == b' ').count();
    if pad > 4 {
        return line;
    }
    let digits = b[pad..]
        .iter()
        .take(6)
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits == 0 || digits > 5 || pad + digits > 6 {
        return line;
    }
    let rest = &line[pad + digits..];
    if rest == ":" {
        return "";
    }
    rest.strip_prefix(": ").unwrap_or(line)
}
