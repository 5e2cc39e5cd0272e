//! The contract of issue 38 on every fixture of every dialect: every input line accounted for
//! (an event names it), one `tool.call` per id and one `tool.result` paired to each, `run.end`
//! last with the CLI's own totals under its semantics (computed here from the raw input), no
//! `unknown` but for the undocumented types a fixture holds on purpose, which are kept.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::Value;

use crate::common::{events, root, run};

/// Every dialect fixture (`*.jsonl`, `*.ndjson`, in version folders too), with its dialect (its
/// folder's name).
pub fn agent_fixtures() -> Vec<(String, PathBuf)> {
    fn collect(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        for f in std::fs::read_dir(dir).unwrap().flatten() {
            let p = f.path();
            if p.is_dir() {
                collect(&p, out);
            } else if p.extension().is_some_and(|x| x == "jsonl" || x == "ndjson") {
                out.push(p);
            }
        }
    }
    let mut v = Vec::new();
    let base = root().join("fixtures/agents");
    for d in std::fs::read_dir(&base).expect("fixtures/agents").flatten() {
        if !d.path().is_dir() {
            continue;
        }
        let name = d.file_name().to_string_lossy().into_owned();
        let mut files = Vec::new();
        collect(&d.path(), &mut files);
        v.extend(files.into_iter().map(|f| (name.clone(), f)));
    }
    v.sort();
    assert!(v.len() >= 11, "dialect fixtures missing: {}", v.len());
    v
}

/// The types a fixture holds on purpose that no documentation lists (kept as `unknown`).
const UNDOCUMENTED: &[&str] = &[
    "thread.compacted",
    "compression",
    "session.diff",
    "session.background_tasks_changed",
    // Copilot CLI 1.0.92 and 1.0.102's real output: event types no documentation lists.
    "assistant.idle",
    "assistant.tool_call_delta",
    "session.mcp_servers_loaded",
    "session.skills_loaded",
    "session.tools_updated",
    "tool.shell_output",
];

/// `(input, cache read, output)` as the CLI itself accounts for the run.
fn cli_totals(dialect: &str, lines: &[Value]) -> (u64, u64, u64) {
    let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    match dialect {
        // turn.completed.usage is the thread's running total: the last one per thread.
        "codex" => {
            let mut last: BTreeMap<String, (u64, u64, u64)> = BTreeMap::new();
            let mut thread = String::new();
            for l in lines {
                match l["type"].as_str() {
                    Some("thread.started") => thread = l["thread_id"].as_str().unwrap().into(),
                    Some("turn.completed") => {
                        let u = &l["usage"];
                        let cached = n(u, "cached_input_tokens");
                        last.insert(
                            thread.clone(),
                            (n(u, "input_tokens") - cached, cached, n(u, "output_tokens")),
                        );
                    }
                    _ => {}
                }
            }
            last.values()
                .fold((0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2))
        }
        // result.stats of each run (a resumed run's are its own): input_tokens counts the
        // cached ones too.
        "gemini" => lines
            .iter()
            .filter(|l| l["type"] == "result")
            .map(|r| &r["stats"])
            .fold((0, 0, 0), |a, s| {
                let cached = n(s, "cached");
                (
                    a.0 + n(s, "input_tokens") - cached,
                    a.1 + cached,
                    a.2 + n(s, "output_tokens"),
                )
            }),
        // Tokens per step (step_finish), input uncached as OpenCode counts it.
        "opencode" => lines
            .iter()
            .filter(|l| l["type"] == "step_finish")
            .map(|l| &l["part"]["tokens"])
            .fold((0, 0, 0), |a, t| {
                (
                    a.0 + n(t, "input"),
                    a.1 + n(&t["cache"], "read"),
                    a.2 + n(t, "output"),
                )
            }),
        // result.usage in camelCase (newer releases only).
        "cursor" => lines
            .iter()
            .rfind(|l| l["type"] == "result")
            .and_then(|r| r.get("usage"))
            .map_or((0, 0, 0), |u| {
                (
                    n(u, "inputTokens"),
                    n(u, "cacheReadTokens"),
                    n(u, "outputTokens"),
                )
            }),
        // Claude's shape, OpenAI's counts: input_tokens includes the cached ones; each run's
        // result its own.
        "qwen" => lines
            .iter()
            .filter(|l| l["type"] == "result")
            .map(|r| &r["usage"])
            .fold((0, 0, 0), |a, u| {
                let cached = n(u, "cache_read_input_tokens");
                (
                    a.0 + n(u, "input_tokens") - cached,
                    a.1 + cached,
                    a.2 + n(u, "output_tokens"),
                )
            }),
        // assistant.usage per response, else the log's session.shutdown per model; stdout's
        // result has no tokens at all.
        "copilot" => {
            let per_response: Vec<&Value> = lines
                .iter()
                .filter(|l| l["type"] == "assistant.usage")
                .map(|l| &l["data"])
                .collect();
            let usages: Vec<&Value> = if per_response.is_empty() {
                lines
                    .iter()
                    .filter(|l| l["type"] == "session.shutdown")
                    .flat_map(|l| l["data"]["modelMetrics"].as_object().into_iter().flatten())
                    .map(|(_, m)| &m["usage"])
                    .collect()
            } else {
                per_response
            };
            usages.iter().fold((0, 0, 0), |a, u| {
                (
                    a.0 + n(u, "inputTokens"),
                    a.1 + n(u, "cacheReadTokens"),
                    a.2 + n(u, "outputTokens"),
                )
            })
        }
        // Claude's semantics: the result's usage when it has one, else each message once.
        _ => {
            if let Some(u) = lines
                .iter()
                .rfind(|l| l["type"] == "result")
                .and_then(|r| r.get("usage"))
            {
                return (
                    n(u, "input_tokens"),
                    n(u, "cache_read_input_tokens"),
                    n(u, "output_tokens"),
                );
            }
            let mut by_id: BTreeMap<String, (u64, u64, u64)> = BTreeMap::new();
            for (i, l) in lines.iter().enumerate() {
                if l["type"] == "assistant"
                    && let Some(u) = l["message"].get("usage")
                {
                    let id = l["message"]["id"]
                        .as_str()
                        .map_or(format!("line{i}"), str::to_owned);
                    by_id.insert(
                        id,
                        (
                            n(u, "input_tokens"),
                            n(u, "cache_read_input_tokens"),
                            n(u, "output_tokens"),
                        ),
                    );
                }
            }
            by_id
                .values()
                .fold((0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2))
        }
    }
}

#[test]
fn every_fixture_keeps_the_contract() {
    for (dialect, path) in agent_fixtures() {
        let name = path.display().to_string();
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        let raw: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let out = run(&["--input-format", &dialect], &bytes);
        assert!(out.status.success(), "{name}: {:?}", out);
        let auto = run(&[], &bytes);
        assert_eq!(out.stdout, auto.stdout, "{name}: auto-detected the same");
        let ev = events(&out.stdout);
        let end = ev.last().unwrap();
        assert_eq!(end["type"], "run.end", "{name}");
        let input_lines = text.lines().count() as u64;
        assert_eq!(end["stats"]["lines"], input_lines, "{name}");
        // Input JSON lines, not the lines a reader makes of them.
        assert_eq!(end["stats"]["json_lines"], raw.len() as u64, "{name}");
        // Every input line is named by an event.
        let named: BTreeSet<u64> = ev.iter().filter_map(|e| e["line"].as_u64()).collect();
        for l in 1..=input_lines {
            assert!(named.contains(&l), "{name}: line {l} has no event");
        }
        // One call per id, one result per call.
        let mut calls = BTreeMap::new();
        for e in ev.iter().filter(|e| e["type"] == "tool.call") {
            let id = e["tool_use_id"].as_str().unwrap();
            assert!(calls.insert(id, 0).is_none(), "{name}: two calls {id}");
        }
        for e in ev.iter().filter(|e| e["type"] == "tool.result") {
            let id = e["tool_use_id"].as_str().unwrap();
            *calls
                .get_mut(id)
                .unwrap_or_else(|| panic!("{name}: result {id} without call")) += 1;
        }
        for (id, n) in &calls {
            assert_eq!(*n, 1, "{name}: call {id} has {n} results");
        }
        assert_eq!(end["tool_calls"], calls.len() as u64, "{name}");
        // The CLI's own totals.
        let (input, cached, output) = cli_totals(&dialect, &raw);
        let u = &end["usage"];
        assert_eq!(
            (
                u["input_tokens"].as_u64().unwrap(),
                u["cache_read_input_tokens"].as_u64().unwrap(),
                u["output_tokens"].as_u64().unwrap()
            ),
            (input, cached, output),
            "{name}: run.end usage"
        );
        assert!(end["agent"].is_string(), "{name}: run.end names the agent");
        for e in ev.iter().filter(|e| e["type"] == "session.init") {
            assert!(
                e["agent"].is_string(),
                "{name}: session.init names the agent"
            );
        }
        // Undocumented types only are unknown, and they are kept whole.
        for e in ev.iter().filter(|e| e["type"] == "unknown") {
            let t = e["name"].as_str().unwrap();
            assert!(UNDOCUMENTED.contains(&t), "{name}: unknown {t}");
            let raw_type = e["raw"]["type"].as_str().unwrap();
            assert!(t.starts_with(raw_type), "{name}: {t} kept whole");
        }
        // A cost only where the CLI reports one (OpenCode, per step), never invented.
        let step_costs: Vec<f64> = raw
            .iter()
            .filter(|l| l["type"] == "step_finish")
            .filter_map(|l| l["part"]["cost"].as_f64())
            .collect();
        if step_costs.is_empty() {
            assert!(end["cost_usd"].is_null(), "{name}: cost invented");
        } else {
            let sum: f64 = step_costs.iter().sum();
            let got = end["cost_usd"].as_f64().unwrap();
            assert!((got - sum).abs() < 1e-9, "{name}: cost {got} != {sum}");
        }
    }
}

#[test]
fn codex_usage_is_what_each_turn_used_never_a_sum_of_totals() {
    let path = root().join("fixtures/agents/codex/documented-two-runs.jsonl");
    let out = run(&[path.to_str().unwrap()], b"");
    let ev = events(&out.stdout);
    let turns: Vec<&Value> = ev.iter().filter(|e| e["type"] == "turn.end").collect();
    assert_eq!(turns.len(), 2);
    // 24763 then 37001 input tokens in total (cached included): the second run used 12238.
    let used = |t: &Value| {
        t["usage"]["input_tokens"].as_u64().unwrap()
            + t["usage"]["cache_read_input_tokens"].as_u64().unwrap()
    };
    assert_eq!(used(turns[0]), 24763);
    assert_eq!(used(turns[1]), 37001 - 24763);
    assert_eq!(turns[1]["usage"]["output_tokens"], 150 - 122);
    let end = ev.last().unwrap();
    assert_eq!(end["usage"]["output_tokens"], 150);
    // The failed command is what Codex says it is, with its exit code.
    let failed = ev
        .iter()
        .find(|e| e["type"] == "tool.result" && e["tool_use_id"] == "item_2")
        .unwrap();
    assert_eq!(failed["is_error"], true);
    assert_eq!(failed["structured"]["exit_code"], 1);
    // The re-emitted item and message are skipped, not repeated.
    assert_eq!(
        ev.iter()
            .filter(|e| e["type"] == "text" && e["message_id"] == "item_6")
            .count(),
        1
    );
}

#[test]
fn gemini_delta_text_is_one_text_per_message_and_amp_results_are_decoded() {
    let g = root().join("fixtures/agents/gemini/documented-shell-and-edit.jsonl");
    let ev = events(&run(&[g.to_str().unwrap()], b"").stdout);
    let texts: Vec<&str> = ev
        .iter()
        .filter(|e| e["type"] == "text")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        ["I'll list the files first.", "Fixed the typo in README.md."]
    );
    assert_eq!(ev.iter().filter(|e| e["type"] == "text.delta").count(), 4);
    assert_eq!(
        ev.iter().filter(|e| e["type"] == "usage").count(),
        2,
        "one per model"
    );

    let a = root().join("fixtures/agents/amp/documented-failed-shell.jsonl");
    let ev = events(&run(&[a.to_str().unwrap()], b"").stdout);
    let r = ev.iter().find(|e| e["type"] == "tool.result").unwrap();
    assert_eq!(r["is_error"], false, "as Amp says");
    assert_eq!(r["structured"]["exitCode"], 1, "the exit code kept");
    assert_eq!(r["content"], "npm ERR! missing script: test\n");
}

#[test]
fn a_line_missing_a_required_field_is_a_violation_naming_it() {
    let input = b"{\"type\":\"thread.started\"}\n{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"hi\"}}\n";
    let ev = events(&run(&["--input-format", "codex"], input).stdout);
    let v: Vec<&str> = ev.iter().filter_map(|e| e["violation"].as_str()).collect();
    assert_eq!(v.len(), 2, "{ev:?}");
    assert!(v[0].contains("\"thread_id\""), "{v:?}");
    assert!(v[1].contains("\"item.id\""), "{v:?}");
}

#[test]
fn claude_streams_are_never_taken_for_another_agent() {
    for f in crate::common::fixtures() {
        let head = std::fs::read(&f).unwrap();
        let d = boo_normalize::dialect::detect(&head);
        assert!(
            matches!(d, None | Some(boo_normalize::dialect::Dialect::Claude)),
            "{}: {d:?}",
            f.display()
        );
    }
}

#[test]
fn a_wrong_explicit_choice_names_what_the_input_looks_like() {
    let g = root().join("fixtures/agents/gemini/documented-api-error.jsonl");
    let out = crate::common::bin()
        .args(["--input-format", "codex", g.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "refused before any output");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("looks like Gemini CLI"), "{err}");
    assert!(err.contains("--input-format gemini"), "{err}");
}

#[test]
fn cursor_text_is_never_doubled_in_any_of_its_forms() {
    for f in [
        "documented-parallel-calls.jsonl",
        "documented-partial-output.jsonl",
    ] {
        let path = root().join("fixtures/agents/cursor").join(f);
        let raw = std::fs::read_to_string(&path).unwrap();
        let result: Value = serde_json::from_str(raw.lines().last().unwrap()).unwrap();
        let ev = events(&run(&[path.to_str().unwrap()], b"").stdout);
        let texts: String = ev
            .iter()
            .filter(|e| e["type"] == "text")
            .map(|e| e["text"].as_str().unwrap())
            .collect();
        // Cursor's result glues every message's text: the texts are exactly that, once.
        assert_eq!(texts, result["result"].as_str().unwrap(), "{f}");
    }
    let path = root().join("fixtures/agents/cursor/documented-parallel-calls.jsonl");
    let ev = events(&run(&[path.to_str().unwrap()], b"").stdout);
    let call = ev
        .iter()
        .find(|e| e["type"] == "tool.result" && e["tool_use_id"] == "call_UAP6kq2\nfc_05e0a1b2")
        .expect("the id with a newline pairs");
    assert_eq!(call["is_error"], false);
    let cat = ev
        .iter()
        .find(|e| e["type"] == "tool.result" && e["tool_use_id"] == "call_C4t")
        .unwrap();
    assert_eq!(cat["is_error"], false, "as Cursor says");
    assert_eq!(cat["structured"]["exit_code"], 1, "the exit code kept");
    let read = ev
        .iter()
        .find(|e| e["type"] == "tool.result" && e["tool_use_id"] == "call_R3ad9")
        .unwrap();
    assert_eq!(read["is_error"], true);
    assert_eq!(ev.iter().filter(|e| e["type"] == "thinking").count(), 1);
}

/// A captured `write_edit` run is the fixture that tests each agent's edit: every call of kind
/// `edit` in it must have succeeded, or the fixture tests an error
/// instead (Qwen's `edit` refuses a file it has not read in the session, so its scenario reads
/// first).
#[test]
fn every_captured_edit_run_edits() {
    let runs: Vec<_> = agent_fixtures()
        .into_iter()
        .filter(|(_, p)| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("write_edit"))
        })
        .collect();
    assert!(runs.len() >= 10, "write_edit captures: {}", runs.len());
    for (dialect, path) in runs {
        let ev = events(&run(&[path.to_str().unwrap()], b"").stdout);
        let edits: BTreeSet<&str> = ev
            .iter()
            .filter(|e| e["type"] == "tool.call" && e["kind"] == "edit")
            .map(|e| e["tool_use_id"].as_str().unwrap())
            .collect();
        assert!(
            !edits.is_empty(),
            "{dialect} {}: no edit call",
            path.display()
        );
        for e in ev.iter().filter(|e| {
            e["type"] == "tool.result" && edits.contains(e["tool_use_id"].as_str().unwrap_or(""))
        }) {
            assert_eq!(
                e["is_error"],
                false,
                "{dialect} {}: edit failed: {}",
                path.display(),
                e["content"]
            );
        }
    }
}
