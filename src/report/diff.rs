//! Diffs of file edits: what an Edit, MultiEdit or Write call changes, as unified-diff lines
//! (`similar`), with added and removed line counts.

use serde_json::Value;
use similar::{ChangeTag, TextDiff};

/// One diff line: `+`, `-`, ` ` (context) or `@` (hunk separator), and its text (no newline).
pub type Line = (char, String);

/// The diff of one edit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    /// The lines.
    pub lines: Vec<Line>,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
}

impl Diff {
    /// The diff as unified-diff text (for the full body and search).
    pub fn text(&self) -> String {
        let mut s = String::new();
        for (t, l) in &self.lines {
            s.push(if *t == '@' { '@' } else { *t });
            if *t == '@' {
                s.push_str("@ …");
            }
            s.push_str(l);
            s.push('\n');
        }
        s
    }
}

/// The diff from `old` to `new`, three lines of context.
pub fn diff(old: &str, new: &str) -> Diff {
    let td = TextDiff::from_lines(old, new);
    let mut d = Diff::default();
    for (i, hunk) in td.unified_diff().context_radius(3).iter_hunks().enumerate() {
        if i > 0 {
            d.lines.push(('@', String::new()));
        }
        for c in hunk.iter_changes() {
            let tag = match c.tag() {
                ChangeTag::Delete => {
                    d.removed += 1;
                    '-'
                }
                ChangeTag::Insert => {
                    d.added += 1;
                    '+'
                }
                ChangeTag::Equal => ' ',
            };
            let v = c.value();
            d.lines
                .push((tag, v.strip_suffix('\n').unwrap_or(v).to_owned()));
        }
    }
    d
}

/// The file a call changes and its diffs, when it is an Edit, MultiEdit or Write (or a
/// NotebookEdit's new source); `None` for other tools or inputs without a path.
pub fn edits(name: &str, input: &Value) -> Option<(String, Vec<Diff>)> {
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let path = s(input, "file_path").or_else(|| s(input, "notebook_path"))?;
    let diffs = match name {
        "Edit" => vec![diff(&s(input, "old_string")?, &s(input, "new_string")?)],
        "MultiEdit" => input
            .get("edits")?
            .as_array()?
            .iter()
            .filter_map(|e| Some(diff(&s(e, "old_string")?, &s(e, "new_string")?)))
            .collect(),
        "Write" => vec![diff("", &s(input, "content")?)],
        "NotebookEdit" => vec![diff("", &s(input, "new_source")?)],
        _ => return None,
    };
    Some((path, diffs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn edit_and_write() {
        let (p, d) = edits(
            "Edit",
            &json!({"file_path": "a", "old_string": "x\ny\n", "new_string": "x\nz\n"}),
        )
        .unwrap();
        assert_eq!(p, "a");
        assert_eq!((d[0].added, d[0].removed), (1, 1));
        assert_eq!(
            d[0].lines,
            vec![(' ', "x".into()), ('-', "y".into()), ('+', "z".into())]
        );
        let (_, w) = edits("Write", &json!({"file_path": "b", "content": "1\n2"})).unwrap();
        assert_eq!((w[0].added, w[0].removed), (2, 0));
        assert!(edits("Bash", &json!({"command": "x"})).is_none());
    }
}
