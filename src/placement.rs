//! Placement checks: is a group of GPUs (a tensor-parallel group, a job's
//! devices) joined by links at least as good as a required class? This is
//! what a launcher calls to refuse a bad placement before a job starts.

use std::path::Path;

use serde::Serialize;

use crate::evidence::topology::{LinkClass, Topology, worst_class_in_group};

/// Loads a topology from a bundle or from a raw topology transcript.
pub fn load_topology(path: &Path) -> anyhow::Result<Topology> {
    let b = crate::inputs::load_source(path)?;
    if b.topology.is_empty() {
        anyhow::bail!(
            "`{}`:1: expected a wire-report bundle or a topology transcript (nvidia-smi topo -m, rocm-smi --showtopo, amd-smi topology); it holds no topology",
            path.display()
        );
    }
    Ok(b.topology)
}

/// GPU numbers `--gpus` accepts are below this: far above any node (the
/// largest have 8 to 16), and it bounds the list a range expands to
/// (`0-4294967295` would otherwise be four billion ids, checked one by one).
pub const MAX_GPU_ID: u32 = 4096;

/// Parses `0,1,2,3`, `0-3`, `GPU0,GPU2` or a mix into device ids.
pub fn parse_gpu_list(s: &str) -> anyhow::Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let p = part.strip_prefix("GPU").unwrap_or(part);
        let bad =
            || anyhow::anyhow!("`{part}` in --gpus is not a GPU number, range (0-3) or id (GPU0)");
        let (a, b) = match p.split_once('-') {
            Some((a, b)) => (
                a.parse::<u32>().map_err(|_| bad())?,
                b.parse::<u32>().map_err(|_| bad())?,
            ),
            None => {
                let v = p.parse::<u32>().map_err(|_| bad())?;
                (v, v)
            }
        };
        if b < a {
            return Err(bad());
        }
        if b >= MAX_GPU_ID {
            anyhow::bail!(
                "`{part}` in --gpus: no node has GPU{b}; GPU numbers go below {MAX_GPU_ID}"
            );
        }
        for i in a..=b {
            if seen.insert(i) {
                out.push(format!("GPU{i}"));
            }
        }
    }
    if out.len() < 2 {
        anyhow::bail!("--gpus needs at least two GPUs, got `{s}`");
    }
    Ok(out)
}

/// One pair of the group.
#[derive(Debug, Serialize)]
pub struct PairReport {
    pub a: String,
    pub b: String,
    pub class: LinkClass,
    pub code: Option<String>,
}

/// The verdict on a group.
#[derive(Debug, Serialize)]
pub struct Report {
    pub gpus: Vec<String>,
    pub worst_class: LinkClass,
    pub worst_pair: (String, String),
    pub worst_code: Option<String>,
    pub require: Option<LinkClass>,
    /// True when some pair is worse than `require` (false without `require`).
    pub violated: bool,
    pub pairs: Vec<PairReport>,
}

/// Checks `gpus` against `require`. Fails when a GPU is not in the topology.
pub fn check(
    topo: &Topology,
    gpus: &[String],
    require: Option<LinkClass>,
) -> anyhow::Result<Report> {
    let known: Vec<&str> = topo.gpus().map(|d| d.id.as_str()).collect();
    for g in gpus {
        if !known.contains(&g.as_str()) {
            anyhow::bail!(
                "{g} is not in the topology (it has {})",
                if known.is_empty() {
                    "no GPUs".to_string()
                } else {
                    known.join(", ")
                }
            );
        }
    }
    let (worst_class, a, b, link) = worst_class_in_group(topo, gpus)
        .ok_or_else(|| anyhow::anyhow!("--gpus needs at least two GPUs"))?;
    let mut pairs = Vec::new();
    for (i, x) in gpus.iter().enumerate() {
        for y in &gpus[i + 1..] {
            let l = topo.link(x, y);
            pairs.push(PairReport {
                a: x.clone(),
                b: y.clone(),
                class: l.map_or(LinkClass::Unknown, |l| l.class),
                code: l.and_then(|l| l.code.clone()),
            });
        }
    }
    Ok(Report {
        gpus: gpus.to_vec(),
        worst_class,
        worst_pair: (a, b),
        worst_code: link.and_then(|l| l.code.clone()),
        require,
        violated: require.is_some_and(|r| worst_class > r),
        pairs,
    })
}

impl Report {
    /// The human-readable verdict, one line first, then every pair.
    pub fn to_text(&self) -> String {
        let code = self
            .worst_code
            .as_deref()
            .map(|c| format!(", code {c}"))
            .unwrap_or_default();
        let mut s = format!(
            "worst class in {}: {} ({}-{}{code})\n",
            self.gpus.join(","),
            self.worst_class,
            self.worst_pair.0,
            self.worst_pair.1
        );
        match self.require {
            Some(r) if self.violated => s.push_str(&format!(
                "REFUSED: {}-{} is {}, worse than the required {r}\n",
                self.worst_pair.0, self.worst_pair.1, self.worst_class
            )),
            Some(r) => s.push_str(&format!("ok: every pair is {r} or better\n")),
            None => {}
        }
        for p in &self.pairs {
            s.push_str(&format!(
                "  {}-{}  {:<12}  {}\n",
                p.a,
                p.b,
                p.class.as_str(),
                p.code.as_deref().unwrap_or("-")
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_gpu_lists_ranges_and_ids() {
        assert_eq!(parse_gpu_list("0,1").unwrap(), ["GPU0", "GPU1"]);
        assert_eq!(
            parse_gpu_list("0-2,GPU5").unwrap(),
            ["GPU0", "GPU1", "GPU2", "GPU5"]
        );
        assert!(parse_gpu_list("3").is_err());
        assert!(parse_gpu_list("a,b").is_err());
        assert!(parse_gpu_list("3-1").is_err());
    }
}
