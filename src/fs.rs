//! The one place that reads and writes files. Every error names the path;
//! every write is atomic (a temporary file in the same directory, then a
//! rename), so a reader never sees half a bundle and concurrent writers never
//! interleave.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

/// Reads a whole file as bytes.
pub fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("failed to read `{}`", path.display()))
}

/// Reads a whole file as UTF-8 text.
pub fn read_text(path: &Path) -> anyhow::Result<String> {
    let bytes = read(path)?;
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "`{}`: not UTF-8 text (byte {} is invalid); is it a binary file?",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// Writes `bytes` to `path` atomically, creating parent directories, and
/// flushes it to disk before the rename. `-` means standard output.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_file(path, bytes, true)
}

/// Writes `bytes` to `path` atomically (temporary file, then rename) but
/// does not flush it: a run that writes many files calls [`sync_dirs`] once
/// at the end instead of paying one `fsync` per file. `-` means standard
/// output.
pub fn write_unsynced(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_file(path, bytes, false)
}

/// Makes everything written so far under each of `dirs` durable: one
/// `syncfs` per directory's filesystem (Linux), or one `sync` elsewhere.
/// The end of a run of [`write_unsynced`] calls.
pub fn sync_dirs(dirs: &[&Path]) -> anyhow::Result<()> {
    for dir in dirs {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let d = std::fs::File::open(dir)
                .with_context(|| format!("failed to open `{}` to sync it", dir.display()))?;
            // SAFETY: syncfs takes any open descriptor and only flushes.
            if unsafe { libc::syncfs(d.as_raw_fd()) } != 0 {
                return Err(std::io::Error::last_os_error())
                    .with_context(|| format!("failed to sync `{}` to disk", dir.display()));
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = dir;
            // SAFETY: sync takes no arguments and only flushes.
            unsafe { libc::sync() };
        }
    }
    Ok(())
}

/// A rendered site is thousands of small files that can be rendered again:
/// each is still replaced atomically, but not flushed one by one.
fn write_file(path: &Path, bytes: &[u8], sync: bool) -> anyhow::Result<()> {
    if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)
            .and_then(|_| out.flush())
            .context("failed to write to standard output")?;
        return Ok(());
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)
        .with_context(|| format!("failed to create directory `{}`", dir.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".wire-report-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .with_context(|| format!("failed to create a temporary file in `{}`", dir.display()))?;
    tmp.write_all(bytes)
        .and_then(|_| {
            if sync {
                tmp.as_file().sync_all()
            } else {
                Ok(())
            }
        })
        .with_context(|| format!("failed to write `{}`", path.display()))?;
    // A temporary file is private (0600); what we write is for readers
    // (a web server, a colleague): make it 0644 like any other output.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = tmp
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    tmp.persist(path).map_err(|e| e.error).with_context(|| {
        format!(
            "failed to move the new file into place at `{}`",
            path.display()
        )
    })?;
    Ok(())
}

/// Writes every file of a rendered site under `dir` (each atomically) and
/// removes files a previous render left that this one does not have, so
/// the folder is exactly the site.
pub fn write_site(
    dir: &Path,
    files: &std::collections::BTreeMap<String, Vec<u8>>,
) -> anyhow::Result<()> {
    use rayon::prelude::*;
    files
        .par_iter()
        .try_for_each(|(rel, bytes)| write_site_file(dir, rel, bytes))?;
    remove_stale(dir, &|rel| files.contains_key(rel))
}

/// Writes one file of a site under `dir` (atomically, not flushed), unless
/// it already holds these bytes: keeps timestamps and makes re-renders cheap.
pub fn write_site_file(dir: &Path, rel: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let path = dir.join(rel);
    if std::fs::read(&path).is_ok_and(|old| old == *bytes) {
        return Ok(());
    }
    write_file(&path, bytes, false)
}

/// Removes the site files under `dir` that this render did not write
/// (`written` says which it did), and directories left empty.
pub fn remove_stale(dir: &Path, written: &dyn Fn(&str) -> bool) -> anyhow::Result<()> {
    for e in walkdir::WalkDir::new(dir).contents_first(true) {
        let e = e.with_context(|| format!("failed to walk `{}`", dir.display()))?;
        let rel = e
            .path()
            .strip_prefix(dir)
            .unwrap_or(e.path())
            .to_string_lossy()
            .replace('\\', "/");
        if e.file_type().is_file() && !written(&rel) && is_site_file(&rel) {
            std::fs::remove_file(e.path())
                .with_context(|| format!("failed to remove stale `{}`", e.path().display()))?;
        } else if e.file_type().is_dir()
            && e.path() != dir
            && std::fs::read_dir(e.path()).is_ok_and(|mut d| d.next().is_none())
        {
            let _ = std::fs::remove_dir(e.path());
        }
    }
    Ok(())
}

/// Files a render writes (and may remove when stale); anything else in the
/// folder is left alone.
fn is_site_file(rel: &str) -> bool {
    rel.ends_with(".html")
        || rel.ends_with(".css")
        || (rel.starts_with("nodes/") && rel.ends_with("bundle.json"))
}

/// Fails early, before any long work, when `dir` cannot be created or
/// written.
pub fn check_writable_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("failed to create directory `{}`", dir.display()))?;
    tempfile::tempfile_in(dir)
        .map(drop)
        .with_context(|| format!("directory `{}` is not writable", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn names_the_path_when_a_read_fails() {
        let err = read_text(Path::new("/nonexistent/x.txt")).unwrap_err();
        assert!(format!("{err:#}").contains("`/nonexistent/x.txt`"));
    }
}
