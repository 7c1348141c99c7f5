//! The global allocator: mimalloc, entered the way most of our
//! allocations need.
//!
//! The `mimalloc` crate's allocator calls `mi_malloc_aligned` for every
//! allocation, which walks three calls and an alignment check before
//! mimalloc's small-block fast path. Almost every allocation here (strings,
//! Vecs of words and cells) needs no more than a word's alignment, which
//! every mimalloc block has: those go straight to `mi_malloc`, as mimalloc
//! itself does in its aligned `realloc` (alignment at most
//! `sizeof(uintptr_t)`, no offset: plain `realloc`). The rest keep the
//! aligned entry points. About 2 M of 117 M instructions of ingest.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// Every mimalloc block is aligned to at least a machine word: its size
/// classes are whole words and its pages start aligned.
const WORD: usize = std::mem::size_of::<usize>();

pub struct MiMalloc;

// SAFETY: each function hands the request to mimalloc's C allocator,
// which returns null on failure (as `GlobalAlloc` wants) and a block of at
// least `layout.size()` bytes. The plain entry points are used only where
// `layout.align() <= WORD`, an alignment every mimalloc block has;
// otherwise the aligned ones are. Blocks from either are freed by
// `mi_free` and resized by `mi_realloc`/`mi_realloc_aligned`, which
// mimalloc allows for any block it returned.
unsafe impl GlobalAlloc for MiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl; mimalloc accepts any size.
        unsafe {
            if layout.align() <= WORD {
                mi::mi_malloc(layout.size()) as *mut u8
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`, the block zeroed.
        unsafe {
            if layout.align() <= WORD {
                mi::mi_zalloc(layout.size()) as *mut u8
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator (the caller's contract).
        unsafe { mi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with `layout`; the new
        // block keeps `layout.align()` as `alloc` would give it.
        unsafe {
            if layout.align() <= WORD {
                mi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8
            } else {
                mi::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of every size class up to a few KiB, at every alignment up
    /// to a page, come back aligned, writable, resizable with their
    /// contents kept, and free.
    #[test]
    fn blocks_are_aligned_kept_and_freed() {
        let a = MiMalloc;
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in (1..=130).chain([255, 256, 1000, 4096, 5000, 70_000]) {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a non-zero size; every block is freed once below.
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "size {size} align {align}");
                    for i in 0..size {
                        *p.add(i) = i as u8;
                    }
                    let q = a.realloc(p, layout, size * 3);
                    assert!(!q.is_null());
                    assert_eq!(q as usize % align, 0, "realloc size {size} align {align}");
                    for i in 0..size {
                        assert_eq!(*q.add(i), i as u8);
                    }
                    a.dealloc(q, Layout::from_size_align(size * 3, align).unwrap());
                    let z = a.alloc_zeroed(layout);
                    assert!(!z.is_null());
                    assert_eq!(z as usize % align, 0);
                    assert!((0..size).all(|i| *z.add(i) == 0));
                    a.dealloc(z, layout);
                }
            }
        }
    }
}
