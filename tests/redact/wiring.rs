//! `--redact` reaches every output of normalize, spawn and replay: the envelope, the audit log,
//! the capture written by `--record` and the child's stderr. A secret planted in the input must
//! appear in none of them.
#![cfg(target_os = "linux")]

use crate::spawn::common as spawn_common;

use std::time::Duration;

use spawn_common::fake::*;
use spawn_common::*;

const PAT: &str = "ghp_R3dact1onW1r1ngT3stT0ken0123456789ab";

fn tool_result_line() -> String {
    format!(
        r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"token is {PAT}"}}]}},"session_id":"s1","parent_tool_use_id":null}}"#
    )
}

fn assert_clean(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    assert!(!text.contains(PAT), "{what} leaks the secret:\n{text}");
    assert!(
        text.contains("[REDACTED:github_token:"),
        "{what} has no placeholder:\n{text}"
    );
}

#[test]
fn spawn_redacts_envelope_audit_capture_and_stderr() {
    let d = Dirs::new();
    let mark = marker("redact");
    let line = tool_result_line();
    let bin = fake(
        &d,
        &format!("echo \"$INIT\"; echo '{line}'; echo 'warning: key {PAT}' >&2; echo \"$RESULT\""),
    );
    let audit = d.path().join("a.jsonl");
    let cap = d.path().join("c.jsonl");
    let c = spawn_cmd(
        &d,
        &bin,
        &mark,
        &[
            "--redact",
            "--redact-key",
            "k",
            "--stderr-events",
            "--audit",
            audit.to_str().unwrap(),
            "--record",
            cap.to_str().unwrap(),
            "--prompt",
            "hi",
        ],
    );
    let out = succeeded_within(c, Duration::from_secs(30));
    assert_clean("envelope", &out.stdout);
    assert!(String::from_utf8_lossy(&out.stdout).contains("child.stderr"));
    assert_clean("audit log", &std::fs::read(&audit).unwrap());
    assert_clean("capture", &std::fs::read(&cap).unwrap());
    assert!(!String::from_utf8_lossy(&out.stderr).contains(PAT));

    // Replaying the (redacted) capture gives the same events without --redact (minus the
    // `redactions` marks: the capture holds placeholders, not secrets).
    let replay = std::process::Command::new(env!("CARGO_BIN_EXE_boo-normalize"))
        .args(["replay", "--speed", "max", "--stderr-events"])
        .arg(&cap)
        .output()
        .unwrap();
    let live: Vec<serde_json::Value> = events(&out.stdout);
    let again: Vec<serde_json::Value> = events(&replay.stdout);
    let strip = |v: &[serde_json::Value]| -> Vec<String> {
        v.iter()
            .filter(|e| e["type"] != "run.end")
            .map(|e| {
                let mut e = e.clone();
                e.as_object_mut().unwrap().shift_remove("redactions");
                e.to_string()
            })
            .collect()
    };
    assert_eq!(strip(&live), strip(&again));
}

#[test]
fn normalize_and_replay_redact_before_every_sink() {
    let d = Dirs::new();
    let input = d.path().join("in.ndjson");
    std::fs::write(
        &input,
        format!("{INIT}\n{}\n{RESULT_OK}\n", tool_result_line()),
    )
    .unwrap();
    let cap = d.path().join("c.jsonl");
    let audit = d.path().join("a.jsonl");
    let bin = env!("CARGO_BIN_EXE_boo-normalize");
    let out = std::process::Command::new(bin)
        .args(["--redact", "--format", "sse", "--record"])
        .arg(&cap)
        .arg("--audit")
        .arg(&audit)
        .arg(&input)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_clean("sse", &out.stdout);
    assert_clean("audit", &std::fs::read(&audit).unwrap());
    assert_clean("capture", &std::fs::read(&cap).unwrap());

    let out = std::process::Command::new(bin)
        .args(["replay", "--redact"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_clean("replay", &out.stdout);
    let refused = std::process::Command::new(bin)
        .args(["replay", "--redact", "--raw"])
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
}
