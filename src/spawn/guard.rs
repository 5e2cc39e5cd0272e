//! Guards: policy checks over the envelope the normalizer produced, reported as
//! `policy.violation` events (and, with `--enforce`, a reason to stop the child).
//!
//! | rule | fires when |
//! |---|---|
//! | `allow_tools` | a tool call names a tool outside `--allow-tools` (entries ending in `*` are prefixes, e.g. `mcp__github__*`): at the earliest sign, the `block.start` of its `tool_use` block (partial mode), else its `tool.call`; once per call |
//! | `max_tool_calls` | the N+1-th `tool.call` of the run (N = `--max-tool-calls`); once |
//! | `max_repeat_calls` | the N-th identical call in a row (same name and input, within one agent: the main one or one subagent), and every further one of the streak |
//! | `max_output_bytes` | the child's stdout grows past N bytes; once |
//!
//! Guards read the serialized `tool.call` and tool `block.start` events (one small JSON parse
//! each), so they see exactly what consumers see, streamed or not.
//!
//! For an agent other than Claude (`spawn --agent`), an `--allow-tools` entry is also read
//! through the tool-meaning module ([`crate::tool`]): a kind (`execute`, `read`, `edit`,
//! `search`, `fetch`, …) allows every tool of that kind, and a Claude Code tool name stands for
//! its kind (`Bash` allows Codex's `command_execution`, Gemini's `run_shell_command`, OpenCode's
//! and Copilot's `bash`; `Read`, `Edit`, `Grep`, `WebFetch` likewise); the agent's own tool names
//! match as they are. A Claude name whose kind is `other` stands only for itself. These agents
//! report a call when it starts (Codex, Gemini, Qwen, Copilot) or when it is done (OpenCode), so
//! `--enforce` stops the CLI at that point, not before its tool ran.
//!
//! With `--enforce` a violation asks to end the run: an `allow_tools` one as a [`Verdict::Kill`]
//! (SIGKILL of the child's group at once: the disallowed tool must not get to start), the others
//! as a [`Verdict::Stop`] (the usual stop sequence, which lets claude clean up).

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::agent::Agent;
use crate::envelope::kind;
use crate::envelope::{Ctx, Events};
use crate::tool::{self, Kind};

/// `rule` of a violation of `--allow-tools`.
pub const ALLOW_TOOLS: &str = "allow_tools";
/// `rule` of a violation of `--max-tool-calls`.
pub const MAX_TOOL_CALLS: &str = "max_tool_calls";
/// `rule` of a violation of `--max-repeat-calls`.
pub const MAX_REPEAT_CALLS: &str = "max_repeat_calls";
/// `rule` of a violation of `--max-output-bytes`.
pub const MAX_OUTPUT_BYTES: &str = "max_output_bytes";
/// Every rule a `policy.violation` can name (the schema's enum of `rule`).
pub const RULES: &[&str] = &[
    ALLOW_TOOLS,
    MAX_TOOL_CALLS,
    MAX_REPEAT_CALLS,
    MAX_OUTPUT_BYTES,
];

/// What the guards ask of the run after a batch of events (ordered: a later variant overrides).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Verdict {
    /// Go on.
    #[default]
    Go,
    /// Stop the child with the stop sequence.
    Stop,
    /// Kill the child's process group at once.
    Kill,
}

/// What to check.
#[derive(Debug, Clone, Default)]
pub struct GuardConfig {
    /// Allowed tool names (`*` suffix: prefix); `None`: any.
    pub allow_tools: Option<Vec<String>>,
    /// Most tool calls.
    pub max_tool_calls: Option<u64>,
    /// Most identical consecutive calls.
    pub max_repeat_calls: Option<u64>,
    /// Most bytes of child stdout.
    pub max_output_bytes: Option<u64>,
    /// A violation stops the child.
    pub enforce: bool,
    /// The agent whose calls these are (whose tool names `allow_tools` may also say by kind or
    /// by Claude Code's name, see the module docs).
    pub agent: Agent,
}

impl GuardConfig {
    /// True when no rule is set.
    pub fn is_empty(&self) -> bool {
        self.allow_tools.is_none()
            && self.max_tool_calls.is_none()
            && self.max_repeat_calls.is_none()
            && self.max_output_bytes.is_none()
    }

    /// Whether the settings make sense together (`enforce` needs a rule).
    pub fn validate(&self) -> Result<(), &'static str> {
        if self.enforce && self.is_empty() {
            return Err(
                "needs a guard (--allow-tools, --max-tool-calls, --max-repeat-calls, --max-output-bytes)",
            );
        }
        Ok(())
    }
}

#[derive(Deserialize)]
struct CallView {
    session_id: Option<String>,
    parent_tool_use_id: Option<String>,
    line: Option<u64>,
    /// Null when the source's tool_use block had none (the event says so in `violation`).
    tool_use_id: Option<String>,
    /// Null likewise: such a call is checked under the name "" (never allowed by a list).
    #[serde(deserialize_with = "null_as_empty")]
    name: String,
    input: Box<RawValue>,
    /// What the call does (the tool-meaning module's kind).
    #[serde(default)]
    kind: Option<String>,
}

/// The start of a streamed content block (partial mode): for a tool, its id and name are known
/// before its input has arrived, and before claude can run it.
#[derive(Deserialize)]
struct BlockView {
    session_id: Option<String>,
    parent_tool_use_id: Option<String>,
    line: Option<u64>,
    block_type: String,
    tool_use_id: Option<String>,
    name: Option<String>,
}

/// Whether `--allow-tools` entry `entry` allows a call of kind `kind` of an agent other than
/// Claude: the entry names the kind, or a Claude Code tool of that kind (not `other`).
fn stands_for(entry: &str, kind: Kind) -> bool {
    if Kind::parse(entry) == Some(kind) {
        return true;
    }
    tool::row(tool::Dialect::Claude, entry)
        .is_some_and(|r| r.kind != Kind::Other && r.kind_by.is_none() && r.kind == kind)
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

/// One violation, before it is written.
struct Violation {
    rule: &'static str,
    detail: String,
    name: Option<String>,
    tool_use_id: Option<String>,
    limit: Option<u64>,
    count: Option<u64>,
}

/// Guard state over one run.
#[derive(Debug, Default)]
pub struct Guards {
    cfg: GuardConfig,
    calls: u64,
    /// Per agent (parent tool use id): the last call's name and input, and its streak length.
    last: HashMap<Option<String>, (String, String, u64)>,
    output_bytes: u64,
    output_fired: bool,
    violations: u64,
    /// Tool calls already reported under `allow_tools` when their block started.
    flagged_early: std::collections::HashSet<String>,
}

impl Guards {
    /// Guards for `cfg`.
    pub fn new(cfg: GuardConfig) -> Self {
        Guards {
            cfg,
            ..Default::default()
        }
    }

    /// Violations reported so far.
    pub fn violations(&self) -> u64 {
        self.violations
    }

    /// Whether a call of `name` (of kind `kind`, when the event says it) is allowed.
    fn allowed(&self, name: &str, kind: Option<&str>) -> bool {
        let Some(list) = &self.cfg.allow_tools else {
            return true;
        };
        let agent = self.cfg.agent;
        // Claude's names are matched as they are; another agent's calls also by what they do.
        let kind = (agent != Agent::Claude).then(|| {
            kind.and_then(Kind::parse).unwrap_or_else(|| {
                tool::kind::<&serde_json::Value>(agent.dialect().tools(), name, None)
            })
        });
        list.iter().any(|a| match a.strip_suffix('*') {
            Some(p) => name.starts_with(p),
            None => a == name || kind.is_some_and(|k| stands_for(a, k)),
        })
    }

    /// Check the tool `block.start` and `tool.call` events in `ev.metas[first..]` and append a
    /// `policy.violation` after the batch for each rule they break. Returns what the run should
    /// do: with `--enforce`, a tool outside `--allow-tools` kills it, other rules stop it.
    pub fn inspect(&mut self, ev: &mut Events, first: usize) -> Verdict {
        enum Seen {
            Block(BlockView),
            Call(CallView),
        }
        let seen: Vec<Seen> = ev.metas[first..]
            .iter()
            .filter_map(|m| match m.kind {
                kind::TOOL_CALL => serde_json::from_slice(ev.bytes(m)).ok().map(Seen::Call),
                kind::BLOCK_START if self.cfg.allow_tools.is_some() => {
                    serde_json::from_slice(ev.bytes(m)).ok().map(Seen::Block)
                }
                _ => None,
            })
            .collect();
        let mut verdict = Verdict::Go;
        for s in seen {
            let (found, session, parent, line) = match &s {
                Seen::Block(b) => (
                    self.check_block(b).into_iter().collect(),
                    b.session_id.as_deref(),
                    b.parent_tool_use_id.as_deref(),
                    b.line,
                ),
                Seen::Call(c) => (
                    self.check_call(c),
                    c.session_id.as_deref(),
                    c.parent_tool_use_id.as_deref(),
                    c.line,
                ),
            };
            for v in found {
                let ctx = Ctx {
                    session_id: session,
                    parent,
                    line,
                    uuid: None,
                    ..Default::default()
                };
                if self.write(ev, &ctx, &v) {
                    verdict = verdict.max(if v.rule == ALLOW_TOOLS {
                        Verdict::Kill
                    } else {
                        Verdict::Stop
                    });
                }
            }
        }
        verdict
    }

    /// A tool block that started (partial mode): a tool outside the list is reported now, before
    /// its input has streamed and claude can run it (its `tool.call` is not reported again).
    fn check_block(&mut self, b: &BlockView) -> Option<Violation> {
        if !matches!(
            b.block_type.as_str(),
            "tool_use" | "server_tool_use" | "mcp_tool_use"
        ) {
            return None;
        }
        let (Some(id), Some(name)) = (&b.tool_use_id, &b.name) else {
            return None;
        };
        if self.allowed(name, None) || !self.flagged_early.insert(id.clone()) {
            return None;
        }
        Some(Violation {
            rule: ALLOW_TOOLS,
            detail: format!("tool {name:?} is not in --allow-tools (seen as its call began)"),
            name: Some(name.clone()),
            tool_use_id: Some(id.clone()),
            limit: None,
            count: None,
        })
    }

    fn check_call(&mut self, c: &CallView) -> Vec<Violation> {
        let mut out = Vec::new();
        let call = |rule, detail, limit, count| Violation {
            rule,
            detail,
            name: Some(c.name.clone()),
            tool_use_id: c.tool_use_id.clone(),
            limit,
            count,
        };
        let early = c
            .tool_use_id
            .as_ref()
            .is_some_and(|id| self.flagged_early.remove(id));
        if !early && !self.allowed(&c.name, c.kind.as_deref()) {
            out.push(call(
                ALLOW_TOOLS,
                format!("tool {:?} is not in --allow-tools", c.name),
                None,
                None,
            ));
        }
        self.calls += 1;
        if let Some(max) = self.cfg.max_tool_calls
            && self.calls == max + 1
        {
            out.push(call(
                MAX_TOOL_CALLS,
                format!("more than {max} tool calls"),
                Some(max),
                Some(self.calls),
            ));
        }
        let input = c.input.get();
        let slot = self
            .last
            .entry(c.parent_tool_use_id.clone())
            .or_insert_with(|| (String::new(), String::new(), 0));
        if slot.0 == c.name && slot.1 == input {
            slot.2 += 1;
        } else {
            *slot = (c.name.clone(), input.to_owned(), 1);
        }
        let streak = slot.2;
        if let Some(max) = self.cfg.max_repeat_calls
            && streak >= max
        {
            out.push(call(
                MAX_REPEAT_CALLS,
                format!(
                    "{streak} identical calls of {:?} in a row (limit {max})",
                    c.name
                ),
                Some(max),
                Some(streak),
            ));
        }
        out
    }

    /// Count `n` more bytes of child stdout; true when this crossed `--max-output-bytes` (the
    /// first time only): then write the violation with [`output_violation`](Self::output_violation).
    pub fn count_output(&mut self, n: u64) -> bool {
        self.output_bytes += n;
        let crossed = self
            .cfg
            .max_output_bytes
            .is_some_and(|max| !self.output_fired && self.output_bytes > max);
        self.output_fired |= crossed;
        crossed
    }

    /// Append the `max_output_bytes` violation; returns true when the child should be stopped.
    pub fn output_violation(&mut self, ev: &mut Events, ctx: &Ctx<'_>) -> bool {
        let max = self.cfg.max_output_bytes.unwrap_or(0);
        let v = Violation {
            rule: MAX_OUTPUT_BYTES,
            detail: format!("child stdout exceeded {max} bytes"),
            name: None,
            tool_use_id: None,
            limit: Some(max),
            count: Some(self.output_bytes),
        };
        self.write(ev, ctx, &v)
    }

    fn write(&mut self, ev: &mut Events, ctx: &Ctx<'_>, v: &Violation) -> bool {
        self.violations += 1;
        let o = ev.begin(kind::POLICY_VIOLATION, ctx);
        o.key("rule");
        o.str(v.rule);
        o.key("detail");
        o.str(&v.detail);
        o.key("name");
        o.opt_str(v.name.as_deref());
        o.key("tool_use_id");
        o.opt_str(v.tool_use_id.as_deref());
        o.key("limit");
        opt_u64(o, v.limit);
        o.key("count");
        opt_u64(o, v.count);
        o.key("enforced");
        o.bool(self.cfg.enforce);
        ev.end();
        self.cfg.enforce
    }
}

fn opt_u64(o: &mut crate::json::Out, v: Option<u64>) {
    match v {
        Some(n) => o.u64(n),
        None => o.raw(b"null"),
    }
}

#[cfg(test)]
mod tests;
