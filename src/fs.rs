//! The one place that reads and writes files. Every error names the path;
//! every write is atomic (a temporary file in the same directory, then a
//! rename), so a reader never sees half a bundle and concurrent writers never
//! interleave.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The most bytes [`read`] takes from one file: far above any bundle or
/// transcript, far below what hurts.
pub const MAX_READ_BYTES: u64 = 1 << 30;

/// Reads a whole file as bytes: a regular file (a symlink is followed) of
/// at most [`MAX_READ_BYTES`].
pub fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    read_capped(path, MAX_READ_BYTES)
}

/// Reads a regular file of at most `cap` bytes. A FIFO, a socket or a
/// device (`/dev/zero` behind a link) is refused without blocking: it is
/// opened non-blocking and checked before one byte is read. A file that
/// grows past `cap` while it is read is refused too, never buffered whole.
pub fn read_capped(path: &Path, cap: u64) -> anyhow::Result<Vec<u8>> {
    use std::io::Read;
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let file = opts
        .open(path)
        .with_context(|| format!("failed to read `{}`", path.display()))?;
    let meta = file
        .metadata()
        .with_context(|| format!("failed to read `{}`", path.display()))?;
    if !meta.is_file() {
        anyhow::bail!(
            "`{}` is not a regular file (a FIFO, socket or device); not read",
            path.display()
        );
    }
    // Sized from the metadata so the file is read in one call, not in
    // doubling chunks; the cap still bounds what is read.
    let mut bytes = Vec::with_capacity(meta.len().min(cap) as usize + 1);
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("failed to read `{}`", path.display()))?;
    if bytes.len() as u64 > cap {
        anyhow::bail!(
            "`{}` is larger than {} MB; not read",
            path.display(),
            cap / 1_000_000
        );
    }
    Ok(bytes)
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

/// Where one output goes, decided by looking at the path before a byte is
/// written. A device or a FIFO (`/dev/null`, `/dev/stdout`, a named pipe)
/// is written into and never replaced: as root, renaming a temporary file
/// over `/dev/null` destroys the device node for the whole machine. A link
/// to a regular file is followed, so the link stays and its target gets the
/// new bytes; only a regular file (or nothing) is ever renamed over.
enum Target {
    /// `-`.
    Stdout,
    /// An existing device, FIFO or socket, opened for writing (no create,
    /// no truncate).
    Stream(std::fs::File),
    /// A regular file or nothing yet: a temporary file beside `dest` is
    /// renamed onto it.
    Replace { dest: PathBuf },
}

impl Target {
    fn of(path: &Path) -> anyhow::Result<Target> {
        if path.as_os_str() == "-" {
            return Ok(Target::Stdout);
        }
        let fail = || format!("failed to write `{}`", path.display());
        // The path itself first: nothing there (the common case, a new
        // output) costs one look; only a link is looked through.
        let own = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Target::Replace {
                    dest: path.to_path_buf(),
                });
            }
            Err(e) => return Err(e).with_context(fail),
        };
        let is_link = own.file_type().is_symlink();
        let meta = match is_link {
            false => own,
            true => match std::fs::metadata(path) {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => anyhow::bail!(
                    "`{}` is a link to nothing; not written (remove the link or name its target)",
                    path.display()
                ),
                Err(e) => return Err(e).with_context(fail),
            },
        };
        if meta.is_dir() {
            anyhow::bail!("`{}` is a directory; give a file to write", path.display());
        }
        if meta.is_file() {
            let dest = match is_link {
                true => std::fs::canonicalize(path).with_context(fail)?,
                false => path.to_path_buf(),
            };
            return Ok(Target::Replace { dest });
        }
        Ok(Target::Stream(open_stream(path)?))
    }
}

/// Opens an existing device or FIFO for writing. Non-blocking first, so a
/// FIFO nobody reads is refused at once instead of hanging the run; then
/// blocking again, so a slow reader is waited for rather than lost.
fn open_stream(path: &Path) -> anyhow::Result<std::fs::File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let file = match opts.open(path) {
        Ok(f) => f,
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => anyhow::bail!(
            "`{}` is a FIFO with no reader (or a device without its driver); not written",
            path.display()
        ),
        Err(e) => {
            return Err(e).with_context(|| format!("failed to write `{}`", path.display()));
        }
    };
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor we own, reading then setting flags.
        let ok = unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
        };
        if !ok {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("failed to write `{}`", path.display()));
        }
    }
    Ok(file)
}

/// An output written piece by piece ([`AtomicWriter::write`]) and finished
/// by [`AtomicWriter::commit`]. A regular file is built as a temporary file
/// and moved into place only then: a reader never sees half of it, and a
/// failed run leaves the old file as it was. A device or FIFO is written
/// into as the pieces come, and `-` is standard output. For outputs too
/// large to build in memory first (`render --single-file` of a fleet).
pub struct AtomicWriter {
    path: PathBuf,
    sink: Sink,
    bytes: u64,
}

enum Sink {
    Temp {
        tmp: std::io::BufWriter<tempfile::NamedTempFile>,
        dest: PathBuf,
    },
    Stream(std::io::BufWriter<std::fs::File>),
    Stdout(std::io::Stdout),
}

impl AtomicWriter {
    /// Looks at `path` (see [`Target`]) and opens the output: a temporary
    /// file beside a regular file (creating its directory), the device or
    /// FIFO itself, or standard output for `-`.
    pub fn create(path: &Path) -> anyhow::Result<AtomicWriter> {
        let sink = match Target::of(path)? {
            Target::Stdout => Sink::Stdout(std::io::stdout()),
            Target::Stream(f) => Sink::Stream(std::io::BufWriter::new(f)),
            Target::Replace { dest } => {
                let dir = parent_dir(&dest);
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("failed to create directory `{}`", dir.display()))?;
                let tmp = temp_builder().tempfile_in(dir).with_context(|| {
                    format!("failed to create a temporary file in `{}`", dir.display())
                })?;
                Sink::Temp {
                    tmp: std::io::BufWriter::new(tmp),
                    dest,
                }
            }
        };
        Ok(AtomicWriter {
            path: path.to_path_buf(),
            sink,
            bytes: 0,
        })
    }

    /// An unnamed scratch file for work that ends up in this output: beside
    /// it when it is a regular file (same disk), else in the temp folder
    /// (never in `/dev`).
    pub fn scratch(&self) -> anyhow::Result<std::fs::File> {
        match &self.sink {
            Sink::Temp { dest, .. } => {
                let dir = parent_dir(dest);
                tempfile::tempfile_in(dir).with_context(|| {
                    format!("failed to create a scratch file in `{}`", dir.display())
                })
            }
            _ => tempfile::tempfile().context("failed to create a scratch file in the temp folder"),
        }
    }

    pub fn write(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        let r = match &mut self.sink {
            Sink::Temp { tmp, .. } => tmp.write_all(bytes),
            Sink::Stream(f) => f.write_all(bytes),
            Sink::Stdout(s) => s.lock().write_all(bytes),
        };
        self.bytes += bytes.len() as u64;
        r.with_context(|| format!("failed to write `{}`", self.path.display()))
    }

    /// Everything `from` holds, from its start.
    pub fn copy_from(&mut self, from: &mut std::fs::File) -> anyhow::Result<()> {
        use std::io::Seek;
        let r = from.rewind().and_then(|_| match &mut self.sink {
            Sink::Temp { tmp, .. } => std::io::copy(from, tmp),
            Sink::Stream(f) => std::io::copy(from, f),
            Sink::Stdout(s) => std::io::copy(from, &mut s.lock()),
        });
        let n = r.with_context(|| format!("failed to write `{}`", self.path.display()))?;
        self.bytes += n;
        Ok(())
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Flushes the output; a temporary file is synced to disk and moved
    /// into place.
    pub fn commit(self) -> anyhow::Result<()> {
        let path = self.path;
        let fail = || format!("failed to write `{}`", path.display());
        let (tmp, dest) = match self.sink {
            Sink::Stdout(s) => return s.lock().flush().with_context(fail),
            Sink::Stream(mut f) => return f.flush().with_context(fail),
            Sink::Temp { tmp, dest } => (tmp, dest),
        };
        let tmp = tmp
            .into_inner()
            .map_err(|e| e.into_error())
            .and_then(|t| t.as_file().sync_all().map(|_| t))
            .with_context(fail)?;
        tmp.persist(&dest).map_err(|e| e.error).with_context(|| {
            format!(
                "failed to move the new file into place at `{}`",
                dest.display()
            )
        })?;
        Ok(())
    }
}

/// The folder a file goes in (`.` for a bare name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The temporary file every output starts as:
/// `.wire-report-<pid>-XXXXXX.tmp`, named for our process so that the
/// next render can remove what a killed one left ([`sweep_temporaries`])
/// and nothing else. A temporary file is
/// private (0600) by default; what we write is for readers (a web server,
/// a colleague), so it is created 0644 (less what the umask takes, as any
/// program's output), at creation rather than by a chmod per file.
fn temp_builder() -> tempfile::Builder<'static, 'static> {
    static PREFIX: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let prefix = PREFIX.get_or_init(|| {
        let name = temp_name(std::process::id(), "");
        name.strip_suffix(TEMP_SUFFIX).unwrap_or(&name).to_string()
    });
    let mut b = tempfile::Builder::new();
    b.prefix(prefix.as_str()).suffix(TEMP_SUFFIX);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o644));
    }
    b
}

/// One whole output: into standard output, a device or a FIFO as it is,
/// else atomically onto a regular file (see [`Target`]).
fn write_file(path: &Path, bytes: &[u8], sync: bool) -> anyhow::Result<()> {
    match Target::of(path)? {
        Target::Stdout => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)
                .and_then(|_| out.flush())
                .context("failed to write to standard output")
        }
        Target::Stream(mut f) => f
            .write_all(bytes)
            .and_then(|_| f.flush())
            .with_context(|| format!("failed to write `{}`", path.display())),
        Target::Replace { dest } => replace(&dest, bytes, sync),
    }
}

/// A temporary file beside `path`, then a rename onto it. A rendered site
/// is thousands of small files that can be rendered again: each is still
/// replaced atomically, but not flushed one by one unless `sync`.
fn replace(path: &Path, bytes: &[u8], sync: bool) -> anyhow::Result<()> {
    let dir = parent_dir(path);
    std::fs::create_dir_all(dir)
        .with_context(|| format!("failed to create directory `{}`", dir.display()))?;
    let mut tmp = temp_builder()
        .tempfile_in(absolute_dir(dir))
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
    tmp.persist(path).map_err(|e| e.error).with_context(|| {
        format!(
            "failed to move the new file into place at `{}`",
            path.display()
        )
    })?;
    Ok(())
}

/// `dir` joined to the working directory, which is asked once per process
/// (tempfile asks the kernel for it on every relative directory: one call
/// per bundle or page written). The program never changes directory.
fn absolute_dir(dir: &Path) -> std::borrow::Cow<'_, Path> {
    static CWD: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    match CWD.get_or_init(|| std::env::current_dir().ok()) {
        Some(cwd) if dir.is_relative() => cwd.join(dir).into(),
        _ => dir.into(),
    }
}

/// How our temporary files start and end (see [`temp_builder`]).
const TEMP_PREFIX: &str = ".wire-report-";
const TEMP_SUFFIX: &str = ".tmp";

/// This machine's mark in our temporary names: 8 hex digits of its host
/// name's digest. A process id means something only on the machine that
/// gave it: a render on another node writing into the same shared folder
/// (NFS) has files this one must not take for a dead process's.
fn host_tag() -> &'static str {
    static TAG: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TAG.get_or_init(|| {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        crate::ingest::sha256_hex(host.trim().as_bytes())[..8].to_string()
    })
}

/// The name of a temporary file of process `pid` on this machine, with
/// `random` as its unique part: `.wire-report-<host>-<pid>-<random>.tmp`.
pub fn temp_name(pid: u32, random: &str) -> String {
    format!("{TEMP_PREFIX}{}-{pid}-{random}{TEMP_SUFFIX}", host_tag())
}

/// The process that made a temporary file, from its name
/// (`.wire-report-<host>-<pid>-XXXXXX.tmp`); none for any other name, and
/// none for another machine's.
fn temp_owner(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(TEMP_PREFIX)?.strip_suffix(TEMP_SUFFIX)?;
    let rest = rest.strip_prefix(host_tag())?.strip_prefix('-')?;
    let (pid, random) = rest.split_once('-')?;
    let pid_ok = !pid.is_empty() && pid.len() <= 10 && pid.bytes().all(|b| b.is_ascii_digit());
    let random_ok = !random.is_empty() && random.bytes().all(|b| b.is_ascii_alphanumeric());
    if !(pid_ok && random_ok) {
        return None;
    }
    pid.parse().ok().filter(|p| *p > 0)
}

/// Whether a process with this id exists (signal 0 checks without sending).
pub(crate) fn process_alive(pid: i32) -> bool {
    // SAFETY: kill with signal 0 sends nothing; it only checks the id.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Removes, in `dir` and the folders below it (three levels, as deep as a
/// site goes; links not followed), the temporary files of writers that
/// were killed: regular files named `.wire-report-<pid>-XXXXXX.tmp` whose
/// process is gone. A file of any other name, and one of a process still
/// running (a render beside this one), is left alone.
pub fn sweep_temporaries(dir: &Path) {
    fn walk(dir: &Path, depth: usize) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() && depth > 0 {
                walk(&e.path(), depth - 1);
            } else if t.is_file()
                && let Some(pid) = temp_owner(&e.file_name().to_string_lossy())
                && !process_alive(pid)
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    walk(dir, 3);
}

/// The manifest a render leaves in its folder: the relative path of every
/// file it wrote, one a line. The next render removes only files listed
/// there that it no longer writes; anything else in the folder (a user's
/// `index.html`, notes, a `docs/` tree) is never touched.
pub const SITE_MANIFEST: &str = ".wire-report-site";

/// The journal of a render in progress, beside the manifest: each node's
/// files are added to it before they are written, so pages written by a
/// render that then failed or was killed are known to the next render,
/// which removes those it does not write again ([`finish_site`]).
pub const SITE_JOURNAL: &str = ".wire-report-site.pending";

const MANIFEST_HEADER: &str =
    "# wire-report: files the last render wrote here; only these may be removed by the next\n";

/// Writes every file of a rendered site under `dir` (each atomically),
/// then removes the files that the previous render listed in its
/// [`SITE_MANIFEST`] and this one no longer has, then writes the new
/// manifest. A folder without a manifest loses nothing.
pub fn write_site(
    dir: &Path,
    files: &std::collections::BTreeMap<String, Vec<u8>>,
) -> anyhow::Result<()> {
    use rayon::prelude::*;
    files
        .par_iter()
        .try_for_each(|(rel, bytes)| write_site_file(dir, rel, bytes))?;
    finish_site(dir, &files.keys().cloned().collect())
}

/// Writes one file of a site under `dir` (atomically, not flushed), unless
/// it already holds these bytes: keeps timestamps and makes re-renders cheap.
///
/// Writing never follows a link inside `dir`: in a shared site folder a
/// planted `nodes/<slug> -> elsewhere` would otherwise let another user
/// choose where a root render writes. A folder on the way that is a link,
/// or a page path holding a device or FIFO, is refused; a page that is a
/// link is replaced by the page (the rename replaces the link itself).
/// `dir` itself may be a link: the user named it.
pub fn write_site_file(dir: &Path, rel: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let path = dir.join(rel);
    let mut at = dir.to_path_buf();
    let parts: Vec<_> = Path::new(rel).components().collect();
    for c in &parts[..parts.len().saturating_sub(1)] {
        at.push(c);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => anyhow::bail!(
                "`{}` is a link inside the site folder; a render never writes through one (remove it)",
                at.display()
            ),
            _ => {}
        }
    }
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.is_file() => {
            if read(&path).is_ok_and(|old| old == *bytes) {
                return Ok(());
            }
        }
        Ok(m) if m.file_type().is_symlink() => {}
        Ok(_) => anyhow::bail!(
            "`{}` is not a regular file (a folder, FIFO or device); not replaced",
            path.display()
        ),
        Err(_) => {}
    }
    replace(&path, bytes, false)
}

/// Ends a render that wrote `written` (paths relative to `dir`): removes
/// the files the previous render listed in its [`SITE_MANIFEST`] and this
/// one did not write, then writes the new manifest. Nothing the manifest
/// does not list is ever removed.
pub fn finish_site(dir: &Path, written: &std::collections::BTreeSet<String>) -> anyhow::Result<()> {
    let listed = |name: &str| match read(&dir.join(name)) {
        Ok(bytes) => manifest_entries(&String::from_utf8_lossy(&bytes)),
        Err(_) => Vec::new(),
    };
    // What the last render listed, and what any render since began to write.
    let mut previous = listed(SITE_MANIFEST);
    previous.extend(listed(SITE_JOURNAL));
    for rel in previous.iter().filter(|r| !written.contains(*r)) {
        remove_stale(dir, rel)?;
    }
    let mut text = String::from(MANIFEST_HEADER);
    for rel in written {
        text.push_str(rel);
        text.push('\n');
    }
    write_site_file(dir, SITE_MANIFEST, text.as_bytes())?;
    match std::fs::remove_file(dir.join(SITE_JOURNAL)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e)
            .with_context(|| format!("failed to remove `{}`", dir.join(SITE_JOURNAL).display())),
        _ => Ok(()),
    }
}

/// The journal of a site being written ([`SITE_JOURNAL`]): opened at the
/// start of a render, after the temporary files of killed renders are
/// swept away; each node's files are recorded before they are written.
pub struct SiteJournal {
    file: std::sync::Mutex<std::fs::File>,
    path: PathBuf,
}

impl SiteJournal {
    pub fn open(dir: &Path) -> anyhow::Result<SiteJournal> {
        sweep_temporaries(dir);
        let path = dir.join(SITE_JOURNAL);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
            anyhow::bail!(
                "`{}` is not a regular file; a render keeps its journal there (remove it)",
                path.display()
            );
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("failed to open `{}`", path.display()))?;
        Ok(SiteJournal {
            file: std::sync::Mutex::new(file),
            path,
        })
    }

    /// Records that `rels` (paths relative to the site) are about to be
    /// written: one append, before any of them is.
    pub fn intend<'a>(&self, rels: impl IntoIterator<Item = &'a str>) -> anyhow::Result<()> {
        let mut text = String::new();
        for rel in rels {
            text.push_str(rel);
            text.push('\n');
        }
        let mut f = self.file.lock().unwrap_or_else(|e| e.into_inner());
        f.write_all(text.as_bytes())
            .with_context(|| format!("failed to write `{}`", self.path.display()))
    }
}

/// After a render into a folder it created failed: removes the files the
/// journal says it wrote, the journal, and the folders left empty (the
/// site folder too), so a failed render leaves nothing behind.
pub fn abandon_site(dir: &Path) {
    if let Ok(bytes) = read(&dir.join(SITE_JOURNAL)) {
        for rel in manifest_entries(&String::from_utf8_lossy(&bytes)) {
            let _ = remove_stale(dir, &rel);
        }
    }
    let _ = std::fs::remove_file(dir.join(SITE_JOURNAL));
    sweep_temporaries(dir);
    let _ = std::fs::remove_dir(dir.join("nodes"));
    let _ = std::fs::remove_dir(dir);
}

/// The paths a manifest lists that are plain relative paths inside the
/// folder (no `..`, no root, no `.`): a forged manifest cannot point out.
fn manifest_entries(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter(|l| {
            let p = Path::new(l);
            !l.contains('\\')
                && p.components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
        })
        .map(str::to_string)
        .collect()
}

/// Removes one file of a previous render (a regular file, never a link or
/// a folder), then the folders it leaves empty up to `dir`.
fn remove_stale(dir: &Path, rel: &str) -> anyhow::Result<()> {
    let path = dir.join(rel);
    // Through a linked folder the file would be somewhere else: not ours.
    let inside = match (
        path.parent().map(std::fs::canonicalize),
        std::fs::canonicalize(dir),
    ) {
        (Some(Ok(parent)), Ok(root)) => parent.starts_with(root),
        _ => false,
    };
    if !inside {
        return Ok(());
    }
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_file() => std::fs::remove_file(&path)
            .with_context(|| format!("failed to remove stale `{}`", path.display()))?,
        _ => return Ok(()),
    }
    let mut parent = path.parent();
    while let Some(p) = parent.filter(|p| *p != dir && p.starts_with(dir)) {
        if std::fs::remove_dir(p).is_err() {
            break; // not empty (or not ours to judge): stop climbing
        }
        parent = p.parent();
    }
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
mod tests;
