//! nccl-tests before `#wrong` (2017-2021 releases): an `error` column with
//! the largest deviation from the expected values (`%5.0le`: `2e-07`),
//! checked by the tool against a tolerance per datatype; and how such
//! output looks when pasted without its `#` lines or its column header.

use crate::evidence::measurement::parse_number;

/// A header line pasted without its `#` (a paste that lost it, as in
/// NVIDIA/nccl-tests issue #37): the column header and the trailer
/// lines, which no data row can be mistaken for (rows start with a size);
/// and the `nThread` line, whose counts the reader takes.
pub(super) fn unhashed_header(t: &str) -> Option<&str> {
    let header = column_names(t).is_some();
    let trailer = t.starts_with("Out of bounds values")
        || t.starts_with("Avg bus bandwidth")
        || t.starts_with("nThread ");
    (header || trailer).then_some(t)
}

/// The table's column header, its names in the words of the format with
/// `size` and `count`, and whether its times are milliseconds. The first
/// nccl-tests (2017) and NCCL 1's own tests print `bytes N type op time
/// algbw busbw res` and time a collective in ms (`deltaSec * 1.0E3`,
/// `%7.3f`); every later release prints `size count ...` and time in us.
/// `None` for any other line.
pub(super) fn column_names(h: &str) -> Option<(Vec<String>, bool)> {
    let ms = h.starts_with("bytes");
    if !(ms || h.starts_with("size")) || !h.contains("algbw") || !h.contains("busbw") {
        return None;
    }
    let names = h
        .split_whitespace()
        .map(|w| match (ms, w) {
            (true, "bytes") => "size",
            (true, "N") => "count",
            (true, "op") => "redop",
            (true, "res") => "error",
            (_, w) => w,
        })
        .map(str::to_string)
        .collect();
    Some((names, ms))
}

/// The tolerance old nccl-tests (before `#wrong`, 2017-2021) checked the
/// largest deviation against: `DeltaMaxValue` in its `src/common.cu`
/// (half and bfloat16 1e-2, float 1e-5, double 1e-12; integer types
/// 1e-200, i.e. exact). `None` for a type it does not list.
pub(super) fn tolerance(dtype: &str) -> Option<f64> {
    Some(match dtype {
        "half" | "float16" | "bfloat16" => 1e-2,
        "float" | "float32" => 1e-5,
        "double" | "float64" => 1e-12,
        "char" | "int" | "int8" | "uint8" | "int32" | "uint32" | "int64" | "uint64" => 1e-200,
        _ => return None,
    })
}

/// Whether an old-format `error` value (printed `%5.0le`: `2e-07`,
/// `1e+00`) is clearly over the tolerance of `dtype`: even rounded down
/// by the half digit the format loses, it exceeds it. `None` when the
/// value or the type cannot be read.
pub(super) fn over_tolerance(printed: &str, dtype: &str) -> Option<bool> {
    if non_finite(printed) {
        return Some(true);
    }
    let v = parse_number(printed)?.abs();
    if v == 0.0 {
        return Some(false);
    }
    let tol = tolerance(dtype)?;
    let low = match printed.split_once(['e', 'E']) {
        Some((_, exp)) => v - 0.5 * 10f64.powi(exp.parse::<i32>().ok()?),
        None => v,
    };
    Some(low > tol)
}

/// An `error` printed `nan`, `-nan`, `inf` or `-inf` (glibc's `%le` of a
/// non-finite deviation): a failed data check, like a value over the
/// tolerance. An infinite result element gives `inf`, over any tolerance
/// (the tool counts it too: `maxDelta > DeltaMaxValue`); `nan` means no
/// deviation could be computed at all (the tool's own `>` comparisons are
/// false for NaN, so it may not count it: the check still did not pass).
pub(super) fn non_finite(printed: &str) -> bool {
    let t = printed.trim_start_matches(['-', '+']);
    t.eq_ignore_ascii_case("nan") || t.eq_ignore_ascii_case("inf")
}

/// A data row of the old format: size, count, type, an optional redop or
/// root, then time, algbw, busbw and `error` for each half, the `error`
/// printed `%5.0le` (`0e+00`, `2e-07`, `nan`, `inf`) or `N/A`.
pub(super) fn is_old_row(toks: &[&str]) -> bool {
    let is_err = |t: &str| {
        t == "N/A"
            || non_finite(t)
            || t.split_once('e').is_some_and(|(m, e)| {
                m.len() == 1
                    && m.bytes().all(|b| b.is_ascii_digit())
                    && e.len() == 3
                    && e.starts_with(['+', '-'])
                    && e[1..].bytes().all(|b| b.is_ascii_digit())
            })
    };
    let n = toks.len();
    (n == 11 || n == 12)
        && toks[0].parse::<u64>().is_ok()
        && toks[1].parse::<u64>().is_ok()
        && tolerance(toks[2]).is_some()
        && is_err(toks[n - 5])
        && is_err(toks[n - 1])
        && [n - 8, n - 7, n - 6, n - 4, n - 3, n - 2]
            .iter()
            .all(|&i| parse_number(toks[i]).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_non_finite_error_is_over_any_tolerance() {
        for printed in ["nan", "-nan", "inf", "-inf", "NaN"] {
            assert_eq!(over_tolerance(printed, "float"), Some(true), "{printed}");
            // Even for a type whose tolerance is not listed.
            assert_eq!(over_tolerance(printed, "f8e4m3"), Some(true), "{printed}");
        }
        assert_eq!(over_tolerance("2e-07", "float"), Some(false));
        assert_eq!(over_tolerance("2e-07", "f8e4m3"), None);
        assert!(!non_finite("N/A") && !non_finite("nano") && !non_finite("0e+00"));
        let row = |err: &str| {
            let r = format!("8 2 float sum 21.57 0.00 0.00 {err} 21.24 0.00 0.00 {err}");
            is_old_row(&r.split_whitespace().collect::<Vec<_>>())
        };
        assert!(row("nan") && row("-nan") && row("inf") && row("2e-07"));
        assert!(!row("nanx"));
    }
}
