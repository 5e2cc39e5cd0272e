//! `--format pretty` where a row meets the width: a code block's lines are cut with `…`, never
//! wrapped or reflowed; the label of a subagent whose call the view did not see is the end of its
//! id cut between whole characters, with the view's bar and color.

use crate::common;

use boo_normalize::view::text::width;
use serde_json::json;

/// The view of `lines` (JSON values, one per input line) with `args`: its rows.
fn rows(lines: &[serde_json::Value], args: &[&str]) -> Vec<String> {
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("in.ndjson");
    std::fs::write(&f, input).unwrap();
    let out = common::bin()
        .env_remove("NO_COLOR")
        .env_remove("COLUMNS")
        .env("LANG", "C.UTF-8")
        .args(["--format", "pretty"])
        .args(args)
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn init() -> serde_json::Value {
    json!({"type": "system", "subtype": "init", "session_id": "s", "model": "m", "cwd": "/x", "tools": [], "claude_code_version": "2.1.45"})
}

fn result() -> serde_json::Value {
    json!({"type": "result", "subtype": "success", "is_error": false, "session_id": "s", "result": "x", "num_turns": 1})
}

fn text(parent: Option<&str>, id: &str, t: &str) -> serde_json::Value {
    json!({"type": "assistant", "session_id": "s", "parent_tool_use_id": parent, "message": {"id": id, "role": "assistant", "content": [{"type": "text", "text": t}]}})
}

#[test]
fn code_lines_are_cut_not_wrapped() {
    let long =
        "for i in range(10): print(i, \"aaaaaaaaaaa bbbbbbbbbbbbbbb cccccccccccccccccc dddddddd\")";
    let md = format!("code:\n\n```\n{long}\n    indented   spaced\n```\nafter");
    for w in [30usize, 40, 57] {
        let r = rows(
            &[init(), text(None, "m1", &md), result()],
            &["--width", &w.to_string()],
        );
        let at = r.iter().position(|l| l.contains("for i in")).unwrap();
        let row = &r[at];
        assert!(row.ends_with('…'), "cut with an ellipsis: {row:?}");
        assert_eq!(width(row), w, "cut at the width: {row:?}");
        // The next row is the code's next line, its spaces kept, not the rest of this one.
        assert!(r[at + 1].ends_with("      indented   spaced"), "{r:#?}");
        assert!(!r.iter().any(|l| l.contains("dddd")), "{r:#?}");
        assert!(r.iter().all(|l| width(l) <= w), "{r:#?}");
        assert!(r.iter().any(|l| l.contains("after")));
    }
    // A line that fits is whole; so is the rest of the text, word-wrapped as before.
    let r = rows(
        &[init(), text(None, "m1", &md), result()],
        &["--width", "120"],
    );
    assert!(r.iter().any(|l| l.ends_with(long)), "{r:#?}");
    // ASCII: the cut is `...`, still within the width.
    let r = rows(
        &[init(), text(None, "m1", &md), result()],
        &["--width", "30", "--ascii"],
    );
    let row = r.iter().find(|l| l.contains("for i in")).unwrap();
    assert!(row.ends_with("...") && width(row) == 30, "{row:?}");
}

#[test]
fn an_unseen_subagents_label_keeps_whole_characters_bar_and_color() {
    let family =
        "toolu_x\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}\u{1f3f3}\u{fe0f}\u{200d}\u{1f308}";
    let accents = "toolu_e\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}";
    let input = [
        init(),
        text(Some(family), "m2", "inside"),
        text(Some(accents), "m3", "inside2"),
        result(),
    ];
    let r = rows(&input, &["--width", "80"]);
    let one = r.iter().find(|l| l.contains("inside")).unwrap();
    assert!(
        one.starts_with("│ agent \u{1f3f3}\u{fe0f}\u{200d}\u{1f308} "),
        "the last whole sequence, the view's bar: {one:?}"
    );
    let two = r.iter().find(|l| l.contains("inside2")).unwrap();
    assert!(
        two.starts_with("│ agent oolu_e\u{301}\u{301}\u{301}\u{301}\u{301}\u{301} "),
        "a letter with its marks: {two:?}"
    );
    let ascii = rows(&input, &["--width", "80", "--ascii"]);
    assert!(
        ascii.iter().any(|l| l.starts_with("| agent ")),
        "{ascii:#?}"
    );
    let colored = rows(&input, &["--width", "80", "--color", "always"]);
    let row = colored.iter().find(|l| l.contains("inside2")).unwrap();
    assert!(
        row.contains("\u{1b}[35magent oolu_e"),
        "magenta label: {row:?}"
    );
}
