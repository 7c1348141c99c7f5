//! The scale-up panel's data: NVLink and xGMI between GPUs, apart from
//! PCIe.
//!
//! GPUs joined by direct links fall into connected groups. A group of
//! three or more where at least three pairs in four of those described
//! show one code, and at least half its pairs are described, is a mesh: an MI300X's 28 xGMI pairs or an H100's 28 NV18 pairs become one
//! label for the common link, not 28 crossing edges; the pairs that show
//! another code, or no direct link at all, are its exceptions, each drawn
//! as its own edge. A mesh whose code says more links per GPU than a GPU
//! has (NV18 to each of 7 peers is 126 links; a Hopper has 18) meets in
//! NVSwitch. Any other group (a DGX-1's hybrid cube mesh: 16 of 28 pairs,
//! NV1 and NV2) is drawn link by link.

use std::collections::{BTreeMap, BTreeSet};

use super::MapEdge;
use crate::evidence::Source;
use crate::evidence::topology::{LinkClass, Topology};
use crate::facts::NodeFacts;

/// Most NVLinks any NVIDIA GPU has had (Hopper and Blackwell: 18).
const MAX_NVLINKS_PER_GPU: u32 = 18;

/// A group of GPUs where (nearly) every pair shows one code.
#[derive(Debug, Clone, PartialEq)]
pub struct Mesh {
    /// Its GPUs, in topology order.
    pub members: Vec<String>,
    /// The common code, as printed (`NV18`, `XGMI`).
    pub code: String,
    /// Bonded links of the common code (NV18 is 18; 1 without a count).
    pub links: u32,
    /// How many pairs show the common code, of those the transcript
    /// describes (`described`), of `n(n-1)/2`.
    pub common_pairs: usize,
    pub described: usize,
    /// The pairs meet in NVSwitch (see the module doc).
    pub nvswitch: bool,
    /// Pairs that show another code or no direct link.
    pub exceptions: Vec<MapEdge>,
    /// The lines of the pairs with the common code.
    pub sources: Vec<Source>,
}

impl Mesh {
    pub fn pairs(&self) -> usize {
        self.members.len() * (self.members.len() - 1) / 2
    }
}

/// What the scale-up panel draws.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScaleUpLayer {
    pub meshes: Vec<Mesh>,
    /// Direct links outside any mesh, one edge each.
    pub edges: Vec<MapEdge>,
}

impl ScaleUpLayer {
    pub fn is_empty(&self) -> bool {
        self.meshes.is_empty() && self.edges.is_empty()
    }
}

/// The scale-up layer of a topology.
pub(super) fn layer(t: &Topology, facts: &NodeFacts) -> ScaleUpLayer {
    let direct: Vec<MapEdge> = t
        .links
        .iter()
        .filter(|l| l.class == LinkClass::DirectLink)
        .map(MapEdge::of)
        .collect();
    let mut out = ScaleUpLayer::default();
    let ids: Vec<&str> = t.devices.iter().map(|d| d.id.as_str()).collect();
    let joined: BTreeSet<(&str, &str)> = direct
        .iter()
        .flat_map(|e| [(e.a.as_str(), e.b.as_str()), (e.b.as_str(), e.a.as_str())])
        .collect();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for &start in &ids {
        if seen.contains(start) || !joined.iter().any(|p| p.0 == start) {
            continue;
        }
        let mut group = vec![start];
        seen.insert(start);
        let mut i = 0;
        while i < group.len() {
            for &x in &ids {
                if !seen.contains(x) && joined.contains(&(group[i], x)) {
                    seen.insert(x);
                    group.push(x);
                }
            }
            i += 1;
        }
        group.sort_by_key(|x| ids.iter().position(|y| y == x));
        let inside: Vec<&MapEdge> = direct
            .iter()
            .filter(|e| group.contains(&e.a.as_str()))
            .collect();
        match mesh(&group, &inside, t, facts) {
            Some(m) => out.meshes.push(m),
            None => out.edges.extend(inside.into_iter().cloned()),
        }
    }
    out
}

/// The group as a mesh, if three described pairs in four or more show
/// one code and half its pairs or more are described (a matrix cut after
/// three rows still shows its mesh, and says how much it describes).
fn mesh(group: &[&str], inside: &[&MapEdge], t: &Topology, facts: &NodeFacts) -> Option<Mesh> {
    let n = group.len();
    if n < 3 {
        return None;
    }
    let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (i, e) in inside.iter().enumerate() {
        counts.entry(e.code.as_str()).or_insert((0, i)).0 += 1;
    }
    // The most common code; of two as common, the one listed first.
    let (&code, &(count, at)) = counts
        .iter()
        .max_by_key(|(_, (c, first))| (*c, std::cmp::Reverse(*first)))?;
    let pairs = n * (n - 1) / 2;
    let described = group
        .iter()
        .enumerate()
        .flat_map(|(i, a)| group[i + 1..].iter().map(move |b| (*a, *b)))
        .filter(|(a, b)| t.link(a, b).is_some())
        .count();
    if count * 4 < described * 3 || described * 2 < pairs {
        return None;
    }
    let links = inside[at].links;
    let mut exceptions: Vec<MapEdge> = inside
        .iter()
        .filter(|e| e.code != code)
        .map(|e| (*e).clone())
        .collect();
    for (i, a) in group.iter().enumerate() {
        for b in &group[i + 1..] {
            let l = t.link(a, b);
            if l.is_some_and(|l| l.class != LinkClass::DirectLink) {
                exceptions.extend(l.map(MapEdge::of));
            }
        }
    }
    let has = group
        .iter()
        .filter_map(|g| facts.nvlinks.get(*g).map(|n| n.listed as u32))
        .max()
        .unwrap_or(MAX_NVLINKS_PER_GPU);
    Some(Mesh {
        members: group.iter().map(|s| s.to_string()).collect(),
        code: code.to_string(),
        links,
        common_pairs: count,
        described,
        nvswitch: code.starts_with("NV") && links * (n as u32 - 1) > has,
        exceptions,
        sources: inside
            .iter()
            .filter(|e| e.code == code)
            .flat_map(|e| e.sources.iter().cloned())
            .collect(),
    })
}

/// What the layer's meshes mean, in words.
pub(super) fn notes(layer: &ScaleUpLayer) -> Vec<String> {
    layer
        .meshes
        .iter()
        .map(|m| {
            let n = m.members.len();
            let (pairs, code) = (m.pairs(), &m.code);
            let gpus = m.members.join(", ");
            let code = if code.is_empty() {
                "a direct link"
            } else {
                code
            };
            let who = if m.common_pairs == pairs {
                format!("Every pair of these {n} GPUs ({gpus}) shows {code}")
            } else if m.common_pairs == m.described {
                format!(
                    "Every pair of these {n} GPUs ({gpus}) the transcript describes ({} of \
                     {pairs}) shows {code}",
                    m.described
                )
            } else {
                format!(
                    "{} of the {pairs} pairs of these {n} GPUs ({gpus}) show {code}",
                    m.common_pairs
                )
            };
            let except = match m.exceptions.len() {
                0 => String::new(),
                1 => " The one pair that differs is drawn as its own edge.".into(),
                k => format!(" The {k} pairs that differ are drawn as their own edges."),
            };
            if m.nvswitch {
                format!(
                    "{who}: {} links per GPU if each pair were wired directly, more than a GPU \
                     has, so the pairs meet in NVSwitch. It is drawn as one hub; the transcript \
                     does not show the switches themselves.{except}",
                    m.links * (n as u32 - 1)
                )
            } else {
                format!(
                    "{who}: a full mesh, drawn with one label for the common link rather than \
                     {pairs} edges.{except}"
                )
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Bundle, Host, Origin};
    use crate::evidence::topology::{Device, DeviceKind, Link};

    /// `n` GPUs, every pair `code` except the pairs in `other`.
    fn topology(n: usize, code: &str, other: &[(usize, usize, &str, LinkClass)]) -> Bundle {
        let mut b = Bundle::new(Host {
            name: "mesh".into(),
            origin: Origin::Ingested,
        });
        let t = &mut b.topology;
        for i in 0..n {
            t.devices.push(Device::new(
                format!("GPU{i}"),
                DeviceKind::Gpu,
                Source::line(i + 2),
            ));
        }
        for i in 0..n {
            for j in i + 1..n {
                let (c, class) = other
                    .iter()
                    .find(|o| (o.0, o.1) == (i, j))
                    .map_or((code, LinkClass::DirectLink), |o| (o.2, o.3));
                let mut l = Link::new(
                    &format!("GPU{i}"),
                    &format!("GPU{j}"),
                    class,
                    Source::line(i + 2),
                );
                l.code = Some(c.into());
                l.nvlinks = c.strip_prefix("NV").and_then(|k| k.parse().ok());
                t.links.push(l);
            }
        }
        b
    }

    fn layer_of(b: &Bundle) -> ScaleUpLayer {
        layer(&b.topology, &NodeFacts::of(b))
    }

    #[test]
    fn a_full_xgmi_mesh_becomes_one_mesh_with_one_code_and_no_edges() {
        let l = layer_of(&topology(8, "XGMI", &[]));
        assert_eq!(l.meshes.len(), 1);
        assert!(l.edges.is_empty());
        let m = &l.meshes[0];
        assert_eq!(
            (m.code.as_str(), m.members.len(), m.common_pairs),
            ("XGMI", 8, 28)
        );
        assert!(!m.nvswitch && m.exceptions.is_empty());
    }

    #[test]
    fn nv18_between_eight_gpus_is_an_nvswitch_mesh() {
        let l = layer_of(&topology(8, "NV18", &[]));
        assert!(l.meshes[0].nvswitch, "{l:?}");
    }

    #[test]
    fn pairs_that_differ_from_the_mesh_are_its_marked_exceptions() {
        let b = topology(
            8,
            "XGMI",
            &[
                (0, 5, "SYS", LinkClass::CrossSocket),
                (2, 3, "XGMI2", LinkClass::DirectLink),
            ],
        );
        let l = layer_of(&b);
        let m = &l.meshes[0];
        let ex: Vec<(&str, &str, &str)> = m
            .exceptions
            .iter()
            .map(|e| (e.a.as_str(), e.b.as_str(), e.code.as_str()))
            .collect();
        assert_eq!(ex, [("GPU2", "GPU3", "XGMI2"), ("GPU0", "GPU5", "SYS")]);
        assert_eq!(m.common_pairs, 26);
        assert!(notes(&l)[0].starts_with("26 of the 28 pairs"));
    }

    #[test]
    fn a_hybrid_cube_mesh_is_not_a_mesh_and_stays_edge_by_edge() {
        // Two quads, each pair within a quad direct, and i to i+4: 16 of 28.
        let mut other = Vec::new();
        for i in 0..8 {
            for j in i + 1..8 {
                if (i < 4) != (j < 4) && j != i + 4 {
                    other.push((i, j, "SYS", LinkClass::CrossSocket));
                }
            }
        }
        let l = layer_of(&topology(8, "NV1", &other));
        assert!(l.meshes.is_empty());
        assert_eq!(l.edges.len(), 16);
    }
}
