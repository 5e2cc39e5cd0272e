//! A real OTLP receiver: Arize Phoenix (PyPI `arize-phoenix`, installed project-locally by
//! tests/support/otel-venv.sh) on loopback, fed by `--otlp-endpoint` and queried back through
//! its REST API: the span tree, names, token counts, tool names and error statuses it stored
//! match the envelope. Skips with a message when the package cannot be installed.

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use common::{events, root, run};

/// A Phoenix server this test started; killed when dropped.
struct Phoenix {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn phoenix_python() -> Option<PathBuf> {
    let out = Command::new("bash")
        .arg(root().join("tests/support/otel-venv.sh"))
        .arg("phoenix")
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "SKIP Phoenix receiver test: arize-phoenix could not be installed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return None;
    }
    Some(PathBuf::from(String::from_utf8(out.stdout).unwrap().trim()))
}

fn get(url: &str) -> Option<Value> {
    let mut resp = ureq::get(url).call().ok()?;
    let body = resp.body_mut().read_to_vec().ok()?;
    serde_json::from_slice(&body).ok()
}

impl Phoenix {
    fn start(py: &PathBuf) -> Phoenix {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let log = std::fs::File::create(dir.path().join("phoenix.log")).unwrap();
        let child = Command::new(py)
            .args(["-m", "phoenix.server.main", "serve"])
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", free_port().to_string())
            .env("PHOENIX_WORKING_DIR", dir.path())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .env("PHOENIX_ALLOW_EXTERNAL_RESOURCES", "false")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start phoenix");
        let mut p = Phoenix {
            child,
            port,
            _dir: dir,
        };
        let t = Instant::now();
        while ureq::get(&p.url("/healthz")).call().is_err() {
            if let Ok(Some(st)) = p.child.try_wait() {
                let log = std::fs::read_to_string(p._dir.path().join("phoenix.log")).unwrap();
                panic!("phoenix exited ({st}) while starting:\n{log}");
            }
            assert!(
                t.elapsed() < Duration::from_secs(120),
                "phoenix did not start in 120 s"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        eprintln!(
            "phoenix up on 127.0.0.1:{port} after {:.1} s",
            t.elapsed().as_secs_f64()
        );
        p
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The spans Phoenix stored for `trace`, once it has `n` of them.
    fn spans(&self, trace: &str, n: usize) -> Vec<Value> {
        let t = Instant::now();
        loop {
            let url = self.url(&format!(
                "/v1/projects/default/spans?trace_id={trace}&limit=1000"
            ));
            let spans = get(&url)
                .and_then(|v| v["data"].as_array().cloned())
                .unwrap_or_default();
            if spans.len() >= n || t.elapsed() > Duration::from_secs(30) {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

/// The tree as `name` lines indented by depth, children by start time then name.
fn render(spans: &[Value]) -> String {
    let mut kids: HashMap<String, Vec<&Value>> = HashMap::new();
    for s in spans {
        let p = s["parent_id"].as_str().unwrap_or("").to_owned();
        kids.entry(p).or_default().push(s);
    }
    for v in kids.values_mut() {
        v.sort_by_key(|s| {
            (
                s["start_time"].as_str().unwrap().to_owned(),
                s["name"].to_string(),
            )
        });
    }
    let mut out = String::new();
    fn walk(s: &Value, depth: usize, kids: &HashMap<String, Vec<&Value>>, out: &mut String) {
        let a = &s["attributes"];
        let mut line = format!(
            "{}{} [{}]",
            "  ".repeat(depth),
            s["name"].as_str().unwrap(),
            s["span_kind"].as_str().unwrap_or("")
        );
        for k in [
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.output_tokens",
            "gen_ai.tool.call.id",
        ] {
            if let Some(v) = a.get(k) {
                line.push_str(&format!(" {}={v}", k.rsplit('.').next().unwrap()));
            }
        }
        if s["status_code"] == "ERROR" {
            line.push_str(" ERROR");
        }
        out.push_str(&line);
        out.push('\n');
        let id = s["context"]["span_id"].as_str().unwrap();
        for k in kids.get(id).into_iter().flatten() {
            walk(k, depth + 1, kids, out);
        }
    }
    for r in kids.get("").into_iter().flatten() {
        walk(r, 0, &kids, &mut out);
    }
    out
}

#[test]
fn phoenix_stores_the_trace_the_envelope_describes() {
    let Some(py) = phoenix_python() else { return };
    let started = Instant::now();
    let phoenix = Phoenix::start(&py);
    let cases = [
        "fixtures/captured/2.1.45/subagent.partial.ndjson",
        "fixtures/real/happy-cli__sample-error-edit-multiedit.ndjson",
    ];
    for (i, case) in cases.iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.otlp");
        let run_id = format!("phoenix-test-{i}-{}", std::process::id());
        let input = std::fs::read(root().join(case)).unwrap();
        let endpoint = phoenix.url("");
        let out = run(
            &[
                "--otlp-endpoint",
                &endpoint,
                "--otlp",
                file.to_str().unwrap(),
                "--run-id",
                &run_id,
            ],
            &input,
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let evs = events(&out.stdout);
        let end = evs.last().unwrap();
        let n = end["otlp"]["spans"].as_u64().unwrap() as usize;
        assert_eq!(
            end["otlp"]["exported"],
            n as u64,
            "{case}: {}",
            String::from_utf8_lossy(&out.stderr)
        );

        // What we wrote, from the file sink (same spans, same ids).
        let written: Vec<Value> = std::fs::read_to_string(&file)
            .unwrap()
            .lines()
            .flat_map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                v["resourceSpans"][0]["scopeSpans"][0]["spans"]
                    .as_array()
                    .unwrap()
                    .clone()
            })
            .collect();
        let trace = written[0]["traceId"].as_str().unwrap().to_owned();
        let stored = phoenix.spans(&trace, n);
        assert_eq!(stored.len(), n, "{case}: Phoenix stored every span");
        eprintln!("{case} as stored by Phoenix:\n{}", render(&stored));

        // The tree: the same parent of every span id, the same names.
        let tree = |spans: &[Value],
                    id: &str,
                    parent: &str,
                    name: &str|
         -> BTreeMap<String, (String, String)> {
            spans
                .iter()
                .map(|s| {
                    let id = s.pointer(id).and_then(Value::as_str).unwrap().to_owned();
                    let p = s
                        .pointer(parent)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned();
                    (id, (p, s[name].as_str().unwrap().to_owned()))
                })
                .collect()
        };
        assert_eq!(
            tree(&stored, "/context/span_id", "/parent_id", "name"),
            tree(&written, "/spanId", "/parentSpanId", "name"),
            "{case}: span tree"
        );
        // Token counts: per message, as the envelope's usage says.
        let by_msg: HashMap<&str, &Value> = stored
            .iter()
            .filter_map(|s| Some((s["attributes"]["gen_ai.response.id"].as_str()?, s)))
            .collect();
        let usages: Vec<&Value> = evs.iter().filter(|e| e["type"] == "usage").collect();
        // A message without an id (a subagent's final message, read from its call's result)
        // has a chat span without one.
        let usages: Vec<&Value> = usages
            .into_iter()
            .filter(|u| u["message_id"].is_string())
            .collect();
        assert_eq!(
            by_msg.len(),
            usages.len(),
            "{case}: a chat span per message"
        );
        for u in usages {
            let s = by_msg[u["message_id"].as_str().unwrap()];
            let n = |k: &str| u["usage"][k].as_i64().unwrap_or(0);
            let input =
                n("input_tokens") + n("cache_read_input_tokens") + n("cache_creation_input_tokens");
            assert_eq!(
                s["attributes"]["gen_ai.usage.input_tokens"], input,
                "{case}"
            );
            assert_eq!(
                s["attributes"]["gen_ai.usage.output_tokens"],
                n("output_tokens"),
                "{case}"
            );
            assert_eq!(
                s["span_kind"], "LLM",
                "Phoenix reads chat spans as LLM calls"
            );
        }
        // Tool names and error statuses.
        for c in evs.iter().filter(|e| e["type"] == "tool.call") {
            let id = c["tool_use_id"].as_str().unwrap();
            let s = stored
                .iter()
                .find(|s| s["attributes"]["gen_ai.tool.call.id"] == id)
                .unwrap_or_else(|| panic!("{case}: tool span {id}"));
            assert_eq!(s["attributes"]["gen_ai.tool.name"], c["name"]);
            assert_eq!(
                s["name"],
                format!("execute_tool {}", c["name"].as_str().unwrap())
            );
            let failed = evs.iter().any(|r| {
                r["type"] == "tool.result" && r["tool_use_id"] == id && r["is_error"] == true
            });
            assert_eq!(s["status_code"] == "ERROR", failed, "{case}: {id} status");
        }
    }
    eprintln!(
        "phoenix test: {:.1} s including the server start",
        started.elapsed().as_secs_f64()
    );
}
