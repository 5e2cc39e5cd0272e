//! Session transcripts (`~/.claude/projects`) as input, on the real transcripts of
//! `fixtures/transcripts/<version>/session/` (four runs of the real CLI in one HOME: parallel
//! tools, a subagent, `--continue`, `--fork-session`, `/compact`; the stdout of each run beside
//! them): the transcript's envelope agrees with the stream's, every member of every line reaches
//! the envelope, usage is counted once per API message, and `sessions` lists them.

mod library;
mod members;
mod sessions;
mod usage;

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use boo_normalize::normalize::{EndInfo, MAPPINGS, NormalizeOptions, Normalizer};
use boo_normalize::pipeline::Pipeline;
use boo_normalize::sink::Ndjson;
use boo_normalize::transcript::map::Mapper;
use boo_normalize::transcript::reader::{Part, SessionReader};
use common::{bin, events, of_type, root};
use proptest::prelude::*;
use serde_json::{Value, json};

const VERSIONS: &[&str] = &["1.0.128", "2.0.76", "2.1.45", "2.1.332"];

fn dir(version: &str) -> PathBuf {
    root()
        .join("fixtures/transcripts")
        .join(version)
        .join("session")
}

/// The one project directory of a version's fixture.
fn project(version: &str) -> PathBuf {
    let p = dir(version).join("projects");
    let mut d: Vec<PathBuf> = std::fs::read_dir(&p)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(d.len(), 1, "{}", p.display());
    d.pop().unwrap()
}

/// Every transcript file of a version (main and sidechain files).
fn transcript_files(version: &str) -> Vec<PathBuf> {
    fn walk(p: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(p).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&dir(version).join("projects"), &mut out);
    out.sort();
    out
}

fn streams(version: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir(version))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".stream.ndjson"))
        .collect();
    v.sort();
    v
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The envelope of `args`, which must exit 0.
fn envelope(args: &[&Path]) -> Vec<Value> {
    let out = bin().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    events(&out.stdout)
}

/// What both envelopes know: texts, tool calls (with their parent), results, usage per message.
#[derive(Default, Debug)]
struct Known {
    texts: BTreeSet<(Option<String>, String)>,
    calls: BTreeMap<String, (Option<String>, String, Value)>,
    results: BTreeMap<String, (Value, Value)>,
    usage: BTreeMap<String, Value>,
}

fn parent(e: &Value) -> Option<String> {
    e["parent_tool_use_id"].as_str().map(str::to_owned)
}

fn known(ev: &[Value]) -> Known {
    let mut k = Known::default();
    for e in ev {
        match e["type"].as_str().unwrap() {
            "text" => {
                k.texts
                    .insert((parent(e), e["text"].as_str().unwrap().to_owned()));
            }
            "tool.call" => {
                k.calls.insert(
                    e["tool_use_id"].as_str().unwrap().to_owned(),
                    (
                        parent(e),
                        e["name"].as_str().unwrap().to_owned(),
                        e["input"].clone(),
                    ),
                );
            }
            "tool.result" => {
                k.results.insert(
                    e["tool_use_id"].as_str().unwrap().to_owned(),
                    (e["is_error"].clone(), e["content"].clone()),
                );
            }
            // A foreground subagent's final message read from its call's result (no id): the
            // transcript holds it, under its id, in the subagent's own file.
            "usage" if e["message_id"].is_null() => {}
            "usage" => {
                let u = &e["usage"];
                // A provisional count (a block line's, before the message ended) is what the
                // line said, not the message's final output: compare it only when final.
                let out = if e["provisional"] == true {
                    Value::Null
                } else {
                    u["output_tokens"].clone()
                };
                k.usage.insert(
                    e["message_id"].as_str().unwrap().to_owned(),
                    json!([
                        u["input_tokens"],
                        u["cache_read_input_tokens"],
                        u["cache_creation_input_tokens"],
                        out
                    ]),
                );
            }
            _ => {}
        }
    }
    k
}

/// For the same runs, the transcript's envelope says everything the stream's says about texts,
/// tool calls (name, input, parent call), tool results and usage per API message.
#[test]
fn the_transcript_and_the_stream_agree() {
    for v in VERSIONS {
        let proj = project(v);
        let tr = known(&envelope(&[&proj]));
        let mut st = Known::default();
        for s in streams(v) {
            // A stream without a result (none here) would exit 3; all of these have one.
            let k = known(&envelope(&[&s]));
            st.texts.extend(k.texts);
            st.calls.extend(k.calls);
            st.results.extend(k.results);
            st.usage.extend(k.usage);
        }
        assert!(!st.calls.is_empty() && !st.texts.is_empty(), "{v}");
        for t in &st.texts {
            assert!(tr.texts.contains(t), "{v}: the transcript lacks text {t:?}");
        }
        for (id, c) in &st.calls {
            assert_eq!(tr.calls.get(id), Some(c), "{v}: tool call {id}");
        }
        for (id, r) in &st.results {
            let got = tr
                .results
                .get(id)
                .unwrap_or_else(|| panic!("{v}: no result for {id}"));
            assert_eq!(&got.0, &r.0, "{v}: is_error of {id}");
            // The transcript keeps the same content (the stream may add nothing else).
            assert_eq!(&got.1, &r.1, "{v}: content of {id}");
        }
        for (id, u) in &st.usage {
            let got = tr
                .usage
                .get(id)
                .unwrap_or_else(|| panic!("{v}: no usage for {id}"));
            assert_eq!(
                got.as_array().unwrap()[..3],
                u.as_array().unwrap()[..3],
                "{v}: usage of {id}"
            );
            if !u[3].is_null() && !got[3].is_null() {
                assert_eq!(got[3], u[3], "{v}: output tokens of {id}");
            }
        }
        // The subagent's calls hang under the call that started it, as in the live stream.
        let sub: Vec<_> = st.calls.values().filter(|c| c.0.is_some()).collect();
        assert!(!sub.is_empty(), "{v}: the stream shows the subagent's call");
    }
}

/// An independent count: every assistant line's usage under its message id (else its request
/// id), the last line of a key replacing the earlier ones; summed.
fn independent(files: &[PathBuf]) -> (usize, [u64; 4]) {
    let mut by: BTreeMap<(String, String), [u64; 4]> = BTreeMap::new();
    for f in files {
        for l in lines(f) {
            if l["type"] != "assistant" {
                continue;
            }
            let key = match (l["message"]["id"].as_str(), l["requestId"].as_str()) {
                (Some(m), _) => (m.to_owned(), String::new()),
                (None, Some(r)) => (String::new(), r.to_owned()),
                (None, None) => continue,
            };
            let u = &l["message"]["usage"];
            if u.is_null() {
                continue;
            }
            let n = |k: &str| u[k].as_u64().unwrap_or(0);
            by.insert(
                key,
                [
                    n("input_tokens"),
                    n("output_tokens"),
                    n("cache_read_input_tokens"),
                    n("cache_creation_input_tokens"),
                ],
            );
        }
    }
    let mut t = [0; 4];
    for u in by.values() {
        for i in 0..4 {
            t[i] += u[i];
        }
    }
    (by.len(), t)
}

fn sessions_json(d: &Path, extra: &[&str]) -> Value {
    let out = bin()
        .arg("sessions")
        .arg(d)
        .args(["--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Detection: a transcript on stdin is read as one (no sidechains there); stream-json stays
/// stream-json.
#[test]
fn stdin_is_recognised() {
    let main = transcript_files("1.0.128").into_iter().next().unwrap();
    let out = common::run(&[], &std::fs::read(&main).unwrap());
    assert!(out.status.success());
    let ev = events(&out.stdout);
    assert_eq!(ev.last().unwrap()["input_format"], "transcript");
    assert!(of_type(&ev, "unknown").is_empty());
    let stream = streams("1.0.128").remove(0);
    let out = common::run(&[], &std::fs::read(stream).unwrap());
    assert!(out.status.success());
    assert!(
        events(&out.stdout)
            .last()
            .unwrap()
            .get("input_format")
            .is_none()
    );
}

/// `redact` of a session writes one transcript (its files merged in time order, lines as
/// written), which normalizes to what the session itself does.
#[test]
fn a_redacted_session_is_a_transcript_that_normalizes_the_same() {
    for v in VERSIONS {
        for main in transcript_files(v).iter().filter(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            !n.starts_with("agent-") && std::fs::metadata(p).unwrap().len() > 0
        }) {
            let red = bin().arg("redact").arg(main).output().unwrap();
            assert!(red.status.success(), "{}", main.display());
            // The lines are the transcript's own (nothing to redact in these fixtures).
            let first = std::fs::read_to_string(main).unwrap();
            let first = first.lines().next().unwrap();
            assert!(
                String::from_utf8_lossy(&red.stdout)
                    .lines()
                    .any(|l| l == first)
            );
            let again = common::run(&[], &red.stdout);
            assert!(again.status.success());
            let (a, b) = (known(&events(&again.stdout)), known(&envelope(&[main])));
            assert_eq!(a.texts, b.texts, "{}", main.display());
            assert_eq!(a.calls, b.calls, "{}", main.display());
            assert_eq!(a.usage, b.usage, "{}", main.display());
        }
    }
}

/// Hostile strings in a transcript never reach the terminal as control characters, and broken
/// lines neither stop the listing nor the envelope.
#[test]
fn hostile_and_broken_transcripts() {
    let root = tempfile::tempdir().unwrap();
    let proj = root.path().join("-tmp-\u{1b}[31mevil");
    std::fs::create_dir_all(&proj).unwrap();
    let lines = [
        r#"{"type":"user","sessionId":"s","cwd":"/tmp/\u001b[2J\u0007x","timestamp":"2026-01-01T00:00:00.000Z","uuid":"a","isSidechain":false,"message":{"role":"user","content":"hi"}}"#,
        "not json at all",
        r#"{"type":"assistant","sessionId":"s","requestId":"r","timestamp":"2026-01-01T00:00:05.000Z","uuid":"b","isSidechain":false,"message":{"id":"msg_1","model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}],"usage":{"input_tokens":1000000,"output_tokens":0}}}"#,
        r#"{"type":"assistant","sessionId":"s","#,
    ];
    std::fs::write(proj.join("0000dead-beef.jsonl"), lines.join("\n")).unwrap();
    let out = bin().arg("sessions").arg(root.path()).output().unwrap();
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        !table.chars().any(|c| c.is_control() && c != '\n'),
        "{table:?}"
    );
    assert!(table.contains("~$3.00"), "{table}");
    let json = sessions_json(root.path(), &[]);
    let s = &json["sessions"][0];
    assert_eq!(s["bad_lines"], 2);
    assert_eq!(s["tool_calls"], 1);
    assert_eq!(s["duration_s"], 5.0);
    let out = bin()
        .arg(proj.join("0000dead-beef.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let ev = events(&out.stdout);
    let kinds: Vec<&str> = of_type(&ev, "diagnostic")
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["not_json", "truncated_line"]);
}

/// `report SESSION`: a session (by file or by id) is drawn as a report with its tool calls, the
/// same ones its envelope has.
#[test]
fn report_draws_a_session_by_file_and_by_id() {
    let home = dir("2.1.45");
    let main = std::fs::read_dir(home.join("projects/-tmp-boo-tr-capture-work"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .min()
        .unwrap();
    let id = main.file_stem().unwrap().to_string_lossy()[..8].to_owned();
    let env = bin().arg(&main).output().unwrap();
    assert!(
        env.status.success(),
        "{}",
        String::from_utf8_lossy(&env.stderr)
    );
    let calls = of_type(&events(&env.stdout), "tool.call").len();
    assert!(calls > 0);
    for arg in [main.to_string_lossy().into_owned(), id] {
        let out = bin()
            .env("CLAUDE_CONFIG_DIR", &home)
            .args(["report", "-o", "-", &arg])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{arg}: {err}");
        let html = String::from_utf8_lossy(&out.stdout);
        assert!(html.starts_with("<!doctype html>"), "{arg}");
        let drawn = html.matches("class=\"ev call").count();
        assert!(
            drawn >= calls,
            "{arg}: {drawn} calls drawn, {calls} in the envelope"
        );
    }
}
