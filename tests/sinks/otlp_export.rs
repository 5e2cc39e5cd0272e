//! `--otlp-endpoint` against a scripted loopback OTLP/HTTP receiver: binary protobuf by default
//! (the same spans as the file sink), JSON with `http/json`, the standard headers variable,
//! bounded retries, and a dead, failing or hung receiver never failing or stalling the run
//! (failures on stderr and in `run.end.otlp`).

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use serde_json::Value;

use common::{bin, events, root};

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Req {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Req {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// How the receiver answers: an HTTP status, or never.
#[derive(Clone, Copy)]
pub enum Answer {
    Status(u16),
    Hang,
}

/// A loopback HTTP/1.1 receiver that records every request and answers `answer` (also used by
/// the `acp` tests).
pub struct Receiver {
    port: u16,
    got: Arc<Mutex<Vec<Req>>>,
}

impl Receiver {
    pub fn start(answer: Answer) -> Self {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let got = Arc::new(Mutex::new(Vec::new()));
        let g = Arc::clone(&got);
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let g = Arc::clone(&g);
                std::thread::spawn(move || serve(s, answer, &g));
            }
        });
        Receiver { port, got }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn requests(&self) -> Vec<Req> {
        self.got.lock().unwrap().clone()
    }
}

fn serve(s: TcpStream, answer: Answer, got: &Mutex<Vec<Req>>) {
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut w = s;
    loop {
        let mut first = String::new();
        if r.read_line(&mut first).unwrap_or(0) == 0 {
            return;
        }
        let path = first.split_whitespace().nth(1).unwrap_or("").to_owned();
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            r.read_line(&mut h).unwrap();
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let (k, v) = h.split_once(':').unwrap();
            headers.push((k.trim().to_owned(), v.trim().to_owned()));
        }
        let len: usize = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .map(|(_, v)| v.parse().unwrap())
            .expect("the exporter sends content-length");
        let mut body = vec![0; len];
        r.read_exact(&mut body).unwrap();
        got.lock().unwrap().push(Req {
            path,
            headers,
            body,
        });
        match answer {
            Answer::Hang => {
                std::thread::sleep(Duration::from_secs(60));
                return;
            }
            Answer::Status(code) => {
                let reply = format!("HTTP/1.1 {code} X\r\ncontent-length: 0\r\n\r\n");
                if w.write_all(reply.as_bytes()).is_err() {
                    return;
                }
            }
        }
    }
}

/// Run `boo-normalize` on a capture with `args` and `env`; (exit ok, run.end, stderr, elapsed).
fn export(args: &[&str], env: &[(&str, &str)]) -> (bool, Value, String, Duration) {
    let input = std::fs::read(root().join("fixtures/captured/2.1.45/subagent.ndjson")).unwrap();
    let mut cmd: Command = bin();
    cmd.args(args)
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_PROTOCOL")
        .env_remove("OTEL_EXPORTER_OTLP_HEADERS")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let t = Instant::now();
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    let evs = events(&out.stdout);
    let end = evs.last().cloned().unwrap_or(Value::Null);
    assert_eq!(end["type"], "run.end", "the envelope is whole");
    (
        out.status.success(),
        end,
        String::from_utf8_lossy(&out.stderr).into_owned(),
        t.elapsed(),
    )
}

/// (span id hex, name) of every span, sorted.
fn ids_of_file(otlp: &[u8]) -> Vec<(String, String)> {
    let mut v = Vec::new();
    for line in otlp.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let req: ExportTraceServiceRequest = serde_json::from_slice(line).unwrap();
        v.extend(ids_of(&req));
    }
    v.sort();
    v
}

fn ids_of(req: &ExportTraceServiceRequest) -> Vec<(String, String)> {
    req.resource_spans
        .iter()
        .flat_map(|rs| &rs.scope_spans)
        .flat_map(|ss| &ss.spans)
        .map(|s| (hex::encode(&s.span_id), s.name.clone()))
        .collect()
}

#[test]
fn protobuf_by_default_with_the_standard_headers_and_the_same_spans_as_the_file() {
    let rx = Receiver::start(Answer::Status(200));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.otlp");
    let (ok, end, stderr, _) = export(
        &[
            "--otlp-endpoint",
            &rx.url(),
            "--otlp",
            file.to_str().unwrap(),
            "--run-id",
            "x",
        ],
        &[(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "authorization=Bearer%20tok,x-team=infra",
        )],
    );
    assert!(ok, "{stderr}");
    assert_eq!(stderr, "");
    let reqs = rx.requests();
    assert!(!reqs.is_empty());
    let mut sent = Vec::new();
    for r in &reqs {
        assert_eq!(r.path, "/v1/traces");
        assert_eq!(r.header("content-type"), Some("application/x-protobuf"));
        assert_eq!(r.header("authorization"), Some("Bearer tok"));
        assert_eq!(r.header("x-team"), Some("infra"));
        let req = ExportTraceServiceRequest::decode(&r.body[..]).expect("protobuf body");
        sent.extend(ids_of(&req));
    }
    sent.sort();
    assert_eq!(sent, ids_of_file(&std::fs::read(&file).unwrap()));
    let n = sent.len() as u64;
    assert_eq!(
        end["otlp"],
        serde_json::json!({"spans": n, "exported": n, "failed": 0})
    );
}

#[test]
fn http_json_sends_otlp_json_with_hex_ids() {
    let rx = Receiver::start(Answer::Status(200));
    let (ok, end, stderr, _) = export(
        &["--otlp-endpoint"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &rx.url()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ],
    );
    assert!(ok, "{stderr}");
    let reqs = rx.requests();
    assert!(!reqs.is_empty());
    for r in &reqs {
        assert_eq!(r.header("content-type"), Some("application/json"));
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        let span = &v["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        assert_eq!(
            span["spanId"].as_str().unwrap().len(),
            16,
            "hex, not base64"
        );
    }
    assert_eq!(end["otlp"]["failed"], 0);
}

#[test]
fn a_failing_receiver_is_retried_a_bounded_number_of_times_and_never_fails_the_run() {
    let rx = Receiver::start(Answer::Status(503));
    let (ok, end, stderr, took) = export(&["--otlp-endpoint", &rx.url()], &[]);
    assert!(ok, "delivery failures do not fail the run: {stderr}");
    assert!(
        stderr.contains(&format!(
            "boo-normalize: otlp: {}/v1/traces: HTTP 503",
            rx.url()
        )),
        "{stderr}"
    );
    let spans = end["otlp"]["spans"].as_u64().unwrap();
    assert!(spans > 0);
    assert_eq!(end["otlp"]["failed"], spans);
    assert_eq!(end["otlp"]["exported"], 0);
    assert_eq!(rx.requests().len(), 4, "one request, tried 4 times");
    assert!(took < Duration::from_secs(10), "{took:?}");

    let rx = Receiver::start(Answer::Status(400));
    let (ok, end, stderr, _) = export(&["--otlp-endpoint", &rx.url()], &[]);
    assert!(ok && stderr.contains("HTTP 400"), "{stderr}");
    assert_eq!(rx.requests().len(), 1, "a 400 is not retried");
    assert_eq!(end["otlp"]["exported"], 0);
}

#[test]
fn no_receiver_or_a_hung_one_costs_bounded_time() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let (ok, end, stderr, took) = export(&["--otlp-endpoint", &url], &[]);
    assert!(ok, "{stderr}");
    assert!(stderr.starts_with("boo-normalize: otlp: "), "{stderr}");
    assert_eq!(end["otlp"]["failed"], end["otlp"]["spans"]);
    assert!(took < Duration::from_secs(10), "{took:?}");

    let rx = Receiver::start(Answer::Hang);
    let (ok, end, stderr, took) = export(
        &["--otlp-endpoint", &rx.url()],
        &[("OTEL_EXPORTER_OTLP_TIMEOUT", "300")],
    );
    assert!(ok, "{stderr}");
    assert_eq!(end["otlp"]["exported"], 0);
    assert_eq!(end["otlp"]["failed"], end["otlp"]["spans"]);
    assert!(
        took < Duration::from_secs(8),
        "a hung receiver is given up on: {took:?}"
    );
}

#[test]
fn bad_settings_are_usage_errors() {
    let out = bin()
        .args(["--otlp-endpoint", "localhost:4318"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "boo-normalize: --otlp-endpoint: not an http(s) URL: \"localhost:4318\" (a receiver's http(s) URL; to read a file, write --otlp-endpoint=URL or put the file first)"
    );
    let out = bin()
        .args(["--otlp-endpoint"])
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("OTEL_EXPORTER_OTLP_PROTOCOL"));
}

/// The binary exporting to `rx`, started, with its stdin taken and every fixture to write there.
fn every_fixture_to(rx: &Receiver) -> (std::process::Child, std::process::ChildStdin, Vec<u8>) {
    let mut input = Vec::new();
    for f in common::fixtures() {
        input.extend(std::fs::read(f).unwrap());
    }
    let mut child = bin()
        .args(["--otlp-endpoint", &rx.url()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    (child, stdin, input)
}

#[test]
fn a_run_cut_short_by_a_closed_stdout_still_delivers_its_finished_spans() {
    let rx = Receiver::start(Answer::Status(200));
    let (mut child, mut stdin, input) = every_fixture_to(&rx);
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut head = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap();
    // stdout is closed here: the pipeline stops at its next write.
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    assert!(
        out.status.success(),
        "| head is quiet: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let spans: usize = rx
        .requests()
        .iter()
        .map(|r| ids_of(&ExportTraceServiceRequest::decode(&r.body[..]).unwrap()).len())
        .sum();
    assert!(
        spans > 0,
        "the spans finished before the cut were delivered"
    );
}

#[test]
fn an_outage_is_one_stderr_line_not_one_per_batch() {
    let rx = Receiver::start(Answer::Status(503));
    let (child, mut stdin, input) = every_fixture_to(&rx);
    let feeder = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    // 0, or 3 should the concatenation count as a run without a result line.
    assert!(matches!(out.status.code(), Some(0 | 3)));
    let end = events(&out.stdout).pop().unwrap();
    let spans = end["otlp"]["spans"].as_u64().unwrap();
    assert!(spans > 512, "several requests' worth: {spans}");
    assert_eq!(end["otlp"]["failed"], spans);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].contains("HTTP 503 (gave up after retrying)"),
        "{stderr}"
    );
    assert!(lines[1].ends_with("more spans lost"), "{stderr}");
    let reqs = rx.requests().len();
    assert!(reqs > 4, "later batches are still tried: {reqs}");
}
