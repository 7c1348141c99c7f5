//! The bundle as bytes: version 3's compact form, and versions 1 and 2
//! read as they were.
//!
//! The wire form differs from the in-memory [`Bundle`] in three ways:
//! - `files` lists every transcript path a source names, once; a source is
//!   then `[file_index, line]` instead of `{ "file": "...", "line": n }`.
//! - `measurements` is `{ "series": [...], "cells": [...] }`: what cells of
//!   one test share (tool, file, kind, test, direction, statistic, p2p,
//!   buffers, copy engine, iteration counts, queue depth, QPs, verification,
//!   and the seven questions' answers as facts, each left out when the
//!   transcript does not give it) is a series, stored once; a cell holds
//!   its numbers, its line and `series`, the index of its series.
//! - The JSON is compact (no indentation).
//!
//! Reading accepts all three versions: version 1 (a `measurements` list of
//! full cells, `{file, line}` sources, the answers as sentences) and version
//! 2 (this form, the answers as sentences, a cell's `message_size` sentence
//! when it was not the usual one). Old sentences are read into facts by
//! [`super::migrate`].
//!
//! The file table travels in a thread-local while one bundle is written or
//! read: [`Source`] is serialized deep inside the topology, and the table is
//! what lets it be two numbers. Outside [`Bundle::to_json`] and
//! [`Bundle::from_json`] a source serializes as `{file, line}`.
//!
//! Writing borrows: the series and cells are views of the bundle's
//! measurements (`series`), and [`write_into`] writes serde_json's exact
//! bytes with its own compact writer (`compact`, cells field by field),
//! falling back to serde_json for anything that writer declines. The tests
//! compare both writers over every capture.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Bundle, Generator, Host, PeerLink, Probe, Problem, System, Transcript};
use crate::evidence::Source;
use crate::evidence::counters::CounterDump;
use crate::evidence::ethtool::InterfaceStats;
use crate::evidence::lsmod::ModuleListing;
use crate::evidence::measurement::{
    Buffers, CopyEngine, Direction, Kind, Measurement, P2p, Questions, Statistic, Verification,
};
use crate::evidence::nccl::NcclInit;
use crate::evidence::numa::NumaTopology;
use crate::evidence::pcie::PcieLink;
use crate::evidence::rdma::RdmaDevice;
use crate::evidence::text::Text;
use crate::evidence::topology::Topology;

mod compact;
mod series;
mod topology;
mod transcript;

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

    #[inline]
    fn add(&mut self, f: &Text) {
        // The sources of one file come together: most are the last added
        // (a copy of it, the same bytes: checked inline, before a call).
        if let Some(last) = self.paths.last()
            && std::ptr::eq(last.as_str(), f.as_str())
        {
            return;
        }
        self.add_other(f);
    }

    fn add_other(&mut self, f: &Text) {
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
    // Plain loops, in the order of the sources in the bundle: a chain of
    // nine iterators costs more per source than the lookup itself.
    for d in &topo.devices {
        t.add(&d.source.file);
    }
    for l in &topo.links {
        for s in &l.sources {
            t.add(&s.file);
        }
    }
    for p in &topo.p2p {
        t.add(&p.source.file);
    }
    for n in &topo.nvlink {
        t.add(&n.source.file);
    }
    for m in &b.measurements {
        t.add(&m.source.file);
    }
    for r in &b.rdma {
        t.add(&r.source.file);
    }
    for r in &b.rdma {
        for p in &r.ports {
            t.add(&p.source.file);
        }
    }
    for p in &b.pcie {
        t.add(&p.source.file);
    }
    for i in &b.interfaces {
        t.add(&i.source.file);
        for c in &i.counters {
            t.add(&c.source.file);
        }
    }
    for m in &b.modules {
        t.add(&m.source.file);
        for r in &m.rows {
            t.add(&r.source.file);
        }
    }
    for n in &b.nccl {
        for s in n.sources() {
            t.add(&s.file);
        }
    }
    for n in &b.numa {
        for s in n.sources() {
            t.add(&s.file);
        }
    }
    for c in &b.counters {
        for s in c.sources() {
            t.add(&s.file);
        }
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

/// Whether `t` is its type's default, "unknown": left out on the wire.
fn is_unknown<T: Default + PartialEq>(t: &T) -> bool {
    *t == T::default()
}

/// What the cells of one series share. `file` is an index into `files`.
/// Fields that say "unknown" are left out and read back as unknown.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Series {
    pub tool: Text,
    pub file: u32,
    pub kind: Kind,
    pub test: Text,
    pub direction: Direction,
    pub statistic: Statistic,
    #[serde(default, skip_serializing_if = "is_unknown")]
    pub p2p: P2p,
    #[serde(default, skip_serializing_if = "is_unknown")]
    pub buffers: Buffers,
    #[serde(default, skip_serializing_if = "is_unknown")]
    pub copy_engine: CopyEngine,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_iterations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qps: Option<u32>,
    #[serde(default, skip_serializing_if = "is_unknown")]
    pub verification: Verification,
    /// The seven questions' answers, as facts (version 2 stored
    /// sentences here, which are still read and migrated).
    #[serde(deserialize_with = "crate::evidence::answers::any_questions")]
    pub questions: Questions,
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
    /// Version 2's message-size sentence, stored when it was not the one
    /// `size_bytes` gives; read and migrated, never written.
    #[serde(default, skip_serializing)]
    #[schemars(skip)]
    pub message_size: Option<Text>,
}

/// Version 2's `measurements`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Measurements {
    pub series: Vec<Series>,
    pub cells: Vec<Cell>,
}

impl Measurements {
    fn into_cells<E: de::Error>(self) -> Result<Vec<Measurement>, E> {
        // Each cell becomes a whole figure (its series' facts copied in):
        // refused past the cap `collect` keeps to, not built to exhaust memory.
        if self.cells.len() > crate::bundle::absorb::MAX_FIGURES {
            return Err(E::custom(format!(
                "{} figures; a bundle holds at most {} (collect keeps no more)",
                self.cells.len(),
                crate::bundle::absorb::MAX_FIGURES
            )));
        }
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
                let mut questions = s.questions.clone();
                if c.message_size.is_some() {
                    questions.legacy.message_size = c.message_size;
                }
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
                    as_printed: c.as_printed.into(),
                    p2p: s.p2p,
                    buffers: s.buffers,
                    copy_engine: s.copy_engine,
                    iterations: s.iterations,
                    warmup_iterations: s.warmup_iterations,
                    queue_depth: s.queue_depth,
                    qps: s.qps,
                    verification: s.verification.clone(),
                    questions,
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
    measurements: series::MeasurementsOut<'a>,
    rdma: &'a [RdmaDevice],
    pcie: &'a [PcieLink],
    #[serde(skip_serializing_if = "<[InterfaceStats]>::is_empty")]
    interfaces: &'a [InterfaceStats],
    #[serde(skip_serializing_if = "<[ModuleListing]>::is_empty")]
    modules: &'a [ModuleListing],
    #[serde(skip_serializing_if = "<[NcclInit]>::is_empty")]
    nccl: &'a [NcclInit],
    #[serde(skip_serializing_if = "<[NumaTopology]>::is_empty")]
    numa: &'a [NumaTopology],
    #[serde(skip_serializing_if = "<[CounterDump]>::is_empty")]
    counters: &'a [CounterDump],
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
    #[serde(default)]
    interfaces: Vec<InterfaceStats>,
    #[serde(default)]
    modules: Vec<ModuleListing>,
    #[serde(default)]
    nccl: Vec<NcclInit>,
    #[serde(default)]
    numa: Vec<NumaTopology>,
    #[serde(default)]
    counters: Vec<CounterDump>,
    transcripts: Vec<Transcript>,
    #[serde(default)]
    probes: Vec<Probe>,
    #[serde(default)]
    system: Option<System>,
    #[serde(default)]
    peer: Option<PeerLink>,
    problems: Vec<Problem>,
}

impl Bundle {
    /// The bundle as written, `files` being `paths` (its file table's).
    fn out<'a>(&'a self, paths: &'a [Text]) -> Out<'a> {
        let Bundle {
            schema_version,
            generator,
            host,
            topology,
            measurements,
            rdma,
            pcie,
            interfaces,
            modules,
            nccl,
            numa,
            counters,
            transcripts,
            probes,
            system,
            peer,
            problems,
        } = self;
        Out {
            schema_version: *schema_version,
            generator,
            host,
            files: paths,
            topology,
            measurements: series::MeasurementsOut::of(measurements),
            rdma,
            pcie,
            interfaces,
            modules,
            nccl,
            numa,
            counters,
            transcripts,
            probes,
            system,
            peer,
            problems,
        }
    }
}

impl Out<'_> {
    /// What serde_json writes for `self`, by [`compact`] and with the
    /// cells written field by field.
    fn write_compact(&self, out: &mut Vec<u8>) -> Result<(), compact::Declined> {
        let Out {
            schema_version,
            generator,
            host,
            files,
            topology,
            measurements,
            rdma,
            pcie,
            interfaces,
            modules,
            nccl,
            numa,
            counters,
            transcripts,
            probes,
            system,
            peer,
            problems,
        } = self;
        let mut o = compact::Object::open(out);
        o.field("schema_version", schema_version)?;
        o.field("generator", generator)?;
        o.field("host", host)?;
        o.field("files", files)?;
        o.key("topology");
        topology::write(topology, o.out())?;
        o.key("measurements");
        measurements.write_compact(o.out());
        o.field("rdma", rdma)?;
        o.field("pcie", pcie)?;
        if !interfaces.is_empty() {
            o.field("interfaces", interfaces)?;
        }
        if !modules.is_empty() {
            o.field("modules", modules)?;
        }
        if !nccl.is_empty() {
            o.field("nccl", nccl)?;
        }
        if !numa.is_empty() {
            o.field("numa", numa)?;
        }
        if !counters.is_empty() {
            o.field("counters", counters)?;
        }
        o.key("transcripts");
        transcript::write(transcripts, o.out())?;
        if !probes.is_empty() {
            o.field("probes", probes)?;
        }
        if system.is_some() {
            o.field("system", system)?;
        }
        if peer.is_some() {
            o.field("peer", peer)?;
        }
        o.field("problems", problems)?;
        o.close();
        Ok(())
    }
}

impl Serialize for Bundle {
    /// Always version 3's form, whatever serializer: `serde_json::to_vec`
    /// of a bundle is a bundle file.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let table = file_table(self);
        let paths = table.paths.clone();
        let _installed = Installed::new(table);
        self.out(&paths).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Bundle {
    /// Version 1 or 2; the version is not checked here ([`Bundle::from_json`]
    /// checks it).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Bundle, D::Error> {
        let _installed = Installed::new(Table::default());
        let mut i = In::deserialize(d)?;
        for m in &mut i.measurements.0 {
            super::migrate::questions(m);
        }
        Ok(Bundle {
            schema_version: i.schema_version,
            generator: i.generator,
            host: i.host,
            topology: i.topology,
            measurements: i.measurements.0,
            rdma: i.rdma,
            pcie: i.pcie,
            interfaces: i.interfaces,
            modules: i.modules,
            nccl: i.nccl,
            numa: i.numa,
            counters: i.counters,
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
    let table = file_table(b);
    let paths = table.paths.clone();
    let _installed = Installed::new(table);
    let o = b.out(&paths);
    if o.write_compact(out).is_err() {
        // What the compact writer declines, serde_json writes (the same bytes).
        out.clear();
        serde_json::to_writer(&mut *out, &o).expect("a bundle always serialises");
    }
    out.push(b'\n');
}

/// Reads version 1 or 2 (the caller checks the version).
pub fn read(text: &str) -> serde_json::Result<Bundle> {
    serde_json::from_str(text)
}
