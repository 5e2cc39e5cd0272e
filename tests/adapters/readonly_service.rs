//! Adapter 4: a read-only agent service. Its contract: a hard-coded tool allowlist (Read Glob
//! Grep) as the load-bearing first leg, so a disallowed tool never runs; a second-leg scan of the
//! stream that flags any `tool_use` outside it (and stops the run with `--enforce`); a
//! max-tool-calls guard; a timeout that kills the whole process group; `ANTHROPIC_API_KEY`
//! stripped unless opted in.

use std::time::Duration;

use serde_json::{Value, json};

use super::harness::*;
use crate::spawn::common::*;

/// The service's allowlist.
const READ_ONLY: &str = "Read,Glob,Grep";

/// The allowlist is load-bearing, not a race: `--allow-tools Read,Glob,Grep` becomes claude's
/// own `--tools`, so a Bash call the model asks for is never offered nor run. Without
/// `--enforce` the run goes on (the stream check still reports the call), and the file the
/// call would write never appears.
#[test]
fn allowlist_keeps_a_disallowed_tool_from_running() {
    need_cli!();
    let d = Dirs::new();
    let mark = marker("ro_allow");
    let target = d.work.join("written-by-bash.txt");
    let fake = Fake::start(
        &d,
        &json!({"responses": [
            {"content": [{"type": "tool_use", "name": "Bash", "input": {
                "command": format!("touch {} # {mark}", target.display()), "description": "write"}}]},
            {"content": [{"type": "text", "text": "done"}]}
        ]}),
    );
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &["--prompt", "Write the file.", "--allow-tools", READ_ONLY],
        &[],
    );
    let (code, ev, _) = finish(c);
    assert!(!target.exists(), "the disallowed Bash call ran");
    let v = of_type(&ev, "policy.violation");
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0]["rule"], "allow_tools");
    assert_eq!(v[0]["name"], "Bash");
    assert_eq!(v[0]["enforced"], false);
    // claude answered the call itself (the tool is not available), and the run ended normally.
    let results = of_type(&ev, "tool.result");
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["is_error"], true);
    assert_eq!(run_end(&ev)["cause"], "exit");
    assert_eq!(code, Some(0));
    // The tools claude offered: exactly the allowlist.
    let init = &of_type(&ev, "session.init")[0];
    let mut tools: Vec<&str> = init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t.as_str())
        .collect();
    tools.sort_unstable();
    assert_eq!(tools, ["Glob", "Grep", "Read"]);
}

/// The second leg with `--enforce`, alone (CLAUDE_ARGS that pick the tools themselves, here
/// `--tools default`, keep claude from getting the list): the call is flagged as its block
/// starts streaming, before claude can run it, and the group is SIGKILLed at once: the file it
/// would write never appears, nothing of the run is left.
#[test]
fn second_leg_kills_a_call_outside_the_list_before_it_runs() {
    need_cli!();
    // Partial mode: flagged at the block's start. Without it (`--no-partial`) the first sign is
    // the assistant line, after which claude starts the tool at once: the kill still wins.
    for partial in [true, false] {
        let d = Dirs::new();
        let mark = marker("ro_enforce");
        let target = d.work.join("written-by-bash.txt");
        let fake = Fake::start(
            &d,
            &json!({"responses": [
                {"content": [{"type": "tool_use", "name": "Bash", "input": {
                    "command": format!("touch {}; sleep 30 # {mark}", target.display()),
                    "description": "write"}}]},
                {"content": [{"type": "text", "text": "done"}]}
            ]}),
        );
        let mut args = vec![
            "--prompt",
            "Write the file.",
            "--allow-tools",
            READ_ONLY,
            "--enforce",
        ];
        if !partial {
            args.push("--no-partial");
        }
        let c = claude_cmd(&d, &fake, &mark, &args, &["--tools", "default"]);
        let (code, ev, _) = finish(c);
        assert!(
            !target.exists(),
            "the disallowed Bash call ran (partial: {partial})"
        );
        let v = of_type(&ev, "policy.violation");
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0]["rule"], "allow_tools");
        assert_eq!(v[0]["name"], "Bash");
        assert_eq!(v[0]["enforced"], true);
        if partial {
            // Before the call was complete: right after its block began.
            let start = ev
                .iter()
                .position(|e| e["type"] == "block.start" && e["name"] == "Bash")
                .expect("the block start");
            assert_eq!(ev[start + 1]["type"], "policy.violation");
            assert_eq!(v[0]["tool_use_id"], ev[start]["tool_use_id"]);
        }
        assert!(of_type(&ev, "tool.result").is_empty());
        let end = run_end(&ev);
        assert_eq!(end["cause"], "killed");
        assert_eq!(end["reason"], "policy");
        assert_eq!(end["signals_sent"], json!(["SIGKILL"]));
        assert_eq!(code, Some(125));
        assert_no_procs(&mark, Duration::from_secs(1));
    }
}

/// MCP tools cannot be taken off claude's list by `--tools`: for them the stream check is the
/// guard. A call to a disallowed MCP tool is killed while its input streams, and never reaches
/// the server (which was connected, and logs every request).
#[test]
fn second_leg_keeps_a_disallowed_mcp_call_from_the_server() {
    need_cli!();
    let d = Dirs::new();
    let mark = marker("ro_mcp");
    let (config, log) = mcp_echo(&d);
    let fake = Fake::start(
        &d,
        &json!({"responses": [
            {"match": {"tool": "mcp__echo__echo"}, "input_delay": 0.05,
             "content": [{"type": "tool_use", "name": "mcp__echo__echo", "input": {"text": "a fairly long input that streams in pieces"}}]},
            {"content": [{"type": "text", "text": "done"}]}
        ]}),
    );
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &["--prompt", "Echo.", "--allow-tools", READ_ONLY, "--enforce"],
        &["--mcp-config", &config, "--strict-mcp-config"],
    );
    let (code, ev, _) = finish(c);
    let v = of_type(&ev, "policy.violation");
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0]["name"], "mcp__echo__echo");
    let requests = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        requests.contains("\"initialize\""),
        "the server was not started: {requests}"
    );
    assert!(
        !requests.contains("\"tools/call\""),
        "the call reached the server"
    );
    let end = run_end(&ev);
    assert_eq!(
        (end["cause"].as_str(), end["reason"].as_str()),
        (Some("killed"), Some("policy"))
    );
    assert_eq!(end["signals_sent"], json!(["SIGKILL"]));
    assert_eq!(code, Some(125));
    assert_no_procs(&mark, Duration::from_secs(1));
}

/// `--max-tool-calls 2 --enforce`: the third call is a violation and stops the run.
#[test]
fn max_tool_calls_stops_the_run() {
    need_cli!();
    let d = Dirs::new();
    for f in ["a", "b", "c"] {
        std::fs::write(d.work.join(format!("{f}.txt")), f).unwrap();
    }
    let read = |f: &str| json!({"content": [{"type": "tool_use", "name": "Read", "input": {"file_path": format!("@CWD@/{f}.txt")}}]});
    let fake = Fake::start(
        &d,
        &json!({"responses": [read("a"), read("b"), read("c"), {"content": [{"type": "text", "text": "read"}]}]}),
    );
    let mark = marker("ro_max");
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &[
            "--prompt",
            "Read them.",
            "--allow-tools",
            READ_ONLY,
            "--max-tool-calls",
            "2",
            "--enforce",
            "--grace",
            "2s",
        ],
        &[],
    );
    let (code, ev, _) = finish(c);
    let v = of_type(&ev, "policy.violation");
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0]["rule"], "max_tool_calls");
    assert_eq!(
        (v[0]["limit"].as_u64(), v[0]["count"].as_u64()),
        (Some(2), Some(3))
    );
    assert_eq!(
        v[0]["tool_use_id"],
        of_type(&ev, "tool.call")[2]["tool_use_id"]
    );
    // The run did not go on to its result: no result at all (2.1.45), or the error result
    // 2.1.332 writes as it is interrupted (the third call refused, `error_during_execution`).
    assert_session_error(&ev);
    let end = run_end(&ev);
    assert_eq!(
        (end["cause"].as_str(), end["reason"].as_str()),
        (Some("killed"), Some("policy"))
    );
    assert_eq!(code, Some(125));
    assert_no_procs(&mark, Duration::from_secs(1));
}

/// `--timeout`: the whole process group goes, the tool's foreground process and what it put in
/// the background (its own session) included: a child of the tool's shell, and a double fork
/// that left it (they carry the run's mark in their environment). 2.1.332 kills its tool's
/// process tree itself on SIGINT (the first two here); the double fork is out of its reach on
/// every version, so boo-normalize must kill it.
#[test]
fn timeout_kills_the_whole_process_group() {
    need_cli!();
    let d = Dirs::new();
    let mark = marker("ro_timeout");
    let fake = Fake::start(
        &d,
        &json!({"responses": [
            {"content": [{"type": "tool_use", "name": "Bash", "input": {
                "command": format!("setsid sleep 300 & (setsid sleep 300 &); sleep 300 # {mark}"),
                "description": "wait"}}]},
            {"content": [{"type": "text", "text": "done"}]}
        ]}),
    );
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        // Long enough for the CLI to reach the tool call on a loaded machine (its start-up
        // alone has taken over 10 s with four builds running beside it).
        &["--prompt", "Wait.", "--timeout", "25s", "--grace", "1s"],
        &[],
    );
    let mut live = Live::start(c);
    live.wait_for("the tool call", |e| e["type"] == "tool.call");
    // All three sleeps run (the two in the background and the foreground one).
    let until = std::time::Instant::now() + Duration::from_secs(20);
    while procs_with(&mark)
        .iter()
        .filter(|(_, c)| c.trim_end() == "sleep 300")
        .count()
        < 3
    {
        assert!(
            std::time::Instant::now() < until,
            "the sleeps did not start: {:?}",
            procs_with(&mark)
        );
        std::thread::sleep(Duration::from_millis(30));
    }
    let (code, ev, _) = live.finish();
    let end = run_end(&ev);
    assert_eq!(end["cause"], "timeout");
    assert!(end["descendants_killed"].as_u64().unwrap() >= 1, "{end}");
    assert_eq!(code, Some(124));
    assert_no_procs(&mark, Duration::from_secs(1));
}

fn env_script() -> Value {
    json!({"responses": [
        {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "env", "description": "show env"}}]},
        {"content": [{"type": "text", "text": "Here is the environment."}]}
    ]})
}

/// The API key in boo-normalize's environment does not reach claude (nor its tools) unless
/// `--keep-env-key`; claude then authenticates the way its own settings say.
#[test]
fn api_key_is_stripped_unless_opted_in() {
    need_cli!();
    for keep in [false, true] {
        let d = Dirs::new();
        let fake = Fake::start(&d, &env_script());
        let mark = marker("key");
        let secret = format!("sk-ant-api03-{mark}");
        let extra: &[&str] = if keep { &["--keep-env-key"] } else { &[] };
        let audit = d.path().join("run.audit.jsonl");
        let audit_args = ["--audit", audit.to_str().unwrap()];
        let mut c = claude_cmd(
            &d,
            &fake,
            &mark,
            &[&["--prompt", "Show the env."], extra, &audit_args].concat(),
            &[],
        );
        c.env("ANTHROPIC_API_KEY", &secret);
        let (code, ev, err) = finish(c);
        assert_eq!(code, Some(0), "{err}");
        let results = of_type(&ev, "tool.result");
        assert_eq!(results.len(), 1, "{err}");
        let content = text_of(&results[0]["content"]);
        assert!(
            content.contains("BOO_TEST_MARK="),
            "the env call ran: {content}"
        );
        assert_eq!(content.contains(&secret), keep, "keep={keep}");
        // Not silently: the one stderr line names it (never its value).
        assert_eq!(
            err.contains("not passed to claude: ANTHROPIC_API_KEY (credentials: --keep-env-key)"),
            !keep,
            "{err}"
        );
        assert!(!err.contains(&secret));
        // And on the record: run.end (in the audit log too) lists the names removed.
        let removed = if keep {
            json!([])
        } else {
            json!(["ANTHROPIC_API_KEY"])
        };
        assert_eq!(run_end(&ev)["env_removed"], removed);
        let log = std::fs::read_to_string(&audit).unwrap();
        let last: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
        assert_eq!(last["event"]["env_removed"], removed);
        assert_eq!(
            log.contains(&secret),
            keep,
            "only the kept key's env output"
        );
        let init = of_type(&ev, "session.init");
        let source = if keep {
            "ANTHROPIC_API_KEY"
        } else {
            "apiKeyHelper"
        };
        assert_eq!(init[0]["api_key_source"], source);
    }
}
