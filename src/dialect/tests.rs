//! Recognising each agent's stream from its lines, and the messages for a wrong choice.

use super::*;

fn rec(line: &str) -> Option<Dialect> {
    detect(line.as_bytes())
}

#[test]
fn each_dialect_is_recognised_from_its_lines() {
    let cases = [
        (
            r#"{"type":"thread.started","thread_id":"t"}"#,
            Dialect::Codex,
        ),
        (
            r#"{"type":"error","message":"Reconnecting... 1/5"}"#,
            Dialect::Codex,
        ),
        (
            r#"{"type":"init","timestamp":"2026-01-01T00:00:00Z","session_id":"s","model":"m"}"#,
            Dialect::Gemini,
        ),
        (
            r#"{"type":"step_start","timestamp":1,"sessionID":"s","part":{}}"#,
            Dialect::OpenCode,
        ),
        (
            r#"{"type":"session.start","data":{},"id":"e","timestamp":"t"}"#,
            Dialect::Copilot,
        ),
        (
            r#"{"type":"tool_call","subtype":"started","call_id":"c","session_id":"s"}"#,
            Dialect::Cursor,
        ),
        (
            r#"{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/","session_id":"s","model":"Auto","permissionMode":"default"}"#,
            Dialect::Cursor,
        ),
        (
            r#"{"type":"system","subtype":"init","session_id":"s","qwen_code_version":"0.24.4"}"#,
            Dialect::Qwen,
        ),
        (
            r#"{"type":"system","subtype":"session_start","session_id":"s"}"#,
            Dialect::Qwen,
        ),
        (
            r#"{"type":"system","subtype":"init","session_id":"T-1","tools":[]}"#,
            Dialect::Amp,
        ),
        (
            r#"{"type":"system","subtype":"init","session_id":"s","apiKeySource":"none","tools":[],"claude_code_version":"2.1.3"}"#,
            Dialect::Claude,
        ),
    ];
    for (line, want) in cases {
        assert_eq!(rec(line), Some(want), "{line}");
    }
}

#[test]
fn transcripts_and_other_lines_are_not_a_dialect() {
    assert_eq!(
        rec(r#"{"type":"user","parentUuid":null,"uuid":"u","sessionId":"s","session_id":"T-1"}"#),
        None
    );
    assert_eq!(rec(r#"{"v":1,"seq":0,"type":"session.init"}"#), None);
    assert_eq!(rec("banner\n{\"a\":1}\n"), None);
    // The first line that tells decides.
    assert_eq!(
        rec(
            "YOLO mode\n{\"type\":\"init\",\"timestamp\":\"x\",\"session_id\":\"s\",\"model\":\"m\"}\n"
        ),
        Some(Dialect::Gemini)
    );
}
