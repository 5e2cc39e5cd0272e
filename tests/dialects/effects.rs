//! What a tool call did and when, said the same way for every agent (audit #5, #6, #8, #9): a
//! command's `exit_code` where its agent states it, a patch's `paths`, each line's `timestamp`
//! on its events, and `outcome` `error` for a turn that ended on a failed API call.

use serde_json::{Value, json};

use crate::common::{events, of_type, root, run};

fn envelope_of(rel: &str) -> Vec<Value> {
    let p = root().join(rel);
    events(&run(&[p.to_str().unwrap()], b"").stdout)
}

/// `[name, is_error, exit_code]` of each `tool.result` of kind `execute`.
fn exits(rel: &str) -> Vec<Value> {
    envelope_of(rel)
        .iter()
        .filter(|e| e["type"] == "tool.result" && e["kind"] == "execute")
        .map(|e| json!([e["name"], e["is_error"], e["exit_code"]]))
        .collect()
}

#[test]
fn exit_codes_are_read_where_each_agent_states_them() {
    let cases: &[(&str, Value)] = &[
        // Claude Code: only a failed command's "Exit code N".
        (
            "fixtures/real/backflow__claude-output.ndjson",
            json!(["Bash", true, 127]),
        ),
        (
            "fixtures/agents/codex/documented-two-runs.jsonl",
            json!(["command_execution", true, 1]),
        ),
        (
            "fixtures/agents/codex/0.171.0/bash.ndjson",
            json!(["command_execution", false, 0]),
        ),
        (
            "fixtures/agents/amp/documented-failed-shell.jsonl",
            json!(["shell_command", false, 1]),
        ),
        (
            "fixtures/agents/cursor/documented-parallel-calls.jsonl",
            json!(["shellToolCall", false, 1]),
        ),
        (
            "fixtures/agents/opencode/1.18.33/bash.ndjson",
            json!(["bash", false, 0]),
        ),
        (
            "fixtures/agents/copilot/documented-stdout.jsonl",
            json!(["bash", true, 1]),
        ),
        (
            "fixtures/agents/copilot/1.0.102/bash.ndjson",
            json!(["bash", false, 0]),
        ),
        // Qwen Code writes its block (with "Exit Code: N") for a command that printed nothing.
        (
            "fixtures/agents/qwen/0.24.4/turns.ndjson",
            json!(["run_shell_command", false, 0]),
        ),
        // Qwen's success with output, Gemini CLI's results: nothing states the status.
        (
            "fixtures/agents/qwen/0.24.4/bash.ndjson",
            json!(["run_shell_command", false, null]),
        ),
        (
            "fixtures/agents/gemini/0.61.0/bash.ndjson",
            json!(["run_shell_command", false, null]),
        ),
    ];
    for (rel, want) in cases {
        let got = exits(rel);
        assert!(got.contains(want), "{rel}: {got:?}");
    }
    // A Claude Code command that succeeded states no status (the CLI calls some non-zero exits
    // a success); a result of another kind has none either.
    for e in envelope_of("fixtures/real/backflow__claude-output.ndjson") {
        if e["type"] == "tool.result" && (e["is_error"] == false || e["kind"] != "execute") {
            assert!(e["exit_code"].is_null(), "{e}");
        }
    }
}

#[test]
fn a_copilot_patch_names_its_files() {
    for v in ["1.0.92", "1.0.102"] {
        let ev = envelope_of(&format!("fixtures/agents/copilot/{v}/write_edit.ndjson"));
        let paths: Vec<Value> = of_type(&ev, "tool.call")
            .iter()
            .filter(|c| c["name"] == "apply_patch")
            .map(|c| c["paths"].clone())
            .collect();
        assert_eq!(paths, [json!(["hello.txt"]), json!(["notes.txt"])], "{v}");
    }
}

/// Every event made of a Gemini CLI, Copilot CLI or OpenCode line that Claude Code's rule gives a
/// `timestamp` (those of assistant, user and stream_event lines) carries the line's, in RFC 3339.
#[test]
fn line_times_reach_the_events() {
    let cases = [
        ("fixtures/agents/gemini/0.61.0/bash.ndjson", None),
        ("fixtures/agents/copilot/1.0.102/bash.ndjson", None),
        (
            "fixtures/agents/opencode/1.18.33/bash.ndjson",
            Some("2026-12-03T11:14:14.174Z"),
        ),
    ];
    for (rel, call_at) in cases {
        let ev = envelope_of(rel);
        let raw: Vec<Value> = std::fs::read_to_string(root().join(rel))
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        for t in ["tool.call", "tool.result", "user.text"] {
            for e in of_type(&ev, t) {
                let at = e["timestamp"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{rel}: {e}"));
                assert!(at.ends_with('Z') && at.len() == 24, "{rel}: {at}");
                let line = &raw[e["line"].as_u64().unwrap() as usize - 1];
                if let Some(s) = line["timestamp"].as_str() {
                    assert_eq!(at, s, "{rel}");
                }
            }
        }
        if let Some(at) = call_at {
            assert_eq!(of_type(&ev, "tool.call")[0]["timestamp"], at, "{rel}");
        }
    }
}

/// The API-error scenario of every agent: the turn's outcome is `error`, as Claude Code's.
#[test]
fn a_failed_api_call_ends_the_turn_as_an_error_for_every_agent() {
    let rels = [
        "fixtures/agents/codex/0.171.0/api_error.ndjson",
        "fixtures/agents/codex/documented-failure.jsonl",
        "fixtures/agents/gemini/0.61.0/api_error.ndjson",
        "fixtures/agents/gemini/documented-api-error.jsonl",
        "fixtures/agents/qwen/0.24.4/api_error.ndjson",
        "fixtures/agents/qwen/0.24.4/api_error.partial.ndjson",
        "fixtures/agents/opencode/1.18.33/api_error.ndjson",
        "fixtures/agents/copilot/1.0.102/api_error.ndjson",
    ];
    for rel in rels {
        let ev = envelope_of(rel);
        let ends = of_type(&ev, "turn.end");
        assert_eq!(ends.len(), 1, "{rel}");
        assert_eq!(ends[0]["outcome"], "error", "{rel}: {}", ends[0]);
        assert_eq!(ends[0]["is_error"], true, "{rel}");
    }
    let qwen = envelope_of("fixtures/agents/qwen/0.24.4/api_error.ndjson");
    assert_eq!(
        of_type(&qwen, "turn.end")[0]["extra"]["qwen_subtype"],
        "error_during_execution"
    );
    // A turn that succeeded stays a success.
    let ok = envelope_of("fixtures/agents/codex/0.171.0/bash.ndjson");
    assert_eq!(of_type(&ok, "turn.end")[0]["outcome"], "success");
}
