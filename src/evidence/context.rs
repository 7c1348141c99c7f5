//! What a block's surroundings say about it: the command line pasted before
//! it (which collective, which GPU) and lines its parser does not read
//! (`# Collective test starting: alltoall_perf`, `Test NCCL failure ...`).
//! Applied to a block's [`Parsed`] before its lines are renumbered, so
//! every line here is the block's.

use super::measurement::Kind;
use super::{Parsed, Tool};

/// Refines what `tool`'s parser read from `text`, given the `command` that
/// printed it (prompt removed), when the paste kept it.
pub fn apply(tool: Tool, command: Option<&str>, text: &str, p: &mut Parsed) {
    match tool {
        Tool::NcclTests => nccl(command, text, p),
        Tool::NvidiaSmiQ => nvidia_smi_q(command, p),
        Tool::EthtoolStats => super::ethtool::settle(&mut p.interfaces, command),
        Tool::Lsmod => super::lsmod::settle(p, command),
        Tool::RdmaCounters => super::counters::settle(p, command),
        _ => {}
    }
}

/// The collective of an nccl-tests program name (`./build/all_gather_perf`,
/// `alltoall_perf_mpi`): the name says what the numbers cannot always.
pub fn collective_of_program(word: &str) -> Option<Kind> {
    let prog = word.rsplit('/').next()?;
    let stem = prog.split("_perf").next()?;
    if !prog.contains("_perf") {
        return None;
    }
    Some(match stem {
        "all_reduce" => Kind::Allreduce,
        "all_gather" => Kind::Allgather,
        "alltoall" => Kind::Alltoall,
        "broadcast" => Kind::Broadcast,
        "reduce" => Kind::Reduce,
        "reduce_scatter" => Kind::Reducescatter,
        "sendrecv" => Kind::Sendrecv,
        _ => return None,
    })
}

fn nccl(command: Option<&str>, text: &str, p: &mut Parsed) {
    let mut named: Option<(Kind, String)> = None;
    // A line can pass the looks below only where the text holds their
    // literal: one search of the text each, and most blocks (which hold
    // neither) are not split into lines for them.
    let looked_for = has!(text, "# Collective test starting:")
        || has!(text, "Test NCCL failure")
        || has!(text, "Test CUDA failure");
    if looked_for {
        for (i, l) in super::lines(text).enumerate() {
            let t = super::trim(l);
            if let Some(rest) = t.strip_prefix("# Collective test starting:")
                && let Some(k) = collective_of_program(rest.trim())
            {
                named = Some((k, format!("`{t}` (line {})", i + 1)));
            }
            // nccl-tests' own failure report: `Test NCCL failure common.cu:392 '...'`.
            if t.contains("Test ")
                && (t.contains("Test NCCL failure") || t.contains("Test CUDA failure"))
            {
                p.tool_error(i + 1, format!("nccl-tests failed: {t}"));
            }
        }
    }
    if named.is_none()
        && let Some(c) = command
    {
        named = c
            .split_whitespace()
            .find_map(collective_of_program)
            .map(|k| (k, format!("the command line `{c}`")));
    }
    let Some((kind, by)) = named else {
        return;
    };
    if p.measurements.iter().all(|m| m.kind == kind) {
        return;
    }
    for m in &mut p.measurements {
        m.kind = kind;
        // `collective in-place` was the parser's name while it did not know.
        if let Some(rest) = m.test.strip_prefix("collective ") {
            m.test = format!("{} {rest}", kind.as_str()).into();
        }
    }
    // What the numbers alone could not tell is now told by the name.
    p.notes.retain(|n| {
        !(n.text.contains("busbw/algbw")
            || n.text.contains("number of ranks is not printed")
            || n.text.contains("non-zero algbw"))
    });
    if let Some(m) = p.measurements.first() {
        let line = m.source.line;
        p.note(line, format!("collective {} named by {by}", kind.as_str()));
    }
}

/// `nvidia-smi -i 0 -q`: one GPU chosen on purpose; fewer GPUs than
/// `Attached GPUs` is not a cut.
fn nvidia_smi_q(command: Option<&str>, p: &mut Parsed) {
    let Some(c) = command else { return };
    let chosen = c.split_whitespace().any(|w| {
        w == "-i"
            || w.starts_with("--id")
            || (w.starts_with("-i") && w[2..].bytes().all(|b| b.is_ascii_digit()))
    });
    if !chosen {
        return;
    }
    let before = p.issues.len();
    p.issues
        .retain(|i| !i.message.starts_with("`Attached GPUs"));
    if p.issues.len() < before {
        let line = p.pcie.first().map_or(1, |l| l.source.line);
        p.note(
            line,
            format!("`{c}` chose the GPUs shown; the others attached are not described"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_names_give_the_collective() {
        assert_eq!(
            collective_of_program("./build/all_gather_perf"),
            Some(Kind::Allgather)
        );
        assert_eq!(
            collective_of_program("alltoall_perf_mpi"),
            Some(Kind::Alltoall)
        );
        assert_eq!(
            collective_of_program("reduce_scatter_perf"),
            Some(Kind::Reducescatter)
        );
        assert_eq!(collective_of_program("hypercube_perf"), None);
        assert_eq!(collective_of_program("-g"), None);
    }
}
