//! Properties of profiles: merging is exact (profiling inputs together equals merging their
//! separate profiles, in any order), a profile survives its JSON document, and a profile never
//! differs from itself. Checked on generated stream-json-like streams and on the real captures.

use crate::common;

use boo_normalize::profile::diff::diff;
use boo_normalize::profile::{Profile, Profiler};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Any JSON value, with keys that include data-like ones (paths, model names, ids).
fn any_json() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(vec![
        "type",
        "status",
        "name",
        "text",
        "claude-x-20250101",
        "/tmp/a b",
        "k",
        "stop_reason",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        prop::sample::select(vec![
            "end_turn",
            "tool_use",
            "x y",
            "",
            "/tmp/p",
            "2026-01-01"
        ])
        .prop_map(Value::from),
        "[a-z]{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 24, 4, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::vec((key.clone(), inner), 0..4).prop_map(|kv| {
                Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

fn tool() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "Task",
        "Agent",
        "Bash",
        "Read",
        "mcp__srv__do",
        "Grep",
    ])
}

fn id() -> impl Strategy<Value = String> {
    (1u8..5).prop_map(|n| format!("toolu_{n}"))
}

/// One line: stream-json shaped objects of every family, plus noise.
fn line() -> impl Strategy<Value = String> {
    let version = prop::option::of(prop::sample::select(vec!["2.0.76", "2.1.45", "x"]));
    prop_oneof![
        (prop::collection::vec(tool(), 0..4), version, any_json()).prop_map(|(tools, v, extra)| {
            let mut o = json!({"type":"system","subtype":"init","session_id":"s","tools":tools,
                "permissionMode":"default","extra":extra});
            if let Some(v) = v {
                o["claude_code_version"] = v.into();
            }
            o.to_string()
        }),
        (id(), tool(), any_json(), prop::option::of(id()), any_json()).prop_map(
            |(id, name, input, parent, text)| {
                json!({"type":"assistant","parent_tool_use_id":parent,"message":{"content":[
                    {"type":"tool_use","id":id,"name":name,"input":{"arg":input}},
                    {"type":"text","text":text}],"stop_reason":"tool_use"}})
                .to_string()
            }
        ),
        (id(), any::<bool>(), any_json(), prop::option::of(id())).prop_map(
            |(id, err, tur, parent)| {
                json!({"type":"user","parent_tool_use_id":parent,"message":{"content":[
                    {"type":"tool_result","tool_use_id":id,"is_error":err,"content":[{"type":"text","text":"t"}]}]},
                    "tool_use_result":tur})
                .to_string()
            }
        ),
        (any_json(), any_json()).prop_map(|(usage, so)| {
            json!({"type":"result","subtype":"success","modelUsage":{"m-1":usage,"m-2":{"a":1}},
                "structured_output":so})
            .to_string()
        }),
        (prop::sample::select(vec!["content_block_start", "content_block_delta", "message_delta"]),
         any_json())
            .prop_map(|(et, d)| {
                json!({"type":"stream_event","event":{"type":et,"delta":d,
                    "content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}}})
                .to_string()
            }),
        any_json().prop_map(|v| v.to_string()),
        "[ -~]{0,12}",
    ]
}

/// Streams of lines, each with or without a version-named directory.
type Streams = Vec<(bool, Vec<String>)>;

fn streams() -> impl Strategy<Value = Streams> {
    prop::collection::vec((any::<bool>(), prop::collection::vec(line(), 0..12)), 0..6)
}

fn profile(streams: &[(bool, Vec<String>)], by_version: bool) -> Profile {
    let mut p = Profiler::new().by_version(by_version);
    for (dir, s) in streams {
        let text = s.join("\n");
        p.add_bytes(text.as_bytes(), dir.then(|| "1.0.9".to_owned()));
    }
    p.finish()
}

proptest! {
    #![proptest_config(common::proptest_config(96))]

    #[test]
    fn merge_equals_profiling_together(s in streams(), cut in 0usize..7, rot in 0usize..7, bv in any::<bool>()) {
        let whole = profile(&s, bv);
        let cut = cut.min(s.len());
        let mut merged = profile(&s[..cut], bv);
        merged.merge(&profile(&s[cut..], bv));
        prop_assert_eq!(&merged, &whole);
        // Order of inputs does not matter either way round.
        let mut rotated = s.clone();
        if !rotated.is_empty() {
            let n = rot % rotated.len();
            rotated.rotate_left(n);
        }
        prop_assert_eq!(&profile(&rotated, bv), &whole);
        let mut other_way = profile(&s[cut..], bv);
        other_way.merge(&profile(&s[..cut], bv));
        prop_assert_eq!(&other_way, &whole);
    }

    #[test]
    fn a_profile_equals_itself_and_its_document(s in streams(), bv in any::<bool>()) {
        let p = profile(&s, bv);
        prop_assert!(diff(&p, &p).is_empty());
        let back = Profile::from_json(&p.to_json()).expect("document loads");
        prop_assert_eq!(&back, &p);
        prop_assert_eq!(back.to_json(), p.to_json());
    }
}

#[test]
fn real_captures_merge_exactly() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["fixtures/real", "fixtures/captured"] {
        let mut stack = vec![root.join(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "ndjson") {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    assert!(files.len() > 25);
    let version = |p: &std::path::Path| boo_normalize::profile::infer::version_from_path(p);
    let mut all = Profiler::new().by_version(true);
    let mut merged = Profile::default();
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        all.add_bytes(&bytes, version(f));
        let mut one = Profiler::new().by_version(true);
        one.add_bytes(&bytes, version(f));
        merged.merge(&one.finish());
    }
    let all = all.finish();
    assert_eq!(merged, all);
    assert!(diff(&all, &all).is_empty());
    assert_eq!(Profile::from_json(&all.to_json()).unwrap(), all);
}
