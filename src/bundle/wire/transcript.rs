//! `transcripts` as written: what serde_json writes for each
//! [`Transcript`], field by field (a node's transcripts are few, but their
//! blocks and line accounts went through serde's machinery one field at a
//! time). Each struct is taken apart whole, so a field added to one does
//! not compile until it is written here too; the tests compare the bytes
//! with serde_json's.

use super::compact::{self, Declined};
use crate::bundle::{Block, LineAccount, Transcript};

/// What serde_json writes for `ts`.
pub(super) fn write(ts: &[Transcript], out: &mut Vec<u8>) -> Result<(), Declined> {
    out.push(b'[');
    for (i, t) in ts.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        transcript(t, out)?;
    }
    out.push(b']');
    Ok(())
}

fn transcript(t: &Transcript, out: &mut Vec<u8>) -> Result<(), Declined> {
    let Transcript {
        path,
        tool,
        sha256,
        text,
        notes,
        blocks,
        lines,
    } = t;
    out.extend_from_slice(b"{\"path\":");
    compact::write_str(out, path);
    out.extend_from_slice(b",\"tool\":");
    compact::write(tool, out)?;
    out.extend_from_slice(b",\"sha256\":");
    compact::write_str(out, sha256);
    out.extend_from_slice(b",\"text\":");
    compact::write_str(out, text);
    if !notes.is_empty() {
        out.extend_from_slice(b",\"notes\":");
        compact::write(notes, out)?;
    }
    if !blocks.is_empty() {
        out.extend_from_slice(b",\"blocks\":[");
        for (i, b) in blocks.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            block(b, out)?;
        }
        out.push(b']');
    }
    out.extend_from_slice(b",\"lines\":");
    account(lines, out);
    out.push(b'}');
    Ok(())
}

fn block(b: &Block, out: &mut Vec<u8>) -> Result<(), Declined> {
    let Block {
        tool,
        first_line,
        last_line,
        command,
    } = b;
    out.extend_from_slice(b"{\"tool\":");
    compact::write(tool, out)?;
    out.extend_from_slice(b",\"first_line\":");
    compact::write_u64(out, *first_line as u64);
    out.extend_from_slice(b",\"last_line\":");
    compact::write_u64(out, *last_line as u64);
    compact::opt_str(out, b",\"command\":", command.as_deref());
    out.push(b'}');
    Ok(())
}

fn account(a: &LineAccount, out: &mut Vec<u8>) {
    let LineAccount {
        read,
        skipped,
        not_understood,
        skipped_by_reason,
        not_understood_lines,
    } = a;
    out.extend_from_slice(b"{\"read\":");
    compact::write_u64(out, *read as u64);
    out.extend_from_slice(b",\"skipped\":");
    compact::write_u64(out, *skipped as u64);
    out.extend_from_slice(b",\"not_understood\":");
    compact::write_u64(out, *not_understood as u64);
    if !skipped_by_reason.is_empty() {
        out.extend_from_slice(b",\"skipped_by_reason\":[");
        for (i, (reason, n)) in skipped_by_reason.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.push(b'[');
            compact::write_str(out, reason);
            out.push(b',');
            compact::write_u64(out, *n as u64);
            out.push(b']');
        }
        out.push(b']');
    }
    if !not_understood_lines.is_empty() {
        out.extend_from_slice(b",\"not_understood_lines\":[");
        for (i, n) in not_understood_lines.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            compact::write_u64(out, *n as u64);
        }
        out.push(b']');
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Bundle, Host, Origin};
    use crate::evidence::{Note, Tool};

    #[test]
    fn a_transcript_with_every_field_is_written_as_serde_json_writes_it() {
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        let full = Transcript {
            path: "a/\"b\".txt".into(),
            tool: Tool::Perftest,
            sha256: "0".repeat(64),
            text: "ib_write_bw\n\t\"x\"\\\u{1}é\n".into(),
            notes: vec![Note {
                line: 3,
                text: "passed \"over\"".into(),
            }],
            blocks: vec![
                Block {
                    tool: Tool::Perftest,
                    first_line: 1,
                    last_line: usize::MAX,
                    command: Some("sudo ib_write_bw -d \"mlx5_0\"".into()),
                },
                Block {
                    tool: Tool::Lsmod,
                    first_line: 0,
                    last_line: 0,
                    command: None,
                },
            ],
            lines: LineAccount {
                read: 1,
                skipped: 2,
                not_understood: 3,
                skipped_by_reason: vec![("blank".into(), 2), ("a \"rule\"".into(), 0)],
                not_understood_lines: vec![4, 5, usize::MAX],
            },
        };
        let bare = Transcript {
            notes: Vec::new(),
            blocks: Vec::new(),
            lines: LineAccount::default(),
            ..full.clone()
        };
        b.transcripts = vec![full, bare];
        let mut theirs = serde_json::to_vec(&b).unwrap();
        theirs.push(b'\n');
        assert_eq!(
            String::from_utf8(super::super::write(&b)).unwrap(),
            String::from_utf8(theirs).unwrap()
        );
    }
}
