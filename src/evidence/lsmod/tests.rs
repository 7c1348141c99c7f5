use super::*;
use crate::evidence::{Tool, detect};

/// NVIDIA/nccl issue #1737 (SzymonOzog, "NCCL hangs when trying to use
/// Direct RDMA"), the `lsmod | grep nvidia` rows as pasted on
/// gh-3714u15 (8x H100 NV18, six mlx5 NICs in its topo -m).
const NCCL_1737: &str = "\
nvidia_uvm           1523712  0
nvidia_drm             73728  0
nvidia_modeset       1306624  1 nvidia_drm
nvidia_peermem         16384  0
nvidia              56598528  147 nvidia_uvm,nvidia_peermem,gdrdrv,nvidia_modeset
drm_kms_helper        167936  7 drm_vram_helper,ast,drm_display_helper,nvidia_drm,nouveau
ib_core               442368  9 rdma_cm,ib_ipoib,nvidia_peermem,iw_cm,ib_umad,rdma_ucm,ib_uverbs,mlx5_ib,ib_cm
drm                   577536  10 drm_kms_helper,drm_vram_helper,ast,drm_display_helper,nvidia,drm_ttm_helper,nvidia_drm,ttm,nouveau
";

/// openucx/ucx issue #7863 (cgorac): two greps pasted one after the other
/// with their `$` prompts; the second (`grep gdr`) keeps the `nvidia` row
/// only because its `Used by` names gdrdrv.
const UCX_7863: &str = "\
$ lsmod | grep nvidia_peermem
nvidia_peermem         13163  0 
ib_core               363078  9 rdma_cm,ib_cm,iw_cm,mlx5_ib,ib_umad,nvidia_peermem,ib_uverbs,rdma_ucm,ib_ipoib
nvidia              36856397  55 gdrdrv,nvidia_modeset,nvidia_peermem,nvidia_uvm

$ lsmod | grep gdr
gdrdrv                 18183  0 
nvidia              36856397  55 gdrdrv,nvidia_modeset,nvidia_peermem,nvidia_uvm
";

#[test]
fn reads_the_rows_and_their_holders() {
    assert_eq!(detect(NCCL_1737), Some(Tool::Lsmod));
    let p = parse_lsmod(NCCL_1737).unwrap();
    assert!(p.issues.is_empty(), "{:?}", p.issues);
    let [l] = &p.modules[..] else {
        panic!("{:?}", p.modules)
    };
    assert_eq!(l.rows.len(), 8);
    let nvidia = &l.rows[4];
    assert_eq!(
        (nvidia.name.as_str(), nvidia.size_bytes, nvidia.used),
        ("nvidia", 56598528, Some(147))
    );
    assert_eq!(
        nvidia.used_by,
        ["nvidia_uvm", "nvidia_peermem", "gdrdrv", "nvidia_modeset"]
    );
    assert_eq!(nvidia.source.line, 5);
    // No command line: loaded modules are known, absent ones are not.
    assert!(matches!(l.says("nvidia_peermem"), Some(Said::Loaded(s)) if s.line == 4));
    assert!(matches!(l.says("gdrdrv"), Some(Said::Loaded(s)) if s.line == 5));
    assert_eq!(l.says("amdp2p"), None);
}

#[test]
fn the_command_line_says_what_an_absent_row_rules_out() {
    let mut p = parse_lsmod(NCCL_1737).unwrap();
    settle(&mut p, Some("lsmod | grep nvidia"));
    let l = &p.modules[0];
    assert_eq!(l.command.as_deref(), Some("lsmod | grep nvidia"));
    // `grep nvidia` would have printed an `nvidia_foo` row; it does not
    // print `mlx5_core`'s.
    assert!(matches!(l.says("nvidia_fs"), Some(Said::Absent(s)) if s.line == 1));
    assert_eq!(l.says("mlx5_core"), None);
    // nv_peer_mem does not match `nvidia`, but it would hold nvidia, whose
    // holders (line 5) do not name it.
    assert!(matches!(l.says("nv_peer_mem"), Some(Said::Absent(s)) if s.line == 5));
}

#[test]
fn greps_pasted_together_are_listings_of_their_own() {
    assert_eq!(detect(UCX_7863), Some(Tool::Lsmod));
    let p = parse_lsmod(UCX_7863).unwrap();
    assert!(p.issues.is_empty(), "{:?}", p.issues);
    let cmds: Vec<(Option<&str>, usize, usize)> = p
        .modules
        .iter()
        .map(|m| (m.command.as_deref(), m.source.line, m.rows.len()))
        .collect();
    assert_eq!(
        cmds,
        [
            (Some("lsmod | grep nvidia_peermem"), 1, 3),
            (Some("lsmod | grep gdr"), 6, 2)
        ]
    );
    assert!(matches!(
        state(&p.modules, "nvidia_peermem"),
        Some(Said::Loaded(s)) if s.line == 2
    ));
}

#[test]
fn an_empty_grep_is_a_listing_without_rows() {
    // NVIDIA/nccl issue #988 (ReyRen, A100, gpu3): both greps printed
    // nothing, and the last prompt has no command.
    let text = "\
(pytorch) [root@gpu3 ~]# lsmod | grep nvidia_peermem
(pytorch) [root@gpu3 ~]# lsmod | grep nv_peer_mem
(pytorch) [root@gpu3 ~]#
";
    let r = crate::ingest::read_transcript("lsmod.txt", text.as_bytes());
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let t = r.transcript.unwrap();
    assert_eq!(t.tool, Tool::Lsmod);
    let said: Vec<(&str, Option<Said>)> = ["nvidia_peermem", "nv_peer_mem", "nvidia"]
        .into_iter()
        .map(|m| (m, state(&r.modules, m)))
        .collect();
    let line = |s: &Option<Said>| match s {
        Some(Said::Absent(s)) => Some(s.line),
        _ => None,
    };
    assert_eq!(
        said.iter().map(|(m, s)| (*m, line(s))).collect::<Vec<_>>(),
        [
            ("nvidia_peermem", Some(1)),
            ("nv_peer_mem", Some(2)),
            ("nvidia", None)
        ]
    );
    assert_eq!((t.lines.read, t.lines.not_understood), (2, 0));
}

#[test]
fn a_row_that_is_not_one_is_named_and_the_rest_read() {
    let text = format!("{NCCL_1737}ib_uverbs  a lot\n");
    let p = parse_lsmod(&text).unwrap();
    assert_eq!(p.modules[0].rows.len(), 8);
    assert_eq!(p.issues.len(), 1);
    assert_eq!(p.issues[0].line, 9);
}

#[test]
fn lsmod_header_without_a_command_is_a_whole_listing() {
    let text = "Module                  Size  Used by\nnvidia_uvm           1523712  0\n";
    assert_eq!(detect(text), Some(Tool::Lsmod));
    let p = parse_lsmod(text).unwrap();
    assert!(p.modules[0].header);
    assert!(matches!(
        p.modules[0].says("nv_peer_mem"),
        Some(Said::Absent(_))
    ));
}

#[test]
fn a_command_quoted_as_inline_code_with_a_colon_names_its_listing() {
    // Synthetic, in the shape of an issue that writes the command as
    // markdown inline code and a colon before the fenced rows.
    let text = "`lsmod | grep -E 'nvidia|mlx5|ib_'`:\n\
                mlx5_ib               487424  0\n\
                nvidia              56598528  12 nvidia_uvm,nvidia_modeset\n";
    assert_eq!(detect(text), Some(Tool::Lsmod));
    let p = parse_lsmod(text).unwrap();
    assert!(p.issues.is_empty(), "{:?}", p.issues);
    let l = &p.modules[0];
    assert_eq!(
        l.command.as_deref(),
        Some("lsmod | grep -E 'nvidia|mlx5|ib_'")
    );
    // The alternation covers nvidia_peermem; nv_peer_mem only through the
    // nvidia row's holders (line 3).
    assert!(matches!(l.says("nvidia_peermem"), Some(Said::Absent(s)) if s.line == 1));
    assert!(matches!(l.says("nv_peer_mem"), Some(Said::Absent(s)) if s.line == 3));
}

#[test]
fn a_listing_cut_mid_row_rules_nothing_out_by_its_command() {
    // Synthetic: a whole lsmod (its header) whose paste ends inside a
    // row; the modules after the cut are not in the paste.
    let text = "Module                  Size  Used by\n\
                nvidia_uvm           1523712  0\n\
                mlx5_ib               487424  0\n\
                ib_core               4423\n";
    let p = parse_lsmod(text).unwrap();
    let l = &p.modules[0];
    assert!(l.cut && l.header);
    assert_eq!(l.rows.len(), 2);
    assert_eq!(p.issues[0].line, 4);
    assert_eq!(l.says("nvidia_peermem"), None);
    assert_eq!(l.says("nv_peer_mem"), None);
    // Rows read still say what is loaded.
    assert!(matches!(l.says("mlx5_ib"), Some(Said::Loaded(s)) if s.line == 3));
}

#[test]
fn holders_that_end_in_a_comma_were_cut_and_rule_nothing_out() {
    // Synthetic: the nvidia row wrapped after a comma (a mail or a narrow
    // issue box), its last holder on a line of its own.
    let text = "Module                  Size  Used by\n\
                nvidia              56598528  147 nvidia_uvm,gdrdrv,nvidia_modeset,\n\
                nvidia_peermem\n";
    let p = parse_lsmod(text).unwrap();
    let l = &p.modules[0];
    assert!(l.rows[0].holders_cut);
    assert_eq!(
        l.rows[0].used_by,
        ["nvidia_uvm", "gdrdrv", "nvidia_modeset"]
    );
    assert_eq!(l.says("nvidia_peermem"), None);
    assert_eq!(l.says("nv_peer_mem"), None);
    // Cut at the comma with nothing after it: the holders are still cut.
    let p = parse_lsmod("nvidia  56598528  147 nvidia_uvm,gdrdrv,\n").unwrap();
    let mut l = p.modules[0].clone();
    l.command = Some("lsmod | grep gdrdrv".into());
    assert!(l.rows[0].holders_cut && !l.cut);
    assert_eq!(l.says("nv_peer_mem"), None);
}

/// Which modules the ingested `text` rules out, with the line.
fn absent_in(text: &str) -> Vec<(&'static str, usize)> {
    let r = crate::ingest::read_transcript("lsmod.txt", text.as_bytes());
    ["nvidia_peermem", "nv_peer_mem"]
        .into_iter()
        .filter_map(|m| match state(&r.modules, m) {
            Some(Said::Absent(s)) => Some((m, s.line)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_whole_lsmod_that_printed_nothing_lost_its_output() {
    // Synthetic: lsmod always prints its header, so a bare `$ lsmod` with
    // nothing after it is a paste without the output, not an empty list.
    assert_eq!(absent_in("$ lsmod\n"), []);
    assert_eq!(absent_in("$ lsmod\n$ ibstat\n"), []);
    assert_eq!(absent_in("$ lsmod | grep -i module\n"), []);
    assert_eq!(empty_listing("sudo lsmod | sort", 1), None);
    assert!(empty_listing("lsmod | grep peer", 1).is_some());
}

#[test]
fn commands_listed_to_type_say_nothing_of_what_they_print() {
    // Synthetic, in the shape of a how-to's steps: command lines one
    // after the other, none with output, one of them a whole lsmod.
    let steps = "To check the module, enter:\n\
                 $ lsmod\n\
                 $ lsmod | grep nvidia_peermem\n\
                 $ lsmod | grep nv_peer_mem\n";
    assert_eq!(absent_in(steps), []);
    // A tool that always prints (ibstat) in the run says the same.
    assert_eq!(
        absent_in("$ ibstat\n$ lsmod | grep nvidia_peermem\n$ lsmod | grep nv_peer_mem\n"),
        []
    );
    // A command that may print nothing (`sudo modprobe`) leaves the
    // empty grep before it one of a session.
    assert_eq!(
        absent_in("$ lsmod | grep nvidia_peermem\n$ sudo modprobe nvidia_peermem\n"),
        [("nvidia_peermem", 1)]
    );
    // Greps that printed nothing between other commands' output are a
    // session: each rules its modules out.
    let session = "$ lsmod | grep nvidia_peermem\n\
                   $ lsmod | grep nv_peer_mem\n\
                   $ lsmod | grep mlx5\n\
                   mlx5_ib               487424  0\n";
    assert_eq!(
        absent_in(session),
        [("nvidia_peermem", 1), ("nv_peer_mem", 2)]
    );
}

#[test]
fn a_grep_whose_last_row_the_paste_cut_is_read_up_to_the_cut() {
    // Synthetic: the NCCL #1737 rows, the paste cut inside the last one.
    let text = "nvidia_uvm           1523712  0\n\
                nvidia_drm             73728  0\n\
                nvidia_modeset       1306624  1 nvidia_drm\n\
                nvidia_peermem         163\n";
    assert_eq!(detect(text), Some(Tool::Lsmod));
    let p = parse_lsmod(text).unwrap();
    let l = &p.modules[0];
    assert_eq!((l.rows.len(), l.cut), (3, true));
    assert_eq!(p.issues[0].line, 4);
    // Through the scanner, with its command: nothing ruled out.
    let r = crate::ingest::read_transcript(
        "lsmod.txt",
        format!("$ lsmod | grep nvidia\n{text}").as_bytes(),
    );
    assert_eq!(state(&r.modules, "nvidia_peermem"), None);
    assert!(matches!(
        state(&r.modules, "nvidia_drm"),
        Some(Said::Loaded(s)) if s.line == 3
    ));
    // A line that is no row's start keeps the text from being lsmod's.
    assert_eq!(detect("nvidia_uvm  1523712  0\nsee the log above\n"), None);
}

#[test]
fn an_empty_grep_that_another_listing_contradicts_rules_nothing_out() {
    // Synthetic: `grep nvidia` printed nothing, yet the next listing shows
    // the `nvidia` row it would have printed: its output was lost (or it
    // ran elsewhere), so its silence says nothing. Alone, it rules out
    // `nvidia_peermem` (a name `grep nvidia` would print).
    let empty = "$ lsmod | grep nvidia\n";
    assert_eq!(absent_in(empty), [("nvidia_peermem", 1)]);
    let both = "$ lsmod | grep nvidia\n$ lsmod | grep -E 'nvidia|mlx5'\nnvidia              56598528  147 nvidia_uvm,nvidia_modeset\n";
    // The second listing's own `nvidia` row still rules them out (its
    // holders are whole and name neither), now from line 3, not line 1.
    assert_eq!(absent_in(both), [("nvidia_peermem", 3), ("nv_peer_mem", 3)]);
}

#[test]
fn rows_of_numbers_are_no_listing() {
    // numactl's distance rows once srun's `0:` label is taken off: not
    // lsmod rows after another tool (a merge made them so, and the
    // numactl matrix was lost). `8021q` still is a module.
    let lines = ["node distances:", "node 0 1", "10 12 12 12", "12 10 12 12"];
    assert_eq!(super::rows_at_end(&lines), None);
    let lines = ["GPU0 X", "8021q 45056 0", "nvidia_peermem 16384 0"];
    assert_eq!(super::rows_at_end(&lines), Some(1));
}
