//! `acp`: Claude Code as an Agent Client Protocol (v1) agent: JSON-RPC on stdin/stdout, one
//! long-lived supervised `claude` per session, its output through the one pipeline.
//!
//! - [`wire`]: JSON-RPC lines, requests to the client and their answers;
//! - [`session`]: a session's CLI (supervised as `spawn` supervises), prompt, cancel,
//!   permissions, restart, its transcript on disk;
//! - [`modes`]: the modes and models a session offers;
//! - [`tees`]: the outputs besides ACP (`--audit`, `--envelope`, `--otlp-endpoint`);
//! - [`updates`]: envelope events → `session/update` (a [`Sink`](crate::sink::Sink));
//! - [`prompt`]: ACP content → the stream-json user message;
//! - [`tool`]: what a tool call means to a client (to be replaced by the envelope's own fields).
//!
//! [`serve`] is the whole agent: it reads requests until the client closes stdin, then stops
//! every session's CLI and waits until no process of theirs is left.

pub mod modes;
pub mod prompt;
pub mod session;
pub mod tees;
pub mod tool;
pub mod updates;
pub mod wire;

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{self, BufRead, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::{
    AgentCapabilities, CancelNotification, CloseSessionRequest, Implementation, InitializeRequest,
    InitializeResponse, ListSessionsRequest, ListSessionsResponse, LoadSessionRequest,
    McpCapabilities, McpServer, NewSessionRequest, PromptCapabilities, PromptRequest,
    ResumeSessionRequest, SessionCapabilities, SessionCloseCapabilities, SessionInfo,
    SessionListCapabilities, SessionResumeCapabilities, SetSessionConfigOptionRequest,
    SetSessionModeRequest,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::error::Error;
use crate::normalize::NormalizeOptions;
use crate::pipeline::setup::Setup;
use crate::spawn::Limits;
use crate::spawn::guard::GuardConfig;
use modes::{MODELS, config_options, mode_state};
use session::Session;
use wire::{METHOD_NOT_FOUND, PARSE_ERROR, RpcError, Wire};

/// Everything the agent needs, decided by the command line.
pub struct Config {
    /// `--claude-bin` (`None`: `claude` on `PATH`).
    pub claude_bin: Option<OsString>,
    /// claude's own arguments.
    pub claude_args: Vec<OsString>,
    /// The CLI's whole environment.
    pub env: Vec<(OsString, OsString)>,
    /// Guards over every session's run.
    pub guards: GuardConfig,
    /// Timeouts and stopping (per session).
    pub limits: Limits,
    /// `--redact` (its outputs are in [`Config::tees`]).
    pub setup: Setup,
    /// Normalizer options.
    pub envelope: NormalizeOptions,
    /// How long a cancelled prompt waits for the CLI to confirm before it returns `cancelled`.
    pub cancel_wait: Duration,
    /// Where logs go (stderr).
    pub log: Mutex<Box<dyn Write + Send>>,
    /// The outputs besides ACP (`--audit`, `--envelope`, `--otlp-endpoint`), opened once for
    /// every session.
    pub tees: tees::Tees,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Config {
    /// Log `msg` as `boo-normalize: acp: msg`.
    pub fn log(&self, msg: &str) {
        let _ = writeln!(lock(&self.log), "boo-normalize: acp: {msg}");
    }

    /// Log a line as it is.
    pub fn log_raw(&self, line: &str) {
        let _ = writeln!(lock(&self.log), "{line}");
    }
}

/// The agent: sessions by id.
struct Server {
    wire: Arc<Wire>,
    cfg: Arc<Config>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
}

fn parse<T: DeserializeOwned>(params: &Value) -> Result<T, RpcError> {
    serde_json::from_value(params.clone())
        .map_err(|e| RpcError::params(format!("invalid params: {e}")))
}

/// The client's MCP servers as claude's `--mcp-config` JSON (`None`: none).
pub fn mcp_config(servers: &[McpServer]) -> Option<String> {
    let mut map = serde_json::Map::new();
    for s in servers {
        match s {
            McpServer::Stdio(s) => {
                let env: serde_json::Map<String, Value> = s
                    .env
                    .iter()
                    .map(|e| (e.name.clone(), json!(e.value)))
                    .collect();
                map.insert(
                    s.name.clone(),
                    json!({"type": "stdio", "command": s.command, "args": s.args, "env": env}),
                );
            }
            McpServer::Http(s) => {
                let h = headers(&s.headers);
                map.insert(
                    s.name.clone(),
                    json!({"type": "http", "url": s.url, "headers": h}),
                );
            }
            McpServer::Sse(s) => {
                let h = headers(&s.headers);
                map.insert(
                    s.name.clone(),
                    json!({"type": "sse", "url": s.url, "headers": h}),
                );
            }
            _ => {}
        }
    }
    (!map.is_empty()).then(|| json!({"mcpServers": map}).to_string())
}

impl Server {
    fn session(&self, id: &str) -> Result<Arc<Session>, RpcError> {
        lock(&self.sessions)
            .get(id)
            .cloned()
            .ok_or_else(|| RpcError::params(format!("sessionId: no session {id:?}")))
    }

    fn initialize(&self, params: &Value) -> Result<Value, RpcError> {
        let req: InitializeRequest = parse(params)?;
        let version = req.protocol_version.min(ProtocolVersion::V1);
        let caps = AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
            .mcp_capabilities(McpCapabilities::new().http(true).sse(true))
            .session_capabilities(
                SessionCapabilities::new()
                    .list(SessionListCapabilities::new())
                    .resume(SessionResumeCapabilities::new())
                    .close(SessionCloseCapabilities::new()),
            );
        let res = InitializeResponse::new(version)
            .agent_capabilities(caps)
            .auth_methods(Vec::new())
            .agent_info(
                Implementation::new("boo-normalize", env!("CARGO_PKG_VERSION"))
                    .title("Claude Code (boo-normalize acp)".to_owned()),
            );
        serde_json::to_value(res).map_err(|e| RpcError::internal(e.to_string()))
    }

    fn open(
        &self,
        id: String,
        cwd: PathBuf,
        mcp: &[McpServer],
        resume: bool,
    ) -> Result<Arc<Session>, RpcError> {
        if !cwd.is_absolute() {
            return Err(RpcError::params("cwd: must be an absolute path"));
        }
        if !cwd.is_dir() {
            return Err(RpcError::params(format!(
                "cwd: {} is not a directory",
                cwd.display()
            )));
        }
        let s = Session::new(
            id.clone(),
            cwd,
            mcp_config(mcp),
            resume,
            self.wire.clone(),
            self.cfg.clone(),
        );
        s.ensure_started()?;
        lock(&self.sessions).insert(id, s.clone());
        Ok(s)
    }

    fn session_state(&self, s: &Session) -> (Value, Value) {
        let model = s.model().unwrap_or_else(|| "default".into());
        (
            serde_json::to_value(mode_state(&s.mode())).unwrap_or_default(),
            serde_json::to_value(config_options(&s.mode(), &model)).unwrap_or_default(),
        )
    }

    fn new_session(&self, params: &Value) -> Result<Value, RpcError> {
        let req: NewSessionRequest = parse(params)?;
        let id = uuid::Uuid::now_v7().to_string();
        let s = self.open(id.clone(), req.cwd, &req.mcp_servers, false)?;
        let (modes, options) = self.session_state(&s);
        Ok(json!({"sessionId": id, "modes": modes, "configOptions": options}))
    }

    fn load_session(&self, params: &Value) -> Result<Value, RpcError> {
        let req: LoadSessionRequest = parse(params)?;
        let id = req.session_id.0.to_string();
        if uuid::Uuid::parse_str(&id).is_err() {
            return Err(RpcError::params(
                "sessionId: not a Claude Code session id (a UUID)",
            ));
        }
        if lock(&self.sessions).contains_key(&id) {
            return Err(RpcError::params(format!(
                "sessionId: session {id} is already open"
            )));
        }
        if !req.cwd.is_absolute() {
            return Err(RpcError::params("cwd: must be an absolute path"));
        }
        let s = Session::new(
            id.clone(),
            req.cwd,
            mcp_config(&req.mcp_servers),
            true,
            self.wire.clone(),
            self.cfg.clone(),
        );
        // The whole conversation first, then the answer (and the CLI resuming it).
        s.replay()?;
        s.ensure_started()?;
        lock(&self.sessions).insert(id, s.clone());
        let (modes, options) = self.session_state(&s);
        Ok(json!({"modes": modes, "configOptions": options}))
    }

    fn resume_session(&self, params: &Value) -> Result<Value, RpcError> {
        let req: ResumeSessionRequest = parse(params)?;
        let id = req.session_id.0.to_string();
        if uuid::Uuid::parse_str(&id).is_err() {
            return Err(RpcError::params(
                "sessionId: not a Claude Code session id (a UUID)",
            ));
        }
        let s = match self.session(&id) {
            Ok(s) => s,
            Err(_) => self.open(id, req.cwd, &req.mcp_servers, true)?,
        };
        let (modes, options) = self.session_state(&s);
        Ok(json!({"modes": modes, "configOptions": options}))
    }

    fn prompt(&self, params: &Value) -> Result<Value, RpcError> {
        let req: PromptRequest = parse(params)?;
        let s = self.session(&req.session_id.0)?;
        let stop = s.prompt(&req.prompt)?;
        Ok(json!({"stopReason": stop}))
    }

    fn set_config_option(&self, params: &Value) -> Result<Value, RpcError> {
        let req: SetSessionConfigOptionRequest = parse(params)?;
        let s = self.session(&req.session_id.0)?;
        let Some(value) = req.value.as_value_id().map(|v| v.0.to_string()) else {
            return Err(RpcError::params("value: a value id is expected"));
        };
        match &*req.config_id.0 {
            "mode" => s.set_mode(&value)?,
            "model" if MODELS.contains(&value.as_str()) || !value.is_empty() => s.set_model(&value),
            other => {
                return Err(RpcError::params(format!(
                    "configId: unknown option {other:?}"
                )));
            }
        }
        let (_, options) = self.session_state(&s);
        Ok(json!({"configOptions": options}))
    }

    /// `session/list`: this process's sessions, then those the CLI keeps on disk (for the
    /// `cwd` asked, else every one), most recent first, each once.
    fn list(&self, params: &Value) -> Result<Value, RpcError> {
        let req: ListSessionsRequest = parse(params)?;
        if let Some(c) = &req.cwd
            && !c.is_absolute()
        {
            return Err(RpcError::params("cwd: must be an absolute path"));
        }
        let mut sessions: Vec<SessionInfo> = lock(&self.sessions)
            .values()
            .filter(|s| req.cwd.as_ref().is_none_or(|c| *c == s.cwd))
            .map(|s| SessionInfo::new(s.id.clone(), s.cwd.clone()))
            .collect();
        for s in session::history::on_disk(&self.cfg, req.cwd.as_deref()) {
            if !sessions.iter().any(|o| o.session_id == s.session_id) {
                sessions.push(s);
            }
        }
        serde_json::to_value(ListSessionsResponse::new(sessions))
            .map_err(|e| RpcError::internal(e.to_string()))
    }

    /// A request (`id` set) or notification; the answer of a request is written here.
    fn dispatch(self: &Arc<Self>, method: &str, params: Value, id: Option<Value>) {
        // Requests that wait for the CLI run on a thread of their own, so that the loop keeps
        // reading (a cancel, a permission answer).
        let slow = matches!(
            method,
            "session/new"
                | "session/prompt"
                | "session/resume"
                | "session/load"
                | "session/close"
                | "session/list"
        );
        if slow {
            let me = self.clone();
            let method = method.to_owned();
            let spawned = thread::Builder::new()
                .name("acp-request".into())
                .spawn(move || me.answer(&method, &params, id));
            if let Err(e) = spawned {
                self.cfg.log(&format!("thread: {e}"));
            }
        } else {
            self.answer(method, &params, id);
        }
    }

    fn answer(&self, method: &str, params: &Value, id: Option<Value>) {
        let res = match method {
            "initialize" => self.initialize(params),
            "authenticate" => Err(RpcError::params(
                "methodId: this agent offers no authentication method; log in with `claude /login` or set the provider's variables",
            )),
            "session/new" => self.new_session(params),
            "session/resume" => self.resume_session(params),
            "session/load" => self.load_session(params),
            "session/prompt" => self.prompt(params),
            "session/cancel" => {
                if let Ok(n) = parse::<CancelNotification>(params)
                    && let Ok(s) = self.session(&n.session_id.0)
                {
                    s.cancel();
                }
                Ok(Value::Null)
            }
            "session/set_mode" => parse::<SetSessionModeRequest>(params).and_then(|r| {
                self.session(&r.session_id.0)?.set_mode(&r.mode_id.0)?;
                Ok(json!({}))
            }),
            "session/set_config_option" => self.set_config_option(params),
            "session/set_model" => {
                let sid = params.get("sessionId").and_then(Value::as_str);
                let model = params.get("modelId").and_then(Value::as_str);
                match (sid, model) {
                    (None, _) => Err(RpcError::params("sessionId: missing")),
                    (_, None) => Err(RpcError::params("modelId: missing")),
                    (Some(sid), Some(m)) => self.session(sid).map(|s| {
                        s.set_model(m);
                        json!({})
                    }),
                }
            }
            "session/list" => self.list(params),
            "session/close" => parse::<CloseSessionRequest>(params).and_then(|r| {
                let s = self.session(&r.session_id.0)?;
                lock(&self.sessions).remove(&*r.session_id.0);
                s.close();
                s.join();
                Ok(json!({}))
            }),
            _ => Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("method not found: {method}"),
            )),
        };
        if let Some(id) = id {
            let res = res.map(|v| if v.is_null() { json!({}) } else { v });
            if let Err(e) = self.wire.respond(&id, res) {
                self.cfg.log(&format!("stdout: {e}"));
            }
        }
    }

    fn line(self: &Arc<Self>, line: &[u8]) {
        let msg: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                let _ = self.wire.respond(
                    &Value::Null,
                    Err(RpcError::new(PARSE_ERROR, format!("parse error: {e}"))),
                );
                return;
            }
        };
        let id = msg.get("id").cloned();
        match msg.get("method").and_then(Value::as_str) {
            Some(m) => {
                let params = msg.get("params").cloned().unwrap_or(json!({}));
                self.dispatch(m, params, id);
            }
            None => {
                let answer = match (msg.get("result"), msg.get("error")) {
                    (Some(r), _) => Ok(r.clone()),
                    (None, Some(e)) => Err(e.clone()),
                    (None, None) => {
                        let _ = self.wire.respond(
                            &id.unwrap_or(Value::Null),
                            Err(RpcError::new(
                                wire::INVALID_REQUEST,
                                "invalid request: no method",
                            )),
                        );
                        return;
                    }
                };
                if let Some(id) = id {
                    self.wire.answered(&id, answer);
                }
            }
        }
    }

    /// Stop every session's CLI and wait for their supervisors.
    fn shutdown(&self) {
        let all: Vec<Arc<Session>> = lock(&self.sessions).drain().map(|(_, s)| s).collect();
        for s in &all {
            s.close();
        }
        self.wire.abandon();
        for s in &all {
            s.join();
        }
        // What left the sessions' process groups and outlived them.
        crate::spawn::supervise::cleanup(self.cfg.limits.grace);
    }
}

/// Serve ACP on `input` and `output` until the client closes `input` (or a signal to the
/// process: `SIGINT`, `SIGTERM`, `SIGHUP`), then stop every session's CLI and its processes.
pub fn serve(
    cfg: Config,
    input: impl io::Read,
    output: Box<dyn Write + Send>,
) -> Result<(), Error> {
    let server = Arc::new(Server {
        wire: Arc::new(Wire::new(output)),
        cfg: Arc::new(cfg),
        sessions: Mutex::new(HashMap::new()),
    });
    {
        let me = server.clone();
        let mut signals = signal_hook::iterator::Signals::new([
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
        ])
        .map_err(|e| Error::io("acp: signals", e))?;
        thread::Builder::new()
            .name("acp-signals".into())
            .spawn(move || {
                if let Some(sig) = signals.forever().next() {
                    me.shutdown();
                    std::process::exit(128 + sig);
                }
            })
            .map_err(|e| Error::io("acp: thread", e))?;
    }
    thread::Builder::new()
        .name("acp-guardian".into())
        .spawn(|| {
            // The process the client started was killed: the run's processes are being
            // killed by the guardian watcher; this process has nothing left to serve.
            while !crate::spawn::guardian::guardian_gone() {
                thread::sleep(Duration::from_millis(50));
            }
            thread::sleep(Duration::from_millis(300));
            std::process::exit(137);
        })
        .map_err(|e| Error::io("acp: thread", e))?;
    let mut r = io::BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {
                let l = line.trim_ascii();
                if !l.is_empty() {
                    server.line(l);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                server.cfg.log(&format!("stdin: {e}"));
                break;
            }
        }
    }
    server.shutdown();
    Ok(())
}

/// A client MCP server's headers as the CLI's `--mcp-config` takes them (name to value).
fn headers(
    list: &[agent_client_protocol_schema::v1::HttpHeader],
) -> serde_json::Map<String, Value> {
    list.iter()
        .map(|h| (h.name.clone(), json!(h.value)))
        .collect()
}
