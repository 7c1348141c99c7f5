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

/// Writes `bytes` to `path` atomically, creating parent directories. `-`
/// means standard output.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
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
        .and_then(|_| tmp.as_file().sync_all())
        .with_context(|| format!("failed to write `{}`", path.display()))?;
    tmp.persist(path).map_err(|e| e.error).with_context(|| {
        format!(
            "failed to move the new file into place at `{}`",
            path.display()
        )
    })?;
    Ok(())
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
