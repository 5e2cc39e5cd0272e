//! One ACP session: its long-lived `claude` (stream-json in and out, the control protocol on
//! its stdin), supervised by `spawn`'s supervisor in a thread of its own; the prompt turn that
//! waits for its stop reason; cancel; permission requests; the CLI's death and its restart
//! with `--resume`.

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use agent_client_protocol_schema::v1::{
    ContentBlock, PermissionOption, PermissionOptionKind, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SessionNotification, SessionUpdate,
    StopReason, ToolCallUpdate, ToolCallUpdateFields,
};
use serde_json::{Value, json};

use super::tool;
use super::updates::AcpSink;
use super::wire::{AUTH_REQUIRED, RpcError, Wire};
use super::{Config, MODES};
use crate::error::sanitize;
use crate::normalize::Normalizer;
use crate::pipeline::Pipeline;
use crate::spawn::child::{Attach, Attached};
use crate::spawn::command::{self, ArgvOptions};
use crate::spawn::drive::{PipelineDriver, StderrMode};
use crate::spawn::guard::Guards;
use crate::spawn::procs;
use crate::spawn::{RunError, Spec, supervise};

/// Stderr lines of the CLI kept for an error message.
const STDERR_TAIL: usize = 8;

/// How long a started CLI may take to be running (its pid known) before the start fails.
const START_WAIT: Duration = Duration::from_secs(10);

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

/// A `can_use_tool` request of the CLI waiting for the client's answer.
struct Pending {
    tool_use_id: Option<String>,
}

/// The tool inputs of the CLI's `can_use_tool` requests as the CLI wrote them (before
/// `--redact`), by request id: an allow must give the CLI its own input back.
type RawInputs = Arc<Mutex<HashMap<String, Value>>>;

/// The supervisor's [`Driver`](crate::spawn::Driver) for a session: the pipeline's, plus the
/// raw input of each `can_use_tool` control request (the control protocol, not the envelope).
struct Control<D> {
    inner: D,
    raw: RawInputs,
}

#[derive(serde::Deserialize)]
struct CanUseTool {
    request_id: String,
    request: CanUseToolRequest,
}

#[derive(serde::Deserialize)]
struct CanUseToolRequest {
    subtype: String,
    #[serde(default)]
    input: Value,
}

impl<D: crate::spawn::Driver> crate::spawn::Driver for Control<D> {
    fn line(&mut self, line: &crate::read::Line<'_>) -> io::Result<Option<crate::spawn::Halt>> {
        if line.bytes.starts_with(b"{\"type\":\"control_request\"")
            && let Ok(c) = serde_json::from_slice::<CanUseTool>(line.bytes)
            && c.request.subtype == "can_use_tool"
        {
            lock(&self.raw).insert(c.request_id, c.request.input);
        }
        self.inner.line(line)
    }
    fn stderr(&mut self, line: &[u8], truncated: bool) -> io::Result<()> {
        self.inner.stderr(line, truncated)
    }
    fn idle(&mut self) -> io::Result<()> {
        self.inner.idle()
    }
    fn ready(&mut self) -> bool {
        self.inner.ready()
    }
    fn tool_running_since(&self) -> Option<Instant> {
        self.inner.tool_running_since()
    }
}

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

/// `_meta` for an update from inside a subagent: the `Task`/`Agent` call it belongs to.
pub fn subagent_meta(parent: Option<&str>) -> Option<serde_json::Map<String, Value>> {
    let p = parent?;
    let mut m = serde_json::Map::new();
    m.insert("claudeCode".into(), json!({"parentToolUseId": p}));
    Some(m)
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

    /// The CLI's arguments for this session's next run.
    fn argv(&self, st: &State) -> Vec<OsString> {
        let opts = ArgvOptions {
            partial: true,
            allow_tools: self.cfg.guards.allow_tools.clone(),
            ..Default::default()
        };
        let mut args = command::build(&self.cfg.claude_args, None, &opts).args;
        for a in [
            "--input-format",
            "stream-json",
            "--permission-prompt-tool",
            "stdio",
        ] {
            args.push(a.into());
        }
        let id = st.claude_id.clone().unwrap_or_else(|| self.id.clone());
        if st.started && self.has_conversation(&id) {
            args.extend(["--resume".into(), id.into()]);
        } else if st.started {
            // Killed before it kept anything of the conversation: nothing to resume, a new
            // CLI session (the ACP session id stays).
            args.extend([
                "--session-id".into(),
                uuid::Uuid::now_v7().to_string().into(),
            ]);
        } else {
            args.extend(["--session-id".into(), id.into()]);
        }
        if let Some(m) = &self.mcp_config {
            args.push("--mcp-config".into());
            args.push(m.into());
        }
        if st.mode != "default" {
            args.push("--permission-mode".into());
            args.push(st.mode.clone().into());
        }
        if let Some(m) = &st.model {
            args.push("--model".into());
            args.push(m.into());
        }
        args
    }

    /// Where the CLI keeps the transcript of its session `id` for this session's directory
    /// (`None`: neither `CLAUDE_CONFIG_DIR` nor `HOME` is in its environment).
    pub fn transcript_path(&self, id: &str) -> Option<PathBuf> {
        let var = |k: &str| {
            self.cfg
                .env
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| PathBuf::from(v))
        };
        let root = var("CLAUDE_CONFIG_DIR").or_else(|| var("HOME").map(|h| h.join(".claude")))?;
        let dir = crate::transcript::listing::project_dir_name(&self.cwd.to_string_lossy());
        Some(root.join("projects").join(dir).join(format!("{id}.jsonl")))
    }

    /// Whether the CLI kept a conversation for its session `id` (its transcript has a message):
    /// `--resume` works only then.
    fn has_conversation(&self, id: &str) -> bool {
        let Some(file) = self.transcript_path(id) else {
            return true;
        };
        std::fs::read_to_string(file).is_ok_and(|t| {
            t.lines()
                .any(|l| l.contains("\"type\":\"user\"") || l.contains("\"type\":\"assistant\""))
        })
    }

    /// `session/load`: the session's transcript (its subagents' included) as updates, through
    /// the transcript reader and the same envelope events and mapping as a live run.
    pub fn replay(self: &Arc<Self>) -> Result<(), RpcError> {
        let path = self
            .transcript_path(&self.id)
            .filter(|p| p.is_file())
            .ok_or_else(|| {
                RpcError::params(format!(
                    "sessionId: no Claude Code transcript of session {} for {}",
                    self.id,
                    self.cwd.display()
                ))
            })?;
        let tmp = crate::transcript::open::as_stream_json_file(std::slice::from_ref(&path))
            .map_err(|e| RpcError::internal(e.to_string()))?
            .ok_or_else(|| {
                RpcError::params(format!("sessionId: {} is not a transcript", path.display()))
            })?;
        let mut opts = self.cfg.envelope.clone();
        opts.allow_no_result = true;
        let sink = AcpSink::with_mode(self.clone(), super::updates::Mode::Replay);
        let mut p = Pipeline::new(Normalizer::new(opts), vec![Box::new(sink)]);
        if let Some(r) = self.cfg.setup.redactor() {
            p = p.transform(r);
        }
        let f = std::fs::File::open(tmp.path()).map_err(|e| RpcError::internal(e.to_string()))?;
        p.run(f, None)
            .and_then(|()| p.finish(&crate::normalize::EndInfo::eof()))
            .map_err(|e| RpcError::internal(format!("boo-normalize: acp: replay: {e}")))
    }

    /// Start the CLI unless it is running.
    pub fn ensure_started(self: &Arc<Self>) -> Result<(), RpcError> {
        let (slot, generation, spec) = {
            let mut st = lock(&self.st);
            if st.closed {
                return Err(RpcError::params(format!("session {} is closed", self.id)));
            }
            if st.child.is_some() {
                return Ok(());
            }
            let path = std::env::var_os("PATH");
            let program = command::resolve_program(self.cfg.claude_bin.as_deref(), path.as_deref())
                .map_err(|e| {
                    RpcError::internal(format!(
                        "boo-normalize: acp: {}",
                        match e {
                            command::ResolveError::NotFound(m)
                            | command::ResolveError::NotExecutable(m) => m,
                        }
                    ))
                })?;
            let slot: Attach = Arc::new(Mutex::new(Attached::default()));
            st.generation += 1;
            st.child = Some(slot.clone());
            st.stderr_tail.clear();
            let spec = Spec {
                program,
                args: self.argv(&st),
                env: self.cfg.env.clone(),
                stdin: None,
                max_line: None,
                cwd: Some(self.cwd.clone()),
                attach: Some(slot.clone()),
            };
            (slot, st.generation, spec)
        };
        let me = self.clone();
        let handle = thread::Builder::new()
            .name(format!("acp-{}", &self.id))
            .spawn(move || me.run_child(spec, generation))
            .map_err(|e| RpcError::internal(format!("boo-normalize: acp: thread: {e}")))?;
        lock(&self.st).threads.push(handle);
        // Running once its pid is known; a start that fails ends the run at once.
        let until = Instant::now() + START_WAIT;
        loop {
            if lock(&slot).pid.is_some() {
                break;
            }
            let st = lock(&self.st);
            if st.generation != generation || st.child.is_none() {
                let tail = st
                    .stderr_tail
                    .iter()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n");
                return Err(RpcError::internal(format!(
                    "boo-normalize: acp: claude could not be started{}",
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!(": {tail}")
                    }
                )));
            }
            drop(st);
            if Instant::now() >= until {
                return Err(RpcError::internal(
                    "boo-normalize: acp: claude did not start",
                ));
            }
            thread::sleep(Duration::from_millis(5));
        }
        self.control(json!({"subtype": "initialize"}));
        Ok(())
    }

    /// The session's thread: the CLI under supervision, its output through the pipeline
    /// (the ACP updates and the tees), until it is gone.
    fn run_child(self: Arc<Self>, spec: Spec, generation: u64) {
        let mut sinks = match self
            .cfg
            .tees
            .sinks(&self.id, &self.turns, self.audit.as_ref())
        {
            Ok(s) => s,
            Err(e) => {
                self.cfg.log(&e.to_string());
                Vec::new()
            }
        };
        sinks.insert(0, Box::new(AcpSink::new(self.clone(), generation)));
        // A restarted CLI's events go on numbering the session's run (its audit records).
        let first_seq = self.audit.as_ref().map_or(0, |a| a.next_seq());
        let mut p = Pipeline::new(Normalizer::new(self.cfg.envelope.clone()), sinks)
            .line_buffered(true)
            .first_seq(first_seq);
        // --redact: every line before any output (the ACP updates included).
        if let Some(r) = self.cfg.setup.redactor() {
            p = p.transform(r);
        }
        let tail = TailWriter {
            session: self.clone(),
            line: Vec::new(),
        };
        let outcome = {
            let mut driver = PipelineDriver::new(
                &mut p,
                Guards::new(self.cfg.guards.clone()),
                StderrMode::Pass,
                tail,
            );
            if let Some(e) = &self.cfg.setup.redact {
                driver = driver.rewrite_stderr(Box::new(crate::redact::Redactor::new(e.clone())));
            }
            let mut driver = Control {
                inner: driver,
                raw: self.raw_inputs.clone(),
            };
            supervise(&spec, &self.cfg.limits, &mut driver)
        };
        let end = match &outcome {
            Ok(o) => o.end_info(),
            Err(RunError::Start(e)) => {
                self.note_stderr(&format!("{}: {e}", spec.program.display()));
                crate::normalize::EndInfo::spawn_failed(&e.to_string())
            }
        };
        let _ = p.finish(&end);
        let status = match &outcome {
            Ok(o) => o.end_info().cause.clone(),
            Err(_) => "spawn_failed".into(),
        };
        self.ended(generation, &status);
    }

    fn note_stderr(&self, line: &str) {
        let mut st = lock(&self.st);
        if st.stderr_tail.len() == STDERR_TAIL {
            st.stderr_tail.pop_front();
        }
        st.stderr_tail.push_back(line.to_owned());
    }

    /// The CLI run `generation` is over.
    fn ended(&self, generation: u64, how: &str) {
        let mut st = lock(&self.st);
        if st.generation != generation {
            return;
        }
        st.child = None;
        st.outstanding = 0;
        st.perms.clear();
        let tail = st
            .stderr_tail
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        if let Some(t) = st.turn.as_mut()
            && t.done.is_none()
        {
            t.done = Some(if t.cancelled_at.is_some() {
                Ok(StopReason::Cancelled)
            } else {
                let mut msg = format!("boo-normalize: acp: claude ended ({how}) during the prompt");
                if !tail.is_empty() {
                    msg.push_str(": ");
                    msg.push_str(&tail);
                }
                msg.push_str("; the next prompt starts it again, resuming the session");
                Err(RpcError::internal(msg).with_data(json!({"stderr": tail})))
            });
        }
        self.cv.notify_all();
    }

    /// Write one line to the CLI's stdin.
    fn write_line(&self, line: &[u8]) -> io::Result<()> {
        let slot = lock(&self.st).child.clone();
        let Some(slot) = slot else {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "claude is not running",
            ));
        };
        let mut a = lock(&slot);
        let Some(w) = a.stdin.as_mut() else {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "claude's stdin is closed",
            ));
        };
        let mut buf = line.to_vec();
        buf.push(b'\n');
        w.write_all(&buf).and_then(|()| w.flush())
    }

    /// Send a control request to the CLI (best effort: a dead CLI is seen by its supervisor).
    pub fn control(&self, request: Value) {
        let n = self.control_seq.fetch_add(1, Ordering::SeqCst);
        let line = json!({"type": "control_request", "request_id": format!("acp-{n}"), "request": request});
        let _ = self.write_line(line.to_string().as_bytes());
    }

    /// `session/prompt`: send the prompt, wait for its stop reason.
    pub fn prompt(self: &Arc<Self>, prompt: &[ContentBlock]) -> Result<StopReason, RpcError> {
        self.ensure_started()?;
        {
            let mut st = lock(&self.st);
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

    fn answer_permission(&self, request_id: &str, verdict: Value) {
        lock(&self.raw_inputs).remove(request_id);
        let line = json!({
            "type": "control_response",
            "response": {"subtype": "success", "request_id": request_id, "response": verdict}
        });
        let _ = self.write_line(line.to_string().as_bytes());
    }

    /// A `can_use_tool` control request of the CLI: ask the client (on a thread of its own, so
    /// the CLI's output keeps flowing), then answer the CLI as the client said. Nothing is
    /// allowed that the client did not allow.
    pub fn can_use_tool(self: &Arc<Self>, request_id: String, req: Value) {
        let tool_use_id = req
            .get("tool_use_id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        {
            let mut st = lock(&self.st);
            let cancelled = st.turn.as_ref().is_none_or(|t| t.cancelled_at.is_some());
            if cancelled {
                drop(st);
                self.answer_permission(&request_id, deny("The prompt was cancelled.", true));
                return;
            }
            st.perms.insert(request_id.clone(), Pending { tool_use_id });
        }
        let me = self.clone();
        let spawned = thread::Builder::new()
            .name("acp-permission".into())
            .spawn(move || me.ask(request_id, req));
        if let Err(e) = spawned {
            self.cfg.log(&format!("permission thread: {e}"));
        }
    }

    fn ask(self: Arc<Self>, request_id: String, req: Value) {
        let name = req
            .get("tool_name")
            .and_then(Value::as_str)
            .unwrap_or("tool");
        let input = req.get("input").cloned().unwrap_or(json!({}));
        let call_id = lock(&self.st)
            .perms
            .get(&request_id)
            .and_then(|p| p.tool_use_id.clone())
            .unwrap_or_else(|| request_id.clone());
        let m = tool::meaning(name, &input);
        let fields = ToolCallUpdateFields::new()
            .title(m.title)
            .kind(m.kind)
            .locations(m.locations)
            .raw_input(input.clone());
        let fields = if m.diffs.is_empty() {
            fields
        } else {
            fields.content(m.diffs)
        };
        let options = vec![
            PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new(
                "allow_always",
                "Always allow",
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
        ];
        let agent = req.get("agent_id").and_then(Value::as_str);
        let r = RequestPermissionRequest::new(
            self.id.clone(),
            ToolCallUpdate::new(call_id, fields),
            options,
        )
        .meta(agent.map(|a| {
            let mut m = serde_json::Map::new();
            m.insert("claudeCode".into(), json!({"agentId": a}));
            m
        }));
        let answer = match self.wire.request("session/request_permission", &r) {
            Ok((_, rx)) => rx.recv().ok(),
            Err(_) => None,
        };
        let outcome = answer
            .and_then(|a| a.ok())
            .and_then(|v| serde_json::from_value::<RequestPermissionResponse>(v).ok())
            .map(|r| r.outcome);
        // The CLI's own input (the one shown may be redacted).
        let input = lock(&self.raw_inputs).remove(&request_id).unwrap_or(input);
        let verdict = match outcome {
            Some(RequestPermissionOutcome::Selected(s)) => match &*s.option_id.0 {
                "allow" => json!({"behavior": "allow", "updatedInput": input}),
                "allow_always" => json!({
                    "behavior": "allow",
                    "updatedInput": input,
                    "updatedPermissions": always(name, &req),
                }),
                _ => deny("The user rejected this tool call.", false),
            },
            // Cancelled, an error answer, or no answer at all: never approved.
            _ => deny("The user did not allow this tool call.", true),
        };
        if lock(&self.st).perms.remove(&request_id).is_none() {
            // Answered already (the prompt was cancelled, or the CLI is gone).
            return;
        }
        self.answer_permission(&request_id, verdict);
    }

    /// `session/set_mode`: the CLI's permission mode.
    pub fn set_mode(&self, mode: &str) -> Result<(), RpcError> {
        if !MODES.iter().any(|(m, _)| *m == mode) {
            return Err(RpcError::params(format!("modeId: unknown mode {mode:?}")));
        }
        lock(&self.st).mode = mode.to_owned();
        self.control(json!({"subtype": "set_permission_mode", "mode": mode}));
        self.update(
            SessionUpdate::CurrentModeUpdate(
                agent_client_protocol_schema::v1::CurrentModeUpdate::new(mode.to_owned()),
            ),
            None,
        );
        Ok(())
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

fn deny(message: &str, interrupt: bool) -> Value {
    json!({"behavior": "deny", "message": message, "interrupt": interrupt})
}

/// "Always allow" as the CLI's permission update: the rules it suggested, for this session;
/// a rule for the tool when it suggested none (so "always" never degrades to "once").
fn always(tool: &str, req: &Value) -> Value {
    let rules: Vec<Value> = req
        .get("permission_suggestions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|s| s.get("type").and_then(Value::as_str) == Some("addRules"))
        .filter_map(|s| s.get("rules").and_then(Value::as_array))
        .flatten()
        .cloned()
        .collect();
    let rules = if rules.is_empty() {
        vec![json!({"toolName": tool})]
    } else {
        rules
    };
    json!([{"type": "addRules", "rules": rules, "behavior": "allow", "destination": "session"}])
}

/// The CLI's stderr: copied to ours (prefixed, as `spawn` does) and its last lines kept for
/// error messages.
struct TailWriter {
    session: Arc<Session>,
    line: Vec<u8>,
}

impl Write for TailWriter {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.line.extend_from_slice(b);
        while let Some(i) = self.line.iter().position(|&c| c == b'\n') {
            let l: Vec<u8> = self.line.drain(..=i).collect();
            let text = String::from_utf8_lossy(&l[..l.len() - 1]).into_owned();
            self.session.cfg.log_raw(&text);
            let text = text.strip_prefix("claude: ").unwrap_or(&text);
            self.session.note_stderr(&sanitize(text));
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn always_is_a_rule_even_without_suggestions() {
        let none = always("mcp__x__y", &json!({"permission_suggestions": []}));
        assert_eq!(
            none,
            json!([{"type": "addRules", "rules": [{"toolName": "mcp__x__y"}], "behavior": "allow", "destination": "session"}])
        );
        let some = always(
            "Bash",
            &json!({"permission_suggestions": [
                {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "ls"}], "behavior": "allow", "destination": "localSettings"},
                {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
            ]}),
        );
        assert_eq!(
            some[0]["rules"],
            json!([{"toolName": "Bash", "ruleContent": "ls"}])
        );
        assert_eq!(some[0]["destination"], "session");
    }
}
