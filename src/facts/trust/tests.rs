use super::*;
use crate::evidence::answers::{Outstanding, Path, Timer};
use crate::evidence::measurement::Kind;

/// The bundle of one captured node.
fn capture(dir: &str) -> Bundle {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(dir);
    crate::inputs::load_nodes(&[dir]).unwrap().remove(0)
}

/// A copy figure whose transcript answers every question but the last.
fn answered(size: u64, bw: f64) -> Measurement {
    let mut m = Measurement::new("tool", 1, Kind::P2pCopy, "copy", Statistic::Avg);
    m.src = Some("GPU0".into());
    m.dst = Some("GPU1".into());
    m.size_bytes = Some(size);
    m.bandwidth_bytes_per_s = Some(bw);
    m.questions.unit = Unit::GigabytesPerS;
    m.questions.outstanding = Outstanding::OneTransfer { timer: Timer::Gpu };
    m.questions.path = Path::GpuToGpu { access: Some(true) };
    m.warmup_iterations = Some(5);
    m.iterations = Some(20);
    m.verification = Verification::Checked { errors: 0 };
    m
}

fn bundle(cells: Vec<Measurement>) -> Bundle {
    let mut b = Bundle::new(crate::bundle::Host {
        name: "n".into(),
        origin: crate::bundle::Origin::Ingested,
    });
    b.measurements = cells;
    b
}

#[test]
fn grades_line_up_with_the_measurements() {
    let b = capture("gh200-2node-slingshot-allreduce");
    let g = grades(&b);
    assert_eq!(g.len(), b.measurements.len());
    assert_eq!(crate::facts::NodeFacts::of(&b).trust, g);
}

#[test]
fn an_nvbandwidth_capture_grades_b_for_what_it_does_not_print() {
    let b = capture("h100-8gpu-nvbandwidth-sm");
    let g = grades(&b);
    assert!(!g.is_empty());
    for t in &g {
        assert_eq!(t.grade, Grade::B, "{t:?}");
        assert!(
            t.reasons
                .contains(&TrustReason::SizeToolDefault { bytes: 64 << 20 }),
            "{t:?}"
        );
        assert!(
            t.reasons
                .contains(&TrustReason::Unanswered(Question::WarmUp))
        );
        assert!(t.reasons.contains(&TrustReason::VerificationNotStated));
    }
}

#[test]
fn an_osu_table_without_its_title_grades_c_for_its_unknown_direction() {
    let b = capture("osu-bw-rdma-fragment");
    let g = grades(&b);
    assert!(!g.is_empty());
    for t in &g {
        assert!(t.is_weak(), "{t:?}");
        assert_eq!(t.reasons[0], TrustReason::DirectionNotStated, "{t:?}");
    }
}

#[test]
fn wrong_values_grade_c_and_checked_saturated_large_sizes_grade_a() {
    let b = capture("gh200-2node-slingshot-allreduce");
    let g = grades(&b);
    let at = |size: u64, stat: Statistic, test: &str| {
        let i = b
            .measurements
            .iter()
            .position(|m| m.size_bytes == Some(size) && m.statistic == stat && m.test == test)
            .unwrap();
        &g[i]
    };
    // 96 wrong values at 1 MiB, out of place.
    let wrong = at(1 << 20, Statistic::Busbw, "allreduce out-of-place");
    assert!(wrong.is_weak());
    assert_eq!(
        wrong.reasons[0],
        TrustReason::DataCheckFailed { wrong: Some(96) }
    );
    // The largest size: checked, warmed up, repeated, saturated.
    let largest = b
        .measurements
        .iter()
        .filter_map(|m| m.size_bytes)
        .max()
        .unwrap();
    let top = at(largest, Statistic::Busbw, "allreduce out-of-place");
    assert_eq!(top.grade, Grade::A, "{top:?}");
    assert!(
        top.reasons
            .iter()
            .any(|r| matches!(r, TrustReason::Saturated { .. }))
    );
}

#[test]
fn a_sweep_point_far_below_the_sweeps_best_grades_c() {
    let b = bundle(vec![
        answered(4096, 1e9),
        answered(1 << 20, 7e9),
        answered(64 << 20, 10e9),
    ]);
    let g = grades(&b);
    assert_eq!(
        g[0].reasons[0],
        TrustReason::FarFromSaturation {
            size_bytes: 4096,
            fraction_of_best: 0.1
        }
    );
    assert_eq!(g[1].grade, Grade::B);
    assert!(matches!(
        g[1].reasons[0],
        TrustReason::BelowSaturation { .. }
    ));
    assert_eq!(g[2].grade, Grade::A, "{:?}", g[2]);
}

#[test]
fn a_single_small_size_and_wide_repetitions_grade_b() {
    let small = grades(&bundle(vec![answered(65536, 10e9)]));
    assert_eq!(small[0].grade, Grade::B);
    assert!(
        small[0]
            .reasons
            .contains(&TrustReason::SmallSingleSize { size_bytes: 65536 })
    );
    let mut lo = answered(64 << 20, 6e9);
    lo.statistic = Statistic::Min;
    let mut hi = answered(64 << 20, 10e9);
    hi.statistic = Statistic::Max;
    let g = grades(&bundle(vec![answered(64 << 20, 9e9), lo, hi]));
    let ratio = 10.0 / 6.0;
    assert!(
        g[0].reasons.contains(&TrustReason::WideSpread { ratio }),
        "{:?}",
        g[0]
    );
    assert_eq!(g[0].grade, Grade::B);
}

#[test]
fn an_unstated_unit_or_a_bandwidth_without_size_grades_c() {
    let mut m = answered(64 << 20, 10e9);
    m.questions.unit = Unit::NotStated;
    assert!(grade(&m, None, None).is_weak());
    let mut m = answered(64 << 20, 10e9);
    m.size_bytes = None;
    let t = grade(&m, None, None);
    assert_eq!(t.reasons[0], TrustReason::SizeNotStated);
    // A latency without a size is only not fully answered.
    let mut m = answered(8, 0.0);
    m.bandwidth_bytes_per_s = None;
    m.latency_s = Some(2e-6);
    m.size_bytes = None;
    assert_eq!(grade(&m, None, None).grade, Grade::B);
}

#[test]
fn the_shipped_captures_have_every_grade() {
    // Counted for the record (see the report of this change); the test
    // only asks that each grade occurs and that C stays a minority.
    let bundles = crate::inputs::load_nodes(&[
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("captures")
    ])
    .unwrap();
    let mut count = BTreeMap::new();
    for b in &bundles {
        for t in grades(b) {
            *count.entry(t.grade).or_insert(0usize) += 1;
        }
    }
    let total: usize = count.values().sum();
    assert!(count.get(&Grade::A).is_some_and(|n| *n > 0), "{count:?}");
    assert!(count.get(&Grade::B).is_some_and(|n| *n > 0), "{count:?}");
    assert!(
        count
            .get(&Grade::C)
            .is_some_and(|n| *n > 0 && *n * 2 < total),
        "{count:?}"
    );
}
