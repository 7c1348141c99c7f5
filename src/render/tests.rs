use super::*;

/// One captured node twice, under the same name.
fn twins() -> Vec<Bundle> {
    let dir = std::path::PathBuf::from("captures/rtx2080ti-2gpu-autodl");
    let b = crate::inputs::load_nodes(&[dir]).unwrap().remove(0);
    vec![b.clone(), b]
}

/// The values of `name="..."` in a page.
fn attrs<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
    let pat = format!(" {name}=\"");
    html.match_indices(&pat)
        .filter_map(|(i, _)| {
            let rest = &html[i + pat.len()..];
            rest.find('"').map(|e| &rest[..e])
        })
        .collect()
}

#[test]
fn nodes_of_one_name_get_their_own_pages_linking_to_their_own_transcripts() {
    let bundles = twins();
    let slug = view::slug(&bundles[0].host.name);
    let site = render_site(&bundles).unwrap();
    for dir in [format!("nodes/{slug}"), format!("nodes/{slug}-2")] {
        let page = &site.files[&format!("{dir}/index.html")];
        let page = std::str::from_utf8(page).unwrap();
        let node = dir.trim_start_matches("nodes/");
        let into_transcripts: Vec<&str> = attrs(page, "href")
            .into_iter()
            .filter(|h| h.starts_with('t') && h.contains('#'))
            .collect();
        assert!(!into_transcripts.is_empty(), "{dir}: no evidence links");
        for h in into_transcripts {
            let (file, anchor) = h.split_once('#').unwrap();
            assert!(site.files.contains_key(&format!("{dir}/{file}")), "{h}");
            assert!(anchor.starts_with(&format!("{node}-t")), "{dir}: {h}");
        }
    }
}

#[test]
fn single_file_anchors_stay_unique_and_resolve_when_names_repeat() {
    let html = render_single_file(&twins()).unwrap();
    let ids = attrs(&html, "id");
    let unique: std::collections::BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "an id appears twice");
    for href in attrs(&html, "href") {
        let frag = href.strip_prefix('#').expect("a local link");
        assert!(frag.is_empty() || unique.contains(frag), "{href}");
    }
}
