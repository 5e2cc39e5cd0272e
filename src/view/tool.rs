//! What a tool call is about, in one line: the argument that matters (a shell command, the path
//! and range of a read or an edit, a search pattern, a URL, a subagent's type and description, an
//! MCP tool's first string argument) and short details; unknown tools as `key: value`; and
//! whether the headline says all the input holds. Which of these a tool gets is its row's
//! [`Head`] in the tool table ([`crate::tool`]); this module only renders it. The strings are raw
//! (untrusted): each renderer makes them safe its own way.

use std::borrow::Cow;

use super::args::{Args, display, string};
use crate::tool::{self as meaning, Dialect, EditShape, Head};

/// The one-line summary of a tool call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Headline {
    /// The tool as shown: its name; a subagent call adds its type (`Task Explore`).
    pub tool: String,
    /// The argument that matters, on one line (may be empty).
    pub arg: String,
    /// Short extra facts: a range, flags, counts.
    pub detail: Vec<String>,
}

/// Tools whose calls a view treats specially.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Starts a subagent.
    Subagent,
    /// Replaces text in a file.
    Edit,
    /// Several replacements in one file.
    MultiEdit,
    /// Writes a whole file.
    Write,
    /// Reads a file (a line range of it).
    Read,
    /// Edits a notebook cell.
    Notebook,
    /// Updates the todo list.
    Todo,
    /// Anything else.
    Other,
}

/// The kind of tool `name` (named as `dialect`'s calls name it) is, from its row in the tool
/// table.
pub fn kind(dialect: Dialect, name: &str) -> Kind {
    let Some(r) = meaning::row(dialect, name) else {
        return Kind::Other;
    };
    match (r.kind, r.edit, r.head) {
        (meaning::Kind::Subagent, ..) => Kind::Subagent,
        (_, EditShape::Replace { .. }, _) => Kind::Edit,
        (_, EditShape::Multi { .. }, _) => Kind::MultiEdit,
        (_, EditShape::Whole { .. }, _) => Kind::Write,
        (_, EditShape::Cell { .. }, _) => Kind::Notebook,
        (_, _, Head::Read) => Kind::Read,
        (_, _, Head::Todo) => Kind::Todo,
        _ => Kind::Other,
    }
}

/// The file a call reads or changes, when it names one.
pub fn path<'a>(args: &Args<'a>) -> Option<Cow<'a, str>> {
    ["file_path", "notebook_path", "path"]
        .iter()
        .find_map(|k| args.str(k))
}

/// The first line of `s` and how many lines follow it.
pub fn first_line(s: &str) -> (&str, usize) {
    let s = s.trim_start_matches(['\n', '\r']);
    let mut it = s.split('\n');
    let first = it.next().unwrap_or("").trim_end_matches('\r');
    let more = it.filter(|l| !l.trim().is_empty()).count();
    (first, more)
}

fn one(s: &str) -> (String, Option<String>) {
    let (first, more) = first_line(s);
    let more = (more > 0).then(|| format!("+{more} lines"));
    (first.to_owned(), more)
}

/// A short phrase for a line range from a Read call's `offset` and `limit`.
fn range(args: &Args<'_>) -> Option<String> {
    let off = args.num("offset").map(|v| v as i64);
    let lim = args.num("limit").map(|v| v as i64);
    match (off, lim) {
        (Some(o), Some(l)) => Some(format!("lines {o}–{}", o + l.max(1) - 1)),
        (Some(o), None) => Some(format!("from line {o}")),
        (None, Some(l)) => Some(format!("first {l} lines")),
        (None, None) => None,
    }
}

/// `key: value` for every member, for tools this module does not know.
fn generic(args: &Args<'_>) -> String {
    args.members
        .iter()
        .map(|(k, v)| format!("{k}: {}", one(&display(v)).0))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The headline of a call of `name` (named as `dialect`'s calls name it) with input `args`.
pub fn headline(dialect: Dialect, name: &str, args: &Args<'_>) -> Headline {
    let mut h = Headline {
        tool: name.to_owned(),
        ..Headline::default()
    };
    let s = |k: &str| args.str(k).map(Cow::into_owned);
    let arg = |v: Option<String>, h: &mut Headline| {
        let (first, more) = one(&v.unwrap_or_default());
        h.arg = first;
        h.detail.extend(more);
    };
    match meaning::head(dialect, name) {
        Head::Shell => {
            arg(s("command"), &mut h);
            if args.bool("run_in_background") == Some(true) {
                h.detail.push("background".into());
            }
            if let Some(t) = args.num("timeout") {
                h.detail.push(format!(
                    "timeout {}",
                    super::num::Style::Terse.duration_ms(t as u64)
                ));
            }
        }
        Head::Key(keys) => arg(keys.iter().find_map(|k| s(k)), &mut h),
        Head::Read => {
            arg(path(args).map(Cow::into_owned), &mut h);
            h.detail.extend(range(args));
            if let Some(p) = s("pages") {
                h.detail.push(format!("pages {p}"));
            }
        }
        Head::Write => {
            arg(path(args).map(Cow::into_owned), &mut h);
            if let Some((lines, _)) = args.size("content") {
                h.detail.push(format!("+{lines} lines"));
            }
        }
        Head::Edit => {
            arg(path(args).map(Cow::into_owned), &mut h);
            if args.bool("replace_all") == Some(true) {
                h.detail.push("replace all".into());
            }
        }
        Head::MultiEdit => {
            arg(path(args).map(Cow::into_owned), &mut h);
            let n = args
                .raw("edits")
                .and_then(|r| {
                    serde_json::from_str::<Vec<&serde_json::value::RawValue>>(r.get()).ok()
                })
                .map_or(0, |v| v.len());
            h.detail.push(super::num::plural(n as u64, "edit", "edits"));
        }
        Head::Notebook => {
            arg(path(args).map(Cow::into_owned), &mut h);
            h.detail.extend(s("edit_mode"));
            h.detail.extend(s("cell_id").map(|c| format!("cell {c}")));
        }
        Head::Grep => {
            arg(s("pattern"), &mut h);
            h.detail.extend(s("path").map(|p| format!("in {p}")));
            h.detail.extend(s("glob").map(|g| format!("glob {g}")));
            h.detail.extend(s("type").map(|t| format!("type {t}")));
            h.detail.extend(s("output_mode"));
        }
        Head::Glob => {
            arg(s("pattern"), &mut h);
            h.detail.extend(s("path").map(|p| format!("in {p}")));
        }
        Head::Fetch => {
            arg(s("url"), &mut h);
            h.detail.extend(s("prompt").map(|p| one(&p).0));
        }
        Head::Subagent => {
            if let Some(t) = s("subagent_type") {
                h.tool = format!("{name} {}", one(&t).0);
            }
            arg(s("description").or_else(|| s("prompt")), &mut h);
            if args.bool("run_in_background") == Some(true) {
                h.detail.push("background".into());
            }
        }
        Head::Todo => {
            let todos = todos(args);
            let done = todos.iter().filter(|t| t.status == "completed").count();
            let doing = todos.iter().filter(|t| t.status == "in_progress").count();
            h.arg = format!("{} todos", todos.len());
            h.detail.push(format!("{done} done, {doing} in progress"));
        }
        Head::Ask => {
            let q = args
                .raw("questions")
                .and_then(|r| serde_json::from_str::<Vec<Question>>(r.get()).ok())
                .and_then(|v| v.into_iter().next())
                .map(|q| q.question);
            arg(q, &mut h);
        }
        // An MCP tool's first string argument (its other arguments are often flags or limits).
        Head::Mcp => match args.members.iter().find_map(|(_, v)| string(v)) {
            Some(first) => arg(Some(first.into_owned()), &mut h),
            None => h.arg = generic(args),
        },
        Head::Generic => h.arg = generic(args),
    }
    h
}

/// Whether the headline of a call of `name` says everything its input holds (a Read's path and
/// range, a Glob's pattern: only keys the headline shows, no value on several lines), so a view
/// need not show the input again. `args` must be the members of an object.
pub fn said(dialect: Dialect, name: &str, args: &Args<'_>) -> bool {
    let keys = meaning::row(dialect, name).map_or(&[][..], |r| r.said);
    if keys.is_empty() {
        return false;
    }
    args.members
        .iter()
        .all(|(k, v)| keys.contains(&k.as_ref()) && !string(v).is_some_and(|s| s.contains('\n')))
}

#[derive(serde::Deserialize)]
struct Question {
    question: String,
}

/// One item of a `TodoWrite` list.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct Todo {
    /// What to do.
    #[serde(default)]
    pub content: String,
    /// `pending`, `in_progress` or `completed`.
    #[serde(default)]
    pub status: String,
}

/// The items of a `TodoWrite` call.
pub fn todos(args: &Args<'_>) -> Vec<Todo> {
    args.raw("todos")
        .and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(name: &str, input: &str) -> Headline {
        headline(Dialect::Claude, name, &Args::parse(input))
    }

    #[test]
    fn each_tool_shows_the_argument_that_matters() {
        let b = h(
            "Bash",
            r#"{"command":"cargo test\n  --all","run_in_background":true}"#,
        );
        assert_eq!(
            (b.arg.as_str(), b.detail.clone()),
            (
                "cargo test",
                vec!["+1 lines".to_owned(), "background".to_owned()]
            )
        );
        let r = h("Read", r#"{"file_path":"/a/b.rs","offset":10,"limit":5}"#);
        assert_eq!(
            (r.arg.as_str(), r.detail[0].as_str()),
            ("/a/b.rs", "lines 10–14")
        );
        let w = h("Write", r#"{"file_path":"x","content":"a\nb\nc\n"}"#);
        assert_eq!(w.detail, vec!["+3 lines"]);
        let e = h(
            "Edit",
            r#"{"replace_all":true,"file_path":"f","old_string":"a","new_string":"b"}"#,
        );
        assert_eq!((e.arg.as_str(), e.detail[0].as_str()), ("f", "replace all"));
        let m = h("MultiEdit", r#"{"file_path":"f","edits":[{},{}]}"#);
        assert_eq!(m.detail, vec!["2 edits"]);
        let g = h(
            "Grep",
            r#"{"pattern":"fn main","path":"src","glob":"*.rs"}"#,
        );
        assert_eq!(
            (g.arg.as_str(), g.detail.join(", ")),
            ("fn main", "in src, glob *.rs".into())
        );
        assert_eq!(h("Glob", r#"{"pattern":"**/*.go"}"#).arg, "**/*.go");
        assert_eq!(
            h("WebFetch", r#"{"url":"https://x.org","prompt":"p"}"#).arg,
            "https://x.org"
        );
        let t = h(
            "Task",
            r#"{"description":"Find tests","prompt":"…","subagent_type":"Explore"}"#,
        );
        assert_eq!(
            (t.tool.as_str(), t.arg.as_str()),
            ("Task Explore", "Find tests")
        );
        let mcp = h("mcp__gh__create_issue", r#"{"title":"Bug","body":"x"}"#);
        assert_eq!(mcp.arg, "Bug");
        assert_eq!(h("mcp__gh__issue", r#"{"n":3,"repo":"a/b"}"#).arg, "a/b");
        assert_eq!(h("mcp__pw__wait_for", r#"{"time":2}"#).arg, "time: 2");
        assert_eq!(h("PowerShell", r#"{"command":"dir\nls"}"#).arg, "dir");
        let todo = h(
            "TodoWrite",
            r#"{"todos":[{"content":"a","status":"completed"},{"content":"b","status":"in_progress"}]}"#,
        );
        assert_eq!(
            (todo.arg.as_str(), todo.detail[0].as_str()),
            ("2 todos", "1 done, 1 in progress")
        );
        assert_eq!(
            h("Frobnicate", r#"{"level":3,"mode":"fast\nslow"}"#).arg,
            "level: 3, mode: fast"
        );
        assert_eq!(h("Read", "null").arg, "");
    }

    #[test]
    fn kinds_and_paths() {
        assert_eq!(kind(Dialect::Claude, "Agent"), Kind::Subagent);
        assert_eq!(kind(Dialect::Claude, "MultiEdit"), Kind::MultiEdit);
        assert_eq!(kind(Dialect::Claude, "Bash"), Kind::Other);
        let a = Args::parse(r#"{"notebook_path":"n.ipynb"}"#);
        assert_eq!(path(&a).as_deref(), Some("n.ipynb"));
        assert_eq!(first_line("\nab\ncd\n\n"), ("ab", 1));
        let said_all = Args::parse(r#"{"file_path":"a","offset":3}"#);
        assert!(said(Dialect::Claude, "Read", &said_all));
        assert!(!said(
            Dialect::Claude,
            "Read",
            &Args::parse(r#"{"file_path":"a","pages":"1"}"#)
        ));
        assert!(!said(
            Dialect::Claude,
            "Glob",
            &Args::parse(r#"{"pattern":"a\nb"}"#)
        ));
        assert!(!said(
            Dialect::Claude,
            "Bash",
            &Args::parse(r#"{"command":"ls"}"#)
        ));
    }
}
