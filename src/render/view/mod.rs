//! Bundle -> display-ready view of one node. Every string here is what a
//! page shows; templates only lay them out. Text from transcripts stays
//! plain text here and is escaped by the templates; the only markup is our
//! own (SVG from plotters, markdown from `templates/explain/`).
//!
//! One module per section of a node's page, in page order: `findings`
//! (diagnosis), `evidence`, `topology`, `figures` (matrices, sweeps,
//! ladder), `models`, `interpretation`, `transcripts`. `links` owns the
//! slugs, decided for every node and transcript before any view is built
//! ([`Slugs::decide`]), and the links to transcript lines; no section
//! makes a slug. `node_view` only assembles the sections.

mod checks;
mod evidence;
mod figures;
mod findings;
pub mod holdings;
pub mod index;
mod interpretation;
mod links;
mod model_figures;
mod models;
mod topology;
pub mod topomap;
mod transcripts;

use crate::diagnosis::Severity;
use crate::render::Analysed;
use links::Linker;

pub use checks::{CheckView, coverage, detail, next};
pub use evidence::missing_kinds;
pub use figures::ValueMatrix;
pub use findings::{FindingView, markdown};
pub use interpretation::SeriesView;
pub use links::{NodeSlugs, Slugs, node_slugs, slug};
pub use models::ModelView;
pub use topology::{Cell, MatrixView};
pub use transcripts::{TranscriptLink, TranscriptView};

/// Where links point: separate pages, or anchors in one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Site,
    SingleFile,
}

pub struct Link {
    pub label: String,
    pub href: String,
}

pub struct ChartView {
    pub title: String,
    pub svg: String,
    pub note: String,
    pub source: Option<Link>,
}

pub struct NodeView {
    pub name: String,
    pub slug: String,
    pub origin: &'static str,
    pub gpus: usize,
    pub nics: usize,
    pub missing_short: String,
    /// For the index: the GPUs and adapters in words, from any transcript
    /// that names them ([`index`]).
    pub gpus_named: String,
    pub nics_named: String,
    /// One of [`index::VERDICTS`]: the diagnosis's verdict.
    pub verdict: &'static str,
    /// Each check of the diagnosis flow, how many of those that apply
    /// ran, and what to run next.
    pub checks: Vec<CheckView>,
    pub coverage: String,
    pub next: Option<String>,
    /// The most severe finding: its summary and its first evidence line.
    pub top_finding: Option<(String, Option<Link>)>,
    pub shape: String,
    pub findings: Vec<FindingView>,
    pub critical: usize,
    pub warning: usize,
    pub info: usize,
    pub collected: Vec<String>,
    pub missing: Vec<String>,
    pub problems: Vec<Link>,
    /// Live probes: `name: status (message)`.
    pub probes: Vec<String>,
    /// The two-node check this node took part in, in words.
    pub pair: Option<String>,
    pub matrix: Option<MatrixView>,
    /// The topology map's panels ([`topomap`]) and what its evidence
    /// does not say.
    pub map: topomap::Panels,
    pub map_notes: Vec<String>,
    /// What else the bundle holds, as tables ([`holdings`]).
    pub tables: Vec<holdings::TableView>,
    pub value_matrices: Vec<ValueMatrix>,
    pub sweep_charts: Vec<ChartView>,
    /// Empty when no figure can be placed on it.
    pub ladder_svg: String,
    /// The latency ladder beside it; empty when no latency is measured.
    pub latency_ladder_svg: String,
    /// Views not drawn, each with what it needs: said once, under Evidence.
    pub not_shown: Vec<String>,
    pub cliff: Option<ChartView>,
    /// Staged vs direct: GPU to GPU, and GPU to another node.
    pub staged: Vec<ChartView>,
    pub models: Vec<ModelView>,
    pub interpretation: Vec<SeriesView>,
    /// What the trust grades A, B and C mean, in one line.
    pub trust_legend: &'static str,
    pub transcripts: Vec<TranscriptLink>,
    pub transcript_views: Vec<TranscriptView>,
    pub bundle_href: String,
}

/// The view of one analysed node; its slugs were decided with every other
/// node's ([`Slugs::decide`]).
pub fn node_view(node: &Analysed<'_>, slugs: &NodeSlugs, mode: Mode) -> NodeView {
    let (b, facts, diagnosed) = (node.bundle, &node.facts, &node.findings);
    let linker = Linker::new(mode, slugs);
    let (gpus, nics) = (facts.gpus.len(), facts.nics.len());
    let missing = evidence::missing_kinds(b);
    NodeView {
        name: b.host.name.clone(),
        origin: evidence::origin(b),
        gpus,
        nics,
        missing_short: evidence::missing_short(&missing),
        gpus_named: index::gpus(b, facts),
        nics_named: index::nics(b, facts),
        verdict: node.verdict.as_str(),
        checks: checks::views(&node.checks),
        coverage: checks::coverage(&node.checks),
        next: checks::next(&node.checks),
        top_finding: index::top(diagnosed).map(|d| {
            let link = d
                .evidence
                .first()
                .map(|s| linker.link(s))
                .filter(|l| !l.href.is_empty());
            (crate::render::explain::summary(&d.finding), link)
        }),
        shape: topology::shape(b, facts),
        critical: findings::count(diagnosed, Severity::Critical),
        warning: findings::count(diagnosed, Severity::Warning),
        info: findings::count(diagnosed, Severity::Info),
        findings: findings::finding_views(diagnosed, &linker),
        collected: evidence::collected(b),
        missing: evidence::missing(&missing),
        problems: evidence::problems(b, &linker),
        pair: b.peer.as_ref().map(evidence::pair_text),
        probes: evidence::probes(b),
        matrix: topology::class_matrix(b, facts, &linker),
        map: topomap::svgs(&topomap::map(b, facts), &|s| linker.href(s)),
        map_notes: topomap::map(b, facts).notes,
        tables: holdings::tables(b, &linker),
        value_matrices: figures::value_matrices(b, &linker),
        sweep_charts: figures::sweep_charts(b, facts, &linker),
        ladder_svg: figures::ladder(b, facts),
        latency_ladder_svg: figures::latency_ladder(b, facts),
        cliff: model_figures::cliff(b, facts),
        staged: model_figures::staged(b, facts),
        models: models::models(b, facts).0,
        not_shown: {
            let mut n = models::models(b, facts).1;
            if !figures::has_ladder(b, facts) {
                n.push(
                    "the ladder needs a bandwidth figure (a copy, RDMA or collective test)".into(),
                );
            }
            n
        },
        interpretation: interpretation::interpretation(b, facts, &linker),
        trust_legend: crate::render::trust::LEGEND,
        transcripts: transcripts::links(b, &linker),
        transcript_views: transcripts::views(b, slugs, mode),
        bundle_href: linker.bundle_href(),
        slug: slugs.node.clone(),
    }
}
