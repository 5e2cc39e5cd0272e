//! Tests of the tool table: every tool name Claude Code has shipped has a row, each row's meaning
//! on a real-shaped input, and no tool name outside the table; on arbitrary inputs nothing
//! panics and nothing is invented (in `tests/arbitrary.rs`).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::table::{EditShape, TABLE};
use super::*;

mod arbitrary;

/// An edit as plain values: (path, cell, [(old, new, all)]).
type PlainEdit = (
    String,
    Option<Option<String>>,
    Vec<(Option<String>, String, bool)>,
);
/// An expected edit: (path, [(old, new, all)]).
type WantEdit = (
    &'static str,
    Vec<(Option<&'static str>, &'static str, bool)>,
);

/// The meaning of a call as plain values, to compare.
#[derive(Debug, PartialEq)]
struct Plain {
    kind: &'static str,
    paths: Vec<String>,
    command: Option<String>,
    /// (path, cell, [(old, new, all)]).
    edit: Option<PlainEdit>,
}

fn plain<'a, V: Input<'a>>(m: &Meaning<V>) -> Plain {
    let t = |v: V| v.text().unwrap_or("<not a string>").to_owned();
    Plain {
        kind: m.kind.as_str(),
        paths: m
            .paths
            .iter()
            .map(|p| p.text().unwrap_or("<not a string>").to_owned())
            .collect(),
        command: m.command.map(t),
        edit: m.edit.as_ref().map(|e| {
            (
                t(e.path),
                e.cell.map(|c| c.map(t)),
                e.changes
                    .iter()
                    .map(|c| (c.old.map(t), t(c.new), c.all))
                    .collect(),
            )
        }),
    }
}

fn of(dialect: Dialect, name: &str, input: &Value) -> Plain {
    plain(&meaning(dialect, Some(name), Some(input)))
}

/// The same through the normalizer's tape.
fn of_tape(dialect: Dialect, name: &str, input: &Value) -> Plain {
    let text = serde_json::to_vec(input).unwrap();
    let mut p = crate::json::Parser::default();
    let parsed = p.parse(&text).unwrap();
    plain(&meaning(dialect, Some(name), Some(parsed.tape.as_value())))
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// Tool names of Claude Code's releases, from the format catalogue
/// (`shared/reference/stream-json-format.md`, `system/init` `tools`: renames across releases).
const CATALOGUE: &[&str] = &[
    "Task",
    "Agent",
    "Bash",
    "Glob",
    "Grep",
    "LS",
    "exit_plan_mode",
    "ExitPlanMode",
    "EnterPlanMode",
    "Read",
    "Edit",
    "MultiEdit",
    "Write",
    "NotebookRead",
    "NotebookEdit",
    "WebFetch",
    "WebSearch",
    "TodoRead",
    "TodoWrite",
    "BashOutput",
    "KillBash",
    "KillShell",
    "TaskStop",
    "TaskOutput",
    "Skill",
    "SlashCommand",
    "AskUserQuestion",
    "LSP",
    "MCPSearch",
    "ToolSearch",
];

/// Every tool name the `system/init` lines of Claude Code's captures under `fixtures/` list (but
/// the hostile fixture's made-up ones, and other agents' captures under `fixtures/agents/`,
/// whose `init` lines name their own tools), MCP tools aside.
fn fixture_tool_names() -> BTreeSet<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut names = BTreeSet::new();
    let mut dirs = vec![root.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                if p.file_name()
                    .is_some_and(|n| n != "hostile" && n != "agents")
                {
                    dirs.push(p);
                }
                continue;
            }
            let Ok(text) = std::fs::read(&p) else {
                continue;
            };
            for line in text.split(|b| *b == b'\n') {
                let Ok(v) = serde_json::from_slice::<Value>(line) else {
                    continue;
                };
                if v["type"] == "system" && v["subtype"] == "init" {
                    for t in v["tools"].as_array().into_iter().flatten() {
                        if let Some(t) = t.as_str().filter(|t| !is_mcp(t)) {
                            names.insert(t.to_owned());
                        }
                    }
                }
            }
        }
    }
    names
}

#[test]
fn every_shipped_tool_has_a_row() {
    let from_fixtures = fixture_tool_names();
    // The captures span CLI 1.0.x to 2.1.33x: they list dozens of tools.
    assert!(from_fixtures.len() > 30, "{from_fixtures:?}");
    let missing: Vec<&str> = CATALOGUE
        .iter()
        .copied()
        .chain(from_fixtures.iter().map(String::as_str))
        .filter(|n| row(Dialect::Claude, n).is_none())
        .collect();
    assert!(missing.is_empty(), "tools without a row: {missing:?}");
}

#[test]
fn a_name_has_one_row_per_dialect() {
    let mut seen = BTreeSet::new();
    for r in TABLE {
        assert!(
            seen.insert((format!("{:?}", r.dialect), r.name)),
            "{} twice",
            r.name
        );
        // A row's edit shape is read only for kind edit: a shape on another kind is a mistake.
        if r.edit != EditShape::None {
            assert!(
                r.kind == Kind::Edit || r.kind_by.is_some(),
                "{} has an edit shape",
                r.name
            );
        }
    }
}

#[test]
fn kinds_are_a_closed_list_with_acp_names() {
    let names: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "read",
            "edit",
            "delete",
            "move",
            "search",
            "execute",
            "think",
            "fetch",
            "switch_mode",
            "subagent",
            "plan",
            "other"
        ]
    );
    for k in Kind::ALL {
        assert_eq!(Kind::parse(k.as_str()), Some(k));
    }
    // ACP's ToolKind has neither subagent nor plan.
    let acp = [
        "read",
        "edit",
        "delete",
        "move",
        "search",
        "execute",
        "think",
        "fetch",
        "switch_mode",
        "other",
    ];
    assert!(Kind::ALL.iter().all(|k| acp.contains(&k.acp())));
    assert_eq!(Kind::parse("frobnicate"), None);
}

/// One row of the table test: a call and what it means.
struct Case {
    dialect: Dialect,
    name: &'static str,
    input: Value,
    kind: &'static str,
    paths: &'static [&'static str],
    command: Option<&'static str>,
    edit: Option<WantEdit>,
}

fn case(name: &'static str, input: Value, kind: &'static str) -> Case {
    Case {
        dialect: Dialect::Claude,
        name,
        input,
        kind,
        paths: &[],
        command: None,
        edit: None,
    }
}

impl Case {
    fn paths(mut self, p: &'static [&'static str]) -> Case {
        self.paths = p;
        self
    }
    fn command(mut self, c: &'static str) -> Case {
        self.command = Some(c);
        self
    }
    fn edit(
        mut self,
        path: &'static str,
        ch: Vec<(Option<&'static str>, &'static str, bool)>,
    ) -> Case {
        self.edit = Some((path, ch));
        self
    }
    fn dialect(mut self, d: Dialect) -> Case {
        self.dialect = d;
        self
    }
}

fn cases() -> Vec<Case> {
    use Dialect::*;
    vec![
        case("Bash", json!({"command": "cargo test", "timeout": 1000}), "execute").command("cargo test"),
        case("PowerShell", json!({"command": "dir"}), "execute").command("dir"),
        case("Read", json!({"file_path": "/r/a.rs", "offset": 3}), "read").paths(&["/r/a.rs"]),
        case("NotebookRead", json!({"notebook_path": "/n.ipynb"}), "read").paths(&["/n.ipynb"]),
        case("LS", json!({"path": "/r"}), "search").paths(&["/r"]),
        case("Glob", json!({"pattern": "**/*.rs", "path": "/r/src"}), "search").paths(&["/r/src"]),
        case("Glob", json!({"pattern": "**/*.rs"}), "search"),
        case("Grep", json!({"pattern": "fn main", "path": "/r"}), "search").paths(&["/r"]),
        case("Write", json!({"file_path": "/r/new.txt", "content": "a\nb\n"}), "edit")
            .paths(&["/r/new.txt"])
            .edit("/r/new.txt", vec![(None, "a\nb\n", false)]),
        case("Edit", json!({"file_path": "/r/a.rs", "old_string": "x", "new_string": "y", "replace_all": true}), "edit")
            .paths(&["/r/a.rs"])
            .edit("/r/a.rs", vec![(Some("x"), "y", true)]),
        // No old text: no guess at the edit, the path is still the file's.
        case("Edit", json!({"file_path": "/r/a.rs", "new_string": "y"}), "edit").paths(&["/r/a.rs"]),
        case("MultiEdit", json!({"file_path": "/r/m.rs", "edits": [
            {"old_string": "a", "new_string": "b"},
            {"old_string": "c", "new_string": "d", "replace_all": true}]}), "edit")
            .paths(&["/r/m.rs"])
            .edit("/r/m.rs", vec![(Some("a"), "b", false), (Some("c"), "d", true)]),
        // One edit without its new text: the whole edit is unknown.
        case("MultiEdit", json!({"file_path": "/r/m.rs", "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c"}]}), "edit")
            .paths(&["/r/m.rs"]),
        case("MultiEdit", json!({"file_path": "/r/m.rs", "edits": []}), "edit").paths(&["/r/m.rs"]),
        case("NotebookEdit", json!({"notebook_path": "/n.ipynb", "cell_id": "c1", "new_source": "print(1)"}), "edit")
            .paths(&["/n.ipynb"])
            .edit("/n.ipynb", vec![(None, "print(1)", false)]),
        case("WebFetch", json!({"url": "https://x.org", "prompt": "p"}), "fetch"),
        case("WebSearch", json!({"query": "rust"}), "fetch"),
        case("Task", json!({"description": "d", "prompt": "p", "subagent_type": "Explore"}), "subagent"),
        case("Agent", json!({"prompt": "p"}), "subagent"),
        case("TodoWrite", json!({"todos": []}), "plan"),
        case("TodoRead", json!({}), "plan"),
        case("ExitPlanMode", json!({"plan": "p"}), "switch_mode"),
        case("exit_plan_mode", json!({"plan": "p"}), "switch_mode"),
        case("EnterPlanMode", json!({}), "switch_mode"),
        case("ToolSearch", json!({"query": "q"}), "search"),
        case("BashOutput", json!({"bash_id": "b1"}), "other"),
        case("KillShell", json!({"shell_id": "b1"}), "other"),
        case("Skill", json!({"skill": "pdf"}), "other"),
        case("AskUserQuestion", json!({"questions": []}), "other"),
        case("mcp__gh__create_issue", json!({"title": "t", "path": "/etc/passwd", "command": "rm"}), "other"),
        case("Frobnicate", json!({"file_path": "/x", "command": "ls"}), "other"),
        // The text editor tool: its kind follows its command.
        case("str_replace_based_edit_tool", json!({"command": "view", "path": "/r/a"}), "read").paths(&["/r/a"]),
        case("str_replace_based_edit_tool", json!({"command": "str_replace", "path": "/r/a", "old_str": "x", "new_str": "y"}), "edit")
            .paths(&["/r/a"])
            .edit("/r/a", vec![(Some("x"), "y", false)]),
        // `create` writes the whole file, as `Write` does: no old text.
        case("str_replace_based_edit_tool", json!({"command": "create", "path": "/r/new.md", "file_text": "# t\n"}), "edit")
            .paths(&["/r/new.md"])
            .edit("/r/new.md", vec![(None, "# t\n", false)]),
        case("str_replace_based_edit_tool", json!({"command": "create", "path": "/r/new.md"}), "edit").paths(&["/r/new.md"]),
        // `insert` names no old text and is not the whole file: no edit, no guess.
        case("str_replace_based_edit_tool", json!({"command": "insert", "path": "/r/a", "insert_line": 3, "new_str": "z"}), "edit").paths(&["/r/a"]),
        case("str_replace_based_edit_tool", json!({"command": "undo_edit", "path": "/r/a"}), "edit").paths(&["/r/a"]),
        case("create", json!({"path": "/c/n.txt", "file_text": "hi"}), "edit")
            .dialect(Copilot)
            .paths(&["/c/n.txt"])
            .edit("/c/n.txt", vec![(None, "hi", false)]),
        case("edit", json!({"path": "/c/n.txt", "old_str": "hi", "new_str": "ho"}), "edit")
            .dialect(Copilot)
            .paths(&["/c/n.txt"])
            .edit("/c/n.txt", vec![(Some("hi"), "ho", false)]),
        // A patch text (Copilot CLI 1.0.102's capture): the files its headers name; the
        // changes are not replacements, so no edit.
        case("apply_patch", json!({"arguments": "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n"}), "edit")
            .dialect(Copilot)
            .paths(&["hello.txt"]),
        case("apply_patch", json!({"arguments": "*** Begin Patch\n*** Update File: /w/a.rs\n*** Move to: /w/b.rs\n@@\n-x\n+y\n*** Delete File: /w/c.rs\n*** End Patch"}), "edit")
            .dialect(Copilot)
            .paths(&["/w/a.rs", "/w/b.rs", "/w/c.rs"]),
        case("apply_patch", json!({"arguments": 3}), "edit").dialect(Copilot),
        // Other agents' names: the same table, their own members.
        case("run_shell_command", json!({"command": "ls -la", "directory": "/w"}), "execute")
            .dialect(Gemini)
            .paths(&["/w"])
            .command("ls -la"),
        case("replace", json!({"file_path": "/w/a.py", "old_string": "1", "new_string": "2"}), "edit")
            .dialect(Gemini)
            .paths(&["/w/a.py"])
            .edit("/w/a.py", vec![(Some("1"), "2", false)]),
        case("write_file", json!({"file_path": "/w/b", "content": "c"}), "edit")
            .dialect(Gemini)
            .paths(&["/w/b"])
            .edit("/w/b", vec![(None, "c", false)]),
        case("read_many_files", json!({"paths": ["/w/a", "/w/b", 3]}), "read")
            .dialect(Gemini)
            .paths(&["/w/a", "/w/b"]),
        case("edit", json!({"filePath": "/o/a.ts", "oldString": "a", "newString": "b", "replaceAll": false}), "edit")
            .dialect(OpenCode)
            .paths(&["/o/a.ts"])
            .edit("/o/a.ts", vec![(Some("a"), "b", false)]),
        case("bash", json!({"command": "npm test"}), "execute").dialect(OpenCode).command("npm test"),
        case("command_execution", json!({"command": "bash -lc ls", "status": "completed"}), "execute")
            .dialect(Codex)
            .command("bash -lc ls"),
        case("file_change", json!({"changes": [{"path": "/c/a", "kind": "update"}, {"path": "/c/b", "kind": "add"}]}), "edit")
            .dialect(Codex)
            .paths(&["/c/a", "/c/b"]),
        case("collab_tool_call", json!({"tool": "spawn_agent"}), "subagent").dialect(Codex),
        case("collab_tool_call", json!({"tool": "wait"}), "other").dialect(Codex),
        // A name is a tool only in its own dialect.
        case("Bash", json!({"command": "ls"}), "other").dialect(Gemini),
        case("edit", json!({"filePath": "/o/a.ts", "oldString": "a", "newString": "b"}), "other"),
    ]
}

#[test]
fn each_tool_means_what_its_row_says() {
    for c in cases() {
        let want = Plain {
            kind: c.kind,
            paths: strs(c.paths),
            command: c.command.map(str::to_owned),
            edit: c.edit.map(|(p, ch)| {
                let cell = (c.name == "NotebookEdit").then(|| Some("c1".to_owned()));
                (
                    p.to_owned(),
                    cell,
                    ch.into_iter()
                        .map(|(o, n, a)| (o.map(str::to_owned), n.to_owned(), a))
                        .collect(),
                )
            }),
        };
        let got = of(c.dialect, c.name, &c.input);
        assert_eq!(got, want, "{} {}", c.name, c.input);
        assert_eq!(
            of_tape(c.dialect, c.name, &c.input),
            want,
            "tape: {}",
            c.name
        );
        assert_eq!(kind(c.dialect, c.name, Some(&c.input)).as_str(), c.kind);
    }
}

#[test]
fn no_name_or_no_input_gives_no_guess() {
    let ls = json!({"command": "ls"});
    let m = meaning::<&Value>(Dialect::Claude, None, Some(&ls));
    assert_eq!(plain(&m), plain(&Meaning::<&Value>::other()));
    let m = meaning::<&Value>(Dialect::Claude, Some("Bash"), None);
    assert_eq!((m.kind, m.command, m.paths.len()), (Kind::Execute, None, 0));
    for input in [json!(null), json!("ls"), json!([1]), json!({"command": 3})] {
        let m = of(Dialect::Claude, "Bash", &input);
        assert_eq!((m.kind, m.command), ("execute", None), "{input}");
    }
    assert!(is_subagent(Dialect::Claude, "Task") && is_subagent(Dialect::Claude, "Agent"));
    assert!(
        !is_subagent(Dialect::Claude, "Bash") && !is_subagent(Dialect::Codex, "collab_tool_call")
    );
}

#[test]
fn a_result_patch_needs_its_path_and_hunks() {
    let r = json!({"filePath": "/a", "structuredPatch": [{"oldStart": 1, "lines": ["-a", "+b"]}]});
    let (p, h) = result_patch(Some(&r)).unwrap();
    assert_eq!(
        (p.as_str(), h.as_array().map(Vec::len)),
        (Some("/a"), Some(1))
    );
    assert!(result_patch(Some(&json!({"filePath": "/a"}))).is_none());
    assert!(result_patch(Some(&json!({"structuredPatch": []}))).is_none());
    assert!(result_patch(Some(&json!("text"))).is_none());
    assert!(result_patch::<&Value>(None).is_none());
}

/// The code under `src/` that is not a test nor a comment: each file up to its first
/// `#[cfg(test)]` module, without comment lines and the test-only files.
fn non_test_sources(dir: &std::path::Path, out: &mut Vec<(std::path::PathBuf, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            non_test_sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") && !p.ends_with("tests.rs") {
            let text = std::fs::read_to_string(&p).unwrap();
            let code = match text.find("#[cfg(test)]\nmod ") {
                Some(i) => &text[..i],
                None => &text[..],
            };
            let code = code
                .lines()
                .map(|l| {
                    if l.trim_start().starts_with("//") {
                        ""
                    } else {
                        l
                    }
                })
                .collect::<Vec<_>>()
                .join("\n");
            out.push((p, code));
        }
    }
}

/// Tool meaning lives in one place: no file under `src/` but this module names a Claude Code
/// tool in a string literal. Exempt: `probe`'s scripted scenarios (they play a CLI that calls
/// tools) and tests (their inputs name tools, as users' guard lists do).
#[test]
fn no_tool_name_outside_the_table() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    non_test_sources(&src, &mut files);
    assert!(files.len() > 100, "{}", files.len());
    let mut found = Vec::new();
    for (path, code) in &files {
        let rel = path.strip_prefix(&src).unwrap();
        if rel.starts_with("tool") || rel.starts_with("probe") {
            continue;
        }
        for r in TABLE.iter().filter(|r| r.dialect == Dialect::Claude) {
            let lit = format!("\"{}\"", r.name);
            if let Some(at) = code.find(&lit) {
                let line = code[..at].lines().count();
                found.push(format!("{}:{line}: {}", rel.display(), r.name));
            }
        }
    }
    assert!(found.is_empty(), "tool names outside src/tool/: {found:#?}");
}
