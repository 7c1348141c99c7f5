//! Kernel modules: `lsmod`, whole or through `grep` (`lsmod | grep
//! nvidia`, `lsmod | grep -i peer`), as people paste it when GPUDirect
//! RDMA does not work.
//!
//! A row (`nvidia_peermem  16384  0`) says a module is loaded, and so
//! does a name in another row's `Used by` column (the modules that hold
//! it: lsmod prints every holder, from `/sys/module/<name>/holders`).
//! That a module is *not* loaded is said in two ways only:
//! - the command would have printed its row and did not: a whole
//!   `lsmod`, or a grep whose pattern matches its name ([`filter`]); an
//!   empty `lsmod | grep nv_peer_mem` is such a listing, with no rows;
//! - a module it must hold is listed, and the holders listed do not name
//!   it: `nvidia_peermem` and `nv_peer_mem` use symbols of `nvidia` and
//!   `ib_core` ([`HOLDS`]), so a `nvidia` row whose `Used by` lacks them
//!   says neither is loaded.
//!
//! Without the command line the rows say what is loaded and nothing more,
//! unless lsmod's own header (`Module  Size  Used by`) is there: that is
//! read as a whole listing.

pub mod filter;

use crate::evidence::SplitWords;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ParseError, Parsed, Source, numbered_lines};

/// One `lsmod` listing: its rows, and the command that printed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModuleListing {
    /// `lsmod | grep -i peer` (prompt taken off), when the paste kept it:
    /// it says which modules an absent row rules out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// lsmod's header row (`Module Size Used by`) was printed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub header: bool,
    /// A line among its rows could not be read as one (a paste cut or
    /// wrapped mid-row): a module without a row may be on it, so the
    /// command rules none out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
    pub rows: Vec<ModuleRow>,
    /// The listing's first line; for a grep that printed nothing, its
    /// command line.
    pub source: Source,
}

/// One row: `nvidia  56598528  147 nvidia_uvm,nvidia_peermem,...`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ModuleRow {
    pub name: String,
    pub size_bytes: u64,
    /// The `Used by` count as printed (`-` when lsmod prints none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used: Option<u64>,
    /// The modules that hold this one, as listed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub used_by: Vec<String>,
    /// The `Used by` list ends in a comma, where lsmod never prints one:
    /// the paste cut or wrapped the row there, so names may be missing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub holders_cut: bool,
    pub source: Source,
}

/// Modules that a module cannot be loaded without holding (it uses their
/// symbols), so a listed row of one of them whose `Used by` omits it
/// says it is not loaded. `nvidia_peermem` calls `nvidia_p2p_get_pages`
/// (nvidia) and `ib_register_peer_memory_client` (MLNX_OFED's ib_core),
/// as `nv_peer_mem` did before it (NVIDIA driver README, chapter
/// "GPUDirect RDMA Peer Memory Client"; Mellanox/nv_peer_memory).
pub const HOLDS: &[(&str, &[&str])] = &[
    ("nvidia_peermem", &["nvidia", "ib_core"]),
    ("nv_peer_mem", &["nvidia", "ib_core"]),
];

/// What the listings of a node say about one module.
#[derive(Debug, Clone, PartialEq)]
pub enum Said {
    /// Loaded: its row, or the row that names it as a holder.
    Loaded(Source),
    /// Not loaded: the listing whose command would have printed it, or
    /// the row of a module it must hold.
    Absent(Source),
}

impl ModuleListing {
    /// What the command printed (every module, a grep's, or unknown).
    pub fn reach(&self) -> filter::Reach {
        match &self.command {
            Some(c) => filter::reach_of(c)
                .unwrap_or_else(|| filter::Reach::Unknown("not an lsmod command".into())),
            None if self.header => filter::Reach::All,
            None => filter::Reach::Unknown("the command line is not in the paste".into()),
        }
    }

    /// What this listing says about `module`.
    pub fn says(&self, module: &str) -> Option<Said> {
        for r in &self.rows {
            if r.name == module || r.used_by.iter().any(|u| u == module) {
                return Some(Said::Loaded(r.source.clone()));
            }
        }
        if !self.cut && self.reach().covers(module) {
            return Some(Said::Absent(self.source.clone()));
        }
        let held = HOLDS.iter().find(|(m, _)| *m == module)?.1;
        self.rows
            .iter()
            .find(|r| held.contains(&r.name.as_str()) && r.holders_complete())
            .map(|r| Said::Absent(r.source.clone()))
    }
}

impl ModuleRow {
    /// The `Used by` list can be trusted whole: no more names than the
    /// count (each holder takes a reference), and not cut off by a `,`.
    fn holders_complete(&self) -> bool {
        !self.holders_cut
            && self
                .used
                .is_some_and(|n| self.used_by.len() as u64 <= n && n < 100_000)
    }
}

/// What every listing of a node says about `module`: loaded where any
/// listing shows it, else absent where one rules it out. A listing whose
/// command would have printed a row another listing shows (an empty
/// `lsmod | grep nvidia` beside a listing with the `nvidia` row) lost its
/// output or ran elsewhere: it rules nothing out.
pub fn state(listings: &[ModuleListing], module: &str) -> Option<Said> {
    let shown: Vec<&str> = listings
        .iter()
        .flat_map(|l| &l.rows)
        .map(|r| r.name.as_str())
        .collect();
    let said: Vec<Said> = listings
        .iter()
        .filter(|l| {
            let reach = l.reach();
            !shown
                .iter()
                .filter(|m| !l.rows.iter().any(|r| r.name == **m))
                .any(|m| reach.covers(m))
        })
        .filter_map(|l| l.says(module))
        .collect();
    said.iter()
        .find(|s| matches!(s, Said::Loaded(_)))
        .or_else(|| said.first())
        .cloned()
}

/// Whether lsmod's header row (`Module  Size  Used by`) gets through.
fn prints_header(r: &filter::Reach) -> bool {
    r.covers("Module")
}

/// A command that prints something whenever it runs: a whole `lsmod` (or
/// a grep that keeps its header), or a device tool that prints at least
/// a line of its own (`ibstat`, `nvidia-smi topo -m`; not `sudo modprobe`,
/// a script or `docker`, which may print nothing). A run of such command
/// lines with nothing printed between them is a list of commands, not a
/// session.
pub fn prints_always(command: &str) -> bool {
    if let Some(r) = filter::reach_of(command) {
        return prints_header(&r);
    }
    let mut words = command.words().skip_while(|w| *w == "sudo");
    words
        .next()
        .map(|w| w.rsplit('/').next().unwrap_or(w))
        .is_some_and(|p| super::scan::DEVICE_TOOLS.contains(&p))
}

/// `Module  Size  Used by`.
pub(crate) fn is_header(t: &str) -> bool {
    t.words().eq(["Module", "Size", "Used", "by"])
}

/// A module name as lsmod prints it (`/proc/modules`: `[A-Za-z0-9_]`,
/// dashes in a few out-of-tree names).
fn is_module_name(w: &str) -> bool {
    !w.is_empty()
        && w.len() <= 64
        && w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        // Every module has a letter in its name (`8021q` too): a row of
        // numbers (numactl's distances, `10 12 12 12`) is no listing.
        && w.bytes().any(|b| b.is_ascii_alphabetic())
}

/// A row: name, size, count, and the holders (comma-separated) when any.
/// Where a run of `lsmod` rows (two or more, no header: `lsmod | grep
/// nvidia`) ends `lines`, after other text: the index of its first row.
/// Many commands' outputs pasted with no prompt between them put such a
/// listing after another tool's.
pub(crate) fn rows_at_end(lines: &[&str]) -> Option<usize> {
    let mut first = None;
    let mut rows = 0;
    for (i, l) in lines.iter().enumerate().rev() {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        if row(t, 0).is_none() {
            return (rows >= 2 && first.is_some_and(|f| f > 0)).then_some(first?);
        }
        rows += 1;
        first = Some(i);
    }
    None
}

fn row(t: &str, line: usize) -> Option<ModuleRow> {
    let mut w = t.words();
    let name = w.next().filter(|n| is_module_name(n))?;
    let size = w.next()?.parse().ok()?;
    let count = w.next()?;
    let used = match count {
        "-" => None,
        c => Some(c.parse().ok()?),
    };
    let mut cut = false;
    let holders: Vec<String> = match w.next() {
        None => Vec::new(),
        Some(list) => {
            cut = list.ends_with(',');
            let names: Vec<&str> = list.split(',').filter(|s| !s.is_empty()).collect();
            if !names.iter().all(|n| is_module_name(n)) {
                return None;
            }
            names.into_iter().map(String::from).collect()
        }
    };
    // `[permanent]`, `(O)`-style marks after the holders are allowed.
    if w.any(|x| !(x.starts_with('[') || x.starts_with('('))) {
        return None;
    }
    Some(ModuleRow {
        name: name.to_string(),
        size_bytes: size,
        used,
        used_by: holders,
        holders_cut: cut,
        source: Source::line(line),
    })
}

/// The command of an in-text prompt line that runs lsmod (a block of
/// several `lsmod | grep` runs read together keeps their command lines),
/// also quoted as markdown inline code and labelled with a colon
/// (`` `lsmod | grep -E 'nvidia|mlx5'`: ``).
fn lsmod_command(t: &str) -> Option<&str> {
    let t = t.strip_suffix(':').map_or(t, str::trim_end);
    let cmd = super::scan::prompt_command(t)?;
    filter::reach_of(cmd).map(|_| cmd)
}

pub fn looks_like_lsmod(text: &str, lines: &[&str]) -> bool {
    if has!(text, "Used by") && lines.iter().any(|l| is_header(l)) {
        return true;
    }
    // Every line but the last must be a row; the last may be cut by the
    // paste (`nvidia_peermem   163`). The first line that is neither ends
    // the look (most blocks that come here are not lsmod).
    let mut listed = lines
        .iter()
        .map(|l| l.trim())
        .filter(|t| !t.is_empty() && lsmod_command(t).is_none());
    let Some(mut last) = listed.next() else {
        return false;
    };
    let mut rows = 0;
    for t in listed {
        if row(last, 0).is_none() {
            return false;
        }
        rows += 1;
        last = t;
    }
    row(last, 0).is_some() || rows > 0 && is_cut_row(last)
}

/// The start of a row the paste cut: a name, then perhaps the size and
/// the count (`nvidia_peermem   163`, `nvidia_pe`).
fn is_cut_row(t: &str) -> bool {
    let w: Vec<&str> = t.words().collect();
    let digits = |x: &str| x.bytes().all(|b| b.is_ascii_digit());
    w.len() <= 3
        && w.first().is_some_and(|n| is_module_name(n))
        && w.get(1).is_none_or(|x| digits(x))
        && w.get(2).is_none_or(|x| *x == "-" || digits(x))
}

/// Parses `lsmod` output: an optional header, then rows; an lsmod
/// command line inside the text starts another listing.
pub fn parse_lsmod(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let mut cur: Option<ModuleListing> = None;
    let start = |command: Option<&str>, line: usize| ModuleListing {
        command: command.map(String::from),
        header: false,
        cut: false,
        rows: Vec::new(),
        source: Source::line(line),
    };
    for (n, l) in numbered_lines(text) {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(cmd) = lsmod_command(t) {
            out.modules.extend(cur.take());
            cur = Some(start(Some(cmd), n));
            continue;
        }
        let listing = cur.get_or_insert_with(|| start(None, n));
        if is_header(t) {
            listing.header = true;
            continue;
        }
        match row(t, n) {
            Some(r) => listing.rows.push(r),
            None => {
                listing.cut = true;
                out.bad_row(
                    n,
                    format!(
                        "lsmod: expected a module row (`name size count [used by]`), found `{t}`"
                    ),
                )
            }
        }
    }
    out.modules.extend(cur);
    if out.modules.iter().all(|m| m.rows.is_empty() && !m.header) {
        return Err(ParseError::new(
            1,
            "lsmod rows (`name size count [used by]`)",
        ));
    }
    Ok(out)
}

/// A grep of lsmod that printed nothing: the listing its command line
/// (at `line`) makes, or `None` when the command is not an lsmod one, or
/// is one that cannot print nothing (a whole `lsmod` prints its header,
/// and so does a grep that keeps it): there the paste lost the output,
/// or the text lists commands to run (`$ lsmod` then `$ lsmod | grep
/// scull`, a how-to's steps).
pub fn empty_listing(command: &str, line: usize) -> Option<ModuleListing> {
    match filter::reach_of(command)? {
        filter::Reach::Unknown(_) => return None,
        r if prints_header(&r) => return None,
        _ => {}
    }
    Some(ModuleListing {
        command: Some(command.to_string()),
        header: false,
        cut: false,
        rows: Vec::new(),
        source: Source::line(line),
    })
}

/// The block's command line names its first listing, when the parser
/// did not see one; a listing whose filter is not read gets a note.
pub fn settle(p: &mut Parsed, command: Option<&str>) {
    if let Some(first) = p.modules.first_mut()
        && first.command.is_none()
    {
        first.command = command.map(String::from);
    }
    let notes: Vec<(usize, String)> = p
        .modules
        .iter()
        .filter_map(|m| match (m.reach(), &m.command) {
            (filter::Reach::Unknown(why), Some(c)) => Some((
                m.source.line,
                format!("`{c}`: {why}, so a module without a row may still be loaded"),
            )),
            _ => None,
        })
        .collect();
    for (line, text) in notes {
        p.note(line, text);
    }
}

#[cfg(test)]
mod tests;
