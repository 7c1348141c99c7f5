//! `ppu-smi topo -mp` (or `-m`): the `nvidia-smi topo -m` clone of the
//! PPU accelerators' management tool. Its matrix uses nvidia-smi's words
//! (PIX, PXB, PHB, NODE, SYS), but what they mean for a PPU is not
//! documented, and the one real transcript contradicts nvidia-smi's
//! meaning (SYS, "across NUMA nodes", between PPUs that all report NUMA
//! node 0). So only what is unambiguous is read: the devices the matrix
//! names (`PPU0`...), each row's `CPU Affinity` and `NUMA Affinity`
//! columns, and the `PPU Rear Group:` list (noted). The link codes are
//! noted, not read as links.

use super::{Device, DeviceKind, Topology, parse_cpu_list, parse_plain_u32};
use crate::evidence::SplitWords;
use crate::evidence::{ParseError, Parsed, Source, numbered_lines};

/// `PPU12` -> Some(12).
fn ppu_index(t: &str) -> Option<u32> {
    parse_plain_u32(t.strip_prefix("PPU")?)
}

/// A header row naming `PPU<n>` columns and `CPU Affinity`.
fn is_header(t: &str) -> bool {
    t.words().next().and_then(ppu_index).is_some() && t.contains("CPU Affinity")
}

pub fn looks_like_ppu_smi(text: &str, lines: &[&str]) -> bool {
    has!(text, "CPU Affinity") && lines.iter().any(|l| is_header(l.trim()))
}

pub fn parse_ppu_smi(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let mut topo = Topology::default();
    let mut columns = 0usize;
    let mut codes_noted = false;
    let mut in_groups = false;
    // PPU rows read (kept or not); after the first blank line that follows
    // them, the rest is the legend or notes, not rows.
    let mut rows = 0usize;
    let mut after_rows = false;
    for (n, l) in numbered_lines(text) {
        let t = l.trim();
        if t.is_empty() {
            after_rows |= rows > 0;
            continue;
        }
        if is_header(t) {
            columns = t.words().filter(|w| ppu_index(w).is_some()).count();
            continue;
        }
        if t == "..." {
            out.note(n, "elided by whoever captured it");
            continue;
        }
        if t == "PPU Rear Group:" {
            in_groups = true;
            continue;
        }
        if after_rows && !in_groups && ppu_index(t.words().next().unwrap_or("")).is_none() {
            out.note(n, format!("after the matrix (its legend), not read: {t}"));
            continue;
        }
        if in_groups {
            out.note(
                n,
                format!("rear group as printed (its meaning is not documented): {t}"),
            );
            continue;
        }
        let toks: Vec<&str> = t.words().collect();
        let Some(idx) = toks.first().and_then(|x| ppu_index(x)) else {
            out.bad_row(n, format!("a `PPU<n>` row, found `{t}`"));
            continue;
        };
        rows += 1;
        if topo.devices.iter().any(|d| d.id == format!("PPU{idx}")) {
            out.bad_row(n, format!("`PPU{idx}` once; this row repeats it"));
            continue;
        }
        if columns == 0 || toks.len() != columns + 3 {
            out.bad_row(
                n,
                format!("`PPU{idx}`, {columns} link codes, a CPU list and a NUMA node"),
            );
            continue;
        }
        let mut d = Device::new(format!("PPU{idx}"), DeviceKind::Gpu, Source::line(n));
        d.name = Some("PPU (ppu-smi)".into());
        d.cpu_affinity = parse_cpu_list(toks[columns + 1]);
        d.numa_node = parse_plain_u32(toks[columns + 2]);
        topo.devices.push(d);
        if !codes_noted {
            codes_noted = true;
            out.note(
                n,
                "link codes in nvidia-smi's words (PIX, PXB, PHB, NODE, SYS) are not read: their meaning for PPUs is not documented, and here SYS joins PPUs that all report NUMA node 0",
            );
        }
    }
    if topo.devices.is_empty() {
        return Err(ParseError::new(
            1,
            "a `PPU<n> ... CPU Affinity` header and `PPU<n>` rows",
        ));
    }
    // The header names every row to come: fewer rows is a cut.
    if rows < columns {
        let last = topo
            .devices
            .iter()
            .map(|d| d.source.line)
            .max()
            .unwrap_or(1);
        out.cut(last, format!("{} of the {columns} rows", columns - rows));
    }
    // Device order as everywhere else (PPU0, PPU1, ...), not as printed.
    topo.sort();
    out.topology = topo;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::IssueKind;

    /// Synthetic, in the real capture's shape: the header names four PPUs,
    /// two rows follow, then a legend (as nvidia-smi prints one).
    #[test]
    fn a_legend_after_a_cut_matrix_is_noted_and_the_cut_flagged() {
        let text = " PPU0 PPU1 PPU2 PPU3 CPU Affinity NUMA Affinity\n PPU0 X PIX SYS SYS 0-1 0\n PPU1 PIX X SYS SYS 0-1 0\n\nLegend:\n  X    = Self\n  SYS  = Connection traversing PCIe\n";
        let p = parse_ppu_smi(text).unwrap();
        assert_eq!(p.topology.devices.len(), 2);
        let kinds: Vec<_> = p.issues.iter().map(|i| (i.line, i.kind)).collect();
        assert_eq!(kinds, vec![(3, IssueKind::Truncated)], "{:?}", p.issues);
        assert_eq!(p.notes.iter().filter(|n| n.line >= 5).count(), 3);
        // A repeated row is a problem, not a second PPU0.
        let twice = text.replace(" PPU1 PIX X", " PPU0 PIX X");
        let p = parse_ppu_smi(&twice).unwrap();
        assert_eq!(p.topology.devices.len(), 1);
        assert!(
            p.issues
                .iter()
                .any(|i| i.line == 3 && i.message.contains("repeats"))
        );
    }
}
