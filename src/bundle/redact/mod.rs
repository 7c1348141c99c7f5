//! `--redact`: every value that can name a machine or a person replaced
//! by a placeholder, in the bundle's typed fields, in every transcript's
//! text and file name, and in the raw transcripts saved beside a live
//! bundle, before anything is written.
//!
//! What counts as such a value is [`find`]'s business: host names (the
//! node's own, NCCL ranks', perftest peers, `mpirun -H` and Slurm node
//! lists, prompts), user names (prompts, `/home/<user>`), serial numbers,
//! IPv4 and IPv6 addresses, GIDs in every form (IPv4-mapped too), MACs,
//! GUIDs and other hardware byte strings, and UUIDs. Bus ids, device names
//! (`mlx5_0`), GPU models and every number a verdict rests on stay.
//!
//! Placeholders are numbered in the order values are met, one numbering per
//! run ([`Redactor`]): the same value always becomes the same placeholder
//! (two ports that share a GUID still do, the peer one node names is the
//! node another bundle is), and nothing of the value survives (a hash of
//! an IPv4 address or a serial is reversed by trying them all). Each
//! placeholder keeps its value's form, so a redacted bundle reads and
//! renders as the original did: `host-1`, `user-1`, `serial-1`,
//! documentation addresses (`192.0.2.1`, RFC 5737; `2001:db8::1`, RFC
//! 3849; a link-local `fe80::1`; an IPv4-mapped GID maps its IPv4's
//! placeholder), a locally administered MAC `02:00:00:00:00:01`, GUIDs
//! `0x0200000000000001`, UUIDs `00000000-0000-0000-0000-000000000001`.
//! A value that is already a placeholder is left alone, so redacting a
//! redacted bundle changes nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::Ipv4Addr;

use crate::bundle::Bundle;

mod find;
#[cfg(test)]
mod tests;

use find::Value;

/// What a secret is, which decides its placeholder's form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Host,
    User,
    Serial,
    Ipv4,
    Ipv6,
    Mac,
    Guid,
    Uuid,
    /// Other hardware byte strings (a 20-byte IPoIB address).
    Bytes,
}

/// One secret: its kind and its normalised value (the key its number is
/// kept under: `10.0.0.1` and `::ffff:a00:1` are one address).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Secret {
    kind: Kind,
    key: String,
}

/// The secrets of one bundle (and its raw transcripts), in the order met,
/// and the words to replace wherever they stand (names and serials,
/// which no pattern finds again).
#[derive(Debug, Default)]
pub struct Found {
    secrets: Vec<Secret>,
    words: Vec<(String, Secret)>,
}

impl Found {
    fn add(&mut self, s: Secret) {
        self.secrets.push(s);
    }

    fn word(&mut self, word: &str, s: Secret) {
        self.words.push((word.to_string(), s.clone()));
        self.secrets.push(s);
    }
}

/// One run's numbering: each secret's placeholder number. Nodes are
/// [`Redactor::learn`]ed in order (numbering is sequential, so the same
/// inputs give the same placeholders); [`Redactor::apply`] only reads it,
/// and may run on several nodes at once.
#[derive(Debug)]
pub struct Redactor {
    numbers: BTreeMap<Secret, u32>,
    last: BTreeMap<Kind, u32>,
    /// Every name and serial learnt this run and its placeholder, replaced
    /// in every node applied after (a node names its peers in words no
    /// pattern knows: `ping n2`). Only looked up, never walked.
    words: HashMap<String, String>,
    /// The longest word, in bytes, and the bytes words begin with.
    longest: usize,
    starts: Vec<bool>,
}

impl Default for Redactor {
    fn default() -> Redactor {
        Redactor::new()
    }
}

impl Redactor {
    pub fn new() -> Redactor {
        Redactor {
            numbers: BTreeMap::new(),
            last: BTreeMap::new(),
            words: HashMap::new(),
            longest: 0,
            starts: vec![false; 256],
        }
    }

    fn number(&mut self, s: &Secret) -> u32 {
        if let Some(n) = self.numbers.get(s) {
            return *n;
        }
        let n = self.last.entry(s.kind).or_insert(0);
        *n += 1;
        self.numbers.insert(s.clone(), *n);
        *n
    }

    /// The placeholder of node name `name`, numbered now (a streaming
    /// render names every node before it reads any; a live collection
    /// names its output folder before it collects).
    pub fn host(&mut self, name: &str) -> String {
        let Some(s) = find::host_secret(name) else {
            return name.to_string();
        };
        let mut found = Found::default();
        find::host_words(name, s.clone(), &mut found);
        self.learn(&found);
        format!("host-{}", self.number(&s))
    }

    /// Word `w` (a name or serial), replaced by the placeholder of `s`
    /// from now on: as written, and a host name in either case too (DNS
    /// ignores case; user names and serials do not).
    fn word(&mut self, w: &str, s: &Secret) {
        let (kind, cases) = match s.kind {
            Kind::Host => ("host", true),
            Kind::User => ("user", false),
            _ => ("serial", false),
        };
        let p = format!("{kind}-{}", self.number(s));
        let variants = match cases {
            true => vec![w.to_string(), w.to_lowercase(), w.to_uppercase()],
            false => vec![w.to_string()],
        };
        for v in variants {
            if let Some(b) = v.bytes().next() {
                self.starts[b as usize] = true;
                self.longest = self.longest.max(v.len());
                self.words.entry(v).or_insert_with(|| p.clone());
            }
        }
    }

    /// The secrets of `b` and of the raw transcripts beside it. Pure and
    /// `&self`-free: several nodes may be searched at once.
    pub fn find(b: &Bundle, raw: &[(String, Vec<u8>)]) -> anyhow::Result<Found> {
        let mut found = Found::default();
        // The node's own name first: it is host-1 of a one-node run.
        if let Some(s) = find::host_secret(&b.host.name) {
            find::host_words(&b.host.name, s, &mut found);
        }
        let tree = serde_json::to_value(b)?;
        let keep = format_words();
        find::typed(b, &mut found);
        each_string(&tree, keep, &mut |s| find::text(s, &mut found));
        for (name, bytes) in raw {
            find::text(name, &mut found);
            find::text(&String::from_utf8_lossy(bytes), &mut found);
        }
        Ok(found)
    }

    /// Numbers the secrets of `found` not numbered yet, in order.
    pub fn learn(&mut self, found: &Found) {
        for s in &found.secrets {
            self.number(s);
        }
        for (w, s) in &found.words {
            self.word(w, s);
        }
    }

    /// Replaces every secret learnt so far in `b` and `raw` (their names
    /// and bytes). Walks the bundle's values (strings only; keys, numbers
    /// and the format's own words stay), never its JSON text.
    pub fn apply(&self, b: &mut Bundle, raw: &mut [(String, Vec<u8>)]) -> anyhow::Result<()> {
        let mut tree = serde_json::to_value(&*b)?;
        redact_values(&mut tree, &|s| self.text(s), format_words());
        let mut out = bundle_from_value(tree)?;
        out.host.name = self.text(&b.host.name);
        for t in &mut out.transcripts {
            t.sha256 = crate::ingest::sha256_hex(t.text.as_bytes());
        }
        if let Some(s) = out.system.as_mut() {
            s.redacted = true;
        }
        for (name, bytes) in raw.iter_mut() {
            *name = self.text(name);
            *bytes = self.text(&String::from_utf8_lossy(bytes)).into_bytes();
        }
        *b = out;
        Ok(())
    }

    /// [`Redactor::find`], [`Redactor::learn`] and [`Redactor::apply`]
    /// for one node.
    pub fn redact(&mut self, b: &mut Bundle, raw: &mut [(String, Vec<u8>)]) -> anyhow::Result<()> {
        let found = Redactor::find(b, raw)?;
        self.learn(&found);
        self.apply(b, raw)
    }

    /// `text` with its words replaced, then every address, GUID, MAC and
    /// UUID in it.
    fn text(&self, text: &str) -> String {
        let text = self.replace_words(text);
        find::replace_values(&text, |v| self.placeholder(v))
    }

    /// The number of `s`; 0 for a value no [`Redactor::learn`] met (never
    /// the value itself).
    fn n(&self, s: &Secret) -> u32 {
        self.numbers.get(s).copied().unwrap_or(0)
    }

    /// What replaces value `v` found by a pattern, in its own form; `None`
    /// leaves it (not a secret: a loopback, a mask, a placeholder).
    fn placeholder(&self, v: &Value) -> Option<String> {
        let s = v.secret()?;
        let n = self.n(&s);
        Some(match v {
            Value::Ipv4(_) => ipv4_placeholder(n).to_string(),
            Value::Bytes(b, form) => {
                let last = b[b.len() - 1];
                // Locally administered, numbered, the last byte kept.
                let [w, x, y, z] = n.to_be_bytes();
                let mac = [0x02, 0x00, x, y, z, last];
                let guid = [0x02, 0x00, 0x00, w, x, y, z, last];
                let p: Vec<u8> = match (s.kind, b.len()) {
                    (Kind::Ipv4, _) => ipv4_placeholder(n).to_ipv6_mapped().octets().to_vec(),
                    (Kind::Ipv6, _) => (0x2001_0db8u128 << 96 | n as u128).to_be_bytes().to_vec(),
                    (Kind::Uuid, _) => (n as u128).to_be_bytes().to_vec(),
                    (Kind::Mac, 16) => link_local(&find::eui64(&mac)),
                    (Kind::Guid, 16) => link_local(&guid),
                    (Kind::Mac, _) => mac.to_vec(),
                    (Kind::Guid, _) => guid.to_vec(),
                    _ => {
                        let mut p = vec![0u8; b.len()];
                        let len = p.len();
                        p[len - 2..].copy_from_slice(&[y, z]);
                        p
                    }
                };
                form.show(&p)
            }
        })
    }
}

/// `fe80::` and interface identifier `iid`, as 16 bytes.
fn link_local(iid: &[u8; 8]) -> Vec<u8> {
    let mut p = vec![0xfe, 0x80, 0, 0, 0, 0, 0, 0];
    p.extend_from_slice(iid);
    p
}

/// Placeholder `n` among IPv4 documentation addresses (RFC 5737's three
/// networks, 762 addresses, then the reserved 240.0.0.0/4).
fn ipv4_placeholder(n: u32) -> Ipv4Addr {
    let (net, i) = (
        n.saturating_sub(1) / 254,
        (n.saturating_sub(1) % 254 + 1) as u8,
    );
    match (n, net) {
        (0, _) => Ipv4Addr::new(192, 0, 2, 0),
        (_, 0) => Ipv4Addr::new(192, 0, 2, i),
        (_, 1) => Ipv4Addr::new(198, 51, 100, i),
        (_, 2) => Ipv4Addr::new(203, 0, 113, i),
        _ => Ipv4Addr::from(0xf000_0000 | (n & 0x0fff_ffff)),
    }
}

impl Redactor {
    /// `text` with every word replaced where it stands as a whole word:
    /// between characters that are not letters or digits (`-`, `_` and
    /// `.` end a word, so `nccl-node7-x.txt` and `node7_ib0` lose `node7`;
    /// `node70` and `xnode7` keep it), the longest word first. One pass:
    /// a placeholder is never read again. Linear in the text (each place a
    /// word may start tries the ends up to the longest word), whatever the
    /// number of words.
    fn replace_words(&self, text: &str) -> String {
        if self.words.is_empty() {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        let (mut done, mut i) = (0, 0);
        let mut prev_word = false;
        while i < text.len() {
            if !prev_word
                && self.starts[text.as_bytes()[i] as usize]
                && let Some(j) = self.word_at(text, i)
            {
                out.push_str(&text[done..i]);
                out.push_str(&self.words[&text[i..j]]);
                (i, done, prev_word) = (j, j, true);
                continue;
            }
            let ch = text[i..].chars().next().unwrap_or(' ');
            prev_word = ch.is_alphanumeric();
            i += ch.len_utf8();
        }
        out.push_str(&text[done..]);
        out
    }

    /// The end of the longest word at `i` that no letter or digit follows.
    fn word_at(&self, text: &str, i: usize) -> Option<usize> {
        let limit = (i + self.longest).min(text.len());
        let mut best = None;
        for (k, c) in text[i..].char_indices().skip(1) {
            let j = i + k;
            if j > limit {
                return best;
            }
            if !c.is_alphanumeric() && self.words.contains_key(&text[i..j]) {
                best = Some(j);
            }
        }
        if limit == text.len() && self.words.contains_key(&text[i..]) {
            best = Some(text.len());
        }
        best
    }
}

/// Every string the bundle's schema fixes (enum variants, tags): these are
/// words of the format, never a user's secret, and are left as they are
/// (a host named `ok` must not turn a probe's status into garbage). Built
/// once per run.
fn format_words() -> &'static BTreeSet<String> {
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
    static WORDS: std::sync::OnceLock<BTreeSet<String>> = std::sync::OnceLock::new();
    WORDS.get_or_init(|| {
        let schema = serde_json::to_value(schemars::schema_for!(Bundle)).unwrap_or_default();
        let mut out = BTreeSet::new();
        walk(&schema, &mut out);
        out
    })
}

/// Every string value of the tree that is not a word of the format.
fn each_string(v: &serde_json::Value, keep: &BTreeSet<String>, f: &mut impl FnMut(&str)) {
    match v {
        serde_json::Value::String(s) if !keep.contains(s.as_str()) => f(s),
        serde_json::Value::Array(a) => a.iter().for_each(|x| each_string(x, keep, f)),
        serde_json::Value::Object(m) => m.values().for_each(|x| each_string(x, keep, f)),
        _ => {}
    }
}

/// Redacts every string value of the bundle's typed tree (never a key,
/// never a number, never a word of the format).
fn redact_values(
    v: &mut serde_json::Value,
    redact: &impl Fn(&str) -> String,
    keep: &BTreeSet<String>,
) {
    match v {
        serde_json::Value::String(s) if !keep.contains(s.as_str()) => *s = redact(s),
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| redact_values(x, redact, keep)),
        serde_json::Value::Object(m) => m.values_mut().for_each(|x| redact_values(x, redact, keep)),
        _ => {}
    }
}

/// Redacts one bundle on its own (a run of one node).
pub fn redact(b: &mut Bundle, raw: &mut [(String, Vec<u8>)]) -> anyhow::Result<()> {
    Redactor::new().redact(b, raw)
}

/// A bundle from its JSON value. The value's object sorts its keys, and
/// the bundle's reader wants `files` before any section that names a file
/// by its number (`counters` sorts before it): the head keys are written
/// first, then the rest.
fn bundle_from_value(tree: serde_json::Value) -> anyhow::Result<Bundle> {
    let serde_json::Value::Object(mut m) = tree else {
        anyhow::bail!("a bundle is a JSON object");
    };
    let mut text = String::from("{");
    let head = ["schema_version", "generator", "host", "files"];
    let head = head
        .iter()
        .filter_map(|k| m.remove(*k).map(|v| (k.to_string(), v)));
    let all: Vec<(String, serde_json::Value)> =
        head.collect::<Vec<_>>().into_iter().chain(m).collect();
    for (i, (k, v)) in all.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&serde_json::to_string(k)?);
        text.push(':');
        text.push_str(&serde_json::to_string(v)?);
    }
    text.push('}');
    Ok(serde_json::from_str(&text)?)
}
