//! The bundle as bytes: version 2's compact form, and version 1 read
//! as it was.
//!
//! Version 2 differs from version 1 in three ways, all in the wire form
//! only (the in-memory [`Bundle`] is the same):
//! - `files` lists every transcript path a source names, once; a source is
//!   then `[file_index, line]` instead of `{ "file": "...", "line": n }`.
//! - `measurements` is `{ "series": [...], "cells": [...] }`: what cells of
//!   one test share (tool, file, kind, test, direction, statistic, p2p,
//!   buffers, copy engine, iteration counts, queue depth, QPs, verification,
//!   and six of the seven questions' answers, an answer "not stated by the
//!   tool" left out) is a series, stored once;
//!   a cell holds its numbers, its line and `series`, the index of its series.
//!   The message-size answer is derived from `size_bytes` when it is the
//!   usual one (`describe_size`, or "not stated" without a size) and stored
//!   in the cell only when a parser said something else.
//! - The JSON is compact (no indentation).
//!
//! Reading accepts both forms (a version 1 `measurements` list of full
//! cells, `{file, line}` sources), so version 1 bundles are migrated on read.
//!
//! The file table travels in a thread-local while one bundle is written or
//! read: [`Source`] is serialized deep inside the topology, and the table is
//! what lets it be two numbers. Outside [`Bundle::to_json`] and
//! [`Bundle::from_json`] a source serializes as `{file, line}`.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Bundle, Generator, Host, PeerLink, Probe, Problem, System, Transcript};
use crate::evidence::Source;
use crate::evidence::measurement::{
    Buffers, CopyEngine, Direction, Kind, Measurement, NOT_STATED, P2p, Questions, Statistic,
    Verification, describe_size,
};
use crate::evidence::pcie::PcieLink;
use crate::evidence::rdma::RdmaDevice;
use crate::evidence::text::Text;
use crate::evidence::topology::Topology;

thread_local! {
    /// Files by index while a bundle is being read or written.
    static FILES: RefCell<Option<Table>> = const { RefCell::new(None) };
}

#[derive(Default)]
struct Table {
    paths: Vec<Text>,
    index: HashMap<Text, u32>,
}

impl Table {
    fn get(&self, f: &Text) -> Option<u32> {
        // A node has a few files: comparing is cheaper than hashing a path.
        if self.paths.len() <= 8 {
            return self.paths.iter().position(|p| p == f).map(|i| i as u32);
        }
        self.index.get(f).copied()
    }

    fn add(&mut self, f: &Text) {
        // The sources of one file come together: most are the last added.
        if self.paths.last() == Some(f) {
            return;
        }
        if let Entry::Vacant(e) = self.index.entry(f.clone()) {
            e.insert(self.paths.len() as u32);
            self.paths.push(f.clone());
        }
    }
}

/// Installs `table` for the current thread until dropped.
struct Installed;

impl Installed {
    fn new(table: Table) -> Installed {
        FILES.with(|f| *f.borrow_mut() = Some(table));
        Installed
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        FILES.with(|f| *f.borrow_mut() = None);
    }
}

fn index_of(file: &Text) -> Option<u32> {
    FILES.with(|f| f.borrow().as_ref().and_then(|t| t.get(file)))
}

fn file_at(i: u32) -> Option<Text> {
    FILES.with(|f| {
        f.borrow()
            .as_ref()
            .and_then(|t| t.paths.get(i as usize).cloned())
    })
}

/// Every file a source of `b` names, in the order first named.
fn file_table(b: &Bundle) -> Table {
    let mut t = Table::default();
    let topo = &b.topology;
    let sources = topo
        .devices
        .iter()
        .map(|d| &d.source)
        .chain(topo.links.iter().flat_map(|l| l.sources.iter()))
        .chain(topo.p2p.iter().map(|p| &p.source))
        .chain(topo.nvlink.iter().map(|n| &n.source))
        .chain(b.measurements.iter().map(|m| &m.source))
        .chain(b.rdma.iter().map(|r| &r.source))
        .chain(
            b.rdma
                .iter()
                .flat_map(|r| r.ports.iter().map(|p| &p.source)),
        )
        .chain(b.pcie.iter().map(|p| &p.source));
    for s in sources {
        t.add(&s.file);
    }
    t
}

impl Serialize for Source {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match index_of(&self.file) {
            Some(i) => (i, self.line).serialize(s),
            None => {
                use serde::ser::SerializeStruct;
                let mut st = s.serialize_struct("Source", 2)?;
                st.serialize_field("file", &self.file)?;
                st.serialize_field("line", &self.line)?;
                st.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Source {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Source, D::Error> {
        d.deserialize_any(SourceVisitor)
    }
}

struct SourceVisitor;

impl<'de> Visitor<'de> for SourceVisitor {
    type Value = Source;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a source: `[file_index, line]` or `{\"file\": ..., \"line\": ...}`")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Source, A::Error> {
        let i: u32 = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let line: usize = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        if seq.next_element::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::invalid_length(3, &self));
        }
        let file = file_at(i).ok_or_else(|| {
            de::Error::custom(format!(
                "a source names file {i}, which `files` (read before the sources) does not have"
            ))
        })?;
        Ok(Source { file, line })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Source, A::Error> {
        let (mut file, mut line) = (None, None);
        while let Some(k) = map.next_key::<Cow<'de, str>>()? {
            match k.as_ref() {
                "file" => file = Some(map.next_value::<Text>()?),
                "line" => line = Some(map.next_value::<usize>()?),
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        Ok(Source {
            file: file.ok_or_else(|| de::Error::missing_field("file"))?,
            line: line.ok_or_else(|| de::Error::missing_field("line"))?,
        })
    }
}

impl JsonSchema for Source {
    fn schema_name() -> Cow<'static, str> {
        "Source".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A transcript line a fact came from (1-based). Version 2 writes \
                `[file_index, line]`, the index into the bundle's `files`; version 1 wrote \
                `{ \"file\": \"captures/x/topo.txt\", \"line\": 2 }`, which is still read.",
            "anyOf": [
                { "type": "array", "prefixItems": [
                    { "type": "integer", "minimum": 0 }, { "type": "integer", "minimum": 0 }
                ], "minItems": 2, "maxItems": 2 },
                { "type": "object", "required": ["file", "line"], "properties": {
                    "file": { "type": "string" }, "line": { "type": "integer", "minimum": 0 }
                } }
            ]
        })
    }
}

/// What the cells of one series share. `file` is an index into `files`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Series {
    pub tool: Text,
    pub file: u32,
    pub kind: Kind,
    pub test: Text,
    pub direction: Direction,
    pub statistic: Statistic,
    pub p2p: P2p,
    pub buffers: Buffers,
    pub copy_engine: CopyEngine,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_iterations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qps: Option<u32>,
    pub verification: Verification,
    /// The seven questions' answers but the message size, which is per cell.
    pub questions: SeriesQuestions,
}

/// [`Questions`] less `message_size`. An answer the transcript does not
/// give ([`NOT_STATED`]) is left out, and reads back as [`NOT_STATED`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct SeriesQuestions {
    #[serde(default = "not_stated", skip_serializing_if = "is_not_stated")]
    pub unit: Text,
    #[serde(default = "not_stated", skip_serializing_if = "is_not_stated")]
    pub direction: Text,
    #[serde(default = "not_stated", skip_serializing_if = "is_not_stated")]
    pub warm_up: Text,
    #[serde(default = "not_stated", skip_serializing_if = "is_not_stated")]
    pub outstanding: Text,
    #[serde(default = "not_stated", skip_serializing_if = "is_not_stated")]
    pub path: Text,
    #[serde(default = "not_stated", skip_serializing_if = "is_not_stated")]
    pub context: Text,
}

fn not_stated() -> Text {
    Text::from(NOT_STATED)
}

fn is_not_stated(t: &Text) -> bool {
    *t == NOT_STATED
}

/// One number of a series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Cell {
    /// Index into `series`.
    pub series: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_bytes_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_s: Option<f64>,
    pub as_printed: String,
    pub line: usize,
    /// Only when it is not the one derived from `size_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_size: Option<Text>,
}

/// Version 2's `measurements`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Measurements {
    pub series: Vec<Series>,
    pub cells: Vec<Cell>,
}

/// The message-size answer a cell gets when it stores none.
fn derived_message_size(size_bytes: Option<u64>) -> Text {
    size_bytes.map_or(Text::from(NOT_STATED), describe_size)
}

impl Measurements {
    fn from_cells(ms: &[Measurement]) -> Measurements {
        let mut out = Measurements::default();
        let mut seen: HashMap<Series, u32> = HashMap::new();
        for m in ms {
            let q = &m.questions;
            let series = Series {
                tool: m.tool.clone(),
                file: index_of(&m.source.file).unwrap_or(u32::MAX),
                kind: m.kind,
                test: m.test.clone(),
                direction: m.direction,
                statistic: m.statistic,
                p2p: m.p2p,
                buffers: m.buffers,
                copy_engine: m.copy_engine,
                iterations: m.iterations,
                warmup_iterations: m.warmup_iterations,
                queue_depth: m.queue_depth,
                qps: m.qps,
                verification: m.verification.clone(),
                questions: SeriesQuestions {
                    unit: q.unit.clone(),
                    direction: q.direction.clone(),
                    warm_up: q.warm_up.clone(),
                    outstanding: q.outstanding.clone(),
                    path: q.path.clone(),
                    context: q.context.clone(),
                },
            };
            // Cells of one test come together, alternating among a few
            // series (in place, out of place): try the newest before hashing.
            let newest = out.series.len().saturating_sub(4);
            let i = match out.series[newest..].iter().position(|s| *s == series) {
                Some(k) => (newest + k) as u32,
                None => {
                    let next = out.series.len() as u32;
                    *seen.entry(series).or_insert_with_key(|s| {
                        out.series.push(s.clone());
                        next
                    })
                }
            };
            let message_size = (q.message_size != derived_message_size(m.size_bytes))
                .then(|| q.message_size.clone());
            out.cells.push(Cell {
                series: i,
                src: m.src.clone(),
                dst: m.dst.clone(),
                size_bytes: m.size_bytes,
                bandwidth_bytes_per_s: m.bandwidth_bytes_per_s,
                latency_s: m.latency_s,
                as_printed: m.as_printed.clone(),
                line: m.source.line,
                message_size,
            });
        }
        out
    }

    fn into_cells<E: de::Error>(self) -> Result<Vec<Measurement>, E> {
        let files: Vec<Text> = self
            .series
            .iter()
            .map(|s| {
                file_at(s.file).ok_or_else(|| {
                    E::custom(format!(
                        "a series names file {}, which `files` does not have",
                        s.file
                    ))
                })
            })
            .collect::<Result<_, E>>()?;
        self.cells
            .into_iter()
            .map(|c| {
                let i = c.series as usize;
                let s = self.series.get(i).ok_or_else(|| {
                    E::custom(format!(
                        "a cell names series {i}; there are {}",
                        self.series.len()
                    ))
                })?;
                let q = &s.questions;
                Ok(Measurement {
                    tool: s.tool.clone(),
                    source: Source {
                        file: files[i].clone(),
                        line: c.line,
                    },
                    kind: s.kind,
                    test: s.test.clone(),
                    src: c.src,
                    dst: c.dst,
                    direction: s.direction,
                    size_bytes: c.size_bytes,
                    bandwidth_bytes_per_s: c.bandwidth_bytes_per_s,
                    latency_s: c.latency_s,
                    statistic: s.statistic,
                    as_printed: c.as_printed,
                    p2p: s.p2p,
                    buffers: s.buffers,
                    copy_engine: s.copy_engine,
                    iterations: s.iterations,
                    warmup_iterations: s.warmup_iterations,
                    queue_depth: s.queue_depth,
                    qps: s.qps,
                    verification: s.verification.clone(),
                    questions: Questions {
                        unit: q.unit.clone(),
                        direction: q.direction.clone(),
                        message_size: c
                            .message_size
                            .unwrap_or_else(|| derived_message_size(c.size_bytes)),
                        warm_up: q.warm_up.clone(),
                        outstanding: q.outstanding.clone(),
                        path: q.path.clone(),
                        context: q.context.clone(),
                    },
                })
            })
            .collect()
    }
}

/// `measurements` as read: a version 1 list of cells, or version 2 series.
struct AnyMeasurements(Vec<Measurement>);

impl<'de> Deserialize<'de> for AnyMeasurements {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<AnyMeasurements, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = AnyMeasurements;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("measurements: `{ \"series\", \"cells\" }` or a list of cells")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<AnyMeasurements, A::Error> {
                let mut v = Vec::new();
                while let Some(m) = seq.next_element()? {
                    v.push(m);
                }
                Ok(AnyMeasurements(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<AnyMeasurements, A::Error> {
                let m = Measurements::deserialize(de::value::MapAccessDeserializer::new(map))?;
                m.into_cells().map(AnyMeasurements)
            }
        }
        d.deserialize_any(V)
    }
}

/// The file table as read: installed for the sources after it.
struct Files;

impl<'de> Deserialize<'de> for Files {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Files, D::Error> {
        let paths = Vec::<Text>::deserialize(d)?;
        let mut t = Table::default();
        for p in &paths {
            t.add(p);
        }
        FILES.with(|f| *f.borrow_mut() = Some(t));
        Ok(Files)
    }
}

/// Version 2 as written: [`Bundle`]'s fields in its order, `files` after
/// `host`, `measurements` as series.
#[derive(Serialize)]
struct Out<'a> {
    schema_version: u32,
    generator: &'a Generator,
    host: &'a Host,
    files: &'a [Text],
    topology: &'a Topology,
    measurements: Measurements,
    rdma: &'a [RdmaDevice],
    pcie: &'a [PcieLink],
    transcripts: &'a [Transcript],
    #[serde(skip_serializing_if = "<[Probe]>::is_empty")]
    probes: &'a [Probe],
    #[serde(skip_serializing_if = "Option::is_none")]
    system: &'a Option<System>,
    #[serde(skip_serializing_if = "Option::is_none")]
    peer: &'a Option<PeerLink>,
    problems: &'a [Problem],
}

/// Version 1 or 2 as read.
#[derive(Deserialize)]
struct In {
    schema_version: u32,
    generator: Generator,
    host: Host,
    #[serde(default)]
    #[allow(dead_code)]
    files: Option<Files>,
    topology: Topology,
    measurements: AnyMeasurements,
    #[serde(default)]
    rdma: Vec<RdmaDevice>,
    #[serde(default)]
    pcie: Vec<PcieLink>,
    transcripts: Vec<Transcript>,
    #[serde(default)]
    probes: Vec<Probe>,
    #[serde(default)]
    system: Option<System>,
    #[serde(default)]
    peer: Option<PeerLink>,
    problems: Vec<Problem>,
}

impl Serialize for Bundle {
    /// Always version 2's form, whatever serializer: `serde_json::to_vec`
    /// of a bundle is a bundle file.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Bundle {
            schema_version,
            generator,
            host,
            topology,
            measurements,
            rdma,
            pcie,
            transcripts,
            probes,
            system,
            peer,
            problems,
        } = self;
        let table = file_table(self);
        let paths = table.paths.clone();
        let _installed = Installed::new(table);
        Out {
            schema_version: *schema_version,
            generator,
            host,
            files: &paths,
            topology,
            measurements: Measurements::from_cells(measurements),
            rdma,
            pcie,
            transcripts,
            probes,
            system,
            peer,
            problems,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Bundle {
    /// Version 1 or 2; the version is not checked here ([`Bundle::from_json`]
    /// checks it).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Bundle, D::Error> {
        let _installed = Installed::new(Table::default());
        let i = In::deserialize(d)?;
        Ok(Bundle {
            schema_version: i.schema_version,
            generator: i.generator,
            host: i.host,
            topology: i.topology,
            measurements: i.measurements.0,
            rdma: i.rdma,
            pcie: i.pcie,
            transcripts: i.transcripts,
            probes: i.probes,
            system: i.system,
            peer: i.peer,
            problems: i.problems,
        })
    }
}

/// Writes `b` as version 2, compact, with a trailing newline.
pub fn write(b: &Bundle) -> Vec<u8> {
    let mut v = Vec::new();
    write_into(b, &mut v);
    v
}

/// [`write`] into `out`, replacing what it held: a caller writing many
/// bundles reuses one buffer instead of growing a new one each time.
pub fn write_into(b: &Bundle, out: &mut Vec<u8>) {
    out.clear();
    serde_json::to_writer(&mut *out, b).expect("a bundle always serialises");
    out.push(b'\n');
}

/// Reads version 1 or 2 (the caller checks the version).
pub fn read(text: &str) -> serde_json::Result<Bundle> {
    serde_json::from_str(text)
}
