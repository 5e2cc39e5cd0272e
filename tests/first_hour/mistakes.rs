//! A newcomer's predictable mistakes, answered: a file saved with a UTF-8 byte order mark keeps
//! its first line (repaired and said so), and a machine without Claude Code history lists no
//! sessions (exit 0) and names the id it could not find.

use crate::common::{bin, events, root};

#[test]
fn a_byte_order_mark_is_dropped_and_said_so() {
    for fixture in [
        "fixtures/real/claude-clean__stream-json-simple.ndjson",
        "fixtures/agents/codex/0.171.0/bash.ndjson",
    ] {
        let plain = std::fs::read(root().join(fixture)).unwrap();
        let marked = [&b"\xEF\xBB\xBF"[..], &plain].concat();
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("bom.ndjson");
        std::fs::write(&f, &marked).unwrap();
        let out = bin().arg("--strict").arg(&f).output().unwrap();
        assert!(out.status.success(), "{fixture}: {out:?}");
        let ev = events(&out.stdout);
        assert_eq!(ev[0]["type"], "session.init", "{fixture}");
        let repaired: Vec<_> = ev.iter().filter(|e| e["type"] == "line.repaired").collect();
        assert_eq!(repaired.len(), 1, "{fixture}");
        assert_eq!(repaired[0]["kind"], "bom");
        assert_eq!(repaired[0]["line"], 1);
        let end = ev.last().unwrap();
        assert_eq!(end["stats"]["repaired"], 1);
        assert_eq!(end["stats"]["diagnostics"], 0);
        assert_eq!(end["stats"]["bytes"], marked.len() as u64);
        // Apart from the notice, the same events as without the mark.
        let unmarked = events(&bin().arg(root().join(fixture)).output().unwrap().stdout);
        let types = |v: &[serde_json::Value]| -> Vec<String> {
            v.iter()
                .filter(|e| e["type"] != "line.repaired" && e["type"] != "run.end")
                .map(|e| e["type"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(types(&ev), types(&unmarked), "{fixture}");
    }
}

#[test]
fn no_claude_code_history_is_no_sessions_and_names_the_id() {
    let home = tempfile::tempdir().unwrap();
    let out = bin()
        .arg("sessions")
        .env("HOME", home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no session transcripts"), "{err}");
    let out = bin()
        .arg("abc123")
        .env("HOME", home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("boo-normalize: session abc123: no such file"),
        "{err}"
    );
    // A directory named on the command line must exist.
    let out = bin()
        .args(["sessions"])
        .arg(home.path().join("nope"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such directory"));
}
