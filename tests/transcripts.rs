//! Session transcripts (`~/.claude/projects`) as input, on the real transcripts of
//! `fixtures/transcripts/<version>/session/` (four runs of the real CLI in one HOME: parallel
//! tools, a subagent, `--continue`, `--fork-session`, `/compact`; the stdout of each run beside
//! them): the transcript's envelope agrees with the stream's, every member of every line reaches
//! the envelope, usage is counted once per API message, and `sessions` lists them.

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
fn names(k: &str) -> Vec<String> {
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
fn has_member(v: &Value, names: &[String], x: &Value) -> bool {
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

/// Usage totals equal the independent de-duplicated sum, in the envelope (`usage` events and
/// `run.end`) and in `sessions --format json`; a forked session's repeated messages count once.
#[test]
fn usage_is_counted_once_per_api_message() {
    for v in VERSIONS {
        let (messages, want) = independent(&transcript_files(v));
        let ev = envelope(&[&project(v)]);
        let usage = of_type(&ev, "usage");
        let ids: BTreeSet<&str> = usage
            .iter()
            .map(|e| e["message_id"].as_str().unwrap())
            .collect();
        assert_eq!(
            ids.len(),
            usage.len(),
            "{v}: a message's usage written twice"
        );
        let mut sum = [0u64; 4];
        for e in &usage {
            let u = &e["usage"];
            for (i, k) in [
                "input_tokens",
                "output_tokens",
                "cache_read_input_tokens",
                "cache_creation_input_tokens",
            ]
            .iter()
            .enumerate()
            {
                sum[i] += u[k].as_u64().unwrap_or(0);
            }
        }
        assert_eq!((usage.len(), sum), (messages, want), "{v}: usage events");
        let end = ev.last().unwrap();
        assert_eq!(end["type"], "run.end");
        let u = &end["usage"];
        assert_eq!(
            [
                u["input_tokens"].as_u64().unwrap(),
                u["output_tokens"].as_u64().unwrap(),
                u["cache_read_input_tokens"].as_u64().unwrap(),
                u["cache_creation_input_tokens"].as_u64().unwrap()
            ],
            want,
            "{v}: run.end"
        );
        let s = sessions_json(&dir(v).join("projects"), &[]);
        let t = &s["total"];
        assert_eq!(
            t["api_messages"].as_u64().unwrap() as usize,
            messages,
            "{v}: sessions total"
        );
        assert_eq!(
            t["tokens"]["total"].as_u64().unwrap(),
            want.iter().sum::<u64>(),
            "{v}: sessions total tokens"
        );
        // Each session alone counts its copies; the sum over sessions is larger because the fork
        // repeats earlier messages (1.0.128's copies without their request ids).
        let per: u64 = s["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["api_messages"].as_u64().unwrap())
            .sum();
        assert!(
            per as usize > messages,
            "{v}: the fork repeats messages ({per} vs {messages})"
        );
    }
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

/// A HOME with every version's fixture sessions under ~/.claude/projects.
fn fixture_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    for v in VERSIONS {
        let src = project(v);
        let dst = home.path().join(".claude/projects").join(format!(
            "{}-{v}",
            src.file_name().unwrap().to_str().unwrap()
        ));
        copy_dir(&src, &dst);
    }
    home
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let p = e.unwrap().path();
        let to = dst.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &to);
        } else {
            std::fs::copy(&p, &to).unwrap();
        }
    }
}

#[test]
fn sessions_lists_a_home_as_a_table_and_as_json() {
    let home = fixture_home();
    // The binary with HOME at the fixture home.
    let at_home = |args: &[&str]| {
        bin()
            .args(args)
            .env("HOME", home.path())
            .env_remove("CLAUDE_CONFIG_DIR")
            .output()
            .unwrap()
    };
    let run = |args: &[&str]| at_home(&[&["sessions"], args].concat());
    let out = run(&[]);
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    let mut rows = table.lines();
    let head = rows.next().unwrap();
    for col in [
        "SESSION", "PROJECT", "START", "DURATION", "MSGS", "TOOLS", "TOKENS", "COST", "AGENTS",
    ] {
        assert!(head.contains(col), "{head}");
    }
    let json = sessions_json(&home.path().join(".claude/projects"), &[]);
    let list = json["sessions"].as_array().unwrap();
    // Every main file is a session (2.0.76 leaves two empty ones that own warmup agents).
    let mains: usize = VERSIONS
        .iter()
        .map(|v| {
            std::fs::read_dir(project(v))
                .unwrap()
                .filter(|e| {
                    let n = e.as_ref().unwrap().file_name();
                    let n = n.to_str().unwrap();
                    n.ends_with(".jsonl") && !n.starts_with("agent-")
                })
                .count()
        })
        .sum();
    assert_eq!(list.len(), mains);
    assert_eq!(table.lines().count(), 1 + mains + 2, "{table}");
    for s in list {
        let id = s["id"].as_str().unwrap();
        assert!(table.contains(&id[..8]), "{id} not in the table");
        assert!(s["start"].as_str().unwrap_or("") <= s["end"].as_str().unwrap_or(""));
    }
    // The subagent run of each version counts one subagent and the tool calls of both agents.
    for v in VERSIONS {
        let first = list
            .iter()
            .filter(|s| s["cli_version"] == *v)
            .find(|s| s["tool_calls"] == 4)
            .unwrap_or_else(|| panic!("{v}: no session with the 4 tool calls of run 1: {json}"));
        assert!(first["subagents"].as_u64().unwrap() >= 1, "{v}");
    }
    // Priced and unpriced models: 2.1.332's claude-opus-5-5 is not in the table.
    let opus: Vec<&Value> = list
        .iter()
        .filter(|s| s["cli_version"] == "2.1.332")
        .collect();
    assert!(
        opus.iter().all(|s| s["cost_estimate_usd"].is_null()
            && s["unpriced_models"] == json!(["claude-opus-5-5"]))
    );
    assert!(
        list.iter()
            .any(|s| s["cost_estimate_usd"].as_f64().is_some_and(|c| c > 0.0))
    );
    assert_eq!(json["cost_source"], "embedded");
    // Filters.
    let none = run(&["--project", "no-such-project"]);
    assert!(none.status.success() && none.stdout.is_empty());
    assert!(String::from_utf8_lossy(&none.stderr).contains("matches the filters"));
    let j = |args: &[&str]| sessions_json(&home.path().join(".claude/projects"), args);
    assert_eq!(
        j(&["--project", "2.1.45"])["sessions"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        j(&["--since", "2999-01-01"])["sessions"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        j(&["--until", "2000-01-01"])["sessions"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        j(&["--since", "2000-01-01", "--until", "2999-12-31"])["sessions"]
            .as_array()
            .unwrap()
            .len(),
        mains
    );
    let bad = run(&["--since", "yesterday"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).starts_with("boo-normalize: time \"yesterday\""));
    // A session id, or its start, names the session for normalize.
    let id = list[0]["id"].as_str().unwrap();
    for arg in [id, &id[..8]] {
        let out = at_home(&[arg]);
        assert!(
            out.status.success(),
            "{arg}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ev = events(&out.stdout);
        assert_eq!(ev.last().unwrap()["input_format"], "transcript");
    }
    // profile takes the id too: the session's files, subagents included.
    let with_agents = list
        .iter()
        .find(|s| s["subagents"].as_u64() == Some(1) && s["cli_version"] == "2.1.45")
        .unwrap();
    let id = with_agents["id"].as_str().unwrap();
    let out = at_home(&["profile", &id[..8]]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let prof: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        prof["input"]["streams"], 2,
        "the main file and one sidechain file"
    );
    let missing = at_home(&["ffffffff"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("session ffffffff: no such file"));
}

/// A transcript ends without a result: exit 0, no run.error, an estimated cost beside a null
/// reported one; `--prices` prices a model the table lacks; forced stream-json reads the lines
/// as lookalikes (and misses its result: exit 3).
#[test]
fn a_transcript_ends_without_a_result_and_is_priced_by_estimate() {
    let f = project("2.1.332");
    let ev = envelope(&[&f]);
    assert!(of_type(&ev, "run.error").is_empty());
    let end = ev.last().unwrap();
    assert_eq!(end["terminal_seen"], false);
    assert_eq!(end["cost_usd"], Value::Null);
    assert_eq!(end["cost_estimate_usd"], Value::Null);
    assert_eq!(end["unpriced_models"], json!(["claude-opus-5-5"]));
    let prices = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        prices.path(),
        r#"{"date":"2026-11-01","models":{"claude-opus-5-5":{"input":10,"output":50,"cache_read":1,"cache_write":12.5,"cache_write_1h":20}}}"#,
    )
    .unwrap();
    let out = bin()
        .arg("--prices")
        .arg(prices.path())
        .arg(&f)
        .output()
        .unwrap();
    let end = events(&out.stdout).pop().unwrap();
    let (_, t) = independent(&transcript_files("2.1.332"));
    let want =
        (t[0] as f64 * 10.0 + t[1] as f64 * 50.0 + t[2] as f64 * 1.0 + t[3] as f64 * 12.5) / 1e6;
    let got = end["cost_estimate_usd"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-5, "{got} vs {want}");
    assert_eq!(end["prices_date"], "2026-11-01");
    assert_eq!(end["cost_source"], prices.path().display().to_string());
    let bad = bin()
        .arg("--prices")
        .arg("/nonexistent/prices.json")
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let main = transcript_files("2.1.45")
        .into_iter()
        .find(|p| !p.to_string_lossy().contains("agent-"))
        .unwrap();
    let forced = bin()
        .args(["--input-format", "stream-json"])
        .arg(&main)
        .output()
        .unwrap();
    // Forced to read it as stream-json, a transcript holds none: the wrong-input hint, exit 2.
    assert_eq!(forced.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&forced.stderr).contains("session transcript"));
    assert!(
        of_type(&events(&forced.stdout), "unknown")
            .iter()
            .all(|e| e["kind"] == "lookalike")
    );
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

/// A message whose later line, written after the result of its first tool call, carries larger
/// counts (25 then 173 output tokens, as in a real session): the envelope and `sessions` count
/// its final usage, once, and agree (issue 38: they were 34 and 182 here).
#[test]
fn a_message_counts_its_final_usage_in_the_envelope_and_in_sessions() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("projects").join("-work");
    std::fs::create_dir_all(&proj).unwrap();
    let sid = "11111111-2222-4333-8444-555555555555";
    let line = |kind: &str, uuid: &str, t: u32, message: Value| {
        json!({"parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/work",
               "sessionId": sid, "version": "2.1.90", "type": kind, "message": message,
               "uuid": uuid, "timestamp": format!("2026-01-01T00:00:0{t}.000Z")})
        .to_string()
    };
    let usage = |out: u64| json!({"input_tokens": 10, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 0, "output_tokens": out});
    let assistant = |id: &str, block: Value, stop: Value, out: u64| {
        json!({"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
               "content": [block], "stop_reason": stop, "usage": usage(out)})
    };
    let result = |id: &str| json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "x", "is_error": false}]});
    let text = [
        line("user", "u1", 0, json!({"role": "user", "content": "go"})),
        line("assistant", "a1", 1, assistant("msg_A", json!({"type": "thinking", "thinking": "hmm", "signature": "s"}), Value::Null, 25)),
        line("assistant", "a2", 2, assistant("msg_A", json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}), Value::Null, 25)),
        line("user", "u2", 3, result("toolu_1")),
        line("assistant", "a3", 4, assistant("msg_A", json!({"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "pwd"}}), json!("tool_use"), 173)),
        line("user", "u3", 5, result("toolu_2")),
        line("assistant", "a4", 6, assistant("msg_B", json!({"type": "text", "text": "done"}), json!("end_turn"), 9)),
    ]
    .join("\n");
    let file = proj.join(format!("{sid}.jsonl"));
    std::fs::write(&file, format!("{text}\n")).unwrap();
    let ev = envelope(&[&file]);
    let usage_a = of_type(&ev, "usage")
        .into_iter()
        .find(|e| e["message_id"] == "msg_A")
        .unwrap();
    assert_eq!(usage_a["usage"]["output_tokens"], 173, "the final count");
    let end = ev.last().unwrap();
    assert_eq!(end["usage"]["output_tokens"], 173 + 9);
    let s = sessions_json(&tmp.path().join("projects"), &[]);
    assert_eq!(s["total"]["tokens"]["output_tokens"], 173 + 9, "{s}");
}
