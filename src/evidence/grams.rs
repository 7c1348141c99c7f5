//! A "certainly not in this text" for the detectors' whole-text searches
//! ([`has!`](super)), made in one pass over the block being detected.
//!
//! [`detect_in`](super::detect_in) asks some fifty literals of every block
//! until a detector accepts it; each `memmem` search reads the whole block.
//! Instead the block's 4-byte grams at every 4th byte are hashed into a
//! table once ([`Scope::enter`]: one store per gram; the table is never
//! cleared, a slot is set when it holds this text's stamp). A literal found at position `p` puts
//! every gram of it at an offset `j` with `p + j` a multiple of 4 into the
//! set; so where, for each of the 4 residues, some gram of the literal at
//! that residue is missing from the set, the literal is not in the block
//! and no search is made. Otherwise (or outside a detection, or for a
//! literal too short to have a gram at every residue) the search runs as
//! before: the filter never says "absent" of a literal that is there, so
//! no answer changes (`literal_agrees_with_contains`).

use std::cell::RefCell;
use std::marker::PhantomData;

use memchr::memmem::Finder;

/// Gram length and stride: grams start at bytes 0, 4, 8, ...
const STRIDE: usize = 4;

/// The hash of a gram (Fibonacci hashing); its top 16 bits pick a slot.
fn hash(gram: [u8; 4]) -> u32 {
    u32::from_le_bytes(gram).wrapping_mul(0x9E37_79B1)
}

/// The grams of the text being detected, and where that text lies.
struct Index {
    /// Address range of the text (`start > end`: no text).
    start: usize,
    end: usize,
    /// This text's stamp: slot `hash >> 16` of `set` holds it when some
    /// gram of the text hashes there. A new text takes the next stamp, so
    /// the table is cleared only when the stamps wrap around.
    stamp: u8,
    set: Option<Box<[u8; SLOTS]>>,
}

/// Slots of the table: at most [`MAX_GRAMS`] grams set an eighth of them.
const SLOTS: usize = 1 << 16;

thread_local! {
    static INDEX: RefCell<Index> = const {
        RefCell::new(Index {
            start: usize::MAX,
            end: 0,
            stamp: 0,
            set: None,
        })
    };
}

/// Texts above this many grams are searched without an index (the set
/// would be mostly ones; reading it would not pay).
const MAX_GRAMS: usize = 1 << 13;

/// While alive, [`Literal::is_in`] consults the grams of one text (and of
/// any slice of it); dropped, the index is off again. It borrows the text:
/// the index names the text by its addresses, so the text must outlive it
/// (another text at the same addresses would be judged by stale grams).
pub(crate) struct Scope<'t> {
    restore: Option<(usize, usize)>,
    text: PhantomData<&'t str>,
}

impl<'t> Scope<'t> {
    /// Indexes `text` unless an index is already on: then a slice of its
    /// text keeps it, anything else turns it off for this scope.
    pub(crate) fn enter(text: &'t str) -> Scope<'t> {
        INDEX.with_borrow_mut(|ix| {
            let (start, end) = range(text.as_bytes());
            if ix.start <= ix.end {
                let prev = (ix.start, ix.end);
                if ix.start <= start && end <= ix.end {
                    return Scope::restoring(None);
                }
                (ix.start, ix.end) = (usize::MAX, 0);
                return Scope::restoring(Some(prev));
            }
            let b = text.as_bytes();
            let grams = b.len() / STRIDE;
            if grams > MAX_GRAMS {
                return Scope::restoring(None);
            }
            ix.stamp = ix.stamp.wrapping_add(1);
            let set = ix.set.get_or_insert_with(|| Box::new([0; SLOTS]));
            if ix.stamp == 0 {
                set.fill(0);
                ix.stamp = 1;
            }
            // The grams at every 4th byte are the 4-byte chunks, read two
            // at a time (one 8-byte load).
            let pairs = b.chunks_exact(2 * STRIDE);
            let rest = pairs.remainder();
            for g in pairs {
                set[(hash([g[0], g[1], g[2], g[3]]) >> 16) as usize] = ix.stamp;
                set[(hash([g[4], g[5], g[6], g[7]]) >> 16) as usize] = ix.stamp;
            }
            if let Some(g) = rest.get(..STRIDE) {
                set[(hash([g[0], g[1], g[2], g[3]]) >> 16) as usize] = ix.stamp;
            }
            (ix.start, ix.end) = (start, end);
            Scope::restoring(Some((usize::MAX, 0)))
        })
    }

    /// A scope that puts back `restore` (the index's text range) when dropped.
    fn restoring(restore: Option<(usize, usize)>) -> Scope<'t> {
        Scope {
            restore,
            text: PhantomData,
        }
    }
}

impl Drop for Scope<'_> {
    fn drop(&mut self) {
        if let Some((start, end)) = self.restore {
            INDEX.with_borrow_mut(|ix| (ix.start, ix.end) = (start, end));
        }
    }
}

/// The addresses `b` spans.
fn range(b: &[u8]) -> (usize, usize) {
    let start = b.as_ptr() as usize;
    (start, start + b.len())
}

/// A literal a detector looks for: its searcher and its grams by residue.
pub(crate) struct Literal {
    finder: Finder<'static>,
    /// The hashes of the grams at offsets `j` with `j % 4 == r`, for `r`
    /// 0 to 3, one after the other, and where each residue's run ends;
    /// `None` when some residue has none (the index cannot rule it out).
    grams: Option<(Box<[u32]>, [usize; STRIDE])>,
}

impl Literal {
    pub(crate) fn new(needle: &'static str) -> Literal {
        let b = needle.as_bytes();
        let mut grams = Vec::new();
        let mut ends = [0; STRIDE];
        for (r, end) in ends.iter_mut().enumerate() {
            let mut j = r;
            while let Some(g) = b.get(j..j + 4) {
                grams.push(hash([g[0], g[1], g[2], g[3]]));
                j += STRIDE;
            }
            *end = grams.len();
        }
        let every = (0..STRIDE).all(|r| ends[r] > if r == 0 { 0 } else { ends[r - 1] });
        Literal {
            finder: crate::read::literal(needle),
            grams: every.then(|| (grams.into_boxed_slice(), ends)),
        }
    }

    /// Whether the literal occurs in `hay`: `hay.contains(literal)`.
    pub(crate) fn is_in(&self, hay: &[u8]) -> bool {
        if let Some(grams) = &self.grams
            && INDEX.with_borrow(|ix| {
                let (start, end) = range(hay);
                ix.start <= start && end <= ix.end && !maybe_in(grams, ix)
            })
        {
            return false;
        }
        self.finder.find(hay).is_some()
    }
}

/// Whether, for some residue, every gram of it is in the set.
fn maybe_in((grams, ends): &(Box<[u32]>, [usize; STRIDE]), ix: &Index) -> bool {
    let Some(set) = &ix.set else {
        return true;
    };
    let mut start = 0;
    ends.iter().any(|&end| {
        let run = &grams[start..end];
        start = end;
        run.iter().all(|h| set[(h >> 16) as usize] == ix.stamp)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_agrees_with_contains() {
        let needles = [
            "Test 1:",
            "TransferBench v",
            "é é",
            "abcdabcd",
            "P2P",
            "RocmBandwidthTest Version",
        ];
        let hays = [
            String::new(),
            "x".repeat(3),
            "Test 1: ok".to_string(),
            format!("{}Test 1:{}", "-".repeat(37), "0".repeat(5)),
            format!("{}TransferBench v1.2", "a b ".repeat(300)),
            format!("{}RocmBandwidthTest Versio", "z".repeat(41)),
            "é é é".to_string(),
            format!("{}abcdabcd", "abcd".repeat(9000)),
            format!("{}abcdabcd", "abcd".repeat(5000)),
            "P2P".to_string(),
        ];
        let lits: Vec<Literal> = needles.iter().map(|n| Literal::new(n)).collect();
        for hay in &hays {
            let _scope = Scope::enter(hay);
            // Slices of the indexed text: short ones at every start and
            // end near the front, long ones to the end.
            let n = hay.len();
            for a in 0..n.min(24) {
                let ends = (a..=n.min(a + 70)).chain(n.saturating_sub(8).max(a)..=n);
                for b in ends {
                    let h = &hay.as_bytes()[a..b];
                    for (n, l) in needles.iter().zip(&lits) {
                        let want = memchr::memmem::find(h, n.as_bytes()).is_some();
                        assert_eq!(l.is_in(h), want, "{n:?} in {a}..{b} of {hay:?}");
                    }
                }
            }
        }
        // Past 255 texts the stamps wrap and the table is cleared: what an
        // older text set is not taken for this one's.
        for k in 0..600 {
            let hay = if k % 2 == 0 {
                "TransferBench v1"
            } else {
                "Test 1: x"
            };
            let hay = hay.to_string();
            let _scope = Scope::enter(&hay);
            assert_eq!(lits[1].is_in(hay.as_bytes()), k % 2 == 0, "{k}");
            assert_eq!(lits[0].is_in(hay.as_bytes()), k % 2 == 1, "{k}");
        }
        // A nested scope on another text turns the index off, and back on.
        let (one, two) = ("xxxx Test 1: yyyy".to_string(), "Test 1:".to_string());
        let _outer = Scope::enter(&one);
        {
            let _inner = Scope::enter(&two);
            assert!(lits[0].is_in(two.as_bytes()));
        }
        assert!(lits[0].is_in(one.as_bytes()));
        assert!(!lits[1].is_in(one.as_bytes()));
    }
}
