//! What a tool call means for an ACP client (its kind, title, the files it touches, an edit as
//! a diff): the tool-meaning module's answer ([`crate::tool`], the same one the envelope's
//! `tool.call` carries as `kind`, `paths`, `command` and `edit`) said in ACP's types, and the
//! views' headline as its title. Nothing here names a tool.

use agent_client_protocol_schema::v1::{Diff, ToolCallContent, ToolCallLocation, ToolKind};
use serde_json::Value;

use crate::tool::{self, Dialect, Kind};
use crate::view::args::Args;

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

/// ACP's kind for the envelope's (ACP has no `subagent` or `plan`: see [`Kind::acp`]).
fn acp_kind(k: Kind) -> ToolKind {
    match k {
        Kind::Read => ToolKind::Read,
        Kind::Edit => ToolKind::Edit,
        Kind::Delete => ToolKind::Delete,
        Kind::Move => ToolKind::Move,
        Kind::Search => ToolKind::Search,
        Kind::Execute => ToolKind::Execute,
        Kind::Think | Kind::Subagent | Kind::Plan => ToolKind::Think,
        Kind::Fetch => ToolKind::Fetch,
        Kind::SwitchMode => ToolKind::SwitchMode,
        Kind::Other => ToolKind::Other,
    }
}

/// The ACP meaning of a call of Claude Code's tool `name` with `input`.
pub fn meaning(name: &str, input: &Value) -> Meaning {
    let m = tool::meaning(Dialect::Claude, Some(name), Some(input));
    // A read from a given line: the location says the line.
    let line = (m.kind == Kind::Read)
        .then(|| input.get("offset").and_then(Value::as_u64))
        .flatten()
        .and_then(|n| u32::try_from(n).ok());
    let locations = m
        .paths
        .iter()
        .filter_map(|p| p.text())
        .map(|p| ToolCallLocation::new(p).line(line))
        .collect();
    let mut diffs = Vec::new();
    if let Some(e) = &m.edit
        && let Some(path) = e.path.as_str()
    {
        for c in &e.changes {
            let Some(new) = c.new.as_str() else { continue };
            let d = Diff::new(path, new);
            let d = match c.old.and_then(Value::as_str) {
                Some(old) => d.old_text(old.to_owned()),
                None => d,
            };
            diffs.push(ToolCallContent::Diff(d));
        }
    }
    Meaning {
        kind: acp_kind(m.kind),
        title: title(name, input, m.kind),
        locations,
        diffs,
    }
}

/// The title: the views' headline of the call (the tool and the argument that matters), a
/// shell call's command in backquotes.
fn title(name: &str, input: &Value, kind: Kind) -> String {
    let raw = input.to_string();
    let h = crate::view::tool::headline(crate::tool::Dialect::Claude, name, &Args::parse(&raw));
    if h.arg.is_empty() {
        h.tool
    } else if kind == Kind::Execute {
        format!("`{}`", h.arg)
    } else {
        format!("{} {}", h.tool, h.arg)
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
