//! `topology` as written: what serde_json writes for [`Topology`], with
//! its links (a node's most numerous topology entries) written field by
//! field. Each struct is taken apart whole, so a field added to
//! [`Topology`] or [`Link`] does not compile until it is written here too;
//! the tests compare the bytes with serde_json's.

use super::compact::{self, Declined, Object};
use super::index_of;
use crate::evidence::Source;
use crate::evidence::topology::{Link, Topology};

/// What serde_json writes for `t`.
pub(super) fn write(t: &Topology, out: &mut Vec<u8>) -> Result<(), Declined> {
    let Topology {
        devices,
        links,
        p2p,
        nvlink,
    } = t;
    let mut o = Object::open(out);
    o.field("devices", devices)?;
    o.key("links");
    let out = o.out();
    out.push(b'[');
    for (i, l) in links.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        link(l, out)?;
    }
    out.push(b']');
    if !p2p.is_empty() {
        o.field("p2p", p2p)?;
    }
    if !nvlink.is_empty() {
        o.field("nvlink", nvlink)?;
    }
    o.close();
    Ok(())
}

fn link(l: &Link, out: &mut Vec<u8>) -> Result<(), Declined> {
    let Link {
        a,
        b,
        class,
        code,
        nvlinks,
        xgmi_hops,
        pcie_hops,
        weight,
        min_bandwidth_bytes_per_s,
        max_bandwidth_bytes_per_s,
        pcie_class,
        sources,
    } = l;
    out.extend_from_slice(b"{\"a\":");
    compact::write_str(out, a);
    out.extend_from_slice(b",\"b\":");
    compact::write_str(out, b);
    out.extend_from_slice(b",\"class\":");
    compact::write(class, out)?;
    if let Some(c) = code {
        out.extend_from_slice(b",\"code\":");
        compact::write_str(out, c);
    }
    let counts: [(&[u8], &Option<u32>); 4] = [
        (b",\"nvlinks\":", nvlinks),
        (b",\"xgmi_hops\":", xgmi_hops),
        (b",\"pcie_hops\":", pcie_hops),
        (b",\"weight\":", weight),
    ];
    for (key, v) in counts {
        if let Some(v) = v {
            out.extend_from_slice(key);
            compact::write_u64(out, u64::from(*v));
        }
    }
    if let Some(v) = min_bandwidth_bytes_per_s {
        out.extend_from_slice(b",\"min_bandwidth_bytes_per_s\":");
        compact::write_f64(out, *v);
    }
    if let Some(v) = max_bandwidth_bytes_per_s {
        out.extend_from_slice(b",\"max_bandwidth_bytes_per_s\":");
        compact::write_f64(out, *v);
    }
    if let Some(c) = pcie_class {
        out.extend_from_slice(b",\"pcie_class\":");
        compact::write(c, out)?;
    }
    out.extend_from_slice(b",\"sources\":[");
    for (i, s) in sources.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        source(s, out)?;
    }
    out.extend_from_slice(b"]}");
    Ok(())
}

/// `[file_index, line]`, or what serde_json writes for a source whose
/// file is not in the table.
fn source(s: &Source, out: &mut Vec<u8>) -> Result<(), Declined> {
    match index_of(&s.file) {
        Some(i) => {
            out.push(b'[');
            compact::write_u64(out, u64::from(i));
            out.push(b',');
            compact::write_u64(out, s.line as u64);
            out.push(b']');
            Ok(())
        }
        None => Ok(compact::write(s, out)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Bundle, Host, Origin};
    use crate::evidence::topology::LinkClass;

    #[test]
    fn a_link_with_every_field_is_written_as_serde_json_writes_it() {
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        let src = Source {
            file: "t\"x.txt".into(),
            line: 7,
        };
        let mut full = Link::new("GPU\"0", "GPU1", LinkClass::SelfLink, src.clone());
        full.code = Some("NV\t12".into());
        full.nvlinks = Some(12);
        full.xgmi_hops = Some(0);
        full.pcie_hops = Some(u32::MAX);
        full.weight = Some(15);
        full.min_bandwidth_bytes_per_s = Some(f64::NAN);
        full.max_bandwidth_bytes_per_s = Some(5.0e10);
        full.pcie_class = Some(LinkClass::SelfLink);
        full.sources.push(Source {
            file: "other.txt".into(),
            line: 0,
        });
        let mut bare = Link::new("a", "b", LinkClass::SelfLink, src);
        bare.sources.clear();
        b.topology.links = vec![full, bare];
        let mut theirs = serde_json::to_vec(&b).unwrap();
        theirs.push(b'\n');
        assert_eq!(
            String::from_utf8(super::super::write(&b)).unwrap(),
            String::from_utf8(theirs).unwrap()
        );
        // A source outside the file table is written whole, as serde_json does.
        let lone = Source {
            file: "z.txt".into(),
            line: 3,
        };
        let mut out = Vec::new();
        source(&lone, &mut out).unwrap();
        assert_eq!(out, serde_json::to_vec(&lone).unwrap());
    }
}
