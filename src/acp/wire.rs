//! The JSON-RPC 2.0 side of ACP over stdio: one message per line on the writer it is given
//! (nothing else goes there), requests to the client with their answers routed back, and the
//! protocol's error codes.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Mutex, MutexGuard};

use serde::Serialize;
use serde_json::{Value, json};

/// JSON-RPC: the method does not exist.
pub const METHOD_NOT_FOUND: i32 = -32601;
/// JSON-RPC: invalid params.
pub const INVALID_PARAMS: i32 = -32602;
/// JSON-RPC: internal error.
pub const INTERNAL_ERROR: i32 = -32603;
/// JSON-RPC: the message is not valid JSON.
pub const PARSE_ERROR: i32 = -32700;
/// JSON-RPC: not a valid request object.
pub const INVALID_REQUEST: i32 = -32600;
/// ACP: authentication is required.
pub const AUTH_REQUIRED: i32 = -32000;
/// ACP: a resource (a session) was not found.
pub const NOT_FOUND: i32 = -32002;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The code.
    pub code: i32,
    /// What happened, for people.
    pub message: String,
    /// Details, if any.
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with `code` and `message`.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Invalid params, naming what is wrong.
    pub fn params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    /// An internal error.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }

    /// With `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    fn to_json(&self) -> Value {
        let mut e = json!({"code": self.code, "message": self.message});
        if let Some(d) = &self.data {
            e["data"] = d.clone();
        }
        e
    }
}

/// An answer from the client: its `result`, or its `error` object.
pub type Answer = Result<Value, Value>;

/// The agent's end of the connection: every write is one whole line, and requests it sends
/// wait for their answers on a channel.
pub struct Wire {
    out: Mutex<Box<dyn Write + Send>>,
    next_id: AtomicI64,
    pending: Mutex<HashMap<i64, Sender<Answer>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Wire {
    /// A connection writing to `out` (flushed after every message).
    pub fn new(out: Box<dyn Write + Send>) -> Self {
        Wire {
            out: Mutex::new(out),
            next_id: AtomicI64::new(0),
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// Write one message.
    pub fn send(&self, msg: &Value) -> io::Result<()> {
        let mut line = serde_json::to_vec(msg).map_err(io::Error::other)?;
        line.push(b'\n');
        let mut w = lock(&self.out);
        w.write_all(&line)?;
        w.flush()
    }

    /// A notification.
    pub fn notify(&self, method: &str, params: &impl Serialize) -> io::Result<()> {
        let params = serde_json::to_value(params).map_err(io::Error::other)?;
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    /// The answer to request `id`.
    pub fn respond(&self, id: &Value, res: Result<Value, RpcError>) -> io::Result<()> {
        match res {
            Ok(result) => self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result})),
            Err(e) => self.send(&json!({"jsonrpc": "2.0", "id": id, "error": e.to_json()})),
        }
    }

    /// Send a request to the client: its id, and where its answer arrives.
    pub fn request(
        &self,
        method: &str,
        params: &impl Serialize,
    ) -> io::Result<(i64, Receiver<Answer>)> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = channel();
        lock(&self.pending).insert(id, tx);
        let params = serde_json::to_value(params).map_err(io::Error::other)?;
        let sent =
            self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        if let Err(e) = sent {
            lock(&self.pending).remove(&id);
            return Err(e);
        }
        Ok((id, rx))
    }

    /// Route an answer from the client (`id`: the id of one of our requests); false when no
    /// request of ours waits for it.
    pub fn answered(&self, id: &Value, answer: Answer) -> bool {
        let Some(n) = id.as_i64() else { return false };
        match lock(&self.pending).remove(&n) {
            Some(tx) => {
                let _ = tx.send(answer);
                true
            }
            None => false,
        }
    }

    /// Forget every request still waiting (the client is gone): their receivers see the end.
    pub fn abandon(&self) {
        lock(&self.pending).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            lock(&self.0).extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn one_line_per_message_and_answers_routed() {
        let buf = Buf::default();
        let w = Wire::new(Box::new(buf.clone()));
        w.notify("session/update", &json!({"a": "x\ny"})).unwrap();
        let (id, rx) = w.request("session/request_permission", &json!({})).unwrap();
        w.respond(&json!(7), Err(RpcError::params("missing field `cwd`")))
            .unwrap();
        let text = String::from_utf8(lock(&buf.0).clone()).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[1]["id"], json!(id));
        assert_eq!(lines[2]["error"]["code"], json!(INVALID_PARAMS));
        assert!(!w.answered(&json!(id + 1), Ok(json!({}))));
        assert!(w.answered(&json!(id), Ok(json!({"ok": 1}))));
        assert_eq!(rx.recv().unwrap(), Ok(json!({"ok": 1})));
    }
}
