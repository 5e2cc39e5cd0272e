//! The CLI's `can_use_tool` requests: each asked of the client as `session/request_permission`
//! (on a thread of its own), and answered to the CLI as the client said; nothing is allowed
//! that the client did not allow, and "always" is a session rule even when the CLI suggested
//! none.

use std::sync::Arc;
use std::thread;

use agent_client_protocol_schema::v1::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, ToolCallUpdate, ToolCallUpdateFields,
};
use serde_json::{Value, json};

use super::{Session, lock};
use crate::acp::tool;

/// A `can_use_tool` request of the CLI waiting for the client's answer.
pub(super) struct Pending {
    pub(super) tool_use_id: Option<String>,
}

pub(super) fn deny(message: &str, interrupt: bool) -> Value {
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

impl Session {
    pub(super) fn answer_permission(&self, request_id: &str, verdict: Value) {
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
