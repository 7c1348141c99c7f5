//! Recognising NVIDIA topology transcripts (`topo -m`, `topo -p2p`,
//! `nvlink --status`) from their text: the detectors the tool table asks
//! of every block no earlier tool took, so each rejects early.

use super::*;

pub fn looks_like_topo_matrix(text: &str, lines: &[&str]) -> bool {
    if has!(text, "Connection traversing") {
        return true;
    }
    let mut header = false;
    let mut last_header = None;
    for (n, l) in crate::evidence::numbered(lines) {
        // Only header and GPU rows matter; skip everything else unsplit.
        if !crate::evidence::trim_start(l).starts_with("GPU") {
            continue;
        }
        // One pass over the words, no Vec per row: the first word, then
        // what the header and row tests ask of the others.
        let mut toks = l.words();
        let Some(first) = toks.next() else { continue };
        let (mut x, mut p2p, mut topo) = (false, false, false);
        for t in toks {
            x |= t == "X";
            p2p |= P2P_CODES[1..].contains(&t);
            topo |= is_topo_code(t);
        }
        if first.starts_with("GPU0") && !x {
            header = l.contains("Affinity");
            last_header = header.then_some(n);
        }
        if header && is_gpu_label(first) && !p2p && topo {
            return true;
        }
    }
    // A matrix cut right after its header: the header is the text's last
    // line (`GPU0 GPU1 ... CPU Affinity` names no other tool's table).
    if last_header.is_some_and(|h| lines[h..].iter().all(|l| l.trim().is_empty())) {
        return true;
    }
    // Rows pasted without their header: the first line is GPU0's row,
    // `X` and then a `topo -m` code.
    lines
        .iter()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| {
            let mut w = l.words();
            w.next() == Some("GPU0") && w.next() == Some("X") && w.next().is_some_and(is_topo_code)
        })
}

pub fn looks_like_p2p_status(text: &str, lines: &[&str]) -> bool {
    if has!(text, "Chipset not supported") || has!(text, "= Status Ok") {
        return true;
    }
    let row = lines.iter().any(|l| is_p2p_row(l));
    // A matrix cut right after its header: the text's last line names
    // GPU0, GPU1, ... and nothing else (a `topo -m` header names a CPU
    // Affinity column too; rocm-smi's, under its banners, is read first).
    row || lines
        .iter()
        .rev()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| is_p2p_header(l))
}

/// `GPU0  X  OK  CNS`: a row of `nvidia-smi topo -p2p`, a GPU and its
/// P2P statuses (two or more, one not `X`).
pub(crate) fn is_p2p_row(l: &str) -> bool {
    if !crate::evidence::trim_start(l).starts_with("GPU") {
        return false;
    }
    // Token by token, no list: a `topo -m` row (the next entry's,
    // which comes here first) stops at its first code that is no
    // P2P status.
    let mut toks = l.words();
    if !toks.next().is_some_and(is_gpu_label) {
        return false;
    }
    let (mut n, mut not_x) = (1, false);
    for t in toks {
        if !P2P_CODES.contains(&t) {
            return false;
        }
        n += 1;
        not_x |= t != "X";
    }
    n >= 3 && not_x
}

/// `GPU0 GPU1 ... GPU<n-1>`, two GPUs or more, in order: the header of
/// `nvidia-smi topo -p2p`.
pub(crate) fn is_p2p_header(l: &str) -> bool {
    let mut n = 0;
    let gpus = l.words().all(|t| {
        n += 1;
        t.strip_prefix("GPU").and_then(parse_plain_u32) == Some(n - 1)
    });
    gpus && n >= 2
}

pub fn looks_like_nvlink_status(text: &str, lines: &[&str]) -> bool {
    has!(text, "Link ")
        && has!(text, "GPU ")
        && crate::evidence::numbered(lines).any(|(_, l)| {
            l.trim_start().starts_with("Link ") && l.contains(':')
                || l.contains("Unable to retrieve NVLink information")
        })
        && crate::evidence::numbered(lines).any(|(_, l)| parse_gpu_line(l).is_some())
}

/// `GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-...)`.
pub(crate) fn is_nvlink_gpu_line(t: &str) -> bool {
    let Some(rest) = t.strip_prefix("GPU ") else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && rest[digits..].starts_with(": ") && t.contains("(UUID:")
}
