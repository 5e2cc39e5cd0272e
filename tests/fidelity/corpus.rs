//! Nothing the CLI says is lost: every member of every input line of every fixture reappears in
//! the envelope (under its own name, as a mapped field, or in `extra`), or is on the documented
//! drop list. Set `BOO_FIDELITY_CORPUS=DIR` to run the same check over more captures.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use boo_normalize::envelope::extras::DROPPED;
use common::{bin, events, fixtures};
use serde_json::Value;

/// Envelope events grouped by input line, and all of them.
struct Envelope {
    all: Vec<Value>,
    by_line: BTreeMap<u64, Vec<Value>>,
}

fn envelope(path: &Path) -> Envelope {
    let out = bin().arg(path).output().unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{}: exit {:?}",
        path.display(),
        out.status
    );
    let all = events(&out.stdout);
    let mut by_line: BTreeMap<u64, Vec<Value>> = BTreeMap::new();
    for e in &all {
        if let Some(n) = e["line"].as_u64() {
            by_line.entry(n).or_default().push(e.clone());
        }
    }
    Envelope { all, by_line }
}

fn dropped(kind: &str, path: &str) -> bool {
    DROPPED.iter().any(|(k, p, _)| *k == kind && *p == path)
}

/// Problems with one line: members that reappear nowhere.
fn check_line(kind: &str, line: &Value, own: &[Value], env: &Envelope, lost: &mut Vec<String>) {
    let obj = line.as_object().unwrap();
    let in_extra = |k: &str, x: &Value| own.iter().any(|e| e["extra"].get(k) == Some(x));
    let field_eq = |k: &str, x: &Value| own.iter().any(|e| e.get(k) == Some(x));
    // The line's own events (a `usage` record it carries the line number of is not one).
    let facts: Vec<&Value> = own.iter().filter(|e| e["type"] != "usage").collect();
    for (k, x) in obj {
        if in_extra(k, x) {
            continue;
        }
        let ok = match (kind, k.as_str()) {
            (_, "type") => !own.is_empty(),
            (_, "session_id" | "uuid" | "parent_tool_use_id") => field_eq(k, x),
            ("assistant" | "user", "timestamp" | "agent_id" | "subagent_type" | "supersedes") => {
                !facts.is_empty() && facts.iter().all(|e| e.get(k) == Some(x))
            }
            ("user", "isSynthetic") => {
                !facts.is_empty() && facts.iter().all(|e| e.get("is_synthetic") == Some(x))
            }
            ("assistant", "message") => {
                check_message(kind, x, env, lost);
                true
            }
            ("assistant", "error") => own
                .iter()
                .any(|e| e["type"] == "api.error" && e["error"] == *x),
            ("assistant", d) if d == "is_api_error_message" || d.starts_with("api_error_") => own
                .iter()
                .any(|e| e["type"] == "api.error" && e["details"][d] == *x),
            ("user", "message") => {
                check_message(kind, x, env, lost);
                true
            }
            ("user", "tool_use_result") => own
                .iter()
                .any(|e| e["type"] == "tool.result" && !e["structured"].is_null()),
            ("user", "isReplay") => own.iter().any(|e| e.get("replay") == Some(x)),
            ("stream_event", "abandoned_blocks") => own
                .iter()
                .any(|e| e["type"] == "message.stop" && e["abandoned_blocks"] == *x),
            ("stream_event", "event") => {
                check_event(x, own, lost);
                true
            }
            _ => false,
        };
        if !ok {
            lost.push(format!("{kind}.{k} = {}", short(x)));
        }
    }
}

/// The members of an assistant or user line's `message`.
fn check_message(kind: &str, m: &Value, env: &Envelope, lost: &mut Vec<String>) {
    let Some(obj) = m.as_object() else { return };
    let id = m.get("id").and_then(Value::as_str);
    let record = || {
        env.all
            .iter()
            .find(|e| e["type"] == "usage" && e["message_id"].as_str() == id)
    };
    for (k, x) in obj {
        if dropped(kind, &format!("message.{k}")) {
            continue;
        }
        let ok = match k.as_str() {
            "id" => env.all.iter().any(|e| e["message_id"] == *x),
            "model" => env.all.iter().any(|e| e["model"] == *x),
            "content" => check_content(x, env),
            "usage" => record().is_some() || id.is_none(),
            "stop_reason" | "stop_sequence" => x.is_null() || record().is_some_and(|r| r[k] == *x),
            // The record keeps the message's last value (several lines carry one message).
            _ => record().is_some_and(|r| r["extra"].get(k).is_some()),
        };
        if !ok {
            lost.push(format!("{kind}.message.{k} = {}", short(x)));
        }
    }
}

/// Every block of a message's content reached some event (text and tool ids by value).
fn check_content(c: &Value, env: &Envelope) -> bool {
    let Some(blocks) = c.as_array() else {
        return c.as_str().is_none_or(|t| {
            env.all
                .iter()
                .any(|e| e["text"].as_str() == Some(t) || e.get("raw").is_some())
        });
    };
    blocks
        .iter()
        .all(|b| match b["type"].as_str().unwrap_or("") {
            "text" => env.all.iter().any(|e| e["text"] == b["text"]),
            "thinking" => env.all.iter().any(|e| e["thinking"] == b["thinking"]),
            "tool_use" | "server_tool_use" | "mcp_tool_use" => env
                .all
                .iter()
                .any(|e| e["type"] == "tool.call" && e["tool_use_id"] == b["id"]),
            "tool_result" => env
                .all
                .iter()
                .any(|e| e["type"] == "tool.result" && e["tool_use_id"] == b["tool_use_id"]),
            _ => true,
        })
}

/// A stream event's members: mapped by its event, or under `extra.event`.
fn check_event(e: &Value, own: &[Value], lost: &mut Vec<String>) {
    let Some(obj) = e.as_object() else { return };
    let t = e["type"].as_str().unwrap_or("");
    if own.iter().any(|x| x["type"] == "unknown") {
        return;
    }
    let mapped: &[&str] = match t {
        "message_start" => &["type", "message"],
        "content_block_start" => &["type", "index", "content_block"],
        "content_block_delta" => &["type", "index", "delta"],
        "content_block_stop" => &["type", "index"],
        "message_delta" => &["type", "delta", "usage"],
        "message_stop" => &["type"],
        "error" => &["type", "error"],
        _ => &["type"],
    };
    for (k, x) in obj {
        let ok = mapped.contains(&k.as_str())
            || own.iter().any(|ev| ev["extra"]["event"].get(k) == Some(x))
            || own.iter().any(|ev| ev.get(k) == Some(x));
        if !ok {
            lost.push(format!("stream_event.event.{t}.{k} = {}", short(x)));
        }
    }
}

fn short(x: &Value) -> String {
    let s = x.to_string();
    s.chars().take(80).collect()
}

fn check_file(path: &Path) -> Vec<String> {
    let env = envelope(path);
    let text = std::fs::read(path).unwrap();
    let mut lost = Vec::new();
    for (i, raw) in text.split(|b| *b == b'\n').enumerate() {
        let Ok(line) = serde_json::from_slice::<Value>(raw) else {
            continue;
        };
        let Some(kind) = line["type"].as_str() else {
            continue;
        };
        if !matches!(kind, "assistant" | "user" | "stream_event") || line.get("sessionId").is_some()
        {
            continue;
        }
        let n = i as u64 + 1;
        let own = env.by_line.get(&n).cloned().unwrap_or_default();
        let mut here = Vec::new();
        check_line(kind, &line, &own, &env, &mut here);
        lost.extend(
            here.into_iter()
                .map(|l| format!("{}:{n}: {l}", path.display())),
        );
    }
    lost
}

fn check_all(paths: &[std::path::PathBuf]) {
    let mut lost = Vec::new();
    for p in paths {
        lost.extend(check_file(p));
    }
    let shown: Vec<&String> = lost
        .iter()
        .take(if std::env::var("BOO_FIDELITY_ALL").is_ok() {
            usize::MAX
        } else {
            40
        })
        .collect();
    assert!(
        lost.is_empty(),
        "{} members reappear nowhere in the envelope:\n{shown:#?}",
        lost.len()
    );
}

#[test]
fn every_member_of_every_fixture_line_reaches_the_envelope() {
    check_all(&fixtures());
}

#[test]
fn every_member_of_an_extra_corpus_reaches_the_envelope() {
    let Ok(dir) = std::env::var("BOO_FIDELITY_CORPUS") else {
        eprintln!("skipped: set BOO_FIDELITY_CORPUS=DIR to check more captures");
        return;
    };
    // capture.py --out DIR writes DIR/<VERSION>/*.ndjson: look one level down too.
    let ndjson = |p: &std::path::Path| p.extension().is_some_and(|x| x == "ndjson");
    let mut paths = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            let inner = std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path());
            paths.extend(inner.filter(|p| ndjson(p)));
        } else if ndjson(&p) {
            paths.push(p);
        }
    }
    paths.sort();
    check_all(&paths);
}
