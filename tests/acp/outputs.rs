//! The same runs beyond the ACP connection, two sessions at once: `--audit` (one file, each
//! session a run of its own: the log verifies, and each session reads back on its own),
//! `--envelope`, `--otlp-endpoint` (one trace per prompt, the prompts of a session linked by
//! `gen_ai.conversation.id`) against a loopback OTLP/HTTP receiver, and `--redact` applied
//! before anything leaves the process (the ACP updates included), while the CLI still gets its
//! own tool input back.

use std::collections::BTreeMap;
use std::fs;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::{Value, json};

use super::env;
use crate::common::BIN;
use crate::sinks::otlp_export::{Answer, Receiver};
use crate::spawn::common::audit_verify;

/// Attribute `key` of `s`, as text (strings and integers).
fn attr(s: &Span, key: &str) -> Option<String> {
    let v = s.attributes.iter().find(|a| a.key == key)?.value.as_ref()?;
    match v.value.as_ref()? {
        Any::StringValue(t) => Some(t.clone()),
        Any::IntValue(n) => Some(n.to_string()),
        _ => None,
    }
}

/// `replay --run RUN` of the audit log: the run's envelope.
fn replay_run(log: &std::path::Path, run: &str) -> Vec<Value> {
    let out = std::process::Command::new(BIN)
        .args(["replay", "--speed", "max", "--run", run])
        .arg(log)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn two_sessions_audit_envelope_traces_and_redaction_see_the_same_runs() {
    let Some(e) = env("acp_outputs") else { return };
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let api = e.api(json!({"responses": [
        {"label": "second", "match": {"last_user": "second question"}, "content": [{"type": "text", "text": "Second answer."}]},
        {"label": "bash", "match": {"first_user": "write the token"}, "content": [{"type": "tool_use", "name": "Bash", "input": {"command": format!("echo {secret} > token.txt && cat token.txt"), "description": "Write the token"}}]},
        {"label": "end", "match": {"first_user": "write the token"}, "delay": 0.5, "content": [{"type": "text", "text": format!("The token is {secret}.")}]},
        {"label": "beta", "match": {"first_user": "beta"}, "delay": 1.0, "content": [{"type": "text", "text": "Beta answer."}]}
    ]}));
    let rx = Receiver::start(Answer::Status(200));
    let audit = e.d.path().join("run.audit.jsonl");
    let envelope = e.d.path().join("run.ndjson");
    let r = e.drive(
        &api,
        &[
            "--audit",
            audit.to_str().unwrap(),
            "--envelope",
            envelope.to_str().unwrap(),
            "--otlp-endpoint",
            &rx.url(),
            "--redact",
        ],
        json!(["allow"]),
        json!([
            {"op": "initialize"},
            {"op": "new", "as": "a"},
            {"op": "new", "as": "b"},
            {"op": "prompt", "session": "a", "text": "write the token", "as": "p1", "wait": false},
            {"op": "prompt", "session": "b", "text": "beta question", "as": "pb", "wait": false},
            {"op": "await", "prompt": "p1"},
            {"op": "await", "prompt": "pb"},
            {"op": "prompt", "session": "a", "text": "second question", "as": "p2"}
        ]),
    );
    for p in ["p1", "pb", "p2"] {
        assert_eq!(r.stop(p), "end_turn", "{p}");
    }
    let (sa, sb) = (
        r.v["sessions"]["a"].as_str().unwrap().to_owned(),
        r.v["sessions"]["b"].as_str().unwrap().to_owned(),
    );
    // The CLI ran the command it asked for (not the redacted one).
    assert_eq!(
        fs::read_to_string(e.d.work.join("token.txt"))
            .unwrap()
            .trim(),
        secret
    );
    // Nothing the client got holds the secret: text, tool input, tool output, permission request.
    for m in &r.trace {
        assert!(
            !m.to_string().contains(secret),
            "the secret reached the client: {m}"
        );
    }
    assert!(r.text("a", "agent_message_chunk").contains("The token is"));
    assert_eq!(r.text("b", "agent_message_chunk"), "Beta answer.");

    // The audit log: one chain, each session a run of its own (its id the session's), their
    // records interleaved; it verifies, and each session reads back on its own.
    let out = audit_verify(&audit, &["--require-complete"]);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(" in 2 runs"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = fs::read_to_string(&audit).unwrap();
    assert!(!text.contains(secret), "the secret reached the audit log");
    let recs: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut seqs: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut switches = 0;
    for (i, rec) in recs.iter().enumerate() {
        let run = rec["run_id"].as_str().unwrap().to_owned();
        if i > 0 && recs[i - 1]["run_id"] != rec["run_id"] {
            switches += 1;
        }
        seqs.entry(run)
            .or_default()
            .push(rec["seq"].as_u64().unwrap());
    }
    assert_eq!(seqs.keys().cloned().collect::<Vec<_>>(), {
        let mut v = vec![sa.clone(), sb.clone()];
        v.sort();
        v
    });
    assert!(
        switches >= 2,
        "the sessions' records interleave ({switches} switches)"
    );
    for (run, s) in &seqs {
        assert_eq!(*s, (0..s.len() as u64).collect::<Vec<_>>(), "run {run}");
    }
    let a_events = replay_run(&audit, &sa);
    let b_events = replay_run(&audit, &sb);
    let said = |evs: &[Value]| -> String {
        evs.iter()
            .filter(|e| e["type"] == "text")
            .filter_map(|e| e["text"].as_str())
            .collect()
    };
    assert!(said(&a_events).contains("Second answer."), "{a_events:?}");
    assert!(!said(&a_events).contains("Beta answer."));
    assert_eq!(said(&b_events), "Beta answer.");
    assert_eq!(
        a_events.iter().filter(|e| e["type"] == "turn.end").count(),
        2
    );

    // The envelope file has both sessions' runs, whole lines.
    let ev: Vec<Value> = fs::read_to_string(&envelope)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        ev.iter()
            .any(|e| e["type"] == "tool.call" && e["name"] == "Bash")
    );
    assert_eq!(ev.iter().filter(|e| e["type"] == "turn.end").count(), 3);
    assert_eq!(ev.iter().filter(|e| e["type"] == "run.end").count(), 2);
    for e in &ev {
        assert!(
            !e.to_string().contains(secret),
            "the secret reached the envelope: {e}"
        );
    }

    // OTLP: one trace per prompt; a session's traces share its conversation id.
    let spans: Vec<Span> = rx
        .requests()
        .iter()
        .flat_map(|q| {
            ExportTraceServiceRequest::decode(&q.body[..])
                .expect("protobuf")
                .resource_spans
        })
        .flat_map(|rs| rs.scope_spans)
        .flat_map(|ss| ss.spans)
        .collect();
    let roots: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_empty())
        .collect();
    let of = |sid: &str| -> Vec<&Span> {
        let mut v: Vec<&Span> = roots
            .iter()
            .copied()
            .filter(|s| attr(s, "gen_ai.conversation.id").as_deref() == Some(sid))
            .collect();
        v.sort_by_key(|s| attr(s, "boo_normalize.turn"));
        v
    };
    let (ra, rb) = (of(&sa), of(&sb));
    assert_eq!(roots.len(), 3, "{roots:#?}");
    assert_eq!(ra.len(), 2, "{roots:#?}");
    assert_eq!(rb.len(), 1, "{roots:#?}");
    assert_ne!(ra[0].trace_id, ra[1].trace_id);
    assert_ne!(ra[0].trace_id, rb[0].trace_id);
    for (root, turn) in [(ra[0], "1"), (ra[1], "2"), (rb[0], "1")] {
        assert_eq!(attr(root, "boo_normalize.turn").as_deref(), Some(turn));
        assert_eq!(
            attr(root, "boo_normalize.run.cause").as_deref(),
            Some("turn_end")
        );
        assert!(root.status.as_ref().is_none_or(|s| s.code != 2), "{root:?}");
    }
    let in_trace = |root: &Span, name: &str| {
        spans
            .iter()
            .any(|s| s.trace_id == root.trace_id && s.name.starts_with(name))
    };
    assert!(in_trace(ra[0], "execute_tool Bash"));
    assert!(!in_trace(ra[1], "execute_tool Bash"));
    for root in [ra[0], ra[1], rb[0]] {
        assert!(
            in_trace(root, "chat "),
            "a chat span in every prompt's trace"
        );
    }
    for s in &spans {
        assert!(!format!("{s:?}").contains(secret));
    }
}
