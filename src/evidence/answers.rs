//! The seven questions every figure must answer (the seed text, section
//! 5.2), as facts: what the transcript says about the unit, the direction,
//! the message size, the warm-up, the operations in flight, the path and
//! what else was running.
//!
//! Parsers write facts here (enums and numbers, [`Default`] meaning "not
//! stated by the transcript"); the sentences a reader sees are made from
//! them in one place at render time (`render::answers`), so a better
//! sentence re-renders every old bundle. Some answers are read from the
//! cell's own fields rather than stored twice: the message size from
//! `size_bytes`, the warm-up from `warmup_iterations`, the queue depth and
//! queue pairs from `queue_depth` and `qps`, the direction from
//! `direction` and `statistic`.
//!
//! A bundle written before the answers were facts (schema versions 1 and 2
//! stored sentences) is migrated on read: a sentence this crate wrote is
//! read back into facts where it is unambiguous (`bundle::migrate`), and any
//! other is kept in [`Legacy`] and shown as it is.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use crate::evidence::text::Text;

/// The seven answers of one cell (shared by a series on the wire).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Questions {
    /// 1. What the printed unit means in bytes per second or seconds.
    #[serde(default, skip_serializing_if = "is_default")]
    pub unit: Unit,
    /// 2. How the figure relates to the cell's `direction` (uni or bi).
    #[serde(default, skip_serializing_if = "is_default")]
    pub direction: DirectionNote,
    /// 3. Whether `size_bytes` is the message size, or the figure averages
    ///    a sweep of sizes.
    #[serde(default, skip_serializing_if = "is_default")]
    pub message_size: MessageSize,
    /// 5. What was in flight while the figure was timed (4., the warm-up,
    ///    is the cell's `warmup_iterations`, with [`Windows`] when copies
    ///    are timed in windows).
    #[serde(default, skip_serializing_if = "is_default")]
    pub outstanding: Outstanding,
    /// 6. Which path the bytes took, as far as the transcript says.
    #[serde(default, skip_serializing_if = "is_default")]
    pub path: Path,
    /// 7. What else was running.
    #[serde(default, skip_serializing_if = "is_default")]
    pub context: Context,
    /// Sentences of a migrated bundle that could not be read as facts,
    /// shown as they are in place of the derived answer.
    #[serde(default, skip_serializing_if = "is_default")]
    pub legacy: Legacy,
}

/// `questions` as read: facts (version 3), or sentences (versions 1, 2)
/// kept whole in `legacy` for `bundle::migrate` to read into facts.
pub fn any_questions<'de, D: Deserializer<'de>>(d: D) -> Result<Questions, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Any {
        Facts(Questions),
        Sentences(Legacy),
    }
    Ok(match Any::deserialize(d)? {
        Any::Facts(q) => q,
        Any::Sentences(legacy) => Questions {
            legacy,
            ..Questions::default()
        },
    })
}

fn is_default<T: Default + PartialEq>(t: &T) -> bool {
    *t == T::default()
}

/// What one printed unit is. Bits are converted to bytes once, in the
/// parser; the answer says so.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Unit {
    #[default]
    NotStated,
    /// GB/s with GB = 1e9 bytes.
    GigabytesPerS,
    /// MB/s with MB = 1e6 bytes (OSU micro-benchmarks).
    MegabytesPerS,
    /// bandwidthTest's MB/s before its GB/s releases: 1024 * bytes /
    /// (ms * 2^20), so 1 MB/s = 1.024e6 bytes/s.
    BandwidthTestMegabytesPerS,
    /// A unit the tool divides by 2^20 (perftest `MB/sec`, `MiB/sec`):
    /// `printed` is the unit as printed.
    MebibytesPerS {
        printed: Text,
    },
    /// Gb/s, 1e9 bits per second, converted to bytes by dividing by 8.
    GigabitsPerS,
    Microseconds,
    /// Milliseconds: the first nccl-tests (2017) and NCCL 1's own tests
    /// printed a collective's time in ms (`deltaSec * 1.0E3`).
    Milliseconds,
    Nanoseconds,
    /// Measured by wire-report: size / time per copy, the time taken by
    /// `timer`; shown as GB/s.
    Timed {
        timer: Text,
    },
}

/// What the cell's `direction` means for this tool's figure.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DirectionNote {
    /// Nothing beyond `direction` itself.
    #[default]
    Plain,
    /// A matrix: the row's endpoint copies to the column's.
    RowToColumn,
    /// A matrix whose title arrow says the way (nvbandwidth): row to
    /// column, the other way when the arrow is `<-`.
    TitleArrow,
    /// A read test: the data moves from the column's GPU to the row's,
    /// whatever arrow the title prints.
    ColumnToRow,
    /// One transfer from its source to its destination.
    SourceToDestination,
    /// Every pair at once (all-to-all); the figure is one pair's.
    AllPairsAtOnce,
    /// The total over every pair of a matrix.
    MatrixTotal,
    /// The tool counts every byte twice (read and written; bandwidthTest's
    /// device-to-device `2.0f * size`): the copy moved half the figure.
    CountedTwice,
    /// A latency reported as half the round trip.
    HalfRoundTrip,
    /// A latency reported as the whole round trip (perftest read, atomic).
    RoundTrip,
    /// A collective: the statistic says algorithm or bus bandwidth, or
    /// the time of one collective.
    Collective,
    /// No title line says whether the test was uni- or bidirectional.
    Untitled,
}

/// Whether `size_bytes` is the message size of the figure.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MessageSize {
    /// `size_bytes` is the size (absent: not stated).
    #[default]
    PerCell,
    /// The figure averages every size of a sweep (nccl-tests `Avg bus
    /// bandwidth`).
    SweepAverage,
}

/// How a figure was timed on the CPU or on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Timer {
    Cpu,
    Gpu,
}

/// What was in flight while the figure was timed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Outstanding {
    #[default]
    NotStated,
    /// Work requests per queue pair: the cell's `queue_depth` and `qps`.
    QueuePairs,
    /// One collective at a time, averaged over the cell's `iterations`.
    OneCollective,
    /// One transfer at a time, timed by `timer`.
    OneTransfer { timer: Timer },
    /// One message in flight (a ping-pong).
    PingPong,
    /// The executor that ran the transfer (TransferBench: `GPU 0`, `DMA 1`).
    Executor { executor: Text },
    /// Copies timed in windows by wire-report's own sweep.
    Windows(Windows),
}

/// How wire-report's sweep timed a size: `copies` back to back per timed
/// window; `held` is how a window is held and filled (said by the backend
/// that ran it); `planned` timed repetitions (the cell's `iterations` is
/// how many ran); `asked` before a budget of `budget_ms` lowered them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Windows {
    pub copies: u32,
    pub held: Text,
    pub planned: u32,
    pub asked: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_ms: Option<u64>,
}

/// Which path the bytes took, as far as the transcript says. Device ids
/// are the cell's `src` and `dst`; peer access and copy engines its `p2p`
/// and `copy_engine`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Path {
    #[default]
    NotStated,
    /// Within one GPU's memory.
    WithinGpu,
    /// GPU to GPU. `access`: whether the tool says the pair can access each
    /// other as peers (absent: it does not say).
    GpuToGpu {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        access: Option<bool>,
    },
    /// Host memory and a GPU (PCIe, or C2C on Grace). `access`: whether
    /// the tool's access matrix says the pair can reach each other.
    HostGpu {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        access: Option<bool>,
    },
    /// Host memory of two CPUs (NUMA nodes).
    HostHost,
    /// An RDMA test on one side.
    Rdma(Box<RdmaPath>),
    /// A collective: `ranks` on `nodes` (0 when the transcript lists no
    /// hosts), on `gpu`.
    Ranks {
        ranks: u32,
        nodes: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gpu: Option<Text>,
    },
    /// MPI (OSU): between two ranks for a point-to-point test, devices in
    /// `src`/`dst` when a `*_VISIBLE_DEVICES` line names them; over every
    /// rank of the job for a collective test (the cell's kind says which;
    /// OSU does not print how many ranks). Buffers in `buffers`.
    Mpi,
    /// A TransferBench transfer: `route` as it printed it (`G0 -> G1 -> G1`,
    /// source -> executor -> destination).
    Transfer { route: Text },
    /// wire-report's own sweep: what the backend that ran it says it
    /// copied between (memory kinds, placement, binding).
    Swept { description: Text },
}

/// The RDMA facts of one perftest run.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct RdmaPath {
    pub side: Side,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<Text>,
    /// `InfiniBand`, `Ethernet` (RoCE), as printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_type: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<Text>,
    /// Buffers in GPU memory: how (`CUDA`, `ROCm`) as printed, and which GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<Text>,
    /// How the adapter was given the GPU buffer: DMA-BUF or the
    /// peer-memory module; not stated for host buffers and old bundles.
    #[serde(default, skip_serializing_if = "is_default")]
    pub registration: GpuRegistration,
}

/// How a GPU buffer was registered with the RDMA adapter, as the
/// transcript shows it.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum GpuRegistration {
    #[default]
    NotStated,
    /// `ibv_reg_dmabuf_mr` on a DMA-BUF the GPU driver exported
    /// (perftest `--use_cuda_dmabuf`, "using DMA-BUF for GPU buffer"):
    /// no peer-memory module involved.
    DmaBuf,
    /// `ibv_reg_mr` on GPU memory: perftest allocated a device buffer
    /// without DMA-BUF, so the kernel's peer-memory module
    /// (`nvidia_peermem`) resolved it.
    PeerMemory,
}

impl GpuRegistration {
    pub fn is_not_stated(&self) -> bool {
        *self == GpuRegistration::NotStated
    }

    /// `DMA-BUF`, `peer-memory module`, or nothing.
    pub fn words(self) -> Option<&'static str> {
        match self {
            GpuRegistration::NotStated => None,
            GpuRegistration::DmaBuf => Some("DMA-BUF"),
            GpuRegistration::PeerMemory => Some("peer-memory module"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    Server,
    Client,
}

/// What else was running, as far as the transcript says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Context {
    #[default]
    NotStated,
    /// perftest warned that the CPU frequency was not at its maximum.
    CpuFrequencyWarning,
    /// Every other pair transferred at the same time (all-to-all).
    AllPairsAtOnce,
    /// `HSA_ENABLE_SDMA=0`: copies by shader kernels, not SDMA engines.
    ShaderCopies,
    /// One transfer at a time, nothing else of the tool's running
    /// (TransferBench's p2p and scaling presets, one pair each).
    OneTransferAtATime,
    /// The pair's reverse copy ran at the same time (a bidirectional
    /// table that reports each direction on its own).
    ReverseCopyAtOnce,
    /// wire-report's own sweep: the load average at its start, and that
    /// other work (on the GPUs when `gpu`) was not controlled.
    Uncontrolled {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        load_average: Option<Text>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        gpu: bool,
    },
}

/// A migrated bundle's sentences that could not be read as facts, per
/// question; each is shown as it is.
// (Its doc comment is the schema's description; held boxed by [`Legacy`].)
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "Legacy")]
pub struct LegacySentences {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_size: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_up: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outstanding: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Text>,
}

/// [`LegacySentences`], boxed and only when there are some: no cell this
/// build reads from a transcript has any, and seven empty slots in every
/// cell made each one 168 bytes bigger to move, compare and drop. Reads
/// and writes as the sentences themselves (serde, schema, `Debug`).
#[derive(Clone, Default)]
pub struct Legacy(Option<Box<LegacySentences>>);

/// What an empty [`Legacy`] reads as.
static NO_SENTENCES: LegacySentences = LegacySentences {
    unit: None,
    direction: None,
    message_size: None,
    warm_up: None,
    outstanding: None,
    path: None,
    context: None,
};

impl std::ops::Deref for Legacy {
    type Target = LegacySentences;
    fn deref(&self) -> &LegacySentences {
        self.0.as_deref().unwrap_or(&NO_SENTENCES)
    }
}

impl std::ops::DerefMut for Legacy {
    fn deref_mut(&mut self) -> &mut LegacySentences {
        self.0.get_or_insert_default()
    }
}

impl From<LegacySentences> for Legacy {
    fn from(s: LegacySentences) -> Legacy {
        Legacy((s != NO_SENTENCES).then(|| Box::new(s)))
    }
}

impl PartialEq for Legacy {
    fn eq(&self, other: &Legacy) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            _ => **self == **other,
        }
    }
}

impl Eq for Legacy {}

impl std::hash::Hash for Legacy {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (**self).hash(h);
    }
}

impl std::fmt::Debug for Legacy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let LegacySentences {
            unit,
            direction,
            message_size,
            warm_up,
            outstanding,
            path,
            context,
        } = &**self;
        f.debug_struct("Legacy")
            .field("unit", unit)
            .field("direction", direction)
            .field("message_size", message_size)
            .field("warm_up", warm_up)
            .field("outstanding", outstanding)
            .field("path", path)
            .field("context", context)
            .finish()
    }
}

impl Serialize for Legacy {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for Legacy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Legacy, D::Error> {
        LegacySentences::deserialize(d).map(Legacy::from)
    }
}

impl JsonSchema for Legacy {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        LegacySentences::schema_name()
    }

    fn schema_id() -> std::borrow::Cow<'static, str> {
        LegacySentences::schema_id()
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        LegacySentences::json_schema(g)
    }
}
