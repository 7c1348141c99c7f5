//! Cheap hashing for grouping and de-duplicating a bundle's entries.

use std::hash::{BuildHasher, Hash, Hasher, RandomState};
use std::sync::OnceLock;

/// A multiply-rotate hash, eight bytes a step (rustc's Fx): SipHash cost
/// more than the rest of grouping a bundle's series. Seeded at random once
/// per process, so a transcript cannot be made to collide on purpose; a
/// caller stays correct when keys collide all the same.
pub(crate) struct Mix(u64);

impl Mix {
    const K: u64 = 0xf135_7aea_2e62_a9c5;

    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(26) ^ w).wrapping_mul(Self::K);
    }
}

impl Hasher for Mix {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let mut last = [0u8; 8];
        let rest = chunks.remainder();
        last[..rest.len()].copy_from_slice(rest);
        self.add(u64::from_le_bytes(last) ^ rest.len() as u64);
    }

    fn write_u8(&mut self, v: u8) {
        self.add(u64::from(v));
    }

    fn write_u32(&mut self, v: u32) {
        self.add(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        self.add(v);
    }

    fn write_usize(&mut self, v: usize) {
        self.add(v as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The hasher of a map keyed by a [`Mix`] hash: already mixed, it is used
/// as it is.
#[derive(Default)]
pub(crate) struct AsIs(u64);

impl Hasher for AsIs {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// `k`'s [`Mix`] hash, under this process's seed.
pub(crate) fn hash_of<K: ?Sized + Hash>(k: &K) -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    let seed = *SEED.get_or_init(|| RandomState::new().hash_one(0u8));
    let mut h = Mix(seed);
    k.hash(&mut h);
    h.finish()
}
