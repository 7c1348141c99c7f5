//! Sentences for findings about a tool's own output (its checks, errors,
//! units, a cut paste), not about the machine.

use super::{gbs, short};
use crate::diagnosis::Finding;

/// A finding about a tool's own output (its checks, errors, units, a cut paste), not the machine.
pub(super) fn tool_output_summary(f: &Finding) -> String {
    match f {
        Finding::WrongResults {
            tool,
            what,
            errors,
            failed_rows,
        } => format!(
            "{tool} `{what}` {}: its bandwidth figures describe a run that corrupted data.",
            wrong_counts(*errors, *failed_rows)
        ),
        Finding::DataCheckFailed { tool, test, .. } => format!(
            "{tool} `{test}`: the tool's own check found bytes that differ from those sent. A possible hardware fault (memory, link or copy engine), not a run to repeat and forget."
        ),
        Finding::ToolFailed {
            tool,
            message,
            capture_defect,
        } => tool_failed(tool, message, *capture_defect),
        Finding::BitsNotBytes {
            tool,
            example_as_printed,
            example_bytes_per_s,
        } => format!(
            "{tool} reports bits: {example_as_printed} is {} (bytes). Compare like with like.",
            gbs(*example_bytes_per_s)
        ),
        Finding::BidirectionalSum {
            test,
            example_bytes_per_s,
            ..
        } => format!(
            "`{test}` figures are bidirectional (up to {} here): the sum of both directions, twice what one direction carries.",
            gbs(*example_bytes_per_s)
        ),
        Finding::Truncated { file, message } => format!("{}: {message}", short(file)),
        // Not a tool-output kind: [`summary`] never sends one.
        other => other.name().to_string(),
    }
}

fn tool_failed(tool: &str, message: &str, capture_defect: bool) -> String {
    // A problem's message names its tool (`perftest: Completion with
    // error ...`), for the problems list; said once here.
    let message = message
        .strip_prefix(tool)
        .and_then(|m| m.strip_prefix(": "))
        .unwrap_or(message);
    if capture_defect {
        format!(
            "{tool} could not read a device and stopped (a gap in the capture, not a fault of the node's links): {message}"
        )
    } else {
        format!("{tool}: {message}")
    }
}

/// What a tool said was wrong: the values it counted, and the rows whose
/// check failed where it printed no count (never a count it did not print).
fn wrong_counts(errors: u64, failed_rows: u64) -> String {
    let rows = format!(
        "failed its own data check on {failed_rows} printed row(s) (the tool prints no count of wrong values there)"
    );
    match (errors, failed_rows) {
        (e, 0) => format!("reported {e} wrong value(s)"),
        (0, _) => rows,
        (e, _) => format!("reported {e} wrong value(s) and {rows}"),
    }
}
