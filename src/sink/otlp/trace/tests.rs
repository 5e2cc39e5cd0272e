//! Unit tests of the span builder: determinism of what is closed at the end of a run.

use serde_json::json;

use super::Trace;
use crate::clock::Stamp;
use crate::envelope::kind;
use crate::json::fields::Index;

impl Trace {
    /// [`Trace::event`] with the event given as a JSON value.
    fn feed(&mut self, kind: &str, ev: &serde_json::Value, at: Stamp, cli_version: Option<&str>) {
        self.feed_text(kind, &ev.to_string(), at, cli_version);
    }

    /// [`Trace::event`] with the event given as JSON text (spelled as it is).
    fn feed_text(&mut self, kind: &str, ev: &str, at: Stamp, cli_version: Option<&str>) {
        let mut index = Index::default();
        assert!(index.build(ev.as_bytes()));
        self.event(kind, &index.view(ev.as_bytes()), at, cli_version, None);
    }
}

fn at(us: i64) -> Stamp {
    Stamp {
        unix_us: us,
        mono_us: 0,
    }
}

/// Span names and ids in emission order for a run that ends with many messages and tool
/// calls still open.
fn cut_short_run() -> Vec<(String, [u8; 8])> {
    let mut t = Trace::new("r", false);
    for i in 0..12 {
        let msg = format!("msg_{i}");
        let ev = json!({"session_id": "s", "message_id": msg, "model": "m", "text": "x"});
        t.feed(kind::TEXT, &ev, at(i), None);
        let call = json!({"message_id": msg, "tool_use_id": format!("toolu_{i}"), "name": "Bash"});
        t.feed(kind::TOOL_CALL, &call, at(i), None);
    }
    t.end(at(100), "killed");
    t.take_finished()
        .into_iter()
        .map(|s| (s.name, s.span_id))
        .collect()
}

#[test]
fn spans_closed_at_the_end_come_out_in_a_stable_order() {
    let first = cut_short_run();
    assert_eq!(first.len(), 25, "12 chats, 12 tool calls, the root");
    for _ in 0..5 {
        assert_eq!(cut_short_run(), first);
    }
    assert_eq!(
        first.last().unwrap().0,
        "invoke_agent Claude Code",
        "the root last"
    );
}

#[test]
fn repeated_message_ids_get_distinct_span_ids_in_linear_time() {
    // Inputs that append runs can repeat message ids; each repetition is a span of its own,
    // numbered by a counter (not by probing, which was quadratic).
    let mut t = Trace::new("r", false);
    let n = 3000;
    for i in 0..n {
        let msg = json!({"message_id": "msg_same", "text": "x"});
        t.feed(kind::TEXT, &msg, at(i), None);
        t.feed(
            kind::USAGE,
            &json!({"message_id": "msg_same", "usage": {}}),
            at(i),
            None,
        );
        let call = json!({"message_id": "msg_same", "tool_use_id": "toolu_same", "name": "Bash"});
        t.feed(kind::TOOL_CALL, &call, at(i), None);
        t.feed(
            kind::TOOL_RESULT,
            &json!({"tool_use_id": "toolu_same"}),
            at(i),
            None,
        );
    }
    t.end(at(n), "eof");
    let spans = t.take_finished();
    let ids: std::collections::HashSet<_> = spans.iter().map(|s| s.span_id).collect();
    assert_eq!(ids.len(), spans.len());
    assert!(spans.len() > n as usize, "{}", spans.len());
}

/// A tool call without id (the CLI's block had none) is a span of its own, without
/// `gen_ai.tool.call.id` and said to lack one; a result without id is paired with nothing and
/// noted on the root.
#[test]
fn a_call_without_id_has_a_span_and_a_result_without_id_is_noted() {
    let mut t = Trace::new("r", false);
    let text = json!({"session_id": "s", "message_id": "m1", "model": "m", "text": "x"});
    t.feed(kind::TEXT, &text, at(1), None);
    for seq in [2, 3] {
        let call = json!({"seq": seq, "message_id": "m1", "tool_use_id": null, "name": "Bash"});
        t.feed(kind::TOOL_CALL, &call, at(seq), None);
    }
    let result = json!({"seq": 4, "tool_use_id": null, "is_error": true, "line": 2});
    t.feed(kind::TOOL_RESULT, &result, at(4), None);
    t.end(at(5), "eof");
    let spans = t.take_finished();
    let tools: Vec<_> = spans
        .iter()
        .filter(|s| s.name == "execute_tool Bash")
        .collect();
    assert_eq!(tools.len(), 2, "one span per call");
    assert_ne!(tools[0].span_id, tools[1].span_id);
    for s in &tools {
        let keys: Vec<&str> = s.attributes.iter().map(|a| &*a.key).collect();
        assert!(!keys.contains(&"gen_ai.tool.call.id"), "{keys:?}");
        assert!(
            keys.contains(&"boo_normalize.tool.call_id_missing"),
            "{keys:?}"
        );
        assert!(s.status.is_none(), "the result is not theirs");
    }
    let root = spans.last().unwrap();
    let noted: Vec<_> = root
        .events
        .iter()
        .filter(|e| e.name == "boo_normalize.unpaired_tool_result")
        .collect();
    assert_eq!(noted.len(), 1);
    assert!(
        noted[0]
            .attributes
            .iter()
            .any(|a| a.key == "boo_normalize.tool.is_error")
    );
}

/// A message the CLI wrote itself (a local command's output, an API error) says so on its chat
/// span; a real one does not.
#[test]
fn a_synthetic_message_is_marked_on_its_chat_span() {
    let mut t = Trace::new("r", false);
    let local = json!({"message_id": "u1", "model": "<synthetic>", "text": "## Context Usage", "synthetic": true, "error": null});
    let real = json!({"message_id": "m2", "model": "m", "text": "hi"});
    for (i, text) in [local, real].iter().enumerate() {
        let at_i = at(i as i64 + 1);
        t.feed(kind::TEXT, text, at_i, None);
        let usage = json!({"message_id": text["message_id"], "usage": {}});
        t.feed(kind::USAGE, &usage, at_i, None);
    }
    t.end(at(3), "eof");
    let spans = t.take_finished();
    let find = |name: &str| {
        spans
            .iter()
            .find(|s| s.name == name)
            .unwrap()
            .attributes
            .iter()
            .any(|a| a.key == "boo_normalize.synthetic")
    };
    assert!(find("chat <synthetic>"));
    assert!(!find("chat m"));
}

/// A denied call's span says why it did not run (the CLI's permission_denied line comes
/// before the call's error result); the CLI's informational notice goes on the root.
#[test]
fn a_permission_denial_is_on_the_call_and_a_notice_on_the_root() {
    let mut t = Trace::new("r", false);
    let text = json!({"session_id": "s", "message_id": "m1", "model": "m", "text": "x"});
    t.feed(kind::TEXT, &text, at(1), None);
    let call = json!({"message_id": "m1", "tool_use_id": "t1", "name": "Bash"});
    t.feed(kind::TOOL_CALL, &call, at(2), None);
    let notice = json!({"level": "warning", "content": "no check", "tool_use_id": null,
        "extra": {"tag": "auto_mode_no_server_check"}});
    t.feed("informational", &notice, at(3), None);
    let denied = json!({"tool_name": "Bash", "tool_use_id": "t1", "decision_reason": "Classifier unavailable",
        "message": "not run", "extra": {"decision_reason_code": "auto_mode_no_check_in_session"}});
    t.feed("permission.denied", &denied, at(3), None);
    t.feed(
        kind::TOOL_RESULT,
        &json!({"tool_use_id": "t1", "is_error": true}),
        at(4),
        None,
    );
    t.end(at(5), "eof");
    let spans = t.take_finished();
    let tool = spans
        .iter()
        .find(|s| s.name == "execute_tool Bash")
        .unwrap();
    let e = tool
        .events
        .iter()
        .find(|e| e.name == "boo_normalize.permission_denied")
        .unwrap();
    let keys: Vec<&str> = e.attributes.iter().map(|a| &*a.key).collect();
    assert!(
        keys.contains(&"boo_normalize.permission.decision_reason"),
        "{keys:?}"
    );
    assert!(
        keys.contains(&"boo_normalize.permission.decision_reason_code"),
        "{keys:?}"
    );
    let root = spans.last().unwrap();
    let info = root
        .events
        .iter()
        .find(|e| e.name == "boo_normalize.informational")
        .unwrap();
    assert!(
        info.attributes
            .iter()
            .any(|a| a.key == "boo_normalize.info.tag")
    );
}

/// A background task's start and end are root events (its summary only with content on), and
/// so is a compaction.
#[test]
fn a_background_task_and_a_compaction_are_root_events() {
    for content in [false, true] {
        let mut t = Trace::new("r", content);
        let started = json!({"task_id": "b1", "tool_use_id": "t1", "task_type": "local_bash",
            "description": "Wait, then print a marker"});
        t.feed("task.started", &started, at(1), None);
        let done = json!({"task_id": "b1", "tool_use_id": "t1", "status": "completed",
            "summary": "done", "output_file": "/tmp/b1.output"});
        t.feed("task.notification", &done, at(2), None);
        let compact = json!({"trigger": "auto", "pre_tokens": 164395,
            "extra": {"compact_metadata": {"trigger": "auto", "post_tokens": 2638}}});
        t.feed("compact.boundary", &compact, at(2), None);
        t.end(at(3), "eof");
        let root = t.take_finished().pop().unwrap();
        let events: Vec<(&str, Vec<&str>)> = root
            .events
            .iter()
            .map(|e| {
                let keys = e.attributes.iter().map(|a| &*a.key).collect();
                (e.name, keys)
            })
            .collect();
        assert_eq!(events[0].0, "boo_normalize.task_started");
        assert_eq!(events[1].0, "boo_normalize.task_notification");
        assert_eq!(events[2].0, "boo_normalize.compact_boundary");
        assert!(events[2].1.contains(&"boo_normalize.compact.post_tokens"));
        assert!(events[1].1.contains(&"boo_normalize.task.status"));
        assert_eq!(
            events[1].1.contains(&"boo_normalize.task.summary"),
            content,
            "{events:?}"
        );
    }
}

/// A subagent's span is named by its call's `subagent_type` however the input spells the key
/// (an escaped key is read too), and by the tool's name when the input has none.
#[test]
fn a_subagent_is_named_by_its_calls_subagent_type_however_spelled() {
    let cases = [
        (
            r#"{"subagent_type":"Explore","prompt":"p"}"#,
            "invoke_agent Explore",
        ),
        (r#"{"\u0073ubagent_type":"Plan"}"#, "invoke_agent Plan"),
        (r#"{"prompt":"no type"}"#, "invoke_agent Task"),
    ];
    for (input, want) in cases {
        let mut t = Trace::new("r", false);
        let text = json!({"session_id": "s", "message_id": "m1", "model": "m", "text": "x"});
        t.feed(kind::TEXT, &text, at(1), None);
        let call =
            format!(r#"{{"message_id":"m1","tool_use_id":"t1","name":"Task","input":{input}}}"#);
        t.feed_text(kind::TOOL_CALL, &call, at(2), None);
        let sub =
            json!({"parent_tool_use_id": "t1", "message_id": "m2", "model": "m", "text": "y"});
        t.feed(kind::TEXT, &sub, at(3), None);
        t.end(at(4), "eof");
        let names: Vec<String> = t.take_finished().into_iter().map(|s| s.name).collect();
        assert!(names.iter().any(|n| n == want), "{input}: {names:?}");
    }
}

/// A chat takes the stop reason its assistant line carries when no event of the stream says
/// one (a message without usage); one the stream says wins.
#[test]
fn a_chat_takes_its_source_lines_stop_reason_unless_the_stream_says_one() {
    let line = br#"{"type":"assistant","message":{"id":"m1","stop_reason":"end_turn"}}"#;
    for (own, want) in [(None, "end_turn"), (Some("tool_use"), "tool_use")] {
        let mut t = Trace::new("r", false);
        let mut ev = json!({"session_id": "s", "message_id": "m1", "model": "m", "text": "x"});
        if let Some(r) = own {
            ev["stop_reason"] = json!(r);
        }
        let text = ev.to_string();
        let mut index = Index::default();
        assert!(index.build(text.as_bytes()));
        t.event(
            kind::TEXT,
            &index.view(text.as_bytes()),
            at(1),
            None,
            Some(line),
        );
        t.end(at(2), "eof");
        let chat = t
            .take_finished()
            .into_iter()
            .find(|s| s.name == "chat m")
            .unwrap();
        let finish = chat
            .attributes
            .iter()
            .find(|a| a.key == "gen_ai.response.finish_reasons")
            .map(|a| a.value.clone());
        assert_eq!(
            finish,
            Some(crate::sink::otlp::span::Value::Strs(vec![want.into()])),
            "{own:?}"
        );
    }
}
