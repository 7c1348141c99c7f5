//! Reading a bundle file: version 3 as [`super::wire`] writes it, and
//! versions 1 and 2 as they were.
//!
//! Version 1 has a `measurements` list of full cells, `{file, line}`
//! sources and the answers as sentences; version 2 has version 3's form
//! (a file table, series and cells) with the answers as sentences and a
//! cell's `message_size` sentence when it was not the usual one. Old
//! sentences are read into facts by [`super::migrate`].
//!
//! A source's file index is resolved through the table read before it,
//! installed for the current thread while one bundle is read: serde's
//! derived `Deserialize` has no way to hand a value down to the sources
//! nested in the topology.

use std::borrow::Cow;
use std::cell::RefCell;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

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

thread_local! {
    /// Files by index while a bundle is being read.
    static FILES: RefCell<Option<Vec<Text>>> = const { RefCell::new(None) };
}

/// Installs `table` for the current thread until dropped.
struct Installed;

impl Installed {
    fn new(table: Vec<Text>) -> Installed {
        FILES.with(|f| *f.borrow_mut() = Some(table));
        Installed
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        FILES.with(|f| *f.borrow_mut() = None);
    }
}

fn file_at(i: u32) -> Option<Text> {
    FILES.with(|f| f.borrow().as_ref().and_then(|t| t.get(i as usize).cloned()))
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
            "description": "A transcript line a fact came from (1-based). Versions 2 and 3 write \
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
        FILES.with(|f| *f.borrow_mut() = Some(paths));
        Ok(Files)
    }
}

/// Version 1, 2 or 3 as read.
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

impl<'de> Deserialize<'de> for Bundle {
    /// Version 1, 2 or 3; the version is not checked here ([`Bundle::from_json`]
    /// checks it).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Bundle, D::Error> {
        let _installed = Installed::new(Vec::new());
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

/// Reads version 1, 2 or 3 (the caller checks the version).
pub fn read(text: &str) -> serde_json::Result<Bundle> {
    serde_json::from_str(text)
}
