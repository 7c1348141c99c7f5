//! `measurements` as written: series and cells borrowed from the bundle's
//! [`Measurement`]s, never copied. A series is its first cell's shared
//! facts; a cell is the measurement itself and the index of its series.
//! [`SeriesOut`] and [`CellOut`] serialize as [`crate::bundle::read::Series`] and
//! [`crate::bundle::read::Cell`] (same fields, order and omissions; the tests compare
//! them), the file as its index.

use std::collections::HashMap;

use serde::{Serialize, Serializer};

use super::File;
use crate::evidence::measurement::{
    Buffers, CopyEngine, Direction, Kind, Measurement, P2p, Questions, Statistic, Verification,
};
use crate::evidence::text::Text;

/// Whether `t` is its type's default, "unknown": left out on the wire.
fn is_unknown<T: Default + PartialEq>(t: &T) -> bool {
    *t == T::default()
}

fn is_unknown_verification(v: &&Verification) -> bool {
    **v == Verification::default()
}

/// [`crate::bundle::read::Series`], borrowed from the first cell of the series. Two
/// cells share a series when these are equal.
#[derive(Debug, PartialEq, Eq, Hash, Serialize)]
pub(super) struct SeriesOut<'a> {
    tool: &'a Text,
    file: File<'a>,
    kind: Kind,
    test: &'a Text,
    direction: Direction,
    statistic: Statistic,
    #[serde(skip_serializing_if = "is_unknown")]
    p2p: P2p,
    #[serde(skip_serializing_if = "is_unknown")]
    buffers: Buffers,
    #[serde(skip_serializing_if = "is_unknown")]
    copy_engine: CopyEngine,
    #[serde(skip_serializing_if = "Option::is_none")]
    iterations: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    warmup_iterations: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    queue_depth: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    qps: Option<u32>,
    #[serde(skip_serializing_if = "is_unknown_verification")]
    verification: &'a Verification,
    questions: &'a Questions,
}

impl<'a> SeriesOut<'a> {
    fn of(m: &'a Measurement) -> SeriesOut<'a> {
        SeriesOut {
            tool: &m.tool,
            file: File(&m.source.file),
            kind: m.kind,
            test: &m.test,
            direction: m.direction,
            statistic: m.statistic,
            p2p: m.p2p,
            buffers: m.buffers,
            copy_engine: m.copy_engine,
            iterations: m.iterations,
            warmup_iterations: m.warmup_iterations,
            queue_depth: m.queue_depth,
            qps: m.qps,
            verification: &m.verification,
            questions: &m.questions,
        }
    }
}

/// One cell as written: [`crate::bundle::read::Cell`] borrowed from its measurement.
#[derive(Serialize)]
struct CellOut<'a> {
    series: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    src: Option<&'a Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dst: Option<&'a Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    size_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bandwidth_bytes_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_s: Option<f64>,
    as_printed: &'a str,
    line: usize,
}

/// The cells: each measurement with its series' index.
pub(super) struct CellsOut<'a> {
    cells: &'a [Measurement],
    series: Vec<u32>,
}

impl Serialize for CellsOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            self.cells
                .iter()
                .zip(&self.series)
                .map(|(m, &series)| CellOut {
                    series,
                    src: m.src.as_ref(),
                    dst: m.dst.as_ref(),
                    size_bytes: m.size_bytes,
                    bandwidth_bytes_per_s: m.bandwidth_bytes_per_s,
                    latency_s: m.latency_s,
                    as_printed: &m.as_printed,
                    line: m.source.line,
                }),
        )
    }
}

/// [`crate::bundle::read::Measurements`] as written, borrowed from the bundle's cells.
#[derive(Serialize)]
pub(super) struct MeasurementsOut<'a> {
    pub(super) series: Vec<SeriesOut<'a>>,
    pub(super) cells: CellsOut<'a>,
}

impl<'a> MeasurementsOut<'a> {
    /// Groups `ms` into series in the order first seen.
    pub(super) fn of(ms: &'a [Measurement]) -> MeasurementsOut<'a> {
        let mut series: Vec<SeriesOut<'a>> = Vec::new();
        // std's seeded hash: a transcript cannot make its series collide.
        let mut index: HashMap<SeriesOut<'a>, u32> = HashMap::new();
        let mut of_cell = Vec::with_capacity(ms.len());
        for m in ms {
            let s = SeriesOut::of(m);
            // The cells of one test come together, alternating among a few
            // series (nccl-tests: time, algbw and busbw, out of and in
            // place): the newest are compared before the lookup.
            let newest = series.iter().rev().take(8).position(|x| *x == s);
            let i = match newest {
                Some(k) => (series.len() - 1 - k) as u32,
                None => {
                    let next = series.len() as u32;
                    let i = *index.entry(s).or_insert(next);
                    if i == next {
                        series.push(SeriesOut::of(m));
                    }
                    i
                }
            };
            of_cell.push(i);
        }
        MeasurementsOut {
            series,
            cells: CellsOut {
                cells: ms,
                series: of_cell,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrowed_series_write_as_the_owned_ones_over_every_capture() {
        let nodes = crate::inputs::ingest(&["captures".into()]).unwrap();
        let mut cells = 0;
        for n in &nodes {
            let bytes = n.bundle.to_json_bytes();
            let read = crate::bundle::Bundle::from_json(
                std::str::from_utf8(&bytes).unwrap(),
                "b.json".as_ref(),
            );
            assert_eq!(read.unwrap().measurements, n.bundle.measurements);
            let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            let m: crate::bundle::read::Measurements =
                serde_json::from_value(v["measurements"].clone()).unwrap();
            // The owned form writes what the borrowed one wrote.
            assert_eq!(serde_json::to_value(&m).unwrap(), v["measurements"]);
            // Every series differs from every other.
            for (i, s) in m.series.iter().enumerate() {
                assert!(!m.series[..i].contains(s), "{}", n.bundle.host.name);
            }
            cells += m.cells.len();
        }
        assert!(cells > 1000, "{cells}");
    }

    #[test]
    fn a_series_seen_long_before_is_found_again() {
        let cell = |test: &'static str, line| {
            let mut m = Measurement::new("t", line, Kind::H2d, test, Statistic::Avg);
            m.source.file = Text::from("f.txt");
            m
        };
        let mut ms: Vec<Measurement> = (0..20)
            .map(|i| cell(["a", "b", "c", "d", "e"][i % 5], i))
            .collect();
        for (i, m) in ms.iter_mut().enumerate() {
            m.iterations = Some(i as u64 / 5);
        }
        let mut again = cell("a", 99);
        again.iterations = Some(0);
        ms.push(again);
        let out = MeasurementsOut::of(&ms);
        assert_eq!(out.series.len(), 20);
        assert_eq!(out.cells.series[20], 0);
    }
}
