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

/// The class of the `<script>` element that carries a node's bundle in
/// the single file: `render` and `diff` read the file back through it.
pub const BUNDLE_SCRIPT: &str = "wire-report-bundle";

/// The node's bundle, embedded in its section as JSON a `<script>` cannot
/// end early (`</` is written `<\/`, which JSON reads as `</`), with a
/// button that saves it as `bundle.json`: a ticket's single file can be
/// re-rendered, diffed or checked.
fn embedded_bundle(b: &Bundle, slug: &str) -> String {
    let json = b.to_json().replace('<', "\\u003c");
    let id = format!("bundle-{slug}");
    format!(
        "<p class=\"download\"><button type=\"button\" onclick=\"var t=document.getElementById('{id}').textContent,a=document.createElement('a');a.href=URL.createObjectURL(new Blob([t],{{type:'application/json'}}));a.download='bundle.json';a.click()\">Save this node's bundle.json</button> <span class=\"muted\">(the evidence behind this section: <code>wire-report render</code>, <code>diff</code> and <code>check</code> read this file back too)</span></p>\n<script type=\"application/json\" class=\"{BUNDLE_SCRIPT}\" id=\"{id}\">{json}</script>\n"
    )
}

/// The bundles a single file carries, in its order.
pub fn embedded_bundles(html: &str) -> Vec<&str> {
    let open = format!("class=\"{BUNDLE_SCRIPT}\"");
    html.match_indices(&open)
        .filter_map(|(at, _)| {
            let start = at + html[at..].find('>')? + 1;
            let end = start + html[start..].find("</script>")?;
            Some(&html[start..end])
        })
        .collect()
}

/// Renders one node whose slug (its anchor) was decided beforehand.
pub fn node(b: &Bundle, node_slug: String, with_fleet: bool) -> anyhow::Result<SingleNode> {
    let slugs = NodeSlugs::of(node_slug, b);
    let n = Analysed::of(b);
    let v = view::node_view(&n, &slugs, Mode::SingleFile);
    let mut html = Section { node: &v }.render()?;
    html.push_str(&embedded_bundle(b, &v.slug));
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
