//! Adapter 3: a TypeScript middleware runtime. Its contract: the prompt on stdin past 10 KB
//! (never in argv); an inline `--mcp-config '{json}'`; a watchdog; the result mapped to a done
//! event with usage, cost, API duration, `num_turns` and stop reason.

use std::fs;
use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use super::harness::*;
use crate::spawn::common::*;

/// The done event a runtime maps from `turn.end`: every field it needs is there and typed.
fn assert_done(turn: &Value, turns: u64) {
    assert_eq!(turn["outcome"], "success", "{turn}");
    let u = &turn["usage"];
    for k in [
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    ] {
        assert!(u[k].as_u64().is_some(), "usage.{k}: {turn}");
    }
    assert!(u["output_tokens"].as_u64().unwrap() > 0, "{turn}");
    assert!(turn["cost_usd"].as_f64().is_some_and(|c| c > 0.0), "{turn}");
    assert!(turn["duration_api_ms"].as_u64().is_some(), "{turn}");
    assert!(turn["duration_ms"].as_u64().is_some(), "{turn}");
    assert_eq!(turn["num_turns"], turns, "{turn}");
    assert_eq!(turn["stop_reason"], "end_turn", "{turn}");
}

/// `--prompt-file -` with a prompt of more than 10 KB written to boo-normalize's stdin: it
/// reaches the API whole, through claude's stdin, and never appears in claude's argv (nor,
/// then, in `ps` output).
#[test]
fn long_prompt_on_stdin_never_in_argv() {
    need_cli!();
    let d = Dirs::new();
    let fake = Fake::start(
        &d,
        &json!({"responses": [{"delay": 1, "content": [{"type": "text", "text": "Read it."}]}]}),
    );
    let mark = marker("ts_stdin");
    let prompt = format!("{} END-{mark}", "Please read all of this. ".repeat(600));
    assert!(prompt.len() > 10 * 1024);
    let cap = d.path().join("run.capture.jsonl");
    let mut c = claude_cmd(
        &d,
        &fake,
        &mark,
        &["--prompt-file", "-", "--record", cap.to_str().unwrap()],
        &[],
    );
    c.stdin(Stdio::piped());
    let mut live = Live::start(c);
    let mut stdin = live.child.stdin.take().unwrap();
    stdin.write_all(prompt.as_bytes()).unwrap();
    drop(stdin);
    let (code, ev, err) = live.finish();
    // The argv claude was started with (as recorded) does not hold the prompt.
    let head = fs::read_to_string(&cap).unwrap();
    let head: Value = serde_json::from_str(head.lines().next().unwrap()).unwrap();
    assert!(head["argv"].as_array().is_some_and(|a| a.len() > 3));
    assert!(
        !head["argv"].to_string().contains("Please read all"),
        "the prompt is in argv"
    );
    assert_eq!(code, Some(0), "{err}");
    assert_done(of_type(&ev, "turn.end")[0], 1);
    let got = fake.requests().iter().any(|r| {
        r["kind"] == "main"
            && r["body"]["messages"]
                .to_string()
                .contains(&format!("END-{mark}"))
            && r["body"]["messages"].to_string().contains(&prompt[..200])
    });
    assert!(got, "the prompt did not reach the API");
}

/// An inline MCP config (JSON in argv, a stdio server): the server is connected, its tool is
/// called and answered, and the result names the tool. A CLI that offers the tool at once
/// (2.1.45) gets the call right away; one that defers MCP tools behind `ToolSearch` (2.1.332
/// lists them by name only, "calling them directly will fail") gets the search the model makes
/// first, and the call once the tool is loaded.
#[test]
fn inline_mcp_config_tool_round_trip() {
    need_cli!();
    let d = Dirs::new();
    let (config, log) = mcp_echo(&d);
    let fake = Fake::start(
        &d,
        &json!({"responses": [
            {"match": {"tool": "mcp__echo__echo"},
             "content": [{"type": "tool_use", "name": "mcp__echo__echo", "input": {"text": "ping"}}]},
            {"match": {"tool": "ToolSearch"},
             "content": [{"type": "tool_use", "name": "ToolSearch",
                          "input": {"query": "select:mcp__echo__echo", "max_results": 1}}]},
            {"content": [{"type": "text", "text": "It said pong."}]}
        ]}),
    );
    let mark = marker("ts_mcp");
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &["--prompt", "Use the echo tool."],
        &["--mcp-config", &config, "--strict-mcp-config"],
    );
    let (code, ev, err) = finish(c);
    assert_eq!(code, Some(0), "{err}");
    let init = of_type(&ev, "session.init")[0];
    let servers = init["mcp_servers"].as_array().expect("mcp_servers");
    assert!(
        servers
            .iter()
            .any(|s| s["name"] == "echo" && s["status"] == "connected"),
        "{init}"
    );
    let results = of_type(&ev, "tool.result");
    // Each result names its call's tool; besides the MCP call, only the search that loaded it.
    let searches = results.iter().filter(|r| r["name"] == "ToolSearch").count();
    assert!(searches <= 1, "{results:?}");
    let mcp: Vec<_> = results
        .iter()
        .filter(|r| r["name"] == "mcp__echo__echo")
        .collect();
    assert_eq!(
        (mcp.len(), results.len()),
        (1, 1 + searches),
        "{results:?}\n{err}"
    );
    for r in &results {
        assert_eq!(r["is_error"], false, "{r}");
    }
    assert!(
        text_of(&mcp[0]["content"]).contains("echo: ping"),
        "{}",
        mcp[0]
    );
    let calls = fs::read_to_string(&log).unwrap();
    assert!(
        calls.contains("\"tools/call\""),
        "the server got no call: {calls}"
    );
    assert_done(of_type(&ev, "turn.end")[0], 2 + searches as u64);
    assert_no_procs(&mark, Duration::from_secs(2));
}

/// The watchdog: an API that stops answering (after a tool started a background job) is an
/// idle timeout; the run ends (124) and nothing it started is left.
#[test]
fn watchdog_stops_a_silent_run_and_cleans_up() {
    need_cli!();
    let d = Dirs::new();
    let mark = marker("ts_idle");
    let fake = Fake::start(&d, &background_then_hang(&mark));
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &[
            "--prompt",
            "Start the job.",
            // Longer than the CLI's start-up on a loaded machine (over 8 s seen), which the
            // idle timer counts too.
            "--idle-timeout",
            "20s",
            "--grace",
            "2s",
        ],
        &[],
    );
    let (code, ev, err) = finish(c);
    let results = of_type(&ev, "tool.result");
    assert_eq!(results.len(), 1, "{:?} {}\n{err}", types(&ev), run_end(&ev));
    assert!(text_of(&results[0]["content"]).contains("started"));
    assert_session_error(&ev);
    let end = run_end(&ev);
    assert_eq!(end["cause"], "idle_timeout");
    assert_eq!(end["signals_sent"][0], "SIGINT");
    assert!(end["descendants_killed"].as_u64().unwrap() >= 1, "{end}");
    assert_eq!(code, Some(124));
    assert_no_procs(&mark, Duration::from_secs(1));
}
