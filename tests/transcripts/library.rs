//! The library's transcript reader and mapper in process, on generated input: any mix of
//! assistant lines gives the independent usage count, any member added to a real line reaches
//! the envelope, and the mapper changes only the documented names.

use super::members::{has_member, names};
use super::*;

/// The library's reader through the pipeline, in process.
fn normalize_parts(parts: Vec<Vec<u8>>) -> Vec<Value> {
    let parts = parts
        .into_iter()
        .map(|b| Part {
            reader: Box::new(std::io::Cursor::new(b)),
            owner: None,
        })
        .collect();
    let mut out = Vec::new();
    {
        let sink = Ndjson::new(&mut out);
        let opts = NormalizeOptions {
            allow_no_result: true,
            ..Default::default()
        };
        let mut p = Pipeline::new(Normalizer::new(opts), vec![Box::new(sink)]);
        p.run(SessionReader::new(parts), None).unwrap();
        p.finish(&EndInfo::eof()).unwrap();
    }
    events(&out)
}

fn arb_usage_line() -> impl Strategy<Value = (u8, u8, [u64; 4], bool)> {
    (
        0u8..6,
        0u8..2,
        [0u64..5000, 0u64..5000, 0u64..50_000, 0u64..50_000],
        any::<bool>(),
    )
}

proptest! {
    #![proptest_config(common::proptest_config(48))]

    /// Any mix of assistant lines (messages repeated on block lines and across files, with or
    /// without request ids) gives usage events and totals equal to the independent count.
    #[test]
    fn usage_totals_equal_the_independent_count(
        files in prop::collection::vec(prop::collection::vec(arb_usage_line(), 0..12), 1..4),
        usages in prop::collection::vec([0u64..5000, 0u64..5000, 0u64..50_000, 0u64..50_000], 6),
    ) {
        let mut parts = Vec::new();
        let mut paths = Vec::new();
        let dir = tempfile::tempdir().unwrap();
        for (fi, f) in files.iter().enumerate() {
            let mut b = Vec::new();
            for (li, (msg, req, _, with_req)) in f.iter().enumerate() {
                // Copies of a message say the same (as the CLI's do).
                let u = &usages[*msg as usize];
                let mut l = json!({
                    "type": "assistant", "sessionId": "s", "isSidechain": false,
                    "uuid": format!("u{fi}-{li}"), "timestamp": format!("2026-01-01T00:00:{:02}.000Z", li),
                    "message": {"id": format!("msg_{msg}"), "model": "claude-sonnet-4-5", "role": "assistant",
                        "content": [{"type": "text", "text": "t"}],
                        "usage": {"input_tokens": u[0], "output_tokens": u[1], "cache_read_input_tokens": u[2], "cache_creation_input_tokens": u[3]}}
                });
                // The message's request id, or none (a copy made by a fork of CLI 1.0.128).
                if *with_req || *req == 1 {
                    l["requestId"] = json!(format!("req_{msg}"));
                }
                b.extend_from_slice(l.to_string().as_bytes());
                b.push(b'\n');
            }
            let p = dir.path().join(format!("f{fi}.jsonl"));
            std::fs::write(&p, &b).unwrap();
            paths.push(p);
            parts.push(b);
        }
        let ev = normalize_parts(parts);
        let (n, want) = independent(&paths);
        let usage = of_type(&ev, "usage");
        let mut sum = [0u64; 4];
        for e in &usage {
            for (i, k) in ["input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"].iter().enumerate() {
                sum[i] += e["usage"][k].as_u64().unwrap_or(0);
            }
        }
        // Copies with and without their request id are one message (see usage.rs).
        prop_assert_eq!((usage.len(), sum), (n, want));
        let mut c = boo_normalize::transcript::usage::Counter::new();
        for p in &parts_bytes(&paths) {
            for l in p.split(|&b| b == b'\n') {
                c.add_line(l);
            }
        }
        let t = c.total();
        prop_assert_eq!((c.messages(), [t.input, t.output, t.cache_read, t.cache_write()]), (n, want));
    }

    /// Any member added to a real transcript line reaches the envelope (under `extra` of the
    /// line's first event, or its own).
    #[test]
    fn added_members_reach_the_envelope(
        pick in 0usize..1000,
        key in "[a-z][a-zA-Z]{0,12}",
        value in prop_oneof![Just(json!(null)), any::<i64>().prop_map(|n| json!(n)), "[ -~]{0,20}".prop_map(|s| json!(s)), Just(json!({"a": [1, "b"]}))],
    ) {
        let files = transcript_files("2.1.45");
        let all: Vec<(PathBuf, Value)> = files.iter().flat_map(|f| lines(f).into_iter().map(move |l| (f.clone(), l))).collect();
        let (_, mut line) = all[pick % all.len()].clone();
        prop_assume!(line.get(&key).is_none());
        prop_assume!(!matches!(key.as_str(), "session_id" | "parent_tool_use_id" | "uuid" | "timestamp" | "error" | "message" | "event" | "subtype" | "isReplay" | "isSynthetic" | "supersedes" | "tool_use_result") && !key.starts_with("api_error"));
        line[&key] = value.clone();
        let ev = normalize_parts(vec![format!("{line}\n").into_bytes()]);
        let own: Vec<&Value> = ev.iter().filter(|e| e["line"] == 1).collect();
        prop_assert!(own.iter().any(|e| has_member(e, &names(&key), &value)), "{} lost in {:?}", key, own);
    }
}

fn parts_bytes(paths: &[PathBuf]) -> Vec<Vec<u8>> {
    paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

/// The mapper's renames are the only change: every other member keeps its bytes.
#[test]
fn the_mapper_changes_only_the_documented_names() {
    for v in VERSIONS {
        for f in transcript_files(v) {
            let text = std::fs::read_to_string(&f).unwrap();
            let mut m = Mapper::new();
            for l in text.lines() {
                let mut out = Vec::new();
                m.map_line(l.as_bytes(), None, &mut out);
                let a: serde_json::Map<String, Value> = serde_json::from_str(l).unwrap();
                let b: serde_json::Map<String, Value> = serde_json::from_slice(&out).unwrap();
                for (k, x) in &a {
                    let nk = match k.as_str() {
                        "sessionId" => "session_id",
                        "toolUseResult" => "tool_use_result",
                        "agentId" => "agent_id",
                        "compactMetadata" => "compact_metadata",
                        _ => k,
                    };
                    let y = &b[nk];
                    if k == "compactMetadata" {
                        assert_eq!(y["pre_tokens"], x["preTokens"]);
                    } else {
                        assert_eq!(y, x, "{}: {k}", f.display());
                    }
                }
                let added: Vec<&String> = b
                    .keys()
                    .filter(|k| {
                        !a.contains_key(*k)
                            && !matches!(
                                k.as_str(),
                                "session_id" | "tool_use_result" | "agent_id" | "compact_metadata"
                            )
                    })
                    .collect();
                assert!(
                    added.is_empty() || added == ["parent_tool_use_id"],
                    "{added:?}"
                );
            }
        }
    }
}
