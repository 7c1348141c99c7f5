//! Path ceilings from link facts: the most a link can carry per direction,
//! from the rates its specification states. A measured figure divided by
//! its path's ceiling answers "is this number normal?".
//!
//! No achievable fraction is applied: none of the cited sources states one
//! for these links, so the ceilings are raw signalling rate after line
//! encoding, per direction.

use serde::Serialize;

use super::{ModelError, positive};

/// A ceiling and where its numbers come from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ceiling {
    /// What the ceiling is for: `PCIe Gen4 x16`, `NVLink4 x18`...
    pub link: String,
    /// Per direction, after line encoding.
    pub per_direction_bytes_per_s: f64,
    /// Both directions together (what bidirectional tests report).
    pub bidirectional_bytes_per_s: f64,
    /// How the number was computed.
    pub derivation: String,
    /// Where the constants come from.
    pub source: &'static str,
}

/// PCIe generations: transfer rate in GT/s per lane and the line encoding
/// (payload bits, line bits). Gen1-2 use 8b/10b, Gen3-5 128b/130b (PCI
/// Express Base Specification 3.0, section 4.2.2; 4.0 and 5.0 keep it).
/// Gen6 is PAM4 with FLIT mode and no line code (PCIe 6.0 specification);
/// FLIT framing overhead is not modelled.
const PCIE: [(u32, f64, u32, u32); 6] = [
    (1, 2.5, 8, 10),
    (2, 5.0, 8, 10),
    (3, 8.0, 128, 130),
    (4, 16.0, 128, 130),
    (5, 32.0, 128, 130),
    (6, 64.0, 1, 1),
];
const PCIE_SOURCE: &str =
    "PCI-SIG PCI Express Base Specification 3.0 sec. 4.2 (8b/10b, 128b/130b); 4.0, 5.0, 6.0 rates";

/// The per-direction ceiling of a PCIe link of `generation` and `lanes`.
pub fn pcie(generation: u32, lanes: u32) -> Result<Ceiling, ModelError> {
    let Some(&(_, gts, num, den)) = PCIE.iter().find(|g| g.0 == generation) else {
        return Err(ModelError::Undefined(format!(
            "PCIe generation {generation} is not one of 1 to 6"
        )));
    };
    if ![1, 2, 4, 8, 12, 16, 32].contains(&lanes) {
        return Err(ModelError::Undefined(format!(
            "a PCIe link has 1, 2, 4, 8, 12, 16 or 32 lanes, not {lanes}"
        )));
    }
    let per_dir = gts * 1e9 * f64::from(num) / f64::from(den) * f64::from(lanes) / 8.0;
    Ok(Ceiling {
        link: format!("PCIe Gen{generation} x{lanes}"),
        per_direction_bytes_per_s: per_dir,
        bidirectional_bytes_per_s: 2.0 * per_dir,
        derivation: format!("{gts} GT/s x {lanes} lanes x {num}/{den} encoding / 8 bits"),
        source: PCIE_SOURCE,
    })
}

/// The PCIe generation that signals at `gt_per_s` (as lspci prints it).
pub fn pcie_generation_of(gt_per_s: f64) -> Option<u32> {
    PCIE.iter()
        .find(|g| (g.1 - gt_per_s).abs() < 0.01)
        .map(|g| g.0)
}

/// NVLink generations: bytes per second per link per direction.
/// NVLink 1 (P100): 20 GB/s; 2 (V100): 25 GB/s; 3 (A100): 25 GB/s;
/// 4 (H100): 25 GB/s; 5 (Blackwell): 50 GB/s (NVIDIA Tesla P100, V100, A100
/// and H100 architecture whitepapers; NVIDIA Blackwell architecture
/// technical brief: 1.8 TB/s over 18 links, both directions).
const NVLINK: [(u32, f64); 5] = [(1, 20e9), (2, 25e9), (3, 25e9), (4, 25e9), (5, 50e9)];
const NVLINK_SOURCE: &str =
    "NVIDIA P100/V100/A100/H100 architecture whitepapers; Blackwell technical brief";

pub fn nvlink(generation: u32, links: u32) -> Result<Ceiling, ModelError> {
    let Some(&(_, per_link)) = NVLINK.iter().find(|g| g.0 == generation) else {
        return Err(ModelError::Undefined(format!(
            "NVLink generation {generation} is not one of 1 to 5"
        )));
    };
    if links == 0 {
        return Err(ModelError::Undefined(
            "a direct link has at least one NVLink".into(),
        ));
    }
    let per_dir = per_link * f64::from(links);
    Ok(Ceiling {
        link: format!("NVLink{generation} x{links}"),
        per_direction_bytes_per_s: per_dir,
        bidirectional_bytes_per_s: 2.0 * per_dir,
        derivation: format!(
            "{links} links x {} GB/s per link per direction",
            per_link / 1e9
        ),
        source: NVLINK_SOURCE,
    })
}

/// AMD Infinity Fabric (xGMI) links: x16 at 25 Gb/s per lane on MI200
/// (the amdgpu kernel driver assumes exactly that for Aldebaran:
/// `num_links * 16 * 25000 / 8` MB/s, amdgpu_amdkfd.c) and 32 Gb/s on
/// MI300 (AMD Instinct MI300X data sheet: 128 GB/s per link, both
/// directions).
const XGMI: [(&str, f64); 2] = [("mi200", 50e9), ("mi300", 64e9)];
const XGMI_SOURCE: &str =
    "Linux amdgpu_amdkfd.c (x16 x 25 Gb/s for MI200); AMD Instinct MI300X data sheet";

pub fn xgmi(generation: &str, links: u32) -> Result<Ceiling, ModelError> {
    let g = generation.to_ascii_lowercase();
    let Some(&(_, per_link)) = XGMI.iter().find(|x| x.0 == g) else {
        return Err(ModelError::Undefined(format!(
            "xGMI generation `{generation}` is not mi200 or mi300"
        )));
    };
    if links == 0 {
        return Err(ModelError::Undefined(
            "a direct link has at least one xGMI link".into(),
        ));
    }
    let per_dir = per_link * f64::from(links);
    Ok(Ceiling {
        link: format!("xGMI ({g}) x{links}"),
        per_direction_bytes_per_s: per_dir,
        bidirectional_bytes_per_s: 2.0 * per_dir,
        derivation: format!(
            "{links} links x {} GB/s per link per direction",
            per_link / 1e9
        ),
        source: XGMI_SOURCE,
    })
}

/// A row of [`IB_SPEED`]: name, nominal and data Gb/s per lane, encoding.
type IbSpeed = (&'static str, f64, f64, &'static str);

/// InfiniBand speeds: the nominal rate per lane in Gb/s (what `ibstat`'s
/// `Rate` is the sum of), the data rate per lane after line encoding, and
/// the encoding (InfiniBand Architecture Specification Vol. 2, Release
/// 1.3+: SDR/DDR/QDR 8b/10b; FDR10 and FDR 64b/66b at 10.3125 and 14.0625
/// Gbaud; EDR 64b/66b at 25.78125 Gbaud and HDR/NDR/XDR, whose nominal
/// rates are already data rates). Named as ibstat and ibstatus name them.
const IB_SPEED: [IbSpeed; 9] = [
    ("SDR", 2.5, 2.0, "8b/10b"),
    ("DDR", 5.0, 4.0, "8b/10b"),
    ("QDR", 10.0, 8.0, "8b/10b"),
    ("FDR10", 10.0, 10.0, "64b/66b"),
    ("FDR", 14.0, 14.0625 * 64.0 / 66.0, "64b/66b"),
    ("EDR", 25.0, 25.0, "64b/66b"),
    ("HDR", 50.0, 50.0, "64b/66b"),
    (
        "NDR",
        100.0,
        100.0,
        "PAM4, 256b/257b FEC-framed; nominal = data",
    ),
    ("XDR", 200.0, 200.0, "PAM4; nominal = data"),
];
const IB_SOURCE: &str = "InfiniBand Architecture Specification Vol. 2 (lane rates and encodings: SDR-QDR 8b/10b, FDR and later 64b/66b); rate in Gb/s as ibstat prints it";
const ETH_SOURCE: &str =
    "IEEE 802.3 (the nominal Ethernet rate is the data rate; 64b/66b runs at a higher baud)";

/// The per-direction ceiling of an InfiniBand port from the nominal rate
/// ibstat prints (`Rate: 40`): the line encoding of the speed that rate
/// stands for is applied, so `40` (4X QDR) carries 32 Gb/s of data. A
/// rate with no width or speed beside it is read as a 4X port; `40` is
/// read as QDR (FDR10, a ConnectX-3 speed, prints the same rate: pass its
/// width and speed to [`ib_width_speed`] instead).
pub fn ib_rate(gbit_per_s: f64) -> Result<Ceiling, ModelError> {
    positive("port rate (Gb/s)", gbit_per_s)?;
    let per_lane = gbit_per_s / 4.0;
    // Speeds in table order; FDR10 never wins over QDR for a bare `40`.
    let speed = IB_SPEED
        .iter()
        .filter(|s| s.0 != "FDR10")
        .find(|s| (s.1 - per_lane).abs() < 0.01);
    let Some(&(name, nominal, data, encoding)) = speed else {
        // Not a 4X rate of any speed: take the number as a data rate.
        let per_dir = gbit_per_s * 1e9 / 8.0;
        // 1e308 Gb/s is finite, twice its bytes are not: the figures
        // must stay numbers (an `inf` ceiling is printed as `null`).
        if !(2.0 * per_dir).is_finite() {
            return Err(ModelError::Undefined(format!(
                "port rate {gbit_per_s:e} Gb/s is too large to compute a ceiling from"
            )));
        }
        return Ok(Ceiling {
            link: format!("InfiniBand {gbit_per_s} Gb/s"),
            per_direction_bytes_per_s: per_dir,
            bidirectional_bytes_per_s: 2.0 * per_dir,
            derivation: format!(
                "{gbit_per_s} Gb/s, not a 4X rate of a known speed: taken as data rate / 8 bits per byte"
            ),
            source: IB_SOURCE,
        });
    };
    let per_dir = 4.0 * data * 1e9 / 8.0;
    Ok(Ceiling {
        link: format!("InfiniBand 4X {name} ({gbit_per_s} Gb/s)"),
        per_direction_bytes_per_s: per_dir,
        bidirectional_bytes_per_s: 2.0 * per_dir,
        derivation: format!(
            "4 lanes x {nominal} Gb/s nominal, {encoding} -> {:.3} Gb/s of data per lane / 8 bits per byte",
            data
        ),
        source: IB_SOURCE,
    })
}

/// An Ethernet (RoCE) port's rate: the nominal rate is the data rate.
pub fn ethernet_rate(gbit_per_s: f64) -> Result<Ceiling, ModelError> {
    positive("port rate (Gb/s)", gbit_per_s)?;
    let per_dir = gbit_per_s * 1e9 / 8.0;
    Ok(Ceiling {
        link: format!("Ethernet {gbit_per_s} Gb/s"),
        per_direction_bytes_per_s: per_dir,
        bidirectional_bytes_per_s: 2.0 * per_dir,
        derivation: format!("{gbit_per_s} Gb/s / 8 bits per byte"),
        source: ETH_SOURCE,
    })
}

/// A port's width (`4X`, `4X (2)`) as a lane count, and its speed (`HDR`,
/// or ibv_devinfo's `2.5 Gbps (1)`) as a row of [`IB_SPEED`].
fn lanes_and_speed(width: &str, speed: &str) -> Result<(u32, &'static IbSpeed), ModelError> {
    let lanes: u32 = width
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_end_matches(['X', 'x'])
        .parse()
        .map_err(|_| ModelError::Undefined(format!("`{width}` is not a link width such as 4X")))?;
    if lanes == 0 {
        return Err(ModelError::Undefined("a port has at least one lane".into()));
    }
    let Some(row) = IB_SPEED
        .iter()
        .find(|l| l.0.eq_ignore_ascii_case(speed.trim()))
        .or_else(|| speed_by_code(speed))
    else {
        return Err(ModelError::Undefined(format!(
            "`{speed}` is not a speed name such as QDR, FDR, EDR, HDR or NDR"
        )));
    };
    Ok((lanes, row))
}

/// An Ethernet (RoCE) port that states no rate, only the width and speed
/// the verbs port reports (`ibv_devinfo -v`: `active_width: 1X (1)`,
/// `active_speed: 25.0 Gbps (32)`): the kernel maps the link speed onto
/// those (Linux `ib_get_eth_speed`: 25 GbE is 1X EDR, 100 GbE 4X EDR, a
/// link of 1 Gb/s or less 1X SDR), so lanes times the nominal lane rate is
/// the rate the port states, read as an Ethernet rate.
fn ethernet_width_speed(width: &str, speed: &str) -> Result<Ceiling, ModelError> {
    let (lanes, &(name, nominal, _, _)) = lanes_and_speed(width, speed)?;
    let gbit = f64::from(lanes) * nominal;
    let mut c = ethernet_rate(gbit)?;
    c.derivation = format!(
        "verbs port {lanes}X {name}: {lanes} x {nominal} Gb/s, the kernel's mapping of the Ethernet link speed, = {gbit} Gb/s / 8 bits per byte"
    );
    Ok(c)
}

/// A port's width (`4X`) and speed name (`HDR`) to its rate.
pub fn ib_width_speed(width: &str, speed: &str) -> Result<Ceiling, ModelError> {
    let (lanes, &(name, nominal, data, encoding)) = lanes_and_speed(width, speed)?;
    let per_dir = f64::from(lanes) * data * 1e9 / 8.0;
    Ok(Ceiling {
        link: format!("InfiniBand {lanes}X {name}"),
        per_direction_bytes_per_s: per_dir,
        bidirectional_bytes_per_s: 2.0 * per_dir,
        derivation: format!(
            "{lanes} lanes x {nominal} Gb/s nominal, {encoding} -> {data:.3} Gb/s of data per lane / 8 bits per byte"
        ),
        source: IB_SOURCE,
    })
}

/// ibv_devinfo's `active_speed: 10.0 Gbps (4)`: the number in brackets is
/// the speed's bit in the IBTA PortInfo encoding (1 SDR, 2 DDR, 4 QDR,
/// 8 FDR10, 16 FDR, 32 EDR, 64 HDR, 128 NDR, 256 XDR; rdma-core
/// `ibv_devinfo.c` `speed_str`), which tells QDR from FDR10 at 10 Gbps.
fn speed_by_code(speed: &str) -> Option<&'static IbSpeed> {
    let code: u32 = speed
        .split_once('(')?
        .1
        .split_once(')')?
        .0
        .trim()
        .parse()
        .ok()?;
    let i = code.checked_ilog2()? as usize;
    (code.is_power_of_two() && i < IB_SPEED.len()).then(|| &IB_SPEED[i])
}

/// The ceiling of an RDMA port from what its transcript states: the width
/// and speed name when given (`4X`, `QDR`, or `40 Gb/sec (4X QDR)`), else
/// the rate by link layer (`Ethernet`: nominal = data; InfiniBand or not
/// stated: [`ib_rate`]); an Ethernet port with no rate, by the width and
/// speed its verbs port reports. The one function the facts, the pages and
/// the diagnosis use for a port.
pub fn rdma_port(
    gbit_per_s: Option<f64>,
    link_layer: Option<&str>,
    width: Option<&str>,
    speed: Option<&str>,
    as_printed: Option<&str>,
) -> Option<Ceiling> {
    let ethernet = link_layer.is_some_and(|l| l.eq_ignore_ascii_case("ethernet"));
    if !ethernet {
        // `200 Gb/sec (4X HDR)`: the parenthesis names width and speed.
        let paren = as_printed
            .and_then(|s| s.split_once('(')?.1.split_once(')'))
            .and_then(|(inner, _)| inner.trim().split_once(' '));
        let named = width.zip(speed).or(paren);
        if let Some((w, s)) = named
            && let Ok(c) = ib_width_speed(w, s)
        {
            return Some(c);
        }
        return ib_rate(gbit_per_s?).ok();
    }
    match (gbit_per_s, width.zip(speed)) {
        (Some(g), _) => ethernet_rate(g).ok(),
        (None, Some((w, s))) => ethernet_width_speed(w, s).ok(),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcie_ceilings_per_generation() {
        let g3 = pcie(3, 16).unwrap();
        assert!((g3.per_direction_bytes_per_s - 15.753_846e9).abs() < 1e3);
        let g4 = pcie(4, 16).unwrap();
        assert!((g4.per_direction_bytes_per_s - 31.507_692e9).abs() < 1e4);
        assert_eq!(pcie(2, 16).unwrap().per_direction_bytes_per_s, 8e9);
        assert_eq!(
            pcie(5, 16).unwrap().bidirectional_bytes_per_s,
            2.0 * pcie(5, 16).unwrap().per_direction_bytes_per_s
        );
        assert!(pcie(7, 16).is_err());
        assert!(pcie(4, 3).is_err());
        assert_eq!(pcie_generation_of(16.0), Some(4));
        assert_eq!(pcie_generation_of(2.5), Some(1));
    }

    #[test]
    fn nvlink_xgmi_and_infiniband() {
        // H100 SXM: 18 NVLink4 links, 450 GB/s per direction, 900 GB/s both.
        let h = nvlink(4, 18).unwrap();
        assert_eq!(h.per_direction_bytes_per_s, 450e9);
        assert_eq!(h.bidirectional_bytes_per_s, 900e9);
        assert_eq!(nvlink(3, 12).unwrap().bidirectional_bytes_per_s, 600e9);
        assert_eq!(xgmi("MI300", 7).unwrap().bidirectional_bytes_per_s, 896e9);
        assert_eq!(ib_rate(400.0).unwrap().per_direction_bytes_per_s, 50e9);
        assert_eq!(
            ib_width_speed("4X", "HDR")
                .unwrap()
                .per_direction_bytes_per_s,
            25e9
        );
        assert!(ib_width_speed("4X", "FAST").is_err());
        // QDR is 8b/10b: 40 Gb/s nominal carries 32 Gb/s, 4 GB/s; the rate
        // alone and the width and speed agree.
        assert_eq!(ib_rate(40.0).unwrap().per_direction_bytes_per_s, 4e9);
        assert_eq!(
            ib_width_speed("4X", "QDR")
                .unwrap()
                .per_direction_bytes_per_s,
            4e9
        );
        // FDR: 56 nominal, 64b/66b at 14.0625 Gbaud: 54.5 Gb/s of data.
        let fdr = ib_rate(56.0).unwrap().per_direction_bytes_per_s;
        assert!((fdr - 54.545_454e9 / 8.0).abs() < 1e3, "{fdr}");
        assert_eq!(
            ib_width_speed("4X", "FDR")
                .unwrap()
                .per_direction_bytes_per_s,
            fdr
        );
        assert_eq!(ib_rate(100.0).unwrap().per_direction_bytes_per_s, 12.5e9);
        // Ethernet's nominal rate is its data rate; a bracketed speed wins.
        let eth = rdma_port(Some(40.0), Some("Ethernet"), None, None, None).unwrap();
        assert_eq!(eth.per_direction_bytes_per_s, 5e9);
        let named = rdma_port(Some(40.0), None, None, None, Some("40 Gb/sec (4X FDR10)")).unwrap();
        assert_eq!(named.per_direction_bytes_per_s, 5e9);
        let devinfo = ib_width_speed("4X (2)", "2.5 Gbps (1)").unwrap();
        assert_eq!(devinfo.per_direction_bytes_per_s, 1e9);
        let fdr10 = ib_width_speed("4X (2)", "10.0 Gbps (8)").unwrap();
        assert_eq!(fdr10.per_direction_bytes_per_s, 5e9);
        // A RoCE port with only ibv_devinfo's width and speed: the
        // kernel's mapping of the link speed, no IB line encoding applied.
        let roce = |w, s| rdma_port(None, Some("Ethernet"), Some(w), Some(s), None).unwrap();
        assert_eq!(
            roce("1X (1)", "25.0 Gbps (32)").per_direction_bytes_per_s,
            25e9 / 8.0
        );
        assert_eq!(
            roce("4X (2)", "25.0 Gbps (32)").per_direction_bytes_per_s,
            12.5e9
        );
        assert_eq!(
            roce("1X (1)", "2.5 Gbps (1)").per_direction_bytes_per_s,
            2.5e9 / 8.0
        );
        // A stated rate still wins over the width and speed.
        let stated = rdma_port(
            Some(40.0),
            Some("Ethernet"),
            Some("1X (1)"),
            Some("2.5 Gbps (1)"),
            None,
        );
        assert_eq!(stated.unwrap().per_direction_bytes_per_s, 5e9);
        assert!(rdma_port(None, Some("Ethernet"), Some("1X"), Some("FAST"), None).is_none());
        assert!(nvlink(4, 0).is_err());
    }
}
