//! The built-in loopback Messages API: a `tiny_http` server on 127.0.0.1 (an ephemeral port)
//! that answers `POST /v1/messages` from a scenario's script (SSE when the request streams, JSON
//! otherwise, or an API error), `count_tokens` and the model list, logs every request and
//! answers unknown ones with `200 {}`, and releases its port when finished.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};
use tiny_http::{Header, Request, Response, Server};

use super::scenario::Scenario;
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

struct Shared {
    router: Mutex<Router>,
    log: Mutex<Vec<Served>>,
    count: AtomicU64,
    stop: AtomicBool,
    /// Wakes held (`hang`) requests when the API stops.
    hang: (Mutex<()>, Condvar),
    /// Where each request is logged as a JSON line (`--serve-only --log`).
    log_file: Option<Mutex<std::fs::File>>,
}

/// Request headers never written to the log.
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "x-api-key",
    "cookie",
    "proxy-authorization",
];

/// A running API. Dropping it stops it as [`Api::finish`] does (a test that panics leaks no
/// handler thread and no port).
pub struct Api {
    /// `None` once stopped.
    server: Option<Arc<Server>>,
    addr: SocketAddr,
    shared: Arc<Shared>,
    dispatcher: Option<JoinHandle<Vec<JoinHandle<()>>>>,
}

/// What the API saw, once finished.
#[derive(Debug, Clone)]
pub struct Finished {
    /// Every request, in arrival order.
    pub served: Vec<Served>,
    /// Scripted replies never used (their labels).
    pub unused: Vec<String>,
    /// Whether the port could be bound again afterwards (it was released).
    pub port_released: bool,
}

impl Api {
    /// Serve `scenario`'s script on 127.0.0.1, on a port the system picks.
    pub fn start(scenario: &Scenario) -> io::Result<Api> {
        Api::start_logged(scenario, None)
    }

    /// [`Api::start`], logging each request to `log` as one JSON line (`n`, `method`, `path`,
    /// `kind`, `answered`, `label`, `status`, `headers` without credentials, `body`).
    pub fn start_logged(scenario: &Scenario, log: Option<std::fs::File>) -> io::Result<Api> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let addr = listener.local_addr()?;
        let server = Server::from_listener(listener, None).map_err(io::Error::other)?;
        let server = Arc::new(server);
        let shared = Arc::new(Shared {
            router: Mutex::new(Router::new(scenario)),
            log: Mutex::new(Vec::new()),
            count: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            hang: (Mutex::new(()), Condvar::new()),
            log_file: log.map(Mutex::new),
        });
        let (srv, sh) = (server.clone(), shared.clone());
        let dispatcher = thread::Builder::new()
            .name("probe-api".into())
            .spawn(move || dispatch(&srv, &sh))?;
        Ok(Api {
            server: Some(server),
            addr,
            shared,
            dispatcher: Some(dispatcher),
        })
    }

    /// The base URL for `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Stop serving: held requests are dropped, handler threads joined, the port released.
    pub fn finish(mut self) -> Finished {
        self.stop();
        let port = self.addr.port();
        let mut served =
            std::mem::take(&mut *self.shared.log.lock().unwrap_or_else(|e| e.into_inner()));
        served.sort_by_key(|s| s.n);
        let unused = self
            .shared
            .router
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .unused();
        Finished {
            served,
            unused,
            port_released: port_free(port),
        }
    }
}

impl Api {
    /// Stop serving (once): held requests woken, the dispatcher and handler threads joined, the
    /// server dropped (the port released).
    fn stop(&mut self) {
        let Some(server) = self.server.take() else {
            return;
        };
        self.shared.stop.store(true, Ordering::SeqCst);
        server.unblock();
        {
            let _g = self.shared.hang.0.lock().unwrap_or_else(|e| e.into_inner());
            self.shared.hang.1.notify_all();
        }
        if let Some(d) = self.dispatcher.take()
            && let Ok(handlers) = d.join()
        {
            for h in handlers {
                let _ = h.join();
            }
        }
        drop(server);
    }
}

impl Drop for Api {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Whether `port` can be bound again within a second (the accept thread closes the listener
/// shortly after the server is dropped).
fn port_free(port: u16) -> bool {
    let until = Instant::now() + Duration::from_secs(1);
    loop {
        if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Take requests until stopped, one thread each (a held request must not block the others);
/// returns the handler threads.
fn dispatch(server: &Server, shared: &Arc<Shared>) -> Vec<JoinHandle<()>> {
    let mut handlers = Vec::new();
    while !shared.stop.load(Ordering::SeqCst) {
        match server.recv_timeout(Duration::from_millis(100)) {
            Ok(Some(rq)) => {
                let sh = shared.clone();
                match thread::Builder::new()
                    .name("probe-req".into())
                    .spawn(move || handle(rq, &sh))
                {
                    Ok(h) => handlers.push(h),
                    Err(_) => continue,
                }
                handlers.retain(|h| !h.is_finished());
            }
            Ok(None) => {}
            Err(_) => break,
        }
    }
    handlers
}

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

fn handle(mut rq: Request, shared: &Shared) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::scenario::parse_file;
    use std::io::{Read, Write};
    use std::net::TcpStream;

    fn request(port: u16, text: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(text.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    fn post(port: u16, path: &str, body: &str) -> String {
        request(
            port,
            &format!(
                "POST {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            ),
        )
    }

    #[test]
    fn serves_the_script_and_logs_everything() {
        let sc = parse_file(
            r#"{"name": "t", "prompt": "p", "responses": [
                {"label": "err", "error": 500, "retry_after": 0},
                {"label": "ok", "content": [{"type": "text", "text": "hello there"}]},
                {"label": "never", "content": []}]}"#,
        )
        .unwrap();
        let api = Api::start(&sc[0].scenario).unwrap();
        let port = api.port();
        let main = r#"{"model": "m", "stream": true, "tools": [{"name": "Bash"}], "messages": [{"role": "user", "content": "hi"}]}"#;
        let r = post(port, "/v1/messages?beta=true", main);
        assert!(r.starts_with("HTTP/1.1 500"), "{r}");
        assert!(
            r.contains("retry-after: 0") || r.contains("Retry-After: 0"),
            "{r}"
        );
        assert!(r.contains("\"api_error\""), "{r}");
        let r = post(port, "/v1/messages?beta=true", main);
        assert!(
            r.contains("event: message_start") && r.contains("event: message_stop"),
            "{r}"
        );
        let r = post(
            port,
            "/v1/messages",
            r#"{"model": "haiku", "messages": []}"#,
        );
        assert!(r.contains("\"text\":\"OK\""), "{r}");
        let r = post(port, "/v1/messages/count_tokens", "{}");
        assert!(r.contains("input_tokens"), "{r}");
        let r = request(
            port,
            "GET /v1/models HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        );
        assert!(r.contains("\"data\""), "{r}");
        let r = request(
            port,
            "GET /v1/whatever HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        );
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        let done = api.finish();
        let kinds: Vec<Kind> = done.served.iter().map(|s| s.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::Main,
                Kind::Main,
                Kind::Side,
                Kind::CountTokens,
                Kind::Models,
                Kind::Unknown
            ]
        );
        assert_eq!(done.served[0].status, 500);
        assert_eq!(done.unused, ["never"]);
        assert!(done.port_released);
    }

    #[test]
    fn tool_input_streams_slowly_with_input_delay() {
        let sc = parse_file(
            r#"{"name": "d", "prompt": "p", "responses": [{"input_delay": 0.1,
                "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "echo a fairly long command"}}]}]}"#,
        )
        .unwrap();
        let api = Api::start(&sc[0].scenario).unwrap();
        let started = Instant::now();
        let r = post(
            api.port(),
            "/v1/messages",
            r#"{"stream": true, "tools": [{"name": "Bash"}], "messages": []}"#,
        );
        // An empty first fragment and 12-character slices of 43 characters: 5 pieces.
        assert!(started.elapsed() >= Duration::from_millis(500), "{r}");
        assert!(
            r.starts_with("HTTP/1.1 200") && r.contains("transfer-encoding: chunked"),
            "{r}"
        );
        assert!(
            r.contains("input_json_delta") && r.contains("event: message_stop"),
            "{r}"
        );
        assert!(r.ends_with("0\r\n\r\n"), "{r}");
        api.finish();
    }

    /// An API whose one answer hangs, its port, and a client thread whose request it holds.
    fn held() -> (Api, u16, thread::JoinHandle<String>) {
        let sc =
            parse_file(r#"{"name": "h", "prompt": "p", "responses": [{"hang": true}]}"#).unwrap();
        let api = Api::start(&sc[0].scenario).unwrap();
        let port = api.port();
        let t = thread::spawn(move || {
            post(
                port,
                "/v1/messages",
                r#"{"tools": [{"name": "Bash"}], "messages": []}"#,
            )
        });
        thread::sleep(Duration::from_millis(300));
        (api, port, t)
    }

    #[test]
    fn a_held_request_is_let_go_when_the_api_stops() {
        let (api, _, t) = held();
        let started = Instant::now();
        let done = api.finish();
        assert!(started.elapsed() < Duration::from_secs(3));
        // Let go unanswered: tiny_http closes it with an empty 500.
        let r = t.join().unwrap();
        assert!(r.is_empty() || r.starts_with("HTTP/1.1 500"), "{r}");
        assert_eq!(done.served[0].status, 0);
        assert!(done.port_released);
    }

    /// A test that panics while its API serves (a held request in flight) drops the API
    /// unfinished: the drop stops it, lets the request go, joins its threads and frees the port.
    #[test]
    fn dropping_an_api_stops_it() {
        let (api, port, t) = held();
        let shared = Arc::downgrade(&api.shared);
        let panicked = thread::spawn(move || {
            let _api = api;
            panic!("a failing test");
        })
        .join();
        assert!(panicked.is_err());
        // The handler and dispatcher threads are gone: nothing holds the shared state.
        assert!(
            shared.upgrade().is_none(),
            "a thread of the API is still running"
        );
        let r = t.join().unwrap();
        assert!(r.is_empty() || r.starts_with("HTTP/1.1 500"), "{r}");
        assert!(port_free(port), "the port is free again");
    }
}
