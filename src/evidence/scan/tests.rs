use super::prefixes::*;
use super::*;

#[test]
fn plain_text_is_one_borrowed_segment() {
    let s = scan("a\nb\n");
    assert_eq!(s.segments.len(), 1);
    assert!(matches!(s.segments[0].text, Cow::Borrowed(_)));
    assert_eq!(s.segments[0].lines, vec![1, 2]);
}

#[test]
fn prompts_split_segments_and_keep_commands() {
    let s = scan(
        "harry@foo:~$ sudo ibstat\nCA 'mlx5_0'\n[root@pit101 release]# ./bandwidthTest --memory=pageable\nX\n",
    );
    assert_eq!(s.segments.len(), 2);
    assert_eq!(s.segments[0].command.as_deref(), Some("sudo ibstat"));
    assert_eq!(s.segments[0].text, "CA 'mlx5_0'\n");
    assert_eq!(s.segments[0].lines, vec![2]);
    assert_eq!(
        s.segments[1].command.as_deref(),
        Some("./bandwidthTest --memory=pageable")
    );
    assert_eq!(s.segments[1].lines, vec![4]);
    assert_eq!(s.skipped.len(), 2);
}

#[test]
fn a_segment_before_a_command_holds_only_its_lines() {
    let s = scan("export A=1\nmpirun -n 2 osu_bw\n# OSU\n");
    assert_eq!(s.segments[0].text, "export A=1\n");
    assert_eq!(s.segments[1].text, "# OSU\n");
    let j = s.segments[1].after(&s.segments[0]);
    assert_eq!(j.text, "export A=1\nmpirun -n 2 osu_bw\n# OSU\n");
    assert_eq!(j.lines, vec![1, 2, 3]);
}

#[test]
fn prefixes_quotes_fences_and_indent_come_off() {
    let s = scan("```\r\n> [rank 0]     a  b\r\n> [rank 0]       c\r\n```\r\n");
    assert_eq!(s.segments.len(), 1);
    assert_eq!(s.segments[0].text, "a  b\n  c\n");
    assert_eq!(s.segments[0].lines, vec![2, 3]);
    assert_eq!(s.segments[0].original(2), 3);
}

#[test]
fn tool_comment_lines_are_not_prompts() {
    for l in [
        "# OSU MPI Bandwidth Test v5.6",
        "#  Rank  0 Group  0 Pid 1 on host device  0 [0x07] NVIDIA",
        "#bytes #iterations",
        "nvbandwidth Version: v0.4",
        "# Collective test starting: all_reduce_perf",
    ] {
        assert_eq!(prompt_command(l), None, "{l}");
    }
    assert_eq!(prompt_command("# ./bandwidthTest"), Some("./bandwidthTest"));
    // Markdown inline code around a command (byteps #179).
    assert_eq!(
        prompt_command("`ethtool -S enp178s0f0 |grep prio`"),
        Some("ethtool -S enp178s0f0 |grep prio")
    );
    assert_eq!(prompt_command("`rx_prio0_bytes`"), None);
    assert_eq!(prompt_command("``"), None);
    assert_eq!(prompt_command("sh-5.1# lspci -vvv"), Some("lspci -vvv"));
    assert_eq!(prompt_command("bash-4.2$ ibstat"), Some("ibstat"));
    assert_eq!(prompt_command("shell-5# x"), None);
    assert_eq!(
        prompt_command("Apptainer> python3 -m sglang.check_env"),
        Some("python3 -m sglang.check_env")
    );
    assert_eq!(
        prompt_command("$ nvidia-smi topo -m"),
        Some("nvidia-smi topo -m")
    );
    assert_eq!(
        prompt_command("nvidia-smi nvlink -R"),
        Some("nvidia-smi nvlink -R")
    );
}

#[test]
fn launcher_prefixes() {
    assert_eq!(strip_prefixes("[1,0]<stdout>:# nThread 1"), "# nThread 1");
    assert_eq!(
        strip_prefixes("2024-05-01T12:00:00.123456789Z   8  2  float"),
        "  8  2  float"
    );
    assert_eq!(strip_prefixes("[rank12]: x"), "x");
    assert_eq!(strip_prefixes("[0x07] x"), "[0x07] x");
}

#[test]
fn journald_and_srun_label_prefixes() {
    assert_eq!(
        strip_prefixes("Dec 01 10:00:00 gpu01 kernel: mlx5_core 0000:0c:00.0: x"),
        "mlx5_core 0000:0c:00.0: x"
    );
    assert_eq!(
        strip_prefixes("Dec  1 10:00:00 gpu01 ibstat[123]:    Port 1:"),
        "   Port 1:"
    );
    assert_eq!(strip_prefixes("12:    Rate: 400"), "   Rate: 400");
    assert_eq!(strip_prefixes(" 3: GPU0\tX"), "GPU0\tX");
    // Not labels: a BDF, a clock, a number in a table.
    for l in [
        "00:01.0 PCI bridge",
        "10:00:00 start",
        "     0   1.23: x",
        "Dec 01 was a Monday: x",
    ] {
        assert_eq!(strip_prefixes(l), l);
    }
}

#[test]
fn first_word_agrees_with_split_whitespace() {
    for t in [
        "",
        "   ",
        "ibstat",
        "ibstat -v",
        "./bandwidthTest\t--memory=pinned",
        "  lspci -vvv",
        "nvidia-smi\u{a0}topo -m",
        "\u{3000}ibstat x",
        "caf\u{e9} au lait",
        "osu_bw\u{2003}-m 8",
        "x\u{b}y",
    ] {
        let first = first_word(t).map(|(w, _)| w);
        assert_eq!(first, t.split_whitespace().next(), "{t:?}");
        let second = first_word(t).and_then(|(_, a)| a.split_whitespace().next());
        assert_eq!(second, t.split_whitespace().nth(1), "{t:?}");
    }
}

#[test]
fn srun_messages_are_skipped_as_launcher_lines() {
    let s = scan("srun: job 12 queued and waiting for resources\n0: CA 'mlx5_0'\n");
    assert_eq!(s.skipped[0].reason, SkipReason::Launcher);
    assert_eq!(s.segments[0].text, "CA 'mlx5_0'\n");
    assert_eq!(s.segments[0].lines, vec![2]);
}

/// [`strip_prefixes`] as it was before it picked its strippers by the
/// line's first byte: every stripper in every pass.
fn strip_prefixes_before(mut line: &str) -> &str {
    loop {
        if !line.as_bytes().first().is_some_and(|b| opens_prefix(*b)) {
            return line;
        }
        let before = line.len();
        line = strip_rank(line);
        line = strip_mpi_tag(line);
        line = strip_quote(line);
        line = strip_timestamp(line);
        line = strip_journald(line);
        line = strip_task_label(line);
        if line.len() == before {
            return line;
        }
    }
}

#[test]
fn prefixes_come_off_as_a_pass_of_every_stripper_took_them() {
    let parts = [
        "",
        "[rank 3] ",
        "[rank12]: ",
        "[1,0]<stdout>:",
        "[1,0]<stderr>:",
        "> ",
        ">",
        "2024-05-01T12:00:00.123Z ",
        "2024-05-01 12:00:00+02:00 ",
        "Dec 01 10:00:00 host prog[123]: ",
        "Dec  1 10:00:00 host kernel: ",
        "12: ",
        " 3: ",
        "0:",
        "    ",
        "  7",
        "[",
        "1234",
    ];
    let ends = [
        "",
        "x",
        "ibstat",
        " 12: y",
        ":",
        "> z",
        "\u{e9}",
        "[rank 1] w",
    ];
    for a in parts {
        for b in parts {
            for c in parts {
                for e in ends {
                    let l = format!("{a}{b}{c}{e}");
                    assert_eq!(strip_prefixes(&l), strip_prefixes_before(&l), "{l:?}");
                }
            }
        }
    }
}

/// A line [`may_have_prefix`] rules out is one no stripper changes.
#[test]
fn may_have_prefix_rules_out_only_lines_without_one() {
    let mut lines: Vec<String> = Vec::new();
    let heads = [
        "",
        " ",
        "  ",
        "    ",
        "     ",
        "      ",
        "1",
        "12",
        "1234",
        "12345",
        "123456",
        "1234567",
        "2024",
        "Dec",
        "Dec ",
        "Jan 01 10:00:00 h p: ",
        "D",
        "[",
        ">",
        "\u{e9}",
    ];
    let tails = [
        "",
        ":",
        ": ",
        ": x",
        "-05-01T12:00:00Z x",
        "-05-01 12:00:00 x",
        " 01 10:00:00 host k: x",
        "  1 10:00:00 host prog[1]: x",
        "x",
        " 7: y",
        "\t",
        "7",
        "7: z",
    ];
    for h in heads {
        for t in tails {
            lines.push(format!("{h}{t}"));
        }
    }
    for text in crate::evidence::capture_texts() {
        lines.extend(text.lines().map(String::from));
    }
    for l in &lines {
        if !may_have_prefix(l.as_bytes()) {
            assert_eq!(strip_prefixes_from(l), l.as_str(), "{l:?}");
        }
    }
}

#[test]
fn trim_end_is_str_s() {
    for s in [
        "", " ", "a", "a ", "a\t", "a\u{b}", "a\u{a0}", "\u{e9}", "a\r", "a=", "  x  ",
    ] {
        assert_eq!(trim_end(s), s.trim_end(), "{s:?}");
    }
}

/// [`strip_task_label`] as it was before it stopped counting where a
/// label ends: blanks and digits counted in full.
fn strip_task_label_before(line: &str) -> &str {
    let pad = line.bytes().take_while(|b| *b == b' ').count();
    let digits = line[pad..].bytes().take_while(u8::is_ascii_digit).count();
    if pad > 4 || digits == 0 || digits > 5 || pad + digits > 6 {
        return line;
    }
    let rest = &line[pad + digits..];
    if rest == ":" {
        return "";
    }
    rest.strip_prefix(": ").unwrap_or(line)
}

#[test]
fn strip_task_label_counts_no_further_than_a_label_reaches() {
    for pad in 0..9 {
        for digits in 0..9 {
            for tail in ["", ":", ": ", ": x", "x", " :", "\u{e9}", "\t: y"] {
                let l = format!("{}{}{tail}", " ".repeat(pad), "7".repeat(digits));
                assert_eq!(strip_task_label(&l), strip_task_label_before(&l), "{l:?}");
            }
        }
    }
}

#[test]
fn a_code_fence_ends_a_block_and_a_command_before_one_keeps_its_output() {
    // Synthetic: a command, its output in a fence, a question after it.
    let s = scan("$ ibstat\n```\nCA 'mlx5_0'\n```\nAny idea?\n");
    assert_eq!(s.segments.len(), 2);
    assert_eq!(s.segments[0].command.as_deref(), Some("ibstat"));
    assert_eq!(s.segments[0].lines, vec![3]);
    assert_eq!(s.segments[1].text, "Any idea?\n");
    assert!(s.silent.is_empty());
}

#[test]
fn quotes_without_spaces_come_off_one_level_at_a_time() {
    assert_eq!(strip_prefixes(">>>CA 'mlx5_0'"), "CA 'mlx5_0'");
    assert_eq!(strip_prefixes(">>> \tPort 1:"), "\tPort 1:");
    assert_eq!(strip_prefixes(">\tGPU0\tX"), "\tGPU0\tX");
    assert_eq!(strip_prefixes("> > > > > > GPU0"), "GPU0");
    assert_eq!(strip_prefixes(">>>"), "");
}

#[test]
fn terminal_escapes_go_and_every_line_keeps_its_place() {
    let t = "\tx\u{1b}[4mGPU0\tGPU1\u{1b}[0m\nGPU0\t X\n";
    let plain = strip_terminal_escapes(t).unwrap();
    assert_eq!(plain, "\txGPU0\tGPU1\nGPU0\t X\n");
    assert_eq!(plain.lines().count(), t.lines().count());
    assert!(strip_terminal_escapes("no escapes\n").is_none());
    // A lone ESC, and one cut at the end of a line, lose only themselves.
    assert_eq!(
        strip_terminal_escapes("a\u{1b}b\u{1b}[\nc").unwrap(),
        "ab\nc"
    );
}
