//! NUMA evidence: which CPUs and how much memory each NUMA node has, how
//! far the nodes are from each other, and (lstopo) which PCI devices sit
//! under which node and host bridge.
//!
//! Two tools:
//! - `numactl -H` / `numactl --hardware` (numactl's `hardware()`):
//!   ```text
//!   available: 2 nodes (0-1)
//!   node 0 cpus: 0 2 4 6
//!   node 0 size: 391640 MB
//!   node 0 free: 381953 MB
//!   node distances:
//!   node   0   1
//!     0:  10  21
//!   ```
//!   Sizes are printed as `numa_node_size64() >> 20` followed by `MB`:
//!   MiB, converted to bytes once here. Distances are the ACPI SLIT's
//!   relative figures (10 = local), kept as printed.
//! - lstopo, lstopo-no-graphics and hwloc-ls text (hwloc 1.x and 2.x,
//!   `-v` too): a tree of objects by indentation, objects with a single
//!   child joined by ` + ` on one line:
//!   ```text
//!   Machine (126GB total)
//!     NUMANode L#0 (P#0 63GB)
//!       Package L#0 + L3 L#0 (45MB)
//!         L2 L#0 (256KB) + L1d L#0 (32KB) + L1i L#0 (32KB) + Core L#0 + PU L#0 (P#0)
//!       HostBridge L#0
//!         PCIBridge
//!           PCI 15b3:1017
//!             Net L#2 "hsi0"
//!             OpenFabrics L#3 "mlx5_0"
//!   ```
//!   A node's CPUs are the `P#` of the PUs in its subtree; a device's node
//!   is the NUMANode among its ancestors (hwloc 1.x: the node holds the
//!   package and the bridges) or a memory child of one of its ancestors
//!   (hwloc 2.x: the node is printed first under the package or group
//!   that holds the bridges). Memory sizes are hwloc's, in units of 1024
//!   (`hwloc_memory_size_printf_value`), rounded as printed. A paste that
//!   lost its indentation is read in document order (a device belongs to
//!   the last node printed before it), and says so.
//!
//! A node's `source` is its `node N cpus:` or `NUMANode` line; a distance
//! cell's is its row; a device's is its `PCI` line. `size`/`free` lines,
//! PUs and the OS devices under a PCI device are read as context.

use crate::evidence::SplitWords;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ParseError, Parsed, Source, numbered_lines};

mod lstopo;
#[cfg(test)]
mod tests;

pub use lstopo::{looks_like_lstopo, parse_lstopo};

/// The tool a NUMA topology was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum NumaTool {
    Numactl,
    Lstopo,
}

/// One transcript's NUMA topology.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NumaTopology {
    pub tool: NumaTool,
    pub nodes: Vec<NumaNode>,
    /// The distance matrix as cells (numactl only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub distances: Vec<NumaDistance>,
    /// PCI devices and where they sit (lstopo only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<PlacedDevice>,
    /// Where the listing was read in document order because its
    /// indentation was lost (lstopo): placement is a best reading.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flattened: bool,
    pub source: Source,
}

/// One NUMA node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NumaNode {
    /// The OS index (`node 3`, `P#3`).
    pub node: u32,
    /// The node's CPUs (OS indexes) as ranges, `0-15,128-143`; empty for a
    /// node without CPUs (memory only, or CPUs not shown).
    pub cpus: String,
    pub cpu_count: u32,
    /// Memory of the node (numactl: exact MiB; lstopo: rounded to the unit
    /// it printed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// Free memory when read (numactl only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_bytes: Option<u64>,
    /// The package (socket) the node belongs to, by its `P#` or else its
    /// `L#` (lstopo only): two nodes of one package share its socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<u32>,
    pub source: Source,
}

/// One cell of numactl's distance matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NumaDistance {
    pub from: u32,
    pub to: u32,
    /// The ACPI SLIT figure as printed: 10 local, larger farther.
    pub distance: u32,
    pub source: Source,
}

/// What a PCI device is, as lstopo shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceKind {
    /// A GPU or accelerator: class 3D, an NVIDIA VGA/display device, or
    /// one with a CUDA/OpenCL/NVML/RSMI OS device.
    Gpu,
    /// An RDMA adapter: an `OpenFabrics` OS device or class InfiniBand.
    Rdma,
    /// A network interface without RDMA.
    Nic,
    Other,
}

/// A PCI device in lstopo's tree and where it sits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlacedDevice {
    /// `0000:3b:00.0` (hwloc 2.x prints the address; 1.x prints only
    /// vendor:device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus_id: Option<String>,
    /// Vendor and device, `15b3:101b`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_id: Option<String>,
    /// The class as printed: `InfiniBand`, `3D`, `VGA`, `Ethernet`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    pub kind: DeviceKind,
    /// The OS devices under it: `mlx5_0`, `ib0`, `card0`, `cuda0`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// The NUMA node it is local to; none where the tree puts it outside
    /// every node (a machine without NUMA locality for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_node: Option<u32>,
    /// Its host bridge as printed (`HostBridge L#6 (buses=0000:[3a-3b])`),
    /// or `HostBridge #n` (the n-th printed, from 0) where it has no index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_bridge: Option<String>,
    pub source: Source,
}

impl NumaTopology {
    pub(crate) fn for_each_source(&mut self, f: &mut impl FnMut(&mut Source)) {
        f(&mut self.source);
        self.nodes.iter_mut().for_each(|n| f(&mut n.source));
        self.distances.iter_mut().for_each(|d| f(&mut d.source));
        self.devices.iter_mut().for_each(|d| f(&mut d.source));
    }

    /// Every source it holds, for the bundle's file table.
    pub fn sources(&self) -> impl Iterator<Item = &Source> {
        std::iter::once(&self.source)
            .chain(self.nodes.iter().map(|n| &n.source))
            .chain(self.distances.iter().map(|d| &d.source))
            .chain(self.devices.iter().map(|d| &d.source))
    }

    /// The package of a node, where lstopo said.
    pub fn package_of(&self, node: u32) -> Option<u32> {
        self.nodes.iter().find(|n| n.node == node)?.package
    }

    /// The node a device (by bus id, `0000:3b:00.0` or `3b:00.0`) or OS
    /// device name (`mlx5_0`) sits under, with the device's source.
    pub fn node_of(&self, key: &str) -> Option<(u32, &Source)> {
        let key = key.trim().to_ascii_lowercase();
        let short = |b: &str| b.strip_prefix("0000:").unwrap_or(b).to_string();
        self.devices.iter().find_map(|d| {
            let by_bus = d
                .bus_id
                .as_deref()
                .is_some_and(|b| b == key || short(b) == short(&key));
            let by_name = d.names.iter().any(|n| n.eq_ignore_ascii_case(&key));
            (by_bus || by_name).then_some((d.numa_node?, &d.source))
        })
    }
}

/// CPUs as ranges: `[0, 1, 2, 5]` -> `0-2,5` (sorted, duplicates once).
pub(crate) fn cpu_ranges(cpus: &mut Vec<u32>) -> String {
    cpus.sort_unstable();
    cpus.dedup();
    let mut out = String::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end = cpus[i];
        }
        if !out.is_empty() {
            out.push(',');
        }
        if start == end {
            out.push_str(&start.to_string());
        } else {
            out.push_str(&format!("{start}-{end}"));
        }
        i += 1;
    }
    out
}

/// A trimmed line without a paste's prompt decoration.
fn bare(l: &str) -> &str {
    l.trim()
}

/// `available: 2 nodes (0-1)`.
fn is_available(t: &str) -> bool {
    t.starts_with("available:") && t.contains(" nodes")
}

/// `node 0 cpus: 0 1 2`, `node 0 size: 100 MB`, `node 0 free: 5 MB`:
/// the node and what follows the key.
fn node_line<'a>(t: &'a str, key: &str) -> Option<(u32, &'a str)> {
    let rest = t.strip_prefix("node ")?;
    let (n, rest) = rest.trim_start().split_once(' ')?;
    let node = n.parse().ok()?;
    let value = rest.trim_start().strip_prefix(key)?.strip_prefix(':')?;
    Some((node, value.trim()))
}

/// `  0:  10  21`: a row of the distance matrix.
fn distance_row(t: &str) -> Option<(u32, Vec<u32>)> {
    let (n, rest) = t.split_once(':')?;
    let from = n.trim().parse().ok()?;
    let cells: Option<Vec<u32>> = rest.words().map(|w| w.parse().ok()).collect();
    let cells = cells?;
    (!cells.is_empty()).then_some((from, cells))
}

/// `node   0   1   2`: the matrix's columns.
fn distance_header(t: &str) -> Option<Vec<u32>> {
    let mut w = t.words();
    if w.next() != Some("node") {
        return None;
    }
    let cols: Option<Vec<u32>> = w.map(|x| x.parse().ok()).collect();
    // Linux has at most 1,024 NUMA nodes (NODES_SHIFT 10): a wider header
    // is no numactl matrix (and would cost its square to read).
    cols.filter(|c| !c.is_empty() && c.len() <= 1024)
}

/// `391640 MB` -> bytes (numactl prints MiB).
fn mib(v: &str) -> Option<u64> {
    let mut w = v.words();
    let n: u64 = w.next()?.parse().ok()?;
    (w.next() == Some("MB")).then(|| n.saturating_mul(1 << 20))
}

pub fn looks_like_numactl(text: &str, lines: &[&str]) -> bool {
    (has!(text, "available:") || has!(text, "node distances:") || has!(text, " cpus:"))
        && lines.iter().any(|l| {
            let t = bare(l);
            is_available(t) || t == "node distances:" || node_line(t, "cpus").is_some()
        })
}

pub fn parse_numactl(text: &str) -> Result<Parsed, ParseError> {
    let mut r = Numactl::default();
    let mut last_line = 0;
    for (n, l) in numbered_lines(text) {
        let t = bare(l);
        last_line = n;
        if t.is_empty() {
            continue;
        }
        r.read(n, t);
    }
    r.finish(last_line)
}

/// numactl's facts as they are read, and what a later line needs of the
/// earlier ones (the matrix's header, the rows seen, the nodes shown).
#[derive(Default)]
struct Numactl {
    out: Parsed,
    nodes: Vec<NumaNode>,
    distances: Vec<NumaDistance>,
    /// The `node 0 1 ...` header: its line and columns.
    header: Option<(usize, Vec<u32>)>,
    /// The first line of numactl's: the topology's source.
    first: Option<usize>,
    /// Past `node distances:` or the header: rows of the matrix may follow.
    in_matrix: bool,
    /// Distance rows read, to place a row whose `N:` was taken off.
    rows_seen: usize,
    /// `available: N nodes`: its line and N.
    available: Option<(usize, usize)>,
}

impl Numactl {
    /// Reads one line (trimmed, not empty) by its kind.
    fn read(&mut self, n: usize, t: &str) {
        if is_available(t) {
            self.first.get_or_insert(n);
            self.out.context_lines.push(n);
            self.available = t
                .strip_prefix("available:")
                .and_then(|r| r.words().next())
                .and_then(|w| w.parse::<usize>().ok())
                .map(|c| (n, c));
            return;
        }
        if t.contains("numactl") && (t.contains(" -H") || t.contains("--hardware")) {
            self.out.skipped_lines.push((n, "the command line"));
            return;
        }
        if t == "node distances:" {
            self.first.get_or_insert(n);
            self.out.context_lines.push(n);
            self.in_matrix = true;
            return;
        }
        if let Some((node, cpus)) = node_line(t, "cpus") {
            self.cpus(n, t, node, cpus);
            return;
        }
        if let Some((key, node, v)) = ["size", "free"]
            .iter()
            .find_map(|k| node_line(t, k).map(|(node, v)| (*k, node, v)))
        {
            self.memory(n, t, key, node, v);
            return;
        }
        if let Some(cols) = distance_header(t) {
            self.first.get_or_insert(n);
            self.header = Some((n, cols));
            self.out.context_lines.push(n);
            self.in_matrix = true;
            return;
        }
        if self.in_matrix
            && let Some((from, cells)) = distance_row(t).or_else(|| self.bare_row(t))
        {
            self.distance_row(n, from, cells);
            return;
        }
        if t.starts_with("No NUMA available") {
            self.out
                .tool_error(n, "numactl: no NUMA available on this system");
            return;
        }
        self.out.unread_lines.push(n);
    }

    /// `node 0 cpus: 0 2 4 6`: a node, named by this line.
    fn cpus(&mut self, n: usize, t: &str, node: u32, cpus: &str) {
        self.first.get_or_insert(n);
        let mut list: Vec<u32> = Vec::new();
        let mut bad = false;
        for w in cpus.words() {
            match w.parse() {
                Ok(c) => list.push(c),
                Err(_) => bad = true,
            }
        }
        if bad {
            self.out
                .bad_row(n, format!("numactl: expected CPU numbers, found `{t}`"));
        }
        let cpu_count = u32::try_from(list.len()).unwrap_or(u32::MAX);
        self.nodes.push(NumaNode {
            node,
            cpus: cpu_ranges(&mut list),
            cpu_count,
            size_bytes: None,
            free_bytes: None,
            package: None,
            source: Source::line(n),
        });
    }

    /// `node 0 size: 391640 MB` or `free:` (`key`): memory of a node
    /// whose cpus line came before.
    fn memory(&mut self, n: usize, t: &str, key: &str, node: u32, v: &str) {
        let bytes = mib(v);
        match self.nodes.iter_mut().rev().find(|x| x.node == node) {
            Some(x) if bytes.is_some() => {
                if key == "size" {
                    x.size_bytes = bytes;
                } else {
                    x.free_bytes = bytes;
                }
                self.out.context_lines.push(n);
            }
            Some(_) => self
                .out
                .bad_row(n, format!("numactl: expected `N MB`, found `{t}`")),
            None => {
                self.out
                    .skipped_lines
                    .push((n, "numactl: memory of a node whose cpus line is not shown"));
            }
        }
    }

    /// A row whose `N:` a launcher-prefix reading took off (srun's
    /// `0: ` label looks the same) is the next row in header order.
    fn bare_row(&self, t: &str) -> Option<(u32, Vec<u32>)> {
        let (_, cols) = self.header.as_ref()?;
        let cells: Option<Vec<u32>> = t.words().map(|w| w.parse().ok()).collect();
        let from = *cols.get(self.rows_seen)?;
        cells.filter(|c| c.len() == cols.len()).map(|c| (from, c))
    }

    /// A row of the distance matrix, node `from`'s: one cell per column.
    fn distance_row(&mut self, n: usize, from: u32, cells: Vec<u32>) {
        self.rows_seen += 1;
        // Columns by the header, or (header cut away) by position
        // where the row is as long as the nodes shown.
        let cols: Option<Vec<u32>> = match &self.header {
            Some((_, c)) => Some(c.clone()),
            None if cells.len() == self.nodes.len() => {
                Some(self.nodes.iter().map(|x| x.node).collect())
            }
            None => None,
        };
        let Some(cols) = cols else {
            self.out.bad_row(
                n,
                "numactl: a distance row without the `node 0 1 ...` header, and not one cell per node shown",
            );
            return;
        };
        if cells.len() != cols.len() {
            self.out.truncated(
                n,
                format!(
                    "numactl: distance row {from} has {} cells for {} columns; the cells shown are read",
                    cells.len(),
                    cols.len()
                ),
            );
        }
        for (to, d) in cols.iter().zip(&cells) {
            self.distances.push(NumaDistance {
                from,
                to: *to,
                distance: *d,
                source: Source::line(n),
            });
        }
    }

    /// The topology once every line is read, with what the paste lost
    /// (`last_line` is the paste's last, for the error where it holds
    /// nothing of numactl's).
    fn finish(mut self, last_line: usize) -> Result<Parsed, ParseError> {
        let Some(first) = self.first else {
            return Err(ParseError::new(
                last_line.max(1),
                "numactl -H output: `available: N nodes`, `node N cpus: ...` or `node distances:`",
            ));
        };
        if self.header.is_none() && self.distances.is_empty() && !self.nodes.is_empty() {
            self.out.note(
                first,
                "no `node distances:` matrix in the paste: distances are not known",
            );
        }
        // Nodes `available:` promises that the paste lost.
        if let Some((line, count)) = self.available
            && !self.nodes.is_empty()
            && self.nodes.len() < count
        {
            self.out.truncated(
                line,
                format!(
                    "numactl: {count} nodes available, {} shown: the paste lost the rest",
                    self.nodes.len()
                ),
            );
        }
        self.missing_rows();
        let mut out = self.out;
        out.numa.push(NumaTopology {
            tool: NumaTool::Numactl,
            nodes: self.nodes,
            distances: self.distances,
            devices: Vec::new(),
            flattened: false,
            source: Source::line(first),
        });
        Ok(out)
    }

    /// Rows the header promises that the paste lost.
    fn missing_rows(&mut self) {
        let Some((hl, cols)) = &self.header else {
            return;
        };
        let rows: std::collections::BTreeSet<u32> = self.distances.iter().map(|d| d.from).collect();
        let missing: Vec<String> = cols
            .iter()
            .filter(|c| !rows.contains(*c))
            .map(|c| c.to_string())
            .collect();
        if !missing.is_empty() {
            self.out.truncated(
                *hl,
                format!(
                    "numactl: the distance rows of node(s) {} are not in the paste",
                    missing.join(", ")
                ),
            );
        }
    }
}
