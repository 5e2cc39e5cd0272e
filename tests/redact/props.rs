//! Property tests of redaction (in process, the same `Redactor` the binary uses):
//! - a secret split across deltas at arbitrary points is still redacted, with exactly the
//!   placeholder the complete text gets, and no other text changes;
//! - the literal-driven search finds exactly what searching every position finds;
//! - redacted lines are valid JSON of the same shape.

use crate::common;
use crate::redact::plants as redact_plants;

use std::sync::Arc;

use boo_normalize::redact::{Config, DEFAULT_ENTROPY_BITS, Engine, Key, Redactor, redact_str};
use boo_normalize::transform::Transformed;
use proptest::prelude::*;
use redact_plants::plants;
use serde_json::{Value, json};

fn engine() -> Engine {
    Engine::new(Config {
        rules: Vec::new(),
        key: Key::from_bytes(b"prop"),
        entropy_bits: DEFAULT_ENTROPY_BITS,
    })
    .unwrap()
}

/// Redact `lines`, then flush: every output line.
fn redact_lines(e: Arc<Engine>, lines: &[String]) -> Vec<String> {
    let mut r = Redactor::new(e);
    let mut out = Transformed::default();
    let mut all = Vec::new();
    for (n, l) in lines.iter().enumerate() {
        out.clear();
        let line = boo_normalize::read::Line {
            bytes: l.as_bytes(),
            number: n as u64 + 1,
            raw_len: l.len() as u64 + 1,
            terminated: true,
            oversized: None,
            cr: false,
        };
        r.push(&line, &mut out);
        for i in 0..out.len() {
            all.push(String::from_utf8(out.get(i, l.as_bytes()).0.to_vec()).unwrap());
        }
    }
    out.clear();
    r.flush(&mut out);
    for i in 0..out.len() {
        all.push(String::from_utf8(out.get(i, b"").0.to_vec()).unwrap());
    }
    all
}

/// Words that never form a secret, with spaces, newlines and punctuation.
fn prose() -> impl Strategy<Value = String> {
    let words = prop::sample::select(vec![
        "the",
        "build",
        "failed",
        "so",
        "I",
        "ran",
        "it",
        "again",
        "with",
        "more",
        "logs",
        ":",
        ",",
        ".",
        "\n",
        "  ",
        "a",
        "path",
        "/tmp/x",
        "é",
        "日本",
        "\"quoted\"",
        "x=1",
        "(ok)",
    ]);
    prop::collection::vec(words, 0..12).prop_map(|w| w.join(" "))
}

fn delta_line(kind: &str, field: &str, frag: &str) -> String {
    json!({"type": "stream_event", "event": {"type": "content_block_delta", "index": 0,
        "delta": {"type": kind, field: frag}}, "session_id": "s", "parent_tool_use_id": null})
    .to_string()
}

fn stop_line() -> String {
    json!({"type": "stream_event", "event": {"type": "content_block_stop", "index": 0},
        "session_id": "s", "parent_tool_use_id": null})
    .to_string()
}

/// Cut `s` at the given fractions of its length (on character boundaries).
fn cut(s: &str, at: &[f64]) -> Vec<String> {
    let mut pts: Vec<usize> = at
        .iter()
        .map(|f| {
            let mut p = (f * s.len() as f64) as usize;
            while !s.is_char_boundary(p) {
                p -= 1;
            }
            p
        })
        .collect();
    pts.push(0);
    pts.push(s.len());
    pts.sort_unstable();
    pts.dedup();
    pts.windows(2).map(|w| s[w[0]..w[1]].to_owned()).collect()
}

fn concat_deltas(lines: &[String]) -> String {
    let mut s = String::new();
    for l in lines {
        let v: Value = serde_json::from_str(l).expect("output lines are JSON");
        let d = &v["event"]["delta"];
        if let Some(f) = d["text"]
            .as_str()
            .or(d["thinking"].as_str())
            .or(d["partial_json"].as_str())
        {
            s.push_str(f);
        }
    }
    s
}

proptest! {
    #![proptest_config(common::proptest_config(256))]

    #[test]
    fn split_secrets_are_redacted_like_whole_text(
        which in 0usize..31,
        before in prose(),
        after in prose(),
        at in prop::collection::vec(0.0f64..1.0, 1..7),
        json_mode in any::<bool>(),
    ) {
        let all = plants();
        let p = &all[which % all.len()];
        prop_assume!(!matches!(p.kind, "literal" | "env_my_token" | "acme_token"));
        let text = format!("{before} {} {after}", p.text);
        let e = Arc::new(engine());
        let mut sc = e.scratch();
        let whole = String::from_utf8(redact_str(&e, &mut sc, None, text.as_bytes())).unwrap();
        // Only the secret changed, into one placeholder.
        let tag = format!("[REDACTED:{}:", p.kind);
        let at_ph = whole.find(&tag).expect("the whole text is redacted");
        let ph = &whole[at_ph..at_ph + tag.len() + 7];
        prop_assert_eq!(&whole, &text.replacen(&p.secret, ph, 1));
        let (kind, field, payload) = if json_mode {
            ("input_json_delta", "partial_json", json!({"command": text}).to_string())
        } else {
            ("text_delta", "text", text.clone())
        };
        let mut lines: Vec<String> = cut(&payload, &at).iter().map(|f| delta_line(kind, field, f)).collect();
        lines.push(stop_line());
        let out = redact_lines(e.clone(), &lines);
        let got = concat_deltas(&out);
        if json_mode {
            let v: Value = serde_json::from_str(&got).expect("assembled tool input is JSON");
            prop_assert_eq!(v["command"].as_str().unwrap(), whole.as_str());
        } else {
            prop_assert_eq!(&got, &whole);
        }
        prop_assert!(!out.iter().any(|l| l.contains(&p.secret)));
    }

    #[test]
    fn literal_search_equals_every_position_search(
        parts in prop::collection::vec(prop::sample::select(vec![
            "password", "Password", "PASSWORD", "passwd", "pwd", "token", "TOKEN", "api_key",
            "apiKey", "Authorization", "bearer", "Bearer ", "secret", "_KEY", "key", "=", ": ",
            ":", "\"", "'", " ", "\\n", "\\t", "\\\"", "\\\\", "//", "@", "user", "host.io",
            "hunter22", "h4ck3r!", "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh", "AKIAABCDEFGHIJ234567",
            "sk-ant-api03-aaaaBBBBcccc1111dddd2222", "ghp_", "0123456789abcdefABCDEFghijklmnopqrst",
            "eyJhbGciOiJI", ".", "eyJzdWIiOiIx", "-----BEGIN RSA PRIVATE KEY-----", "MIIEowIBAAK",
            "-----END RSA PRIVATE KEY-----", "xoxb-", "1234", "é", "\\u0041", "\\/",
            "://", "admin:", "s3cr3t!@", "db.io", "AIza", "glpat-", "npm_", "sk_live_", "Basic ",
            "dXNlcjpwYXNzMTIz", "aws_secret_access_key", "SecretAccessKey", "--password ",
            "credentials", "\\u00", "\\r", "Proxy-Authorization", "x-api-key", "${X}",
        ]), 0..24),
        as_key in any::<bool>(),
        text_line in any::<bool>(),
    ) {
        let s: String = parts.concat();
        let line = if text_line {
            format!("log: {s}")
        } else if as_key {
            format!(r#"{{"type":"user","{s}":"{s}","x":["{s}"]}}"#)
        } else {
            format!(r#"{{"type":"user","password":"{s}","message":{{"content":"{s}"}}}}"#)
        };
        let fast = redact_lines(Arc::new(engine()), std::slice::from_ref(&line));
        let slow = redact_lines(Arc::new(engine().exhaustive()), std::slice::from_ref(&line));
        prop_assert_eq!(fast, slow);
    }

    #[test]
    fn redacted_lines_are_json_of_the_same_shape(v in json_value(), secret in 0usize..31) {
        let all = plants();
        let p = &all[secret % all.len()];
        let line = json!({"type": "user", "payload": v, "note": p.text}).to_string();
        let out = redact_lines(Arc::new(engine()), std::slice::from_ref(&line));
        prop_assert_eq!(out.len(), 1);
        let w: Value = serde_json::from_str(&out[0]).expect("valid JSON");
        let orig: Value = serde_json::from_str(&line).unwrap();
        prop_assert_eq!(skeleton(&w), skeleton(&orig));
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-zA-Z0-9 :=\"\\\\/@\n\t_-]{0,40}".prop_map(Value::from),
        Just(Value::from(
            "token=Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh \u{1F600} \"x\""
        )),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
            prop::collection::btree_map("[a-zA-Z_]{1,12}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn skeleton(v: &Value) -> Value {
    match v {
        Value::String(_) => json!(""),
        Value::Array(a) => Value::Array(a.iter().map(skeleton).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, x)| (k.clone(), skeleton(x))).collect())
        }
        x => x.clone(),
    }
}
