//! One-line notices in the pretty view: the session header, retries, rate limits, permission
//! denials, policy violations, stalls, compaction, API and stream errors, model fallbacks,
//! diagnostics, unknown lines (another agent's undocumented event types once each, dimmed),
//! hooks, tasks and the other system events; stream lifecycle and bookkeeping events show
//! nothing.

use std::io::{self, Write};

use super::style::Role;
use super::{Pretty, b, display, n, one_line, s, text, u};
use crate::envelope::{EventMeta, kind as ev};
use crate::json::fields::Fields;
use crate::view::num::{Style::Terse, plural};

/// Events that show nothing: stream lifecycle, bookkeeping, keep-alives.
const SILENT: &[&str] = &[
    ev::SKIPPED,
    ev::TOOL_INPUT_DELTA,
    ev::MESSAGE_DELTA,
    ev::BLOCK_START,
    ev::BLOCK_DELTA,
    ev::STREAM_PING,
    ev::KEEP_ALIVE,
    ev::TASK_UPDATED,
    ev::TASK_LIST,
    ev::SESSION_STATE,
    ev::THINKING_TOKENS,
    ev::CONTROL_PROGRESS,
    ev::COMMANDS_CHANGED,
    ev::UI_INVALIDATE,
    ev::TOOL_PROGRESS,
    ev::HOOK_STARTED,
    ev::HOOK_PROGRESS,
    ev::PROMPT_SUGGESTION,
];

impl<W: Write> Pretty<W> {
    pub(super) fn notice(&mut self, meta: &EventMeta, e: &Fields<'_>) -> io::Result<()> {
        if SILENT.contains(&meta.kind) {
            return Ok(());
        }
        let str_of = |v| s(v).map(|c| c.into_owned());
        let (role, text): (Role, String) = match meta.kind {
            ev::SESSION_INIT => return self.session(e),
            ev::API_RETRY => {
                let mut t = format!(
                    "retry {}/{}",
                    u(e.json("attempt")).map_or("?".into(), |a| a.to_string()),
                    u(e.json("max_retries")).map_or("?".into(), |a| a.to_string())
                );
                if let Some(ms) = u(e.json("retry_delay_ms")) {
                    t.push_str(&format!(" in {}", Terse.duration_ms(ms)));
                }
                if let Some(st) = e.json("error_status") {
                    t.push_str(&format!(": {}", text(st)));
                }
                if let Some(er) = str_of(e.json("error")) {
                    t.push_str(&format!(" {er}"));
                }
                (Role::Warn, t)
            }
            ev::RATE_LIMIT => {
                let mut t = format!(
                    "rate limit: {}",
                    str_of(e.json("status")).unwrap_or_else(|| "?".into())
                );
                if let Some(k) = str_of(e.json("rate_limit_type")) {
                    t.push_str(&format!(" ({k})"));
                }
                if let Some(x) = n(e.json("utilization")) {
                    t.push_str(&format!(", {:.0}% used", x * 100.0));
                }
                if let Some(r) = e.json("resets_at") {
                    t.push_str(&format!(", resets at {}", display(r)));
                }
                (Role::Warn, t)
            }
            ev::PERMISSION_DENIED => {
                let mut t = format!(
                    "permission denied: {}",
                    str_of(e.json("tool_name")).unwrap_or_default()
                );
                if let Some(m) =
                    str_of(e.json("message")).or_else(|| str_of(e.json("decision_reason")))
                {
                    t.push_str(&format!(" — {m}"));
                }
                (Role::Error, t)
            }
            ev::POLICY_VIOLATION => {
                let enforced = if b(e.json("enforced")) == Some(true) {
                    " (enforced: stopping)"
                } else {
                    ""
                };
                let t = format!(
                    "policy {}: {}{enforced}",
                    str_of(e.json("rule")).unwrap_or_default(),
                    str_of(e.json("detail")).unwrap_or_default()
                );
                (Role::Error, t)
            }
            ev::STALL => (
                Role::Warn,
                format!(
                    "stall: no output for {}",
                    Terse.duration_ms(u(e.json("quiet_ms")).unwrap_or(0))
                ),
            ),
            ev::COMPACT_BOUNDARY => {
                let mut t = format!(
                    "compacted ({})",
                    str_of(e.json("trigger")).unwrap_or_else(|| "?".into())
                );
                if let Some(p) = u(e.json("pre_tokens")) {
                    t.push_str(&format!(", {} tokens before", Terse.tokens(p)));
                }
                (Role::Warn, t)
            }
            ev::API_ERROR => {
                let er = e
                    .json("error")
                    .map(|r| display(r).into_owned())
                    .unwrap_or_default();
                match str_of(e.json("text")).filter(|t| !t.is_empty()) {
                    Some(tx) => (Role::Error, format!("API error {er}: {tx}")),
                    None => (Role::Error, format!("API error {er}")),
                }
            }
            ev::STREAM_ERROR => (
                Role::Error,
                format!("stream error: {}", e.json("error").map_or("", |r| text(r))),
            ),
            ev::MODEL_FALLBACK => (
                Role::Warn,
                format!(
                    "model fallback: {} {} {}",
                    str_of(e.json("original_model")).unwrap_or_default(),
                    self.t.g.arrow,
                    str_of(e.json("fallback_model")).unwrap_or_default()
                ),
            ),
            ev::MODEL_REFUSAL => (
                Role::Error,
                format!(
                    "model refused: {}",
                    str_of(e.json("original_model")).unwrap_or_default()
                ),
            ),
            ev::DIAGNOSTIC => (
                Role::Warn,
                format!(
                    "unusable input line ({}, {}): {}",
                    str_of(e.json("kind")).unwrap_or_default(),
                    Terse.bytes(u(e.json("bytes")).unwrap_or(0)),
                    str_of(e.json("text")).unwrap_or_default()
                ),
            ),
            ev::LINE_REPAIRED => (
                Role::Dim,
                match str_of(e.json("kind")).as_deref() {
                    Some("bom") => "line repaired (a UTF-8 byte order mark dropped)".into(),
                    _ => "line repaired (unpaired UTF-16 surrogates)".into(),
                },
            ),
            // Another agent's event types that its reader keeps as they are (undocumented ones):
            // each named once, dimmed; Claude Code's own unknown lines are warnings.
            ev::UNKNOWN if self.agent.is_some() => {
                let name = str_of(e.json("name")).unwrap_or_default();
                if !self.unknown_seen.insert(name.clone()) {
                    return Ok(());
                }
                let agent = crate::dialect::agent_display(self.agent.as_deref());
                (
                    Role::Dim,
                    format!("{agent} event {name} (not read; kept in the envelope)"),
                )
            }
            ev::UNKNOWN => (
                Role::Warn,
                format!(
                    "unknown {} {}",
                    str_of(e.json("kind")).unwrap_or_default(),
                    str_of(e.json("name")).unwrap_or_default()
                ),
            ),
            ev::RUN_ERROR => (
                Role::Error,
                format!(
                    "run error: {}",
                    str_of(e.json("detail"))
                        .or_else(|| str_of(e.json("cause")))
                        .unwrap_or_default()
                ),
            ),
            ev::CHILD_STDERR => (
                Role::Dim,
                format!("stderr: {}", str_of(e.json("text")).unwrap_or_default()),
            ),
            ev::HOOK_RESPONSE => (
                Role::Dim,
                format!(
                    "hook {} {}: {}",
                    str_of(e.json("hook_event")).unwrap_or_default(),
                    str_of(e.json("hook_name")).unwrap_or_default(),
                    str_of(e.json("outcome"))
                        .or_else(|| e.json("exit_code").map(|c| format!("exit {}", text(c))))
                        .unwrap_or_default()
                ),
            ),
            ev::TASK_STARTED => return Ok(()),
            ev::TASK_PROGRESS => {
                let t = format!(
                    "{} {}",
                    str_of(e.json("description")).unwrap_or_default(),
                    str_of(e.json("last_tool_name"))
                        .map(|l| format!("(last tool {l})"))
                        .unwrap_or_default()
                );
                (Role::Dim, t)
            }
            ev::TASK_NOTIFICATION => {
                if self.task_done(e)? {
                    return Ok(());
                }
                (
                    Role::Dim,
                    format!(
                        "task {}: {}",
                        str_of(e.json("status")).unwrap_or_default(),
                        str_of(e.json("summary")).unwrap_or_default()
                    ),
                )
            }
            ev::STATUS => match str_of(e.json("status")) {
                Some(st) if st != "requesting" => (Role::Dim, format!("status: {st}")),
                _ => return Ok(()),
            },
            ev::LOCAL_COMMAND_OUTPUT => (Role::Text, str_of(e.json("content")).unwrap_or_default()),
            ev::INFORMATIONAL | ev::NOTIFICATION => (
                if str_of(e.json("level")).as_deref() == Some("error") {
                    Role::Error
                } else {
                    Role::Dim
                },
                str_of(e.json("content"))
                    .or_else(|| str_of(e.json("text")))
                    .unwrap_or_else(|| meta.kind.into()),
            ),
            ev::SESSION_TITLE => (
                Role::Dim,
                format!("title: {}", str_of(e.json("title")).unwrap_or_default()),
            ),
            ev::SESSION_RESET => (Role::Warn, "session reset".into()),
            ev::USER_BLOCK => (
                Role::Prompt,
                format!(
                    "[{}]",
                    str_of(e.json("kind")).unwrap_or_else(|| "attachment".into())
                ),
            ),
            other => (Role::Dim, other.to_owned()),
        };
        let glyph = match role {
            Role::Error => self.t.g.error,
            Role::Warn => self.t.g.warn,
            _ => self.t.g.note,
        };
        let g = match meta.kind {
            ev::TASK_PROGRESS | ev::TASK_NOTIFICATION => self
                .subs
                .task_gutter(e.str("tool_use_id").as_deref())
                .unwrap_or_else(|| self.gutter(e)),
            _ => self.gutter(e),
        };
        let lead = format!("{glyph} ");
        self.t
            .untrusted_row(&g, 0, &[(role, &lead)], role, &one_line(&text, &self.t.g))
    }

    /// The session header: model, CLI version, directory, permission mode, tools.
    fn session(&mut self, e: &Fields<'_>) -> io::Result<()> {
        let dot = self.t.g.dot;
        let mut parts = vec![format!(
            "session {}",
            s(e.json("session_id"))
                .map(|id| id.chars().take(8).collect::<String>())
                .unwrap_or_else(|| "?".into())
        )];
        parts.extend(s(e.json("model")).map(|m| m.into_owned()));
        // Another agent's stream names it (crate::dialect); Claude Code's own says its version.
        let agent = s(e.json("agent"));
        self.agent = agent.as_deref().map(str::to_owned);
        self.calls.dialect = crate::dialect::Dialect::tools_of(agent.as_deref());
        let name = crate::dialect::agent_display(agent.as_deref());
        match s(e.json("cli_version")) {
            Some(v) => parts.push(format!("{name} {v}")),
            None if agent.is_some() => parts.push(name.to_owned()),
            None => {}
        }
        parts.extend(s(e.json("cwd")).map(|c| c.into_owned()));
        parts.extend(s(e.json("permission_mode")).map(|p| format!("mode {p}")));
        let count = |r: Option<&[u8]>| {
            r.and_then(|r| serde_json::from_slice::<Vec<serde::de::IgnoredAny>>(r).ok())
                .map_or(0, |v| v.len() as u64)
        };
        let tools = count(e.json("tools"));
        if tools > 0 {
            parts.push(plural(tools, "tool", "tools"));
        }
        let mcp = count(e.json("mcp_servers"));
        if mcp > 0 {
            parts.push(plural(mcp, "MCP server", "MCP servers"));
        }
        let line = one_line(&parts.join(&format!(" {dot} ")), &self.t.g);
        let lead = format!("{} ", self.t.g.rule.repeat(2));
        let g = self.gutter(e);
        self.t.row(&g, 0, &[(Role::Dim, &lead), (Role::Dim, &line)])
    }
}
