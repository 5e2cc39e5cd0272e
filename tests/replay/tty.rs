//! Replay details that need a terminal or a clock: the progress bar (shown on a terminal stderr
//! for long replays, never in `--as-claude`), and a timed resume continuing in real time from the
//! resume point.

#![cfg(unix)]

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::bin;
use serde_json::json;

/// A capture of `n` unknown-type lines, `gap_us` apart, with a stderr line and an end.
fn slow_capture(path: &Path, n: u64, gap_us: u64) {
    let mut text =
        json!({"rec":"header","format":"boo-capture","version":1,"run_id":"r"}).to_string() + "\n";
    for i in 0..n {
        let line = format!(r#"{{"type":"x_test","n":{i}}}"#);
        text += &format!("{}\n", json!({"rec":"out","at_us":i * gap_us,"line":line}));
    }
    text += &format!(
        "{}\n",
        json!({"rec":"err","at_us":n * gap_us,"line":"recorded stderr"})
    );
    text += &format!(
        "{}\n",
        json!({"rec":"end","at_us":n * gap_us,"exit_code":0,"signal":null,"run_end":{"cause":"exit"}})
    );
    std::fs::write(path, text).unwrap();
}

/// Run `shell` under a pseudo-terminal with `script`; `None` when util-linux `script` is missing.
fn under_pty(shell: &str) -> Option<Vec<u8>> {
    let out = Command::new("script")
        .args(["-qec", shell, "/dev/null"])
        .output()
        .ok()?;
    assert!(matches!(out.status.code(), Some(0 | 3)), "{shell}: {out:?}");
    Some(out.stdout)
}

#[test]
fn progress_bar_only_on_a_terminal_and_never_as_claude() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("slow.jsonl");
    slow_capture(&cap, 30, 50_000);
    let exe = env!("CARGO_BIN_EXE_boo-normalize");
    let out = dir.path().join("out.ndjson");
    let cmd = format!(
        "'{exe}' replay --speed 1 '{}' > '{}'",
        cap.display(),
        out.display()
    );
    let Some(tty) = under_pty(&cmd) else {
        eprintln!("SKIP: util-linux `script` is not installed; progress bar not tested");
        return;
    };
    let tty = String::from_utf8_lossy(&tty);
    assert!(
        tty.contains("replay") && tty.contains("KiB"),
        "no bar: {tty:?}"
    );
    // The bar never touches stdout.
    let plain = bin()
        .args(["replay", "--speed", "max"])
        .arg(&cap)
        .output()
        .unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), plain.stdout);
    // --no-progress, and --as-claude (whose stderr is the recorded one), show none.
    let cmd = format!(
        "'{exe}' replay --no-progress --allow-no-result --speed 1 '{}' > /dev/null",
        cap.display()
    );
    assert_eq!(under_pty(&cmd).unwrap(), b"");
    let cmd = format!(
        "'{exe}' replay --as-claude '{}' -p x > /dev/null",
        cap.display()
    );
    let tty = under_pty(&cmd).unwrap();
    assert_eq!(String::from_utf8_lossy(&tty).trim_end(), "recorded stderr");
}

#[test]
fn timed_resume_skips_ahead_then_keeps_real_time() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("c.jsonl");
    // Lines every 100 ms; resuming at the 8th event must not wait 700 ms for it.
    slow_capture(&cap, 10, 100_000);
    let full = bin()
        .args(["replay", "--speed", "max"])
        .arg(&cap)
        .output()
        .unwrap();
    let all = String::from_utf8(full.stdout).unwrap();
    let start = Instant::now();
    let out = bin()
        .args(["replay", "--speed", "1", "--from-seq", "7"])
        .arg(&cap)
        .output()
        .unwrap();
    let took = start.elapsed();
    let tail: String = all.lines().skip(7).map(|l| format!("{l}\n")).collect();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), tail);
    // Events 7, 8, 9 and the end: 0 + 100 + 100 + 100 ms after the resume point.
    assert!(
        took >= Duration::from_millis(290) && took < Duration::from_millis(650),
        "resumed replay took {took:?}"
    );
}
