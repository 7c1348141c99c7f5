//! Hostile inputs, round three (issue 28): what a mutator cannot reach,
//! such as file kinds at output paths, links planted in an output folder,
//! names that collide, sizes and broken standard streams. Each test builds
//! its attack in a temporary folder (big inputs are generated here, never
//! committed) and drives the real binary.

use std::path::Path;

use crate::common::wr;

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path)
        .unwrap()
        .file_type()
        .is_fifo()
}

/// A reader of `fifo`, open before this returns (so a writer finds it),
/// that collects everything until the writer closes.
fn read_fifo(fifo: &Path) -> std::thread::JoinHandle<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo)
        .unwrap();
    std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = [0u8; 65536];
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        // Non-blocking: 0 bytes before any arrived means no writer yet.
        while std::time::Instant::now() < deadline {
            match f.read(&mut buf) {
                Ok(0) if !got.is_empty() => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("{e}"),
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        got
    })
}

/// Every output path (`render --single-file`, `render --format md --out`,
/// `diff --html`, `collect --from --out`) that is a FIFO is written into
/// (a reader gets the bytes) and stays a FIFO; with no reader it is
/// refused at once, not replaced. A link to `/dev/null` stays a link and
/// `/dev/null` a device. `-` is standard output. Before: as root, the
/// temporary file was renamed over the FIFO, the device or the link.
#[test]
fn an_output_that_is_a_fifo_device_or_link_is_written_into_never_replaced() {
    let d = tempfile::tempdir().unwrap();
    let node = "captures/rtx3090-4gpu";
    let runs: [&[&str]; 4] = [
        &["render", node, "--single-file"],
        &["render", node, "--format", "md", "--out"],
        &["diff", node, node, "--html"],
        &["collect", "--quiet", "--from", node, "--out"],
    ];
    for (i, args) in runs.iter().enumerate() {
        let fifo = d.path().join(format!("fifo{i}"));
        mkfifo(&fifo);
        let reader = read_fifo(&fifo);
        wr().args(*args)
            .arg(&fifo)
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .success();
        // Checked before the join: a replaced FIFO leaves its reader waiting.
        assert!(is_fifo(&fifo), "{args:?} replaced the FIFO");
        let got = reader.join().unwrap();
        assert!(got.len() > 1000, "{args:?}: {} bytes read", got.len());
        // No reader: refused at once, and the FIFO stays.
        let out = wr()
            .args(*args)
            .arg(&fifo)
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(err.contains("FIFO with no reader"), "{args:?}: {err}");
        assert!(is_fifo(&fifo), "{args:?} replaced the FIFO");
        // A link to a device stays a link.
        let link = d.path().join(format!("null{i}"));
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        wr().args(*args).arg(&link).assert().success();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
    // `-` is standard output, for every output path.
    let node = &format!("{}/captures/rtx3090-4gpu", env!("CARGO_MANIFEST_DIR"));
    for args in [
        &["render", node, "--single-file", "-"][..],
        &["diff", node, node, "--html", "-"],
    ] {
        let out = wr().current_dir(d.path()).args(args).assert().success();
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        assert!(stdout.contains("<html"), "{args:?}");
        assert!(!d.path().join("-").exists(), "{args:?} wrote a file `-`");
    }
}

/// A link to a regular file at an output path: the link stays and its
/// target gets the new bytes.
#[test]
fn an_output_link_to_a_file_keeps_the_link_and_updates_its_target() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("real.html");
    std::fs::write(&target, "old").unwrap();
    let link = d.path().join("report.html");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    wr().args(["render", "captures/rtx3090-4gpu", "--single-file"])
        .arg(&link)
        .assert()
        .success();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(std::fs::read_to_string(&target).unwrap().contains("<html"));
}

/// A folder link planted in a site (`site/nodes/<slug> -> elsewhere`) is
/// never written through: the render refuses and names it, and the user's
/// file in `elsewhere` is untouched. Before: `elsewhere/index.html` was
/// overwritten.
#[test]
fn a_folder_link_planted_in_the_site_is_never_written_through() {
    let d = tempfile::tempdir().unwrap();
    let site = d.path().join("site");
    let elsewhere = d.path().join("elsewhere");
    std::fs::create_dir_all(site.join("nodes")).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("index.html"), "precious").unwrap();
    std::os::unix::fs::symlink(&elsewhere, site.join("nodes/rtx3090-4gpu")).unwrap();
    let out = wr()
        .args(["render", "captures/rtx3090-4gpu", "--out"])
        .arg(&site)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("is a link inside the site folder"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&elsewhere)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["index.html"]);
    assert_eq!(
        std::fs::read_to_string(elsewhere.join("index.html")).unwrap(),
        "precious"
    );
}
