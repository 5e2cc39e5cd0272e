//! Event types of other agents that no documentation lists, seen in their real output: Copilot
//! CLI's `model.call_*` (a model call's lifecycle; a failure is an `api.error`), Qwen Code's
//! `goal_state` (skipped without a goal, informational with one); the pretty view, which
//! names another agent's undocumented types once each instead of warning on every line; and
//! another agent's tool calls headlined from its own rows of the tool table in both views.

use crate::common::{events, root, run};

fn envelope_of(rel: &str) -> Vec<serde_json::Value> {
    let p = root().join(rel);
    let out = run(&[p.to_str().unwrap()], b"");
    events(&out.stdout)
}

fn pretty_of(rel: &str) -> String {
    let p = root().join(rel);
    let out = run(
        &[
            "--format",
            "pretty",
            "--color",
            "never",
            p.to_str().unwrap(),
        ],
        b"",
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn copilot_model_calls_are_read_and_a_failed_one_is_an_api_error() {
    for v in ["1.0.92", "1.0.102"] {
        let ev = envelope_of(&format!("fixtures/agents/copilot/{v}/api_error.ndjson"));
        assert!(
            !ev.iter()
                .any(|e| e["type"] == "unknown"
                    && e["name"].as_str().unwrap().starts_with("model.call")),
            "{v}"
        );
        let errors: Vec<_> = ev.iter().filter(|e| e["type"] == "api.error").collect();
        assert_eq!(errors.len(), 1, "{v}");
        assert_eq!(errors[0]["error"], "invalid_request", "{v}");
        assert_eq!(errors[0]["details"]["api_error_status"], 400, "{v}");
        assert_eq!(errors[0]["model"], "gpt-5.4", "{v}");
        // No tokens invented for the failed call.
        assert!(!ev.iter().any(|e| e["type"] == "usage"), "{v}");
        let ok = envelope_of(&format!("fixtures/agents/copilot/{v}/plain.ndjson"));
        let skipped = ok
            .iter()
            .filter(|e| e["type"] == "skipped")
            .filter(|e| e["reason"].as_str().unwrap().contains("model call"))
            .count();
        assert!(skipped >= 3, "{v}: {skipped}");
        assert!(!ok.iter().any(|e| e["type"] == "api.error"), "{v}");
    }
}

#[test]
fn qwen_goal_state_is_skipped_without_a_goal_and_named_with_one() {
    let ev = envelope_of("fixtures/agents/qwen/0.24.4/turns.ndjson");
    assert!(!ev.iter().any(|e| e["type"] == "unknown"));
    assert!(
        ev.iter()
            .any(|e| e["type"] == "skipped" && e["reason"] == "Qwen's goal state: no goal, idle")
    );
    let lines = [
        r#"{"type":"system","subtype":"init","session_id":"s","qwen_code_version":"0.24.4","model":"m"}"#,
        r#"{"type":"stream_event","session_id":"s","parent_tool_use_id":null,"event":{"type":"goal_state","goal_state":{"v":2,"goal":"ship the fix","activity":"working"}}}"#,
    ];
    let out = run(&[], (lines.join("\n") + "\n").as_bytes());
    let ev = events(&out.stdout);
    let info: Vec<_> = ev.iter().filter(|e| e["type"] == "informational").collect();
    assert_eq!(info.len(), 1, "{ev:?}");
    assert!(
        info[0].to_string().contains("goal: ship the fix (working)"),
        "{ev:?}"
    );
}

#[test]
fn the_pretty_view_names_another_agents_undocumented_types_once() {
    let qwen = pretty_of("fixtures/agents/qwen/0.24.4/turns.ndjson");
    assert!(!qwen.contains("unknown"), "{qwen}");
    assert!(!qwen.contains("goal_state"), "{qwen}");
    let copilot = pretty_of("fixtures/agents/copilot/1.0.102/bash.ndjson");
    assert!(!copilot.contains("unknown type"), "{copilot}");
    let named = copilot
        .lines()
        .filter(|l| l.contains("event session.background_tasks_changed"))
        .count();
    assert_eq!(named, 1, "{copilot}");
    // Claude Code's own unknown lines still warn, each time.
    let claude = b"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\",\"model\":\"m\",\"tools\":[],\"claude_code_version\":\"2.1.45\"}\n{\"type\":\"brand_new\",\"session_id\":\"s\"}\n{\"type\":\"brand_new\",\"session_id\":\"s\"}\n";
    let out = run(&["--format", "pretty", "--color", "never"], claude);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.matches("unknown type brand_new").count(), 2, "{text}");
}

/// Another agent's tool calls get the headline its row in the tool table gives (the command of
/// a shell call, the path of a read), in the terminal view and in the report, not Claude Code's
/// generic `key: value` list for a name it does not know.
#[test]
fn another_agents_calls_are_headlined_from_its_rows() {
    let cases = [
        (
            "codex/0.169.0",
            "command_execution /bin/bash -lc 'echo one'",
        ),
        ("gemini/0.59.0", "run_shell_command echo one"),
        ("qwen/0.24.2", "run_shell_command echo one"),
        ("opencode/1.18.31", "bash echo one"),
        ("copilot/1.0.102", "bash echo one"),
    ];
    for (dir, row) in cases {
        let rel = format!("fixtures/agents/{dir}/parallel_tools.ndjson");
        let text = pretty_of(&rel);
        assert!(
            text.lines().any(|l| l.ends_with(row) && l.contains('⏺')),
            "{dir}: no tool row `{row}` in\n{text}"
        );
        assert!(
            !text.contains("command: echo"),
            "{dir}: generic headline\n{text}"
        );
        let dir_out = tempfile::tempdir().unwrap();
        let html = dir_out.path().join("run.html");
        let p = root().join(&rel);
        run(
            &["report", p.to_str().unwrap(), "-o", html.to_str().unwrap()],
            b"",
        );
        let page = std::fs::read_to_string(&html).unwrap();
        // The timeline's bars (drawn when the agent's lines carry times) are titled
        // `name: headline`: `run_shell_command: echo one` is the row's headline, not a list.
        let page = without_titles(&page);
        assert!(
            !page.contains("command: echo"),
            "{dir}: generic headline in the report"
        );
    }
}

/// `page` without its SVG `<title>…</title>` elements.
fn without_titles(page: &str) -> String {
    let mut out = String::new();
    let mut rest = page;
    while let Some(i) = rest.find("<title>") {
        out.push_str(&rest[..i]);
        rest = rest[i..]
            .find("</title>")
            .map_or("", |j| &rest[i + j + "</title>".len()..]);
    }
    out.push_str(rest);
    out
}
