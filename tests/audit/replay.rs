//! The audit log is reproducible: `normalize --record CAP --audit A` and then `replay CAP
//! --format audit` (or a replay of the audit log itself) write the same bytes, because the
//! live run's clock follows the recorder's times and replay reuses the run id and times.

use crate::common;

use std::path::Path;

use common::{bin, fixtures};

fn ok(args: &[&std::ffi::OsStr]) -> Vec<u8> {
    let out = bin().args(args).output().unwrap();
    // 3: the capture has no result line (a run.error precedes run.end, replayed alike).
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn check(input: &Path, dir: &Path) {
    let cap = dir.join("cap.jsonl");
    let audit = dir.join("audit.jsonl");
    let _ = std::fs::remove_file(&audit);
    ok(&[
        "--record".as_ref(),
        cap.as_os_str(),
        "--audit".as_ref(),
        audit.as_os_str(),
        input.as_os_str(),
    ]);
    let live = std::fs::read(&audit).unwrap();
    assert!(boo_normalize::audit::verify::verify(&live[..]).is_ok());
    for src in [&cap, &audit] {
        let replayed = ok(&[
            "replay".as_ref(),
            "--speed".as_ref(),
            "max".as_ref(),
            "--format".as_ref(),
            "audit".as_ref(),
            src.as_os_str(),
        ]);
        assert!(
            replayed == live,
            "{}: replay of {} differs from the live audit log",
            input.display(),
            src.display()
        );
    }
    // --fresh-ids: same events, new run id and times.
    let fresh = ok(&[
        "replay".as_ref(),
        "--speed".as_ref(),
        "max".as_ref(),
        "--fresh-ids".as_ref(),
        "--format".as_ref(),
        "audit".as_ref(),
        cap.as_os_str(),
    ]);
    assert_ne!(fresh, live);
    let events = |b: &[u8]| -> Vec<serde_json::Value> {
        common::events(b)
            .into_iter()
            .map(|r| r["event"].clone())
            .collect()
    };
    assert_eq!(events(&fresh), events(&live));
}

#[test]
fn replayed_audit_logs_are_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    for f in fixtures().iter().step_by(5) {
        check(f, dir.path());
    }
    // CRLF, invalid UTF-8 and a last line without newline survive the round trip too.
    let odd = dir.path().join("odd.ndjson");
    std::fs::write(
        &odd,
        b"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\"}\r\nnot json \xff\n{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\"}",
    )
    .unwrap();
    check(&odd, dir.path());
}
