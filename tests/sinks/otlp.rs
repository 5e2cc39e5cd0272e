//! The OTLP trace sink against every fixture: the span tree's structure properties, determinism
//! (replaying a capture reproduces the live trace byte for byte), and opt-in and redacted
//! content (strict parsing with the official protobuf definitions is in `otlp_proto.rs`).

use crate::common;

use std::collections::HashMap;

use serde_json::Value;

use common::{events, fixtures, root, run};

/// Whether a run ended normally: exit 0, or 3 (reserved for an input without any `result`
/// line; several fixtures are such runs, and so are synthetic inputs here).
pub(super) fn ran(s: &std::process::ExitStatus) -> bool {
    matches!(s.code(), Some(0 | 3))
}

/// All spans of an OTLP/JSON lines file, in order.
fn spans(otlp: &[u8]) -> Vec<Value> {
    let mut out = Vec::new();
    for line in otlp.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let req: Value = serde_json::from_slice(line).expect("an OTLP line is JSON");
        for rs in req["resourceSpans"].as_array().expect("resourceSpans") {
            for ss in rs["scopeSpans"].as_array().expect("scopeSpans") {
                out.extend(ss["spans"].as_array().expect("spans").iter().cloned());
            }
        }
    }
    out
}

/// A span's attributes as key → plain JSON value (intValue strings become numbers).
fn attrs(span: &Value) -> HashMap<String, Value> {
    let mut m = HashMap::new();
    for kv in span["attributes"].as_array().into_iter().flatten() {
        let v = &kv["value"];
        let plain = if let Some(s) = v.get("stringValue") {
            s.clone()
        } else if let Some(i) = v.get("intValue") {
            Value::from(i.as_str().and_then(|s| s.parse::<i64>().ok()).expect("int"))
        } else if let Some(a) = v.get("arrayValue") {
            Value::Array(
                a["values"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|x| x["stringValue"].clone())
                    .collect(),
            )
        } else {
            v.as_object()
                .and_then(|o| o.values().next())
                .cloned()
                .unwrap_or(Value::Null)
        };
        assert!(
            m.insert(kv["key"].as_str().unwrap().to_owned(), plain)
                .is_none(),
            "duplicate key"
        );
    }
    m
}

fn nanos(span: &Value, key: &str) -> u64 {
    span[key]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("a u64 string")
}

fn op(span: &Value) -> String {
    attrs(span)["gen_ai.operation.name"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Normalize `input` with `args` plus `--format otlp`; (envelope events, spans, raw otlp).
fn trace_of(input: &[u8], args: &[&str]) -> (Vec<Value>, Vec<Value>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let env_path = dir.path().join("env.ndjson");
    let mut all = vec!["--format", "otlp", "--envelope", env_path.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run(&all, input);
    assert!(ran(&out.status), "{}", String::from_utf8_lossy(&out.stderr));
    let env = std::fs::read(&env_path).unwrap();
    (events(&env), spans(&out.stdout), out.stdout)
}

/// How many `claude` invocations the events hold: one, plus one per `session.init` of another
/// session than the current one.
fn invocations(evs: &[Value]) -> usize {
    let mut n = 1;
    let mut current: Option<&str> = None;
    for e in evs {
        let Some(s) = e["session_id"].as_str() else {
            continue;
        };
        match current {
            Some(c) if e["type"] == "session.init" && c != s => {
                n += 1;
                current = Some(s);
            }
            None => current = Some(s),
            _ => {}
        }
    }
    n
}

/// The structure properties of one run's traces against its envelope.
fn check_structure(name: &str, evs: &[Value], spans: &[Value]) {
    let by_id: HashMap<&str, &Value> = spans
        .iter()
        .map(|s| (s["spanId"].as_str().unwrap(), s))
        .collect();
    assert_eq!(by_id.len(), spans.len(), "{name}: span ids are unique");
    let roots: Vec<&Value> = spans.iter().filter(|s| s["parentSpanId"] == "").collect();
    let agents: HashMap<String, &Value> = spans
        .iter()
        .filter(|s| op(s) == "invoke_agent" && s["parentSpanId"] != "")
        .map(|s| {
            (
                attrs(s)["boo_normalize.parent_tool_use_id"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                s,
            )
        })
        .collect();
    let threads: std::collections::HashSet<&str> = evs
        .iter()
        .filter_map(|e| e["parent_tool_use_id"].as_str())
        .collect();
    assert!(
        agents.keys().all(|k| threads.contains(k.as_str())),
        "{name}: agent spans only for subagents"
    );
    // One trace, with one root, per claude invocation (a log of several runs one after the
    // other: a session.init of another session starts the next).
    assert_eq!(
        roots.len(),
        invocations(evs),
        "{name}: one root per invocation"
    );
    for s in spans {
        let in_trace: Vec<_> = roots
            .iter()
            .filter(|r| r["traceId"] == s["traceId"])
            .collect();
        assert_eq!(
            in_trace.len(),
            1,
            "{name}: {} is in a trace with one root",
            s["name"]
        );
        assert_eq!(op(in_trace[0]), "invoke_agent", "{name}");
        let p = s["parentSpanId"].as_str().unwrap();
        assert!(
            p.is_empty() || by_id.get(p).is_some_and(|q| q["traceId"] == s["traceId"]),
            "{name}: parent of {} exists in its trace",
            s["name"]
        );
        assert!(
            nanos(s, "endTimeUnixNano") >= nanos(s, "startTimeUnixNano"),
            "{name}: {} ends before it starts",
            s["name"]
        );
    }
    // Chat spans by message id, tool spans by call id; a message without an id (a subagent's
    // final message, read from its call's result) has a chat span without one.
    let chat_spans = spans.iter().filter(|s| op(s) == "chat").count();
    let chats: HashMap<String, &Value> = spans
        .iter()
        .filter(|s| op(s) == "chat")
        .filter_map(|s| Some((attrs(s).get("gen_ai.response.id")?.as_str()?.to_owned(), s)))
        .collect();
    let tools: HashMap<String, &Value> = spans
        .iter()
        .filter(|s| op(s) == "execute_tool")
        .map(|s| {
            (
                attrs(s)["gen_ai.tool.call.id"].as_str().unwrap().to_owned(),
                s,
            )
        })
        .collect();
    let calls: Vec<&Value> = evs.iter().filter(|e| e["type"] == "tool.call").collect();
    assert_eq!(
        tools.len(),
        calls.len(),
        "{name}: one execute_tool span per tool call"
    );
    for c in &calls {
        let id = c["tool_use_id"].as_str().unwrap();
        let t = tools[id];
        assert_eq!(attrs(t)["gen_ai.tool.name"], c["name"], "{name}: tool name");
        if let Some(m) = c["message_id"].as_str() {
            let chat = chats
                .get(m)
                .unwrap_or_else(|| panic!("{name}: chat span of {m}"));
            assert_eq!(
                t["parentSpanId"], chat["spanId"],
                "{name}: {id}'s parent is its chat"
            );
        }
        if let Some(p) = c["parent_tool_use_id"].as_str()
            && let Some(m) = c["message_id"].as_str()
            && let Some(spawner) = tools.get(p)
        {
            let agent = by_id[chats[m]["parentSpanId"].as_str().unwrap()];
            assert_eq!(
                op(agent),
                "invoke_agent",
                "{name}: a subagent's chat is in its agent span"
            );
            assert_eq!(
                agent["parentSpanId"], spawner["spanId"],
                "{name}: a subagent hangs under the tool call that started it"
            );
            assert!(
                nanos(agent, "startTimeUnixNano") >= nanos(spawner, "startTimeUnixNano"),
                "{name}"
            );
        }
    }
    for r in evs.iter().filter(|e| e["type"] == "tool.result") {
        let Some(t) = tools.get(r["tool_use_id"].as_str().unwrap()) else {
            continue;
        };
        let error = t["status"]["code"] == 2;
        assert_eq!(
            error,
            r["is_error"] == true,
            "{name}: error status iff is_error"
        );
    }
    // Token sums over chat spans equal the envelope's usage (once per message).
    let mut want = [0i64; 4];
    for u in evs.iter().filter(|e| e["type"] == "usage") {
        let n = |k: &str| u["usage"][k].as_i64().unwrap_or(0);
        let (read, created) = (
            n("cache_read_input_tokens"),
            n("cache_creation_input_tokens"),
        );
        want[0] += n("input_tokens") + read + created;
        want[1] += n("output_tokens");
        want[2] += read;
        want[3] += created;
    }
    let mut got = [0i64; 4];
    for s in spans {
        let a = attrs(s);
        let keys = [
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.cache_read.input_tokens",
            "gen_ai.usage.cache_creation.input_tokens",
        ];
        for (i, k) in keys.iter().enumerate() {
            if let Some(v) = a.get(*k) {
                assert_eq!(op(s), "chat", "{name}: tokens only on chat spans");
                got[i] += v.as_i64().unwrap();
            }
        }
    }
    assert_eq!(got, want, "{name}: token sums over chat spans");
    // …and run.end's usage totals when every message's counts are final (run.end takes the
    // result lines' final usage, chat spans carry each message's own, possibly provisional).
    let end = evs.last().unwrap();
    let all_final = evs
        .iter()
        .filter(|e| e["type"] == "usage")
        .all(|e| e["provisional"] == false);
    if let Some(t) = end.get("usage").filter(|u| u.is_object() && all_final) {
        let n = |k: &str| t[k].as_i64().unwrap_or(0);
        let (read, created) = (
            n("cache_read_input_tokens"),
            n("cache_creation_input_tokens"),
        );
        let totals = [
            n("input_tokens") + read + created,
            n("output_tokens"),
            read,
            created,
        ];
        assert_eq!(
            got, totals,
            "{name}: token sums over chat spans = run.end totals"
        );
    }
    let usage_msgs = evs.iter().filter(|e| e["type"] == "usage").count();
    assert_eq!(
        chat_spans, usage_msgs,
        "{name}: one chat span per API message"
    );
    let with_id = evs
        .iter()
        .filter(|e| e["type"] == "usage" && e["message_id"].is_string())
        .count();
    assert_eq!(chats.len(), with_id, "{name}: chat spans named by id");
}

#[test]
fn every_fixture_gives_a_well_formed_trace() {
    let mut finish_checked = 0;
    for f in fixtures() {
        let input = std::fs::read(&f).unwrap();
        let name = f.display().to_string();
        let (evs, spans, _) = trace_of(&input, &["--run-id", "fixed"]);
        check_structure(&name, &evs, &spans);
        let end = evs.last().unwrap();
        let roots: Vec<&Value> = spans.iter().filter(|s| s["parentSpanId"] == "").collect();
        let root = roots[0];
        let session = evs.iter().find_map(|e| e["session_id"].as_str());
        assert_eq!(
            attrs(root)
                .get("gen_ai.conversation.id")
                .and_then(Value::as_str),
            session,
            "{name}"
        );
        assert_eq!(attrs(root)["gen_ai.provider.name"], "anthropic");
        // The last invocation ends with the run; the earlier ones, where the next began.
        for (i, r) in roots.iter().enumerate() {
            let want = if i + 1 == roots.len() {
                end["cause"].clone()
            } else {
                "next_invocation".into()
            };
            assert_eq!(attrs(r)["boo_normalize.run.cause"], want, "{name}");
        }
        // Finish reasons: what the assistant lines say (some CLI versions fill stop_reason).
        let mut want: HashMap<String, String> = HashMap::new();
        for l in input.split(|b| *b == b'\n') {
            let Ok(v) = serde_json::from_slice::<Value>(l) else {
                continue;
            };
            let (id, r) = (&v["message"]["id"], &v["message"]["stop_reason"]);
            if v["type"] == "assistant"
                && let (Some(id), Some(r)) = (id.as_str(), r.as_str())
            {
                want.entry(id.to_owned()).or_insert_with(|| r.to_owned());
            }
        }
        // A placeholder count is marked on its span exactly when the envelope says provisional.
        let provisional: HashMap<&str, bool> = evs
            .iter()
            .filter(|e| e["type"] == "usage")
            .filter_map(|e| Some((e["message_id"].as_str()?, e["provisional"] == true)))
            .collect();
        let mut seen = 0;
        for s in spans.iter().filter(|s| op(s) == "chat") {
            let a = attrs(s);
            let Some(id) = a.get("gen_ai.response.id").and_then(Value::as_str) else {
                // A message without an id: its usage is the API's final count.
                assert_eq!(a.get("boo_normalize.usage.provisional"), None, "{name}");
                continue;
            };
            if let Some(p) = provisional.get(id) {
                let marked = a.get("boo_normalize.usage.provisional") == Some(&Value::Bool(true));
                assert_eq!(marked, *p, "{name}: {id}: provisional usage on the span");
            }
            if let Some(r) = want.get(id) {
                let got = &a["gen_ai.response.finish_reasons"];
                assert_eq!(got, &serde_json::json!([r]), "{name}: {id}");
                seen += 1;
            }
        }
        finish_checked += seen;
    }
    assert!(
        finish_checked >= 10,
        "finish reasons from assistant lines: {finish_checked}"
    );
}

#[test]
fn ids_follow_the_run_id_and_a_replayed_capture_or_audit_log_reproduces_the_live_trace() {
    let dir = tempfile::tempdir().unwrap();
    let input =
        std::fs::read(root().join("fixtures/captured/2.1.45/subagent.partial.ndjson")).unwrap();
    let cap = dir.path().join("cap.jsonl");
    let audit = dir.path().join("run.audit.jsonl");
    let live = dir.path().join("live.otlp");
    let out = run(
        &[
            "--record",
            cap.to_str().unwrap(),
            "--audit",
            audit.to_str().unwrap(),
            "--otlp",
            live.to_str().unwrap(),
            "--run-id",
            "r-1",
        ],
        &input,
    );
    assert!(out.status.success());
    let live = std::fs::read(&live).unwrap();
    assert!(!live.is_empty());
    for recording in [&cap, &audit] {
        let args = [
            "replay",
            "--speed",
            "max",
            "--format",
            "otlp",
            recording.to_str().unwrap(),
        ];
        let replayed = run(&args, b"");
        assert!(
            replayed.status.success(),
            "{}",
            String::from_utf8_lossy(&replayed.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&replayed.stdout),
            String::from_utf8_lossy(&live),
            "{} replays to the live trace",
            recording.display()
        );
    }

    let ids = |run_id: &str| -> Vec<(String, String)> {
        let (_, spans, _) = trace_of(&input, &["--run-id", run_id]);
        spans
            .iter()
            .map(|s| {
                (
                    s["traceId"].as_str().unwrap().into(),
                    s["spanId"].as_str().unwrap().into(),
                )
            })
            .collect()
    };
    assert_eq!(ids("a"), ids("a"), "same run id, same ids");
    assert_ne!(ids("a"), ids("b"), "another run id, other ids");
}

pub(super) fn secret_input() -> Vec<u8> {
    let secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    [
        r#"{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-5","cwd":"/w","tools":["Bash"],"mcp_servers":[],"permissionMode":"default","apiKeySource":"none","claude_code_version":"2.1.45","uuid":"u0"}"#.to_owned(),
        format!(r#"{{"type":"assistant","message":{{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{{"type":"text","text":"token {secret}"}},{{"type":"tool_use","id":"toolu_1","name":"Bash","input":{{"command":"echo {secret}"}}}}],"stop_reason":null,"usage":{{"input_tokens":3,"output_tokens":5}}}},"session_id":"s1","parent_tool_use_id":null,"uuid":"u1"}}"#),
        format!(r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"{secret}","is_error":true}}]}},"session_id":"s1","parent_tool_use_id":null,"uuid":"u2"}}"#),
        r#"{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s1","total_cost_usd":0.01,"duration_ms":5,"num_turns":1,"usage":{"input_tokens":3,"output_tokens":5},"uuid":"u3"}"#.to_owned(),
    ]
    .join("\n")
    .into_bytes()
}

#[test]
fn content_is_opt_in_and_passes_through_redaction() {
    let input = secret_input();
    let content_keys = [
        "gen_ai.output.messages",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    ];
    let (_, spans, raw) = trace_of(&input, &[]);
    assert!(
        !String::from_utf8_lossy(&raw).contains("ghp_"),
        "no content by default"
    );
    for s in &spans {
        for k in content_keys {
            assert!(!attrs(s).contains_key(k), "{k} without --otlp-content");
        }
    }
    let tool = spans.iter().find(|s| op(s) == "execute_tool").unwrap();
    assert_eq!(tool["status"]["code"], 2, "is_error gives an error status");
    assert_eq!(tool["status"]["message"], "the tool reported an error");

    let (_, spans, raw) = trace_of(&input, &["--otlp-content"]);
    assert!(String::from_utf8_lossy(&raw).contains("ghp_abcdefghijklmnopqrstuvwxyz0123456789"));
    let present: Vec<&str> = content_keys
        .into_iter()
        .filter(|k| spans.iter().any(|s| attrs(s).contains_key(*k)))
        .collect();
    assert_eq!(present, content_keys);

    let (_, spans, raw) = trace_of(&input, &["--otlp-content", "--redact"]);
    let text = String::from_utf8_lossy(&raw);
    assert!(
        !text.contains("ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
        "{text}"
    );
    assert!(text.contains("[REDACTED:github_token"), "{text}");
    assert!(
        spans
            .iter()
            .any(|s| attrs(s).contains_key("gen_ai.tool.call.result"))
    );
}

#[test]
fn diagnostics_and_retries_become_span_events() {
    let input = b"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\",\"model\":\"m\",\"tools\":[]}\n\
not json at all\n\
{\"type\":\"system\",\"subtype\":\"informational\",\"content\":\"cut \\ud83d\",\"session_id\":\"s\"}\n\
{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":1,\"max_retries\":10,\"retry_delay_ms\":500,\"error_status\":529,\"error\":\"overloaded\",\"session_id\":\"s\"}\n";
    let (_, spans, _) = trace_of(input, &[]);
    let root = spans.iter().find(|s| s["parentSpanId"] == "").unwrap();
    let names: Vec<&str> = root["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "boo_normalize.diagnostic",
            "boo_normalize.informational",
            "boo_normalize.line_repaired",
            "boo_normalize.api_retry"
        ]
    );
    assert_eq!(
        root["status"]["code"], 2,
        "a run without a result is an error"
    );
    assert_eq!(attrs(root)["error.type"], "no_result");
}

#[test]
fn replaying_any_fixture_twice_gives_the_same_bytes() {
    for f in fixtures() {
        let args = ["replay", "--format", "otlp", f.to_str().unwrap()];
        let (a, b) = (run(&args, b""), run(&args, b""));
        assert!(ran(&a.status), "{}", String::from_utf8_lossy(&a.stderr));
        assert!(!a.stdout.is_empty());
        assert!(
            a.stdout == b.stdout,
            "{}: the trace is deterministic",
            f.display()
        );
    }
}
