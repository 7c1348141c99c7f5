//! Every chart of the site rendered from `captures/`: titled and
//! described for a screen reader, and the models' pictures (the injection
//! cliff, staged vs direct) on the pages of nodes with GPUs and adapters.

use std::collections::BTreeMap;
use std::path::PathBuf;

use wire_report::facts::NodeFacts;
use wire_report::render;

fn site() -> (Vec<wire_report::bundle::Bundle>, BTreeMap<String, Vec<u8>>) {
    let bundles = wire_report::inputs::load_nodes(&[PathBuf::from("captures")]).unwrap();
    let files = render::render_site(&bundles).unwrap().files;
    (bundles, files)
}

/// What a chart's `<title>` starts with, by kind.
const KINDS: [&str; 5] = [
    "injection cliff: ",
    "staged vs direct: ",
    "sweep: ",
    "ladder: ",
    "topology map: ",
];

#[test]
fn every_svg_opens_with_a_title_naming_the_chart_and_a_desc() {
    let (_, files) = site();
    let mut charts = 0;
    for (page, bytes) in files.iter().filter(|(k, _)| k.ends_with(".html")) {
        let html = std::str::from_utf8(bytes).unwrap();
        for (i, _) in html.match_indices("<svg") {
            let open = i + html[i..].find('>').unwrap() + 1;
            let rest = &html[open..];
            let title = rest.strip_prefix("<title>").unwrap_or_else(|| {
                panic!(
                    "{page}: an SVG without a title first: {}",
                    &rest[..80.min(rest.len())]
                )
            });
            let (name, after) = title.split_once("</title>").unwrap();
            assert!(
                KINDS.iter().any(|k| name.starts_with(k)),
                "{page}: title {name:?} names no kind of chart"
            );
            let desc = after
                .strip_prefix("<desc>")
                .unwrap_or_else(|| panic!("{page}: {name}: no desc"));
            assert!(
                desc.find("</desc>").unwrap() > 10,
                "{page}: {name}: an empty desc"
            );
            charts += 1;
        }
    }
    assert!(charts > 150, "{charts} charts");
}

#[test]
fn the_cliff_and_staged_vs_direct_are_on_nine_in_ten_pages_with_gpus_and_adapters() {
    let (bundles, files) = site();
    let mut with = 0;
    let mut drawn = 0;
    for b in &bundles {
        let f = NodeFacts::of(b);
        let adapters = !f.nics.is_empty() || !b.rdma.is_empty() || !f.measured_adapters.is_empty();
        if f.gpu_count() == 0 || !adapters {
            continue;
        }
        with += 1;
        let page = format!("nodes/{}/index.html", b.host.name);
        let html = std::str::from_utf8(&files[&page]).unwrap();
        if html.contains("<title>injection cliff: ")
            && html.contains("<title>staged vs direct: GPU to a GPU on another node")
        {
            drawn += 1;
        }
    }
    assert!(with >= 11, "{with} nodes with GPUs and adapters");
    assert!(drawn * 10 >= with * 9, "{drawn} of {with}");
}

#[test]
fn rates_the_bundle_lacks_are_named_as_product_table_on_the_chart_and_in_its_note() {
    let (_, files) = site();
    let page = std::str::from_utf8(&files["nodes/dgx1v-v100-8gpu-1nic/index.html"]).unwrap();
    let cliff = page
        .split("<div class=\"chartbox\">")
        .find(|s| s.contains("<title>injection cliff:"))
        .expect("the DGX-1 page has a cliff");
    // In the legend (the SVG) and in the note under it.
    let (svg, note) = cliff.split_once("</svg>").unwrap();
    assert!(svg.contains("(product table)"), "{svg}");
    assert!(
        note.contains("product table: ConnectX-4 EDR InfiniBand 100 Gb/s"),
        "{note}"
    );
    // A node whose ports state their rate says so instead.
    let azure = std::str::from_utf8(&files["nodes/rtx4080-gdr/index.html"]).unwrap();
    assert!(azure.contains("<title>injection cliff: "));
}
