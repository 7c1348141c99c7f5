//! lstopo / lstopo-no-graphics / hwloc-ls text: see the parent module.

use super::{
    DeviceKind, NumaNode, NumaTool, NumaTopology, ParseError, Parsed, PlacedDevice, Source,
    cpu_ranges, numbered_lines,
};
use crate::evidence::SplitWords;

/// An object's type word without its subtype: `Block(Disk)` -> `Block`.
fn base(word: &str) -> &str {
    word.split('(').next().unwrap_or(word)
}

/// The object types lstopo prints (hwloc 1.x and 2.x), by their base.
fn is_object(word: &str) -> bool {
    const TYPES: &[&str] = &[
        "Machine",
        "System",
        "Package",
        "Socket",
        "Die",
        "Group",
        "Group0",
        "Group1",
        "Group2",
        "NUMANode",
        "Core",
        "PU",
        "L1",
        "L1d",
        "L1i",
        "L2",
        "L2d",
        "L3",
        "L4",
        "L5",
        "L1Cache",
        "L1dCache",
        "L1iCache",
        "L2Cache",
        "L3Cache",
        "MemCache",
        "HostBridge",
        "PCIBridge",
        "Bridge",
        "PCI",
        "Net",
        "Network",
        "OpenFabrics",
        "GPU",
        "CoProc",
        "Co-Processor",
        "Block",
        "DMA",
        "Misc",
        "MemoryModule",
        "OpenCL",
    ];
    TYPES.contains(&base(word))
}

/// `(P#3 63GB)`, `L#0 (P#0 252GB)`, `P#1 (63GB)`, `(P#1 local=... )`:
/// the OS index after `P#`.
fn os_index(part: &str) -> Option<u32> {
    let at = part.find("P#")?;
    let digits: String = part[at + 2..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

/// An object's index: its `P#`, else its `L#` (`Package L#1`).
fn index(part: &str) -> Option<u32> {
    os_index(part).or_else(|| {
        let at = part.find("L#")?;
        let digits: String = part[at + 2..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        digits.parse().ok()
    })
}

/// A NUMA node's memory as lstopo prints it: `63GB`, `7950MB`,
/// `local=402653184KB` (units of 1024).
fn memory(part: &str) -> Option<u64> {
    let inner = part.split_once('(')?.1.trim_end_matches(')');
    inner.split([' ', ')']).find_map(|w| {
        let w = w.strip_prefix("local=").unwrap_or(w);
        let unit_at = w.find(|c: char| c.is_ascii_alphabetic())?;
        let (n, unit) = w.split_at(unit_at);
        let n: u64 = n.parse().ok()?;
        let shift = match unit {
            "KB" | "kB" => 10,
            "MB" => 20,
            "GB" => 30,
            "TB" => 40,
            _ => return None,
        };
        Some(n.saturating_mul(1 << shift))
    })
}

/// `"mlx5_0"` at the end of an OS device line.
fn quoted(part: &str) -> Option<&str> {
    let end = part.rfind('"')?;
    let start = part[..end].rfind('"')?;
    Some(&part[start + 1..end])
}

/// A PCI line: `PCI 8086:1521` (1.x), `PCI 01:00.0 (InfiniBand)` (2.x),
/// `PCI L#6 (busid=0000:3b:00.0 id=15b3:101b class=0207(InfiniBand) ...)`
/// (verbose): bus id, vendor:device, class.
fn pci(t: &str) -> (Option<String>, Option<String>, Option<String>) {
    let rest = t.strip_prefix("PCI").unwrap_or(t).trim();
    let mut bus = None;
    let mut id = None;
    let mut class = None;
    if let Some(v) = rest.split("busid=").nth(1) {
        bus = v
            .words()
            .next()
            .map(|b| b.trim_end_matches(')').to_string());
    }
    if let Some(v) = rest.split(" id=").nth(1) {
        id = v.words().next().map(str::to_string);
    }
    if let Some(v) = rest.split("class=").nth(1)
        && let Some((_, c)) = v.split_once('(')
    {
        class = c.split(')').next().map(str::to_string);
    }
    if bus.is_none() && id.is_none() {
        let first = rest.words().next().unwrap_or("");
        if first.contains('.') && first.contains(':') {
            bus = Some(if first.matches(':').count() == 1 {
                format!("0000:{first}")
            } else {
                first.to_string()
            });
            // `PCI 01:00.0 (InfiniBand)`
            class = rest
                .split_once('(')
                .and_then(|(_, c)| c.split(')').next())
                .map(str::to_string);
        } else if first.contains(':') {
            id = Some(first.to_string());
        }
    }
    let bus = bus.map(|b| b.to_ascii_lowercase());
    (bus, id.map(|i| i.to_ascii_lowercase()), class)
}

/// One entry of the path from the root to the line being read.
struct Open {
    indent: usize,
    /// The NUMA node this object is, or holds as a memory child.
    node: Option<u32>,
    /// The index into `devices` where this object is a PCI device.
    device: Option<usize>,
    /// The host bridge's label where this object is one.
    bridge: Option<String>,
    /// The package's index where this object is one.
    package: Option<u32>,
    /// Its line.
    line: usize,
}

pub fn looks_like_lstopo(text: &str, lines: &[&str]) -> bool {
    (has!(text, "NUMANode") || has!(text, "HostBridge") || has!(text, "PU L#"))
        && lines.iter().any(|l| {
            let t = l.trim();
            let first = t.words().next().unwrap_or("");
            (base(first) == "NUMANode" && (t.contains("L#") || t.contains("P#") || t.contains('(')))
                || (first == "Machine" && t.contains('('))
        })
        && lines.iter().any(|l| {
            let first = l.trim().words().next().unwrap_or("");
            matches!(
                base(first),
                "PU" | "HostBridge" | "Package" | "Socket" | "L3" | "Core"
            )
        })
}

/// The object lines of a paste (number, indentation, text trimmed): the
/// first pass, so that a line can tell whether objects are printed under it
/// and a flattened paste is known before the tree is read.
fn objects<'a>(lines: &[(usize, &'a str)]) -> Vec<(usize, usize, &'a str)> {
    lines
        .iter()
        .filter_map(|(n, l)| {
            let t = l.trim();
            let first = t.words().next()?;
            is_object(first).then(|| (*n, l.len() - l.trim_start().len(), t))
        })
        .collect()
}

pub fn parse_lstopo(text: &str) -> Result<Parsed, ParseError> {
    let lines: Vec<(usize, &str)> = numbered_lines(text).collect();
    let objects = objects(&lines);
    if objects.is_empty() {
        return Err(ParseError::new(
            1,
            "lstopo text output: `Machine (...)`, `NUMANode L#0 (P#0 ...)` and the objects under them",
        ));
    }
    // A paste that lost its indentation: every object at one depth.
    let flattened = objects.len() > 3 && objects.iter().all(|o| o.1 == objects[0].1);
    let mut tree = Tree::new(flattened);
    let mut j = 0;
    for (n, l) in &lines {
        let n = *n;
        if j >= objects.len() || objects[j].0 != n {
            tree.other(n, l.trim());
            continue;
        }
        j += 1;
        tree.object(&ObjectLine {
            n,
            t: l.trim(),
            depth: l.len() - l.trim_start().len(),
            next_depth: objects.get(j).map(|next| next.1),
        });
    }
    tree.finish(objects[0].0)
}

/// An object line as the tree reads it.
struct ObjectLine<'a> {
    n: usize,
    /// The line trimmed.
    t: &'a str,
    /// Its indentation as printed (in a flattened paste too).
    depth: usize,
    /// The next object line's indentation, to tell a leaf; none for the
    /// last object.
    next_depth: Option<usize>,
}

/// lstopo's tree as it is read: the path to the line being read, the
/// nodes and devices so far, and the last of each object printed (what a
/// flattened paste places by).
struct Tree {
    out: Parsed,
    /// The paste lost its indentation: placement is by document order.
    flattened: bool,
    open: Vec<Open>,
    /// Each node and the `P#` of the PUs under it.
    nodes: Vec<(NumaNode, Vec<u32>)>,
    devices: Vec<PlacedDevice>,
    /// Host bridges printed so far, to name one without an index.
    bridges: usize,
    /// The first `Machine` line.
    machine: Option<usize>,
    // Flattened reading: the last node and bridge printed.
    last_node: Option<u32>,
    last_bridge: Option<(String, usize)>,
    last_device: Option<usize>,
    last_package: Option<u32>,
    /// A node read without its package (hwloc 1.x): the next package
    /// printed is its.
    waiting: Option<usize>,
}

impl Tree {
    fn new(flattened: bool) -> Self {
        Tree {
            out: Parsed::default(),
            flattened,
            open: Vec::new(),
            nodes: Vec::new(),
            devices: Vec::new(),
            bridges: 0,
            machine: None,
            last_node: None,
            last_bridge: None,
            last_device: None,
            last_package: None,
            waiting: None,
        }
    }

    /// A line that is no object: the command line, an elision, or a line
    /// not understood.
    fn other(&mut self, n: usize, t: &str) {
        if t.is_empty() {
            return;
        }
        let cmd = t.words().next().unwrap_or("");
        if matches!(cmd, "lstopo" | "lstopo-no-graphics" | "hwloc-ls") {
            self.out.skipped_lines.push((n, "the command line"));
        } else if t == "..." || t == "(...)" || t.starts_with("...") {
            self.out.skipped_lines.push((n, "an elision in the paste"));
        } else {
            self.out.unread_lines.push(n);
        }
    }

    /// An object line: its place on the path, each of its ` + `-joined
    /// objects, the node of its PUs, and whether it gave a fact.
    fn object(&mut self, line: &ObjectLine) {
        let n = line.n;
        let indent = if self.flattened { 0 } else { line.depth };
        if !self.flattened {
            while self.open.last().is_some_and(|o| o.indent >= indent) {
                self.open.pop();
            }
        }
        let mut this = Open {
            indent,
            node: None,
            device: None,
            bridge: None,
            package: None,
            line: n,
        };
        let mut used = false;
        let mut pus: Vec<u32> = Vec::new();
        for part in line.t.split(" + ") {
            used |= self.part(line, part.trim(), &mut this, &mut pus);
        }
        if !pus.is_empty() {
            used |= self.place_pus(n, &this, &pus);
        }
        if used {
            self.out.context_lines.push(n);
        } else {
            self.out.skipped_lines.push((
                n,
                "lstopo: an object that is no fact of ours (cache, core, bridge)",
            ));
        }
        self.open.push(this);
    }

    /// One of a line's objects, read into `this` (the line's entry on the
    /// path) and `pus`: true where it gave a fact.
    fn part(&mut self, line: &ObjectLine, part: &str, this: &mut Open, pus: &mut Vec<u32>) -> bool {
        let n = line.n;
        let first = part.words().next().unwrap_or("");
        match base(first) {
            "Machine" | "System" => {
                self.machine.get_or_insert(n);
                true
            }
            "Package" | "Socket" => {
                self.package(part, this);
                false
            }
            "Group" | "Group0" | "Group1" | "Group2" | "Die" if self.flattened => {
                self.last_node = None;
                false
            }
            "NUMANode" => self.numa_node(line, part, this),
            "PU" => {
                if let Some(p) = os_index(part) {
                    pus.push(p);
                }
                false
            }
            "HostBridge" => {
                let bridges = self.bridges;
                let label = if part.contains("L#") || part.contains("buses=") {
                    part.to_string()
                } else {
                    format!("HostBridge #{bridges}")
                };
                self.bridge(n, label, this);
                false
            }
            "Bridge" if part.contains("Host->PCI") => {
                self.bridge(n, part.to_string(), this);
                false
            }
            "PCI" => {
                self.device(n, part, this);
                true
            }
            "Net" | "Network" | "OpenFabrics" | "GPU" | "CoProc" | "Co-Processor" | "OpenCL"
            | "Block" | "DMA" => self.os_device(first, part),
            _ => false,
        }
    }

    /// A package: the nodes under it (hwloc 2.x) or the node above it
    /// (hwloc 1.x) are of it.
    fn package(&mut self, part: &str, this: &mut Open) {
        self.last_package = index(part);
        this.package = self.last_package;
        // hwloc 1.x: the node printed just above holds it.
        if let Some(i) = self.waiting.take() {
            self.nodes[i].0.package = self.last_package;
        }
        if self.flattened {
            self.last_node = None;
        }
    }

    /// A `NUMANode`: a node, its package, and the object it is the memory
    /// of; false where it has no `P#`.
    fn numa_node(&mut self, line: &ObjectLine, part: &str, this: &mut Open) -> bool {
        let (n, t) = (line.n, line.t);
        let Some(node) = os_index(part) else {
            self.out
                .bad_row(n, format!("lstopo: a NUMANode without its `P#`: `{t}`"));
            return false;
        };
        // hwloc 2.x: a memory child (a leaf) of the object above it;
        // hwloc 1.x: a node that holds what follows.
        let leaf = line.next_depth.is_none_or(|next| next <= line.depth);
        if !self.flattened
            && leaf
            && let Some(parent) = self.open.last_mut()
            && parent.node.is_none()
        {
            parent.node = Some(node);
        }
        this.node = Some(node);
        self.last_node = Some(node);
        // Its package: one on its line or printed before it
        // (hwloc 2.x, a leaf under it), else the next one
        // printed (hwloc 1.x, the node holds it).
        let on_line = t
            .split(" + ")
            .find(|x| matches!(base(x.trim()), "Package" | "Socket"))
            .and_then(index);
        let above = if self.flattened {
            self.last_package
        } else {
            self.open.iter().rev().find_map(|o| o.package)
        };
        let package = on_line.or(above);
        self.nodes.push((
            NumaNode {
                node,
                cpus: String::new(),
                cpu_count: 0,
                size_bytes: memory(part),
                free_bytes: None,
                package,
                source: Source::line(n),
            },
            Vec::new(),
        ));
        if package.is_none() {
            self.waiting = Some(self.nodes.len() - 1);
        }
        true
    }

    /// A host bridge, `label` as a device under it will name it.
    fn bridge(&mut self, n: usize, label: String, this: &mut Open) {
        self.bridges += 1;
        this.bridge = Some(label.clone());
        self.last_bridge = Some((label, n));
    }

    /// A PCI device, placed under the node and host bridge above it (or,
    /// flattened, the last printed).
    fn device(&mut self, n: usize, part: &str, this: &mut Open) {
        let (bus_id, pci_id, class) = pci(part);
        let numa_node = if self.flattened {
            self.last_node
        } else {
            self.open.iter().rev().find_map(|o| o.node)
        };
        // The bridge's line is read where a device takes it.
        let bridge = if self.flattened {
            self.last_bridge.clone()
        } else {
            self.open
                .iter()
                .rev()
                .find_map(|o| Some((o.bridge.clone()?, o.line)))
        };
        let host_bridge = bridge.map(|(label, line)| {
            self.out.context_lines.push(line);
            label
        });
        self.devices.push(PlacedDevice {
            bus_id,
            pci_id,
            class,
            kind: DeviceKind::Other,
            names: Vec::new(),
            numa_node,
            host_bridge,
            source: Source::line(n),
        });
        this.device = Some(self.devices.len() - 1);
        self.last_device = this.device;
    }

    /// An OS device (`OpenFabrics "mlx5_0"`, `Net "ib0"`): a name and a
    /// kind for the PCI device it is under; false where it is under none.
    fn os_device(&mut self, first: &str, part: &str) -> bool {
        let owner = if self.flattened {
            self.last_device
        } else {
            self.open.iter().rev().find_map(|o| o.device)
        };
        let (Some(i), Some(name)) = (owner, quoted(part)) else {
            return false;
        };
        let d = &mut self.devices[i];
        // The RDMA device's name first (`mlx5_0` before `ib0`).
        if base(first) == "OpenFabrics" {
            d.names.insert(0, name.to_string());
        } else {
            d.names.push(name.to_string());
        }
        d.kind = refine(d.kind, d, first, name);
        true
    }

    /// A line's PUs, given to its node or the one above it; false (and the
    /// line skipped) where there is none.
    fn place_pus(&mut self, n: usize, this: &Open, pus: &[u32]) -> bool {
        let node = if self.flattened {
            self.last_node
        } else {
            this.node
                .or_else(|| self.open.iter().rev().find_map(|o| o.node))
        };
        if let Some(node) = node
            && let Some((_, cpus)) = self.nodes.iter_mut().rev().find(|(x, _)| x.node == node)
        {
            cpus.extend(pus);
            true
        } else {
            self.out
                .skipped_lines
                .push((n, "lstopo: a PU outside every NUMA node shown"));
            false
        }
    }

    /// The topology once every line is read: lines read later as context,
    /// device kinds by class, notes, each node's CPUs (`first_object` is
    /// the first object line, for the error where none gave a fact).
    fn finish(self, first_object: usize) -> Result<Parsed, ParseError> {
        let Tree {
            mut out,
            flattened,
            nodes,
            mut devices,
            machine,
            ..
        } = self;
        // A bridge skipped at its line and read later, by a device under it.
        let mut context = out.context_lines.clone();
        context.sort_unstable();
        out.skipped_lines
            .retain(|(l, _)| context.binary_search(l).is_err());
        // Device kinds from their class where no OS device said.
        for d in &mut devices {
            if d.kind == DeviceKind::Other {
                d.kind = by_class(d);
            }
        }
        // A bridge line is context where a device under it was read.
        let first = machine.or_else(|| nodes.first().map(|x| x.0.source.line));
        let first = first.or_else(|| devices.first().map(|d| d.source.line));
        let Some(first) = first else {
            return Err(ParseError::new(
                first_object,
                "lstopo text with NUMANode or PCI objects",
            ));
        };
        if flattened {
            out.note(
                first,
                "lstopo: the paste lost its indentation; each PU and device is placed under the last NUMA node printed before it",
            );
        }
        if nodes.is_empty() {
            out.note(
                first,
                "lstopo: no NUMANode in the paste (a machine without NUMA, or a cut listing): devices have no node",
            );
        }
        let nodes = nodes
            .into_iter()
            .map(|(mut node, mut cpus)| {
                node.cpu_count = u32::try_from({
                    cpus.sort_unstable();
                    cpus.dedup();
                    cpus.len()
                })
                .unwrap_or(u32::MAX);
                node.cpus = cpu_ranges(&mut cpus);
                node
            })
            .collect();
        out.numa.push(NumaTopology {
            tool: NumaTool::Lstopo,
            nodes,
            distances: Vec::new(),
            devices,
            flattened,
            source: Source::line(first),
        });
        Ok(out)
    }
}

/// A device's kind from an OS device under it (`OpenFabrics "mlx5_0"`,
/// `CoProc(CUDA) "cuda0"`, `GPU(NVML) "nvml0"`, `Net "ib0"`).
fn refine(kind: DeviceKind, d: &PlacedDevice, word: &str, name: &str) -> DeviceKind {
    let b = base(word);
    let sub = word.strip_prefix(b).unwrap_or("").to_ascii_lowercase();
    let vendor = d.pci_id.as_deref().and_then(|i| i.split(':').next());
    if b == "OpenFabrics" {
        return DeviceKind::Rdma;
    }
    if kind == DeviceKind::Rdma {
        return kind;
    }
    let accel = matches!(b, "CoProc" | "Co-Processor" | "OpenCL")
        || sub.contains("nvml")
        || sub.contains("rsmi")
        || name.starts_with("cuda")
        || name.starts_with("nvml")
        || name.starts_with("rsmi")
        || name.starts_with("opencl");
    // A DRM card is a GPU where the device is NVIDIA's (server BMC
    // graphics, Matrox or ASPEED, print `card0` too).
    let nvidia_card = b == "GPU" && vendor == Some("10de");
    if accel || nvidia_card {
        return DeviceKind::Gpu;
    }
    if matches!(b, "Net" | "Network") && kind == DeviceKind::Other {
        return DeviceKind::Nic;
    }
    kind
}

/// A device's kind from its class and vendor alone.
fn by_class(d: &PlacedDevice) -> DeviceKind {
    let class = d.class.as_deref().unwrap_or("").to_ascii_lowercase();
    let vendor = d
        .pci_id
        .as_deref()
        .and_then(|i| i.split(':').next())
        .unwrap_or("");
    match class.as_str() {
        "infiniband" => DeviceKind::Rdma,
        "3d" => DeviceKind::Gpu,
        "vga" | "display" if vendor == "10de" || (vendor.is_empty() && class == "display") => {
            DeviceKind::Gpu
        }
        "ethernet" | "network" => DeviceKind::Nic,
        _ => DeviceKind::Other,
    }
}
