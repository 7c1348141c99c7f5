//! `dcgmi nvlink -s` (`--link-status`): DCGM's NVLink state per GPU, one
//! letter per link.
//!
//! ```text
//! +----------------------+
//! |  NvLink Link Status  |
//! +----------------------+
//! GPUs:
//!     gpuId 0:
//!         U U U U U U U U U U U U U U U U U U
//! NvSwitches:
//!     No NvSwitches found.
//!
//! Key: Up=U, Down=D, Disabled=X, Not Supported=_
//! ```
//!
//! dcgmi prints every link slot of a GPU in order (DCGM's
//! `DCGM_NVLINK_MAX_LINKS_PER_GPU` slots), so a letter's position is the
//! link number. `U` is an active link; `D` (down) and `X` (disabled) are
//! inactive; `_` (not supported) is a slot the GPU does not have and
//! yields no port. dcgmi prints no rate: a port's rate is not stated.
//! NvSwitch rows (`physicalId N:`) are noted, not read.

use super::{Device, DeviceKind, NvlinkPort, Topology};
use crate::evidence::SplitWords;
use crate::evidence::{ParseError, Parsed, Source, numbered_lines};

pub fn looks_like_dcgmi_nvlink(text: &str, lines: &[&str]) -> bool {
    has!(text, "|  NvLink Link Status  |")
        && lines.iter().any(|l| l.trim() == "|  NvLink Link Status  |")
}

/// `gpuId 3:` -> 3.
fn gpu_id(t: &str) -> Option<u32> {
    let n = t.strip_prefix("gpuId ")?.strip_suffix(':')?.trim();
    (!n.is_empty() && n.len() <= 4 && n.bytes().all(|b| b.is_ascii_digit()))
        .then(|| n.parse().ok())
        .flatten()
}

fn state(letter: &str) -> Option<(bool, &'static str)> {
    Some(match letter {
        "U" => (true, "U (up)"),
        "D" => (false, "D (down)"),
        "X" => (false, "X (disabled)"),
        _ => return None,
    })
}

pub fn parse_dcgmi_nvlink(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let mut topo = Topology::default();
    let mut gpu: Option<String> = None;
    let mut in_switches = false;
    for (n, l) in numbered_lines(text) {
        let t = l.trim();
        if t.is_empty()
            || t.starts_with("+-")
            || t == "|  NvLink Link Status  |"
            || t == "GPUs:"
            || t.starts_with("Key:")
        {
            continue;
        }
        if t == "NvSwitches:" {
            in_switches = true;
            gpu = None;
            continue;
        }
        if in_switches {
            out.note(n, format!("NvSwitch line, not read: {t}"));
            continue;
        }
        if let Some(id) = gpu_id(t) {
            let id = format!("GPU{id}");
            topo.devices
                .push(Device::new(&id, DeviceKind::Gpu, Source::line(n)));
            gpu = Some(id);
            continue;
        }
        let Some(g) = gpu.clone() else {
            out.bad_row(n, format!("a `gpuId <n>:` line before `{t}`"));
            continue;
        };
        let letters: Vec<&str> = t.words().collect();
        if letters.iter().any(|x| *x != "_" && state(x).is_none()) {
            out.bad_row(
                n,
                format!("link states `U`, `D`, `X` or `_` separated by spaces, found `{t}`"),
            );
            continue;
        }
        let unsupported = letters.iter().filter(|x| **x == "_").count();
        for (k, x) in letters.iter().enumerate() {
            let Some((active, printed)) = state(x) else {
                continue;
            };
            topo.nvlink.push(NvlinkPort {
                gpu: g.clone(),
                link: u32::try_from(k).ok(),
                active,
                rate_bytes_per_s: None,
                as_printed: printed.to_string(),
                source: Source::line(n),
            });
        }
        if unsupported > 0 {
            out.note(
                n,
                format!("{g}: {unsupported} link slot(s) `_` (not supported by this GPU)"),
            );
        }
    }
    if topo.devices.is_empty() {
        return Err(ParseError::new(
            1,
            "a `gpuId <n>:` line under `GPUs:` (dcgmi nvlink -s)",
        ));
    }
    out.topology = topo;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_letters_as_ports_by_position() {
        let p = parse_dcgmi_nvlink(
            "|  NvLink Link Status  |\nGPUs:\n    gpuId 1:\n        U D X _\nNvSwitches:\n    physicalId 8:\n        U U\n",
        )
        .unwrap();
        let got: Vec<(Option<u32>, bool)> = p
            .topology
            .nvlink
            .iter()
            .map(|x| (x.link, x.active))
            .collect();
        assert_eq!(
            got,
            vec![(Some(0), true), (Some(1), false), (Some(2), false)]
        );
        assert_eq!(p.topology.devices[0].id, "GPU1");
        assert_eq!(p.notes.len(), 3);
    }

    #[test]
    fn a_garbled_row_is_a_problem_and_the_rest_is_read() {
        let p = parse_dcgmi_nvlink(
            "|  NvLink Link Status  |\nGPUs:\n    gpuId 0:\n        U ? U\n    gpuId 1:\n        U U\n",
        )
        .unwrap();
        assert_eq!(p.topology.nvlink.len(), 2);
        assert_eq!(p.issues[0].line, 4);
    }
}
