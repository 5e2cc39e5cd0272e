//! Issue 29 §1, "promises on odd but legal input", on the real binary: a directory among the
//! inputs, deep JSON, CRLF line ends, profile and normalize reading lines alike, values filled
//! from "the last message", one trace per invocation, and missing required members.

use std::path::{Path, PathBuf};

use crate::common::{self, bin, events, of_type, run};

/// A small real capture with a `result` line.
fn capture() -> PathBuf {
    common::root().join("fixtures/real/terragon__bash.ndjson")
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

// ---- 1. a directory (or an unreadable path) among the inputs ----

/// Every command that reads stream-json files refuses a directory before any output, like a
/// missing file: exit 2, `boo-normalize: DIR: Is a directory`, and no audit log is started.
#[test]
fn directory_among_inputs_is_refused_before_any_output() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("somedir");
    std::fs::create_dir(&dir).unwrap();
    let audit = d.path().join("a.jsonl");
    let cap = capture();
    let (c, s) = (path_str(&cap), path_str(&dir));
    let cases: Vec<Vec<&str>> = vec![
        vec![c, s],
        vec![s, c],
        vec!["normalize", "--format", "otlp", c, s],
        vec!["--audit", path_str(&audit), c, s],
        vec!["redact", c, s],
        vec!["replay", "--speed", "max", c, s],
        vec!["replay", "--raw", c, s],
        vec!["audit", "verify", s],
    ];
    for args in cases {
        let o = run(&args, b"");
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?}: output before the refusal");
        let want = format!("boo-normalize: {s}: Is a directory");
        assert!(stderr(&o).starts_with(&want), "{args:?}: {}", stderr(&o));
    }
    assert!(
        std::fs::metadata(&audit).map_or(true, |m| m.len() == 0),
        "an audit log was started for a refused run"
    );
}

/// An input that opens but fails mid-run (`/proc/self/mem` reads as an I/O error) cannot be
/// refused first: the run still ends with `run.end` (cause `input_failed`, naming the input) on
/// stdout and in the audit log, which verifies as complete; exit 2 with the OS error.
#[cfg(target_os = "linux")]
#[test]
fn input_failing_mid_run_still_ends_with_run_end() {
    let d = tempfile::tempdir().unwrap();
    let audit = d.path().join("a.jsonl");
    let cap = capture();
    let o = run(
        &[
            "--audit",
            path_str(&audit),
            path_str(&cap),
            "/proc/self/mem",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("boo-normalize: /proc/self/mem: Input/output error"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("no result"), "{}", stderr(&o));
    let ev = events(&o.stdout);
    let end = ev.last().expect("events");
    assert_eq!(end["type"], "run.end");
    assert_eq!(end["cause"], "input_failed");
    assert_eq!(end["input"], "/proc/self/mem");
    assert!(
        end["error"]
            .as_str()
            .unwrap()
            .contains("Input/output error")
    );
    assert_eq!(
        of_type(&ev, "turn.end").len(),
        1,
        "the first input was read"
    );
    let v = bin()
        .args(["audit", "verify", "--require-complete", path_str(&audit)])
        .output()
        .unwrap();
    assert_eq!(v.status.code(), Some(0), "{}", stderr(&v));
}
