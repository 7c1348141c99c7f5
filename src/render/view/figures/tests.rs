use super::*;
use crate::bundle::{Host, Origin};
use crate::render::view::{Mode, NodeSlugs};

/// An OSU latency sweep with these times (seconds) at 1 KiB, 2 KiB, ...
fn latency_sweep(times: &[f64]) -> Bundle {
    let mut b = Bundle::new(Host {
        name: "n".into(),
        origin: Origin::Ingested,
    });
    for (i, &t) in times.iter().enumerate() {
        let mut m = Measurement::new("osu", i + 1, Kind::MpiPt2pt, "osu_latency", Statistic::Avg);
        m.size_bytes = Some(1024 << i);
        m.latency_s = Some(t);
        b.measurements.push(m);
    }
    b
}

fn charts(b: &Bundle) -> Vec<ChartView> {
    let slugs = NodeSlugs::of("n".into(), b);
    sweep_charts(b, &NodeFacts::of(b), &Linker::new(Mode::Site, &slugs))
}

#[test]
fn a_sound_fit_is_drawn_and_quoted() {
    let times: Vec<f64> = (0..8).map(|i| 2e-6 + f64::from(1024 << i) / 10e9).collect();
    let s = &fit::sweeps(&latency_sweep(&times).measurements)[0];
    let (lines, note) = fit_view(&fit::fit_sweep(s, 3), true);
    assert_eq!(lines.len(), 1);
    assert!(note.starts_with("MODEL fit"), "{note}");
    assert!(note.contains("alpha 2.000 us"), "{note}");
}

#[test]
fn a_fit_with_a_low_r_squared_is_not_drawn_and_the_note_says_why() {
    let b = latency_sweep(&[9e-6, 1e-6, 8e-6, 1.5e-6, 9e-6, 2e-6, 1.2e-5]);
    let s = &fit::sweeps(&b.measurements)[0];
    let judged = fit::fit_sweep(s, 3);
    let (lines, note) = fit_view(&judged, true);
    assert!(lines.is_empty());
    assert!(note.starts_with("No alpha-beta fit drawn: R² "), "{note}");
    assert!(note.contains("is below 0.90"), "{note}");
    assert!(!note.contains("MODEL"), "{note}");
    // The page's chart carries the same note, and no alpha or m* figure.
    let chart = &charts(&b)[0];
    assert_eq!(chart.note, note);
    assert!(
        !chart.note.contains("alpha ") && !chart.note.contains("m* "),
        "{}",
        chart.note
    );
}

#[test]
fn a_collectives_times_are_drawn_as_times_never_as_gb_s() {
    let times: Vec<f64> = (0..8).map(|i| 2e-6 + f64::from(1024 << i) / 10e9).collect();
    let mut b = latency_sweep(&times);
    let point_to_point = charts(&b);
    assert_eq!(point_to_point.len(), 2, "GB/s and latency charts");
    assert!(point_to_point[0].svg.contains("GB/s"));
    for m in &mut b.measurements {
        m.kind = Kind::Reduce;
    }
    let collective = charts(&b);
    assert_eq!(collective.len(), 1, "the latency chart alone");
    assert!(collective[0].title.ends_with(" latency"));
    assert!(!collective[0].svg.contains("GB/s"));
    assert!(collective[0].note.contains("not drawn as GB/s"));
}

#[test]
fn a_fit_with_a_negative_alpha_is_not_drawn() {
    let b = latency_sweep(&[1e-7, 3e-7, 1e-6, 4e-6, 1.6e-5]);
    let s = &fit::sweeps(&b.measurements)[0];
    let judged = fit::fit_sweep(s, 1);
    let (lines, note) = fit_view(&judged, true);
    assert!(lines.is_empty(), "{judged:?}");
    assert!(note.contains("are negative"), "{note}");
}

#[test]
fn matrix_cell_text_reads_at_4_5_to_1_on_every_heat() {
    assert_eq!(hsl_blue(0.5), (38, 127, 217));
    for lower in [false, true] {
        for i in 0..=300 {
            let v = 10f64.powf(-3.0 + f64::from(i) / 100.0);
            let style = heat(v, 1.0, lower);
            let light: f64 = style
                .split(',')
                .nth(2)
                .unwrap()
                .split('%')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let bg = hsl_blue(light / 100.0);
            let text = if style.ends_with("#000") {
                (0, 0, 0)
            } else {
                (255, 255, 255)
            };
            let c = charts::contrast(bg, text);
            assert!(c >= 4.5, "{style}: {c:.2}:1");
        }
    }
}
