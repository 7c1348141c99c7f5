//! RDMA evidence: adapters and ports (`ibv_devinfo`, `ibv_devices`,
//! `ibstat`, `ibstatus`, `show_gids`), port counters read repeatedly
//! (`ibv_display_local_infiniband_device_statistics`) and perftest's
//! `ib_*_bw` / `ib_*_lat` transcripts.
//!
//! Port rates are printed in Gb/s (bits); they are converted once to bytes
//! per second (1 Gb/s = 1.25e8 bytes/s) and the printed text is kept.

use crate::evidence::SplitWords;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::measurement::{
    Buffers, CopyEngine, Direction, GBIT_BYTES, Kind, MIB, Measurement, P2p, Statistic, Text,
    parse_number,
};
use super::{ParseError, Parsed, Source, numbered_lines};

/// One RDMA adapter (an `hca_id` / `CA`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RdmaDevice {
    /// `mlx5_0`, `efa_0`, `rxe0`.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_guid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_id: Option<String>,
    pub ports: Vec<RdmaPort>,
    pub source: Source,
}

impl RdmaDevice {
    /// An adapter known by name only, its facts to be filled in.
    pub fn new(name: impl Into<String>, source: Source) -> RdmaDevice {
        RdmaDevice {
            name: name.into(),
            ca_type: None,
            firmware: None,
            node_guid: None,
            transport: None,
            board_id: None,
            ports: Vec::new(),
            source,
        }
    }
}

/// One port of an adapter.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct RdmaPort {
    pub port: u32,
    /// As printed: `Active`, `PORT_ACTIVE (4)`, `4: ACTIVE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// True when the state says ACTIVE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<bool>,
    /// As printed: `LinkUp`, `5: LinkUp`, `POLLING (2)`, `Disabled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_up: Option<bool>,
    /// The port rate converted from the Gb/s the tool printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_bytes_per_s: Option<f64>,
    /// `200`, `200 Gb/sec (4X HDR)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_as_printed: Option<String>,
    /// `4X`, `4X (2)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<String>,
    /// `HDR`, `2.5 Gbps (1)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_mtu_bytes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_mtu_bytes: Option<u32>,
    /// `InfiniBand` or `Ethernet` (RoCE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_layer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_lid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_guid: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gids: Vec<Gid>,
    /// Counters read at the start and end of a live collection, or at the
    /// first and last of a transcript's repeated readings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<Counter>,
    pub source: Source,
}

/// One counter of a port, read at the start and at the end of a live
/// collection (`/sys/class/infiniband/<dev>/ports/<n>/{counters,hw_counters}`).
/// Counters are cumulative since boot: the delta is what happened during
/// the collection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Counter {
    pub name: String,
    /// `counters` (IB port counters) or `hw_counters` (driver counters).
    pub group: String,
    pub start: u64,
    pub end: u64,
    pub delta: u64,
    /// The row of the last reading, when a transcript printed it (a live
    /// collection reads files: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Gid {
    pub index: u32,
    pub gid: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv4: Option<String>,
    /// RoCE version (`v1`, `v2`) where shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The network interface (`mce0`) where shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub netdev: Option<String>,
}

impl RdmaPort {
    /// Records the logical state as printed, and whether it says ACTIVE.
    fn set_state(&mut self, v: String) {
        self.active = Some(is_active(&v));
        self.state = Some(v);
    }

    /// Records the physical state as printed, and whether it says LinkUp.
    fn set_physical_state(&mut self, v: String) {
        self.link_up = Some(is_link_up(&v));
        self.physical_state = Some(v);
    }

    /// The MAC address behind the port's default GID (index 0), where that
    /// GID is a link-local address formed from a MAC (modified EUI-64, RFC
    /// 4291 appendix A: `ff:fe` in the middle of the interface identifier,
    /// the universal/local bit flipped), as a RoCE port's is: `fe80::ee0d:
    /// 9aff:fed9:8ff6` is `ec:0d:9a:d9:8f:f6`, as a 48-bit number. An
    /// InfiniBand port's GID carries its port GUID instead, and a
    /// hypervisor's made-up one (`0015:5dff:fd34:11eb`) is no MAC: none.
    pub fn mac_from_default_gid(&self) -> Option<u64> {
        let gid = &self.gids.iter().find(|g| g.index == 0)?.gid;
        let groups: Vec<&str> = gid.trim().split(':').collect();
        if !groups.first()?.eq_ignore_ascii_case("fe80") || groups.len() < 5 {
            return None;
        }
        let mut id = [0u8; 8];
        for (i, g) in groups[groups.len() - 4..].iter().enumerate() {
            let v = u16::from_str_radix(g, 16).ok()?;
            id[2 * i..2 * i + 2].copy_from_slice(&v.to_be_bytes());
        }
        if id[3] != 0xff || id[4] != 0xfe {
            return None;
        }
        let mac = [id[0] ^ 0x02, id[1], id[2], id[5], id[6], id[7]];
        Some(mac.iter().fold(0u64, |a, b| (a << 8) | u64::from(*b)))
    }
}

/// Whether two ports, each shown as its own device (mlx5 gives every port
/// of a dual-port card its own `mlx5_N`), are by every sign the ports of
/// one adapter: the MACs behind their default GIDs are consecutive under
/// one vendor prefix. A dual-port card takes consecutive addresses for
/// its ports, while separate cards take theirs from blocks apart: in the
/// gpud ibstat capture the two-port ConnectX-6 Dx cards have node GUIDs
/// one apart (`0xb83fd203002a1a1c`, `...1d`), the single-port ConnectX-7s
/// sixteen or more.
pub fn one_adapter_by_mac(a: &RdmaPort, b: &RdmaPort) -> bool {
    match (a.mac_from_default_gid(), b.mac_from_default_gid()) {
        (Some(x), Some(y)) => x >> 24 == y >> 24 && x.abs_diff(y) == 1,
        _ => false,
    }
}

fn is_active(s: &str) -> bool {
    s.to_ascii_uppercase().contains("ACTIVE")
}

/// `LinkUp`, `5: LinkUp`, and ibv_devinfo's `LINK_UP (5)`.
fn is_link_up(s: &str) -> bool {
    s.to_ascii_lowercase().replace('_', "").contains("linkup")
}

/// `4096 (5)` -> 4096.
fn mtu(s: &str) -> Option<u32> {
    s.words().next()?.parse().ok()
}

/// Adds a device to `out`, or returns the existing one of that name.
fn device<'a>(out: &'a mut Vec<RdmaDevice>, name: &str, line: usize) -> &'a mut RdmaDevice {
    // Names are unique here (only this pushes), and lines name the device
    // read last: looked for from the end.
    if let Some(i) = out.iter().rposition(|d| d.name == name) {
        return &mut out[i];
    }
    out.push(RdmaDevice::new(name.to_string(), Source::line(line)));
    out.last_mut().expect("just pushed")
}

fn port(dev: &mut RdmaDevice, port: u32, line: usize) -> &mut RdmaPort {
    if let Some(i) = dev.ports.iter().position(|p| p.port == port) {
        return &mut dev.ports[i];
    }
    dev.ports.push(RdmaPort {
        port,
        source: Source::line(line),
        ..RdmaPort::default()
    });
    dev.ports.last_mut().expect("just pushed")
}

fn set_rate(p: &mut RdmaPort, printed: &str) {
    if let Some(v) = printed.words().next().and_then(parse_number) {
        p.rate_bytes_per_s = Some(v * GBIT_BYTES);
    }
    p.rate_as_printed = Some(printed.to_string());
}

/// Lines with decoration removed: a tmux pane's `│` border and trailing
/// spaces.
fn clean_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    // Borrowed from the text: the pieces are only read.
    numbered_lines(text).map(|(n, l)| (n, l.trim_start_matches(['│', '┃', '|']).trim_end()))
}

mod perftest;
mod ports;
mod statistics;

pub(crate) use perftest::is_title as is_perftest_title;
pub use perftest::{looks_like_perftest, parse_perftest};
pub use ports::{
    looks_like_ibstat, looks_like_ibstatus, looks_like_ibv_devices, looks_like_ibv_devinfo,
    looks_like_show_gids, parse_ibstat, parse_ibstatus, parse_ibv_devices, parse_ibv_devinfo,
    parse_show_gids,
};
pub use statistics::{looks_like_device_statistics, parse_device_statistics};

/// A line perftest prints before its title that its parser reads context
/// from: the server's wait banner, the no-peak notice, the GPU it picked
/// and how its buffer was registered (src/cuda_memory.c, rocm_memory.c).
/// `waiting`, `no_peak` and `dmabuf`: whether `t` holds `Waiting for client
/// to connect`, `BW peak won't be measured` and `ibv_reg_dmabuf_mr`, searched
/// by the caller, which asks them of every line anyway, so each line is
/// searched once.
pub(crate) fn is_perftest_context(t: &str, waiting: bool, no_peak: bool, dmabuf: bool) -> bool {
    waiting
        || no_peak
        || t.starts_with("[pid = ")
        || t == "initializing CUDA"
        || t.starts_with("initializing ROCm")
        || t.starts_with("CUDA device integrated:")
        || t.starts_with("using DMA-BUF")
        || dmabuf
        || t.starts_with("allocated GPU buffer of a")
}

/// perftest's own setup lines that carry nothing its parser reads (GPU
/// listing and context creation, MTU and inline notices): skipped, not
/// "not understood", when they sit before its title.
pub(crate) fn is_perftest_setup(t: &str) -> bool {
    const SETUP: [&str; 13] = [
        "Listing all CUDA devices",
        "CUDA device ",
        "Picking device No.",
        "creating CUDA Ctx",
        "making it the current CUDA Ctx",
        "cuMemAlloc() of a ",
        "allocated GPU buffer",
        "Perftest doesn't supports",
        "Device not recognized to implement inline",
        "Requested mtu is higher than active mtu",
        "Changing to active mtu",
        "Calling ibv_reg_mr",
        "Disabling dynamic polling",
    ];
    SETUP.iter().any(|p| t.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ibstatus` on the t3640 host of charlie0129/blog's NFS over RDMA
    /// post: the two ports of its ConnectX-4 Lx 25GbE, as mlx5_0 and mlx5_1.
    const T3640: &str = include_str!(
        "../../../captures/cx4lx-25g-t3640-nfsordma/ibstat-009-ibstatus-cx4lx-port1-10g-1x-qdr-beside-port2-25g.txt"
    );
    /// The same post's ft2000 host: another ConnectX-4 Lx.
    const FT2000: &str = include_str!(
        "../../../captures/cx4lx-25g-ft2000-nfsordma/ibstat-010-ibstatus-cx4lx-port1-25g-port2-disabled.txt"
    );

    #[test]
    fn an_adapter_block_repeated_thousands_of_times_is_checked_once() {
        // Fuzz finding (repeated-block mutation): a cut ibv_devinfo block
        // printed 3,000 times made 3,000 "has 2 ports" problems, and each
        // counted every line of the paste again (9 s for 1 MB).
        let block = "hca_id:\tmlx4_0\n\tphys_port_cnt:\t\t\t2\n\tDevice ports:\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tlink_layer:\t\tInfiniBand\n\n";
        let p =
            crate::evidence::parse(crate::evidence::Tool::IbvDevinfo, &block.repeat(3000)).unwrap();
        let cut: Vec<_> = p
            .issues
            .iter()
            .filter(|i| i.message.contains("has 2 ports"))
            .collect();
        assert_eq!(cut.len(), 1, "{:?}", &p.issues[..p.issues.len().min(3)]);
    }

    #[test]
    fn the_macs_behind_roce_default_gids_are_read_and_consecutive_ones_make_one_adapter() {
        // Past the prompt line (`root@t3640:/# ibstatus`) the scanner takes off.
        let after_prompt = |t: &'static str| t.split_once('\n').unwrap().1;
        let t = parse_ibstatus(after_prompt(T3640)).unwrap().rdma;
        let f = parse_ibstatus(after_prompt(FT2000)).unwrap().rdma;
        // `default gid: fe80:0000:0000:0000:ee0d:9aff:fed9:8ff6` (line 3):
        // ee ^ 02 = ec, ff:fe dropped.
        assert_eq!(t[0].ports[0].mac_from_default_gid(), Some(0xec0d_9ad9_8ff6));
        assert_eq!(t[1].ports[0].mac_from_default_gid(), Some(0xec0d_9ad9_8ff7));
        // `bac7:d5ff:fe7f:cc05` and `...cc06`: consecutive, odd first.
        assert_eq!(f[0].ports[0].mac_from_default_gid(), Some(0xb8c7_d57f_cc05));
        assert!(one_adapter_by_mac(&t[0].ports[0], &t[1].ports[0]));
        assert!(one_adapter_by_mac(&f[1].ports[0], &f[0].ports[0]));
        // Two hosts' ports are not one adapter, nor is a port with itself.
        assert!(!one_adapter_by_mac(&t[0].ports[0], &f[0].ports[0]));
        assert!(!one_adapter_by_mac(&t[0].ports[0], &t[0].ports[0]));
    }

    #[test]
    fn a_gid_not_formed_from_a_mac_gives_none() {
        let port = |gid: &str| RdmaPort {
            gids: vec![Gid {
                index: 0,
                gid: gid.into(),
                ipv4: None,
                version: None,
                netdev: None,
            }],
            ..RdmaPort::default()
        };
        // A Hyper-V VF's (Azure HDR ibstatus): `ff:fd`, not `ff:fe`.
        let hv = port("fe80:0000:0000:0000:0015:5dff:fd34:11eb");
        assert_eq!(hv.mac_from_default_gid(), None);
        // An InfiniBand port GUID, a RoCE v2 IPv4-mapped GID, garbage.
        assert_eq!(
            port("fe80:0000:0000:0000:0c42:a103:0017:c078").mac_from_default_gid(),
            None
        );
        assert_eq!(
            port("0000:0000:0000:0000:0000:ffff:c0a8:1701").mac_from_default_gid(),
            None
        );
        assert_eq!(port("fe80:zz").mac_from_default_gid(), None);
        // The compressed form reads as the full one.
        assert_eq!(
            port("fe80::ee0d:9aff:fed9:8ff6").mac_from_default_gid(),
            Some(0xec0d_9ad9_8ff6)
        );
        assert_eq!(RdmaPort::default().mac_from_default_gid(), None);
    }
}
