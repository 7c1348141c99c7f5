//! What in a string names a machine or a person: the patterns of
//! [`super`]. Two sorts. Values with a shape of their own (addresses,
//! GIDs, MACs, GUIDs, UUIDs) are found by [`scan`] wherever they stand and
//! replaced where found. Names (hosts, users, serials) have no shape: they
//! are learnt where a tool or a prompt says what they are (`user@host`, an
//! NCCL log line's prefix, `mpirun -H`, a Slurm node list, a perftest
//! client's last argument, `Serial Number:`, `/home/<user>`), then
//! replaced wherever they stand as a word.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::{Found, Kind, Secret};
use crate::bundle::Bundle;

/// A value with a shape of its own, as found.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    Ipv4(Ipv4Addr),
    /// An IPv6 address or GID (16 bytes), MAC (6), GUID (8), UUID (16,
    /// in [`Form::Uuid`]) or another hardware byte string.
    Bytes(Vec<u8>, Form),
}

/// How a byte value was written, so its placeholder is written alike.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Form {
    /// `0x0c42a10300deadbe`.
    Hex0x { upper: bool },
    /// `0c42a10300deadbe` (at least one letter; never a plain number).
    Hex { upper: bool },
    /// Groups of two bytes: `0c42:a103:00de:adbe`, a full IPv6 address.
    Groups { upper: bool },
    /// IPv6 as `Ipv6Addr` prints it: `fd00:abcd::55`, `::ffff:192.0.2.1`.
    Ipv6,
    /// One byte at a time: `0c:42:a1:de:ad:01`, `0c-42-…`, or in decimal
    /// as perftest prints a GID (`254:128:00:…`).
    Run {
        sep: char,
        decimal: bool,
        upper: bool,
    },
    /// `8f3e2a1b-1234-5678-9abc-def012345678`.
    Uuid { upper: bool },
}

impl Form {
    /// `bytes` written in this form.
    pub(super) fn show(self, bytes: &[u8]) -> String {
        let hex = |upper: bool, b: &[u8]| -> String {
            b.iter()
                .map(|x| match upper {
                    true => format!("{x:02X}"),
                    false => format!("{x:02x}"),
                })
                .collect()
        };
        match self {
            Form::Hex0x { upper } => format!("0x{}", hex(upper, bytes)),
            Form::Hex { upper } => hex(upper, bytes),
            Form::Groups { upper } => bytes
                .chunks(2)
                .map(|c| hex(upper, c))
                .collect::<Vec<_>>()
                .join(":"),
            Form::Ipv6 => match <[u8; 16]>::try_from(bytes) {
                Ok(a) => Ipv6Addr::from(a).to_string(),
                Err(_) => hex(false, bytes),
            },
            Form::Run {
                sep,
                decimal,
                upper,
            } => bytes
                .iter()
                .map(|x| match decimal {
                    true => format!("{x:02}"),
                    false => hex(upper, &[*x]),
                })
                .collect::<Vec<_>>()
                .join(&sep.to_string()),
            Form::Uuid { upper } => {
                let h = hex(upper, bytes);
                match h.len() {
                    32 => format!(
                        "{}-{}-{}-{}-{}",
                        &h[..8],
                        &h[8..12],
                        &h[12..16],
                        &h[16..20],
                        &h[20..]
                    ),
                    _ => h,
                }
            }
        }
    }
}

impl Value {
    /// The secret this value is; `None` for what names nothing (loopback,
    /// unspecified, multicast, masks, all zeros or ones) and for
    /// placeholders (documentation addresses, `02:00:00:00:…`).
    pub(super) fn secret(&self) -> Option<Secret> {
        let secret = |kind, key: String| Some(Secret { kind, key });
        match self {
            Value::Ipv4(a) => ipv4_secret(*a),
            Value::Bytes(b, Form::Uuid { .. }) => match u128::from_be_bytes(b[..].try_into().ok()?)
            {
                x if x >> 48 == 0 => None,
                _ => secret(Kind::Uuid, hex(b)),
            },
            Value::Bytes(b, _) if b.len() == 16 => {
                let a = Ipv6Addr::from(<[u8; 16]>::try_from(&b[..]).ok()?);
                if let Some(v4) = a.to_ipv4_mapped() {
                    return ipv4_secret(v4);
                }
                let x = u128::from(a);
                let low = x & u128::from(u64::MAX);
                if x >> 96 == 0x2001_0db8 || x <= 1 || b[0] == 0xff || low == 0 {
                    return None;
                }
                // A link-local GID carries a MAC (RoCE) or a port GUID (IB):
                // numbered as that MAC or GUID, one placeholder for both.
                if x >> 64 == 0xfe80 << 48 {
                    return match eui64_mac(&b[8..]) {
                        Some(mac) => mac_secret(&mac),
                        None => guid_secret(&b[8..]),
                    };
                }
                secret(Kind::Ipv6, hex(b))
            }
            Value::Bytes(b, _) if b.len() == 6 => mac_secret(b),
            Value::Bytes(b, _) if b.len() == 8 => guid_secret(b),
            Value::Bytes(b, _) => {
                let len = b.len();
                let ours = b[..len - 2].iter().all(|x| *x == 0);
                match ours || b.iter().all(|x| *x == 0xff) {
                    true => None,
                    false => secret(Kind::Bytes, hex(b)),
                }
            }
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The MAC a modified EUI-64 interface identifier is made from (`ff:fe`
/// in its middle, the universal/local bit flipped; RFC 4291 appendix A).
pub(super) fn eui64_mac(iid: &[u8]) -> Option<[u8; 6]> {
    match iid {
        [a, b, c, 0xff, 0xfe, d, e, f] => Some([a ^ 0x02, *b, *c, *d, *e, *f]),
        _ => None,
    }
}

/// The modified EUI-64 interface identifier made from `mac`.
pub(super) fn eui64(mac: &[u8; 6]) -> [u8; 8] {
    [
        mac[0] ^ 0x02,
        mac[1],
        mac[2],
        0xff,
        0xfe,
        mac[3],
        mac[4],
        mac[5],
    ]
}

/// A MAC's secret: numbered by all but its last byte, which its
/// placeholder keeps, so the ports of one card stay consecutive
/// ([`crate::evidence::rdma::one_adapter_by_mac`]). Placeholders begin
/// `02:00` (locally administered).
fn mac_secret(m: &[u8]) -> Option<Secret> {
    let nothing = m.iter().all(|x| *x == 0) || m.iter().all(|x| *x == 0xff);
    match nothing || (m[0] == 0x02 && m[1] == 0) {
        true => None,
        false => Some(Secret {
            kind: Kind::Mac,
            key: hex(&m[..m.len() - 1]),
        }),
    }
}

/// A GUID's secret, as a MAC's: numbered by all but its last byte (the
/// node and port GUIDs of one card stay one apart). Placeholders begin
/// `0x020000`.
fn guid_secret(g: &[u8]) -> Option<Secret> {
    let nothing = g.iter().all(|x| *x == 0) || g.iter().all(|x| *x == 0xff);
    let small = g[..g.len() - 2].iter().all(|x| *x == 0);
    match nothing || small || (g[0] == 0x02 && g[1] == 0 && g[2] == 0) {
        true => None,
        false => Some(Secret {
            kind: Kind::Guid,
            key: hex(&g[..g.len() - 1]),
        }),
    }
}

fn ipv4_secret(a: Ipv4Addr) -> Option<Secret> {
    let [o1, o2, o3, _] = a.octets();
    let ours = matches!((o1, o2, o3), (192, 0, 2) | (198, 51, 100) | (203, 0, 113));
    match ours || o1 == 0 || o1 == 127 || o1 >= 224 {
        true => None,
        false => Some(Secret {
            kind: Kind::Ipv4,
            key: a.to_string(),
        }),
    }
}

static VALUES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?x)
        (?P<run>(?:[0-9A-Fa-f]{2,3}[:-]){5,19}[0-9A-Fa-f]{2,3})
        |(?P<uuid>[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})
        |(?P<hex0x>0[xX][0-9A-Fa-f]{16})
        |(?P<ip6>(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9A-Fa-f]{0,4}))
        |(?P<ip4>[0-9]{1,3}(?:\.[0-9]{1,3}){3})
        |(?P<hex>[0-9A-Fa-f]{16})",
    )
    .expect("a valid pattern")
});

/// Every value of `text` with a shape of its own, standing apart (no
/// letter or digit glued to either side), with where it stands.
pub(super) fn scan(text: &str, mut f: impl FnMut(Range<usize>, Value)) {
    for c in VALUES.captures_iter(text) {
        let m = c.get(0).expect("the whole match");
        let (before, after) = (&text[..m.start()], &text[m.end()..]);
        let glued = before
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric)
            || after.chars().next().is_some_and(char::is_alphanumeric);
        if glued {
            continue;
        }
        let s = m.as_str();
        let upper = s.bytes().any(|b| b.is_ascii_uppercase());
        let value = if c.name("run").is_some() {
            run(s, upper)
        } else if c.name("uuid").is_some() {
            hex_bytes(&s.replace('-', "")).map(|b| Value::Bytes(b, Form::Uuid { upper }))
        } else if c.name("hex0x").is_some() {
            hex_bytes(&s[2..]).map(|b| Value::Bytes(b, Form::Hex0x { upper }))
        } else if c.name("ip6").is_some() {
            ip6(s, upper)
        } else if c.name("ip4").is_some() {
            // Not a part of a longer dotted number (a version `1.2.3.4.5`).
            let dotted_after = after
                .strip_prefix('.')
                .is_some_and(|t| t.starts_with(|c: char| c.is_ascii_digit()));
            let dotted_before = before
                .strip_suffix('.')
                .is_some_and(|t| t.ends_with(|c: char| c.is_ascii_digit()));
            match dotted_after || dotted_before {
                true => None,
                false => s.parse().ok().map(Value::Ipv4),
            }
        } else if s.bytes().any(|b| b.is_ascii_alphabetic()) {
            hex_bytes(s).map(|b| Value::Bytes(b, Form::Hex { upper }))
        } else {
            None
        };
        if let Some(v) = value {
            f(m.range(), v);
        }
    }
}

/// A run of bytes: 6 (a MAC), 8 (a GUID, an lspci serial number), 16 (a
/// GID, in hex or, when any byte has three digits, decimal as perftest
/// prints it), 20 (an IPoIB address); other lengths are bytes too.
fn run(s: &str, upper: bool) -> Option<Value> {
    let sep = if s.contains(':') { ':' } else { '-' };
    let groups: Vec<&str> = s.split([':', '-']).collect();
    let decimal = groups.iter().any(|g| g.len() == 3)
        || (groups.len() == 16 && groups.iter().all(|g| g.bytes().all(|b| b.is_ascii_digit())));
    if !decimal && groups.iter().any(|g| g.len() != 2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = groups
        .iter()
        .map(|g| match decimal {
            true => g.parse::<u8>().ok(),
            false => u8::from_str_radix(g, 16).ok(),
        })
        .collect();
    if decimal && groups.len() != 16 {
        return None;
    }
    Some(Value::Bytes(
        bytes?,
        Form::Run {
            sep,
            decimal,
            upper,
        },
    ))
}

/// An IPv6 address (or GID), or a GUID as sysfs and `ibv_devinfo` write
/// it (`0c42:a103:00de:adbe`); times (`03:16:04`) and bus ids are neither.
fn ip6(s: &str, upper: bool) -> Option<Value> {
    let groups: Vec<&str> = s.split(':').collect();
    let full = groups.len() == 8 && groups.iter().all(|g| g.len() == 4);
    if let Ok(a) = s.parse::<Ipv6Addr>() {
        let form = match full {
            true => Form::Groups { upper },
            false => Form::Ipv6,
        };
        return Some(Value::Bytes(a.octets().to_vec(), form));
    }
    if groups.len() == 4 && groups.iter().all(|g| g.len() == 4) {
        return hex_bytes(&groups.concat()).map(|b| Value::Bytes(b, Form::Groups { upper }));
    }
    None
}

fn hex_bytes(h: &str) -> Option<Vec<u8>> {
    if !h.len().is_multiple_of(2) {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

/// `text` with each value [`scan`] finds replaced by `f`'s answer (kept
/// where `f` has none).
pub(super) fn replace_values(text: &str, f: impl Fn(&Value) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    scan(text, |r, v| {
        if let Some(p) = f(&v) {
            out.push_str(&text[done..r.start]);
            out.push_str(&p);
            done = r.end;
        }
    });
    out.push_str(&text[done..]);
    out
}

/// Account names shared by everyone (not a person): never replaced, so
/// `root` in `Root Port` or a path stays.
const SHARED_USERS: &[&str] = &[
    "root",
    "ubuntu",
    "admin",
    "user",
    "users",
    "ec2-user",
    "centos",
    "debian",
    "fedora",
    "rocky",
    "azureuser",
    "opc",
    "cloud-user",
    "nvidia",
    "guest",
    "shared",
    "local",
    "runner",
];

/// A word [`super::Words`] would give (`host-3`): already redacted.
fn placeholder_word(w: &str) -> bool {
    ["host-", "user-", "serial-"].iter().any(|p| {
        w.strip_prefix(p)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// The secret of a host name learnt from a tool or a prompt: letters,
/// digits, `.`, `-`, `_`, at least one letter, not an address, not
/// `localhost`. Numbered by its first label, any case (`gpu1` and
/// `GPU1.cluster.local` are one machine).
fn learnt_host(name: &str) -> Option<Secret> {
    let name = name.trim_end_matches('.');
    let ok = name.len() >= 2
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        && name.chars().any(|c| c.is_ascii_alphabetic())
        && !name.eq_ignore_ascii_case("localhost")
        && name.parse::<Ipv4Addr>().is_err();
    match ok {
        true => host_secret(name),
        false => None,
    }
}

/// The secret of node name `name` (any name of two characters or more;
/// `None` for a placeholder).
pub(super) fn host_secret(name: &str) -> Option<Secret> {
    if name.chars().count() < 2 || placeholder_word(name) {
        return None;
    }
    let label = name
        .split('.')
        .next()
        .filter(|l| l.len() >= 2)
        .unwrap_or(name);
    Some(Secret {
        kind: Kind::Host,
        key: label.to_lowercase(),
    })
}

/// Host `name` as words: the name, and its first label when it has a
/// domain.
pub(super) fn host_words(name: &str, s: Secret, found: &mut Found) {
    let name = name.trim_end_matches('.');
    found.word(name, s.clone());
    if let Some((label, _)) = name.split_once('.')
        && label.len() >= 2
    {
        found.word(label, s);
    }
}

fn host(name: &str, found: &mut Found) {
    if let Some(s) = learnt_host(name) {
        host_words(name, s, found);
    }
}

fn user(name: &str, found: &mut Found) {
    let ok = name.len() >= 2
        && name.chars().any(|c| c.is_ascii_alphabetic())
        && !placeholder_word(name)
        && !SHARED_USERS.contains(&name.to_ascii_lowercase().as_str());
    if ok {
        found.word(
            name,
            Secret {
                kind: Kind::User,
                key: name.to_string(),
            },
        );
    }
}

/// The hosts the bundle's typed fields name: NCCL ranks' and the peer's.
pub(super) fn typed(b: &Bundle, found: &mut Found) {
    for n in &b.nccl {
        let devices = n.devices.iter().filter_map(|d| d.host.as_deref());
        let adapters = n.adapters.iter().filter_map(|a| a.host.as_deref());
        let paths = n.paths.iter().filter_map(|p| p.host.as_deref());
        for h in devices.chain(adapters).chain(paths) {
            host(h, found);
        }
    }
    if let Some(p) = &b.peer {
        for h in p.peer.iter().chain(&p.address) {
            host(h, found);
        }
    }
}

static NAMES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?xm)
        (?P<user>[A-Za-z_][A-Za-z0-9._-]{0,31})@(?P<host>[A-Za-z][A-Za-z0-9.-]{0,252})
        |^[\ \t]*(?P<nccl>[A-Za-z][A-Za-z0-9._-]*):[0-9]+:[0-9]+[\ \t]+\[[0-9]+\]
        |(?-u:\b)Pid[\ \t]+[0-9]+[\ \t]+on[\ \t]+(?P<rank>[^\ \t\r\n]+)[\ \t]+device
        |(?:^|[\ \t])(?:-host|--host|-hosts|--hosts|--nodelist|-nodelist|
            SLURM_NODELIST|SLURM_JOB_NODELIST|SLURMD_NODENAME|NodeList)[\ \t=]+(?P<list>[^\ \t\r\n'"]+)
        |(?-u:\b)(?:srun|salloc|sbatch|pdsh|pdcp|clush|mpirun|mpiexec)[^\r\n|;&]*?[\ \t]
            (?:-H|-w|--nodes)[\ \t=]+(?P<launched>[^\ \t\r\n'"]+)
        |(?-u:\b)ib_(?:write|read|send|atomic)_(?:bw|lat)(?P<perftest>[^\r\n|;&]*)
        |(?-u:\b)ssh[\ \t]+(?P<ssh>[A-Za-z][A-Za-z0-9.-]*)
        |"(?P<desc>[A-Za-z][A-Za-z0-9._-]*)[\ \t]+(?:mlx[0-9]+_[0-9]+|HCA-[0-9]+)
        |/(?:home|Users)/(?P<home>[^/\ \t\r\n'"]+)
        |(?i:^[^\r\n]*?(?:\[SN\][\ \t]*)?(?:board[\ \t_]+|chassis[\ \t_]+|system[\ \t_]+|product[\ \t_]+|asic[\ \t_]+)?serial
            (?:[\ \t_]*number|[\ \t]*no\.?)?[\ \t]*[:=][\ \t]*(?P<serial>[^\r\n]*?)[\ \t]*$)"#,
    )
    .expect("a valid pattern")
});

/// The secrets of one string: the names its tools and prompts reveal, and
/// every value with a shape of its own.
pub(super) fn text(s: &str, found: &mut Found) {
    for c in NAMES.captures_iter(s) {
        if let Some(u) = c.name("user") {
            // A login is lower case (useradd's `^[a-z_][a-z0-9_-]*$`, and
            // `.` seen in directories): `GPU@agent4`, a TransferBench
            // endpoint, is no user at a host.
            let login = u.as_str().bytes().all(|b| {
                b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-' | b'.')
            });
            if !login {
                continue;
            }
            user(u.as_str(), found);
        }
        for g in ["host", "nccl", "rank", "ssh", "desc"] {
            if let Some(h) = c.name(g) {
                host(h.as_str(), found);
            }
        }
        // `-w` and `-H` name hosts only after a launcher (`grep -w
        // nvidia`, `iperf -w 4M` do not).
        if let Some(l) = c.name("list").or_else(|| c.name("launched")) {
            host_list(l.as_str(), found);
        }
        if let Some(p) = c.name("perftest")
            && let Some(h) = perftest_peer(p.as_str())
        {
            host(h, found);
        }
        if let Some(h) = c.name("home") {
            user(h.as_str(), found);
        }
        if let Some(v) = c.name("serial") {
            serial(v.as_str(), found);
        }
    }
    scan(s, |_, v| {
        if let Some(s) = v.secret() {
            found.add(s);
        }
    });
}

fn serial(v: &str, found: &mut Found) {
    let none = [
        "n/a",
        "na",
        "none",
        "unknown",
        "not specified",
        "not available",
        "0",
    ];
    let lower = v.to_ascii_lowercase();
    let ok = v.len() >= 3
        && !none.contains(&lower.as_str())
        && !lower.starts_with("to be filled")
        && !lower.starts_with('[')
        && v.chars().any(|c| c.is_ascii_alphanumeric())
        && !placeholder_word(v);
    if ok {
        found.word(
            v,
            Secret {
                kind: Kind::Serial,
                key: v.to_string(),
            },
        );
    }
}

/// The most host names a node list is expanded to (`gpu[0001-9999]` is
/// one word and these many names).
const MAX_EXPANDED: usize = 4096;

/// `a,b:8,gpu[01-04,07]`: each host, and a bracketed list as itself (the
/// text shows it so) and as the names it stands for.
fn host_list(list: &str, found: &mut Found) {
    if list.starts_with('-') {
        return;
    }
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in list.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&list[start..]);
    let mut expanded = 0;
    for item in items {
        let item = item
            .rsplit_once(':')
            .filter(|(_, n)| n.bytes().all(|b| b.is_ascii_digit()))
            .map_or(item, |(h, _)| h);
        let Some((prefix, rest)) = item.split_once('[') else {
            host(item, found);
            continue;
        };
        let Some((ranges, suffix)) = rest.split_once(']') else {
            continue;
        };
        if prefix.is_empty() || !prefix.chars().any(|c| c.is_ascii_alphabetic()) {
            continue;
        }
        found.word(
            item,
            Secret {
                kind: Kind::Host,
                key: item.to_lowercase(),
            },
        );
        for r in ranges.split(',') {
            let (a, b) = r.split_once('-').unwrap_or((r, r));
            let (Ok(lo), Ok(hi)) = (a.parse::<u64>(), b.parse::<u64>()) else {
                continue;
            };
            for n in lo..=hi {
                if expanded >= MAX_EXPANDED {
                    return;
                }
                expanded += 1;
                host(&format!("{prefix}{n:0w$}{suffix}", w = a.len()), found);
            }
        }
    }
}

/// The peer a perftest client names: its one argument that is not an
/// option nor an option's value (`ib_write_bw -d mlx5_0 -x 3 node2`).
/// A line that is not a command (`ib_write_bw is not on PATH`) names none.
fn perftest_peer(args: &str) -> Option<&str> {
    // perftest's short options that take no value.
    const FLAGS: &str = "abeFhHNORUCVz";
    let words: Vec<&str> = args.split_whitespace().collect();
    let (last, rest) = words.split_last()?;
    let mut prev: Option<&str> = None;
    for w in rest {
        if !w.starts_with('-') && !prev.is_some_and(|p| p.starts_with('-')) {
            return None;
        }
        prev = Some(w);
    }
    let takes_value =
        |p: &str| p.len() == 2 && p.starts_with('-') && !p.ends_with(|c: char| FLAGS.contains(c));
    let device = last.starts_with("mlx")
        || last.bytes().all(|b| b.is_ascii_digit())
        || last.contains(['/', '=']);
    match last.starts_with('-') || device || prev.is_some_and(takes_value) {
        true => None,
        false => Some(last),
    }
}
