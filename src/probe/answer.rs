//! How the loopback API answers one request (`handle`): the request classified and logged
//! (credentials left out), `/v1/messages` and the other model APIs answered from the scenario's
//! script (JSON, an event stream sent at once or slowly, an API error, or held open), and
//! `count_tokens`, the model list and unknown requests answered; the state the handlers share.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};
use tiny_http::{Header, Request, Response};

use super::script::{self, Incoming, Router};
use super::sse::{self, DEFAULT_MODEL};
use super::wire::{self, Wire};

/// What a request was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// `/v1/messages` offering tools: the main conversation or a subagent's.
    Main,
    /// `/v1/messages` without tools: titles, topic checks, quota checks, warm-ups.
    Side,
    /// `/v1/messages/count_tokens`.
    CountTokens,
    /// `GET /v1/models`.
    Models,
    /// Anything else (answered `200 {}`).
    Unknown,
}

/// One request the API served.
#[derive(Debug, Clone, Serialize)]
pub struct Served {
    /// 1-based arrival number.
    pub n: u64,
    /// HTTP method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// What it was.
    pub kind: Kind,
    /// What answered it (`entry:2#1`, `side#1`, `exhausted`, `count_tokens`, …).
    pub answered: String,
    /// The answering entry's label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The HTTP status sent (0: none, the request was held open).
    pub status: u16,
}

/// What the dispatcher and the request handlers share.
pub(super) struct Shared {
    pub(super) router: Mutex<Router>,
    pub(super) log: Mutex<Vec<Served>>,
    pub(super) count: AtomicU64,
    pub(super) stop: AtomicBool,
    /// Wakes held (`hang`) requests when the API stops.
    pub(super) hang: (Mutex<()>, Condvar),
    /// Where each request is logged as a JSON line (`--serve-only --log`).
    pub(super) log_file: Option<Mutex<std::fs::File>>,
}

/// Request headers never written to the log.
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "x-api-key",
    "cookie",
    "proxy-authorization",
];

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("ASCII header")
}

fn send_json(rq: Request, status: u16, body: &Value, extra: &[(&str, String)]) -> u16 {
    let data = body.to_string().into_bytes();
    let mut resp = Response::from_data(data)
        .with_status_code(status)
        .with_header(header("content-type", "application/json"));
    for (k, v) in extra {
        resp.add_header(header(k, v));
    }
    // A client that went away is no error of ours.
    let _ = rq.respond(resp);
    status
}

pub(super) fn handle(mut rq: Request, shared: &Shared) {
    let n = shared.count.fetch_add(1, Ordering::SeqCst) + 1;
    let method = rq.method().as_str().to_owned();
    let headers: serde_json::Map<String, Value> = rq
        .headers()
        .iter()
        .map(|h| {
            (
                h.field.as_str().as_str().to_ascii_lowercase(),
                h.value.as_str(),
            )
        })
        .filter(|(k, _)| !SECRET_HEADERS.contains(&k.as_str()))
        .map(|(k, v)| (k, Value::String(v.to_owned())))
        .collect();
    let path = rq.url().to_owned();
    let route = path
        .split('?')
        .next()
        .unwrap_or("")
        .trim_end_matches('/')
        .to_owned();
    let mut raw = Vec::new();
    let _ = rq.as_reader().read_to_end(&mut raw);
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let request_id = sse::fake_id("req_", &[&n.to_string()]);
    let mut rec = Served {
        n,
        method: method.clone(),
        path,
        kind: Kind::Unknown,
        answered: "other".into(),
        label: None,
        status: 200,
    };
    let body: Option<Value> = serde_json::from_str(&raw).ok();
    match (method.as_str(), route.as_str(), &body) {
        ("POST", r, Some(b)) if b.is_object() && Wire::of_post(r).is_some() => {
            let wire = Wire::of_post(r).unwrap_or(Wire::Messages);
            messages(rq, shared, wire, r, b, &raw, &request_id, &mut rec);
        }
        ("POST", r, _) if r.ends_with(":countTokens") => {
            rec.kind = Kind::CountTokens;
            rec.answered = "count_tokens".into();
            let tokens = sse::est_tokens(&raw);
            send_json(rq, 200, &json!({"totalTokens": tokens}), &[]);
        }
        ("POST", "/v1/messages/count_tokens", _) => {
            rec.kind = Kind::CountTokens;
            rec.answered = "count_tokens".into();
            let tokens = sse::est_tokens(&raw);
            send_json(rq, 200, &json!({"input_tokens": tokens}), &[]);
        }
        ("GET", "/v1/models", _) => {
            rec.kind = Kind::Models;
            rec.answered = "models".into();
            let list = json!({"data": [{"type": "model", "id": DEFAULT_MODEL,
                "display_name": "Claude Sonnet 4.5", "created_at": "2025-09-29T00:00:00Z"}],
                "has_more": false, "first_id": DEFAULT_MODEL, "last_id": DEFAULT_MODEL});
            send_json(rq, 200, &list, &[]);
        }
        _ => {
            send_json(rq, 200, &json!({}), &[]);
        }
    }
    if let Some(f) = &shared.log_file {
        use std::io::Write;
        let mut line = serde_json::to_value(&rec).unwrap_or_default();
        line["headers"] = Value::Object(headers);
        line["body"] = body.unwrap_or(Value::String(raw));
        let mut f = f.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(f, "{line}");
    }
    shared
        .log
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(rec);
}

#[allow(clippy::too_many_arguments)]
fn messages(
    rq: Request,
    shared: &Shared,
    wire: Wire,
    route: &str,
    body: &Value,
    raw: &str,
    request_id: &str,
    rec: &mut Served,
) {
    // Every API's request is routed in the Messages API's shape.
    let neutral = wire.to_messages(body, route);
    let body = &neutral;
    let req = Incoming::new(body, raw);
    let (reply, answered) = shared
        .router
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .pick(&req);
    let seed = shared
        .router
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .seed
        .clone();
    rec.kind = if req.is_main() {
        Kind::Main
    } else {
        Kind::Side
    };
    rec.answered = answered.tag();
    rec.label = reply.label.clone();
    if let Some(d) = reply.delay.filter(|d| *d > 0.0) {
        wait(shared, Duration::from_secs_f64(d.min(600.0)));
    }
    if reply.hang {
        rec.status = 0;
        // Held until the API stops (the CLI is gone by then); tiny_http then closes it.
        let (lock, cv) = &shared.hang;
        let mut g = lock.lock().unwrap_or_else(|e| e.into_inner());
        while !shared.stop.load(Ordering::SeqCst) {
            g = cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        return;
    }
    let mut headers = vec![("request-id", request_id.to_owned())];
    if let Some(status) = reply.error {
        let body = reply
            .body
            .clone()
            .unwrap_or_else(|| wire.error_body(status, request_id));
        headers.push(("x-should-retry", sse::should_retry(status).to_string()));
        if let Some(ra) = &reply.retry_after {
            let v = match ra {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            headers.push(("retry-after", v));
        }
        rec.status = send_json(rq, status, &body, &headers);
        return;
    }
    let main = req.is_main();
    // Side requests may run concurrently; their arrival number keeps their ids apart.
    let tag = answered.tag();
    let n = if main {
        String::new()
    } else {
        rec.n.to_string()
    };
    let msg_id = sse::fake_id("msg_", &[&seed, &tag, &n]);
    let content = script::content(&reply, &req, &format!("{seed}/{tag}"));
    let stop = reply.stop_reason.clone().unwrap_or_else(|| {
        let tool = content.iter().any(|b| b["type"] == "tool_use");
        if tool { "tool_use" } else { "end_turn" }.to_owned()
    });
    let model = reply
        .model
        .clone()
        .or_else(|| body.get("model").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| DEFAULT_MODEL.to_owned());
    let usage = sse::usage(main, &content, reply.usage.as_ref());
    let message = json!({"model": model, "id": msg_id, "type": "message", "role": "assistant",
        "content": content, "stop_reason": stop, "stop_sequence": null, "usage": usage});
    if wire != Wire::Messages {
        rec.status = 200;
        other_wire(rq, wire, &message, body, request_id);
        return;
    }
    if body.get("stream").and_then(Value::as_bool) != Some(true) {
        rec.status = send_json(rq, 200, &message, &headers);
        return;
    }
    rec.status = 200;
    let sse_headers = [
        ("content-type", "text/event-stream; charset=utf-8"),
        ("cache-control", "no-cache"),
        ("request-id", request_id),
    ];
    match reply.input_delay.filter(|d| *d > 0.0) {
        None => {
            let mut resp = Response::from_data(sse::events(&message));
            for (k, v) in sse_headers {
                resp.add_header(header(k, v));
            }
            // Chunked, as the API streams (no content-length).
            let _ = rq.respond(resp.with_chunked_threshold(0));
        }
        Some(d) => {
            let _ = stream_slowly(
                rq,
                &sse_headers,
                &message,
                Duration::from_secs_f64(d.min(60.0)),
                shared,
            );
        }
    }
}

/// `message` answered in the shape of `wire` (not the Messages API): its event stream when the
/// request streams, else its JSON.
fn other_wire(rq: Request, wire: Wire, message: &Value, body: &Value, request_id: &str) {
    let streams = body.get("stream").and_then(Value::as_bool) == Some(true);
    type Render = (fn(&Value) -> Value, fn(&Value) -> Vec<u8>);
    let (json_body, events): Render = match wire {
        Wire::Responses => (wire::responses::json_reply, wire::responses::events),
        Wire::Chat => (wire::chat::json_reply, wire::chat::events),
        _ => (wire::gemini::json_reply, wire::gemini::events),
    };
    let id = [("x-request-id", request_id.to_owned())];
    if !streams {
        send_json(rq, 200, &json_body(message), &id);
        return;
    }
    let mut resp = Response::from_data(events(message))
        .with_header(header("content-type", "text/event-stream"))
        .with_header(header("cache-control", "no-cache"))
        .with_header(header("x-request-id", request_id));
    resp = resp.with_chunked_threshold(0);
    let _ = rq.respond(resp);
}

/// The event stream with `delay` before each piece of tool input, each event sent at once (as
/// the API streams a long input over time). tiny_http's responses buffer a chunked body, so
/// this one response writes its head itself and its chunks through `chunked_transfer`.
fn stream_slowly(
    rq: Request,
    headers: &[(&str, &str)],
    message: &Value,
    delay: Duration,
    shared: &Shared,
) -> io::Result<()> {
    use std::io::Write;
    let mut w = rq.into_writer();
    let mut head = String::from("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    w.write_all(head.as_bytes())?;
    w.flush()?;
    let mut enc = chunked_transfer::Encoder::with_flush_after_write(&mut w);
    for e in sse::event_list(message) {
        if e.input_piece {
            wait(shared, delay);
        }
        enc.write_all(&e.bytes)?;
        enc.flush()?;
    }
    drop(enc);
    w.flush()
}

/// Sleep `d`, or less when the API stops meanwhile.
fn wait(shared: &Shared, d: Duration) {
    let until = Instant::now() + d;
    let (lock, cv) = &shared.hang;
    let mut g = lock.lock().unwrap_or_else(|e| e.into_inner());
    while !shared.stop.load(Ordering::SeqCst) {
        let now = Instant::now();
        if now >= until {
            break;
        }
        g = cv
            .wait_timeout(g, until - now)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}
