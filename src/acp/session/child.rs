//! A session's `claude`: its arguments, its start (running once its pid is known), the
//! supervisor's thread that runs it through the pipeline (the ACP updates and the tees), its
//! stdin (prompts and control requests), its stderr's tail and its end.

use std::ffi::OsString;
use std::io::{self, Write};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use agent_client_protocol_schema::v1::StopReason;
use serde_json::{Value, json};

use super::{RawInputs, Session, State, lock};
use crate::acp::updates::AcpSink;
use crate::acp::wire::RpcError;
use crate::error::sanitize;
use crate::normalize::Normalizer;
use crate::pipeline::Pipeline;
use crate::spawn::child::{Attach, Attached};
use crate::spawn::command::{self, ArgvOptions};
use crate::spawn::drive::{PipelineDriver, StderrMode};
use crate::spawn::guard::Guards;
use crate::spawn::{RunError, Spec, supervise};

/// Stderr lines of the CLI kept for an error message.
const STDERR_TAIL: usize = 8;

/// How long a started CLI may take to be running (its pid known) before the start fails.
const START_WAIT: Duration = Duration::from_secs(10);

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

impl Session {
    /// The CLI's arguments for this session's next run (a run after the first resumes the
    /// conversation; when the CLI kept none of it, the session says so on its next prompt).
    fn argv(&self, st: &mut State) -> Vec<OsString> {
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
            // Killed before it kept anything of the conversation: nothing to resume. A new
            // CLI session (the ACP session id stays), and the next prompt says so.
            let fresh = uuid::Uuid::now_v7().to_string();
            st.claude_id = Some(fresh.clone());
            st.lost = true;
            args.extend(["--session-id".into(), fresh.into()]);
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
                args: self.argv(&mut st),
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
                let tail = st.stderr_text();
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
        sinks.insert(
            0,
            Box::new(AcpSink::new(Box::new(self.clone()), generation)),
        );
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
        let tail = st.stderr_text();
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
    pub(super) fn write_line(&self, line: &[u8]) -> io::Result<()> {
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
}
