//! Sentences for the peer-path findings (staged copies, a peer path
//! slower than staging, no peer path) and for pause frames without ECN.
//! Each says what a copy costs at the size the tool measured, so a
//! finding judged "by design" still tells what the design costs.

use super::gbs;
use crate::evidence::measurement::describe_size;
use crate::render::format::secs;

/// `A 40 MB copy takes 2.1 ms at this rate` for the measured size, or
/// for 1 GiB (said to be an example) where the tool states none.
fn cost(bytes_per_s: f64, size: Option<u64>) -> String {
    if bytes_per_s <= 0.0 {
        return String::new();
    }
    match size {
        Some(s) => format!(
            " At that rate a copy of {} (the size measured) takes {}.",
            describe_size(s),
            secs(s as f64 / bytes_per_s)
        ),
        None => format!(
            " At that rate 1 GiB (an example; the tool states no size) takes {}.",
            secs(1073741824.0 / bytes_per_s)
        ),
    }
}

pub(super) fn silent_staging(
    (src, dst): (&str, &str),
    (enabled, disabled): (f64, f64),
    size: Option<u64>,
    pairs: usize,
    status: Option<&str>,
) -> String {
    let mut s = format!(
        "{src} to {dst}: {} with P2P enabled against {} with it disabled. The enabled copy is staged through host memory too.",
        gbs(enabled),
        gbs(disabled)
    );
    s.push_str(&cost(enabled, size));
    if let Some(st) = status {
        s.push_str(&format!(
            " nvidia-smi topo -p2p says {st} for the pair: no peer path."
        ));
    }
    if pairs > 1 {
        s.push_str(&format!(
            " {pairs} GPU pairs in all show the same fingerprint."
        ));
    }
    s
}

pub(super) fn slower_than_staged(
    (src, dst): (&str, &str),
    (enabled, disabled): (f64, f64),
    size: Option<u64>,
    pairs: usize,
) -> String {
    let mut s = format!(
        "{src} to {dst}: {} with P2P enabled against {} staged through host memory ({:.0}% of the staged speed). The peer path is slower than the detour it should avoid.",
        gbs(enabled),
        gbs(disabled),
        100.0 * enabled / disabled
    );
    s.push_str(&cost(enabled, size));
    if pairs > 1 {
        s.push_str(&format!(
            " {pairs} GPU pairs in all are slower with P2P enabled."
        ));
    }
    s
}

pub(super) fn no_peer_path((a, b): (&str, &str), status: &str, pairs: usize) -> String {
    let mut s = format!(
        "{a}-{b}: the tool reports {status} for their peer access, no peer path. Every copy between them is staged through host memory, whatever the application asks for."
    );
    if pairs > 1 {
        s.push_str(&format!(" {pairs} GPU pairs in all have no peer path."));
    }
    s
}

pub(super) fn pause_without_ecn(
    device: &str,
    port: Option<u32>,
    pauses: &[(String, u64)],
    flat: &[String],
) -> String {
    let grew = pauses
        .iter()
        .map(|(n, d)| format!("{n} +{d}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{device}{}: pause frames grew between the readings ({grew}) while {} did not grow: PFC is holding traffic back, congestion control is not.",
        port.map(|p| format!(" port {p}")).unwrap_or_default(),
        flat.join(", ")
    )
}
