use super::*;
use crate::bundle::{Host, Origin};

fn bundle(name: &str, files: &[(&str, &str)]) -> Bundle {
    let mut b = Bundle::new(Host {
        name: name.into(),
        origin: Origin::Ingested,
    });
    for (path, text) in files {
        b.absorb(crate::ingest::read_transcript(path, text.as_bytes()));
    }
    b
}

/// One text redacted as a string of a bundle named `n0`.
fn redacted(text: &str) -> String {
    redacted_in("n0", text)
}

fn redacted_in(node: &str, text: &str) -> String {
    let mut r = Redactor::new();
    r.host(node);
    let mut found = Found::default();
    find::text(text, &mut found);
    r.learn(&found);
    r.text(text)
}

#[test]
fn hostnames_and_uuids_leave_bundle_and_transcripts() {
    let text = "GPU 0: NVIDIA A100 (UUID: GPU-3fb142e7-7102-c7ac-bd5a-fc829e11ed84)\nNVML: Unable to retrieve NVLink information as all links are inActive\n";
    let mut b = bundle("gpu-node-17", &[("nvlink.txt", text)]);
    let mut raw = vec![(
        "nvlink-gpu-node-17.txt".to_string(),
        format!("gpu-node-17 {text}").into_bytes(),
    )];
    redact(&mut b, &mut raw).unwrap();
    let json = serde_json::to_string(&b).unwrap();
    assert!(
        !json.contains("gpu-node-17") && !json.contains("3fb142e7"),
        "{json}"
    );
    assert_eq!(b.host.name, "host-1");
    assert!(json.contains("GPU-00000000-0000-0000-0000-000000000001"));
    let saved = String::from_utf8(raw[0].1.clone()).unwrap();
    assert!(saved.starts_with("host-1 ") && !saved.contains("3fb142e7"));
    assert_eq!(raw[0].0, "nvlink-host-1.txt");
}

#[test]
fn hosts_named_by_an_nccl_log_are_redacted() {
    let text = "gpu-a7:12:34 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n";
    let mut b = bundle("login", &[("nccl.txt", text)]);
    assert_eq!(b.nccl[0].paths[0].host.as_deref(), Some("gpu-a7"));
    redact(&mut b, &mut []).unwrap();
    let json = serde_json::to_string(&b).unwrap();
    assert!(!json.contains("gpu-a7"), "{json}");
    assert_eq!(b.nccl[0].paths[0].host.as_deref(), Some("host-2"));
}

#[test]
fn names_are_replaced_as_whole_words_whatever_the_punctuation() {
    let t = redacted_in(
        "node",
        "ssh node; node.cluster nccl-node-1.txt node_ib0 gpu-node-17 node0 xnode",
    );
    assert_eq!(
        t,
        "ssh host-1; host-1.cluster nccl-host-1-1.txt host-1_ib0 gpu-host-1-17 node0 xnode"
    );
}

#[test]
fn prompts_peers_and_node_lists_name_hosts_and_users() {
    let t = redacted(
        "alice@gpu-a1:~$ ib_write_bw -d mlx5_0 -x 3 --report_gbits gpu-b2\n\
         [bob@gpu-a1 run]$ mpirun -H gpu-a1:8,gpu-c3:8 ./all_reduce_perf\n\
         SLURM_JOB_NODELIST=dgx[01-02,07]\n\
         dgx07 says hi; dgx03 is not in the list\n\
         cat /home/carol/log.txt\n\
         root@gpu-a1:/# ib_write_bw is not on PATH\n",
    );
    for gone in [
        "alice",
        "bob",
        "carol",
        "gpu-a1",
        "gpu-b2",
        "gpu-c3",
        "dgx[01-02,07]",
        "dgx07",
    ] {
        assert!(!t.contains(gone), "{gone} in {t}");
    }
    // `root` is everyone's; `PATH` is no host; dgx03 was not named.
    assert!(
        t.contains("root@host-") && t.contains("PATH") && t.contains("dgx03"),
        "{t}"
    );
    assert!(t.contains("-d mlx5_0 -x 3 --report_gbits host-"), "{t}");
}

#[test]
fn addresses_keep_their_form_and_one_value_one_placeholder() {
    let t = redacted(
        "inet 10.77.66.55/24 peer 10.77.66.55 mask 255.255.255.0 lo 127.0.0.1\n\
         [fd00:abcd:1234::55]:80 fd00:abcd:1234:0000:0000:0000:0000:0055\n\
         0000:0000:0000:0000:0000:ffff:0a4d:4237 ::ffff:10.77.66.55\n\
         GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:77:66:55\n\
         version 2.18.3.1.4 bus 0000:1b:00.0 at 03:16:04\n",
    );
    let want = "inet 192.0.2.1/24 peer 192.0.2.1 mask 255.255.255.0 lo 127.0.0.1\n\
         [2001:db8::1]:80 2001:0db8:0000:0000:0000:0000:0000:0001\n\
         0000:0000:0000:0000:0000:ffff:c000:0201 ::ffff:192.0.2.1\n\
         GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:00:02:01\n\
         version 2.18.3.1.4 bus 0000:1b:00.0 at 03:16:04\n";
    assert_eq!(t, want);
    // Redacting again changes nothing.
    assert_eq!(redacted(&t), t);
}

#[test]
fn a_mac_and_the_gids_made_from_it_share_a_placeholder_and_stay_consecutive() {
    let t = redacted(
        "link/ether 0c:42:a1:de:ad:01 brd ff:ff:ff:ff:ff:ff\n\
         fe80:0000:0000:0000:0e42:a1ff:fede:ad01\n\
         GID: fe:80:00:00:00:00:00:00:0e:42:a1:ff:fe:de:ad:01\n\
         fe80:0000:0000:0000:0e42:a1ff:fede:ad02\n\
         Device Serial Number 0c-42-a1-ff-ff-de-ad-01\n",
    );
    let want = "link/ether 02:00:00:00:01:01 brd ff:ff:ff:ff:ff:ff\n\
         fe80:0000:0000:0000:0000:00ff:fe00:0101\n\
         GID: fe:80:00:00:00:00:00:00:00:00:00:ff:fe:00:01:01\n\
         fe80:0000:0000:0000:0000:00ff:fe00:0102\n\
         Device Serial Number 02-00-00-00-00-00-01-01\n";
    assert_eq!(t, want);
}

#[test]
fn guids_in_every_form_become_one_placeholder() {
    let t = redacted(
        "Node GUID: 0x58a2e10300a7820e\nPort GUID: 0x58A2E10300A7820F\n\
         node_guid: 58a2:e103:00a7:820e\n\"H-58a2e10300a7820e\"\n\
         fe80:0000:0000:0000:58a2:e103:00a7:820f\nzero 0x0000000000000000\n",
    );
    let want = "Node GUID: 0x020000000000010e\nPort GUID: 0x020000000000010F\n\
         node_guid: 0200:0000:0000:010e\n\"H-020000000000010e\"\n\
         fe80:0000:0000:0000:0200:0000:0000:010f\nzero 0x0000000000000000\n";
    assert_eq!(t, want);
}

#[test]
fn serial_numbers_go_and_empty_ones_stay() {
    let t = redacted(
        "    Serial Number                         : 1320121054321\n\
         Serial Number: N/A\n\
         [SN] Serial number: MT2145X12345\n\
         again 1320121054321\n",
    );
    assert_eq!(
        t,
        "    Serial Number                         : serial-1\n\
         Serial Number: N/A\n\
         [SN] Serial number: serial-2\n\
         again serial-1\n"
    );
}

#[test]
fn one_run_numbers_every_node_alike() {
    // `ping n2` names n2 in words no pattern knows: replaced because the
    // run knows n2.
    let mut r = Redactor::new();
    assert_eq!(r.host("n1"), "host-1");
    assert_eq!(r.host("n2"), "host-2");
    let mut a = bundle("n1", &[]);
    let mut b = bundle("n2", &[]);
    let mut raw_a = vec![("a.txt".to_string(), b"u1@n1:~$ ping 10.0.0.9 n2\n".to_vec())];
    let mut raw_b = vec![("b.txt".to_string(), b"u1@n2:~$ ping 10.0.0.9 n1\n".to_vec())];
    r.redact(&mut a, &mut raw_a).unwrap();
    r.redact(&mut b, &mut raw_b).unwrap();
    assert_eq!(raw_a[0].1, b"user-1@host-1:~$ ping 192.0.2.1 host-2\n");
    assert_eq!(raw_b[0].1, b"user-1@host-2:~$ ping 192.0.2.1 host-1\n");
}

#[test]
fn bus_ids_devices_models_and_figures_stay() {
    let text = "GPU0 0000:1b:00.0 NVIDIA H100 80GB HBM3 mlx5_0 ib0 1X QDR 10 Gb/sec 328.61 0.626777 4096[B]\n";
    assert_eq!(redacted(text), text);
}

#[test]
fn an_endpoint_like_gpu_at_agent_is_no_user_at_a_host() {
    // TransferBench endpoints: `CPU@agent0 → GPU@agent4`.
    let text = "28.68 GB/s CPU@agent0 -> GPU@agent4; sean@h1:~$ ls\n";
    assert_eq!(
        redacted(text),
        "28.68 GB/s CPU@agent0 -> GPU@agent4; user-1@host-2:~$ ls\n"
    );
}

#[test]
fn serials_of_amd_and_ipmi_tools_go_too() {
    // Review finding: only lines starting `serial` were read.
    let t = redacted(
        "GPU[0]\t\t: Serial Number: 692251001124\n\
         PRODUCT_SERIAL: 692251001125\n\
         SERIAL_NUMBER: 692251001126\n\
         Product Serial        : XYZ123\n",
    );
    for secret in ["692251001124", "692251001125", "692251001126", "XYZ123"] {
        assert!(!t.contains(secret), "{secret} in {t}");
    }
}

#[test]
fn grep_and_iperf_flags_name_no_host() {
    // Review finding: `grep -w nvidia` made `nvidia` a host, and every
    // `nvidia_peermem` became `host-N_peermem` (a GPUDirect finding the
    // plain report does not have). A launcher's -w still names hosts.
    let t = redacted(
        "$ lsmod | grep -w nvidia\nnvidia_peermem 16384 0\n$ iperf -w 4M -c x\n\
         $ srun -w gpu07 hostname\n",
    );
    assert!(t.contains("nvidia_peermem"), "{t}");
    assert!(t.contains("-w 4M"), "{t}");
    assert!(!t.contains("gpu07"), "{t}");
}
