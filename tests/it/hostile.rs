//! Hostile inputs and hostile machines (issue 14): each test builds the
//! attack (synthetic; small fixtures live in `tests/fixtures/hostile/`),
//! runs the real binary, and asserts that nothing is lost, nothing hangs
//! and nothing is written where it must not be.

use std::path::Path;

use crate::common::wr;

/// `render --out DIR` into a folder that already holds a user's pages,
/// styles and a `nodes/*/bundle.json`: they all survive, and a second
/// render still removes the pages of a node the first one wrote and the
/// second one no longer has.
#[test]
fn render_out_never_removes_files_it_did_not_write() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path();
    let mine = [
        "notes.html",
        "theme.css",
        "docs/old/index.html",
        "nodes/mine/bundle.json",
        "nodes/mine/index.html",
    ];
    for rel in mine {
        let p = out.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, format!("user file {rel}")).unwrap();
    }
    wr().args([
        "render",
        "captures/dgx1-p100-8gpu-4nic",
        "captures/rtx3090-4gpu",
        "--out",
    ])
    .arg(out)
    .assert()
    .success();
    for rel in mine {
        let text = std::fs::read_to_string(out.join(rel)).unwrap();
        assert_eq!(text, format!("user file {rel}"), "{rel} was changed");
    }
    let nodes = |out: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(out.join("nodes"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let before = nodes(out);
    assert_eq!(before.len(), 3, "{before:?}");
    wr().args(["render", "captures/dgx1-p100-8gpu-4nic", "--out"])
        .arg(out)
        .assert()
        .success();
    let after = nodes(out);
    assert_eq!(
        after.len(),
        2,
        "the second node's pages were not removed: {after:?}"
    );
    for rel in mine {
        assert!(out.join(rel).is_file(), "{rel} was removed");
    }
}
