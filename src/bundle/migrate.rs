//! Bundles written before the seven answers were facts: schema version 1
//! (each cell's seven sentences) and 2 (six sentences per series, a cell's
//! message-size sentence when it was not the usual one).
//!
//! Reading accepts either form of `questions` (`answers::any_questions`); the old
//! form lands in [`Legacy`] whole, and [`questions`] then reads each
//! sentence back into facts when it is one this crate wrote and it says one
//! thing (an exact sentence, or a known pattern whose parts parse). A
//! sentence that does not stays in `legacy` and is shown as it is. A
//! sentence that said "not stated" becomes the fact's default; where the
//! cell's own fields now say more (a size, a warm-up count), the page says
//! more than the old sentence did.

use crate::evidence::answers::{
    Context, DirectionNote, Legacy, MessageSize, Outstanding, Path, RdmaPath, Side, Timer, Unit,
};
use crate::evidence::measurement::{Measurement, NOT_STATED, describe_size};
use crate::evidence::text::Text;

/// Reads `m`'s legacy sentences into facts where they are unambiguous.
pub fn questions(m: &mut Measurement) {
    if m.questions.legacy == Legacy::default() {
        return;
    }
    let legacy = std::mem::take(&mut m.questions.legacy);
    let q = &mut m.questions;
    let stated = |t: &Option<Text>| {
        t.as_deref()
            .filter(|t| *t != NOT_STATED)
            .map(str::to_string)
    };
    if let Some(t) = stated(&legacy.unit) {
        match unit(&t) {
            Some(u) => q.unit = u,
            None => return_legacy(&mut q.legacy.unit, t),
        }
    }
    if let Some(t) = stated(&legacy.direction) {
        match direction(&t) {
            Some(d) => q.direction = d,
            None => return_legacy(&mut q.legacy.direction, t),
        }
    }
    if let Some(t) = stated(&legacy.message_size) {
        if t == "average over every size of the sweep" {
            q.message_size = MessageSize::SweepAverage;
        } else if m.size_bytes.map(describe_size).as_deref() != Some(t.as_str()) {
            return_legacy(&mut q.legacy.message_size, t);
        }
    }
    if let Some(t) = stated(&legacy.warm_up)
        && !warm_up_is_derived(&t, m.warmup_iterations)
    {
        return_legacy(&mut q.legacy.warm_up, t);
    }
    if let Some(t) = stated(&legacy.outstanding) {
        match outstanding(&t) {
            Some(o) => q.outstanding = o,
            None => return_legacy(&mut q.legacy.outstanding, t),
        }
    }
    if let Some(t) = stated(&legacy.path) {
        match path(&t) {
            Some(p) => q.path = p,
            None => return_legacy(&mut q.legacy.path, t),
        }
    }
    if let Some(t) = stated(&legacy.context) {
        match context(&t) {
            Some(c) => q.context = c,
            None => return_legacy(&mut q.legacy.context, t),
        }
    }
}

fn return_legacy(slot: &mut Option<Text>, t: String) {
    *slot = Some(t.into());
}

fn unit(t: &str) -> Option<Unit> {
    Some(match t {
        "GB/s = 1e9 bytes per second, as printed"
        | "GB/s as printed; bandwidthTest's GB is 1e9 bytes" => Unit::GigabytesPerS,
        "MB/s as printed; OSU's MB is 1e6 bytes" => Unit::MegabytesPerS,
        "MB/s as bandwidthTest computed it before its GB/s releases: 1024*bytes/(ms*2^20), so 1 MB/s = 1.024e6 bytes/s" => {
            Unit::BandwidthTestMegabytesPerS
        }
        "Gb/sec as printed (--report_gbits): 1e9 bits per second, converted to bytes by dividing by 8" => {
            Unit::GigabitsPerS
        }
        "microseconds (usec), as printed"
        | "microseconds (us), as printed"
        | "microseconds, as printed"
        | "microseconds per copy, as printed"
        | "microseconds per collective (average over iters), as printed" => Unit::Microseconds,
        "milliseconds, as printed" => Unit::Milliseconds,
        "nanoseconds, as printed" => Unit::Nanoseconds,
        _ => {
            if let Some(rest) = t.strip_prefix("bytes/s = size / time per copy, time from ") {
                let timer = rest.strip_suffix("; shown as GB/s = 1e9 bytes/s")?;
                return Some(Unit::Timed {
                    timer: timer.to_string().into(),
                });
            }
            let (u, rest) =
                t.split_once(" as printed; perftest divides by 2^20 for this unit, so 1 ")?;
            (rest == format!("{u} = 1,048,576 bytes/s")).then_some(())?;
            Unit::MebibytesPerS {
                printed: u.to_string().into(),
            }
        }
    })
}

fn direction(t: &str) -> Option<DirectionNote> {
    use DirectionNote as D;
    Some(match t {
        "unidirectional"
        | "one way"
        | "bidirectional: both directions at once, the figure is the sum" => D::Plain,
        "bidirectional (<->): both directions at once" => D::Plain,
        "unidirectional: row device copies to column device"
        | "unidirectional: row agent copies to column agent"
        | "bidirectional: both directions at once, figure is the sum of both" => D::RowToColumn,
        "unidirectional, from the row's endpoint to the column's (the other way when the title's arrow is `<-`)" => {
            D::TitleArrow
        }
        "unidirectional: a read test, the data moves from the column's GPU to the row's (whatever arrow the title prints)" => {
            D::ColumnToRow
        }
        "unidirectional: source to destination of the transfer"
        | "unidirectional: one source buffer to one destination buffer" => D::SourceToDestination,
        "unidirectional per pair, all pairs at once (all-to-all)" => D::AllPairsAtOnce,
        "total over every pair of the matrix" => D::MatrixTotal,
        "one way within the GPU; bandwidthTest counts every byte twice (read and written: 2.0f * size in its source), so the copy moved half this" => {
            D::CountedTwice
        }
        "one way: perftest reports half the round trip for write and send"
        | "one way: half of a ping-pong round trip" => D::HalfRoundTrip,
        "round trip: perftest does not halve read and atomic latencies" => D::RoundTrip,
        "algorithm bandwidth: message size / time" => D::Collective,
        "not stated by the transcript (no title line: osu_bw is unidirectional, osu_bibw the sum of both)" => {
            D::Untitled
        }
        _ if t.starts_with("bus bandwidth: algbw times the ")
            && t.ends_with(" factor, comparable with link bandwidth") =>
        {
            D::Collective
        }
        _ => return None,
    })
}

/// Whether the old warm-up sentence said what `warmup_iterations` says
/// (nccl-tests, TransferBench); a sweep's windows stay as written.
fn warm_up_is_derived(t: &str, warmup: Option<u64>) -> bool {
    match warmup {
        Some(0) => t.starts_with("no warm-up iterations (NUM_WARMUPS=0)"),
        Some(w) => {
            t == format!("{w} warm-up iterations outside the timing")
                || t == format!("{w} warm-up iteration(s) outside the timing (NUM_WARMUPS)")
        }
        None => false,
    }
}

fn outstanding(t: &str) -> Option<Outstanding> {
    Some(match t {
        "one transfer at a time, timed on the CPU" => {
            Outstanding::OneTransfer { timer: Timer::Cpu }
        }
        "one transfer at a time, timed on the GPU" => {
            Outstanding::OneTransfer { timer: Timer::Gpu }
        }
        "one message in flight (ping-pong)" => Outstanding::PingPong,
        _ if t.starts_with("one collective at a time, averaged over ") => {
            Outstanding::OneCollective
        }
        _ if t.starts_with("TX depth ")
            || t.ends_with("QP(s); TX depth not printed on this side") =>
        {
            Outstanding::QueuePairs
        }
        _ => Outstanding::Executor {
            executor: t.strip_prefix("executor ")?.to_string().into(),
        },
    })
}

fn path(t: &str) -> Option<Path> {
    let peer = |access| Some(Path::GpuToGpu { access });
    match t {
        "within one GPU's memory" | "within one GPU" => return Some(Path::WithinGpu),
        "P2P disabled: staged through host memory by design"
        | "P2P requested; whether the pair can access each other is not stated"
        | "GPU to GPU by DMA engines (xGMI or PCIe: see the topology)"
        | "GPU to GPU, GFX (SM) executors" => return peer(None),
        "direct peer access between the pair"
        | "GPU to GPU with peer access, by SM copy kernels"
        | "GPU to GPU with peer access, by copy engines" => return peer(Some(true)),
        "host memory over PCIe (or C2C) and the GPU"
        | "host memory of a CPU agent (NUMA node) and a GPU, by DMA engines" => {
            return Some(Path::HostGpu { access: None });
        }
        "between host memory of two CPU agents" => return Some(Path::HostHost),
        _ => {}
    }
    if t.starts_with("P2P requested but the pair cannot access each other as peers")
        || (t.starts_with(
            "GPU to GPU by DMA engines (xGMI or PCIe: see the topology) (the access matrix says ",
        ) && t.ends_with(" directly)"))
    {
        return peer(Some(false));
    }
    if t.starts_with(
        "host memory of a CPU agent (NUMA node) and a GPU, by DMA engines (the access matrix says ",
    ) && t.ends_with(" directly)")
    {
        return Some(Path::HostGpu {
            access: Some(false),
        });
    }
    if t.starts_with("MPI between ") || t.starts_with("MPI, ") || t.starts_with("MPI; ") {
        return Some(Path::Mpi);
    }
    if let Some(route) = t.strip_suffix(" (source -> executor -> destination)") {
        return Some(Path::Transfer {
            route: route.to_string().into(),
        });
    }
    ranks(t).or_else(|| rdma(t))
}

/// `16 ranks on 2 nodes (NVIDIA A100): crosses the scale-out network`,
/// `8 ranks on one node: scale-up links or PCIe inside the node`.
fn ranks(t: &str) -> Option<Path> {
    let (head, tail) = t.split_once(": ")?;
    let (r, rest) = head.split_once(" ranks on ")?;
    let (nodes, rest) = match rest.strip_prefix("one node") {
        Some(rest) => (1, rest),
        None => {
            let (k, rest) = rest.split_once(" nodes")?;
            (k.parse().ok()?, rest)
        }
    };
    let want_tail = if nodes == 1 {
        "scale-up links or PCIe inside the node"
    } else {
        "crosses the scale-out network"
    };
    (tail == want_tail).then_some(())?;
    let gpu = match rest {
        "" => None,
        g => Some(g.strip_prefix(" (")?.strip_suffix(')')?.to_string().into()),
    };
    Some(Path::Ranks {
        ranks: r.parse().ok()?,
        nodes,
        gpu,
    })
}

/// perftest's `server side, device mlx5_0, link type Ethernet (RoCE), MTU
/// 1024; buffers in GPU memory (CUDA, GPU0)` and its shorter forms.
fn rdma(t: &str) -> Option<Path> {
    let (main, buf) = t.split_once("; buffer")?;
    let (side, rest) = if let Some(r) = main.strip_prefix("server side") {
        (Side::Server, r)
    } else {
        (Side::Client, main.strip_prefix("client side")?)
    };
    let mut p = RdmaPath {
        side,
        device: None,
        link_type: None,
        mtu: None,
        gpu_memory: None,
        gpu: None,
        registration: Default::default(),
    };
    if rest != "; device not printed (header not captured)" {
        for part in rest.strip_prefix(", ")?.split(", ") {
            if let Some(d) = part.strip_prefix("device ") {
                p.device = Some(d.to_string().into());
            } else if let Some(l) = part.strip_prefix("link type ") {
                let l = if l == "Ethernet (RoCE)" {
                    "Ethernet"
                } else {
                    l
                };
                p.link_type = Some(l.to_string().into());
            } else if let Some(m) = part.strip_prefix("MTU ") {
                p.mtu = Some(m.to_string().into());
            } else {
                return None;
            }
        }
        p.device.as_ref()?;
    }
    if buf != " location not printed (host memory unless --use_cuda/--use_rocm was given)" {
        let inner = buf.strip_prefix("s in GPU memory (")?.strip_suffix(')')?;
        let (k, g) = match inner.split_once(", ") {
            Some((k, g)) => (k, Some(g)),
            None => (inner, None),
        };
        p.gpu_memory = Some(k.to_string().into());
        p.gpu = g.map(|g| g.to_string().into());
    }
    Some(Path::Rdma(Box::new(p)))
}

fn context(t: &str) -> Option<Context> {
    Some(match t {
        "perftest warned the CPU frequency was not at maximum" => Context::CpuFrequencyWarning,
        "every other GPU pair transferring at the same time (all-to-all)" => {
            Context::AllPairsAtOnce
        }
        "HSA_ENABLE_SDMA=0: copies by shader kernels, not SDMA engines" => Context::ShaderCopies,
        _ => {
            let rest = t.strip_prefix("load average at the start ")?;
            let (load, gpu) = match rest.split_once("; other processes were not controlled") {
                Some((l, "")) => (l, false),
                _ => (
                    rest.strip_suffix("; other GPU work on the node was not controlled")?,
                    true,
                ),
            };
            Context::Uncontrolled {
                load_average: (load != "not readable").then(|| load.to_string().into()),
                gpu,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sentences version 2 wrote for a live sweep and a perftest server
    /// without its header: the parts that parse become facts.
    #[test]
    fn sweep_and_headerless_perftest_sentences_read_back() {
        assert_eq!(
            unit(
                "bytes/s = size / time per copy, time from CUDA events; shown as GB/s = 1e9 bytes/s"
            ),
            Some(Unit::Timed {
                timer: "CUDA events".into()
            })
        );
        assert_eq!(
            context(
                "load average at the start 0.52 0.40 0.33; other GPU work on the node was not controlled"
            ),
            Some(Context::Uncontrolled {
                load_average: Some("0.52 0.40 0.33".into()),
                gpu: true
            })
        );
        assert_eq!(
            context("load average at the start not readable; other processes were not controlled"),
            Some(Context::Uncontrolled {
                load_average: None,
                gpu: false
            })
        );
        let Some(Path::Rdma(r)) = path(
            "server side; device not printed (header not captured); buffer location not printed (host memory unless --use_cuda/--use_rocm was given)",
        ) else {
            panic!("not read")
        };
        assert_eq!(
            (r.side, r.device.is_none(), r.gpu_memory.is_none()),
            (Side::Server, true, true)
        );
        let Some(Path::Rdma(r)) = path(
            "client side, device rxe0, link type Ethernet (RoCE), MTU 1024[B]; buffers in GPU memory (ROCm)",
        ) else {
            panic!("not read")
        };
        assert_eq!(r.link_type.as_deref(), Some("Ethernet"));
        assert_eq!(r.gpu_memory.as_deref(), Some("ROCm"));
        assert_eq!(r.gpu, None);
    }

    /// What is not one of ours, or only half of it, is not guessed at.
    #[test]
    fn other_sentences_are_not_read() {
        assert_eq!(
            unit(
                "MiB/sec as printed; perftest divides by 2^20 for this unit, so 1 MB/sec = 1,048,576 bytes/s"
            ),
            None
        );
        assert_eq!(
            path("client side, device mlx5_0, link speed 100G; buffers in GPU memory (CUDA)"),
            None
        );
        assert_eq!(
            path("8 ranks on 2 nodes: scale-up links or PCIe inside the node"),
            None
        );
        assert_eq!(direction("sideways"), None);
        assert_eq!(outstanding("two at a time"), None);
        assert_eq!(
            context("load average at the start 1; everyone was asked to leave"),
            None
        );
        assert!(!warm_up_is_derived(
            "5 warm-up iterations outside the timing",
            Some(4)
        ));
    }
}
