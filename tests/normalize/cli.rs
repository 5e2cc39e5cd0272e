//! Integration tests: the real binary over every real capture, checking the envelope contract.

use crate::common;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use common::{bin, events, fixtures, line_count, run};
use serde_json::Value;

/// What the raw input says, computed independently of the normalizer (serde_json, line by line).
#[derive(Default, Debug)]
struct InputFacts {
    tool_use_ids: BTreeSet<String>,
    message_ids: BTreeSet<String>,
    results: usize,
    tool_results: usize,
    /// Assistant messages with usage that no result covers: subagents', and main-thread ones not
    /// followed by a result before the next init or the end.
    uncovered_messages: usize,
    /// Sum of the result lines' usage (input, output, cache read, cache creation); `None` when a
    /// result has none.
    results_usage: Option<[u64; 4]>,
}

fn input_facts(bytes: &[u8]) -> InputFacts {
    let mut f = InputFacts {
        results_usage: Some([0; 4]),
        ..Default::default()
    };
    let mut open: BTreeSet<String> = BTreeSet::new();
    let mut sub: BTreeSet<String> = BTreeSet::new();
    // JavaScript's JSON.parse accepts surrogate escapes that serde_json refuses when unpaired (CLIs
    // before 2.1.330 write them); for counting ids and types their content does not matter.
    let surrogates = regex::Regex::new(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}").unwrap();
    for line in bytes.split(|&b| b == b'\n') {
        let parsed = serde_json::from_slice::<Value>(line).or_else(|e| {
            let text = std::str::from_utf8(line).map_err(|_| e)?;
            serde_json::from_str(&surrogates.replace_all(text, "?"))
        });
        let Ok(v) = parsed else {
            continue;
        };
        let Some(t) = v.get("type").and_then(Value::as_str) else {
            continue;
        };
        if v.get("session_id").is_none() && v.get("sessionId").is_some() {
            continue;
        }
        match t {
            "assistant" => {
                let m = &v["message"];
                if let Some(id) = m["id"].as_str()
                    && m.get("usage").is_some_and(|u| !u.is_null())
                {
                    f.message_ids.insert(id.into());
                    if v["parent_tool_use_id"].is_string() {
                        sub.insert(id.into());
                    } else {
                        open.insert(id.into());
                    }
                }
                for b in m["content"].as_array().into_iter().flatten() {
                    if b["type"] == "tool_use" {
                        f.tool_use_ids.insert(b["id"].as_str().unwrap().into());
                    }
                }
            }
            "user" => {
                for b in v["message"]["content"].as_array().into_iter().flatten() {
                    if b["type"] == "tool_result" {
                        f.tool_results += 1;
                    }
                }
            }
            "stream_event" => {
                let e = &v["event"];
                if e["type"] == "content_block_start" && e["content_block"]["type"] == "tool_use" {
                    f.tool_use_ids
                        .insert(e["content_block"]["id"].as_str().unwrap().into());
                }
                if e["type"] == "message_start"
                    && let Some(id) = e["message"]["id"].as_str()
                {
                    f.message_ids.insert(id.into());
                }
            }
            "result" => {
                f.results += 1;
                let u = &v["usage"];
                let keys = [
                    "input_tokens",
                    "output_tokens",
                    "cache_read_input_tokens",
                    "cache_creation_input_tokens",
                ];
                // An all-zero usage (CLI 2.1.33x, a budget stop) covers none of its messages.
                if u.is_object() && keys.iter().all(|k| u[k].as_u64().unwrap_or(0) == 0) {
                    f.uncovered_messages += open.len();
                }
                open.clear();
                f.results_usage = match (f.results_usage, u.is_object()) {
                    (Some(mut sum), true) => {
                        for (s, k) in sum.iter_mut().zip(keys) {
                            *s += u[k].as_u64().unwrap_or(0);
                        }
                        Some(sum)
                    }
                    _ => None,
                };
            }
            "system" if v["subtype"] == "init" => {
                f.uncovered_messages += open.len();
                open.clear();
            }
            _ => {}
        }
    }
    f.uncovered_messages += open.len() + sub.len();
    f
}

#[test]
fn every_fixture_keeps_the_contract() {
    let validator = jsonschema::validator_for(&boo_normalize::schema::schema(true)).unwrap();
    for path in fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let input = std::fs::read(&path).unwrap();
        let out = bin().arg(&path).output().unwrap();
        let ev = events(&out.stdout);
        let end = ev.last().unwrap();
        // A stream without a result after its last init is an error (exit 3, run.error before
        // run.end, one stderr line); every other capture exits 0 with nothing on stderr.
        let no_result = end["terminal_seen"] == false;
        let errors: Vec<&Value> = ev.iter().filter(|e| e["type"] == "run.error").collect();
        if no_result {
            assert_eq!(out.status.code(), Some(3), "{name}");
            assert_eq!(errors.len(), 1, "{name}");
            assert_eq!(ev[ev.len() - 2]["type"], "run.error", "{name}");
            assert_eq!(errors[0]["cause"], "no_result", "{name}");
            assert!(String::from_utf8_lossy(&out.stderr).starts_with("boo-normalize: no result: "));
        } else {
            assert_eq!(out.status.code(), Some(0), "{name}");
            assert!(errors.is_empty(), "{name}");
            assert!(
                out.stderr.is_empty(),
                "{name}: stderr {:?}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        // --allow-no-result: the same stream without run.error, exit 0.
        if no_result {
            let allowed = bin().arg("--allow-no-result").arg(&path).output().unwrap();
            assert_eq!(allowed.status.code(), Some(0), "{name}");
            assert_eq!(events(&allowed.stdout).len(), ev.len() - 1, "{name}");
        }
        // run.end's totals: counts of what the envelope holds; tokens equal the result lines'
        // usage when every main-thread message is covered by a result and no subagent spoke.
        let count = |t: &str| ev.iter().filter(|e| e["type"] == t).count() as u64;
        assert_eq!(end["tool_calls"], count("tool.call"), "{name}");
        assert_eq!(end["tool_results"], count("tool.result"), "{name}");
        assert_eq!(end["api_messages"], count("usage"), "{name}");
        let facts = input_facts(&input);
        if let Some(want) = facts.results_usage
            && facts.uncovered_messages == 0
            && facts.results > 0
        {
            let u = &end["usage"];
            let got = [
                u["input_tokens"].as_u64().unwrap(),
                u["output_tokens"].as_u64().unwrap(),
                u["cache_read_input_tokens"].as_u64().unwrap(),
                u["cache_creation_input_tokens"].as_u64().unwrap(),
            ];
            assert_eq!(got, want, "{name}: run.end.usage = the results' usage");
            assert_eq!(u["provisional"], false, "{name}");
        }

        // seq is 0..n without gaps, v is 1, run.end is last and only.
        for (i, e) in ev.iter().enumerate() {
            assert_eq!(e["seq"], i as u64, "{name}: seq gap at {i}");
            assert_eq!(e["v"], 1);
            if let Err(err) = validator.validate(e) {
                panic!("{name}: event {i} fails the schema: {err}\n{e}");
            }
        }
        assert_eq!(end["type"], "run.end", "{name}");
        assert_eq!(ev.iter().filter(|e| e["type"] == "run.end").count(), 1);
        let stats = &end["stats"];
        assert_eq!(stats["lines"], line_count(&input), "{name}: stats.lines");
        assert_eq!(stats["bytes"], input.len() as u64, "{name}: stats.bytes");
        assert_eq!(
            stats["events"],
            (ev.len() - 1) as u64,
            "{name}: stats.events"
        );

        // Every input line is accounted for by at least one event.
        let lines: BTreeSet<u64> = ev.iter().filter_map(|e| e["line"].as_u64()).collect();
        let n = line_count(&input);
        assert_eq!(lines.len() as u64, n, "{name}: lines without events");

        // Exactly one tool.call per tool_use id; every result names its call.
        let mut calls: HashMap<String, usize> = HashMap::new();
        for e in ev.iter().filter(|e| e["type"] == "tool.call") {
            *calls
                .entry(e["tool_use_id"].as_str().unwrap().into())
                .or_default() += 1;
        }
        assert!(
            calls.values().all(|&c| c == 1),
            "{name}: duplicate tool.call"
        );
        let call_ids: BTreeSet<String> = calls.keys().cloned().collect();
        assert_eq!(call_ids, facts.tool_use_ids, "{name}: tool.call ids");
        let results: Vec<&Value> = ev.iter().filter(|e| e["type"] == "tool.result").collect();
        assert_eq!(
            results.len(),
            facts.tool_results,
            "{name}: tool.result count"
        );
        for r in &results {
            if call_ids.contains(r["tool_use_id"].as_str().unwrap()) {
                assert!(
                    r["name"].is_string(),
                    "{name}: result without its call's name: {r}"
                );
            }
        }

        // usage once per message id, for every message that had usage; a usage without id is a
        // foreground subagent's final message, read from its call's result (a user line whose
        // tool_use_result has usage), once per call.
        let mut usage: BTreeMap<String, usize> = BTreeMap::new();
        let raw_lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
        let mut finals: BTreeSet<String> = BTreeSet::new();
        for e in ev.iter().filter(|e| e["type"] == "usage") {
            let Some(id) = e["message_id"].as_str() else {
                let call = e["parent_tool_use_id"].as_str().unwrap();
                assert!(finals.insert(call.to_owned()), "{name}: {call} twice");
                let line = e["line"].as_u64().unwrap() as usize;
                let raw: Value = serde_json::from_slice(raw_lines[line - 1]).unwrap();
                assert_eq!(raw["type"], "user", "{name}: {e}");
                assert!(raw["tool_use_result"]["usage"].is_object(), "{name}: {e}");
                continue;
            };
            *usage.entry(id.into()).or_default() += 1;
        }
        assert!(
            usage.values().all(|&c| c == 1),
            "{name}: usage counted twice"
        );
        let usage_ids: BTreeSet<String> = usage.keys().cloned().collect();
        assert_eq!(usage_ids, facts.message_ids, "{name}: usage message ids");

        // One turn.end per result line; terminal_seen matches.
        let turns = ev.iter().filter(|e| e["type"] == "turn.end").count();
        assert_eq!(turns, facts.results, "{name}: turn.end count");
        assert_eq!(end["turns"], turns as u64);
    }
}

#[test]
fn reference_parser_gives_identical_output() {
    for path in fixtures() {
        let fast = bin().arg(&path).output().unwrap();
        let slow = bin().arg("--reference-parser").arg(&path).output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&fast.stdout),
            String::from_utf8_lossy(&slow.stdout),
            "{}",
            path.display()
        );
    }
}

#[test]
fn output_is_deterministic() {
    for path in fixtures() {
        let a = bin().arg(&path).output().unwrap();
        let b = bin().arg(&path).output().unwrap();
        assert!(a.stdout == b.stdout, "{}: two runs differ", path.display());
    }
}

#[test]
fn multi_session_files_keep_every_session() {
    let out = bin()
        .arg("fixtures/real/gymnastics-graphics__rundown-editor-log.ndjson")
        .output()
        .unwrap();
    let ev = events(&out.stdout);
    let inits: BTreeSet<&str> = ev
        .iter()
        .filter(|e| e["type"] == "session.init")
        .map(|e| e["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(inits.len(), 27);
    assert_eq!(ev.iter().filter(|e| e["type"] == "turn.end").count(), 27);
    assert_eq!(
        ev.iter()
            .filter(|e| e["type"] == "diagnostic" && e["kind"] == "not_json")
            .count(),
        27
    );
    assert_eq!(ev.last().unwrap()["terminal_seen"], true);

    // Two sessions, both cut off: no turn.end, terminal_seen false.
    let out = bin()
        .arg("fixtures/real/gymnastics-graphics__graphics-registry-log.ndjson")
        .output()
        .unwrap();
    let ev = events(&out.stdout);
    assert_eq!(ev.iter().filter(|e| e["type"] == "turn.end").count(), 0);
    assert_eq!(ev.last().unwrap()["terminal_seen"], false);
}

#[test]
fn outcome_keys_on_is_error() {
    let out = bin()
        .arg("fixtures/real/vecsum__api500-midsession.ndjson")
        .output()
        .unwrap();
    let ev = events(&out.stdout);
    let t = ev.iter().find(|e| e["type"] == "turn.end").unwrap();
    assert_eq!(t["outcome"], "error");
    assert_eq!(t["subtype"], "success");
    let synthetic = ev
        .iter()
        .find(|e| e["type"] == "text" && e["synthetic"] == true)
        .unwrap();
    assert!(
        synthetic["text"]
            .as_str()
            .unwrap()
            .starts_with("API Error: 500")
    );
    assert_eq!(synthetic["error"], "unknown");

    let out = bin()
        .arg("fixtures/real/perfectsnake__max-turns-a.ndjson")
        .output()
        .unwrap();
    let ev = events(&out.stdout);
    let t = ev.iter().find(|e| e["type"] == "turn.end").unwrap();
    assert_eq!(t["outcome"], "max_turns");
    assert_eq!(t["is_error"], false);
}

#[test]
fn old_cost_fields_are_read() {
    let out = bin()
        .arg("fixtures/real/terragon__todo.ndjson")
        .output()
        .unwrap();
    let ev = events(&out.stdout);
    let t = ev.iter().find(|e| e["type"] == "turn.end").unwrap();
    assert!(t["cost_usd"].as_f64().unwrap() > 0.0, "{t}");
    let init = ev.iter().find(|e| e["type"] == "session.init").unwrap();
    assert!(init["cli_version"].is_null());
}

#[test]
fn images_are_elided_unless_kept() {
    let path = "fixtures/real/gymnastics-graphics__rundown-editor-log.ndjson";
    let out = bin().arg(path).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let elided = text.matches("\"elided\":\"base64\"").count();
    assert!(elided > 0);
    assert!(text.contains("\"media_type\":\"image/png\",\"bytes\":"));
    let kept = bin().arg("--keep-blobs").arg(path).output().unwrap();
    assert!(kept.stdout.len() > text.len() + 100_000);
    assert_eq!(
        String::from_utf8(kept.stdout)
            .unwrap()
            .matches("\"elided\"")
            .count(),
        0
    );
}

#[test]
fn subagent_events_carry_their_parent() {
    let out = bin()
        .arg("fixtures/real/claude-clean__stream-json-simple.ndjson")
        .output()
        .unwrap();
    let ev = events(&out.stdout);
    let task_ids: BTreeSet<&str> = ev
        .iter()
        .filter(|e| e["type"] == "tool.call" && e["subagent"] == true)
        .map(|e| e["tool_use_id"].as_str().unwrap())
        .collect();
    assert!(!task_ids.is_empty());
    let nested: Vec<&Value> = ev
        .iter()
        .filter(|e| !e["parent_tool_use_id"].is_null())
        .collect();
    assert!(!nested.is_empty());
    for e in nested {
        assert!(
            task_ids.contains(e["parent_tool_use_id"].as_str().unwrap()),
            "{e}"
        );
    }
}

/// CLI 2.1.45 cut a Bash tool's emoji output inside a surrogate pair (fixtures/captured/2.1.45/
/// emoji_cut.ndjson): the user line holds a lone `\ud83d`. Its tool.result must not be lost.
#[test]
fn a_lone_surrogate_costs_no_tool_result() {
    let path = fixtures()
        .into_iter()
        .find(|p| p.ends_with("captured/2.1.45/emoji_cut.ndjson"))
        .expect("the emoji_cut capture");
    let input = std::fs::read(&path).unwrap();
    assert!(
        input.windows(8).any(|w| w == br#"\ud83d\n"#),
        "the capture holds a lone high surrogate (the preview of the persisted output is cut)"
    );
    let out = bin().arg("--strict").arg(&path).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "--strict passes on a repaired line"
    );
    let ev = events(&out.stdout);
    let calls: Vec<&Value> = ev.iter().filter(|e| e["type"] == "tool.call").collect();
    let results: Vec<&Value> = ev.iter().filter(|e| e["type"] == "tool.result").collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["tool_use_id"], calls[0]["tool_use_id"]);
    assert_eq!(results[0]["name"], "Bash");
    let content = results[0]["content"].as_str().unwrap();
    assert!(
        content.contains("\u{1F600}\u{FFFD}\n..."),
        "the cut half emoji is U+FFFD"
    );
    let repaired: Vec<&Value> = ev.iter().filter(|e| e["type"] == "line.repaired").collect();
    assert_eq!(repaired.len(), 1);
    assert_eq!(repaired[0]["line"], results[0]["line"]);
    assert_eq!(repaired[0]["count"], 1);
    let end = ev.last().unwrap();
    assert_eq!(end["stats"]["repaired"], 1);
    assert_eq!(end["stats"]["diagnostics"], 0);
    assert_eq!(end["terminal_seen"], true);
    // The serde_json reference parser repairs it the same way.
    let slow = bin()
        .args(["--strict", "--reference-parser"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(slow.stdout, out.stdout);
}

/// `--strict` is clean on every capture of the newest CLI (2.1.331, including `--bare`, which
/// writes system/ui_invalidate, and `--name`, which writes system/session_title_changed): no
/// diagnostic, no unknown event, and the two subtypes come out typed.
#[test]
fn strict_is_clean_on_the_newest_cli() {
    let newest: Vec<_> = fixtures()
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("captured/2.1.331/"))
        .collect();
    assert!(newest.len() >= 14, "the 2.1.331 captures");
    let mut seen = BTreeSet::new();
    for path in &newest {
        let out = bin().arg("--strict").arg(path).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        for e in events(&out.stdout) {
            seen.insert(e["type"].as_str().unwrap().to_owned());
        }
    }
    assert!(seen.contains("ui.invalidate"), "{seen:?}");
    assert!(seen.contains("session.title"), "{seen:?}");
}

#[test]
fn schema_command_prints_draft_2020_12() {
    let out = bin().arg("schema").output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert!(jsonschema::draft202012::meta::is_valid(&v));
}

#[test]
fn the_same_capture_twice_is_two_runs() {
    let once = std::fs::read("fixtures/captured/2.1.45/tools.ndjson").unwrap();
    let twice = [once.clone(), once.clone()].concat();
    let a = events(&run(&[], &once).stdout);
    let b = events(&run(&[], &twice).stdout);
    let calls = |ev: &[Value]| ev.iter().filter(|e| e["type"] == "tool.call").count();
    assert_eq!(calls(&b), 2 * calls(&a));
    assert!(b.iter().all(|e| e["type"] != "skipped"));
    assert_eq!(b.last().unwrap()["turns"], 2);
}
