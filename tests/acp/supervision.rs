//! Cancel (a stalled answer, a running tool, a held permission request), "always allow", API
//! errors, a CLI killed mid-prompt, and the agent's end (stdin closed, SIGTERM, SIGKILL): what
//! the client gets, and that no process is left.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Env, Report, env};
use crate::adapters::harness::Fake;
use crate::spawn::common::assert_no_procs;

/// Prompt `first question` (`p1`) in session `s` and do not wait for its answer, run `before`,
/// cancel it, wait for its answer, run `after`, then prompt `second question` (`p2`).
fn cancel_then_second(
    e: &Env,
    api: &Fake,
    permissions: Value,
    before: &[Value],
    after: &[Value],
) -> Report {
    let mut steps = vec![
        json!({"op": "initialize"}),
        json!({"op": "new", "as": "s"}),
        json!({"op": "prompt", "session": "s", "text": "first question", "as": "p1", "wait": false}),
    ];
    steps.extend_from_slice(before);
    steps.push(json!({"op": "cancel", "session": "s"}));
    steps.push(json!({"op": "await", "prompt": "p1"}));
    steps.extend_from_slice(after);
    steps.push(json!({"op": "prompt", "session": "s", "text": "second question", "as": "p2"}));
    e.drive(api, &[], permissions, Value::Array(steps))
}

/// `p1` was cancelled within 2 s of the cancel, `p2` then answered `Second answer.` with a stop
/// reason of its own, and no process is left.
fn assert_cancelled_then_answered(e: &Env, r: &Report) {
    assert_eq!(r.stop("p1"), "cancelled");
    let took =
        r.result("p1")["at"].as_u64().unwrap() - r.result("cancel@s")["at"].as_u64().unwrap();
    assert!(took <= 2000, "cancel took {took} ms");
    assert_eq!(
        r.stop("p2"),
        "end_turn",
        "the next prompt has its own stop reason"
    );
    assert!(
        r.text("s", "agent_message_chunk")
            .contains("Second answer.")
    );
    assert_no_procs(&e.mark, Duration::from_secs(5));
}

#[test]
fn cancel_during_a_stalled_answer_then_the_next_prompt_gets_its_own_stop_reason() {
    let Some(e) = env("acp_cancel") else { return };
    // The second prompt's request also holds the first one's text (consecutive user messages
    // are one): its entry comes first.
    let api = e.api(json!({"responses": [
        {"label": "second", "match": {"last_user": "second"}, "content": [{"type": "text", "text": "Second answer."}]},
        {"label": "stalled", "match": {"last_user": "first"}, "hang": true}
    ]}));
    let r = cancel_then_second(&e, &api, json!([]), &e.until_working("s"), &[]);
    assert_cancelled_then_answered(&e, &r);
}

#[test]
fn cancel_during_a_running_tool_stops_it() {
    let Some(e) = env("acp_cancel_tool") else {
        return;
    };
    let api = e.api(json!({"responses": [
        {"label": "second", "match": {"last_user": "second"}, "content": [{"type": "text", "text": "Second answer."}]},
        {"label": "long bash", "match": {"last_user": "first"}, "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch started.txt && sleep 120", "description": "Wait"}}]}
    ]}));
    let r = cancel_then_second(
        &e,
        &api,
        json!(["allow"]),
        &[
            json!({"op": "until_permission"}),
            json!({"op": "sleep", "ms": 1500}),
        ],
        &[],
    );
    assert!(
        e.d.work.join("started.txt").exists(),
        "the tool was running"
    );
    assert_cancelled_then_answered(&e, &r);
}

#[test]
fn a_cancelled_prompt_denies_the_tool_waiting_for_permission() {
    let Some(e) = env("acp_cancel_perm") else {
        return;
    };
    let api = e.api(json!({"responses": [
        {"label": "after", "match": {"last_user": "second"}, "content": [{"type": "text", "text": "Second answer."}]},
        {"label": "bash", "match": {"last_user": "first"}, "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch never.txt", "description": "Create never.txt"}}]}
    ]}));
    let r = cancel_then_second(
        &e,
        &api,
        json!(["hold"]),
        &[json!({"op": "until_permission"})],
        &[json!({"op": "sleep", "ms": 500})],
    );
    assert_eq!(r.stop("p1"), "cancelled");
    assert_eq!(r.stop("p2"), "end_turn");
    assert!(
        !e.d.work.join("never.txt").exists(),
        "the tool ran without approval"
    );
}

#[test]
fn always_allow_is_a_rule_the_cli_keeps() {
    let Some(e) = env("acp_always") else { return };
    let api = e.api(json!({"responses": [
        {"label": "one", "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch a.txt", "description": "a"}}]},
        {"label": "two", "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch a.txt", "description": "a again"}}]},
        {"label": "end", "content": [{"type": "text", "text": "Both done."}]}
    ]}));
    let r = e.one_prompt(&api, &[], json!(["allow_always"]), "touch twice", "p");
    assert_eq!(r.stop("p"), "end_turn");
    assert_eq!(
        r.permissions().len(),
        1,
        "asked again after always: {:?}",
        r.permissions()
    );
    let ok = r
        .updates("s", "tool_call_update")
        .iter()
        .filter(|u| u["status"] == "completed")
        .count();
    assert_eq!(ok, 2);
}

#[test]
fn api_401_is_auth_required_and_500_an_error_naming_it() {
    let Some(e) = env("acp_api_errors") else {
        return;
    };
    let api = e.api(json!({"responses": [
        {"label": "ok", "match": {"last_user": "third"}, "content": [{"type": "text", "text": "Fine now."}]},
        {"label": "500", "match": {"last_user": "second"}, "error": 500, "repeat": -1},
        {"label": "401", "match": {"last_user": "first"}, "error": 401, "repeat": -1}
    ]}));
    let r = e.drive(
        &api,
        &[],
        json!([]),
        json!([
            {"op": "initialize"},
            {"op": "new", "as": "s"},
            {"op": "prompt", "session": "s", "text": "first question", "as": "p1"},
            {"op": "prompt", "session": "s", "text": "second question", "as": "p2"},
            {"op": "prompt", "session": "s", "text": "third question", "as": "p3"},
        ]),
    );
    assert_eq!(
        r.result("p1")["error"]["code"],
        -32000,
        "{}",
        r.result("p1")
    );
    let e500 = &r.result("p2")["error"];
    assert_eq!(e500["code"], -32603, "{e500}");
    assert!(e500["message"].as_str().unwrap().contains("500"), "{e500}");
    assert_eq!(r.stop("p3"), "end_turn");
}

#[test]
fn a_cli_killed_mid_prompt_ends_the_prompt_the_next_resumes_or_says_nothing_was_kept() {
    let Some(e) = env("acp_killed") else { return };
    let audit = e.d.path().join("killed.audit.jsonl");
    let transcripts = e.d.home.join(".claude/projects").join(
        e.d.work
            .to_str()
            .unwrap()
            .replace(|c: char| !c.is_ascii_alphanumeric(), "-"),
    );
    let api = e.api(json!({"responses": [
        {"label": "sixth", "match": {"last_user": "sixth"}, "content": [{"type": "text", "text": "A new conversation."}]},
        {"label": "stalled again", "match": {"last_user": "fourth"}, "hang": true},
        {"label": "third", "match": {"last_user": "third"}, "content": [{"type": "text", "text": "Resumed."}]},
        {"label": "stalled", "match": {"last_user": "second"}, "hang": true},
        {"label": "first", "match": {"last_user": "first"}, "content": [{"type": "text", "text": "First answer."}]}
    ]}));
    let r = e.drive(
        &api,
        &["--audit", audit.to_str().unwrap()],
        json!([]),
        json!([
            {"op": "initialize"},
            {"op": "new", "as": "s"},
            {"op": "prompt", "session": "s", "text": "first question", "as": "p1"},
            {"op": "prompt", "session": "s", "text": "second question", "as": "p2", "wait": false},
            {"op": "sleep", "ms": 1500},
            {"op": "kill_claude", "session": "s"},
            {"op": "await", "prompt": "p2"},
            {"op": "prompt", "session": "s", "text": "third question", "as": "p3"},
            // Killed again, and this time the CLI kept nothing of the conversation (its
            // transcript is gone): the next prompt says so, the one after goes on anew.
            {"op": "prompt", "session": "s", "text": "fourth question", "as": "p4", "wait": false},
            {"op": "sleep", "ms": 1500},
            {"op": "kill_claude", "session": "s"},
            {"op": "await", "prompt": "p4"},
            {"op": "remove_transcript", "session": "s", "dir": transcripts},
            {"op": "prompt", "session": "s", "text": "fifth question", "as": "p5"},
            {"op": "prompt", "session": "s", "text": "sixth question", "as": "p6"},
        ]),
    );
    assert_eq!(r.stop("p1"), "end_turn");
    assert!(
        r.result("killed@s")["pid"].as_u64().is_some(),
        "no claude found to kill"
    );
    let err = &r.result("p2")["error"];
    assert_eq!(err["code"], -32603, "{err}");
    assert!(
        err["message"].as_str().unwrap().contains("claude ended"),
        "{err}"
    );
    assert_eq!(r.stop("p3"), "end_turn");
    assert!(r.text("s", "agent_message_chunk").contains("Resumed."));
    // The fresh CLI resumed the session: its request carries the first turn too.
    let last = api
        .requests()
        .into_iter()
        .rfind(|q| q["label"] == "third")
        .expect("the third prompt reached the API");
    let body = last["body"].to_string();
    assert!(
        body.contains("first question") && body.contains("First answer."),
        "not resumed: {body}"
    );
    assert_eq!(r.result("p4")["error"]["code"], -32603);
    let lost = &r.result("p5")["error"];
    assert_eq!(lost["data"]["conversationLost"], true, "{lost}");
    assert!(
        lost["message"]
            .as_str()
            .unwrap()
            .contains("nothing to resume"),
        "{lost}"
    );
    assert_eq!(r.stop("p6"), "end_turn");
    assert!(
        r.text("s", "agent_message_chunk")
            .contains("A new conversation.")
    );
    let sixth = api
        .requests()
        .into_iter()
        .rfind(|q| q["label"] == "sixth")
        .expect("the sixth prompt reached the API");
    let body = sixth["body"].to_string();
    assert!(
        !body.contains("fifth question") && !body.contains("first question"),
        "a new conversation, the refused prompt not sent: {body}"
    );
    // The session is one run in the audit log across its CLIs: seq and mono_us go on.
    let out = crate::spawn::common::audit_verify(&audit, &[]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains(" in 1 run,"),
        "{said}"
    );
    let recs: Vec<serde_json::Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let sid = r.v["sessions"]["s"].as_str().unwrap();
    assert!(recs.iter().all(|x| x["run_id"] == sid));
    assert_eq!(
        recs.iter()
            .filter(|x| x["event"]["type"] == "run.end")
            .count(),
        3,
        "one run.end per CLI"
    );
    for (i, x) in recs.iter().enumerate() {
        assert_eq!(x["seq"], i as u64);
    }
    // `replay --run` reads the session back across its CLIs, not to the first run.end.
    let out = crate::common::bin()
        .args(["replay", "--raw", "--run", sid])
        .arg(&audit)
        .output()
        .unwrap();
    let raw = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        raw.lines().count(),
        recs.iter().filter(|x| x.get("raw").is_some()).count(),
        "every CLI's lines"
    );
    assert!(
        raw.contains("Resumed.") && raw.contains("A new conversation."),
        "{raw}"
    );
}

fn ends_with(signal: Option<&str>, tag: &str) {
    let Some(e) = env(tag) else { return };
    let api = e.api(json!({"responses": [
        {"label": "long bash", "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch started.txt && sleep 300", "description": "Wait"}}]}
    ]}));
    let last = match signal {
        None => json!({"op": "close_stdin"}),
        Some(s) => json!({"op": "signal_agent", "signal": s}),
    };
    let r = e.drive(
        &api,
        &[],
        json!(["allow"]),
        json!([
            {"op": "initialize"},
            {"op": "new", "as": "s"},
            {"op": "prompt", "session": "s", "text": "wait", "as": "p1", "wait": false},
            {"op": "until_permission"},
            {"op": "sleep", "ms": 1500},
            last
        ]),
    );
    assert!(
        e.d.work.join("started.txt").exists(),
        "the tool was running"
    );
    let exit = r.result("exit");
    assert!(exit["ms"].as_u64().is_some(), "{exit}");
    assert_no_procs(&e.mark, Duration::from_secs(8));
}

#[test]
fn stdin_closed_mid_prompt_leaves_no_process() {
    ends_with(None, "acp_eof");
}

#[test]
fn sigterm_mid_prompt_leaves_no_process() {
    ends_with(Some("SIGTERM"), "acp_term");
}

#[test]
fn sigkill_mid_prompt_leaves_no_process() {
    ends_with(Some("SIGKILL"), "acp_kill");
}
