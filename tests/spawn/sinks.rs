//! `spawn` with the output options: SSE on stdout, the audit log and an envelope copy from the
//! same live run (a fake `claude`), all with the same seqs, and the audit log verifies.
#![cfg(target_os = "linux")]

use crate::spawn::common as spawn_common;

use std::time::Duration;

use spawn_common::fake::*;
use spawn_common::*;

#[test]
fn spawn_writes_sse_audit_and_envelope_from_one_run() {
    let d = Dirs::new();
    let mark = marker("sinks");
    let bin = fake(&d, "echo \"$INIT\"; echo \"$BASH_CALL\"; echo \"$RESULT\"");
    let audit = d.path().join("run.audit.jsonl");
    let env = d.path().join("run.ndjson");
    let c = spawn_cmd(
        &d,
        &bin,
        &mark,
        &[
            "--format",
            "sse",
            "--audit",
            audit.to_str().unwrap(),
            "--envelope",
            env.to_str().unwrap(),
            "--run-id",
            "spawn-1",
            "--prompt",
            "hi",
        ],
    );
    let out = succeeded_within(c, Duration::from_secs(30));
    let envelope = events(&std::fs::read(&env).unwrap());
    check_envelope(&envelope);
    assert!(!of_type(&envelope, "tool.call").is_empty());
    let sse = String::from_utf8(out.stdout).unwrap();
    assert!(sse.starts_with("retry: 3000\n\n"));
    let ids: Vec<String> = sse
        .lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .map(str::to_owned)
        .collect();
    let seqs: Vec<String> = envelope.iter().map(|e| e["seq"].to_string()).collect();
    assert_eq!(ids, seqs);
    let records = events(&std::fs::read(&audit).unwrap());
    assert_eq!(records.len(), envelope.len());
    for (r, e) in records.iter().zip(&envelope) {
        assert_eq!(r["run_id"], "spawn-1");
        assert_eq!(&r["event"], e);
    }
    let v = std::process::Command::new(BIN)
        .args(["audit", "verify"])
        .arg(&audit)
        .output()
        .unwrap();
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
}

#[test]
fn spawn_sends_sse_keep_alives_while_the_child_is_quiet() {
    let d = Dirs::new();
    let mark = marker("keepalive");
    let bin = fake(&d, "echo \"$INIT\"; sleep 1.2; echo \"$RESULT\"");
    let c = spawn_cmd(
        &d,
        &bin,
        &mark,
        &["--format", "sse", "--keep-alive", "300ms", "--prompt", "hi"],
    );
    let out = succeeded_within(c, Duration::from_secs(30));
    let sse = String::from_utf8(out.stdout).unwrap();
    let n = sse.matches(": keep-alive").count();
    assert!((2..=5).contains(&n), "{n} keep-alives in {sse}");
    // Keep-alives sit between events, never inside one.
    let init = sse.find("event: session.init").unwrap();
    let first_ka = sse.find(": keep-alive").unwrap();
    let end = sse.find("event: turn.end").unwrap();
    assert!(init < first_ka && first_ka < end);
}
