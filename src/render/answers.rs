//! The seven answers in words: the one place a cell's facts
//! (`evidence::answers`, and the cell's own fields) become the sentences a
//! reader sees. A migrated bundle's sentence that could not be read as a
//! fact (`legacy`) is shown as it is.

use crate::evidence::answers::{
    Context, DirectionNote, MessageSize, Outstanding, Path, RdmaPath, Side, Timer, Unit, Windows,
};
use crate::evidence::measurement::{
    Buffers, CopyEngine, Direction, Kind, Measurement, NOT_STATED, P2p, Statistic, describe_size,
};
use crate::render::format::secs;

/// The labels of the seven questions, in order.
pub const LABELS: [&str; 7] = [
    "bytes or bits",
    "direction",
    "message size",
    "warm-up",
    "outstanding operations",
    "path",
    "what else was running",
];

/// `m`'s seven answers, in the order of [`LABELS`].
pub fn answers(m: &Measurement) -> [String; 7] {
    let l = &m.questions.legacy;
    let or = |legacy: &Option<crate::evidence::text::Text>, f: &dyn Fn() -> String| {
        legacy.as_ref().map_or_else(f, |t| t.to_string())
    };
    [
        or(&l.unit, &|| unit(m)),
        or(&l.direction, &|| direction(m)),
        or(&l.message_size, &|| message_size(m)),
        or(&l.warm_up, &|| warm_up(m)),
        or(&l.outstanding, &|| outstanding(m)),
        or(&l.path, &|| path(m)),
        or(&l.context, &|| context(m)),
    ]
}

fn not_stated() -> String {
    NOT_STATED.to_string()
}

fn unit(m: &Measurement) -> String {
    match &m.questions.unit {
        Unit::NotStated => not_stated(),
        Unit::GigabytesPerS => "GB/s = 1e9 bytes per second, as printed".into(),
        Unit::MegabytesPerS => "MB/s = 1e6 bytes per second, as printed".into(),
        Unit::BandwidthTestMegabytesPerS => "MB/s as bandwidthTest computed it before its GB/s releases: 1024*bytes/(ms*2^20), so 1 MB/s = 1.024e6 bytes/s".into(),
        Unit::MebibytesPerS { printed } => format!(
            "{printed} as printed; {} divides by 2^20 for this unit, so 1 {printed} = 1,048,576 bytes/s",
            m.tool
        ),
        Unit::GigabitsPerS => {
            "Gb/s as printed: 1e9 bits per second, converted to bytes by dividing by 8".into()
        }
        Unit::Microseconds => "microseconds, as printed".into(),
        Unit::Milliseconds => "milliseconds, as printed".into(),
        Unit::Nanoseconds => "nanoseconds, as printed".into(),
        Unit::Timed { timer } => format!(
            "bytes/s = size / time per copy, time from {timer}; shown as GB/s = 1e9 bytes/s"
        ),
    }
}

fn direction(m: &Measurement) -> String {
    const BI: &str = "bidirectional: both directions at once, the figure is the sum";
    if m.direction == Direction::Bi {
        return BI.into();
    }
    if m.direction == Direction::NotStated && m.questions.direction == DirectionNote::Plain {
        return not_stated();
    }
    match m.questions.direction {
        DirectionNote::Plain => "unidirectional".into(),
        DirectionNote::RowToColumn => "unidirectional: the row's endpoint copies to the column's".into(),
        DirectionNote::TitleArrow => "unidirectional, from the row's endpoint to the column's (the other way when the title's arrow is `<-`)".into(),
        DirectionNote::ColumnToRow => "unidirectional: a read test, the data moves from the column's GPU to the row's (whatever arrow the title prints)".into(),
        DirectionNote::SourceToDestination => "unidirectional: from the source to the destination of the transfer".into(),
        DirectionNote::AllPairsAtOnce => "unidirectional per pair, all pairs at once (all-to-all)".into(),
        DirectionNote::MatrixTotal => "total over every pair of the matrix".into(),
        DirectionNote::CountedTwice => format!("one way within the GPU; {} counts every byte twice (read and written: 2.0f * size in its source), so the copy moved half this", m.tool),
        DirectionNote::HalfRoundTrip if m.questions.outstanding == Outstanding::PingPong => {
            "one way: half of a ping-pong round trip".into()
        }
        DirectionNote::HalfRoundTrip => format!("one way: {} reports half the round trip", m.tool),
        DirectionNote::RoundTrip => format!(
            "round trip: {} does not halve {} latencies",
            m.tool,
            m.kind.as_str()
        ),
        DirectionNote::Collective => match m.statistic {
            Statistic::Busbw => format!(
                "bus bandwidth: algbw times the {} factor, comparable with link bandwidth",
                m.kind.as_str()
            ),
            _ if m.latency_s.is_some() => "the time of one collective, every rank taking part".into(),
            _ => "algorithm bandwidth: message size / time".into(),
        },
        DirectionNote::Untitled => "not stated by the transcript (no title line: osu_bw is unidirectional, osu_bibw the sum of both)".into(),
    }
}

fn message_size(m: &Measurement) -> String {
    match m.questions.message_size {
        MessageSize::SweepAverage => "average over every size of the sweep".into(),
        MessageSize::PerCell => m
            .size_bytes
            .map_or_else(not_stated, |s| describe_size(s).to_string()),
    }
}

fn warm_up(m: &Measurement) -> String {
    let Some(w) = m.warmup_iterations else {
        return not_stated();
    };
    if let Outstanding::Windows(win) = &m.questions.outstanding {
        return match win.copies {
            1 => format!("{w} untimed copies of this size before the timed ones"),
            k => format!("{w} untimed windows of {k} copies of this size before the timed ones"),
        };
    }
    // The setting that sets it, where the tool has one users change.
    let (zero, set) = match m.tool.as_str() {
        "TransferBench" => (" (NUM_WARMUPS=0)", " (NUM_WARMUPS)"),
        _ => ("", ""),
    };
    match w {
        0 => format!(
            "no warm-up iterations{zero}: the first iteration's setup cost is in the average"
        ),
        1 => format!("1 warm-up iteration outside the timing{set}"),
        w => format!("{w} warm-up iterations outside the timing{set}"),
    }
}

fn outstanding(m: &Measurement) -> String {
    match &m.questions.outstanding {
        Outstanding::NotStated => not_stated(),
        Outstanding::QueuePairs => match (m.queue_depth, m.qps) {
            (Some(d), Some(qp)) => format!("TX depth {d} per QP, {qp} QP(s)"),
            (None, Some(qp)) => format!("{qp} QP(s); TX depth not printed on this side"),
            _ => not_stated(),
        },
        Outstanding::OneCollective => match m.iterations {
            Some(i) => format!("one collective at a time, averaged over {i} iterations"),
            None => "one collective at a time".into(),
        },
        Outstanding::OneTransfer { timer } => format!(
            "one transfer at a time, timed on the {}",
            match timer {
                Timer::Cpu => "CPU",
                Timer::Gpu => "GPU",
            }
        ),
        Outstanding::PingPong => "one message in flight (ping-pong)".into(),
        Outstanding::Executor { executor } => format!("executor {executor}"),
        Outstanding::Windows(w) => windows(m, w),
    }
}

/// wire-report's own sweep: the window, then how many repetitions ran.
fn windows(m: &Measurement, w: &Windows) -> String {
    let per = match w.copies {
        1 => "one copy in each timed window".to_string(),
        k => format!("{k} copies back to back in each timed window"),
    };
    let ran = m.iterations.unwrap_or(0);
    let reps = if ran < u64::from(w.planned) {
        format!(
            "{ran} of {} planned timed repetitions (an error stopped the sweep)",
            w.planned
        )
    } else {
        let mut s = format!(
            "{ran} timed repetition{} as planned",
            if ran == 1 { "" } else { "s" }
        );
        if let Some(b) = w.budget_ms {
            s.push_str(&format!(
                " (the {} budget lowered them from {})",
                secs(b as f64 / 1e3),
                w.asked
            ));
        }
        s
    };
    format!(
        "{per} ({}); {reps}, each filled with the other of two patterns and checked byte by byte",
        w.held
    )
}

fn path(m: &Measurement) -> String {
    match &m.questions.path {
        Path::NotStated => not_stated(),
        Path::WithinGpu => "within one GPU's memory".into(),
        Path::GpuToGpu { access } => gpu_to_gpu(m, *access),
        Path::HostGpu { access } => format!(
            "between host memory and the GPU, over PCIe (or C2C){}{}",
            engines(m),
            no_access(m, *access)
        ),
        Path::HostHost => "between host memory of two CPUs (NUMA nodes)".into(),
        Path::Rdma(r) => rdma(r),
        Path::Ranks { ranks, nodes, gpu } => {
            let gpu = gpu.as_ref().map(|g| format!(" ({g})")).unwrap_or_default();
            match nodes {
                0 => not_stated(),
                1 => format!(
                    "{ranks} ranks on one node{gpu}: scale-up links or PCIe inside the node"
                ),
                k => format!("{ranks} ranks on {k} nodes{gpu}: crosses the scale-out network"),
            }
        }
        Path::Mpi if m.kind.is_collective() => match m.buffers {
            Buffers::Device => "an MPI collective over every rank of the job (OSU does not print how many), device buffers".into(),
            Buffers::Host => "an MPI collective over every rank of the job (OSU does not print how many), host buffers".into(),
            _ => "an MPI collective over every rank of the job (OSU does not print how many); buffer location not printed".into(),
        },
        Path::Mpi => match (&m.src, &m.dst, m.buffers) {
            (Some(a), b, _) => format!(
                "MPI between {a} and {} (from the *_VISIBLE_DEVICES line before the run), device buffers",
                b.as_deref().unwrap_or("")
            ),
            (None, _, Buffers::Device) => "MPI, device buffers".into(),
            (None, _, Buffers::Host) => "MPI, host buffers".into(),
            _ => "MPI; buffer location not printed".into(),
        },
        Path::Transfer { route } => format!("{route} (source -> executor -> destination)"),
        Path::Swept { description } => description.to_string(),
    }
}

/// `, by copy engines (DMA)` or `, by SM copy kernels` when the cell says.
fn engines(m: &Measurement) -> &'static str {
    match m.copy_engine {
        CopyEngine::Ce => ", by copy engines (DMA)",
        CopyEngine::Sm => ", by SM copy kernels",
        CopyEngine::Unknown => "",
    }
}

fn gpu_to_gpu(m: &Measurement, access: Option<bool>) -> String {
    let by = engines(m);
    let pair = "the pair";
    match (m.p2p, access) {
        (P2p::Disabled, _) => "P2P disabled: staged through host memory by design".into(),
        (P2p::NoPeerAccess, _) | (P2p::Enabled, Some(false)) => format!(
            "P2P requested but {pair} cannot access each other as peers (CANNOT Access Peer / connectivity 0): the copy falls back to staging through host memory"
        ),
        (_, Some(true)) => format!("GPU to GPU, direct peer access between {pair}{by}"),
        (P2p::Enabled, None) => {
            format!("P2P requested{by}; whether {pair} can access each other is not stated")
        }
        (P2p::Unknown, Some(false)) => format!("GPU to GPU{by}{}", no_access(m, Some(false))),
        (P2p::Unknown, None) if m.kind == Kind::P2pCopy => {
            format!("GPU to GPU{by}; which link (NVLink, xGMI or PCIe): see the topology")
        }
        (P2p::Unknown, None) => format!("GPU to GPU{by}"),
    }
}

/// `; the tool's access matrix says CPU0 cannot access GPU1 directly`.
fn no_access(m: &Measurement, access: Option<bool>) -> String {
    if access != Some(false) {
        return String::new();
    }
    match (&m.src, &m.dst) {
        (Some(s), Some(d)) => {
            format!("; the tool's access matrix says {s} cannot access {d} directly")
        }
        _ => "; the tool's access matrix says the pair cannot access each other directly".into(),
    }
}

/// perftest's run: side, device, link type, MTU, where the buffers were.
fn rdma(r: &RdmaPath) -> String {
    let side = match r.side {
        Side::Server => "server side",
        Side::Client => "client side",
    };
    let mut s = match &r.device {
        Some(d) => format!("{side}, device {d}"),
        None => format!("{side}; device not printed (header not captured)"),
    };
    if let Some(lt) = &r.link_type {
        if lt.as_str() == "Ethernet" {
            s.push_str(", link type Ethernet (RoCE)");
        } else {
            s.push_str(&format!(", link type {lt}"));
        }
    }
    if let Some(mtu) = &r.mtu {
        s.push_str(&format!(", MTU {mtu}"));
    }
    let how = r
        .registration
        .words()
        .map(|w| format!(", registered through {w}"))
        .unwrap_or_default();
    match (&r.gpu_memory, &r.gpu) {
        (Some(k), Some(g)) => s.push_str(&format!("; buffers in GPU memory ({k}, {g}{how})")),
        (Some(k), None) => s.push_str(&format!("; buffers in GPU memory ({k}{how})")),
        (None, _) => s.push_str(
            "; buffer location not printed (host memory unless --use_cuda/--use_rocm was given)",
        ),
    }
    s
}

fn context(m: &Measurement) -> String {
    match &m.questions.context {
        Context::NotStated => not_stated(),
        Context::CpuFrequencyWarning => {
            format!("{} warned the CPU frequency was not at maximum", m.tool)
        }
        Context::AllPairsAtOnce => {
            "every other GPU pair transferring at the same time (all-to-all)".into()
        }
        Context::ShaderCopies => {
            "HSA_ENABLE_SDMA=0: copies by shader kernels, not SDMA engines".into()
        }
        Context::OneTransferAtATime => "one transfer at a time".into(),
        Context::ReverseCopyAtOnce => "the pair's reverse copy at the same time".into(),
        Context::Uncontrolled { load_average, gpu } => format!(
            "load average at the start {}; {}",
            load_average.as_deref().unwrap_or("not readable"),
            if *gpu {
                "other GPU work on the node was not controlled"
            } else {
                "other processes were not controlled"
            }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::measurement::{Kind, Statistic};

    #[test]
    fn an_osu_collective_is_over_every_rank_and_a_point_to_point_test_between_two() {
        let osu = |kind: Kind| {
            let mut m = Measurement::new("osu", 9, kind, "t", Statistic::Avg);
            m.buffers = Buffers::Device;
            m.questions.path = Path::Mpi;
            answers(&m)[5].clone()
        };
        assert_eq!(
            osu(Kind::Reduce),
            "an MPI collective over every rank of the job (OSU does not print how many), device buffers"
        );
        assert_eq!(osu(Kind::MpiPt2pt), "MPI, device buffers");
    }
}
