//! `spawn` process hygiene with a fake `claude` (a shell script): hangs, closed stdout,
//! background grandchildren, escalation, interrupts, reaping. Fast (no CLI).
#![cfg(target_os = "linux")]

use crate::spawn::common as spawn_common;

use std::fs;
use std::io::BufReader;
use std::process::Stdio;
use std::time::{Duration, Instant};

use spawn_common::fake::*;
use spawn_common::*;
#[test]
fn child_without_result_is_visible_in_run_end() {
    let d = Dirs::new();
    let (out, ev, mark) = run(&d, "echo \"$INIT\"; exit 0", &["--prompt", "do it now"]);
    let end = run_end(&ev);
    assert_eq!(end["cause"], "exit");
    assert_eq!(end["terminal_seen"], false);
    assert_eq!(end["exit_code"], 0);
    assert_eq!(end["signal"], serde_json::Value::Null);
    // No result: run.error (cause no_result, with the child's status) right before run.end, and
    // exit 3 although the child exited 0.
    let err = &ev[ev.len() - 2];
    assert_eq!(err["type"], "run.error");
    assert_eq!(err["cause"], "no_result");
    assert_eq!(err["end_cause"], "exit");
    assert_eq!(err["exit_code"], 0);
    assert_eq!(err["last_event"]["type"], "session.init");
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("boo-normalize: no result: "), "{stderr}");
    assert_no_procs(&mark, Duration::from_secs(2));
    // --allow-no-result: the caller expects no result; exit 0, no run.error.
    let (out, ev, _) = run(
        &d,
        "echo \"$INIT\"; exit 0",
        &["--prompt", "do it now", "--allow-no-result"],
    );
    assert!(!ev.iter().any(|e| e["type"] == "run.error"));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn exit_code_is_mirrored() {
    let d = Dirs::new();
    let (out, ev, _) = run(&d, "echo \"$INIT\"; echo \"$RESULT\"; exit 7", &[]);
    assert_eq!(run_end(&ev)["exit_code"], 7);
    assert_eq!(run_end(&ev)["terminal_seen"], true);
    assert_eq!(out.status.code(), Some(7));
}

#[test]
fn child_killed_by_foreign_signal() {
    let d = Dirs::new();
    let (out, ev, _) = run(&d, "echo \"$INIT\"; kill -9 $$", &[]);
    let end = run_end(&ev);
    assert_eq!(end["cause"], "signal");
    assert_eq!(end["signal"], "SIGKILL");
    assert_eq!(end["exit_code"], serde_json::Value::Null);
    assert_eq!(out.status.code(), Some(137));
}

#[test]
fn hang_after_result_with_stdout_open_ends_by_idle_timeout() {
    let d = Dirs::new();
    let t0 = Instant::now();
    let (out, ev, mark) = run(
        &d,
        "trap '' INT; echo \"$INIT\"; echo \"$RESULT\"; while :; do sleep 0.1; done",
        &["--idle-timeout", "400ms", "--grace", "300ms"],
    );
    let end = run_end(&ev);
    assert_eq!(end["cause"], "idle_timeout");
    assert_eq!(end["terminal_seen"], true);
    assert_eq!(
        end["signals_sent"],
        serde_json::json!(["SIGINT", "SIGTERM"])
    );
    assert_eq!(end["signal"], "SIGTERM");
    assert_eq!(out.status.code(), Some(124));
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert_no_procs(&mark, Duration::from_secs(2));
}

#[test]
fn stdout_closed_but_alive_is_ended_after_grace() {
    let d = Dirs::new();
    let t0 = Instant::now();
    let (out, ev, mark) = run(
        &d,
        "echo \"$INIT\"; echo \"$RESULT\"; exec >&-; sleep 300",
        &["--grace", "500ms"],
    );
    let el = t0.elapsed();
    let end = run_end(&ev);
    assert_eq!(end["cause"], "killed");
    assert_eq!(end["reason"], "stdout_closed");
    assert_eq!(end["signals_sent"][0], "SIGINT");
    // The result was a success: exit 0, as the child would have returned.
    assert_eq!(out.status.code(), Some(0));
    assert!(
        el >= Duration::from_millis(500),
        "ended before the grace: {el:?}"
    );
    assert!(el < Duration::from_secs(10), "{el:?}");
    assert_no_procs(&mark, Duration::from_secs(2));
}

#[test]
fn grandchild_in_its_own_session_is_killed_after_exit() {
    let d = Dirs::new();
    let (out, ev, mark) = run(
        &d,
        "setsid sleep 300 </dev/null >/dev/null 2>&1 &\nsleep 0.2; echo \"$INIT\"; echo \"$RESULT\"; exit 0",
        &["--grace", "1s"],
    );
    let end = run_end(&ev);
    assert_eq!(end["cause"], "exit");
    assert!(end["descendants_killed"].as_u64().unwrap() >= 1, "{end}");
    assert_eq!(out.status.code(), Some(0));
    assert_no_procs(&mark, Duration::from_secs(1));
}

#[test]
fn grandchild_holding_stdout_does_not_block_the_end() {
    let d = Dirs::new();
    let t0 = Instant::now();
    let (out, ev, mark) = run(
        &d,
        "sleep 300 &\necho \"$INIT\"; echo \"$RESULT\"; exit 0",
        &["--grace", "2s"],
    );
    assert!(t0.elapsed() < Duration::from_secs(8), "{:?}", t0.elapsed());
    let end = run_end(&ev);
    assert_eq!(end["cause"], "exit");
    assert!(end["descendants_killed"].as_u64().unwrap() >= 1);
    assert_eq!(out.status.code(), Some(0));
    assert_no_procs(&mark, Duration::from_secs(1));
}

#[test]
fn keep_background_leaves_them_running() {
    let d = Dirs::new();
    let (out, ev, mark) = run(
        &d,
        "setsid sleep 300 </dev/null >/dev/null 2>&1 &\nsleep 0.2; echo \"$INIT\"; exit 0",
        &["--keep-background", "--allow-no-result"],
    );
    let end = run_end(&ev);
    assert_eq!(end["descendants_killed"], 0);
    assert_eq!(end["background_left"], 1);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(kill_marked(&mark), 1, "the background sleep survived");
}

#[test]
fn escalation_reaches_sigkill() {
    let d = Dirs::new();
    let t0 = Instant::now();
    let (out, ev, mark) = run(
        &d,
        "trap '' INT TERM; echo \"$INIT\"; while :; do sleep 0.05; done",
        &["--idle-timeout", "300ms", "--grace", "200ms"],
    );
    let el = t0.elapsed();
    let end = run_end(&ev);
    assert_eq!(
        end["signals_sent"],
        serde_json::json!(["SIGINT", "SIGTERM", "SIGKILL"])
    );
    assert_eq!(end["signal"], "SIGKILL");
    assert_eq!(end["cause"], "idle_timeout");
    assert_eq!(out.status.code(), Some(124));
    assert!(el >= Duration::from_millis(700), "{el:?}");
    assert_no_procs(&mark, Duration::from_secs(2));
}

/// A GUI session manager's sequence: SIGTERM → grace → SIGKILL (`--stop-signal TERM`), no SIGINT.
#[test]
fn stop_signal_term_skips_the_interrupt() {
    let d = Dirs::new();
    let t0 = Instant::now();
    let (out, ev, mark) = run(
        &d,
        "trap '' INT TERM; echo \"$INIT\"; while :; do sleep 0.05; done",
        &[
            "--timeout",
            "300ms",
            "--grace",
            "400ms",
            "--stop-signal",
            "TERM",
        ],
    );
    let el = t0.elapsed();
    let end = run_end(&ev);
    assert_eq!(
        end["signals_sent"],
        serde_json::json!(["SIGTERM", "SIGKILL"])
    );
    assert_eq!(end["signal"], "SIGKILL");
    assert_eq!(end["cause"], "timeout");
    assert_eq!(out.status.code(), Some(124));
    assert!(el >= Duration::from_millis(700), "{el:?}");
    assert!(el < Duration::from_secs(10), "{el:?}");
    assert_no_procs(&mark, Duration::from_secs(2));
    // A child that honours SIGTERM ends at the first signal.
    let (_, ev, _) = run(
        &d,
        "echo \"$INIT\"; while :; do sleep 0.05; done",
        &["--timeout", "300ms", "--stop-signal", "term"],
    );
    assert_eq!(run_end(&ev)["signals_sent"], serde_json::json!(["SIGTERM"]));
}

/// A user line with the result of BASH_CALL's toolu_1.
const BASH_RESULT: &str = r#"{"type":"user","session_id":"s1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}}"#;

/// A quiet tool is not a stale stream: the idle timer is paused until its result.
#[test]
fn idle_timer_waits_for_a_running_tool() {
    let d = Dirs::new();
    let body = format!(
        "echo \"$INIT\"; echo \"$BASH_CALL\"; sleep 1.5; echo '{BASH_RESULT}'; echo \"$RESULT\""
    );
    let (out, ev, mark) = run(&d, &body, &["--idle-timeout", "500ms"]);
    let end = run_end(&ev);
    assert_eq!(end["cause"], "exit", "{end}");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(of_type(&ev, "tool.result").len(), 1);
    assert_no_procs(&mark, Duration::from_secs(2));
    // Without a tool call the same quiet is a stale stream.
    let (out, ev, _) = run(
        &d,
        "echo \"$INIT\"; sleep 1.5; echo \"$RESULT\"",
        &["--idle-timeout", "500ms"],
    );
    assert_eq!(run_end(&ev)["cause"], "idle_timeout");
    assert_eq!(out.status.code(), Some(124));
}

/// --tool-timeout bounds a tool that never returns (the idle timer is paused meanwhile).
#[test]
fn tool_timeout_stops_a_tool_that_never_returns() {
    let d = Dirs::new();
    let t0 = Instant::now();
    let (out, ev, mark) = run(
        &d,
        "echo \"$INIT\"; echo \"$BASH_CALL\"; while :; do sleep 0.05; done",
        &[
            "--idle-timeout",
            "200ms",
            "--tool-timeout",
            "800ms",
            "--grace",
            "200ms",
        ],
    );
    let end = run_end(&ev);
    assert_eq!(end["cause"], "killed", "{end}");
    assert_eq!(end["reason"], "tool_timeout", "{end}");
    assert_eq!(out.status.code(), Some(124));
    assert!(t0.elapsed() >= Duration::from_millis(800));
    assert_no_procs(&mark, Duration::from_secs(2));
}

/// --idle-action warn: a `stall` event per quiet period, nothing stopped.
#[test]
fn idle_action_warn_reports_a_stall() {
    let d = Dirs::new();
    let (out, ev, _) = run(
        &d,
        "echo \"$INIT\"; sleep 1.3; echo \"$RESULT\"",
        &["--idle-timeout", "400ms", "--idle-action", "warn"],
    );
    let stalls = of_type(&ev, "stall");
    assert!(!stalls.is_empty() && stalls.len() <= 4, "{stalls:?}");
    assert!(stalls[0]["quiet_ms"].as_u64().unwrap() >= 400);
    assert_eq!(run_end(&ev)["cause"], "exit");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn wall_clock_timeout_while_output_flows() {
    let d = Dirs::new();
    let (out, ev, mark) = run(
        &d,
        "echo \"$INIT\"; while :; do echo '{\"type\":\"keep_alive\"}'; sleep 0.05; done",
        &[
            "--timeout",
            "600ms",
            "--idle-timeout",
            "5s",
            "--grace",
            "1s",
        ],
    );
    let end = run_end(&ev);
    assert_eq!(end["cause"], "timeout");
    assert!(ev.len() > 3, "output flowed before the timeout");
    assert_eq!(out.status.code(), Some(124));
    assert_no_procs(&mark, Duration::from_secs(2));
}

#[test]
fn sigint_and_sigterm_are_forwarded() {
    for (sig, code) in [("INT", 130), ("TERM", 143)] {
        let d = Dirs::new();
        let mark = marker("sig");
        let bin = fake(&d, "echo \"$INIT\"; sleep 300 & wait");
        let mut c = spawn_cmd(&d, &bin, &mark, &["--grace", "2s"]);
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let _dog = Watchdog::new(child.id(), Duration::from_secs(30));
        let mut r = BufReader::new(child.stdout.take().unwrap());
        let first = read_until(&mut r, |e| e["type"] == "session.init");
        assert_eq!(first.last().unwrap()["type"], "session.init");
        send_signal(child.id(), sig);
        let rest = read_until(&mut r, |_| false);
        let out = wait_within(child, Duration::from_secs(20));
        let ev: Vec<_> = first.into_iter().chain(rest).collect();
        check_envelope(&ev);
        let end = run_end(&ev);
        assert_eq!(end["cause"], "interrupted", "{sig}");
        assert_eq!(end["reason"], format!("SIG{sig}"));
        assert_eq!(end["signals_sent"][0], "SIGINT");
        assert_eq!(out.status.code(), Some(code), "{sig}");
        assert_no_procs(&mark, Duration::from_secs(2));
    }
}

#[test]
fn repeated_interrupts_escalate_at_once() {
    let d = Dirs::new();
    let mark = marker("sig3");
    let bin = fake(
        &d,
        "trap '' INT TERM; echo \"$INIT\"; while :; do sleep 0.05; done",
    );
    let mut c = spawn_cmd(&d, &bin, &mark, &["--grace", "60s"]);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let _dog = Watchdog::new(child.id(), Duration::from_secs(30));
    let t0 = Instant::now();
    let mut r = BufReader::new(child.stdout.take().unwrap());
    read_until(&mut r, |e| e["type"] == "session.init");
    for _ in 0..3 {
        send_signal(child.id(), "INT");
        std::thread::sleep(Duration::from_millis(150));
    }
    let rest = read_until(&mut r, |_| false);
    let out = wait_within(child, Duration::from_secs(20));
    assert!(t0.elapsed() < Duration::from_secs(15), "{:?}", t0.elapsed());
    let end = run_end(&rest);
    assert_eq!(
        end["signals_sent"],
        serde_json::json!(["SIGINT", "SIGTERM", "SIGKILL"])
    );
    assert_eq!(out.status.code(), Some(130));
    assert_no_procs(&mark, Duration::from_secs(2));
}

#[test]
fn orphans_are_reaped_while_the_child_runs() {
    let d = Dirs::new();
    let mark = marker("zomb");
    let bin = fake(
        &d,
        "for i in 1 2 3; do (sleep 0.05 &); done; echo \"$INIT\"; sleep 1.5; echo \"$RESULT\"",
    );
    let mut c = spawn_cmd(&d, &bin, &mark, &[]);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let _dog = Watchdog::new(child.id(), Duration::from_secs(30));
    let mut r = BufReader::new(child.stdout.take().unwrap());
    read_until(&mut r, |e| e["type"] == "session.init");
    std::thread::sleep(Duration::from_millis(600));
    let me = child.id().to_string();
    let mut zombies = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let stat = fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() > 1 && f[0] == "Z" && f[1] == me {
            zombies.push(stat.clone());
        }
    }
    let rest = read_until(&mut r, |_| false);
    let out = wait_within(child, Duration::from_secs(20));
    assert!(zombies.is_empty(), "unreaped children: {zombies:?}");
    assert_eq!(run_end(&rest)["cause"], "exit");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn closed_output_stops_the_child_quietly() {
    let d = Dirs::new();
    let mark = marker("epipe");
    let bin = fake(
        &d,
        "echo \"$INIT\"; while :; do echo '{\"type\":\"keep_alive\"}'; sleep 0.01; done",
    );
    let mut c = spawn_cmd(&d, &bin, &mark, &["--grace", "1s", "--line-buffered"]);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let _dog = Watchdog::new(child.id(), Duration::from_secs(30));
    let mut r = BufReader::new(child.stdout.take().unwrap());
    read_until(&mut r, |e| e["type"] == "session.init");
    drop(r);
    let out = wait_within(child, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_no_procs(&mark, Duration::from_secs(2));
}

/// `spawn … | head -1` with a child that then goes quiet: the reader going away is seen without
/// a write, so the child is stopped at once (not when it next writes, or exits after 300 s):
/// exit 0, nothing on stderr, and the audit log ends with `run.end` (`killed`,
/// `output_closed`).
#[test]
fn closed_output_stops_a_quiet_child_at_once() {
    let d = Dirs::new();
    let mark = marker("quiet-epipe");
    let bin = fake(&d, "echo \"$INIT\"; echo \"$INIT\"; sleep 300");
    let audit = d.path().join("run.audit.jsonl");
    let audit_arg = audit.to_str().unwrap();
    let mut c = spawn_cmd(&d, &bin, &mark, &["--audit", audit_arg]);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let _dog = Watchdog::new(child.id(), Duration::from_secs(60));
    let mut r = BufReader::new(child.stdout.take().unwrap());
    read_until(&mut r, |e| e["type"] == "session.init");
    // Everything the child wrote has gone out by now: no later write can find the pipe closed.
    std::thread::sleep(Duration::from_millis(500));
    let closed = Instant::now();
    drop(r);
    let out = wait_within(child, Duration::from_secs(30));
    let took = closed.elapsed();
    assert!(
        took < Duration::from_secs(3),
        "ended {took:?} after the reader"
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_no_procs(&mark, Duration::from_secs(2));
    let end = &last_record(&audit)["event"];
    assert_eq!(end["type"], "run.end", "{end}");
    assert_eq!(end["cause"], "killed", "{end}");
    assert_eq!(end["reason"], "output_closed", "{end}");
    let v = audit_verify(&audit, &["--require-complete"]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
}
