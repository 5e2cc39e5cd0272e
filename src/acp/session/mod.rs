//! One ACP session: the prompt turn that waits for its stop reason, cancel, the mode and
//! model, closing. Its long-lived `claude` is [`child`] (supervised, restarted with
//! `--resume`), the CLI's permission requests [`permission`], its transcript on disk
//! [`history`] (`session/load`, `session/list`).

mod child;
pub mod history;
mod permission;

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Instant;

use agent_client_protocol_schema::v1::{
    ConfigOptionUpdate, ContentBlock, CurrentModeUpdate, SessionNotification, SessionUpdate,
    StopReason,
};
use serde_json::{Value, json};

use super::Config;
use super::modes::{MODES, config_options};
use super::updates::Listener;
use super::wire::{AUTH_REQUIRED, RpcError, Wire};
use crate::spawn::child::Attach;
use crate::spawn::procs;
use permission::{Pending, deny};

/// A prompt turn in progress.
#[derive(Default)]
struct Turn {
    /// When `session/cancel` came.
    cancelled_at: Option<Instant>,
    /// How it ended, once it has.
    done: Option<Result<StopReason, RpcError>>,
    /// The CLI said authentication failed during the turn.
    auth_failed: bool,
}

/// The tool inputs of the CLI's `can_use_tool` requests as the CLI wrote them (before
/// `--redact`), by request id: an allow must give the CLI its own input back.
type RawInputs = Arc<Mutex<HashMap<String, Value>>>;

#[derive(Default)]
struct State {
    /// The running CLI's stdin and pid (`None`: not running).
    child: Option<Attach>,
    /// Which CLI run this is (events of an older run are ignored).
    generation: u64,
    /// The CLI has run with this session id: a new one resumes it.
    started: bool,
    /// The CLI's own session id, once it said it (it may differ from ours).
    claude_id: Option<String>,
    /// The CLI was restarted with none of the conversation to resume: the next prompt fails
    /// saying so (the one after goes on in the new conversation).
    lost: bool,
    /// User messages written whose `result` has not come yet.
    outstanding: u32,
    turn: Option<Turn>,
    stderr_tail: VecDeque<String>,
    /// `can_use_tool` control requests not answered yet, by request id.
    perms: HashMap<String, Pending>,
    mode: String,
    model: Option<String>,
    closed: bool,
    threads: Vec<JoinHandle<()>>,
}

impl State {
    /// The CLI's last stderr lines, joined.
    fn stderr_text(&self) -> String {
        self.stderr_tail
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// One session.
pub struct Session {
    /// The session id (also the CLI's `--session-id`).
    pub id: String,
    /// Its working directory.
    pub cwd: PathBuf,
    /// `--mcp-config` JSON from the client's MCP servers.
    mcp_config: Option<String>,
    wire: Arc<Wire>,
    cfg: Arc<Config>,
    st: Mutex<State>,
    cv: Condvar,
    control_seq: AtomicU64,
    raw_inputs: RawInputs,
    /// The session's prompts so far, across its CLI runs (one OTLP trace each).
    turns: Arc<AtomicU32>,
    /// The session's run in the `--audit` log.
    audit: Option<Arc<crate::sink::audit::runs::Run>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Session {
    /// A session (its CLI not started yet).
    pub fn new(
        id: String,
        cwd: PathBuf,
        mcp_config: Option<String>,
        resume: bool,
        wire: Arc<Wire>,
        cfg: Arc<Config>,
    ) -> Arc<Session> {
        Arc::new(Session {
            cwd,
            mcp_config,
            wire,
            st: Mutex::new(State {
                started: resume,
                mode: "default".into(),
                ..Default::default()
            }),
            cv: Condvar::new(),
            control_seq: AtomicU64::new(0),
            raw_inputs: Arc::default(),
            turns: Arc::default(),
            audit: cfg.tees.audit_run(&id),
            id,
            cfg,
        })
    }

    /// The current permission mode.
    pub fn mode(&self) -> String {
        lock(&self.st).mode.clone()
    }

    /// The current model (`None`: the CLI's default).
    pub fn model(&self) -> Option<String> {
        lock(&self.st).model.clone()
    }

    /// Send a session update.
    pub fn update(&self, u: SessionUpdate, meta: Option<serde_json::Map<String, Value>>) {
        let n = SessionNotification::new(self.id.clone(), u).meta(meta);
        if let Err(e) = self.wire.notify("session/update", &n) {
            self.cfg.log(&format!("stdout: {e}"));
        }
    }

    /// `session/prompt`: send the prompt, wait for its stop reason.
    pub fn prompt(self: &Arc<Self>, prompt: &[ContentBlock]) -> Result<StopReason, RpcError> {
        self.ensure_started()?;
        {
            let mut st = lock(&self.st);
            if std::mem::take(&mut st.lost) {
                return Err(RpcError::internal(format!(
                    "boo-normalize: acp: claude ended before it saved any of session {}'s conversation: there is nothing to resume, so this prompt was not sent; the session goes on as a new conversation (send the prompt again)",
                    self.id
                ))
                .with_data(json!({"conversationLost": true})));
            }
            if st.turn.is_some() {
                return Err(RpcError::params(
                    "sessionId: a prompt is already running in this session",
                ));
            }
            st.turn = Some(Turn::default());
            st.outstanding += 1;
            st.started = true;
        }
        if let Err(e) = self.write_line(&super::prompt::user_line(prompt, &self.id)) {
            let mut st = lock(&self.st);
            st.turn = None;
            st.outstanding = st.outstanding.saturating_sub(1);
            return Err(RpcError::internal(format!(
                "boo-normalize: acp: claude stdin: {e}"
            )));
        }
        let mut st = lock(&self.st);
        loop {
            let Some(t) = st.turn.as_mut() else {
                return Ok(StopReason::Cancelled);
            };
            if let Some(done) = t.done.take() {
                st.turn = None;
                return done;
            }
            match t.cancelled_at {
                Some(at) => {
                    let deadline = at + self.cfg.cancel_wait;
                    let now = Instant::now();
                    if now >= deadline {
                        // The CLI did not confirm in time: the prompt is over anyway, and
                        // the interrupted turn's result, when it comes, is not this one's.
                        st.turn = None;
                        return Ok(StopReason::Cancelled);
                    }
                    st = self
                        .cv
                        .wait_timeout(st, deadline - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
                None => st = self.cv.wait(st).unwrap_or_else(|e| e.into_inner()),
            }
        }
    }

    /// A `turn.end` of CLI run `generation`: how it ended, as the run's own event says.
    pub fn turn_ended(&self, generation: u64, stop: Result<StopReason, RpcError>) {
        let mut st = lock(&self.st);
        if st.generation != generation {
            return;
        }
        st.outstanding = st.outstanding.saturating_sub(1);
        if st.outstanding > 0 {
            // The result of a turn cancelled earlier: not the running prompt's.
            return;
        }
        if let Some(t) = st.turn.as_mut()
            && t.done.is_none()
        {
            t.done = Some(match (t.cancelled_at, t.auth_failed, stop) {
                (Some(_), _, _) => Ok(StopReason::Cancelled),
                (None, true, Ok(_) | Err(_)) => Err(RpcError::new(
                    AUTH_REQUIRED,
                    "Authentication required: claude's API login failed (run `claude /login`, or set the API key in the agent server's environment)",
                )),
                (None, false, s) => s,
            });
        }
        self.cv.notify_all();
    }

    /// The CLI's own session id (from its init line), for `--resume` after a restart.
    pub fn claude_session(&self, id: &str) {
        let mut st = lock(&self.st);
        if st.claude_id.as_deref() != Some(id) {
            st.claude_id = Some(id.to_owned());
        }
    }

    /// The CLI reported an authentication failure in the current turn.
    pub fn auth_failed(&self) {
        if let Some(t) = lock(&self.st).turn.as_mut() {
            t.auth_failed = true;
        }
    }

    /// `session/cancel`: interrupt the CLI, deny what waits for permission; the prompt returns
    /// `cancelled` (at the latest after `cancel_wait`).
    pub fn cancel(&self) {
        let perms: Vec<String> = {
            let mut st = lock(&self.st);
            match st.turn.as_mut() {
                Some(t) if t.cancelled_at.is_none() && t.done.is_none() => {
                    t.cancelled_at = Some(Instant::now());
                }
                _ => return,
            }
            st.perms.drain().map(|(k, _)| k).collect()
        };
        for rid in perms {
            self.answer_permission(&rid, deny("The prompt was cancelled.", true));
        }
        self.control(json!({"subtype": "interrupt"}));
        self.cv.notify_all();
    }

    /// `session/set_mode`: the CLI's permission mode.
    pub fn set_mode(&self, mode: &str) -> Result<(), RpcError> {
        if !MODES.iter().any(|(m, _)| *m == mode) {
            return Err(RpcError::params(format!("modeId: unknown mode {mode:?}")));
        }
        lock(&self.st).mode = mode.to_owned();
        self.control(json!({"subtype": "set_permission_mode", "mode": mode}));
        self.mode_changed(mode);
        Ok(())
    }

    /// The mode is now `mode`: `current_mode_update`, and the config options with it.
    fn mode_changed(&self, mode: &str) {
        self.update(
            SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.to_owned())),
            None,
        );
        let model = self.model().unwrap_or_else(|| "default".into());
        self.update(
            SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(config_options(
                mode, &model,
            ))),
            None,
        );
    }

    /// The CLI says its permission mode is `mode`: when it changed it itself (an approved
    /// `ExitPlanMode`, `EnterPlanMode`), the client is told.
    fn mode_reported(&self, mode: &str) {
        {
            let mut st = lock(&self.st);
            if st.mode == mode || !MODES.iter().any(|(m, _)| *m == mode) {
                return;
            }
            st.mode = mode.to_owned();
        }
        self.mode_changed(mode);
    }

    /// `session/set_model` (and the model config option).
    pub fn set_model(&self, model: &str) {
        let m = if model == "default" {
            None
        } else {
            Some(model.to_owned())
        };
        lock(&self.st).model = m;
        self.control(json!({"subtype": "set_model", "model": if model == "default" { Value::Null } else { json!(model) }}));
    }

    /// Stop the CLI (stdin closed, then SIGTERM to its group); the supervisor cleans up.
    pub fn close(&self) {
        let slot = {
            let mut st = lock(&self.st);
            st.closed = true;
            if let Some(t) = st.turn.as_mut()
                && t.done.is_none()
            {
                t.done = Some(Ok(StopReason::Cancelled));
            }
            st.child.clone()
        };
        self.cv.notify_all();
        if let Some(slot) = slot {
            let mut a = lock(&slot);
            a.stdin = None;
            if let Some(pid) = a.pid {
                procs::signal_group(pid, nix::sys::signal::Signal::SIGTERM);
            }
        }
    }

    /// Wait for the session's threads (after [`Session::close`]).
    pub fn join(&self) {
        let threads = std::mem::take(&mut lock(&self.st).threads);
        for t in threads {
            let _ = t.join();
        }
    }
}

/// What a session's runs say of it, from its [`AcpSink`](super::updates::AcpSink)s.
impl Listener for Arc<Session> {
    fn update(&self, u: SessionUpdate, meta: Option<serde_json::Map<String, Value>>) {
        Session::update(self, u, meta);
    }
    fn claude_session(&self, id: &str) {
        Session::claude_session(self, id);
    }
    fn auth_failed(&self) {
        Session::auth_failed(self);
    }
    fn can_use_tool(&self, request_id: String, request: Value) {
        Session::can_use_tool(self, request_id, request);
    }
    fn turn_ended(&self, generation: u64, stop: Result<StopReason, RpcError>) {
        Session::turn_ended(self, generation, stop);
    }
    fn mode_reported(&self, mode: &str) {
        Session::mode_reported(self, mode);
    }
}
