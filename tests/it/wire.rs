//! The bundle writer (`bundle::wire::compact`): serde_json's bytes for
//! every shape serde makes and every capture's bundle, and the file
//! table's marks.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde::Serialize;

use wire_report::bundle::Bundle;
use wire_report::bundle::wire::compact::{Error, write};
use wire_report::bundle::wire::{self, FilesMark};
use wire_report::evidence::Source;

/// What [`write`] writes, as text, or why it could not.
fn compact_only<T: ?Sized + Serialize>(v: &T) -> Result<String, Error> {
    let mut out = b"kept ".to_vec();
    write(v, &mut out)?;
    let text = String::from_utf8(out).expect("UTF-8");
    Ok(text
        .strip_prefix("kept ")
        .expect("the start is kept")
        .to_string())
}

fn same<T: ?Sized + Serialize>(v: &T) {
    assert_eq!(compact_only(v).unwrap(), serde_json::to_string(v).unwrap());
}

#[test]
fn every_ascii_byte_at_every_offset_of_a_word_is_escaped_as_serde_json_does() {
    for c in 0u8..=0x7f {
        for len in 0..24 {
            for at in 0..len {
                let mut s = vec![b'a'; len];
                s[at] = c;
                same(std::str::from_utf8(&s).unwrap());
            }
        }
    }
}

#[test]
fn escapes_past_the_first_block_and_in_the_overlapping_tail_are_found() {
    // Lengths over two 16-byte blocks, the tail tested by overlapping the
    // last block; a second escape after the first, and UTF-8 around them.
    for c in [0u8, 0x1f, b'"', b'\\', b'\n', 0x7f, b' '] {
        for len in 16..40 {
            for at in 0..len {
                let mut s = vec![b'a'; len];
                s[at] = c;
                s[len - 1 - at] = b'\t';
                same(std::str::from_utf8(&s).unwrap());
                let mut u = "é".repeat(len).into_bytes();
                u[2 * at] = c;
                u[2 * at + 1] = c;
                same(std::str::from_utf8(&u).unwrap());
            }
        }
    }
}

#[test]
fn multi_byte_characters_are_never_escaped() {
    for s in [
        "é\"\\\u{7f}\u{80}€\n",
        "🦀🦀🦀🦀\u{1}",
        "µs ± 0.5 → GPU0 ⇄ GPU1\t\r\u{8}\u{c}",
        "\u{2028}\u{2029}\u{feff}",
        "",
    ] {
        same(s);
        same(&s.repeat(5));
    }
}

proptest! {
    #[test]
    fn any_string_is_written_as_serde_json_writes_it(s in ".*", t in "[\\x00-\\x7f]{0,40}") {
        prop_assert_eq!(compact_only(&s).unwrap(), serde_json::to_string(&s).unwrap());
        prop_assert_eq!(compact_only(&t).unwrap(), serde_json::to_string(&t).unwrap());
    }
}

#[derive(Serialize)]
enum Shape {
    Unit,
    Newtype(u32),
    Tuple(i8, String),
    EmptyTuple(),
    Struct {
        a: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        b: Option<u64>,
    },
    EmptyStruct {},
}

#[derive(Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
enum Tagged {
    Checked { errors: u64 },
    NotVerified,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Untagged {
    A(u8),
    B { x: String },
}

#[derive(Serialize)]
struct Newtype(String);

#[derive(Serialize)]
struct Everything {
    shapes: Vec<Shape>,
    tagged: Vec<Tagged>,
    untagged: Vec<Untagged>,
    floats: Vec<f64>,
    f32s: Vec<f32>,
    ints: (i8, i16, i32, i64, i128, u8, u16, u32, u64, u128),
    chars: Vec<char>,
    #[serde(with = "serde_bytes_like")]
    bytes: Vec<u8>,
    empty: Vec<u8>,
    unit: (),
    nothing: Option<u8>,
    by_name: BTreeMap<String, Vec<u32>>,
    by_variant: BTreeMap<Tagless, u8>,
    by_newtype: BTreeMap<&'static str, Newtype>,
    empty_map: BTreeMap<String, u8>,
    bools: [bool; 2],
    #[serde(rename = "we\"ird\\key\n")]
    weird: u8,
    a_field_named_past_sixteen_bytes: u8,
}

#[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
enum Tagless {
    One,
    Two,
}

mod serde_bytes_like {
    pub fn serialize<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }
}

#[test]
fn every_shape_serde_makes_is_written_as_serde_json_writes_it() {
    let v = Everything {
        shapes: vec![
            Shape::Unit,
            Shape::Newtype(7),
            Shape::Tuple(-3, "x\"y".into()),
            Shape::EmptyTuple(),
            Shape::Struct {
                a: Some(f64::NAN),
                b: None,
            },
            Shape::Struct {
                a: None,
                b: Some(u64::MAX),
            },
            Shape::EmptyStruct {},
        ],
        tagged: vec![Tagged::Checked { errors: 3 }, Tagged::NotVerified],
        untagged: vec![Untagged::A(1), Untagged::B { x: "\u{1}".into() }],
        floats: vec![
            0.0,
            -0.0,
            1.5e-320,
            18_170_000_000.0,
            0.1 + 0.2,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e21,
            123456789.0,
        ],
        f32s: vec![0.1, f32::NAN, 3.0e38],
        ints: (
            i8::MIN,
            i16::MIN,
            i32::MIN,
            i64::MIN,
            i128::MIN,
            u8::MAX,
            u16::MAX,
            u32::MAX,
            u64::MAX,
            u128::MAX,
        ),
        chars: vec!['a', '"', '\n', '\u{0}', 'é', '🦀'],
        bytes: vec![0, 1, 255],
        empty: vec![],
        unit: (),
        nothing: None,
        by_name: [("a\\b".to_string(), vec![1, 2]), (String::new(), vec![])]
            .into_iter()
            .collect(),
        by_variant: [(Tagless::One, 1), (Tagless::Two, 2)].into_iter().collect(),
        by_newtype: [("k", Newtype("v".into()))].into_iter().collect(),
        empty_map: BTreeMap::new(),
        bools: [true, false],
        weird: 1,
        a_field_named_past_sixteen_bytes: 2,
    };
    same(&v);
}

#[test]
fn a_key_serde_json_quotes_or_refuses_is_an_error() {
    let numbers: BTreeMap<u32, u8> = [(1, 2), (30, 4)].into_iter().collect();
    assert!(compact_only(&numbers).is_err());
    let bools: BTreeMap<bool, u8> = [(true, 1)].into_iter().collect();
    assert!(compact_only(&bools).is_err());
    let lists: BTreeMap<Vec<u8>, u8> = [(vec![1], 1)].into_iter().collect();
    assert!(compact_only(&lists).is_err());
}

/// A bundle's parts that hold no source (its series and cells as read
/// back among them) are written as serde_json writes them; the sources are `[index, line]`
/// into `files`, which names each path once.
fn written_as_serde_json_writes(b: &Bundle) -> Vec<u8> {
    let same = |ours: String, theirs: String| assert!(ours == theirs, "{}", b.host.name);
    same(
        compact_only(&b.transcripts).unwrap(),
        serde_json::to_string(&b.transcripts).unwrap(),
    );
    same(
        compact_only(&b.problems).unwrap(),
        serde_json::to_string(&b.problems).unwrap(),
    );
    let bytes = wire::write(b);
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let m: wire_report::bundle::read::Measurements =
        serde_json::from_value(v["measurements"].clone()).unwrap();
    same(
        compact_only(&m).unwrap(),
        serde_json::to_string(&m).unwrap(),
    );
    let files: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    for (i, f) in files.iter().enumerate() {
        assert!(!files[..i].contains(f), "{}: {f} twice", b.host.name);
    }
    for d in v["topology"]["devices"].as_array().unwrap() {
        let s = d["source"].as_array().unwrap();
        assert!(s[0].as_u64().unwrap() < files.len() as u64);
        assert_eq!(s.len(), 2);
    }
    // Any serializer gets the very bytes.
    let mut theirs = serde_json::to_vec(b).unwrap();
    theirs.push(b'\n');
    assert!(theirs == bytes, "{}", b.host.name);
    bytes
}

#[test]
fn a_source_is_an_index_and_a_line_in_a_bundle_and_file_and_line_elsewhere() {
    let s = Source {
        file: "a/\"b\".txt".into(),
        line: 7,
    };
    assert_eq!(
        serde_json::to_string(&s).unwrap(),
        r#"{"file":"a/\"b\".txt","line":7}"#
    );
    #[derive(Serialize)]
    struct Marked<'a> {
        files: FilesMark,
        sources: [&'a Source; 3],
    }
    let t = Source {
        file: "t".into(),
        line: 1,
    };
    let v = Marked {
        files: FilesMark,
        sources: [&s, &t, &s],
    };
    assert_eq!(
        compact_only(&v).unwrap(),
        r#"{"files":["a/\"b\".txt","t"],"sources":[[0,7],[1,1],[0,7]]}"#
    );
}

#[test]
fn every_capture_bundle_is_written_as_serde_json_writes_it() {
    let nodes = wire_report::inputs::ingest(&["captures".into()]).unwrap();
    assert!(nodes.len() > 50);
    for n in &nodes {
        let bytes = written_as_serde_json_writes(&n.bundle);
        // Read back, the bundle writes the very bytes.
        let text = std::str::from_utf8(&bytes).unwrap();
        let back = Bundle::from_json(text, "b.json".as_ref()).unwrap();
        assert!(wire::write(&back) == bytes, "{}", n.bundle.host.name);
    }
}
#[test]
fn cells_with_every_field_and_odd_numbers_are_written_as_serde_json_writes_them() {
    use wire_report::evidence::measurement::{Kind, Measurement, Statistic};
    let mut b = Bundle::new(wire_report::bundle::Host {
        name: "n".into(),
        origin: wire_report::bundle::Origin::Ingested,
    });
    let odd = [
        0.0,
        -0.0,
        f64::NAN,
        f64::INFINITY,
        1e-320,
        1e300,
        18.17e9,
        0.1,
    ];
    for (i, v) in odd.iter().enumerate() {
        let mut m = Measurement::new("t", i * 1_000_003, Kind::P2pCopy, "x", Statistic::Avg);
        m.source.file = "a/\"b\".txt".into();
        m.src = Some("GPU\u{1}0".into());
        m.dst = (i % 2 == 0).then(|| "GPU1 → é".into());
        m.size_bytes = [Some(0), Some(9), Some(10), Some(u64::MAX), None][i % 5];
        m.bandwidth_bytes_per_s = Some(*v);
        m.latency_s = (i % 3 == 0).then_some(-*v);
        m.as_printed = format!("{v} \"GB/s\"\t").into();
        b.measurements.push(m);
    }
    written_as_serde_json_writes(&b);
    written_as_serde_json_writes(&Bundle::new(b.host.clone()));
}

#[test]
fn series_with_every_field_are_written_as_serde_json_writes_them() {
    use wire_report::evidence::answers::{Path, Unit};
    use wire_report::evidence::measurement::{
        Buffers, CopyEngine, Direction, Kind, Measurement, P2p, Statistic, Verification,
    };
    let mut b = Bundle::new(wire_report::bundle::Host {
        name: "n".into(),
        origin: wire_report::bundle::Origin::Ingested,
    });
    for i in 0..6u32 {
        let mut m = Measurement::new("t\"", 3, Kind::MpiPt2pt, "x\ty", Statistic::P999);
        m.source.file = "f.txt".into();
        m.direction = [Direction::Bi, Direction::NotStated][i as usize % 2];
        m.p2p = [P2p::Enabled, P2p::Unknown][i as usize % 2];
        m.buffers = [Buffers::HostPinned, Buffers::Unknown, Buffers::Mixed][i as usize % 3];
        m.copy_engine = [CopyEngine::Sm, CopyEngine::Unknown][i as usize / 3];
        m.iterations = (i % 2 == 0).then_some(u64::MAX);
        m.warmup_iterations = (i % 3 == 0).then_some(0);
        m.queue_depth = (i > 2).then_some(i);
        m.qps = (i != 4).then_some(u32::MAX - i);
        m.verification = [
            Verification::Checked { errors: 7 },
            Verification::Unknown,
            Verification::Failed,
        ][i as usize % 3]
            .clone();
        m.questions.unit = Unit::MebibytesPerS {
            printed: "MiB/sec".into(),
        };
        m.questions.path = Path::GpuToGpu {
            access: (i == 1).then_some(true),
        };
        m.questions.legacy.context = (i == 5).then(|| "legacy \"words\"".into());
        b.measurements.push(m);
    }
    written_as_serde_json_writes(&b);
}
