//! GPU models that transcripts name in passing: the device lines of
//! nvbandwidth (`Device 0: NVIDIA A100-SXM4-80GB (...)`),
//! p2pBandwidthLatencyTest and rocm-bandwidth-test (`Device: 0, GeForce RTX
//! 3090, pciBusID: ...`), `nvidia-smi -L` (`GPU 0: ...`), nccl-tests rank
//! lines (`#  Rank  0 ... on host device  0 [0000:04:00] NVIDIA H100 ...`,
//! first host only), perftest with `--use_cuda` (`[pid = 38, dev = 0] device
//! name = [NVIDIA A40]`), `nvidia-smi -q` (`Product Name : ...`) and lspci
//! controller lines (`3D controller: NVIDIA Corporation TU104GL [Tesla
//! T4]`). Lines are found anywhere in a line, so a prompt, quote or rank
//! prefix does not hide them. A model must name a GPU maker or family; a
//! CPU line (`Device: 0, AMD EPYC ...`) is not a GPU.

use std::collections::BTreeMap;

use crate::bundle::Transcript;
use crate::evidence::Source;

/// A GPU a transcript names, with its model as printed.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedGpu {
    /// The device index the transcript gives (or its position).
    pub index: u32,
    pub model: String,
    pub source: Source,
}

/// Words that make a device name a GPU's.
const GPU_WORDS: [&str; 12] = [
    "NVIDIA", "GeForce", "Tesla", "Quadro", "RTX", "Instinct", "Radeon", "A100", "H100", "H200",
    "H800", "V100",
];

fn looks_like_gpu(model: &str) -> bool {
    GPU_WORDS.iter().any(|w| model.contains(w))
        && !["CPU", "EPYC", "Xeon", "Audio"]
            .iter()
            .any(|w| model.contains(w))
}

/// Digits at the start of `s`, and the rest.
fn index(s: &str) -> Option<(u32, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    Some((s[..end].parse().ok()?, &s[end..]))
}

/// `Device 0: MODEL (bus)` or `GPU 0: MODEL (UUID: ...)`.
fn colon_form(line: &str) -> Option<(u32, String)> {
    for key in ["Device ", "GPU "] {
        let Some(i) = line.find(key) else { continue };
        let Some((n, rest)) = index(&line[i + key.len()..]) else {
            continue;
        };
        let Some(rest) = rest.strip_prefix(": ") else {
            continue;
        };
        let model = rest.split(" (").next().unwrap_or(rest).trim();
        return Some((n, model.to_string()));
    }
    None
}

/// `Device: 0, MODEL, pciBusID: ...` (p2pBandwidthLatencyTest,
/// rocm-bandwidth-test).
fn comma_form(line: &str) -> Option<(u32, String)> {
    let i = line.find("Device: ")?;
    let (n, rest) = index(line[i + 8..].trim_start())?;
    let model = rest.strip_prefix(',')?.split(',').next()?.trim();
    Some((n, model.to_string()))
}

/// nccl-tests: `Rank  0 ... on HOST device  0 [bus] MODEL`, with the host.
fn nccl_rank(line: &str) -> Option<(String, u32, String)> {
    line.find("Rank ")?;
    let on = line.find(" on ")?;
    let rest = &line[on + 4..];
    let (host, rest) = rest.trim_start().split_once(' ')?;
    let rest = rest.trim_start().strip_prefix("device")?.trim_start();
    let (n, rest) = index(rest)?;
    let rest = rest.trim_start();
    let model = match rest.strip_prefix('[') {
        Some(r) => r.split_once(']')?.1.trim(),
        None => rest.trim(),
    };
    Some((host.to_string(), n, model.to_string()))
}

/// perftest: `dev = 0] device name = [MODEL]`.
fn perftest(line: &str) -> Option<(u32, String)> {
    let i = line.find("dev = ")?;
    let (n, _) = index(&line[i + 6..])?;
    let j = line.find("device name = [")?;
    let model = line[j + 15..].split(']').next()?.trim();
    Some((n, model.to_string()))
}

/// `Product Name : MODEL` (nvidia-smi -q) or an lspci display controller's
/// last bracketed name.
fn unnumbered(line: &str) -> Option<String> {
    if let Some(i) = line.find("Product Name") {
        let model = line[i..].split_once(':')?.1.trim();
        return Some(model.to_string());
    }
    let is_controller = [
        "VGA compatible controller:",
        "3D controller:",
        "Display controller:",
        "Processing accelerators:",
    ]
    .iter()
    .any(|k| line.contains(k));
    if !is_controller {
        return None;
    }
    // The last closed bracket that names a GPU: `AD102 [GeForce RTX 4090]
    // (rev a1) (prog-if 00 [VGA controller])`.
    line.split('[')
        .skip(1)
        .filter_map(|part| part.split_once(']').map(|(m, _)| m.trim()))
        .filter(|m| looks_like_gpu(m))
        .last()
        .map(str::to_string)
}

/// How many GPUs `nvidia-smi -q` says are attached (`Attached GPUs : 2`),
/// the largest such count: a capture of one GPU's section (`-i 0`, or a
/// paste cut after the first GPU) still says how many there are.
pub fn attached_gpus(transcripts: &[Transcript]) -> Option<usize> {
    transcripts
        .iter()
        .filter(|t| t.tool == crate::evidence::Tool::NvidiaSmiQ)
        .flat_map(|t| t.text.lines())
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let n: usize = v.trim().parse().ok()?;
            // Bounded by what a node can hold: the text sizes nothing.
            (k.trim().ends_with("Attached GPUs") && n <= 1024).then_some(n)
        })
        .max()
}

/// The GPUs the transcripts name, by index; the first transcript and line
/// to name an index wins.
pub fn named_gpus(transcripts: &[Transcript]) -> Vec<NamedGpu> {
    let mut out: BTreeMap<u32, NamedGpu> = BTreeMap::new();
    for t in transcripts {
        let mut first_host: Option<String> = None;
        let mut unnumbered_seen = 0u32;
        for (i, line) in t.text.lines().enumerate() {
            let found = if let Some((host, n, m)) = nccl_rank(line) {
                let first = first_host.get_or_insert_with(|| host.clone());
                (*first == host).then_some((n, m))
            } else if let Some(x) = perftest(line).or_else(|| comma_form(line)) {
                Some(x)
            } else if let Some(x) = colon_form(line) {
                Some(x)
            } else if let Some(m) = unnumbered(line) {
                let n = unnumbered_seen;
                unnumbered_seen += 1;
                Some((n, m))
            } else {
                None
            };
            let Some((n, model)) = found else { continue };
            if !looks_like_gpu(&model) || model.len() > 80 {
                continue;
            }
            out.entry(n).or_insert_with(|| NamedGpu {
                index: n,
                model,
                source: Source {
                    file: t.path.clone().into(),
                    line: i + 1,
                },
            });
        }
    }
    out.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn models(text: &str) -> Vec<(u32, String)> {
        let t = Transcript {
            path: "t.txt".into(),
            tool: crate::evidence::Tool::Nvbandwidth,
            sha256: String::new(),
            text: text.into(),
            notes: vec![],
            blocks: vec![],
            lines: Default::default(),
        };
        named_gpus(&[t])
            .into_iter()
            .map(|g| (g.index, g.model))
            .collect()
    }

    #[test]
    fn reads_device_lines_of_each_tool_and_skips_cpus() {
        assert_eq!(
            models(
                "Device 0: NVIDIA A100-SXM4-80GB (00000000:34:00)\nDevice 1: NVIDIA A100-SXM4-80GB (00000000:35:00)"
            ),
            [
                (0, "NVIDIA A100-SXM4-80GB".into()),
                (1, "NVIDIA A100-SXM4-80GB".into())
            ]
        );
        assert_eq!(
            models(
                "  Device: 0,  AMD EPYC 7763 64-Core Processor\n  Device: 2,  AMD Instinct MI100,  GPU-4a6f,  23:0.0"
            ),
            [(2, "AMD Instinct MI100".into())]
        );
        assert_eq!(
            models(
                "#  Rank  0 Group  0 Pid 1 on a device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n#  Rank  8 Group  0 Pid 1 on b device  0 [0000:04:00] NVIDIA H200"
            ),
            [(0, "NVIDIA H100 80GB HBM3".into())]
        );
        assert_eq!(
            models("[pid = 38, dev = 0] device name = [NVIDIA A40]"),
            [(0, "NVIDIA A40".into())]
        );
        assert_eq!(
            models(
                "af:00.0 3D controller: NVIDIA Corporation TU104GL [Tesla T4] (rev a1)\n01:00.0 VGA compatible controller: NVIDIA Corporation GA106M [GeForce RTX 3="
            ),
            [(0, "Tesla T4".into())]
        );
        assert_eq!(
            models(
                "01:00.0 VGA compatible controller: NVIDIA Corporation AD102 [GeForce RTX 4090] (rev a1) (prog-if 00 [VGA controller])"
            ),
            [(0, "GeForce RTX 4090".into())]
        );
    }
}
