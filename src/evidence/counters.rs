//! Counter dumps: RDMA port counters as people print them.
//!
//! - `grep . /sys/class/infiniband/*/ports/*/counters/* .../hw_counters/*`
//!   (or `grep -H`, `grep -s`, relative paths): one `path:value` a line;
//!   the adapter, port and group (`counters` or `hw_counters`) come from
//!   the path (`drivers/infiniband/core/sysfs.c` lays it out). A
//!   device-level `<dev>/hw_counters/<name>` has no port. A value that is
//!   not a number (`N/A (no PMA)`: the driver has no performance agent) is
//!   named unreadable.
//! - a loop that prints each file under a heading (`=== ./port_xmit_data
//!   ===`, then the value) or as `name value` (`printf "%-20s %s"`), after
//!   a line naming the directory (`cd /sys/class/infiniband/hfi1_0/ports/1/
//!   hw_counters`, or the prompt `.../mlx5_1/ports/1/counters$`).
//! - `perfquery` and `perfquery -x` (infiniband-diags): `# Port counters:
//!   Lid 10 port 1 (CapMask: ...)`, then `PortXmitData:......123`. It names
//!   the LID it asked, not the adapter (`-C mlx5_0` on the command line
//!   does); a LID may be a switch's port.
//!
//! Values are kept as printed, per the kernel's or the tool's unit (the IB
//! `port_xmit_data` / `PortXmitData` count 4-byte words). Each reading is
//! one [`CounterDump`] per port; two readings of one port (in one paste,
//! or in two files of a node) give its counters' growth ([`growth`]),
//! worked out where the bundle is used, not stored.
//!
//! `cat /sys/class/infiniband/mlx5_0/ports/1/counters/*` (the seed's Lab
//! 3) prints values without their names: no counter can be told from
//! another, so such a paste is not read (`grep .` prints the names).

use crate::evidence::SplitWords;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::rdma::Counter;
use super::{ParseError, Parsed, Source, numbered_lines};

/// How a dump was printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CounterTool {
    /// Files under `/sys/class/infiniband` (grep, cat loops).
    Sysfs,
    /// infiniband-diags `perfquery`.
    Perfquery,
}

/// One reading of one port's (or one device's) counters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CounterDump {
    pub tool: CounterTool,
    /// `mlx5_0`; none where the output does not say (perfquery names a
    /// LID, a loop run in a directory the paste does not show).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// The port; none for a device's own `hw_counters`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u32>,
    /// The LID perfquery asked (perfquery only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lid: Option<u32>,
    /// Which reading of this port in its transcript, from 0.
    pub reading: u32,
    pub values: Vec<CounterValue>,
    pub source: Source,
}

/// One counter's value in one reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CounterValue {
    /// As printed: `port_xmit_data`, `np_cnp_sent`, `PortXmitData`.
    pub name: String,
    /// `counters`, `hw_counters` (sysfs) or `perfquery`.
    pub group: String,
    pub value: u64,
    pub source: Source,
}

impl CounterDump {
    pub(crate) fn for_each_source(&mut self, f: &mut impl FnMut(&mut Source)) {
        f(&mut self.source);
        self.values.iter_mut().for_each(|v| f(&mut v.source));
    }

    pub fn sources(&self) -> impl Iterator<Item = &Source> {
        std::iter::once(&self.source).chain(self.values.iter().map(|v| &v.source))
    }

    /// How the port is named on a page: `mlx5_0`, `LID 21`, or
    /// `an unnamed adapter`.
    pub fn who(&self) -> String {
        match (&self.adapter, self.lid) {
            (Some(a), _) => a.clone(),
            (None, Some(l)) => format!("LID {l}"),
            (None, None) => "an unnamed adapter".to_string(),
        }
    }

    fn key(&self) -> (Option<&str>, Option<u32>, Option<u32>) {
        (self.adapter.as_deref(), self.lid, self.port)
    }
}

/// One port's counters between two readings.
#[derive(Debug, Clone, PartialEq)]
pub struct PortGrowth {
    /// [`CounterDump::who`].
    pub who: String,
    pub port: Option<u32>,
    /// Each counter in both readings: start, end and their difference,
    /// the source being the later reading's row.
    pub counters: Vec<Counter>,
    /// The two readings' first lines.
    pub readings: [Source; 2],
}

/// The growth of every port read at least twice among `dumps` (one
/// transcript's readings, or a node's transcripts together). The earlier
/// reading is the one whose counters are all at most the other's
/// (counters only grow, and files are not named in time order); where
/// neither is (a reset, or not the same counters) no growth is claimed.
/// With three or more readings, the first and last in order are compared.
pub fn growth(dumps: &[CounterDump]) -> Vec<PortGrowth> {
    // Each port's dumps, ports in the order first read (linear: a paste of
    // thousands of ports or counters is no square).
    let mut order: Vec<(Option<&str>, Option<u32>, Option<u32>)> = Vec::new();
    let mut by_port: std::collections::HashMap<_, Vec<&CounterDump>> = Default::default();
    for d in dumps {
        let mine = by_port.entry(d.key()).or_default();
        if mine.is_empty() {
            order.push(d.key());
        }
        mine.push(d);
    }
    let mut out = Vec::new();
    for k in order {
        let mine = &by_port[&k];
        let (Some(a), Some(b)) = (mine.first(), mine.last()) else {
            continue;
        };
        if mine.len() < 2 {
            continue;
        }
        let later: std::collections::HashMap<(&str, &str), &CounterValue> = b
            .values
            .iter()
            .rev()
            .map(|y| ((y.group.as_str(), y.name.as_str()), y))
            .collect();
        let pairs: Vec<(&CounterValue, &CounterValue)> = a
            .values
            .iter()
            .filter_map(|x| Some((x, *later.get(&(x.group.as_str(), x.name.as_str()))?)))
            .collect();
        if pairs.is_empty() {
            continue;
        }
        let forward = pairs.iter().all(|(x, y)| y.value >= x.value);
        let backward = pairs.iter().all(|(x, y)| y.value <= x.value);
        let (first, last, pairs): (&CounterDump, &CounterDump, Vec<_>) = if forward {
            (a, b, pairs)
        } else if backward {
            (b, a, pairs.into_iter().map(|(x, y)| (y, x)).collect())
        } else {
            continue;
        };
        out.push(PortGrowth {
            who: first.who(),
            port: first.port,
            counters: pairs
                .iter()
                .map(|(x, y)| Counter {
                    name: x.name.clone(),
                    group: x.group.clone(),
                    start: x.value,
                    end: y.value,
                    delta: y.value - x.value,
                    source: Some(y.source.clone()),
                })
                .collect(),
            readings: [first.source.clone(), last.source.clone()],
        });
    }
    out
}

/// Where a sysfs path puts a counter: adapter, port, group and name.
struct Place<'a> {
    adapter: &'a str,
    port: Option<u32>,
    group: &'a str,
    name: Option<&'a str>,
}

/// `.../infiniband/mlx5_0/ports/1/counters/port_xmit_data`,
/// `mlx5_0/ports/1/hw_counters` (a directory: no name),
/// `.../infiniband/mlx5_0/hw_counters/lifespan` (the device's).
fn place(path: &str) -> Option<Place<'_>> {
    let segs: Vec<&str> = path
        .trim_end_matches('$')
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    let g = segs
        .iter()
        .rposition(|s| *s == "counters" || *s == "hw_counters")?;
    let name = segs.get(g + 1).copied();
    if segs.len() > g + 2 {
        return None;
    }
    let group = segs[g];
    if g >= 3 && segs[g - 2] == "ports" {
        let port = segs[g - 1].parse().ok()?;
        return Some(Place {
            adapter: segs[g - 3],
            port: Some(port),
            group,
            name,
        });
    }
    if group == "hw_counters" && g >= 1 && segs[g - 1] != "ports" {
        return Some(Place {
            adapter: segs[g - 1],
            port: None,
            group,
            name,
        });
    }
    None
}

fn is_name(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 128
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.,".contains(&b))
}

/// A sysfs directory named anywhere in a line: `cd /sys/class/...`, a
/// prompt ending in `.../counters$`.
fn directory(t: &str) -> Option<Place<'_>> {
    t.split([' ', '\t', '"', '\''])
        .filter(|w| w.contains("infiniband/") || w.contains("/ports/"))
        .find_map(|w| place(w).filter(|p| p.name.is_none()))
}

/// `=== ./port_xmit_data ===`.
fn heading(t: &str) -> Option<&str> {
    let inner = t.strip_prefix("===")?.strip_suffix("===")?.trim();
    let name = inner.rsplit('/').next()?;
    is_name(name).then_some(name)
}

/// perfquery's header: `# Port counters: Lid 10 port 1 (...)`, `# Port
/// extended counters: Lid 21 port 1 (CapMask: ...`: LID and port.
fn perfquery_header(t: &str) -> Option<(Option<u32>, Option<u32>)> {
    let rest = t.strip_prefix('#')?.trim_start();
    let rest = rest
        .strip_prefix("Port counters:")
        .or_else(|| rest.strip_prefix("Port extended counters:"))?;
    let w: Vec<&str> = rest.words().take(4).collect();
    let lid = (w.first() == Some(&"Lid"))
        .then(|| w.get(1)?.parse().ok())
        .flatten();
    let port = (w.get(2) == Some(&"port"))
        .then(|| w.get(3)?.trim_end_matches([',', '(']).parse().ok())
        .flatten();
    Some((lid, port))
}

/// `PortXmitData:....................13672645927`: name and value text.
fn perfquery_row(t: &str) -> Option<(&str, &str)> {
    let (name, v) = t.split_once(':')?;
    let v = v.trim_start_matches('.');
    (is_name(name)
        && name.starts_with(|c: char| c.is_ascii_uppercase())
        && t[name.len()..].starts_with(":..."))
    .then_some((name, v.trim()))
}

/// `<path>:value` whose path names a counter file.
fn sysfs_row(t: &str) -> Option<(Place<'_>, &str)> {
    if !(t.contains("counters/")) {
        return None;
    }
    // The value is after the colon that ends the path: the first after
    // the last `counters/` (a PCI path has colons of its own).
    let g = t.rfind("counters/")?;
    let at = g + t[g..].find(':')?;
    let p = place(&t[..at])?;
    p.name?;
    Some((p, t[at + 1..].trim()))
}

pub fn looks_like_counters(text: &str, lines: &[&str]) -> bool {
    let sysfs = has!(text, "counters");
    let perf = has!(text, "Counter");
    (sysfs
        && (lines.iter().any(|l| sysfs_row(l.trim()).is_some())
            || (lines.iter().any(|l| directory(l).is_some())
                && lines.iter().any(|l| {
                    let t = l.trim();
                    heading(t).is_some() || name_value(t).is_some()
                }))))
        || (perf
            && lines.iter().any(|l| {
                let t = l.trim();
                perfquery_header(t).is_some() || t.starts_with("SymbolErrorCounter:...")
            }))
}

/// The reading being filled.
struct Current {
    tool: CounterTool,
    adapter: Option<String>,
    port: Option<u32>,
    lid: Option<u32>,
    values: Vec<CounterValue>,
    /// (group, name) of the values read, to see a counter come round again.
    names: std::collections::HashSet<(String, String)>,
    source: usize,
}

/// A port's key: adapter, port, LID.
type PortKey = (Option<String>, Option<u32>, Option<u32>);

/// A counter dump as it is read: the readings made, the one being filled,
/// and what a later line needs of the earlier ones.
#[derive(Default)]
struct Reader {
    out: Parsed,
    dumps: Vec<CounterDump>,
    /// Readings so far per port (each dump's `reading`), kept as they are
    /// made rather than counted again at each one.
    readings: std::collections::HashMap<PortKey, u32>,
    cur: Option<Current>,
    // The directory a loop runs in, and a heading waiting for its value.
    dir: Option<(String, Option<u32>, String)>,
    pending: Option<(usize, String)>,
    /// perfquery's LID and port, from its header.
    pq: Option<(Option<u32>, Option<u32>)>,
}

impl Reader {
    fn flush(&mut self) {
        let Some(c) = self.cur.take() else { return };
        if c.values.is_empty() {
            return;
        }
        let seen = self
            .readings
            .entry((c.adapter.clone(), c.port, c.lid))
            .or_insert(0);
        let reading = *seen;
        *seen = seen.saturating_add(1);
        self.dumps.push(CounterDump {
            tool: c.tool,
            adapter: c.adapter,
            port: c.port,
            lid: c.lid,
            reading,
            values: c.values,
            source: Source::line(c.source),
        });
    }

    /// Adds a value to the reading of its port, starting a new reading
    /// where the port changes or the counter was already read in this one.
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        tool: CounterTool,
        adapter: Option<&str>,
        port: Option<u32>,
        lid: Option<u32>,
        group: &str,
        name: &str,
        value: u64,
        line: usize,
    ) {
        let same = self.cur.as_ref().is_some_and(|c| {
            c.tool == tool
                && c.adapter.as_deref() == adapter
                && c.port == port
                && c.lid == lid
                && !c.names.contains(&(group.to_string(), name.to_string()))
        });
        if !same {
            self.flush();
            self.cur = Some(Current {
                tool,
                adapter: adapter.map(str::to_string),
                port,
                lid,
                values: Vec::new(),
                names: Default::default(),
                source: line,
            });
        }
        if let Some(c) = &mut self.cur {
            c.names.insert((group.to_string(), name.to_string()));
            c.values.push(CounterValue {
                name: name.to_string(),
                group: group.to_string(),
                value,
                source: Source::line(line),
            });
        }
    }

    /// Reads one line (trimmed, not empty) by its kind.
    fn read(&mut self, n: usize, t: &str) {
        if self.heading_value(n, t) {
            return;
        }
        if let Some((p, v)) = sysfs_row(t) {
            self.sysfs_row(n, &p, v);
            return;
        }
        if let Some(p) = directory(t) {
            self.dir = Some((p.adapter.to_string(), p.port, p.group.to_string()));
            self.out.context_lines.push(n);
            return;
        }
        if let Some(name) = heading(t) {
            self.pending = Some((n, name.to_string()));
            return;
        }
        if let Some(h) = perfquery_header(t) {
            self.flush();
            self.pq = Some(h);
            self.out.context_lines.push(n);
            return;
        }
        if let Some((name, v)) = perfquery_row(t) {
            self.perfquery_row(n, name, v);
            return;
        }
        // `name value` under a directory line (a printf loop).
        if let Some((a, p, g)) = &self.dir
            && let Some((name, v)) = name_value(t)
        {
            let (a, p, g) = (a.clone(), *p, g.clone());
            self.add(CounterTool::Sysfs, Some(&a), p, None, &g, name, v, n);
            return;
        }
        // perfquery's header wrapped by a mail client: `0x0000000)`.
        if self.pq.is_some() && t.starts_with("0x") && t.ends_with(')') && !t.contains(' ') {
            self.out
                .skipped_lines
                .push((n, "perfquery: the end of its wrapped header"));
            return;
        }
        // A loop's own lines (`for f in *; do`, `cat "$file"`, `done`).
        if is_loop_line(t) {
            self.out.skipped_lines.push((n, "a shell loop's own line"));
            return;
        }
        self.out.unread_lines.push(n);
    }

    /// The value of a heading waiting for one: true where this line is
    /// it; where it is not, the heading is a bad row and the line is read
    /// for what it is.
    fn heading_value(&mut self, n: usize, t: &str) -> bool {
        let Some((name_line, name)) = self.pending.take() else {
            return false;
        };
        match (t.parse::<u64>(), &self.dir) {
            (Ok(v), Some((a, p, g))) => {
                let (a, p, g) = (a.clone(), *p, g.clone());
                self.add(CounterTool::Sysfs, Some(&a), p, None, &g, &name, v, n);
                self.out.context_lines.push(name_line);
                true
            }
            (Ok(v), None) => {
                self.add(
                    CounterTool::Sysfs,
                    None,
                    None,
                    None,
                    "counters",
                    &name,
                    v,
                    n,
                );
                self.out.context_lines.push(name_line);
                true
            }
            (Err(_), _) => {
                self.out.bad_row(
                    name_line,
                    format!("counters: `{name}` without a number after it"),
                );
                false
            }
        }
    }

    /// `<path>:value`: a counter where its path puts it.
    fn sysfs_row(&mut self, n: usize, p: &Place<'_>, v: &str) {
        let name = p.name.unwrap_or_default();
        match v.parse::<u64>() {
            Ok(v) => self.add(
                CounterTool::Sysfs,
                Some(p.adapter),
                p.port,
                None,
                p.group,
                name,
                v,
                n,
            ),
            Err(_) => self.out.bad_row(
                n,
                format!(
                    "counters: {} {name} reads `{v}`, not a number (no value to read)",
                    p.adapter
                ),
            ),
        }
    }

    /// `PortXmitData:....123`: a counter of the port perfquery's header
    /// named, or the port itself (`PortSelect`).
    fn perfquery_row(&mut self, n: usize, name: &str, v: &str) {
        let (lid, mut port) = self.pq.unwrap_or((None, None));
        if name == "PortSelect" {
            if port.is_none() {
                port = v.parse().ok();
                self.pq = Some((lid, port));
            }
            self.out.context_lines.push(n);
            return;
        }
        if name.starts_with("CounterSelect") {
            self.out
                .skipped_lines
                .push((n, "perfquery: which counters were selected"));
            return;
        }
        match v.parse::<u64>() {
            Ok(v) => self.add(
                CounterTool::Perfquery,
                None,
                port,
                lid,
                "perfquery",
                name,
                v,
                n,
            ),
            Err(_) => self
                .out
                .bad_row(n, format!("perfquery: {name} reads `{v}`, not a number")),
        }
    }

    /// A last line cut mid-row (`VL15Dro`, a name without its value):
    /// `last` is the paste's last line, in `text`.
    fn cut_last_line(&mut self, text: &str, last: usize) {
        let read_any = self.cur.is_some() || !self.dumps.is_empty() || !self.out.issues.is_empty();
        if read_any
            && let Some(&l) = self.out.unread_lines.last()
            && l == last
        {
            let t = numbered_lines(text)
                .nth(l - 1)
                .map(|x| x.1.trim())
                .unwrap_or("");
            if is_name(t) || t.starts_with('/') {
                self.out.unread_lines.pop();
                self.out
                    .truncated(l, format!("counters: the paste ends mid-row, at `{t}`"));
            }
        }
    }

    /// The dumps once every line of `text` is read (`last` its last line),
    /// with what the paste cut and notes on what the readings cannot say.
    fn finish(mut self, text: &str, last: usize) -> Result<Parsed, ParseError> {
        self.cut_last_line(text, last);
        if let Some((name_line, name)) = self.pending.take() {
            self.out.truncated(
                name_line,
                format!("counters: `{name}` is the last line; its value was cut"),
            );
        }
        self.flush();
        if self.dumps.is_empty() {
            let line = self
                .out
                .issues
                .first()
                .map(|i| i.line)
                .unwrap_or(last.max(1));
            if self.out.issues.is_empty() {
                return Err(ParseError::new(
                    line,
                    "counter rows: `/sys/class/infiniband/<dev>/ports/<n>/counters/<name>:<value>` or perfquery's `Name:....value`",
                ));
            }
        }
        for d in &self.dumps {
            if d.adapter.is_none() && d.lid.is_none() {
                self.out.note(
                    d.source.line,
                    "the paste does not say which adapter these counters are from",
                );
            }
        }
        let multiple = self.dumps.iter().any(|d| d.reading > 0);
        if !multiple && let Some(d) = self.dumps.first() {
            self.out.note(
                d.source.line,
                "one reading: counters are totals since boot (or the last reset); growth needs a second reading",
            );
        }
        let mut out = self.out;
        out.counters = self.dumps;
        Ok(out)
    }
}

pub fn parse_counters(text: &str) -> Result<Parsed, ParseError> {
    let mut r = Reader::default();
    let mut last = 0;
    for (n, l) in numbered_lines(text) {
        last = n;
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        r.read(n, t);
    }
    r.finish(text, last)
}

/// `RcResend   2079`: a counter's name and value.
fn name_value(t: &str) -> Option<(&str, u64)> {
    let mut w = t.words();
    let (name, v) = (w.next()?, w.next()?);
    if w.next().is_some() || !is_name(name) || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    Some((name, v.parse().ok()?))
}

/// The lines of a shell loop or command pasted with its output.
fn is_loop_line(t: &str) -> bool {
    let t = t.trim_start_matches(['#', '$', ' ']);
    let first = t.words().next().unwrap_or("");
    matches!(
        first,
        "for" | "do" | "done" | "echo" | "cat" | "printf" | "cd" | "grep" | "perfquery" | "sudo"
    ) || t.starts_with("done")
}

/// perfquery's adapter where its command line names one (`-C mlx5_0`).
pub(crate) fn settle(p: &mut Parsed, command: Option<&str>) {
    let Some(cmd) = command else { return };
    let w: Vec<&str> = cmd.words().collect();
    let ca = w
        .windows(2)
        .find(|x| x[0] == "-C" || x[0] == "--Ca")
        .map(|x| x[1].to_string());
    let dir = cmd
        .split([' ', '\t', '"', '\''])
        .find_map(|x| place(x).filter(|p| p.name.is_none()))
        .map(|p| (p.adapter.to_string(), p.port));
    for d in &mut p.counters {
        if d.adapter.is_some() {
            continue;
        }
        if d.tool == CounterTool::Perfquery {
            d.adapter.clone_from(&ca);
        } else if let Some((a, port)) = &dir {
            d.adapter = Some(a.clone());
            d.port = d.port.or(*port);
        }
    }
}

#[cfg(test)]
mod tests;
