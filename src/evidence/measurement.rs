//! Measurement cells: one number from one tool, with everything needed to
//! compare it with a number from any other tool.
//!
//! Units live in field names and are converted once, in the parser that read
//! the number: bandwidth in bytes per second, latency in seconds, sizes in
//! bytes. What the tool printed is kept verbatim in `as_printed`. The seven
//! questions every bandwidth number must answer are facts in [`Questions`]
//! (`evidence::answers`), made into sentences at render time.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::evidence::Source;
pub use crate::evidence::answers::Questions;
pub use crate::evidence::text::Text;

/// The answer to a question the transcript does not answer (the words;
/// the fact is each answer's default).
pub const NOT_STATED: &str = "not stated by the tool";

/// GB as the copy tools print it: 1e9 bytes.
pub const GB: f64 = 1e9;
/// MB as OSU micro-benchmarks and rocm-smi print it: 1e6 bytes.
pub const MB_DECIMAL: f64 = 1e6;
/// MB as perftest prints it (`BW average[MB/sec]`), and MiB in newer
/// perftest headers: 2^20 bytes. perftest divides by `0x100000` when the
/// report format is MBS (src/perftest_parameters.c / perftest_resources.c,
/// `format_factor = (user_param->report_fmt == MBS) ? 0x100000 : 125000000`).
pub const MIB: f64 = 1_048_576.0;
/// One Gb/s in bytes/s: perftest's `--report_gbits` divides by 125000000
/// (same source line), i.e. 1e9 bits = 1.25e8 bytes.
pub const GBIT_BYTES: f64 = 125_000_000.0;

/// What moved, between what kinds of memory or endpoints.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// GPU to another GPU.
    P2pCopy,
    /// Host memory to a GPU.
    H2d,
    /// A GPU to host memory.
    D2h,
    /// Within one GPU's memory.
    D2d,
    /// Host memory to host memory.
    H2h,
    RdmaWrite,
    RdmaRead,
    RdmaSend,
    RdmaAtomic,
    /// An RDMA test whose verb the transcript does not show (a table pasted
    /// without its header).
    Rdma,
    Allreduce,
    Allgather,
    Alltoall,
    Broadcast,
    Reduce,
    Reducescatter,
    Sendrecv,
    /// A collective whose operation the transcript does not name and the
    /// numbers do not identify (see the cell's `test`).
    Collective,
    /// MPI point-to-point between two ranks (OSU).
    MpiPt2pt,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::P2pCopy => "p2p-copy",
            Kind::H2d => "h2d",
            Kind::D2h => "d2h",
            Kind::D2d => "d2d",
            Kind::H2h => "h2h",
            Kind::RdmaWrite => "rdma-write",
            Kind::RdmaRead => "rdma-read",
            Kind::RdmaSend => "rdma-send",
            Kind::RdmaAtomic => "rdma-atomic",
            Kind::Rdma => "rdma",
            Kind::Allreduce => "allreduce",
            Kind::Allgather => "allgather",
            Kind::Alltoall => "alltoall",
            Kind::Broadcast => "broadcast",
            Kind::Reduce => "reduce",
            Kind::Reducescatter => "reducescatter",
            Kind::Sendrecv => "sendrecv",
            Kind::Collective => "collective",
            Kind::MpiPt2pt => "mpi-pt2pt",
        }
    }

    /// Whether the cell times a collective over many ranks (nccl-tests,
    /// OSU's collective tests), not a transfer along one path: its size over
    /// its time is no path's bandwidth.
    pub fn is_collective(self) -> bool {
        matches!(
            self,
            Kind::Allreduce
                | Kind::Allgather
                | Kind::Alltoall
                | Kind::Broadcast
                | Kind::Reduce
                | Kind::Reducescatter
                | Kind::Sendrecv
                | Kind::Collective
        )
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// One direction at a time.
    Uni,
    /// Both directions at once; the figure is the sum of both.
    Bi,
    /// The transcript does not say (an OSU table without its title line:
    /// `osu_bw` and `osu_bibw` print the same columns).
    NotStated,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Statistic {
    Avg,
    Peak,
    Min,
    Max,
    Median,
    /// perftest's `t_typical` (the median of the samples).
    Typical,
    Stdev,
    P99,
    P999,
    /// A total over pairs or transfers (nvbandwidth SUM, TransferBench aggregate).
    Sum,
    /// One timed iteration.
    Single,
    /// The tool's own algorithm bandwidth (nccl-tests algbw).
    Algbw,
    /// nccl-tests bus bandwidth: algbw scaled by the collective's factor.
    Busbw,
}

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
    Default,
)]
#[serde(rename_all = "kebab-case")]
pub enum P2p {
    Enabled,
    Disabled,
    /// P2P was asked for (p2pBandwidthLatencyTest's `P2P=Enabled`
    /// matrices), but the tool says this pair cannot access each other as
    /// peers (`Device=0 CANNOT Access Peer Device=1`, or a 0 in its
    /// connectivity matrix): the copy went through host memory, as with
    /// P2P disabled.
    NoPeerAccess,
    #[default]
    Unknown,
}

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
    Default,
)]
#[serde(rename_all = "kebab-case")]
pub enum Buffers {
    Device,
    HostPinned,
    HostPageable,
    /// Host memory of unstated kind.
    Host,
    /// Source and destination differ (an H2D copy from pinned host memory
    /// to a device, say); see `questions.path`.
    Mixed,
    #[default]
    Unknown,
}

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
    Default,
)]
#[serde(rename_all = "kebab-case")]
pub enum CopyEngine {
    /// DMA copy engines (cudaMemcpy / hipMemcpy, SDMA, `_ce` tests).
    Ce,
    /// Copy kernels running on the streaming multiprocessors (`_sm` tests).
    Sm,
    #[default]
    Unknown,
}

/// Whether the tool checked the data it moved.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum Verification {
    /// The tool compared the data; `errors` is what it counted.
    Checked { errors: u64 },
    /// The tool's check failed but it printed no count of wrong values
    /// (old nccl-tests' `error` column over its tolerance, OSU's `Fail`).
    Failed,
    /// The tool says it did not check (nccl-tests `validation: 0`).
    NotVerified,
    /// The transcript does not say.
    #[default]
    Unknown,
}

/// One number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Measurement {
    /// The tool that printed it (`nvbandwidth`, `perftest`, `nccl-tests`...).
    pub tool: Text,
    pub source: Source,
    pub kind: Kind,
    /// The tool's own name for the test (`device_to_device_memcpy_read_ce`,
    /// `RDMA_Write BW Test`, `Unidirectional P2P=Enabled Bandwidth`).
    pub test: Text,
    /// Device ids as in `topology` where they can be matched (`GPU0`, `CPU1`,
    /// `mlx5_0`); absent for aggregates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<Text>,
    pub direction: Direction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_bytes_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_s: Option<f64>,
    pub statistic: Statistic,
    /// The value and unit exactly as printed (`370.90 GB/s`, `3665.25 MB/sec`).
    pub as_printed: Text,
    pub p2p: P2p,
    pub buffers: Buffers,
    pub copy_engine: CopyEngine,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_iterations: Option<u64>,
    /// Work requests in flight per queue pair (perftest TX depth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qps: Option<u32>,
    pub verification: Verification,
    /// The seven answers as facts; sentences of version 1 and 2 bundles
    /// are read too (kept in `legacy` until migrated).
    #[serde(deserialize_with = "crate::evidence::answers::any_questions")]
    pub questions: Questions,
}

impl Measurement {
    /// A cell with every optional fact unknown; parsers fill in what their
    /// transcript states.
    pub fn new(
        tool: &'static str,
        line: usize,
        kind: Kind,
        test: impl Into<Text>,
        statistic: Statistic,
    ) -> Measurement {
        Measurement {
            tool: Text::from(tool),
            source: Source::line(line),
            kind,
            test: test.into(),
            src: None,
            dst: None,
            direction: Direction::Uni,
            size_bytes: None,
            bandwidth_bytes_per_s: None,
            latency_s: None,
            statistic,
            as_printed: Text::default(),
            p2p: P2p::Unknown,
            buffers: Buffers::Unknown,
            copy_engine: CopyEngine::Unknown,
            iterations: None,
            warmup_iterations: None,
            queue_depth: None,
            qps: None,
            verification: Verification::Unknown,
            questions: Questions::default(),
        }
    }
}

/// Device ids by number (`GPU0`, `GPU1`...), made once and shared by every
/// cell that names them.
pub struct Ids {
    prefix: &'static str,
    made: Vec<Text>,
}

impl Ids {
    /// More devices than any node has; ids past it are not cached.
    pub const SHARED: usize = 1024;

    pub fn new(prefix: &'static str) -> Ids {
        Ids {
            prefix,
            made: Vec::new(),
        }
    }

    /// The id of device `i`. Ids up to [`Ids::SHARED`] are made once and
    /// shared; a larger index (only a damaged or hostile transcript prints
    /// one) is made on its own, so memory never grows with a number read
    /// from the text.
    pub fn get(&mut self, i: usize) -> Text {
        if i >= Self::SHARED {
            return format!("{}{i}", self.prefix).into();
        }
        while self.made.len() <= i {
            self.made
                .push(format!("{}{}", self.prefix, self.made.len()).into());
        }
        self.made[i].clone()
    }
}

/// `1 KB`, `16 MB`, `512 MB` as rocm-bandwidth-test prints sizes: binary
/// multiples (its size list is powers of two: 1 KB = 1024 bytes).
pub fn parse_binary_size(num: &str, unit: &str) -> Option<u64> {
    let n: u64 = num.parse().ok()?;
    let m = match unit {
        "B" => 1,
        "KB" | "KiB" => 1 << 10,
        "MB" | "MiB" => 1 << 20,
        "GB" | "GiB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(m)
}

/// A decimal number as tools print them (`370.90`, `0.061867`, `4.887e-03`).
pub fn parse_number(s: &str) -> Option<f64> {
    let v: f64 = s.parse().ok()?;
    v.is_finite().then_some(v)
}

/// Human form of a byte count for the questions: `8388608 bytes (8 MiB)`.
pub fn describe_size(bytes: u64) -> Text {
    let units = [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (m, u) in units {
        if bytes >= m && bytes.is_multiple_of(m) {
            return format!("{bytes} bytes ({} {u})", bytes / m).into();
        }
    }
    format!("{bytes} bytes").into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary_multiples() {
        assert_eq!(parse_binary_size("512", "MB"), Some(512 << 20));
        assert_eq!(parse_binary_size("1", "KB"), Some(1024));
        assert_eq!(parse_binary_size("1", "TB"), None);
        assert_eq!(describe_size(8_388_608), "8388608 bytes (8 MiB)");
        assert_eq!(describe_size(1000), "1000 bytes");
    }

    #[test]
    fn numbers_reject_non_finite() {
        assert_eq!(parse_number("4.887e-03"), Some(0.004887));
        assert_eq!(parse_number("inf"), None);
        assert_eq!(parse_number("N/A"), None);
    }
}
