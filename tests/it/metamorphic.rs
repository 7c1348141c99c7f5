//! Metamorphic tests over every real capture: the same transcript pasted
//! the ways people paste it (after a prompt and a command line, indented,
//! quoted with `> `, in a markdown fence, with `[rank 0] ` on every line,
//! in CRLF, next to another tool's output, cut short) yields the same
//! facts, with line numbers mapped back to the original's.

use serde_json::Value;
use wire_report::evidence::map_line_refs;
use wire_report::ingest::{Reading, read_transcript};

/// Every capture: its path and text.
pub(crate) fn captures() -> Vec<(String, String)> {
    walkdir::WalkDir::new("captures")
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.file_name() != "SOURCES.tsv")
        .map(|e| {
            let p = e.path().display().to_string();
            let t = std::fs::read_to_string(e.path()).unwrap();
            (p, t)
        })
        .collect()
}

/// Renumbers every `{"file", "line"}` source in a JSON value.
fn map_sources(v: &mut Value, map: &dyn Fn(usize) -> usize) {
    match v {
        Value::Object(m) => {
            if m.contains_key("file")
                && let Some(Value::Number(n)) = m.get("line")
            {
                let l = map(n.as_u64().unwrap() as usize);
                m.insert("line".into(), Value::from(l));
            }
            m.values_mut().for_each(|x| map_sources(x, map));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| map_sources(x, map)),
        _ => {}
    }
}

/// The facts of a reading, lines mapped by `map`, as comparable JSON:
/// topology, cells, adapters, PCIe links, notes, problems (line, kind and
/// message; a line number a message quotes is mapped back too, so a
/// message left in a scanned block's numbering fails here).
pub(crate) fn facts(r: &Reading, map: &dyn Fn(usize) -> usize) -> Value {
    let text = |s: &str| map_line_refs(s, &|l| map(l));
    let problems: Vec<(Option<usize>, String, String)> = r
        .problems
        .iter()
        .map(|p| (p.line.map(map), format!("{:?}", p.kind), text(&p.message)))
        .collect();
    let notes: Vec<(usize, String)> = r
        .transcript
        .iter()
        .flat_map(|t| &t.notes)
        .map(|n| (map(n.line), text(&n.text)))
        .collect();
    let mut v = serde_json::json!({
        "topology": r.topology,
        "measurements": r.measurements,
        "rdma": r.rdma,
        "pcie": r.pcie,
    });
    map_sources(&mut v, map);
    v["problems"] = serde_json::to_value(problems).unwrap();
    v["notes"] = serde_json::to_value(notes).unwrap();
    v
}

/// `text` with `f` applied to every line (the line's end kept).
fn per_line(text: &str, f: impl Fn(&str) -> String) -> String {
    let mut s = String::with_capacity(text.len() * 2);
    for l in text.lines() {
        s.push_str(&f(l));
        s.push('\n');
    }
    s
}

/// A way of pasting: its name, the lines it adds in front, the paste.
type Transform = (&'static str, usize, Box<dyn Fn(&str) -> String>);

/// The transformations that keep every line where it was (`+ shift`).
fn transforms() -> Vec<Transform> {
    vec![
        (
            "prompt",
            1,
            Box::new(|t: &str| format!("harry@foo:~$ cat transcript.txt\n{t}")),
        ),
        (
            "root prompt",
            1,
            Box::new(|t: &str| format!("[root@node01 ~]# cat transcript.txt\n{t}")),
        ),
        (
            "indent",
            0,
            Box::new(|t: &str| per_line(t, |l| format!("    {l}"))),
        ),
        (
            "quote",
            0,
            Box::new(|t: &str| {
                per_line(t, |l| {
                    if l.is_empty() {
                        ">".into()
                    } else {
                        format!("> {l}")
                    }
                })
            }),
        ),
        (
            "fence",
            1,
            Box::new(|t: &str| format!("```text\n{}```\n", per_line(t, str::to_string))),
        ),
        (
            "fence, then a line of prose",
            1,
            Box::new(|t: &str| {
                format!(
                    "```text\n{}```\nAny idea what is wrong here?\n",
                    per_line(t, str::to_string)
                )
            }),
        ),
        (
            "mail quoting without spaces",
            0,
            Box::new(|t: &str| per_line(t, |l| format!(">>>{l}"))),
        ),
        (
            "rank",
            0,
            Box::new(|t: &str| per_line(t, |l| format!("[rank 0] {l}"))),
        ),
        (
            "mpi tag",
            0,
            Box::new(|t: &str| per_line(t, |l| format!("[1,0]<stdout>:{l}"))),
        ),
        (
            "kubectl timestamps",
            0,
            Box::new(|t: &str| per_line(t, |l| format!("2025-03-14T09:26:53.123456789Z {l}"))),
        ),
        (
            "journald",
            0,
            Box::new(|t: &str| per_line(t, |l| format!("Dec 01 10:00:00 gpu01 wire[4242]: {l}"))),
        ),
        (
            "journald kernel",
            0,
            Box::new(|t: &str| per_line(t, |l| format!("Dec  1 10:00:00 gpu01 kernel: {l}"))),
        ),
        (
            "srun -l",
            0,
            Box::new(|t: &str| per_line(t, |l| format!("0: {l}"))),
        ),
        (
            "srun -l padded, twelve tasks",
            0,
            Box::new(|t: &str| per_line(t, |l| format!(" 7: {l}"))),
        ),
        (
            "srun messages",
            1,
            Box::new(|t: &str| {
                format!(
                    "srun: job 4242 queued and waiting for resources\n{}srun: Job 4242 step creation still disabled, retrying\n",
                    per_line(t, |l| format!("12: {l}"))
                )
            }),
        ),
        (
            "crlf",
            0,
            Box::new(|t: &str| per_line(t, |l| format!("{l}\r"))),
        ),
        (
            "quoted fence with prompt",
            2,
            Box::new(|t: &str| {
                let body = per_line(t, |l| format!("> {l}"));
                format!("> ```\n> $ cat transcript.txt\n{body}> ```\n")
            }),
        ),
    ]
}

#[test]
fn every_capture_reads_the_same_however_it_is_pasted() {
    let mut failures = Vec::new();
    let caps = captures();
    assert!(caps.len() >= 90, "found {} captures", caps.len());
    for (path, text) in &caps {
        let original = read_transcript(path, text.as_bytes());
        let want = facts(&original, &|l| l);
        for (name, shift, f) in transforms() {
            let pasted = f(text);
            let got = read_transcript(path, pasted.as_bytes());
            if facts(&got, &|l| l.saturating_sub(shift)) != want {
                failures.push(format!("{name}: {path}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Whether a capture's tool reads InfiniBand adapters (its partner in the
/// concatenation test then is a capture that yields only cells).
fn is_rdma_inventory(r: &Reading) -> bool {
    !r.rdma.is_empty() && r.measurements.is_empty()
}

#[test]
fn every_capture_reads_the_same_next_to_another_tool() {
    let caps = captures();
    let ibstat = caps
        .iter()
        .find(|(p, _)| p.ends_with("ibstat-002-dgx1-4x-cx4-edr-mlx5.txt") || p.contains("/ibstat-"))
        .unwrap()
        .clone();
    let nccl = caps
        .iter()
        .find(|(p, _)| p.contains("/nccl-tests-001"))
        .unwrap()
        .clone();
    let mut failures = Vec::new();
    for (path, text) in &caps {
        let original = read_transcript(path, text.as_bytes());
        let partner = if is_rdma_inventory(&original) {
            &nccl
        } else {
            &ibstat
        };
        if partner.0 == *path {
            continue;
        }
        let n = text.lines().count();
        let pasted = format!(
            "$ cat a.txt\n{}$ cat b.txt\n{}",
            per_line(text, str::to_string),
            partner.1
        );
        let got = read_transcript(path, pasted.as_bytes());
        // The first part's facts, lines mapped back (past the prompt).
        let mut want = facts(&original, &|l| l);
        let mut have = facts(&got, &|l| l.saturating_sub(1));
        let alone = read_transcript(path, partner.1.as_bytes());
        let theirs = facts(&alone, &|l| l + n + 2);
        // Take the partner's own facts out of the combined ones.
        for key in ["measurements", "rdma"] {
            let t = theirs[key].as_array().unwrap().clone();
            let shifted: Vec<Value> = t
                .into_iter()
                .map(|mut v| {
                    map_sources(&mut v, &|l| l - 1);
                    v
                })
                .collect();
            let h = have[key].as_array_mut().unwrap();
            let before = h.len();
            h.retain(|x| !shifted.contains(x));
            // The partner was read too, every one of its facts in place.
            assert_eq!(before - h.len(), shifted.len(), "{path}: partner's {key}");
        }
        want["problems"] = Value::Null;
        have["problems"] = Value::Null;
        want["notes"] = Value::Null;
        have["notes"] = Value::Null;
        if want != have {
            failures.push(path.clone());
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A line to cut `path` at, the same on every run (no clock, no RNG
/// state): from a hash of the path, somewhere in the file's middle.
fn cut_line(path: &str, lines: usize) -> usize {
    let h = path.bytes().fold(1469598103934665603u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(1099511628211)
    });
    1 + (h as usize) % lines.max(1)
}

/// Cut at a line: the cut text yields no fact the whole one does not (a
/// cut never invents a cell, an adapter or a link), every cell keeps its
/// line, and nothing panics.
#[test]
fn every_capture_cut_short_yields_only_its_own_facts() {
    let mut failures = Vec::new();
    for (path, text) in captures() {
        let n = text.lines().count();
        let k = cut_line(&path, n);
        let cut: String = per_line(&text, str::to_string)
            .lines()
            .take(k)
            .map(|l| format!("{l}\n"))
            .collect();
        let whole = read_transcript(&path, text.as_bytes());
        let part = read_transcript(&path, cut.as_bytes());
        let cells = |r: &Reading| -> Vec<(usize, String, Option<u64>)> {
            r.measurements
                .iter()
                .map(|m| (m.source.line, m.as_printed.to_string(), m.size_bytes))
                .collect()
        };
        let all = cells(&whole);
        let invented: Vec<_> = cells(&part)
            .into_iter()
            .filter(|c| !all.contains(c))
            .collect();
        let links = |r: &Reading| -> Vec<(String, String)> {
            r.topology
                .links
                .iter()
                .map(|l| (l.a.clone(), l.b.clone()))
                .collect()
        };
        let all_links = links(&whole);
        let new_links = links(&part)
            .into_iter()
            .filter(|l| !all_links.contains(l))
            .count();
        if !invented.is_empty() || new_links > 0 {
            failures.push(format!(
                "{path} cut at {k}: {invented:?}, {new_links} new links"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The facts of a reading that a cut after line `k` must keep: cells
/// (line, as printed, size), devices (id, line) and links (ends, lines)
/// read from lines `..=k` only.
fn facts_up_to(r: &Reading, k: usize) -> Vec<String> {
    let mut out: Vec<String> = r
        .measurements
        .iter()
        .filter(|m| m.source.line <= k)
        .map(|m| format!("cell {} {} {:?}", m.source.line, m.as_printed, m.size_bytes))
        .collect();
    out.extend(
        r.topology
            .devices
            .iter()
            .filter(|d| d.source.line <= k)
            .map(|d| format!("device {} {}", d.id, d.source.line)),
    );
    out.extend(
        r.topology
            .links
            .iter()
            .filter(|l| l.sources.iter().all(|s| s.line <= k))
            .map(|l| format!("link {}-{} {:?}", l.a, l.b, l.code)),
    );
    out
}

/// Captures whose cut is not detectable from the text, and why: the
/// tool prints nothing that says more is to come after the last complete
/// row or section.
const CUT_UNDETECTABLE: &[(&str, &str)] = &[
    // Two complete runs pasted one after the other; the cut falls between
    // them, and bandwidthTest does not print how many runs follow.
    (
        "bandwidthTest-004-a100-80gb-pcie-pinned-then-pageable",
        "complete runs",
    ),
    // `nvidia-smi nvlink --status` (and `-R`) prints neither how many GPUs
    // follow nor how many links a GPU has (4 to 18): a cut between GPU
    // blocks or link lines leaves a shape that could be whole.
    ("nvlink-status-004-2x-a100-pcie", "no count printed"),
    ("nvlink-status-003-2x-h100-pcie", "no count printed"),
    ("nvlink-status-006-hgx-h100-nvlink-R", "no count printed"),
    ("nvlink-status-001-3x-rtx-a6000", "no count printed"),
    // Four whole bandwidthTest runs, one per device, back to back: a cut
    // between two runs leaves whole runs, and nothing says a fifth followed.
    (
        "bandwidthTest-005-4x-rtx6000ada",
        "a cut between two complete runs",
    ),
];

/// Cut inside the text (three lines per capture): every fact read from
/// the lines kept is still read (the complete rows before the cut), and a
/// cut that loses facts is flagged (`truncated`, or a row that cannot be
/// read) where the tool's shape makes it detectable: a matrix missing
/// rows, a sweep or run missing its trailer, a legend or log without its
/// last line, a run without its table. [`CUT_UNDETECTABLE`] says where
/// not, and why.
#[test]
fn every_capture_cut_keeps_its_complete_rows_and_is_flagged() {
    let mut lost_rows = Vec::new();
    let mut unflagged = Vec::new();
    for (path, text) in captures() {
        let n = text.lines().count();
        let k0 = cut_line(&path, n);
        // Three cuts per capture: the hashed line and two others.
        for k in [k0, n / 2, (k0 + n) / 2] {
            if k == 0 || k >= n {
                continue;
            }
            let cut: String = text.lines().take(k).map(|l| format!("{l}\n")).collect();
            let whole = read_transcript(&path, text.as_bytes());
            let part = read_transcript(&path, cut.as_bytes());
            // Too short to recognise (a GPU line without its link lines, an
            // iteration table without its trailer): nothing is read and the
            // file is reported unrecognised, which the detectors own.
            if part.transcript.is_none() {
                assert!(!part.problems.is_empty(), "{path} cut after {k}: silent");
                continue;
            }
            let have = facts_up_to(&part, k);
            let missing: Vec<String> = facts_up_to(&whole, k)
                .into_iter()
                .filter(|f| !have.contains(f))
                .collect();
            if !missing.is_empty() {
                lost_rows.push(format!(
                    "{path} cut after {k}: {:?}",
                    &missing[..missing.len().min(3)]
                ));
            }
            let lost_any = facts_up_to(&whole, usize::MAX).len() > facts_up_to(&whole, k).len();
            let flagged = part.problems.iter().any(|p| {
                matches!(
                    p.kind,
                    wire_report::bundle::ProblemKind::Truncated
                        | wire_report::bundle::ProblemKind::Parse
                )
            });
            // The flag is asserted at the hashed cut line. At the two
            // others some cuts fall between two complete runs or tests
            // (nvbandwidth, perftest and OSU sessions, nvlink GPU blocks),
            // which no count in the text gives away, or inside a perftest
            // server's banner.
            if k == k0
                && lost_any
                && !flagged
                && !CUT_UNDETECTABLE.iter().any(|(f, _)| path.contains(f))
            {
                unflagged.push(format!("{path} cut after {k}"));
            }
        }
    }
    assert!(
        lost_rows.is_empty() && unflagged.is_empty(),
        "rows lost ({}):\n{}\nnot flagged ({}):\n{}",
        lost_rows.len(),
        lost_rows.join("\n"),
        unflagged.len(),
        unflagged.join("\n")
    );
}

/// Two tools pasted back to back with no command line between them: every
/// capture, followed directly by one capture of every other tool (the
/// first whose first line is its tool's header), reads as the same two
/// blocks with the same facts as when a command line separates them
/// (lines mapped past it), and both tools' blocks are there.
#[test]
fn every_capture_followed_by_another_tool_without_a_command_line_reads_both() {
    let caps = captures();
    let mut reps: Vec<(String, String)> = Vec::new();
    for (path, text) in &caps {
        let r = read_transcript(path, text.as_bytes());
        let Some(t) = r.transcript.as_ref().map(|t| t.tool) else {
            continue;
        };
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let name = t.as_str().to_string();
        if wire_report::evidence::split::header_tool(first) == Some(t)
            && !reps.iter().any(|(n, _)| *n == name)
        {
            reps.push((name, text.clone()));
        }
    }
    assert!(
        reps.len() >= 15,
        "only {} tools with a header capture",
        reps.len()
    );
    let mut failures = Vec::new();
    let mut pairs = 0;
    let mut followed = std::collections::BTreeSet::new();
    // Each capture is followed by six of the other tools, taken in turn
    // (every tool follows about a third of the captures): the whole cross
    // product read the same pairs of blocks over again, for 30 s a run.
    for (k, (path, text)) in caps.iter().enumerate() {
        let alone = read_transcript(path, text.as_bytes());
        let Some(tool) = alone.transcript.as_ref().map(|t| t.tool.as_str()) else {
            continue;
        };
        let n = text.lines().count();
        let body = per_line(text, str::to_string);
        let others: Vec<&(String, String)> = reps.iter().filter(|(r, _)| r != tool).collect();
        for j in 0..6 {
            let (rtool, rtext) = others[(k * 6 + j) % others.len()];
            pairs += 1;
            followed.insert(rtool.clone());
            let glued = read_transcript(path, format!("{body}{rtext}").as_bytes());
            let apart = read_transcript(path, format!("{body}$ cat b.txt\n{rtext}").as_bytes());
            let mut want = facts(&apart, &|l| if l > n + 1 { l - 1 } else { l });
            let mut have = facts(&glued, &|l| l);
            for v in [&mut want, &mut have] {
                v["problems"] = Value::Null;
                v["notes"] = Value::Null;
            }
            let tools: Vec<&str> = glued
                .transcript
                .iter()
                .flat_map(|t| &t.blocks)
                .map(|b| b.tool.as_str())
                .collect();
            if want != have || !tools.contains(&tool) || !tools.contains(&rtool.as_str()) {
                failures.push(format!("{path} + {rtool}: blocks {tools:?}"));
            }
        }
    }
    assert!(pairs > 1000, "{pairs} pairs");
    assert!(
        followed.len() == reps.len(),
        "tools that followed: {followed:?}"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
