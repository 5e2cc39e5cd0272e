//! The same run beyond the ACP connection: `--audit` (verifies, the session id is the run id),
//! `--envelope`, and `--redact` applied before anything leaves the process (the ACP updates
//! included), while the CLI still gets its own tool input back.

use std::fs;

use serde_json::{Value, json};

use super::env;
use crate::spawn::common::audit_verify;

#[test]
fn audit_envelope_and_redaction_see_the_same_run() {
    let Some(e) = env("acp_outputs") else { return };
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let api = e.api(json!({"responses": [
        {"label": "bash", "content": [{"type": "tool_use", "name": "Bash", "input": {"command": format!("echo {secret} > token.txt && cat token.txt"), "description": "Write the token"}}]},
        {"label": "end", "content": [{"type": "text", "text": format!("The token is {secret}.")}]}
    ]}));
    let audit = e.d.path().join("run.audit.jsonl");
    let envelope = e.d.path().join("run.ndjson");
    let r = e.drive(
        &api,
        &[
            "--audit",
            audit.to_str().unwrap(),
            "--envelope",
            envelope.to_str().unwrap(),
            "--redact",
        ],
        json!(["allow"]),
        json!([
            {"op": "initialize"},
            {"op": "new", "as": "s"},
            {"op": "prompt", "session": "s", "text": "write the token", "as": "p"}
        ]),
    );
    assert_eq!(r.stop("p"), "end_turn");
    // The CLI ran the command it asked for (not the redacted one).
    assert_eq!(
        fs::read_to_string(e.d.work.join("token.txt"))
            .unwrap()
            .trim(),
        secret
    );
    // Nothing the client got holds the secret: text, tool input, tool output, permission request.
    for m in &r.trace {
        assert!(
            !m.to_string().contains(secret),
            "the secret reached the client: {m}"
        );
    }
    assert!(r.text("s", "agent_message_chunk").contains("The token is"));
    // The audit log verifies, as one run whose id is the session id.
    let out = audit_verify(&audit, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = fs::read_to_string(&audit).unwrap();
    assert!(!text.contains(secret), "the secret reached the audit log");
    let sid = r.v["sessions"]["s"].as_str().unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["run_id"], sid, "{first}");
    // The envelope has the run's tool call and turn end.
    let ev: Vec<Value> = fs::read_to_string(&envelope)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        ev.iter()
            .any(|e| e["type"] == "tool.call" && e["name"] == "Bash")
    );
    assert!(ev.iter().any(|e| e["type"] == "turn.end"));
    assert_eq!(ev.last().unwrap()["type"], "run.end");
    for e in &ev {
        assert!(
            !e.to_string().contains(secret),
            "the secret reached the envelope: {e}"
        );
    }
}
