//! What a tool call means for an ACP client (its kind, title, the files it touches, an edit as
//! a diff), derived from the tool's name and input.
//!
//! TEMPORARY: the envelope is gaining these facts on every `tool.call` (`kind`, `paths`,
//! `command`, `edit`: branch s10-tools). Once it has them, [`meaning`] is replaced by a reading
//! of those fields; nothing else in `acp` looks at tool names or inputs.

use agent_client_protocol_schema::v1::{Diff, ToolCallContent, ToolCallLocation, ToolKind};
use serde_json::Value;

/// A tool call as ACP shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Meaning {
    /// Its kind.
    pub kind: ToolKind,
    /// A one-line title.
    pub title: String,
    /// The files it reads or changes.
    pub locations: Vec<ToolCallLocation>,
    /// An edit, as diffs (old and new text).
    pub diffs: Vec<ToolCallContent>,
}

fn s<'a>(input: &'a Value, key: &str) -> Option<&'a str> {
    input.get(key).and_then(Value::as_str)
}

/// REPLACE WITH THE ENVELOPE'S `kind`/`paths`/`command`/`edit` FIELDS (branch s10-tools): the
/// ACP meaning of a call of tool `name` with `input`.
pub fn meaning(name: &str, input: &Value) -> Meaning {
    let path = s(input, "file_path")
        .or_else(|| s(input, "notebook_path"))
        .or_else(|| s(input, "path"));
    let loc = |line: Option<u32>| {
        path.map(|p| ToolCallLocation::new(p).line(line))
            .into_iter()
            .collect::<Vec<_>>()
    };
    let title_path = |verb: &str| match path {
        Some(p) => format!("{verb} {p}"),
        None => verb.to_owned(),
    };
    let (kind, title, locations, diffs) = match name {
        "Read" | "NotebookRead" => {
            let line = input
                .get("offset")
                .and_then(Value::as_u64)
                .map(|n| n as u32);
            (ToolKind::Read, title_path("Read"), loc(line), vec![])
        }
        "Write" => {
            let diffs = match (path, s(input, "content")) {
                (Some(p), Some(c)) => vec![ToolCallContent::Diff(Diff::new(p, c))],
                _ => vec![],
            };
            (ToolKind::Edit, title_path("Write"), loc(None), diffs)
        }
        "Edit" | "MultiEdit" | "NotebookEdit" => {
            let mut diffs = Vec::new();
            fn pair(e: &Value) -> Option<(&str, &str)> {
                Some((s(e, "old_string").unwrap_or(""), s(e, "new_string")?))
            }
            let edits: Vec<(&str, &str)> = match input.get("edits").and_then(Value::as_array) {
                Some(list) => list.iter().filter_map(pair).collect(),
                None => pair(input).into_iter().collect(),
            };
            if let Some(p) = path {
                for (old, new) in edits {
                    diffs.push(ToolCallContent::Diff(
                        Diff::new(p, new).old_text(old.to_owned()),
                    ));
                }
            }
            (ToolKind::Edit, title_path("Edit"), loc(None), diffs)
        }
        "Bash" | "BashOutput" | "KillShell" | "KillBash" => {
            let title = s(input, "command")
                .map(|c| format!("`{c}`"))
                .or_else(|| s(input, "description").map(str::to_owned))
                .unwrap_or_else(|| name.to_owned());
            (ToolKind::Execute, title, vec![], vec![])
        }
        "Glob" | "Grep" | "LS" => {
            let title = match s(input, "pattern") {
                Some(p) => format!("{name} {p}"),
                None => title_path(name),
            };
            (ToolKind::Search, title, loc(None), vec![])
        }
        "WebFetch" | "WebSearch" => {
            let what = s(input, "url").or_else(|| s(input, "query")).unwrap_or("");
            (
                ToolKind::Fetch,
                format!("{name} {what}").trim().to_owned(),
                vec![],
                vec![],
            )
        }
        "Task" | "Agent" => {
            let title = s(input, "description").unwrap_or(name).to_owned();
            (ToolKind::Think, title, vec![], vec![])
        }
        "ExitPlanMode" | "EnterPlanMode" => (ToolKind::SwitchMode, name.to_owned(), vec![], vec![]),
        _ => (ToolKind::Other, name.to_owned(), vec![], vec![]),
    };
    Meaning {
        kind,
        title,
        locations,
        diffs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_locations_and_diffs() {
        let m = meaning("Read", &json!({"file_path": "/r/a.rs", "offset": 10}));
        assert_eq!(m.kind, ToolKind::Read);
        assert_eq!(m.locations, vec![ToolCallLocation::new("/r/a.rs").line(10)]);
        let m = meaning(
            "Edit",
            &json!({"file_path": "/r/a.rs", "old_string": "a", "new_string": "b"}),
        );
        assert_eq!(m.kind, ToolKind::Edit);
        assert_eq!(
            serde_json::to_value(&m.diffs).unwrap(),
            json!([{"type": "diff", "path": "/r/a.rs", "oldText": "a", "newText": "b"}])
        );
        let m = meaning("Write", &json!({"file_path": "/r/n.txt", "content": "x"}));
        assert_eq!(
            serde_json::to_value(&m.diffs).unwrap(),
            // A new file: no old text.
            json!([{"type": "diff", "path": "/r/n.txt", "newText": "x"}])
        );
        assert_eq!(meaning("Bash", &json!({"command": "ls"})).title, "`ls`");
        assert_eq!(meaning("mcp__x__y", &json!({})).kind, ToolKind::Other);
    }
}
