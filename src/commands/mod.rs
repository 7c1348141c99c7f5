//! The stages behind each subcommand: they call the library and decide what
//! is printed and which exit code results. Errors returned here mean bad
//! input or usage (exit 2).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub mod model;

use crate::collect;
use crate::evidence::topology::LinkClass;
use crate::placement;

/// `collect --from`: ingest, warn, write atomically.
pub fn collect_from(from: &[PathBuf], out: &Path, quiet: bool) -> anyhow::Result<ExitCode> {
    let to_file = out.as_os_str() == "-" || out.extension().is_some_and(|e| e == "json");
    if !to_file {
        crate::fs::check_writable_dir(out)?;
    }
    let nodes = collect::ingest(from)?;
    if nodes.is_empty() {
        eprintln!("warning: no files found under {}", show_paths(from));
        return Ok(ExitCode::from(1));
    }
    if to_file && nodes.len() > 1 {
        anyhow::bail!(
            "the input holds transcripts of {} nodes (one per directory: {}); give --out a directory to write one bundle per node",
            nodes.len(),
            nodes
                .iter()
                .map(|n| n.bundle.host.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if !quiet {
        for n in &nodes {
            for p in &n.bundle.problems {
                eprintln!("warning: {}", p.one_line());
            }
        }
    }
    let single = nodes.len() == 1;
    for n in &nodes {
        let path = if to_file {
            out.to_path_buf()
        } else if single {
            out.join("bundle.json")
        } else {
            out.join(&n.bundle.host.name).join("bundle.json")
        };
        crate::fs::write_atomic(&path, n.bundle.to_json().as_bytes())?;
        if !quiet && path.as_os_str() != "-" {
            eprintln!(
                "wrote {} ({}: {} transcripts, {} devices, {} links, {} problems)",
                path.display(),
                n.bundle.host.name,
                n.parsed(),
                n.bundle.topology.devices.len(),
                n.bundle.topology.links.len(),
                n.bundle.problems.len()
            );
        }
    }
    let parsed: usize = nodes.iter().map(|n| n.parsed()).sum();
    Ok(if parsed > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn show_paths(p: &[PathBuf]) -> String {
    p.iter()
        .map(|p| format!("`{}`", p.display()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `placement`: exit 1 when the group is worse than required.
pub fn placement(
    source: &Path,
    gpus: &str,
    require: Option<LinkClass>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let gpus = placement::parse_gpu_list(gpus)?;
    let topo = placement::load_topology(source)?;
    let report = placement::check(&topo, &gpus, require)
        .map_err(|e| anyhow::anyhow!("`{}`: {e}", source.display()))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.to_text());
    }
    Ok(if report.violated {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `schema`: the bundle's JSON Schema on stdout.
pub fn schema() -> anyhow::Result<ExitCode> {
    crate::fs::write_atomic(Path::new("-"), crate::bundle::json_schema().as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// `render`: bundles or captures into a site, or one self-contained file.
pub fn render(
    inputs: &[PathBuf],
    out: &Path,
    single_file: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let inputs: Vec<PathBuf> = if inputs.is_empty() {
        vec![PathBuf::from("captures")]
    } else {
        inputs.to_vec()
    };
    if single_file.is_none() {
        crate::fs::check_writable_dir(out)?;
    }
    let bundles = collect::load_nodes(&inputs)?;
    if bundles.is_empty() {
        anyhow::bail!("no bundles or transcripts under {}", show_paths(&inputs));
    }
    if let Some(file) = single_file {
        let html = crate::render::render_single_file(&bundles)?;
        crate::fs::write_atomic(file, html.as_bytes())?;
        eprintln!(
            "wrote {} ({} nodes, {} bytes)",
            file.display(),
            bundles.len(),
            html.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let site = crate::render::render_site(&bundles)?;
    crate::fs::write_site(out, &site.files)?;
    let total: usize = site.files.values().map(Vec::len).sum();
    eprintln!(
        "wrote {} files ({total} bytes, {} nodes) under {}",
        site.files.len(),
        bundles.len(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}
