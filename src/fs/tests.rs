use super::*;

/// Outputs are readable by others: 0644, less what the umask takes
/// (read from /proc, never changed: tests run side by side).
#[cfg(target_os = "linux")]
#[test]
fn outputs_are_0644_less_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let umask = status
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .map(|m| u32::from_str_radix(m.trim(), 8).unwrap())
        .unwrap();
    let d = tempfile::tempdir().unwrap();
    let one = d.path().join("one.json");
    write_unsynced(&one, b"{}").unwrap();
    let two = d.path().join("two.html");
    let mut w = AtomicWriter::create(&two).unwrap();
    w.write(b"<p>").unwrap();
    w.commit().unwrap();
    for p in [one, two] {
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644 & !umask, "{}", p.display());
    }
}

#[test]
fn writes_atomically_and_leaves_no_temporary_file() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("sub/out.json");
    write_atomic(&p, b"one").unwrap();
    write_atomic(&p, b"two").unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"two");
    let names: Vec<_> = std::fs::read_dir(p.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("out.json")]);
}

#[test]
fn a_forged_manifest_cannot_point_outside_the_site() {
    let d = tempfile::tempdir().unwrap();
    let site = d.path().join("site");
    let outside = d.path().join("precious.html");
    std::fs::write(&outside, "mine").unwrap();
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(
        site.join(SITE_MANIFEST),
        format!(
            "../precious.html\n{}\n/etc/passwd\n./x\n",
            outside.display()
        ),
    )
    .unwrap();
    let files = std::collections::BTreeMap::from([("a.html".to_string(), b"a".to_vec())]);
    write_site(&site, &files).unwrap();
    assert_eq!(std::fs::read(&outside).unwrap(), b"mine");
    // Nor through a folder that became a link to elsewhere.
    std::fs::create_dir_all(d.path().join("elsewhere")).unwrap();
    std::fs::write(d.path().join("elsewhere/b.html"), "theirs").unwrap();
    std::fs::write(site.join(SITE_MANIFEST), "a.html\nnodes/b.html\n").unwrap();
    std::os::unix::fs::symlink(d.path().join("elsewhere"), site.join("nodes")).unwrap();
    write_site(&site, &files).unwrap();
    assert!(d.path().join("elsewhere/b.html").exists());
    assert_eq!(
        manifest_entries("# c\na.html\nnodes/x/t0.html\n../y\n"),
        ["a.html", "nodes/x/t0.html"]
    );
}

#[test]
fn a_second_render_removes_only_what_the_first_wrote() {
    let d = tempfile::tempdir().unwrap();
    let one = std::collections::BTreeMap::from([
        ("a.html".to_string(), b"a".to_vec()),
        ("nodes/n/b.html".to_string(), b"b".to_vec()),
    ]);
    write_site(d.path(), &one).unwrap();
    std::fs::write(d.path().join("nodes/n/user.html"), "u").unwrap();
    std::fs::write(d.path().join("c.html"), "c").unwrap();
    let two = std::collections::BTreeMap::from([("a.html".to_string(), b"a2".to_vec())]);
    write_site(d.path(), &two).unwrap();
    assert!(!d.path().join("nodes/n/b.html").exists());
    assert!(d.path().join("nodes/n/user.html").exists());
    assert!(d.path().join("c.html").exists());
    assert_eq!(std::fs::read(d.path().join("a.html")).unwrap(), b"a2");
}

#[test]
fn a_failed_render_into_a_folder_it_made_leaves_no_folder() {
    let d = tempfile::tempdir().unwrap();
    let site = d.path().join("site");
    check_writable_dir(&site).unwrap();
    let journal = SiteJournal::open(&site).unwrap();
    journal
        .intend(["nodes/a/index.html", "nodes/a/t0.html"])
        .unwrap();
    write_site_file(&site, "nodes/a/index.html", b"a").unwrap();
    // The second page was never written: the render failed there.
    abandon_site(&site);
    assert!(!site.exists());
}

#[test]
fn only_our_temporary_names_with_a_process_id_are_ours() {
    assert_eq!(temp_owner(&temp_name(123, "aB9xYz")), Some(123));
    // Another machine's (NFS): not ours to judge by a process id.
    assert_eq!(temp_owner(".wire-report-00000000-123-aB9xYz.tmp"), None);
    for other in [
        ".wire-report-123-aB9xYz.tmp",
        ".wire-report-aB9xYz.tmp",
        ".wire-report-123-.tmp",
        ".wire-report-12a-xyz.tmp",
        ".wire-report-123-x.y.tmp",
        "wire-report-123-xyz.tmp",
        ".wire-report-123-xyz.tmp.bak",
        ".wire-report-site",
        ".wire-report-site.pending",
    ] {
        assert_eq!(temp_owner(other), None, "{other}");
    }
}

#[test]
fn a_fifo_or_a_device_is_refused_without_blocking() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo.txt");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let err = format!("{:#}", read(&fifo).unwrap_err());
    assert!(err.contains("not a regular file"), "{err}");
    let link = d.path().join("zero.txt");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let err = format!("{:#}", read(&link).unwrap_err());
    assert!(err.contains("not a regular file"), "{err}");
    let big = d.path().join("big.txt");
    std::fs::write(&big, vec![b'x'; 2000]).unwrap();
    assert!(read_capped(&big, 1999).is_err());
    assert_eq!(read_capped(&big, 2000).unwrap().len(), 2000);
}

#[test]
fn names_the_path_when_a_read_fails() {
    let err = read_text(Path::new("/nonexistent/x.txt")).unwrap_err();
    assert!(format!("{err:#}").contains("`/nonexistent/x.txt`"));
}
