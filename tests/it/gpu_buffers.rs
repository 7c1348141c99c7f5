//! Host- and GPU-buffer perftest runs told apart, on real captures: where
//! the buffers were, how a GPU buffer reached the adapter (DMA-BUF or the
//! peer-memory module), key figures that never fold the two together, and
//! what the user is told when GPU buffers fall behind.

use std::path::Path;

use wire_report::bundle::{Bundle, ProblemKind};
use wire_report::diagnosis::{Finding, diagnose};
use wire_report::evidence::answers::{GpuRegistration, Path as AnswerPath};
use wire_report::evidence::measurement::{Buffers, Measurement, Statistic};
use wire_report::render::explain::{explanation, summary};
use wire_report::render::key_figures::key_figures;

const NODE: &str = "h200-gke-a3ultra-dmabuf";
const HOST_FILE: &str = "perftest-bw-019";
const GPU_FILE: &str = "perftest-bw-020";

fn node(name: &str) -> Bundle {
    let mut v = wire_report::inputs::ingest(&[Path::new("captures").join(name)]).unwrap();
    assert_eq!(v.len(), 1);
    v.remove(0).bundle
}

fn registration(m: &Measurement) -> GpuRegistration {
    match &m.questions.path {
        AnswerPath::Rdma(r) => r.registration,
        other => panic!("not an RDMA path: {other:?}"),
    }
}

fn cells<'b>(b: &'b Bundle, file: &str) -> Vec<&'b Measurement> {
    let v: Vec<_> = b
        .measurements
        .iter()
        .filter(|m| m.source.file.contains(file))
        .collect();
    assert!(!v.is_empty(), "no cells from {file}");
    v
}

#[test]
fn buffers_and_registration_read_from_the_transcript() {
    let b = node(NODE);
    // `ib_write_bw 10.0.4.8 -a --report_gbits`: no --use_cuda on the
    // pasted command line, so perftest's buffers are host memory.
    for m in cells(&b, HOST_FILE) {
        assert_eq!(m.buffers, Buffers::Host, "{m:?}");
        assert_eq!(registration(m), GpuRegistration::NotStated);
    }
    // `--use_cuda=0 ... --use_cuda_dmabuf`, `using DMA-BUF for GPU buffer`,
    // `Calling ibv_reg_dmabuf_mr(...)`.
    for m in cells(&b, GPU_FILE) {
        assert_eq!(m.buffers, Buffers::Device, "{m:?}");
        assert_eq!(registration(m), GpuRegistration::DmaBuf);
    }
    // perftest 25.x on an RTX 4080: `allocated GPU buffer of a 131072
    // address at ... for type CUDA_MEM_DEVICE` with no DMA-BUF line before
    // it: the buffer went to ibv_reg_mr, through the peer-memory module.
    let b = node("rtx4080-gdr");
    for m in cells(&b, "perftest-bw-012") {
        assert_eq!(m.buffers, Buffers::Device);
        assert_eq!(registration(m), GpuRegistration::PeerMemory);
    }
    // An older perftest that prints neither (`cuMemAlloc() of a 2097152
    // bytes GPU buffer`, prompt stripped): not stated, though the file name
    // says dmabuf.
    let b = node("a40-roce-openshift");
    for m in cells(&b, "perftest-bw-013") {
        assert_eq!(m.buffers, Buffers::Device);
        assert_eq!(registration(m), GpuRegistration::NotStated);
    }
}

#[test]
fn key_figures_keep_host_and_gpu_buffers_apart() {
    let b = node(NODE);
    let ks = key_figures(&b);
    let perftest: Vec<_> = ks.iter().filter(|k| k.tool == "perftest").collect();
    assert_eq!(perftest.len(), 2, "one figure per buffer placement");
    let host = perftest
        .iter()
        .find(|k| k.buffers == Buffers::Host)
        .expect("a host-buffer figure");
    let gpu = perftest
        .iter()
        .find(|k| k.buffers == Buffers::Device)
        .expect("a GPU-buffer figure");
    // Host: the run stopped after 64 KiB; 381.41 Gb/sec = 47.67625 GB/s.
    assert_eq!(host.best.size_bytes, Some(65536));
    assert_eq!(host.best.bandwidth_bytes_per_s, Some(381.41e9 / 8.0));
    assert_eq!(host.best.statistic, Statistic::Avg);
    assert_eq!(host.buffers_words(), ", host buffers");
    // GPU (DMA-BUF): to 8 MiB; 140.40 Gb/sec = 17.55 GB/s.
    assert_eq!(gpu.best.size_bytes, Some(8 << 20));
    assert_eq!(gpu.best.bandwidth_bytes_per_s, Some(140.40e9 / 8.0));
    assert_eq!(gpu.buffers_words(), ", GPU buffers (DMA-BUF)");
    assert_eq!((host.count, gpu.count), (1, 1));
}

#[test]
fn the_summary_names_the_buffers_of_each_figure() {
    let out = crate::common::wr()
        .args(["render", "--format", "md"])
        .arg(Path::new("captures").join(NODE))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let md = String::from_utf8(out.stdout).unwrap();
    let row = |what: &str| {
        md.lines()
            .find(|l| l.starts_with("| perftest") && l.contains(what))
            .unwrap_or_else(|| panic!("no key figure with {what} in\n{md}"))
            .to_string()
    };
    assert!(row(", host buffers |").contains("47.68 GB/s mlx5_3 at 64 KiB"));
    assert!(row(", GPU buffers (DMA-BUF) |").contains("17.55 GB/s mlx5_3 at 8 MiB"));
}

#[test]
fn gpu_below_host_through_dmabuf_does_not_send_the_user_to_peermem() {
    let b = node(NODE);
    let d = diagnose(&b);
    let f = d
        .iter()
        .map(|d| &d.finding)
        .find(|f| matches!(f, Finding::GpuBuffersBelowHost { .. }))
        .expect("gpu-buffers-below-host fires");
    let Finding::GpuBuffersBelowHost {
        registration,
        size_bytes,
        ..
    } = f
    else {
        unreachable!()
    };
    assert_eq!(*registration, GpuRegistration::DmaBuf);
    assert_eq!(*size_bytes, 65536);
    assert!(summary(f).contains("with GPU buffers (registered through DMA-BUF) 17.61 GB/s"));
    let e = explanation(f);
    assert!(e.contains("`ibv_reg_dmabuf_mr`"), "{e}");
    assert!(e.contains("not the cause"), "{e}");
    assert!(!e.contains("Check that a peer-memory module"), "{e}");
    // The same finding from a run of unstated registration keeps the
    // general advice, peer-memory module included.
    let mut other = f.clone();
    if let Finding::GpuBuffersBelowHost { registration, .. } = &mut other {
        *registration = GpuRegistration::NotStated;
    }
    assert!(explanation(&other).contains("lsmod | grep peermem"));
    assert!(!summary(&other).contains("registered through"));
}

#[test]
fn status_10_after_the_default_size_says_what_to_check() {
    let b = node(NODE);
    let errors: Vec<_> = b
        .problems
        .iter()
        .filter(|p| p.file.contains(HOST_FILE))
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let m = &errors[0].message;
    assert!(m.starts_with("perftest: Completion with error at client; Failed status 10: wr_id 0 syndrom 0x88; Failed to complete run_iter_bw function successfully; "), "{m}");
    assert!(m.contains("status 10 is a remote access error"), "{m}");
    assert!(
        m.contains(
            "with -a on the client only, the server's buffer is sized for the default message"
        ),
        "{m}"
    );
    assert_eq!(errors[0].kind, ProblemKind::ToolError);
}

#[test]
fn a_gpu_buffer_line_says_gpu_buffers_where_the_cuda_lines_were_cut() {
    // Synthetic: the rtx4080-gdr capture cut above its `allocated GPU
    // buffer` line (a paste that starts there): the buffer is GPU memory.
    let path =
        "captures/rtx4080-gdr/perftest-bw-012-ib-write-bw-use-cuda-mibsec-rtx4080-server.txt";
    let text = std::fs::read_to_string(path).unwrap();
    let cut = &text[text.find("allocated GPU buffer").unwrap()..];
    let r = wire_report::ingest::read_transcript("cut-synthetic.txt", cut.as_bytes());
    assert!(!r.measurements.is_empty());
    for m in &r.measurements {
        assert_eq!(registration(m), GpuRegistration::PeerMemory);
        assert_eq!(m.buffers, Buffers::Device, "{m:?}");
    }
}
