//! `topology` as written: what serde_json writes for [`Topology`], its
//! devices, links, peer-access cells and NVLink ports written field by
//! field. Each struct is taken apart whole, so a field added to one does
//! not compile until it is written here too; the tests compare the bytes
//! with serde_json's.

use super::compact::{self, Declined, Object};
use super::index_of;
use crate::evidence::Source;
use crate::evidence::topology::{Device, Link, NvlinkPort, P2pCell, Topology};

/// What serde_json writes for `t`.
pub(super) fn write(t: &Topology, out: &mut Vec<u8>) -> Result<(), Declined> {
    let Topology {
        devices,
        links,
        p2p,
        nvlink,
    } = t;
    let mut o = Object::open(out);
    o.key("devices");
    list(devices, o.out(), device)?;
    o.key("links");
    list(links, o.out(), link)?;
    if !p2p.is_empty() {
        o.key("p2p");
        list(p2p, o.out(), p2p_cell)?;
    }
    if !nvlink.is_empty() {
        o.key("nvlink");
        list(nvlink, o.out(), nvlink_port)?;
    }
    o.close();
    Ok(())
}

/// `[a,b,...]`, each written by `one`.
fn list<T>(
    items: &[T],
    out: &mut Vec<u8>,
    one: fn(&T, &mut Vec<u8>) -> Result<(), Declined>,
) -> Result<(), Declined> {
    out.push(b'[');
    for (i, t) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        one(t, out)?;
    }
    out.push(b']');
    Ok(())
}

fn device(d: &Device, out: &mut Vec<u8>) -> Result<(), Declined> {
    let Device {
        id,
        kind,
        name,
        pci_bus_id,
        uuid,
        numa_node,
        cpu_affinity,
        gpu_numa_node,
        source: src,
    } = d;
    out.extend_from_slice(b"{\"id\":");
    compact::write_str(out, id);
    out.extend_from_slice(b",\"kind\":");
    compact::write(kind, out)?;
    let texts: [(&[u8], &Option<String>); 3] = [
        (b",\"name\":", name),
        (b",\"pci_bus_id\":", pci_bus_id),
        (b",\"uuid\":", uuid),
    ];
    for (key, t) in texts {
        compact::opt_str(out, key, t.as_deref());
    }
    compact::opt_u64(out, b",\"numa_node\":", numa_node.map(u64::from));
    if let Some(c) = cpu_affinity {
        out.extend_from_slice(b",\"cpu_affinity\":");
        compact::write(c, out)?;
    }
    compact::opt_u64(out, b",\"gpu_numa_node\":", gpu_numa_node.map(u64::from));
    out.extend_from_slice(b",\"source\":");
    source(src, out)?;
    out.push(b'}');
    Ok(())
}

fn p2p_cell(c: &P2pCell, out: &mut Vec<u8>) -> Result<(), Declined> {
    let P2pCell {
        src,
        dst,
        status,
        supported,
        source: from,
    } = c;
    out.extend_from_slice(b"{\"src\":");
    compact::write_str(out, src);
    out.extend_from_slice(b",\"dst\":");
    compact::write_str(out, dst);
    out.extend_from_slice(b",\"status\":");
    compact::write_str(out, status);
    out.extend_from_slice(if *supported {
        b",\"supported\":true"
    } else {
        b",\"supported\":false"
    });
    out.extend_from_slice(b",\"source\":");
    source(from, out)?;
    out.push(b'}');
    Ok(())
}

fn nvlink_port(p: &NvlinkPort, out: &mut Vec<u8>) -> Result<(), Declined> {
    let NvlinkPort {
        gpu,
        link,
        active,
        rate_bytes_per_s,
        as_printed,
        source: from,
    } = p;
    out.extend_from_slice(b"{\"gpu\":");
    compact::write_str(out, gpu);
    compact::opt_u64(out, b",\"link\":", link.map(u64::from));
    out.extend_from_slice(if *active {
        b",\"active\":true"
    } else {
        b",\"active\":false"
    });
    compact::opt_f64(out, b",\"rate_bytes_per_s\":", *rate_bytes_per_s);
    out.extend_from_slice(b",\"as_printed\":");
    compact::write_str(out, as_printed);
    out.extend_from_slice(b",\"source\":");
    source(from, out)?;
    out.push(b'}');
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
    compact::opt_str(out, b",\"code\":", code.as_deref());
    let counts: [(&[u8], &Option<u32>); 4] = [
        (b",\"nvlinks\":", nvlinks),
        (b",\"xgmi_hops\":", xgmi_hops),
        (b",\"pcie_hops\":", pcie_hops),
        (b",\"weight\":", weight),
    ];
    for (key, v) in counts {
        compact::opt_u64(out, key, v.map(u64::from));
    }
    compact::opt_f64(
        out,
        b",\"min_bandwidth_bytes_per_s\":",
        *min_bandwidth_bytes_per_s,
    );
    compact::opt_f64(
        out,
        b",\"max_bandwidth_bytes_per_s\":",
        *max_bandwidth_bytes_per_s,
    );
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
    use crate::evidence::topology::{CpuRange, DeviceKind, LinkClass};

    fn src_at(line: usize) -> Source {
        Source {
            file: "t\"x.txt".into(),
            line,
        }
    }

    #[test]
    fn every_entry_with_every_field_is_written_as_serde_json_writes_it() {
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
        let mut d = Device::new("GPU\"0", DeviceKind::Gpu, src_at(2));
        d.name = Some("NVIDIA\tH100".into());
        d.pci_bus_id = Some("00000000:01:00.0".into());
        d.uuid = Some("GPU-1".into());
        d.numa_node = Some(u32::MAX);
        d.cpu_affinity = Some(vec![CpuRange { first: 0, last: 7 }]);
        d.gpu_numa_node = Some(0);
        b.topology.devices = vec![d, Device::new("NIC0", DeviceKind::Nic, src_at(0))];
        b.topology.p2p = [true, false]
            .map(|supported| P2pCell {
                src: "GPU0".into(),
                dst: "GPU\u{1}1".into(),
                status: "OK".into(),
                supported,
                source: src_at(4),
            })
            .to_vec();
        b.topology.nvlink = [(Some(3), true, Some(f64::INFINITY)), (None, false, None)]
            .map(|(link, active, rate_bytes_per_s)| NvlinkPort {
                gpu: "GPU0".into(),
                link,
                active,
                rate_bytes_per_s,
                as_printed: "26.562 GB/s".into(),
                source: src_at(5),
            })
            .to_vec();
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
