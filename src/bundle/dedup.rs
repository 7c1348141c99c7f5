//! One entry per key: what a bundle keeps of entries a transcript printed
//! twice.

use std::hash::BuildHasher;

use rustc_hash::FxBuildHasher;

use super::{Bundle, Problem, ProblemKind};

impl Bundle {
    /// Keeps one entry per key (a topology pair, a PCIe address, an RDMA
    /// device, a port of one device): the first, which is the one every
    /// lookup finds. Duplicates (rows a transcript printed twice, a spliced
    /// file) become one problem naming `file` and the keys, so a diff of a
    /// bundle with itself matches one entry per key and never reports a
    /// change. Returns how many entries were dropped.
    pub fn drop_duplicate_keys(&mut self, file: &str) -> usize {
        let mut dups: Vec<String> = Vec::new();
        let links = &mut self.topology.links;
        let keep = first_of_each(links, |l| {
            if l.a <= l.b {
                (l.a.as_str(), l.b.as_str())
            } else {
                (l.b.as_str(), l.a.as_str())
            }
        });
        keep_flagged(links, &keep, |l| {
            dups.push(format!("topology pair {}-{}", l.a, l.b))
        });
        let keep = first_of_each(&self.pcie, |p| p.address.as_str());
        keep_flagged(&mut self.pcie, &keep, |p| {
            dups.push(format!("PCIe address {}", p.address))
        });
        let keep = first_of_each(&self.rdma, |d| d.name.as_str());
        keep_flagged(&mut self.rdma, &keep, |d| {
            dups.push(format!("RDMA device {}", d.name))
        });
        for d in &mut self.rdma {
            let keep = first_of_each(&d.ports, |p| p.port);
            keep_flagged(&mut d.ports, &keep, |p| {
                dups.push(format!("port {} of {}", p.port, d.name))
            });
        }
        if let Some(first) = dups.first() {
            let more = dups.len() - 1;
            self.problems.push(Problem {
                file: file.to_string(),
                line: None,
                kind: ProblemKind::Conflict,
                message: format!(
                    "{} entries repeat a key already present ({first}{}); the first of each is kept, the repeats are dropped",
                    dups.len(),
                    if more > 0 { format!(" and {more} more") } else { String::new() }
                ),
            });
        }
        dups.len()
    }
}

/// For each of `items`, whether it is the first with its key. Keys are
/// borrowed: nothing is copied to compare them. A node's few entries are
/// compared by hash first, each with those before it; many are sorted
/// (a tree of keys cost more than the rest of the check).
fn first_of_each<'a, T, K: Ord + std::hash::Hash>(
    items: &'a [T],
    key: impl Fn(&'a T) -> K,
) -> Vec<bool> {
    let mut first = vec![true; items.len()];
    if items.len() <= 32 {
        let keys: Vec<(u64, K)> = items
            .iter()
            .map(|t| {
                let k = key(t);
                (FxBuildHasher.hash_one(&k), k)
            })
            .collect();
        for (i, (h, k)) in keys.iter().enumerate() {
            first[i] = !keys[..i].iter().any(|(g, j)| g == h && j == k);
        }
        return first;
    }
    // (key, index): equal keys sort in the order of their entries.
    let mut keyed: Vec<(K, usize)> = items.iter().map(key).zip(0..).collect();
    keyed.sort_unstable();
    for w in keyed.windows(2) {
        if w[0].0 == w[1].0 {
            first[w[1].1] = false;
        }
    }
    first
}

/// Keeps the entries of `items` flagged in `keep` (one flag each), in
/// order; `dropped` is told of each other one first.
fn keep_flagged<T>(items: &mut Vec<T>, keep: &[bool], mut dropped: impl FnMut(&T)) {
    if keep.iter().all(|k| *k) {
        return;
    }
    for (t, _) in items.iter().zip(keep).filter(|(_, k)| !**k) {
        dropped(t);
    }
    let mut flags = keep.iter();
    items.retain(|_| *flags.next().expect("one flag per entry"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_of_each_key_is_the_one_a_set_of_keys_would_take_first() {
        let mut x: u64 = 7;
        for n in [0, 1, 2, 5, 31, 32, 33, 100, 500] {
            for spread in [1, 3, 40, 1000] {
                let keys: Vec<(String, u32)> = (0..n)
                    .map(|_| {
                        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        (format!("GPU{}", (x >> 33) % spread), (x >> 20) as u32 % 3)
                    })
                    .collect();
                let mut seen = std::collections::BTreeSet::new();
                let expected: Vec<bool> = keys.iter().map(|k| seen.insert(k)).collect();
                let got = first_of_each(&keys, |(a, b)| (a.as_str(), *b));
                assert_eq!(got, expected, "{n} keys of {spread}");
            }
        }
    }
}
