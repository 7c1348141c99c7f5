//! Header-less fragments, clones and embedded blocks from `captures-wild/`
//! (and the few real transcripts found for the tools added with them):
//! values checked by eye against the transcript line named in each
//! comment.

use std::path::Path;

use wire_report::bundle::Bundle;

fn node(name: &str) -> Bundle {
    let dir = Path::new("captures").join(name);
    let mut v = wire_report::inputs::ingest(&[dir]).unwrap();
    assert_eq!(v.len(), 1);
    v.remove(0).bundle
}

/// lspci-002: `lspci ... -vvv | grep -E 'LnkCap|LnkSta'` for four
/// ConnectX-7 functions, no device lines. Lines 2/7/12/17 read
/// "LnkCap: Port #0, Speed 32GT/s, Width x16", lines 3/8/13/18
/// "LnkSta: Speed 32GT/s (ok), Width x16 (ok)"; lines 6/11/16/21 are
/// lspci's libkmod warning. Which device each pair belongs to is not
/// stated by the transcript.
#[test]
fn lnk_lines_without_device_headers_read_as_links_of_unstated_devices() {
    let b = node("cx7-4nic-lnk-grep");
    let lines: Vec<usize> = b.pcie.iter().map(|p| p.source.line).collect();
    assert_eq!(lines, vec![2, 7, 12, 17]);
    for p in &b.pcie {
        assert!(p.address.starts_with("unknown #"), "{}", p.address);
        assert!(
            p.name
                .as_deref()
                .unwrap()
                .contains("not stated by the transcript")
        );
        assert_eq!(p.max_speed_gt_per_s, Some(32.0));
        assert_eq!(p.current_speed_gt_per_s, Some(32.0));
        assert_eq!(
            (p.max_width_lanes, p.current_width_lanes),
            (Some(16), Some(16))
        );
        assert!(!p.speed_downgraded && !p.width_downgraded);
    }
    let t = &b.transcripts[0];
    assert_eq!(
        t.blocks[0]
            .command
            .as_deref()
            .map(|c| c.contains("grep -E")),
        Some(true)
    );
    assert_eq!((t.lines.read, t.lines.not_understood), (16, 0));
    let warned: Vec<usize> = t
        .notes
        .iter()
        .filter(|n| n.text.contains("libkmod"))
        .map(|n| n.line)
        .collect();
    assert_eq!(warned, vec![6, 11, 16, 21]);
    assert!(b.problems.is_empty(), "{:?}", b.problems);
}
