//! Edits as unified diffs (the `similar` crate, line-level with a few lines of context): a
//! replacement's old text → new text, each replacement of a multi-edit (which members hold them
//! is the tool's row in [`crate::tool`]), with added and removed line counts. The lines are raw
//! (untrusted) text; renderers make them safe.

use std::borrow::Cow;

use similar::{ChangeTag, TextDiff};

use super::args::Args;
use super::tool;
use crate::tool::{Dialect, EditShape, row};

/// One line of a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A hunk header: the old and new start lines (1-based) and lengths.
    Hunk {
        /// First old line.
        old_start: usize,
        /// Old lines in the hunk.
        old_len: usize,
        /// First new line.
        new_start: usize,
        /// New lines in the hunk.
        new_len: usize,
    },
    /// An unchanged line shown for context.
    Context(String),
    /// A removed line.
    Removed(String),
    /// An added line.
    Added(String),
}

/// A diff of one replacement.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    /// The diff's lines, hunk headers included.
    pub lines: Vec<Line>,
    /// Lines added.
    pub added: u64,
    /// Lines removed.
    pub removed: u64,
}

/// The unified diff of `old` → `new` with `context` lines around each change.
pub fn diff(old: &str, new: &str, context: usize) -> Diff {
    let td = TextDiff::from_lines(old, new);
    let mut d = Diff::default();
    for group in td.grouped_ops(context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (o, n) = (first.old_range(), first.new_range());
        d.lines.push(Line::Hunk {
            old_start: o.start + 1,
            old_len: last.old_range().end - o.start,
            new_start: n.start + 1,
            new_len: last.new_range().end - n.start,
        });
        for op in &group {
            for ch in td.iter_changes(op) {
                let text = ch.value().trim_end_matches(['\n', '\r']).to_owned();
                d.lines.push(match ch.tag() {
                    ChangeTag::Equal => Line::Context(text),
                    ChangeTag::Delete => {
                        d.removed += 1;
                        Line::Removed(text)
                    }
                    ChangeTag::Insert => {
                        d.added += 1;
                        Line::Added(text)
                    }
                });
            }
        }
    }
    d
}

/// The replacements of a call that replaces text (one) or several texts in one file (each of
/// its list), as (old, new) pairs; members that are missing or not strings count as empty.
pub fn replacements(dialect: Dialect, name: &str, args: &Args<'_>) -> Vec<(String, String)> {
    let text = |a: &Args<'_>, k: &str| a.str(k).map(|c| c.into_owned()).unwrap_or_default();
    match row(dialect, name).map(|r| r.edit) {
        Some(EditShape::Multi { list, old, new, .. }) => args
            .raw(list)
            .and_then(|r| serde_json::from_str::<Vec<Args<'_>>>(r.get()).ok())
            .unwrap_or_default()
            .iter()
            .map(|e| (text(e, old), text(e, new)))
            .collect(),
        Some(EditShape::Replace { old, new, .. })
            if args.raw(old).is_some() || args.raw(new).is_some() =>
        {
            vec![(text(args, old), text(args, new))]
        }
        _ => Vec::new(),
    }
}

/// The file a call changes and what it replaces there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange<'a> {
    /// The file.
    pub path: Cow<'a, str>,
    /// (old, new) text pairs; a whole new text has an empty old one.
    pub replacements: Vec<(String, String)>,
}

/// What a call changes: its replacements, or a whole new text (a file or a notebook cell
/// written) with an empty old one; `None` for a tool that changes no file, a call without a
/// path, or one with nothing to replace.
pub fn file_change<'a>(dialect: Dialect, name: &str, args: &Args<'a>) -> Option<FileChange<'a>> {
    let path = tool::path(args)?;
    let new = |k: &str| args.str(k).map(|s| vec![(String::new(), s.into_owned())]);
    let pairs = match row(dialect, name)?.edit {
        EditShape::Replace { .. } | EditShape::Multi { .. } => {
            Some(replacements(dialect, name, args)).filter(|r| !r.is_empty())
        }
        EditShape::Whole { content, .. } => new(content),
        EditShape::Cell { source, .. } => new(source),
        EditShape::None => None,
    }?;
    Some(FileChange {
        path,
        replacements: pairs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unified_with_context_and_counts() {
        let d = diff("a\nb\nc\nd\n", "a\nB\nc\nd\ne\n", 1);
        assert_eq!((d.added, d.removed), (2, 1));
        assert_eq!(
            d.lines,
            vec![
                Line::Hunk {
                    old_start: 1,
                    old_len: 4,
                    new_start: 1,
                    new_len: 5
                },
                Line::Context("a".into()),
                Line::Removed("b".into()),
                Line::Added("B".into()),
                Line::Context("c".into()),
                Line::Context("d".into()),
                Line::Added("e".into()),
            ]
        );
        // Without a trailing newline, and from nothing.
        let d = diff("", "x", 3);
        assert_eq!((d.added, d.removed), (1, 0));
        assert!(diff("same", "same", 3).lines.is_empty());
    }

    #[test]
    fn edit_and_multiedit_replacements() {
        let a = Args::parse(r#"{"file_path":"f","old_string":"a","new_string":"b"}"#);
        assert_eq!(
            replacements(Dialect::Claude, "Edit", &a),
            vec![("a".into(), "b".into())]
        );
        let m =
            Args::parse(r#"{"edits":[{"old_string":"x","new_string":"y"},{"new_string":"z"}]}"#);
        assert_eq!(
            replacements(Dialect::Claude, "MultiEdit", &m),
            vec![("x".into(), "y".into()), (String::new(), "z".into())]
        );
        assert!(replacements(Dialect::Claude, "Edit", &Args::parse("{}")).is_empty());
        let w = Args::parse(r#"{"file_path":"w","content":"1\n2"}"#);
        let c = file_change(Dialect::Claude, "Write", &w).unwrap();
        assert_eq!(
            (c.path.as_ref(), c.replacements),
            ("w", vec![(String::new(), "1\n2".into())])
        );
        assert_eq!(
            file_change(Dialect::Claude, "Edit", &a)
                .unwrap()
                .replacements
                .len(),
            1
        );
        assert!(
            file_change(
                Dialect::Claude,
                "Edit",
                &Args::parse(r#"{"file_path":"f"}"#)
            )
            .is_none()
        );
        assert!(file_change(Dialect::Claude, "Bash", &Args::parse(r#"{"command":"x"}"#)).is_none());
    }
}
