//! Edits as unified diffs (the `similar` crate, line-level with a few lines of context): an
//! `Edit`'s `old_string` → `new_string`, each edit of a `MultiEdit`, with added and removed line
//! counts. The lines are raw (untrusted) text; renderers make them safe.

use std::borrow::Cow;

use similar::{ChangeTag, TextDiff};

use super::args::Args;
use super::tool::{self, Kind};

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

/// The replacements of an `Edit` (one) or `MultiEdit` (each of `edits`) call, as
/// (old, new) pairs; members that are missing or not strings count as empty.
pub fn replacements(name: &str, args: &Args<'_>) -> Vec<(String, String)> {
    #[derive(serde::Deserialize)]
    struct Edit {
        #[serde(default)]
        old_string: Option<String>,
        #[serde(default)]
        new_string: Option<String>,
    }
    let pair =
        |o: Option<String>, n: Option<String>| (o.unwrap_or_default(), n.unwrap_or_default());
    if name == "MultiEdit" {
        return args
            .raw("edits")
            .and_then(|r| serde_json::from_str::<Vec<Edit>>(r.get()).ok())
            .unwrap_or_default()
            .into_iter()
            .map(|e| pair(e.old_string, e.new_string))
            .collect();
    }
    let s = |k: &str| args.str(k).map(|c| c.into_owned());
    if args.raw("old_string").is_none() && args.raw("new_string").is_none() {
        return Vec::new();
    }
    vec![pair(s("old_string"), s("new_string"))]
}

/// The file a call changes and what it replaces there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange<'a> {
    /// The file.
    pub path: Cow<'a, str>,
    /// (old, new) text pairs; a whole new text has an empty old one.
    pub replacements: Vec<(String, String)>,
}

/// What a call changes: an `Edit`'s or `MultiEdit`'s replacements, a `Write`'s content or a
/// `NotebookEdit`'s new source as new text; `None` for other tools, a call without a path, or one
/// with nothing to replace.
pub fn file_change<'a>(name: &str, args: &Args<'a>) -> Option<FileChange<'a>> {
    let path = tool::path(args)?;
    let new = |k: &str| args.str(k).map(|s| vec![(String::new(), s.into_owned())]);
    let pairs = match tool::kind(name) {
        Kind::Edit | Kind::MultiEdit => Some(replacements(name, args)).filter(|r| !r.is_empty()),
        Kind::Write => new("content"),
        Kind::Notebook => new("new_source"),
        _ => None,
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
        assert_eq!(replacements("Edit", &a), vec![("a".into(), "b".into())]);
        let m =
            Args::parse(r#"{"edits":[{"old_string":"x","new_string":"y"},{"new_string":"z"}]}"#);
        assert_eq!(
            replacements("MultiEdit", &m),
            vec![("x".into(), "y".into()), (String::new(), "z".into())]
        );
        assert!(replacements("Edit", &Args::parse("{}")).is_empty());
        let w = Args::parse(r#"{"file_path":"w","content":"1\n2"}"#);
        let c = file_change("Write", &w).unwrap();
        assert_eq!(
            (c.path.as_ref(), c.replacements),
            ("w", vec![(String::new(), "1\n2".into())])
        );
        assert_eq!(file_change("Edit", &a).unwrap().replacements.len(), 1);
        assert!(file_change("Edit", &Args::parse(r#"{"file_path":"f"}"#)).is_none());
        assert!(file_change("Bash", &Args::parse(r#"{"command":"x"}"#)).is_none());
    }
}
