//! The self-contained HTML file (`render --single-file`) in pieces, so that
//! it can be written one node at a time: each node's section is rendered
//! from its bundle alone ([`node`]), keeping only its index row and what the
//! fleet needs; the head (the page's top and the index, which lists every
//! node) comes once every node is known ([`head`]), then the sections in
//! order, then the foot ([`foot`]).

use askama::Template;

use super::view::{self, Mode, NodeView};
use super::{Analysed, CSS, NodeSummary, Triage, VERSION, fleet, fleet_view, summary, triage};
use crate::bundle::Bundle;
use crate::render::FleetView;
use crate::render::view::NodeSlugs;

#[derive(Template)]
#[template(path = "report_head.html")]
struct Head<'a> {
    title: String,
    inline_css: &'a str,
    nodes: &'a Triage,
    fleet: Option<FleetView>,
}

#[derive(Template)]
#[template(path = "report_node.html")]
struct Section<'a> {
    node: &'a NodeView,
}

#[derive(Template)]
#[template(path = "report_foot.html")]
struct Foot<'a> {
    version: &'a str,
}

/// One node of the single file: its section, its index row, and what the
/// fleet needs of it (absent when `with_fleet` is false).
pub struct SingleNode {
    pub html: String,
    pub summary: NodeSummary,
    pub fleet: Option<fleet::FleetNode>,
}

/// Renders one node whose slug (its anchor) was decided beforehand.
pub fn node(b: &Bundle, node_slug: String, with_fleet: bool) -> anyhow::Result<SingleNode> {
    let slugs = NodeSlugs::of(node_slug, b);
    let n = Analysed::of(b);
    let v = view::node_view(&n, &slugs, Mode::SingleFile);
    let html = Section { node: &v }.render()?;
    Ok(SingleNode {
        html,
        summary: summary(&v, format!("#{}", v.slug)),
        fleet: with_fleet.then(|| fleet::FleetNode::of(b, &n.facts)),
    })
}

/// The page's title: the node's name for one node.
pub fn title(summaries: &[NodeSummary]) -> String {
    match summaries {
        [one] => format!("{}: wire-report", one.name),
        _ => "wire-report".into(),
    }
}

/// The top of the page and the index (`fleet` and `slugs` in the order of
/// `summaries`).
pub fn head(
    title: String,
    summaries: Vec<NodeSummary>,
    fleet: Vec<fleet::FleetNode>,
    slugs: &[String],
) -> anyhow::Result<String> {
    let nodes = triage(summaries);
    Ok(Head {
        title,
        inline_css: CSS,
        nodes: &nodes,
        fleet: fleet_view(fleet, slugs, &|slug| format!("#{slug}")),
    }
    .render()?)
}

/// The end of the page.
pub fn foot() -> anyhow::Result<String> {
    Ok(Foot { version: VERSION }.render()?)
}
