//! Every member of every fixture transcript line reaches the envelope: under its own name or the
//! stream-json one, or, for `message`, as the events of its content.

use super::*;

/// Lines of a transcript file normalized alone, from stdin (no sidechain files beside it, so
/// line numbers are the file's).
fn by_line(path: &Path) -> BTreeMap<u64, Vec<Value>> {
    let out = common::run(
        &["--input-format", "transcript"],
        &std::fs::read(path).unwrap(),
    );
    assert!(out.status.success(), "{}", path.display());
    let mut m: BTreeMap<u64, Vec<Value>> = BTreeMap::new();
    for e in events(&out.stdout) {
        if let Some(n) = e["line"].as_u64() {
            m.entry(n).or_default().push(e);
        }
    }
    m
}

/// The names a transcript member may have in the envelope.
pub(super) fn names(k: &str) -> Vec<String> {
    let renamed = match k {
        "sessionId" => "session_id",
        "toolUseResult" => "tool_use_result",
        "agentId" => "agent_id",
        "compactMetadata" => "compact_metadata",
        "isSynthetic" => "is_synthetic",
        _ => k,
    };
    let mut snake = String::new();
    for c in k.chars() {
        if c.is_ascii_uppercase() {
            snake.push('_');
            snake.push(c.to_ascii_lowercase());
        } else {
            snake.push(c);
        }
    }
    let mut v = vec![k.to_owned(), renamed.to_owned(), snake];
    if k == "toolUseResult" {
        v.push("structured".into());
    }
    v
}

/// Whether a member named one of `names` with value `x` is anywhere in `v`.
pub(super) fn has_member(v: &Value, names: &[String], x: &Value) -> bool {
    match v {
        Value::Object(o) => o.iter().any(|(k, y)| {
            (names.contains(k) && (y == x || same_compact(y, x))) || has_member(y, names, x)
        }),
        Value::Array(a) => a.iter().any(|y| has_member(y, names, x)),
        _ => false,
    }
}

/// `compact_metadata` spells `preTokens` `pre_tokens`.
fn same_compact(y: &Value, x: &Value) -> bool {
    x.get("preTokens").is_some() && y.get("pre_tokens") == x.get("preTokens")
}

/// The content of a message reappears: its text, its tool calls and results.
fn message_kept(m: &Value, own: &[Value]) -> bool {
    let blocks = match &m["content"] {
        Value::String(s) => return own.iter().any(|e| e["text"] == *s),
        Value::Array(a) => a,
        _ => return !own.is_empty(),
    };
    blocks.iter().all(|b| match b["type"].as_str() {
        Some("text") => own.iter().any(|e| e["text"] == b["text"]),
        Some("thinking") => own.iter().any(|e| e["thinking"] == b["thinking"]),
        Some("tool_use") => own
            .iter()
            .any(|e| e["tool_use_id"] == b["id"] && e["input"] == b["input"]),
        Some("tool_result") => own.iter().any(|e| e["tool_use_id"] == b["tool_use_id"]),
        _ => own.iter().any(|e| {
            has_member(e, &["raw".into(), "block".into()], b)
                || e.to_string().contains(&b.to_string())
        }),
    })
}

/// Every member of every line of every fixture transcript reaches the envelope: under its own
/// name or the stream-json one (top level, a mapped field or `extra`), or, for `message`, as the
/// events of its content.
#[test]
fn every_member_of_every_transcript_line_reaches_the_envelope() {
    let mut checked = 0;
    for v in VERSIONS {
        for f in transcript_files(v) {
            let env = by_line(&f);
            for (i, line) in lines(&f).iter().enumerate() {
                let n = i as u64 + 1;
                let own = env.get(&n).cloned().unwrap_or_default();
                assert!(!own.is_empty(), "{}:{n}: no event", f.display());
                assert!(
                    own.iter()
                        .all(|e| e["type"] != "unknown" && e["type"] != "diagnostic"),
                    "{}:{n}: {own:?}",
                    f.display()
                );
                for (k, x) in line.as_object().unwrap() {
                    checked += 1;
                    let ok = match k.as_str() {
                        "type" => true,
                        "subtype" => line["type"] == "system",
                        "message" if line["type"] == "user" || line["type"] == "assistant" => {
                            message_kept(x, &own)
                        }
                        _ => {
                            // The normalizer's table promotes some members under a name of its own.
                            let mut n = names(k);
                            for m in MAPPINGS.iter().filter(|m| line["type"] == m.source.0) {
                                n.extend(
                                    m.fields
                                        .iter()
                                        .filter(|(_, p)| p == k)
                                        .map(|(f, _)| f.to_string()),
                                );
                            }
                            own.iter().any(|e| has_member(e, &n, x))
                        }
                    };
                    assert!(ok, "{}:{n}: member {k} is lost: {}", f.display(), x);
                }
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}
