//! `--redact`: hostnames, serial numbers, GUIDs and GPU UUIDs replaced by
//! stable placeholders (the same value always becomes the same
//! placeholder, so a redacted report still shows which ports share a GUID
//! prefix or which nodes are the same), in the bundle and in every saved
//! transcript, before anything is written.

use std::collections::{BTreeMap, BTreeSet};

use crate::bundle::Bundle;

/// `host-1a2b3c4d`: the kind and the first 8 hex digits of SHA-256.
fn placeholder(kind: &str, normalized: &str) -> String {
    let h = crate::ingest::sha256_hex(normalized.as_bytes());
    format!("{kind}-{}", &h[..8])
}

/// The name a node gets when redacted (known before its bundle is read, so
/// a streaming render decides its slugs first).
pub fn host_name(name: &str) -> String {
    if name.len() >= 2 {
        placeholder("host", name)
    } else {
        name.to_string()
    }
}

/// The textual forms a 64-bit GUID takes in tools and sysfs.
fn guid_forms(raw: &str) -> Option<(String, Vec<String>)> {
    let hex: String = raw
        .trim()
        .trim_start_matches("0x")
        .chars()
        .filter(|c| *c != ':')
        .collect();
    if hex.len() != 16
        || !hex.chars().all(|c| c.is_ascii_hexdigit())
        || hex.chars().all(|c| c == '0')
    {
        return None;
    }
    let hex = hex.to_ascii_lowercase();
    let colon = format!(
        "{}:{}:{}:{}",
        &hex[0..4],
        &hex[4..8],
        &hex[8..12],
        &hex[12..16]
    );
    Some((hex.clone(), vec![format!("0x{hex}"), colon, hex]))
}

/// Every secret of the bundle and what replaces it, longest first.
fn secrets(b: &Bundle) -> Vec<(String, String)> {
    let mut map: BTreeMap<String, String> = BTreeMap::new();
    if b.host.name.len() >= 2 {
        map.insert(b.host.name.clone(), placeholder("host", &b.host.name));
    }
    let mut guid = |raw: &Option<String>| {
        if let Some((norm, forms)) = raw.as_deref().and_then(guid_forms) {
            let p = placeholder("guid", &norm);
            for f in forms {
                map.insert(f, p.clone());
            }
        }
    };
    for d in &b.rdma {
        guid(&d.node_guid);
        for p in &d.ports {
            guid(&p.port_guid);
        }
    }
    for d in &b.rdma {
        for p in &d.ports {
            for g in &p.gids {
                if g.gid.trim_matches(|c| c == '0' || c == ':').is_empty() {
                    continue;
                }
                map.insert(g.gid.clone(), placeholder("gid", &g.gid));
            }
        }
    }
    // The hosts an NCCL log names (every rank's, other nodes' too).
    let hosts = b.nccl.iter().flat_map(|n| {
        let devices = n.devices.iter().filter_map(|d| d.host.as_ref());
        let adapters = n.adapters.iter().filter_map(|a| a.host.as_ref());
        let paths = n.paths.iter().filter_map(|p| p.host.as_ref());
        devices.chain(adapters).chain(paths)
    });
    for h in hosts {
        if h.len() >= 2 {
            map.insert(h.clone(), placeholder("host", h));
        }
    }
    for d in &b.topology.devices {
        if let Some(u) = &d.uuid {
            map.insert(u.clone(), placeholder("uuid", u));
        }
    }
    // Serial numbers printed by nvidia-smi -q and GPU UUIDs anywhere.
    for t in &b.transcripts {
        for l in t.text.lines() {
            if let Some((k, v)) = l.split_once(':') {
                let v = v.trim();
                if k.trim() == "Serial Number" && v != "N/A" && !v.is_empty() {
                    map.insert(v.to_string(), placeholder("serial", v));
                }
            }
            for w in l.split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',') {
                if w.starts_with("GPU-") && w.len() > 20 {
                    map.insert(w.to_string(), placeholder("uuid", w));
                }
            }
        }
    }
    let mut v: Vec<(String, String)> = map.into_iter().collect();
    v.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
    v
}

/// `text` with every secret replaced where it stands as a whole token: not
/// inside a longer name (`node` in `gpu-node-17` or `node0` stays; `node`
/// in `node.cluster` or `ssh node` goes).
fn apply(text: &str, secrets: &[(String, String)]) -> String {
    let mut s = text.to_string();
    for (from, to) in secrets {
        if s.contains(from.as_str()) {
            s = replace_tokens(&s, from, to);
        }
    }
    s
}

fn replace_tokens(text: &str, from: &str, to: &str) -> String {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_');
    let mut out = String::with_capacity(text.len());
    let mut rest = 0;
    for (i, _) in text.match_indices(from) {
        if i < rest {
            continue;
        }
        let before = text[..i].chars().next_back();
        let after = text[i + from.len()..].chars().next();
        if !word(before) && !word(after) {
            out.push_str(&text[rest..i]);
            out.push_str(to);
            rest = i + from.len();
        }
    }
    out.push_str(&text[rest..]);
    out
}

/// Every string the bundle's schema fixes (enum variants, tags): these are
/// words of the format, never a user's secret, and are left as they are
/// (a host named `ok` must not turn a probe's status into garbage).
fn format_words() -> BTreeSet<String> {
    fn walk(v: &serde_json::Value, out: &mut BTreeSet<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    match (k.as_str(), x) {
                        ("enum", serde_json::Value::Array(a)) => {
                            out.extend(a.iter().filter_map(|t| t.as_str()).map(str::to_string))
                        }
                        ("const", serde_json::Value::String(t)) => {
                            out.insert(t.clone());
                        }
                        _ => walk(x, out),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let schema = serde_json::to_value(schemars::schema_for!(Bundle)).unwrap_or_default();
    let mut out = BTreeSet::new();
    walk(&schema, &mut out);
    out
}

/// Redacts every string value of the bundle's typed tree (never a key,
/// never a number, never a word of the format).
fn redact_values(v: &mut serde_json::Value, secrets: &[(String, String)], keep: &BTreeSet<String>) {
    match v {
        serde_json::Value::String(s) if !keep.contains(s.as_str()) => *s = apply(s, secrets),
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| redact_values(x, secrets, keep)),
        serde_json::Value::Object(m) => {
            m.values_mut().for_each(|x| redact_values(x, secrets, keep))
        }
        _ => {}
    }
}

/// Redacts `b` and the raw transcripts to be saved beside it. Walks the
/// bundle's values (strings only; keys, numbers and the format's own words
/// stay), never its JSON text.
pub fn redact(b: &mut Bundle, raw: &mut [(String, Vec<u8>)]) -> anyhow::Result<()> {
    let secrets = secrets(b);
    let mut tree = serde_json::to_value(&*b)?;
    // The format's words come from its schema: built once per run.
    static WORDS: std::sync::OnceLock<BTreeSet<String>> = std::sync::OnceLock::new();
    redact_values(&mut tree, &secrets, WORDS.get_or_init(format_words));
    let mut out: Bundle = serde_json::from_value(tree)?;
    out.host.name = host_name(&b.host.name);
    for t in &mut out.transcripts {
        t.sha256 = crate::ingest::sha256_hex(t.text.as_bytes());
    }
    if let Some(s) = out.system.as_mut() {
        s.redacted = true;
    }
    for (_, bytes) in raw.iter_mut() {
        *bytes = apply(&String::from_utf8_lossy(bytes), &secrets).into_bytes();
    }
    *b = out;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Host, Origin};

    #[test]
    fn guids_in_every_form_become_one_placeholder() {
        let (norm, forms) = guid_forms("0x58A2E10300A7820E").unwrap();
        assert_eq!(norm, "58a2e10300a7820e");
        assert!(forms.contains(&"58a2:e103:00a7:820e".to_string()));
        assert!(guid_forms("0x0000000000000000").is_none());
    }

    #[test]
    fn hostnames_and_uuids_leave_bundle_and_transcripts() {
        let mut b = Bundle::new(Host {
            name: "gpu-node-17".into(),
            origin: Origin::Live,
        });
        let text = b"GPU 0: NVIDIA A100 (UUID: GPU-3fb142e7-7102-c7ac-bd5a-fc829e11ed84)\nNVML: Unable to retrieve NVLink information as all links are inActive\n";
        b.absorb(crate::ingest::read_transcript("nvlink.txt", text));
        let mut raw = vec![(
            "nvlink.txt".to_string(),
            format!("gpu-node-17 {}", String::from_utf8_lossy(text)).into_bytes(),
        )];
        redact(&mut b, &mut raw).unwrap();
        let json = serde_json::to_string(&b).unwrap();
        assert!(
            !json.contains("gpu-node-17") && !json.contains("3fb142e7"),
            "{json}"
        );
        assert!(b.host.name.starts_with("host-"));
        let saved = String::from_utf8(raw[0].1.clone()).unwrap();
        assert!(!saved.contains("gpu-node-17") && saved.contains("uuid-"));
        // Stable: the same value gives the same placeholder.
        assert_eq!(placeholder("host", "gpu-node-17"), b.host.name);
    }

    #[test]
    fn hosts_named_by_an_nccl_log_are_redacted() {
        let mut b = Bundle::new(Host {
            name: "login".into(),
            origin: Origin::Ingested,
        });
        let text = b"gpu-a7:12:34 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n";
        b.absorb(crate::ingest::read_transcript("nccl.txt", text));
        assert_eq!(b.nccl[0].paths[0].host.as_deref(), Some("gpu-a7"));
        redact(&mut b, &mut []).unwrap();
        let json = serde_json::to_string(&b).unwrap();
        assert!(!json.contains("gpu-a7"), "{json}");
        assert!(
            b.nccl[0].paths[0]
                .host
                .as_deref()
                .unwrap()
                .starts_with("host-")
        );
    }

    #[test]
    fn secrets_are_replaced_as_whole_tokens_only() {
        let s = vec![("node".to_string(), "host-1".to_string())];
        assert_eq!(
            apply("ssh node; node.cluster gpu-node-17 node0 numa_node", &s),
            "ssh host-1; host-1.cluster gpu-node-17 node0 numa_node"
        );
    }
}
