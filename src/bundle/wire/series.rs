//! `measurements` as written: series and cells borrowed from the bundle's
//! [`Measurement`]s, never copied. A series is its first cell's shared
//! facts; a cell is the measurement itself and the index of its series.
//! [`SeriesOut`] and [`CellOut`] serialize exactly as [`Series`] and
//! [`Cell`] (same fields, order and omissions; the tests compare them).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash};

use serde::{Serialize, Serializer};

use super::{compact, index_of};
use crate::bundle::mix::{self, AsIs};
use crate::evidence::measurement::{
    Buffers, CopyEngine, Direction, Kind, Measurement, P2p, Questions, Statistic, Verification,
};
use crate::evidence::text::Text;

/// Whether `t` is its type's default, "unknown": left out on the wire.
fn is_unknown<T: Default + PartialEq>(t: &T) -> bool {
    *t == T::default()
}

/// [`Series`], borrowed from the first cell of the series.
#[derive(Debug, Serialize)]
pub(super) struct SeriesOut<'a> {
    tool: &'a Text,
    file: u32,
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

fn is_unknown_verification(v: &&Verification) -> bool {
    **v == Verification::default()
}

impl<'a> SeriesOut<'a> {
    fn of(m: &'a Measurement, file: u32) -> SeriesOut<'a> {
        SeriesOut {
            tool: &m.tool,
            file,
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

    /// Whether `m` (of file `file`) belongs to this series: cheap facts
    /// first, the questions last. Taken apart whole: a field added to the
    /// series does not compile until it is compared here too (else cells
    /// that differ in it would share a series, and lose their own value).
    fn holds(&self, m: &Measurement, file: u32) -> bool {
        let SeriesOut {
            tool,
            file: f,
            kind,
            test,
            direction,
            statistic,
            p2p,
            buffers,
            copy_engine,
            iterations,
            warmup_iterations,
            queue_depth,
            qps,
            verification,
            questions,
        } = self;
        *f == file
            && *kind == m.kind
            && *direction == m.direction
            && *statistic == m.statistic
            && *p2p == m.p2p
            && *buffers == m.buffers
            && *copy_engine == m.copy_engine
            && *iterations == m.iterations
            && *warmup_iterations == m.warmup_iterations
            && *queue_depth == m.queue_depth
            && *qps == m.qps
            && **tool == m.tool
            && **test == m.test
            && **verification == m.verification
            && **questions == m.questions
    }

    /// What serde_json writes for the series: its own fields one by one,
    /// the verification and the questions by [`compact::write`].
    fn write_compact(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        let SeriesOut {
            tool,
            file,
            kind,
            test,
            direction,
            statistic,
            p2p,
            buffers,
            copy_engine,
            iterations,
            warmup_iterations,
            queue_depth,
            qps,
            verification,
            questions,
        } = self;
        out.extend_from_slice(b"{\"tool\":");
        compact::write_str(out, tool);
        out.extend_from_slice(b",\"file\":");
        compact::write_u64(out, u64::from(*file));
        out.extend_from_slice(b",\"kind\":");
        compact::write(kind, out)?;
        out.extend_from_slice(b",\"test\":");
        compact::write_str(out, test);
        out.extend_from_slice(b",\"direction\":");
        compact::write(direction, out)?;
        out.extend_from_slice(b",\"statistic\":");
        compact::write(statistic, out)?;
        if !is_unknown(p2p) {
            out.extend_from_slice(b",\"p2p\":");
            compact::write(p2p, out)?;
        }
        if !is_unknown(buffers) {
            out.extend_from_slice(b",\"buffers\":");
            compact::write(buffers, out)?;
        }
        if !is_unknown(copy_engine) {
            out.extend_from_slice(b",\"copy_engine\":");
            compact::write(copy_engine, out)?;
        }
        let counts: [(&[u8], Option<u64>); 4] = [
            (b",\"iterations\":", *iterations),
            (b",\"warmup_iterations\":", *warmup_iterations),
            (b",\"queue_depth\":", queue_depth.map(u64::from)),
            (b",\"qps\":", qps.map(u64::from)),
        ];
        for (key, v) in counts {
            compact::opt_u64(out, key, v);
        }
        if !is_unknown_verification(verification) {
            out.extend_from_slice(b",\"verification\":");
            compact::write(*verification, out)?;
        }
        out.extend_from_slice(b",\"questions\":");
        compact::write(*questions, out)?;
        out.push(b'}');
        Ok(())
    }

    /// The owned [`Series`] it writes as (for tests).
    #[cfg(test)]
    pub(super) fn to_owned(&self) -> super::Series {
        super::Series {
            tool: self.tool.clone(),
            file: self.file,
            kind: self.kind,
            test: self.test.clone(),
            direction: self.direction,
            statistic: self.statistic,
            p2p: self.p2p,
            buffers: self.buffers,
            copy_engine: self.copy_engine,
            iterations: self.iterations,
            warmup_iterations: self.warmup_iterations,
            queue_depth: self.queue_depth,
            qps: self.qps,
            verification: self.verification.clone(),
            questions: self.questions.clone(),
        }
    }
}

/// What a series is looked up by when it is not among the newest: the
/// facts [`SeriesOut::holds`] compares first (equal series, equal key).
#[derive(PartialEq, Eq, Hash)]
struct Key<'a> {
    tool: &'a str,
    test: &'a str,
    file: u32,
    kind: Kind,
    direction: Direction,
    statistic: Statistic,
}

impl<'a> Key<'a> {
    fn of(m: &'a Measurement, file: u32) -> Key<'a> {
        Key {
            tool: &m.tool,
            test: &m.test,
            file,
            kind: m.kind,
            direction: m.direction,
            statistic: m.statistic,
        }
    }

    fn hash64(&self) -> u64 {
        mix::hash_of(self)
    }
}

type ByHash = HashMap<u64, u32, BuildHasherDefault<AsIs>>;

/// One cell as written: [`super::Cell`] borrowed from its measurement.
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

impl<'a> CellOut<'a> {
    fn of(m: &'a Measurement, series: u32) -> CellOut<'a> {
        CellOut {
            series,
            src: m.src.as_ref(),
            dst: m.dst.as_ref(),
            size_bytes: m.size_bytes,
            bandwidth_bytes_per_s: m.bandwidth_bytes_per_s,
            latency_s: m.latency_s,
            as_printed: &m.as_printed,
            line: m.source.line,
        }
    }
}

impl CellOut<'_> {
    /// What serde_json writes for the cell, field by field.
    fn write_compact(&self, out: &mut Vec<u8>) {
        let CellOut {
            series,
            src,
            dst,
            size_bytes,
            bandwidth_bytes_per_s,
            latency_s,
            as_printed,
            line,
        } = self;
        out.extend_from_slice(b"{\"series\":");
        compact::write_u64(out, u64::from(*series));
        compact::opt_str(out, b",\"src\":", src.as_ref().map(|t| -> &str { t }));
        compact::opt_str(out, b",\"dst\":", dst.as_ref().map(|t| -> &str { t }));
        compact::opt_u64(out, b",\"size_bytes\":", *size_bytes);
        compact::opt_f64(out, b",\"bandwidth_bytes_per_s\":", *bandwidth_bytes_per_s);
        compact::opt_f64(out, b",\"latency_s\":", *latency_s);
        out.extend_from_slice(b",\"as_printed\":");
        compact::write_str(out, as_printed);
        out.extend_from_slice(b",\"line\":");
        compact::write_u64(out, *line as u64);
        out.push(b'}');
    }
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
                .map(|(m, &i)| CellOut::of(m, i)),
        )
    }
}

/// [`super::Measurements`] as written, borrowed from the bundle's cells.
#[derive(Serialize)]
pub(super) struct MeasurementsOut<'a> {
    pub(super) series: Vec<SeriesOut<'a>>,
    pub(super) cells: CellsOut<'a>,
}

impl MeasurementsOut<'_> {
    /// What serde_json writes for `self`: the series by [`compact`], the
    /// cells field by field.
    pub(super) fn write_compact(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"series\":[");
        for (k, s) in self.series.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            s.write_compact(out).expect("a series always serialises");
        }
        out.extend_from_slice(b"],\"cells\":[");
        let CellsOut { cells, series } = &self.cells;
        for (k, (m, &i)) in cells.iter().zip(series).enumerate() {
            if k > 0 {
                out.push(b',');
            }
            CellOut::of(m, i).write_compact(out);
        }
        out.extend_from_slice(b"]}");
    }
}

/// How many of the newest series a cell is compared with before the
/// lookup: cells of one test come together, alternating among a few
/// series (nccl-tests: time, algbw and busbw, out of and in place).
const NEWEST: usize = 8;

impl<'a> MeasurementsOut<'a> {
    /// Groups `ms` into series in the order first seen (the file table
    /// must be installed: a series names its file by index).
    pub(super) fn of(ms: &'a [Measurement]) -> MeasurementsOut<'a> {
        let mut series: Vec<SeriesOut<'a>> = Vec::new();
        let mut of_cell = Vec::with_capacity(ms.len());
        // Series by the hash of their key, for those not among the newest:
        // the newest series of each hash, and for each series the one
        // before it with the same hash (a chain, no list per hash).
        let mut by_key = ByHash::default();
        let mut same_hash: Vec<u32> = Vec::new();
        // The file of the cell before (cells of one file come together)
        // and the series of the cell before (a matrix's cells share one).
        let mut last_file: Option<(&Text, u32)> = None;
        let mut last = 0;
        for m in ms {
            let file = match last_file {
                Some((f, i)) if std::ptr::eq(f.as_str(), m.source.file.as_str()) => i,
                _ => {
                    let i = index_of(&m.source.file).unwrap_or(u32::MAX);
                    last_file = Some((&m.source.file, i));
                    i
                }
            };
            let newest = series.len().saturating_sub(NEWEST);
            let mut hash = None;
            let found = if series.get(last).is_some_and(|s| s.holds(m, file)) {
                Some(last)
            } else if let Some(k) = series[newest..].iter().rposition(|s| s.holds(m, file)) {
                Some(newest + k)
            } else {
                let h = *hash.insert(Key::of(m, file).hash64());
                older(&by_key, &same_hash, h, |i| series[i].holds(m, file))
            };
            let i = match found {
                Some(i) => i as u32,
                None => {
                    let i = series.len() as u32;
                    let h = hash.unwrap_or_else(|| Key::of(m, file).hash64());
                    same_hash.push(by_key.insert(h, i).unwrap_or(u32::MAX));
                    series.push(SeriesOut::of(m, file));
                    i
                }
            };
            last = i as usize;
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

/// The series of hash `h` that `holds`: the chain from the newest of that
/// hash, walked back. Series all differ, so at most one holds a cell.
fn older(
    by_key: &ByHash,
    same_hash: &[u32],
    h: u64,
    holds: impl Fn(usize) -> bool,
) -> Option<usize> {
    let mut at = by_key.get(&h).copied().unwrap_or(u32::MAX);
    while at != u32::MAX {
        if holds(at as usize) {
            return Some(at as usize);
        }
        at = same_hash[at as usize];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::{Cell, Installed, Measurements, file_table};
    use super::*;

    /// The owned form the borrowed one must write as.
    fn owned(m: &MeasurementsOut) -> Measurements {
        Measurements {
            series: m.series.iter().map(SeriesOut::to_owned).collect(),
            cells: m
                .cells
                .cells
                .iter()
                .zip(&m.cells.series)
                .map(|(c, &series)| Cell {
                    series,
                    src: c.src.clone(),
                    dst: c.dst.clone(),
                    size_bytes: c.size_bytes,
                    bandwidth_bytes_per_s: c.bandwidth_bytes_per_s,
                    latency_s: c.latency_s,
                    as_printed: c.as_printed.to_string(),
                    line: c.source.line,
                    message_size: None,
                })
                .collect(),
        }
    }

    #[test]
    fn borrowed_series_write_as_the_owned_ones_over_every_capture() {
        let nodes = crate::inputs::ingest(&["captures".into()]).unwrap();
        let mut cells = 0;
        for n in &nodes {
            let _installed = Installed::new(file_table(&n.bundle));
            let out = MeasurementsOut::of(&n.bundle.measurements);
            let a = serde_json::to_string(&out).unwrap();
            let b = serde_json::to_string(&owned(&out)).unwrap();
            assert_eq!(a, b, "{}", n.bundle.host.name);
            // Every series differs from every other.
            for (i, s) in out.series.iter().enumerate() {
                for t in &out.series[..i] {
                    assert_ne!(s.to_owned(), t.to_owned(), "{}", n.bundle.host.name);
                }
            }
            cells += out.cells.series.len();
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
        // Twenty series, then the first again: beyond the newest, found by key.
        let mut ms: Vec<Measurement> = (0..20)
            .map(|i| cell(["a", "b", "c", "d", "e"][i % 5], i))
            .collect();
        for (i, m) in ms.iter_mut().enumerate() {
            m.iterations = Some(i as u64 / 5);
        }
        let mut again = cell("a", 99);
        again.iterations = Some(0);
        ms.push(again);
        let _installed = Installed::new(file_table_of(&ms));
        let out = MeasurementsOut::of(&ms);
        assert_eq!(out.series.len(), 20);
        assert_eq!(out.cells.series[20], 0);
    }

    fn file_table_of(ms: &[Measurement]) -> super::super::Table {
        let mut b = crate::bundle::Bundle::new(crate::bundle::Host {
            name: "n".into(),
            origin: crate::bundle::Origin::Ingested,
        });
        b.measurements = ms.to_vec();
        file_table(&b)
    }
}
