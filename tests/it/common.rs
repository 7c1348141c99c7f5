//! What several test files share: the binary under test and where the
//! snapshots live.

use assert_cmd::Command;

/// The `wire-report` binary of this build.
pub fn wr() -> Command {
    Command::cargo_bin("wire-report").unwrap()
}

/// Runs `f` with insta writing `tests/snapshots/<name>.snap`, the names
/// the snapshots had when each test file was its own binary (callers
/// prefix the file: `captures__<node>`).
pub fn in_snapshots<R>(f: impl FnOnce() -> R) -> R {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("../snapshots");
    s.set_prepend_module_to_snapshot(false);
    s.bind(f)
}
