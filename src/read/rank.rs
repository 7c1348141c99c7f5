//! How common each byte is in tool transcripts, for the whole-text
//! searches of the detectors (`evidence`'s `has!`): memchr's searcher scans for
//! the needle's two rarest bytes, and its default ranks are those of prose
//! and code, where a digit, `-` or `:` is rare. In transcripts they are
//! the commonest bytes after the space, so a needle such as `Test 1:` made
//! the searcher stop on nearly every number. Only the speed of a search
//! depends on these ranks, never its answer.

use memchr::arch::all::packedpair::HeuristicFrequencyRank;

/// Ranks by byte count over `captures/` (0 rarest, 255 commonest; ties
/// and absent bytes in memchr's default order).
pub(crate) struct TranscriptRank;

impl HeuristicFrequencyRank for TranscriptRank {
    fn rank(&self, byte: u8) -> u8 {
        RANK[usize::from(byte)]
    }
}

/// A searcher for `needle` that stops on the bytes of it rarest in
/// transcripts.
pub(crate) fn finder(needle: &'static str) -> memchr::memmem::Finder<'static> {
    memchr::memmem::FinderBuilder::new().build_forward_with_ranker(TranscriptRank, needle)
}

#[rustfmt::skip]
const RANK: [u8; 256] = [
    26, 25, 24, 23, 22, 21, 20, 19, 18, 239, 242, 28, 29, 78, 17, 16,
    15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 27, 5, 4, 3, 2, 1,
    255, 172, 179, 185, 171, 163, 157, 181, 195, 196, 187, 188, 200, 253, 243, 208,
    254, 247, 241, 233, 234, 235, 230, 225, 229, 218, 240, 182, 175, 220, 177, 168,
    169, 214, 207, 228, 215, 211, 194, 205, 186, 217, 161, 176, 203, 204, 221, 197,
    227, 178, 206, 224, 201, 209, 192, 183, 193, 191, 160, 189, 167, 190, 158, 216,
    173, 250, 223, 236, 238, 252, 222, 213, 212, 249, 170, 198, 237, 231, 248, 245,
    232, 184, 244, 246, 251, 226, 210, 199, 219, 202, 180, 65, 174, 64, 162, 0,
    159, 74, 164, 75, 150, 67, 63, 147, 55, 148, 40, 141, 142, 37, 38, 32,
    72, 58, 47, 46, 165, 54, 59, 50, 41, 56, 144, 43, 51, 44, 33, 42,
    49, 57, 45, 53, 145, 52, 61, 48, 35, 143, 34, 30, 39, 36, 140, 31,
    62, 80, 60, 69, 66, 77, 73, 70, 68, 76, 149, 71, 79, 82, 146, 81,
    83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98,
    99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114,
    115, 116, 166, 117, 151, 152, 153, 154, 155, 156, 118, 119, 120, 121, 122, 123,
    124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139,
];
