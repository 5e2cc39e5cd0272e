//! Adapter 1: a Go web backend that streams a browser UI over SSE (`exec.CommandContext`,
//! stdout copied to an `EventSource`). Its contract: its claude flags pass through untouched; it
//! refuses to run with `ANTHROPIC_API_KEY` set; every tool result names its tool; a
//! turn-complete event carries `cost_usd` and `duration_ms`; the SSE stream is one a browser
//! reads, ending with `run.end` on every path (API 500 and 401, a hanging API, a missing
//! binary), and a context cancel (`SIGKILL` of the process it started) leaves nothing behind.

use std::fs;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::harness::*;
use crate::spawn::common::*;

/// The SSE events of a finished run, checked the way a browser would take them: a `retry`
/// first, ids 0, 1, 2, … (what `Last-Event-ID` resumes from), `event` = the envelope type,
/// `run.end` last.
fn browser_events(stdout: &[u8]) -> Vec<Value> {
    let (retry, evs) = sse(stdout);
    assert!(retry.is_some(), "no retry: line");
    for (i, e) in evs.iter().enumerate() {
        assert_eq!(e.id.as_deref(), Some(i.to_string().as_str()), "{e:?}");
        assert_eq!(e.data["type"], e.event.as_str());
        assert_eq!(e.data["seq"], i as u64);
    }
    let data: Vec<Value> = evs.into_iter().map(|e| e.data).collect();
    run_end(&data);
    data
}

/// The Go backend's command: SSE on stdout, claude's own flags after `--`.
fn backend(
    d: &Dirs,
    fake: &Fake,
    mark: &str,
    spawn: &[&str],
    claude: &[&str],
) -> std::process::Command {
    let args = [&["--format", "sse"], spawn].concat();
    claude_cmd(d, fake, mark, &args, claude)
}

/// The backend's own claude flags reach the CLI verbatim and in order (the exec argv, as
/// recorded), and take effect: `--allowed-tools Read,Grep,Glob` under the default permission
/// mode lets Read run and denies Bash (whose file never appears).
#[test]
fn claude_flags_pass_through_and_take_effect() {
    need_cli!();
    let d = Dirs::new();
    fs::write(d.work.join("notes.txt"), "fixture notes\n").unwrap();
    let target = d.work.join("written-by-bash.txt");
    let fake = Fake::start(
        &d,
        &json!({"responses": [
            {"content": [{"type": "tool_use", "name": "Bash", "input": {
                "command": format!("touch {}", target.display()), "description": "write"}}]},
            {"content": [{"type": "tool_use", "name": "Read", "input": {"file_path": "@CWD@/notes.txt"}}]},
            {"content": [{"type": "text", "text": "read it"}]}
        ]}),
    );
    let mark = marker("go_flags");
    let cap = d.path().join("run.capture.jsonl");
    let flags = [
        "--strict-mcp-config",
        "--allowed-tools",
        "Read,Grep,Glob",
        "--permission-mode",
        "default",
    ];
    let c = backend(
        &d,
        &fake,
        &mark,
        &[
            "--prompt",
            "Read the notes.",
            "--record",
            cap.to_str().unwrap(),
        ],
        &flags,
    );
    let out = succeeded_within(c, RUN_MAX);
    let head: Value =
        serde_json::from_str(fs::read_to_string(&cap).unwrap().lines().next().unwrap()).unwrap();
    let argv: Vec<&str> = head["argv"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(argv.windows(flags.len()).any(|w| w == flags), "{argv:?}");
    let ev = browser_events(&out.stdout);
    assert!(!target.exists(), "Bash ran although not allowed");
    let results = of_type(&ev, "tool.result");
    assert_eq!(results.len(), 2);
    assert_eq!(
        (
            results[0]["name"].as_str(),
            results[0]["is_error"].as_bool()
        ),
        (Some("Bash"), Some(true))
    );
    assert_eq!(
        (
            results[1]["name"].as_str(),
            results[1]["is_error"].as_bool()
        ),
        (Some("Read"), Some(false))
    );
    let turn = of_type(&ev, "turn.end")[0];
    assert_eq!(turn["permission_denials"][0]["tool_name"], "Bash", "{turn}");
}

/// A flag claude does not know: claude's own error reaches stderr, the stream still ends with
/// run.error (no result) and run.end, the status is claude's, and nothing reached the API.
fn assert_refused_flag(flag: &str) {
    let d = Dirs::new();
    let fake = Fake::start(&d, &json!({"responses": []}));
    let mark = marker("go_badflag");
    let c = backend(&d, &fake, &mark, &["--prompt", "Say hi."], &[flag]);
    let out = output_within(c, RUN_MAX);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("claude: error: unknown option '{flag}'")),
        "{err}"
    );
    let ev = browser_events(&out.stdout);
    assert_eq!(of_type(&ev, "run.error")[0]["cause"], "no_result");
    let end = run_end(&ev);
    assert_eq!(
        (end["cause"].as_str(), end["exit_code"].as_i64()),
        (Some("exit"), Some(1))
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(fake.requests().is_empty(), "claude reached the API");
    assert_no_procs(&mark, Duration::from_secs(2));
}

#[test]
fn a_flag_the_cli_does_not_know_fails_loudly() {
    need_cli!();
    assert_refused_flag("--no-such-boo-flag");
}

/// `--bare`, which the README's backend passes, on the CLI under test: one that predates it
/// (2.1.45) refuses it loudly, as any unknown flag; one that has it (2.1.110 and later) runs
/// with it, and it takes effect: the working directory's CLAUDE.md, which the same run without
/// `--bare` sends to the API, is not read.
#[test]
fn bare_passes_through_on_every_version() {
    need_cli!();
    if !cli_has_option("--bare") {
        assert_refused_flag("--bare");
        return;
    }
    let memo = format!("BOO-MEMO-{}", std::process::id());
    let mut sent = Vec::new();
    for bare in [false, true] {
        let d = Dirs::new();
        fs::write(d.work.join("CLAUDE.md"), format!("Project notes: {memo}\n")).unwrap();
        let fake = Fake::start(
            &d,
            &json!({"responses": [{"content": [{"type": "text", "text": "hi"}]}]}),
        );
        let mark = marker("go_bare");
        let flags: &[&str] = if bare { &["--bare"] } else { &[] };
        let out = output_within(
            backend(&d, &fake, &mark, &["--prompt", "Say hi."], flags),
            RUN_MAX,
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "bare={bare}: {err}");
        let ev = browser_events(&out.stdout);
        let turn = of_type(&ev, "turn.end");
        assert_eq!(turn.len(), 1, "bare={bare}: {err}");
        assert_eq!(turn[0]["outcome"], "success", "bare={bare}");
        assert_eq!(text_of(&turn[0]["result"]), "hi");
        let main: Vec<Value> = fake
            .requests()
            .into_iter()
            .filter(|r| r["kind"] == "main")
            .collect();
        assert!(!main.is_empty(), "bare={bare}: no request");
        sent.push(main.iter().any(|r| r["body"].to_string().contains(&memo)));
        assert_no_procs(&mark, Duration::from_secs(2));
    }
    assert_eq!(
        sent,
        [true, false],
        "CLAUDE.md sent without and with --bare"
    );
}

#[test]
fn refuses_to_run_when_an_api_key_is_set() {
    need_cli!();
    let d = Dirs::new();
    let fake = Fake::start(&d, &json!({"responses": []}));
    let mark = marker("go_refuse");
    let secret = format!("sk-ant-api03-{mark}");
    let mut c = backend(
        &d,
        &fake,
        &mark,
        &["--refuse-api-key", "--prompt", "Say hi."],
        &[],
    );
    c.env("ANTHROPIC_API_KEY", &secret);
    let out = output_within(c, RUN_MAX);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("boo-normalize: --refuse-api-key: ANTHROPIC_API_KEY is set"),
        "{err}"
    );
    assert!(!err.contains(&secret) && !String::from_utf8_lossy(&out.stdout).contains(&secret));
    // Nothing was started: no request, no process.
    assert!(fake.requests().is_empty());
    assert!(procs_with(&mark).is_empty());
}

#[test]
fn sse_stream_names_every_result_and_ends_the_turn_with_cost() {
    need_cli!();
    let d = Dirs::new();
    fs::write(d.work.join("notes.txt"), "fixture notes\n").unwrap();
    let fake = Fake::start(
        &d,
        &json!({"responses": [
            {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "echo hello", "description": "hello"}}]},
            {"content": [
                {"type": "tool_use", "name": "Read", "input": {"file_path": "@CWD@/notes.txt"}},
                {"type": "tool_use", "name": "Read", "input": {"file_path": "@CWD@/missing.txt"}}
            ]},
            {"content": [{"type": "text", "text": "All read."}]}
        ]}),
    );
    let mark = marker("go_sse");
    let c = backend(&d, &fake, &mark, &["--prompt", "Read the notes."], &[]);
    let out = output_within(c, RUN_MAX);
    assert_eq!(out.status.code(), Some(0));
    let ev = browser_events(&out.stdout);
    let calls = of_type(&ev, "tool.call");
    let results = of_type(&ev, "tool.result");
    assert_eq!(calls.len(), 3);
    assert_eq!(results.len(), 3);
    for r in &results {
        let call = calls
            .iter()
            .find(|c| c["tool_use_id"] == r["tool_use_id"])
            .expect("a call for every result");
        assert_eq!(r["name"], call["name"], "{r}");
    }
    let failed: Vec<_> = results.iter().filter(|r| r["is_error"] == true).collect();
    assert_eq!(failed.len(), 1, "the missing file: {results:?}");
    assert_eq!(failed[0]["name"], "Read");
    let turn = of_type(&ev, "turn.end");
    assert_eq!(turn.len(), 1);
    assert!(
        turn[0]["cost_usd"].as_f64().is_some_and(|c| c > 0.0),
        "{}",
        turn[0]
    );
    assert!(
        turn[0]["duration_ms"].as_u64().is_some_and(|d| d > 0),
        "{}",
        turn[0]
    );
    assert_eq!(turn[0]["outcome"], "success");
    assert_no_procs(&mark, Duration::from_secs(2));
}

#[test]
fn api_500_and_401_end_the_stream_with_the_error() {
    need_cli!();
    for status in [500, 401] {
        let d = Dirs::new();
        let fake = Fake::start(&d, &json!({"responses": [{"error": status, "repeat": -1}]}));
        let mark = marker("go_apierr");
        let mut c = backend(
            &d,
            &fake,
            &mark,
            &["--prompt", "Say hi."],
            &["--max-turns", "3"],
        );
        c.env("CLAUDE_CODE_MAX_RETRIES", "1");
        let out = output_within(c, RUN_MAX);
        let ev = browser_events(&out.stdout);
        let turn = of_type(&ev, "turn.end");
        assert_eq!(turn.len(), 1, "{status}");
        assert_eq!(turn[0]["is_error"], true, "{status}");
        assert_ne!(turn[0]["outcome"], "success");
        let want = if status == 401 { "API key" } else { "500" };
        assert!(text_of(&turn[0]["result"]).contains(want), "{}", turn[0]);
        let end = run_end(&ev);
        assert_eq!(
            (end["cause"].as_str(), end["exit_code"].as_i64()),
            (Some("exit"), Some(1))
        );
        assert_eq!(out.status.code(), Some(1), "{status}");
        assert_no_procs(&mark, Duration::from_secs(2));
    }
}

#[test]
fn a_hanging_api_ends_in_a_timeout() {
    need_cli!();
    let d = Dirs::new();
    let fake = Fake::start(&d, &json!({"responses": [{"hang": true, "repeat": -1}]}));
    let mark = marker("go_hang");
    let c = backend(
        &d,
        &fake,
        &mark,
        &["--prompt", "Say hi.", "--timeout", "4s", "--grace", "1s"],
        &[],
    );
    let out = output_within(c, RUN_MAX);
    let ev = browser_events(&out.stdout);
    assert_session_error(&ev);
    let end = run_end(&ev);
    assert_eq!(end["cause"], "timeout");
    assert_eq!(out.status.code(), Some(124));
    assert_no_procs(&mark, Duration::from_secs(2));
}

#[test]
fn a_missing_binary_still_ends_the_stream() {
    let d = Dirs::new();
    let mark = marker("go_missing");
    let mut c = command(&d.home, &mark);
    c.current_dir(&d.work).args([
        "spawn",
        "--format",
        "sse",
        "--claude-bin",
        "/nonexistent/claude",
        "--prompt",
        "hi",
    ]);
    let out = output_within(c, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(127));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("boo-normalize: "), "{err}");
    let ev = browser_events(&out.stdout);
    let end = run_end(&ev);
    assert_eq!(end["cause"], "spawn_failed");
    assert!(
        end["error"]
            .as_str()
            .is_some_and(|e| e.contains("/nonexistent/claude"))
    );
}

/// The backend restarts mid-run (its process group goes, boo-normalize with it). The browser
/// reconnects with the `Last-Event-ID` it had; the new backend serves the audit log from there:
/// no event lost or repeated, the same ids and data as live, ending with `run.end`. The next
/// message resumes the claude session in a new run (new run id, ids from 0: a new stream).
#[test]
fn a_restarted_backend_resumes_the_browser_stream() {
    use std::io::BufRead;
    need_cli!();
    let d = Dirs::new();
    let mark = marker("go_restart");
    let fake = Fake::start(
        &d,
        &json!({"responses": [
            {"content": [{"type": "text", "text": "Working on it."},
                {"type": "tool_use", "name": "Bash", "input": {
                "command": long_job(60, &mark), "description": "work"}}]},
            {"content": [{"type": "text", "text": "Resumed fine."}]}
        ]}),
    );
    let audit = d.path().join("run.audit.jsonl");
    let mut c = backend(
        &d,
        &fake,
        &mark,
        &["--prompt", "Work.", "--audit", audit.to_str().unwrap()],
        &[],
    );
    c.stdout(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let _dog = Watchdog::new(child.id(), RUN_MAX);
    // The browser reads up to the tool call.
    let mut seen = Vec::new();
    let mut r = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while r.read_line(&mut line).unwrap() > 0 {
        let done = line.starts_with("event: tool.call");
        seen.push(std::mem::take(&mut line));
        if done {
            // and the data line of it, and the blank line.
            for _ in 0..2 {
                r.read_line(&mut line).unwrap();
                seen.push(std::mem::take(&mut line));
            }
            break;
        }
    }
    let (_, live) = sse(seen.concat().as_bytes());
    let last_id: u64 = live.last().unwrap().id.as_deref().unwrap().parse().unwrap();
    wait_for_proc(&mark, "sleep 60", Duration::from_secs(10));
    send_signal(child.id(), "KILL");
    let _ = child.wait();
    assert_no_procs(&mark, Duration::from_secs(3));
    // The new backend: the audit log from Last-Event-ID on.
    let out = std::process::Command::new(BIN)
        .args(["replay", "--format", "sse", "--last-event-id"])
        .arg(last_id.to_string())
        .arg(&audit)
        .output()
        .unwrap();
    let (_, rest) = sse(&out.stdout);
    let ids: Vec<u64> = rest
        .iter()
        .map(|e| e.id.as_deref().unwrap().parse().unwrap())
        .collect();
    assert_eq!(ids.first(), Some(&(last_id + 1)), "{ids:?}");
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "{ids:?}");
    let end = &rest.last().unwrap().data;
    assert_eq!(end["type"], "run.end");
    assert_eq!(end["reason"], "supervisor_killed");
    // What the browser saw live is what a full replay says up to there.
    let full = std::process::Command::new(BIN)
        .args(["replay", "--format", "sse"])
        .arg(&audit)
        .output()
        .unwrap();
    let (_, all) = sse(&full.stdout);
    for (a, b) in live.iter().zip(&all) {
        assert_eq!((&a.id, &a.data), (&b.id, &b.data));
    }
    assert_eq!(all.len(), live.len() + rest.len());
    // The next message: the session resumes in a new run.
    let sid = live[0].data["session_id"].as_str().unwrap().to_owned();
    let c = backend(
        &d,
        &fake,
        &mark,
        &["--prompt", "Go on.", "--audit", audit.to_str().unwrap()],
        &["--resume", &sid],
    );
    let out = output_within(c, RUN_MAX);
    assert_eq!(out.status.code(), Some(0));
    let ev = browser_events(&out.stdout);
    assert_eq!(ev[0]["session_id"], sid.as_str());
    assert_eq!(
        text_of(&of_type(&ev, "turn.end")[0]["result"]),
        "Resumed fine."
    );
    let verify = std::process::Command::new(BIN)
        .args(["audit", "verify"])
        .arg(&audit)
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );
}

/// `exec.CommandContext` cancels with SIGKILL of the process it started. Nothing of the run
/// survives it (the CLI, its tool's background job), and the audit log still ends the run.
#[test]
fn a_context_cancel_sigkill_leaves_nothing_behind() {
    need_cli!();
    let d = Dirs::new();
    let mark = marker("go_cancel");
    let fake = Fake::start(&d, &background_then_hang(&mark));
    let audit = d.path().join("run.audit.jsonl");
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &[
            "--prompt",
            "Start the job.",
            "--audit",
            audit.to_str().unwrap(),
        ],
        &[],
    );
    let mut live = Live::start(c);
    live.wait_for("the tool result", |e| e["type"] == "tool.result");
    wait_for_proc(&mark, "sleep 300", Duration::from_secs(10));
    let t = Instant::now();
    send_signal(live.pid(), "KILL");
    assert_no_procs(&mark, Duration::from_secs(3));
    assert!(t.elapsed() < Duration::from_secs(3));
    let status = live.child.wait().unwrap();
    assert_eq!(status.code(), None, "killed by the caller's SIGKILL");
    let recs = fs::read_to_string(&audit).unwrap();
    let last: Value = serde_json::from_str(recs.lines().last().unwrap()).unwrap();
    assert_eq!(last["event"]["type"], "run.end", "{last}");
    assert_eq!(last["event"]["reason"], "supervisor_killed");
}
