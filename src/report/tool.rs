//! The one-line headline of a tool call: the argument that matters for each known tool (Bash
//! command, file path and range, pattern, URL, subagent type and description, an MCP tool's
//! first argument), `key: value` pairs for unknown tools. Plain text; the caller escapes it.

use serde_json::Value;

/// At most this many characters of a headline.
pub const MAX: usize = 160;

fn get<'a>(input: &'a Value, k: &str) -> Option<&'a str> {
    input.get(k).and_then(Value::as_str)
}

/// The headline of a call to `name` with `input` (without the tool name).
pub fn headline(name: &str, input: &Value) -> String {
    let h = match name {
        "Bash" | "BashOutput" | "PowerShell" => get(input, "command")
            .or_else(|| get(input, "bash_id"))
            .map(first_line),
        "Read" => get(input, "file_path").map(|p| {
            let off = input.get("offset").and_then(Value::as_u64);
            let lim = input.get("limit").and_then(Value::as_u64);
            match (off, lim) {
                (Some(o), Some(l)) => format!("{p}:{o}-{}", o + l.saturating_sub(1)),
                (Some(o), None) => format!("{p}:{o}-"),
                (None, Some(l)) => format!("{p}:1-{l}"),
                (None, None) => p.to_owned(),
            }
        }),
        "Write" | "Edit" | "MultiEdit" => get(input, "file_path").map(str::to_owned),
        "NotebookEdit" | "NotebookRead" => get(input, "notebook_path").map(str::to_owned),
        "Grep" => get(input, "pattern").map(|p| match get(input, "path") {
            Some(d) => format!("{p}  in {d}"),
            None => p.to_owned(),
        }),
        "Glob" => get(input, "pattern").map(|p| match get(input, "path") {
            Some(d) => format!("{p}  in {d}"),
            None => p.to_owned(),
        }),
        "LS" => get(input, "path").map(str::to_owned),
        "WebFetch" => get(input, "url").map(str::to_owned),
        "WebSearch" => get(input, "query").map(str::to_owned),
        "Task" | "Agent" => {
            let t = get(input, "subagent_type").unwrap_or("agent");
            Some(match get(input, "description") {
                Some(d) => format!("{t}: {d}"),
                None => t.to_owned(),
            })
        }
        "TodoWrite" => input.get("todos").and_then(Value::as_array).map(|t| {
            let done = t
                .iter()
                .filter(|x| get(x, "status") == Some("completed"))
                .count();
            format!("{} todos, {done} done", t.len())
        }),
        "KillShell" | "KillBash" => get(input, "shell_id").map(str::to_owned),
        _ if name.starts_with("mcp__") => first_string(input),
        _ => None,
    };
    clip(&h.unwrap_or_else(|| pairs(input)))
}

/// Whether the headline already says everything the input holds (a Read's path and range, a
/// Glob's pattern), so the input need not be shown again.
pub fn said_by_headline(name: &str, input: &Value) -> bool {
    let keys: &[&str] = match name {
        "Read" => &["file_path", "offset", "limit"],
        "Grep" => &["pattern", "path"],
        "Glob" => &["pattern", "path"],
        "LS" => &["path"],
        "WebSearch" => &["query"],
        "WebFetch" => &["url"],
        "KillShell" | "KillBash" => &["shell_id"],
        _ => return false,
    };
    input.as_object().is_some_and(|o| {
        o.iter().all(|(k, v)| {
            keys.contains(&k.as_str()) && !v.as_str().is_some_and(|s| s.contains('\n'))
        })
    })
}

/// The first line of `s`, with a mark when more lines follow.
fn first_line(s: &str) -> String {
    let mut lines = s.lines();
    let first = lines.next().unwrap_or("");
    match lines.next() {
        Some(_) => format!("{first} …"),
        None => first.to_owned(),
    }
}

fn first_string(input: &Value) -> Option<String> {
    input
        .as_object()?
        .values()
        .find_map(Value::as_str)
        .map(first_line)
}

/// `key: value` pairs of an object (values shortened), for tools without a rule.
fn pairs(input: &Value) -> String {
    let Some(o) = input.as_object() else {
        return match input {
            Value::Null => String::new(),
            v => v.to_string(),
        };
    };
    let mut out = String::new();
    for (k, v) in o {
        if !out.is_empty() {
            out.push_str(", ");
        }
        let v = match v {
            Value::String(s) => first_line(s),
            v => v.to_string(),
        };
        out.push_str(k);
        out.push_str(": ");
        out.push_str(&v);
        if out.chars().count() > MAX {
            break;
        }
    }
    out
}

/// `s` cut to [`MAX`] characters (with `…`), on one line.
pub fn clip(s: &str) -> String {
    clip_to(s, MAX)
}

/// `s` cut to `max` characters (with `…`), on one line.
pub fn clip_to(s: &str, max: usize) -> String {
    let one: String = s
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    if one.chars().count() <= max {
        return one;
    }
    let mut t: String = one.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn headlines() {
        assert_eq!(
            headline("Bash", &json!({"command": "ls -la\npwd"})),
            "ls -la …"
        );
        assert_eq!(
            headline(
                "Read",
                &json!({"file_path": "/a.rs", "offset": 10, "limit": 5})
            ),
            "/a.rs:10-14"
        );
        assert_eq!(
            headline("Grep", &json!({"pattern": "fn main", "path": "src"})),
            "fn main  in src"
        );
        assert_eq!(
            headline(
                "Agent",
                &json!({"subagent_type": "Explore", "description": "look"})
            ),
            "Explore: look"
        );
        assert_eq!(
            headline("mcp__gh__issue", &json!({"n": 3, "repo": "a/b"})),
            "a/b"
        );
        assert_eq!(
            headline("Mystery", &json!({"a": 1, "b": "x"})),
            "a: 1, b: x"
        );
        assert_eq!(headline("Bash", &json!({})), "");
        assert_eq!(
            headline("Write", &json!("x".repeat(500))).chars().count(),
            MAX
        );
    }
}
