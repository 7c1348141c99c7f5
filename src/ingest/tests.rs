use super::blocks::LineTexts;
use super::*;

#[test]
fn line_texts_answer_as_a_hash_map_of_the_pairs() {
    let text = "a\nb\r\n\nc\nd";
    for lines in [
        &[][..],
        &[3],
        &[4, 5, 9, 10],
        &[7, 2, 7],
        &[1, 2, 3, 4, 5, 6, 7],
    ] {
        let want: std::collections::HashMap<usize, &str> =
            lines.iter().copied().zip(text.lines()).collect();
        let got = LineTexts::new(lines, text);
        for n in 0..14 {
            assert_eq!(got.get(n), want.get(&n).copied(), "{lines:?} {n}");
        }
    }
}

#[test]
fn binary_junk_becomes_a_problem_with_a_line() {
    let b = read_transcript("junk.bin", b"line one\n\xff\xfe\x00");
    assert_eq!(b.problems.len(), 1);
    assert_eq!(
        b.problems[0].one_line(),
        "junk.bin:2: expected UTF-8 or UTF-16 text; this looks like a binary file"
    );
    assert!(b.transcript.is_none());
}

#[test]
fn garbled_matrix_names_the_line() {
    let b = read_transcript(
        "topo.txt",
        b"\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV4\t0-3\nGPU1\tNV4\n\nLegend:\n  X = Self\n  PIX  = Connection traversing at most a single PCIe bridge\n  NV#  = Connection traversing a bonded set of # NVLinks\n",
    );
    assert_eq!(b.problems.len(), 1, "{:?}", b.problems);
    assert!(
        b.problems[0]
            .one_line()
            .starts_with("topo.txt:3: nvidia-smi-topo: expected 2 cells")
    );
}

#[test]
fn silent_commands_out_of_line_order_never_panic() {
    // Synthetic: a scan whose silent commands are not in line order
    // (no scanner makes one today); each starts a run of its own.
    let mut scan = scan::scan("a\nb\nc\nd\ne\nf\n");
    scan.silent = vec![
        (5, "lsmod | grep nv_peer_mem".into()),
        (3, "lsmod | grep nvidia_peermem".into()),
    ];
    assert_eq!(silent_session(&scan).len(), 2);
}

#[test]
fn sha256_matches_a_known_digest() {
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}
