//! The [`Driver`] that runs the child's output through the one [`Pipeline`], with the guards
//! and the stderr policy.

use std::io::{self, Write};

use crate::envelope::Ctx;
use crate::envelope::kind;
use crate::error::sanitize;
use crate::pipeline::Pipeline;
use crate::read::Line;
use crate::transform::{LineTransform, Transformed};

use super::guard::{Guards, Verdict};
use super::supervise::{Driver, Halt};

#[derive(serde::Deserialize)]
struct TurnView {
    is_error: bool,
}

/// Where the child's stderr goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StderrMode {
    /// Copied to boo-normalize's stderr, control characters replaced (the default).
    Pass,
    /// As `child.stderr` events in the envelope (`--stderr-events`).
    Events,
    /// Dropped.
    Drop,
}

/// Pipeline + guards + stderr handling.
pub struct PipelineDriver<'p, 'a, E: Write> {
    pipeline: &'p mut Pipeline<'a>,
    guards: Guards,
    stderr: StderrMode,
    err_out: E,
    last_turn_ok: Option<bool>,
    /// Rewrites stderr lines before they go anywhere (`--redact`).
    stderr_rewrite: Option<(Box<dyn LineTransform>, Transformed)>,
    /// Whether the output can take more now (see [`Driver::ready`]).
    ready: Option<Box<dyn FnMut() -> bool>>,
    /// Whether stdout's reader went away (see [`Driver::check_output`]).
    gone: Option<Box<dyn FnMut() -> bool>>,
    /// `child.stderr` events not written because the output was backed up.
    stderr_dropped: u64,
    /// Tool calls without a result yet, with the time their `tool.call` went out.
    outstanding: std::collections::HashMap<String, std::time::Instant>,
    /// The child's name in front of its passed-through stderr lines (`claude: …`).
    label: &'static str,
}

/// The id of a `tool.call` or `tool.result` event.
#[derive(serde::Deserialize)]
struct IdView {
    tool_use_id: Option<String>,
}

impl<'p, 'a, E: Write> PipelineDriver<'p, 'a, E> {
    /// A driver over `pipeline`; `err_out` receives passed-through stderr.
    pub fn new(
        pipeline: &'p mut Pipeline<'a>,
        guards: Guards,
        stderr: StderrMode,
        err_out: E,
    ) -> Self {
        PipelineDriver {
            pipeline,
            guards,
            stderr,
            err_out,
            last_turn_ok: None,
            stderr_rewrite: None,
            ready: None,
            gone: None,
            stderr_dropped: 0,
            outstanding: std::collections::HashMap::new(),
            label: "claude",
        }
    }

    /// Put `label` (the agent's name) in front of passed-through stderr lines instead of
    /// `claude`.
    pub fn labelled(mut self, label: &'static str) -> Self {
        self.label = label;
        self
    }

    /// Ask `ready` whether the output can take more (a queue in front of a stdout that may not
    /// be read). While it says no, stdout lines wait and `child.stderr` events are dropped
    /// (counted in [`PipelineDriver::stderr_dropped`]).
    pub fn with_ready(mut self, ready: Box<dyn FnMut() -> bool>) -> Self {
        self.ready = Some(ready);
        self
    }

    /// Ask `gone` whether stdout's reader went away; once it says so, [`Driver::check_output`]
    /// flushes the pipeline, so that the stdout sink fails (and the pipeline names it) as if a
    /// write had hit the closed pipe.
    pub fn with_gone(mut self, gone: Box<dyn FnMut() -> bool>) -> Self {
        self.gone = Some(gone);
        self
    }

    /// `child.stderr` events dropped while the output was backed up.
    pub fn stderr_dropped(&self) -> u64 {
        self.stderr_dropped
    }

    /// Rewrite every stderr line with `t` (redaction) before it is passed through or emitted.
    pub fn rewrite_stderr(mut self, t: Box<dyn LineTransform>) -> Self {
        self.stderr_rewrite = Some((t, Transformed::default()));
        self
    }

    /// Whether the last `turn.end` was a success (`None`: no result came).
    pub fn last_turn_ok(&self) -> Option<bool> {
        self.last_turn_ok
    }

    /// The guards (for their counters).
    pub fn guards(&self) -> &Guards {
        &self.guards
    }
}

impl<E: Write> Driver for PipelineDriver<'_, '_, E> {
    fn line(&mut self, line: &Line<'_>) -> io::Result<Option<Halt>> {
        let guards = &mut self.guards;
        let last_ok = &mut self.last_turn_ok;
        let outstanding = &mut self.outstanding;
        let mut verdict = Verdict::Go;
        self.pipeline.push_line_with(line, |ev, first| {
            for m in &ev.metas[first..] {
                match m.kind {
                    kind::TURN_END => {
                        let v: Option<TurnView> = serde_json::from_slice(ev.bytes(m)).ok();
                        *last_ok = Some(v.is_some_and(|v| !v.is_error));
                        // The turn is over: calls without a result will not get one now.
                        outstanding.clear();
                    }
                    kind::TOOL_CALL | kind::TOOL_RESULT => {
                        let id = serde_json::from_slice::<IdView>(ev.bytes(m))
                            .ok()
                            .and_then(|v| v.tool_use_id);
                        if let Some(id) = id {
                            if m.kind == kind::TOOL_CALL {
                                outstanding
                                    .entry(id)
                                    .or_insert_with(std::time::Instant::now);
                            } else {
                                outstanding.remove(&id);
                            }
                        }
                    }
                    _ => {}
                }
            }
            verdict = verdict.max(guards.inspect(ev, first));
        })?;
        if guards.count_output(line.raw_len) {
            let n = line.number;
            self.pipeline.emit(|ev, norm| {
                let ctx = Ctx {
                    session_id: norm.session_id(),
                    line: Some(n),
                    ..Default::default()
                };
                if guards.output_violation(ev, &ctx) {
                    verdict = verdict.max(Verdict::Stop);
                }
            })?;
        }
        Ok(match verdict {
            Verdict::Go => None,
            Verdict::Stop => Some(Halt::Stop("policy")),
            Verdict::Kill => Some(Halt::Kill("policy")),
        })
    }

    fn stderr(&mut self, line: &[u8], truncated: bool) -> io::Result<()> {
        if let Some((mut t, mut out)) = self.stderr_rewrite.take() {
            out.clear();
            let l = Line {
                bytes: line,
                number: 0,
                raw_len: line.len() as u64 + 1,
                terminated: true,
                oversized: None,
                cr: false,
            };
            t.line(&l, &mut out);
            let mut res = Ok(());
            for i in 0..out.len() {
                let (bytes, _, _) = out.get(i, line);
                let bytes = bytes.to_vec();
                res = self.stderr_plain(&bytes, truncated);
                if res.is_err() {
                    break;
                }
            }
            self.stderr_rewrite = Some((t, out));
            return res;
        }
        self.stderr_plain(line, truncated)
    }

    fn idle(&mut self) -> io::Result<()> {
        self.pipeline.flush()
    }

    fn ready(&mut self) -> bool {
        self.ready.as_mut().is_none_or(|r| r())
    }

    fn tool_running_since(&self) -> Option<std::time::Instant> {
        self.outstanding.values().min().copied()
    }

    fn stall(&mut self, quiet: std::time::Duration) -> io::Result<()> {
        self.pipeline.emit(|ev, norm| {
            let ctx = Ctx {
                session_id: norm.session_id(),
                ..Default::default()
            };
            let o = ev.begin(kind::STALL, &ctx);
            o.key("quiet_ms");
            o.u64(quiet.as_millis() as u64);
            ev.end();
        })
    }

    fn keep_alive(&mut self) -> io::Result<()> {
        self.pipeline.idle()
    }

    fn check_output(&mut self) -> io::Result<()> {
        if !self.gone.as_mut().is_some_and(|g| g()) {
            return Ok(());
        }
        self.pipeline.flush()?;
        // The flush went through (stdout did not fail after all): nothing to stop for.
        Ok(())
    }
}

impl<E: Write> PipelineDriver<'_, '_, E> {
    fn stderr_plain(&mut self, line: &[u8], truncated: bool) -> io::Result<()> {
        let ready = self.stderr != StderrMode::Events || Driver::ready(self);
        match self.stderr {
            StderrMode::Drop => Ok(()),
            StderrMode::Pass => {
                // Best effort: a closed stderr must not stop the run. One write per line (a
                // queue in front of stderr drops whole lines).
                let text = sanitize(&String::from_utf8_lossy(line));
                let _ = self
                    .err_out
                    .write_all(format!("{}: {text}\n", self.label).as_bytes());
                Ok(())
            }
            StderrMode::Events if !ready => {
                self.stderr_dropped += 1;
                Ok(())
            }
            StderrMode::Events => self.pipeline.emit(|ev, norm| {
                let ctx = Ctx {
                    session_id: norm.session_id(),
                    ..Default::default()
                };
                let o = ev.begin(kind::CHILD_STDERR, &ctx);
                o.key("text");
                o.str(&String::from_utf8_lossy(line));
                o.key("truncated");
                o.bool(truncated);
                ev.end();
            }),
        }
    }
}
