//! Adapter 2: a desktop GUI session manager (one process per session). Its contract: SIGINT
//! interrupts a session and leaves the others alone; SIGTERM → 5 s → SIGKILL; a process-exit
//! event (`run.end`) always last; a session-error event (`run.error`) when no result came;
//! claude's stderr logged, never yielded as events; `--resume SESSION_ID`.

use std::time::{Duration, Instant};

use serde_json::json;

use super::harness::*;
use crate::spawn::common::*;

/// SIGINT to one session's process: that session ends `interrupted` (the CLI got SIGINT first,
/// its background job is gone); a second session running beside it finishes untouched.
#[test]
fn sigint_interrupts_one_session_only() {
    need_cli!();
    let (da, db) = (Dirs::new(), Dirs::new());
    let (ma, mb) = (marker("gui_int_a"), marker("gui_int_b"));
    let fa = Fake::start(&da, &background_then_hang(&ma));
    let fb = Fake::start(
        &db,
        &json!({"responses": [{"delay": 3, "content": [{"type": "text", "text": "B done"}]}]}),
    );
    let mut a = Live::start(claude_cmd(
        &da,
        &fa,
        &ma,
        &["--prompt", "Start the job.", "--grace", "3s"],
        &[],
    ));
    let b = Live::start(claude_cmd(&db, &fb, &mb, &["--prompt", "Say B."], &[]));
    a.wait_for("the tool result", |e| e["type"] == "tool.result");
    wait_for_proc(&ma, "sleep 300", Duration::from_secs(10));
    send_signal(a.pid(), "INT");
    let (code, ev, _) = a.finish();
    let end = run_end(&ev);
    assert_eq!(end["cause"], "interrupted");
    assert_eq!(end["reason"], "SIGINT");
    assert_eq!(end["signals_sent"][0], "SIGINT");
    assert!(end["descendants_killed"].as_u64().unwrap() >= 1, "{end}");
    assert_session_error(&ev);
    assert_eq!(code, Some(130));
    assert_no_procs(&ma, Duration::from_secs(1));
    let (code_b, ev_b, err_b) = b.finish();
    assert_eq!(code_b, Some(0), "{err_b}");
    assert_eq!(of_type(&ev_b, "turn.end")[0]["outcome"], "success");
    assert_eq!(run_end(&ev_b)["cause"], "exit");
}

/// `--stop-signal TERM --grace 5s`: SIGTERM to the session's process group (no SIGINT), and
/// whatever ignores it is SIGKILLed 5 s later. Here the tool's `trap '' TERM` shell (in its own
/// session: the CLI dies of the TERM and leaves it, 2.1.45 and 2.1.158), and, since 2.1.332
/// SIGKILLs its running tool itself on TERM, a TERM-ignoring process the shell left outside the
/// CLI's reach (`stubborn`, a double fork), as a tool's background job would be.
#[test]
fn sigterm_then_sigkill_after_five_seconds() {
    need_cli!();
    let d = Dirs::new();
    let mark = marker("gui_term");
    let fake = Fake::start(
        &d,
        &json!({"responses": [
            {"content": [{"type": "tool_use", "name": "Bash", "input": {
                "command": format!("trap '' TERM INT; (setsid sh -c 'sleep 120; :' stubborn &); sleep 120 # {mark}"),
                "description": "stubborn"}}]},
            {"content": [{"type": "text", "text": "done"}]}
        ]}),
    );
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &[
            "--prompt",
            "Wait.",
            "--stop-signal",
            "TERM",
            "--grace",
            "5s",
        ],
        &[],
    );
    let mut live = Live::start(c);
    live.wait_for("the tool call", |e| e["type"] == "tool.call");
    let until = Instant::now() + Duration::from_secs(10);
    let stubborn = loop {
        let found = procs_with(&mark)
            .into_iter()
            .find(|(_, c)| c.starts_with("sh -c sleep 120; : stubborn"));
        if let Some((pid, _)) = found {
            break pid;
        }
        assert!(Instant::now() < until, "the stubborn process did not start");
        std::thread::sleep(Duration::from_millis(30));
    };
    let t = Instant::now();
    send_signal(live.pid(), "TERM");
    // TERM is ignored: the stubborn process is still there well into the grace period…
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        procs_with(&mark).iter().any(|(p, _)| *p == stubborn),
        "killed before the grace period ended"
    );
    let (code, ev, _) = live.finish();
    let took = t.elapsed();
    // …and gone (SIGKILL) once it ended.
    assert!(took >= Duration::from_secs(5), "{took:?}");
    assert!(took < Duration::from_secs(9), "{took:?}");
    let end = run_end(&ev);
    assert_eq!(end["cause"], "interrupted");
    assert_eq!(end["reason"], "SIGTERM");
    assert_eq!(end["signals_sent"], json!(["SIGTERM"]), "{end}");
    assert!(end["descendants_killed"].as_u64().unwrap() >= 1, "{end}");
    assert_session_error(&ev);
    assert_eq!(code, Some(143));
    assert_no_procs(&mark, Duration::from_secs(1));
}

/// The CLI killed from outside (the OOM killer): a session error, then the process-exit event
/// last, with the signal.
#[test]
fn a_killed_cli_gives_session_error_then_exit_event() {
    need_cli!();
    let d = Dirs::new();
    let mark = marker("gui_kill");
    let fake = Fake::start(&d, &background_then_hang(&mark));
    let mut live = Live::start(claude_cmd(
        &d,
        &fake,
        &mark,
        &["--prompt", "Start the job."],
        &[],
    ));
    live.wait_for("the tool result", |e| e["type"] == "tool.result");
    send_signal(wait_for_cli(&mark) as u32, "KILL");
    let (code, ev, _) = live.finish();
    let err = of_type(&ev, "run.error");
    assert_eq!(err.len(), 1);
    assert_eq!(err[0]["cause"], "no_result");
    assert_eq!(ev[ev.len() - 2]["type"], "run.error");
    let end = run_end(&ev);
    assert_eq!(end["cause"], "signal");
    assert_eq!(end["signal"], "SIGKILL");
    assert_eq!(end["terminal_seen"], false);
    assert_eq!(code, Some(137));
    assert_no_procs(&mark, Duration::from_secs(2));
}

/// Claude's stderr (here its debug log) goes to boo-normalize's stderr, prefixed, line by line;
/// none of it becomes an event.
#[test]
fn stderr_is_logged_never_yielded_as_events() {
    need_cli!();
    let d = Dirs::new();
    let fake = Fake::start(
        &d,
        &json!({"responses": [{"content": [{"type": "text", "text": "hi"}]}]}),
    );
    let mark = marker("gui_stderr");
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &["--prompt", "Say hi."],
        &["--debug-to-stderr"],
    );
    let (code, ev, err) = finish(c);
    assert_eq!(code, Some(0));
    let debug = err
        .lines()
        .filter(|l| l.starts_with("claude: ") && l.contains("[DEBUG]"))
        .count();
    assert!(debug >= 10, "{err}");
    assert!(
        err.lines()
            .all(|l| l.starts_with("claude: ") || l.starts_with("boo-normalize: ")),
        "{err}"
    );
    assert!(of_type(&ev, "child.stderr").is_empty());
    assert!(ev.iter().all(|e| !e.to_string().contains("[DEBUG]")));
    assert_eq!(of_type(&ev, "turn.end")[0]["outcome"], "success");
}

/// A second process resumes the first one's session: the same session id, and the API sees the
/// earlier conversation.
#[test]
fn resume_session_id_continues_the_conversation() {
    need_cli!();
    let d = Dirs::new();
    let fake = Fake::start(
        &d,
        &json!({"responses": [
            {"content": [{"type": "text", "text": "first answer"}]},
            {"content": [{"type": "text", "text": "second answer"}]}
        ]}),
    );
    let mark = marker("gui_resume");
    let (code, first, _) = finish(claude_cmd(&d, &fake, &mark, &["--prompt", "One."], &[]));
    assert_eq!(code, Some(0));
    let sid = session_of(&first);
    let (code, second, err) = finish(claude_cmd(
        &d,
        &fake,
        &mark,
        &["--prompt", "Two."],
        &["--resume", &sid],
    ));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        of_type(&second, "session.init")[0]["session_id"],
        sid.as_str()
    );
    assert!(
        second
            .iter()
            .all(|e| e["session_id"].is_null() || e["session_id"] == sid.as_str())
    );
    let last = fake
        .requests()
        .into_iter()
        .rev()
        .find(|r| r["kind"] == "main")
        .unwrap();
    let msgs = last["body"]["messages"].to_string();
    assert!(
        msgs.contains("first answer") && msgs.contains("Two."),
        "{msgs}"
    );
    assert_eq!(
        text_of(&of_type(&second, "turn.end")[0]["result"]),
        "second answer"
    );
}
