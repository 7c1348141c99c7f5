//! The checks section: each step of the diagnosis flow with how it
//! ended, what it would need where it did not run, and the node's
//! coverage in one line ("6 of 8 checks that apply ran").

use crate::diagnosis::{Check, State};

pub struct CheckView {
    pub id: &'static str,
    /// `passed`, `finding`, `not-checked`, `not-applicable`.
    pub state: &'static str,
    pub asks: &'static str,
    /// What the state rests on: the findings' count and worst severity,
    /// the command that would run it, or why it does not apply.
    pub detail: String,
}

pub(super) fn views(checks: &[Check]) -> Vec<CheckView> {
    checks
        .iter()
        .map(|c| CheckView {
            id: c.step.id(),
            state: c.state.as_str(),
            asks: c.step.def().asks,
            detail: detail(c),
        })
        .collect()
}

/// What a check's state rests on, in words (the page and the markdown).
pub fn detail(c: &Check) -> String {
    match c.state {
        State::Passed => "ran; nothing found".into(),
        State::Finding => format!(
            "{} finding(s), the worst {}",
            c.findings,
            c.worst.map(|s| s.as_str()).unwrap_or("info")
        ),
        State::NotChecked => format!("needs: {}", c.needs.unwrap_or_default()),
        State::NotApplicable => format!("does not apply: {}", c.why.unwrap_or_default()),
    }
}

/// `6 of 8 checks that apply ran`.
pub fn coverage(checks: &[Check]) -> String {
    let applies = checks
        .iter()
        .filter(|c| c.state != State::NotApplicable)
        .count();
    let ran = checks
        .iter()
        .filter(|c| matches!(c.state, State::Passed | State::Finding))
        .count();
    format!("{ran} of {applies} checks that apply ran")
}

/// What to run next: the first check that applies and did not run, with
/// its command.
pub fn next(checks: &[Check]) -> Option<String> {
    checks
        .iter()
        .find(|c| c.state == State::NotChecked)
        .map(|c| format!("{}: {}", c.step.id(), c.needs.unwrap_or_default()))
}
