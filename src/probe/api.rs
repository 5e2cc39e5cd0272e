//! The built-in loopback Messages API: a `tiny_http` server on 127.0.0.1 (an ephemeral port)
//! that answers `POST /v1/messages` from a scenario's script (SSE when the request streams, JSON
//! otherwise, or an API error), `count_tokens` and the model list, logs every request and
//! answers unknown ones with `200 {}`, and releases its port when finished.
//! How each request is answered is in [`super::answer`].

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use tiny_http::Server;

pub use super::answer::{Kind, Served};
use super::answer::{Shared, handle};
use super::scenario::Scenario;
use super::script::Router;

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
