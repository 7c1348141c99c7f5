//! The real transcript: six device blocks of a Supermicro X11DPG-OT
//! `lspci -vvnn` (hw-probe upload, see `captures/SOURCES.tsv`): root port
//! 17:00.0, a PLX PEX 8747 (upstream port 18:00.0, downstream ports
//! 19:08.0 and 19:10.0) and a GPU under each downstream port.

use super::*;
use crate::evidence::pcie::parse_lspci;

const X11DPG: &str = include_str!(
    "../../../../captures/supermicro-x11dpg-ot-pex8747/lspci-005-x11dpg-ot-two-gpus-under-one-pex8747-x16-uplink-excerpt.txt"
);

fn chain_of<'a>(p: &'a Parsed, address: &str) -> Vec<&'a str> {
    let d = p.pcie.iter().find(|d| d.address == address).unwrap();
    d.upstream.iter().map(String::as_str).collect()
}

#[test]
fn reads_a_bridges_bus_line() {
    // X11DPG line 8, the root port.
    let r = bus_range(" primary=17, secondary=18, subordinate=1b, sec-latency=0").unwrap();
    assert_eq!(
        r,
        BusRange {
            primary: 0x17,
            secondary: 0x18,
            subordinate: 0x1b
        }
    );
    assert_eq!(bus_range(" primary=17, secondary=zz, subordinate=1b"), None);
}

#[test]
fn reads_the_express_port_kind() {
    let kinds = [
        (
            "Capabilities: [90] Express (v2) Root Port (Slot+), MSI 00",
            "Root Port",
        ),
        (
            "Capabilities: [68] Express (v2) Upstream Port, MSI 00",
            "Upstream Port",
        ),
        (
            "Capabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00",
            "Downstream Port",
        ),
        (
            "Capabilities: [78] Express (v2) Legacy Endpoint, MSI 00",
            "Legacy Endpoint",
        ),
        ("Capabilities: [78] Express Endpoint, MSI 00", "Endpoint"),
    ];
    for (line, kind) in kinds {
        assert_eq!(express_kind(line), Some(kind), "{line}");
    }
    assert_eq!(
        express_kind("Capabilities: [900 v1] Secondary PCI Express"),
        None
    );
    assert_eq!(express_kind("Capabilities: <access denied>"), None);
}

#[test]
fn a_role_comes_from_the_class_code_or_its_name() {
    let roles = [
        (
            "PCI bridge [0604]: PLX Technology, Inc. PEX 8747",
            Some("bridge"),
        ),
        (
            "VGA compatible controller [0300]: NVIDIA Corporation GV102",
            Some("gpu"),
        ),
        (
            "3D controller: NVIDIA Corporation TU104GL [Tesla T4] (rev a1)",
            Some("gpu"),
        ),
        (
            "Ethernet controller: Mellanox Technologies MT28908 Family",
            Some("nic"),
        ),
        (
            "Infiniband controller [0207]: Mellanox Technologies MT28908",
            Some("nic"),
        ),
        (
            "Audio device [0403]: NVIDIA Corporation Device [10de:10f7]",
            None,
        ),
        ("Class 0604: Device 1b21:1187", Some("bridge")),
        // A server's BMC console, not a GPU (synthetic lines in lspci's form).
        (
            "VGA compatible controller [0300]: ASPEED Technology, Inc. ASPEED Graphics Family [1a03:2000] (rev 41)",
            None,
        ),
        (
            "VGA compatible controller: Matrox Electronics Systems Ltd. Integrated Matrox G200eW3 Graphics Controller (rev 04)",
            None,
        ),
    ];
    for (desc, role) in roles {
        assert_eq!(role_of(desc), role, "{desc}");
    }
}

#[test]
fn rebuilds_each_chain_nearest_bridge_first_root_port_last() {
    let p = parse_lspci(X11DPG).unwrap();
    assert_eq!(p.pcie.len(), 6);
    assert_eq!(chain_of(&p, "17:00.0"), Vec::<&str>::new());
    assert_eq!(chain_of(&p, "18:00.0"), ["17:00.0"]);
    assert_eq!(chain_of(&p, "19:08.0"), ["18:00.0", "17:00.0"]);
    assert_eq!(chain_of(&p, "1a:00.0"), ["19:08.0", "18:00.0", "17:00.0"]);
    assert_eq!(chain_of(&p, "1b:00.0"), ["19:10.0", "18:00.0", "17:00.0"]);
    let roles: Vec<Option<&str>> = p.pcie.iter().map(|d| d.role.as_deref()).collect();
    assert_eq!(
        roles,
        [
            Some("bridge"),
            Some("bridge"),
            Some("bridge"),
            Some("bridge"),
            Some("gpu"),
            Some("gpu")
        ]
    );
    assert!(p.notes.is_empty(), "{:?}", p.notes);
    assert!(p.issues.is_empty(), "{:?}", p.issues);
}

#[test]
fn addresses_printed_with_their_domain_chain_the_same_way() {
    // `lspci -D` prints `0000:` before each address; derived from the real
    // text by adding it to every device line.
    let with_domain: String = X11DPG
        .lines()
        .map(|l| match l.chars().next() {
            Some(c) if c.is_ascii_hexdigit() => format!("0000:{l}\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    let p = parse_lspci(&with_domain).unwrap();
    assert_eq!(
        chain_of(&p, "0000:1b:00.0"),
        ["0000:19:10.0", "0000:18:00.0", "0000:17:00.0"]
    );
}

#[test]
fn a_chain_cut_above_a_switch_port_says_its_root_port_is_missing() {
    // The same transcript without its first block (the root port), as
    // `lspci -vvv -s 18:` would print it.
    let start = X11DPG.find("18:00.0 PCI bridge").unwrap();
    let p = parse_lspci(&X11DPG[start..]).unwrap();
    assert_eq!(chain_of(&p, "1a:00.0"), ["19:08.0", "18:00.0"]);
    let notes: Vec<&str> = p.notes.iter().map(|n| n.text.as_str()).collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("18:00.0 is a switch port"),
        "{notes:?}"
    );
    assert_eq!(p.notes[0].line, 1);
}

#[test]
fn two_bridges_claiming_one_bus_leave_its_devices_without_a_chain() {
    // Derived from the real text: 19:10.0's `secondary=1b` changed to 1a,
    // so two downstream ports claim bus 1a.
    let text = X11DPG.replacen(
        "primary=19, secondary=1b, subordinate=1b",
        "primary=19, secondary=1a, subordinate=1a",
        1,
    );
    let p = parse_lspci(&text).unwrap();
    assert!(chain_of(&p, "1a:00.0").is_empty());
    assert!(
        p.notes.iter().any(|n| n.text
            == "19:10.0 and 19:08.0 both lead to bus 1a: devices on it get no bridge chain"),
        "{:?}",
        p.notes
    );
}

#[test]
fn a_transcript_pasted_twice_keeps_its_chains() {
    let twice = format!("{X11DPG}\n{X11DPG}");
    let p = parse_lspci(&twice).unwrap();
    assert_eq!(p.pcie.len(), 12);
    assert_eq!(chain_of(&p, "1b:00.0"), ["19:10.0", "18:00.0", "17:00.0"]);
    assert!(p.notes.is_empty(), "{:?}", p.notes);
}

#[test]
fn a_bridge_that_claims_its_own_bus_ends_the_chain() {
    // Derived from the real text: 18:00.0 says its secondary bus is 18,
    // its own; a loop in the text must not loop the reader.
    let text = X11DPG.replacen(
        "primary=18, secondary=19, subordinate=1b",
        "primary=18, secondary=18, subordinate=1b",
        1,
    );
    let p = parse_lspci(&text).unwrap();
    assert_eq!(chain_of(&p, "1a:00.0"), ["19:08.0"]);
    // The root port and 18:00.0 both claim bus 18: its devices get none.
    assert!(chain_of(&p, "18:00.0").is_empty());
}

/// Synthetic: a chain of `depth` bridges (bus 00 to `depth`), then
/// `repeats` copies of one device line on the last bus.
fn deep_tree(depth: usize, repeats: usize) -> String {
    let link = "\t\tLnkSta:\tSpeed 8GT/s, Width x16\n";
    let mut t = String::new();
    for b in 0..depth {
        t += &format!(
            "{b:02x}:00.0 PCI bridge: PLX Technology, Inc. PEX 8747 (rev ca)\n\
             \tBus: primary={b:02x}, secondary={:02x}, subordinate=ff, sec-latency=0\n{link}\n",
            b + 1
        );
    }
    for _ in 0..repeats {
        t += &format!("{depth:02x}:00.0 3D controller: NVIDIA Corporation GV100GL\n{link}\n");
    }
    t
}

#[test]
fn a_device_printed_again_gets_no_second_chain() {
    let p = parse_lspci(&deep_tree(3, 3)).unwrap();
    let chains: Vec<usize> = p
        .pcie
        .iter()
        .filter(|d| d.address == "03:00.0")
        .map(|d| d.upstream.len())
        .collect();
    assert_eq!(chains, [3, 0, 0]);
}

#[test]
fn a_chain_deeper_than_any_machine_is_cut_with_a_note() {
    let p = parse_lspci(&deep_tree(200, 1)).unwrap();
    let gpu = p.pcie.iter().find(|d| d.address == "c8:00.0").unwrap();
    assert_eq!(gpu.upstream.len(), MAX_CHAIN);
    assert_eq!(gpu.upstream[0], "c7:00.0");
    assert!(
        p.notes.iter().any(|n| n.text.contains("deeper than 64")),
        "{:?}",
        p.notes
    );
}
