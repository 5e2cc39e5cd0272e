//! Real SSE clients read boo-normalize's output: the `eventsource-parser` npm package (default
//! profile, every capture), headless Chromium's `EventSource` against a loopback server that
//! drops the first connection (so the browser must resume with `Last-Event-ID`), and the `ai`
//! package's chat transport + `readUIMessageStream` (ai-sdk profile), which must rebuild the
//! assistant's text, reasoning and tool calls.
//!
//! Node packages are installed from `tests/support/node-clients` (pinned, lockfile) into
//! `target/node-clients` on first use. When npm or Chromium is missing these tests print `SKIP:`
//! and pass; set `BOO_REQUIRE_CLIENTS=1` to make that a failure.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::npm::{self, CiError};
use common::{bin, events, fixtures, root};
use serde_json::Value;

pub(crate) fn skip(why: &str) {
    if std::env::var_os("BOO_REQUIRE_CLIENTS").is_some_and(|v| !v.is_empty()) {
        panic!("required client unavailable: {why}");
    }
    eprintln!("SKIP: {why}");
}

/// `target/node-clients` with the pinned packages installed, or why not.
pub(crate) fn node_clients() -> Result<&'static Path, String> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(install_node_clients)
        .as_ref()
        .map(PathBuf::as_path)
        .map_err(Clone::clone)
}

fn install_node_clients() -> Result<PathBuf, String> {
    let dir = npm::support_copy("node-clients")?;
    npm::ci_once(&dir).map_err(|e| match e {
        CiError::Io(e) => e,
        CiError::Spawn(e) => format!("npm not available ({e})"),
        CiError::Failed(stderr) => format!(
            "npm ci failed: {}",
            stderr.lines().rev().take(5).collect::<Vec<_>>().join(" | ")
        ),
    })?;
    Ok(dir)
}

pub(crate) fn node(dir: &Path, args: &[&str]) -> Value {
    let out = Command::new("node")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run node");
    assert!(
        out.status.success(),
        "node {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("node printed JSON")
}

/// Run the binary; assert success; stdout.
fn ok(args: &[&std::ffi::OsStr]) -> Vec<u8> {
    let out = bin().args(args).output().unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn eventsource_parser_reads_every_capture() {
    let dir = match node_clients() {
        Ok(d) => d,
        Err(e) => return skip(&e),
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    for (i, f) in fixtures().iter().enumerate() {
        let sse = tmp.path().join(format!("{i}.sse"));
        let env = tmp.path().join(format!("{i}.ndjson"));
        let stdout = ok(&[
            "--format".as_ref(),
            "sse".as_ref(),
            "--envelope".as_ref(),
            env.as_os_str(),
            f.as_os_str(),
        ]);
        std::fs::write(&sse, &stdout).unwrap();
        assert!(stdout.starts_with(b"retry: 3000\n\n"));
        cases.push((f.clone(), sse, env));
    }
    let mut args = vec!["eventsource-parse.mjs".to_owned()];
    args.extend(cases.iter().map(|c| c.1.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let parsed = node(dir, &args);
    let mut total = 0;
    for (f, sse, env) in &cases {
        let got = &parsed[sse.display().to_string()];
        let want = events(&std::fs::read(env).unwrap());
        assert_eq!(got["retry"], 3000, "{}", f.display());
        assert_eq!(got["comments"], serde_json::json!([]));
        let got = got["events"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "{}", f.display());
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g["id"], w["seq"].to_string(), "{}", f.display());
            assert_eq!(g["event"], w["type"], "{}", f.display());
            let data: Value = serde_json::from_str(g["data"].as_str().unwrap()).unwrap();
            assert_eq!(&data, w, "{}", f.display());
        }
        total += got.len();
    }
    assert!(total > 5000, "{total}");
}

/// The loopback server (tests/support/sse_server.py), killed on drop.
pub(crate) struct Server {
    child: Child,
    pub(crate) port: u16,
}

impl Server {
    pub(crate) fn start(input: &Path, extra: &[&str]) -> Option<Server> {
        let mut child = match Command::new("python3")
            .arg(root().join("tests/support/sse_server.py"))
            .arg("--bin")
            .arg(env!("CARGO_BIN_EXE_boo-normalize"))
            .arg("--input")
            .arg(input)
            .args(extra)
            .stdout(Stdio::piped())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => {
                skip(&format!("python3 not available ({e})"));
                return None;
            }
        };
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .strip_prefix("PORT ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("server said {line:?}"));
        Some(Server { child, port })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const CHROMIUM: &str = "/usr/bin/chromium";

/// The page: one listener per envelope event type (named SSE events never reach `onmessage`),
/// closes on `run.end` and posts what it got.
fn page(types: &[&str]) -> String {
    format!(
        r#"<!doctype html><meta charset="utf-8"><title>boo-normalize SSE</title>
<pre id="out">waiting</pre>
<script>
const types = {types};
const got = [];
let opens = 0;
const es = new EventSource('/events');
es.onopen = () => {{ opens++; }};
es.onmessage = (e) => got.push({{ id: e.lastEventId, type: 'message', data: e.data }});
for (const t of types) {{
  es.addEventListener(t, (e) => {{
    got.push({{ id: e.lastEventId, type: e.type, data: e.data }});
    if (t === 'run.end') {{
      es.close();
      fetch('/report', {{ method: 'POST', body: JSON.stringify({{ events: got, opens }}) }})
        .then(() => {{ document.getElementById('out').textContent = 'done'; }});
    }}
  }});
}}
</script>
"#,
        types = serde_json::to_string(types).unwrap()
    )
}

#[test]
fn chromium_eventsource_resumes_after_a_dropped_connection() {
    if !Path::new(CHROMIUM).exists() {
        return skip(&format!(
            "{CHROMIUM} is missing (Debian: apt-get install -y chromium)"
        ));
    }
    let input = root().join("fixtures/captured/1.0.128/tools.partial.ndjson");
    let want = events(&ok(&[input.as_os_str()]));
    let tmp = tempfile::tempdir().unwrap();
    let page_path = tmp.path().join("page.html");
    std::fs::write(&page_path, page(&boo_normalize::schema::event_types())).unwrap();
    let report = tmp.path().join("report.json");
    let cut = 20;
    let Some(server) = Server::start(
        &input,
        &[
            "--page",
            page_path.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
            "--cut-after",
            &cut.to_string(),
            "--timeout",
            "90",
        ],
    ) else {
        return;
    };
    let profile = tmp.path().join("profile");
    let mut chromium = Command::new(CHROMIUM);
    chromium
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("http://127.0.0.1:{}/", server.port))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut chromium, 0);
    let mut browser = chromium.spawn().expect("start chromium");
    let start = Instant::now();
    while !report.exists() && start.elapsed() < Duration::from_secs(90) {
        std::thread::sleep(Duration::from_millis(100));
    }
    // Chromium runs helper processes in its process group (which we created): end them all.
    let group = format!("-{}", browser.id());
    let _ = Command::new("kill")
        .args(["-TERM", "--", &group])
        .stderr(Stdio::null())
        .status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while browser.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = Command::new("kill")
        .args(["-KILL", "--", &group])
        .stderr(Stdio::null())
        .status();
    let _ = browser.wait();
    drop(server);
    let report: Value =
        serde_json::from_slice(&std::fs::read(&report).expect("the page never reported (timeout)"))
            .unwrap();
    // The first connection was cut after `cut` events; the browser came back with their last id.
    let conns: Vec<&Value> = report["connections"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["path"] == "/events")
        .collect();
    assert_eq!(conns.len(), 2, "{report}");
    assert_eq!(conns[0]["last_event_id"], Value::Null);
    assert_eq!(conns[1]["last_event_id"], (cut - 1).to_string());
    assert_eq!(report["received"]["opens"], 2);
    let got = report["received"]["events"].as_array().unwrap();
    assert_eq!(
        got.len(),
        want.len(),
        "no event lost or repeated across the reconnect"
    );
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g["id"], w["seq"].to_string());
        assert_eq!(g["type"], w["type"]);
        let data: Value = serde_json::from_str(g["data"].as_str().unwrap()).unwrap();
        assert_eq!(&data, w);
    }
}

/// What the assistant message must contain, from the envelope (top level only).
fn expected_parts(env: &[Value]) -> Vec<Value> {
    let top = |e: &&Value| e["parent_tool_use_id"].is_null();
    let results: Vec<&Value> = env
        .iter()
        .filter(top)
        .filter(|e| e["type"] == "tool.result")
        .collect();
    let mut parts = Vec::new();
    for e in env.iter().filter(top) {
        match e["type"].as_str().unwrap() {
            "text" => parts.push(serde_json::json!({"type": "text", "text": e["text"]})),
            "thinking" if e["redacted"] != true => {
                parts.push(serde_json::json!({"type": "reasoning", "text": e["thinking"]}))
            }
            "tool.call" => {
                let id = &e["tool_use_id"];
                let mut p = serde_json::json!({
                    "type": "dynamic-tool",
                    "toolCallId": id,
                    "toolName": e["name"],
                    "input": e["input"],
                    "state": "input-available",
                });
                // A call whose input did not parse (the CLI abandoned it mid-stream) is a
                // tool-input-error: the part fails with the raw fragments as its input.
                if let Some(why) = e["input_error"].as_str() {
                    p["state"] = "output-error".into();
                    p["input"] = e["partial_json"].clone();
                    p["errorText"] = why.into();
                } else if let Some(r) = results.iter().find(|r| &r["tool_use_id"] == id) {
                    if r["is_error"] == true {
                        p["state"] = "output-error".into();
                        p["errorText"] = error_text(&r["content"]).into();
                    } else {
                        p["state"] = "output-available".into();
                        p["output"] = r["content"].clone();
                    }
                }
                parts.push(p);
            }
            _ => {}
        }
    }
    parts
}

/// A failed tool's content as the `errorText` the stream must carry.
fn error_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) if blocks.iter().any(|b| b["text"].is_string()) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The message's parts reduced to the keys [`expected_parts`] sets.
fn actual_parts(message: &Value) -> Vec<Value> {
    message["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["type"] != "step-start")
        .map(|p| {
            let keep: &[&str] = match p["type"].as_str().unwrap() {
                "text" | "reasoning" => &["type", "text"],
                _ => &[
                    "type",
                    "toolCallId",
                    "toolName",
                    "input",
                    "state",
                    "output",
                    "errorText",
                ],
            };
            let mut o = serde_json::Map::new();
            for k in keep {
                if let Some(v) = p.get(*k).filter(|v| !v.is_null()) {
                    o.insert((*k).to_owned(), v.clone());
                }
            }
            Value::Object(o)
        })
        .collect()
}

#[test]
fn ai_sdk_reader_rebuilds_text_reasoning_and_tool_calls() {
    let dir = match node_clients() {
        Ok(d) => d,
        Err(e) => return skip(&e),
    };
    let cases = [
        "fixtures/captured/1.0.128/tools.partial.ndjson",
        "fixtures/captured/1.0.128/tools.ndjson",
        "fixtures/captured/1.0.128/subagent.partial.ndjson",
        "fixtures/captured/2.0.76/max_turns.partial.ndjson",
        "fixtures/captured/2.0.76/subagent_bg.partial.ndjson",
        "fixtures/captured/2.0.76/api_error.partial.ndjson",
        "fixtures/real/happy-cli__sample-error-edit-multiedit.ndjson",
        "fixtures/real/terragon__websearch.ndjson",
        "fixtures/real/claude-debussy__task-tool-output.ndjson",
        // CLI 2.1.332: three turns over stdin in one stream; a host-denied call; a call the CLI
        // abandoned mid-stream (tool-input-error) after an interrupt.
        "fixtures/captured/2.1.332/stream_input.partial.ndjson",
        "fixtures/captured/2.1.332/permission_stdio.ndjson",
        "fixtures/captured/2.1.332/stream_interrupt.partial.ndjson",
    ];
    let mut tools = 0;
    for rel in cases {
        let input = root().join(rel);
        if !input.exists() {
            panic!("fixture {rel} missing");
        }
        let env = events(&ok(&[input.as_os_str()]));
        let Some(server) = Server::start(&input, &["--timeout", "60"]) else {
            return;
        };
        let url = format!("http://127.0.0.1:{}/chat", server.port);
        let got = node(dir, &["ai-sdk-read.mjs", &url]);
        drop(server);
        // Every error the reader reported is one of the stream's own `error` chunks: no chunk
        // failed the schema or referred to a part that was never started.
        assert_eq!(got["errors"], got["errorChunks"], "{rel}");
        let types = got["chunkTypes"].as_array().unwrap();
        assert_eq!(types.first().unwrap(), "start", "{rel}");
        assert_eq!(types.last().unwrap(), "finish", "{rel}");
        let want = expected_parts(&env);
        let actual = actual_parts(&got["message"]);
        assert_eq!(actual, want, "{rel}");
        assert!(want.iter().any(|p| p["type"] == "text"), "{rel}");
        tools += want.iter().filter(|p| p["type"] == "dynamic-tool").count();
        // Done streaming: nothing left half-open.
        for p in got["message"]["parts"].as_array().unwrap() {
            if p["type"] == "text" || p["type"] == "reasoning" {
                assert_eq!(p["state"], "done", "{rel}");
            }
        }
    }
    assert!(tools >= 10, "{tools}");
}
