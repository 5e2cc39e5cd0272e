//! `normalize` stopped by SIGTERM, SIGINT or SIGHUP while it waits on a pipe that stays open,
//! and `replay --follow` while it waits for a file to grow: every sink ends with `run.end`
//! (`interrupted`, the signal's name) and the exit status is 128 + N.
#![cfg(target_os = "linux")]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{BIN, events, root};

/// The first five lines of a real run: an init, messages and a tool call, no result.
fn five_lines() -> Vec<u8> {
    let all = std::fs::read(root().join("fixtures/real/terragon__bash.ndjson")).unwrap();
    let text = String::from_utf8(all).unwrap();
    let mut out = String::new();
    for l in text.lines().take(5) {
        out.push_str(l);
        out.push('\n');
    }
    out.into_bytes()
}

/// Wait until `out` holds `n` lines (at most 20 s).
fn wait_for_lines(out: &Path, n: usize) {
    let until = Instant::now() + Duration::from_secs(20);
    while std::fs::read(out)
        .unwrap()
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        < n
    {
        assert!(Instant::now() < until, "no events within 20 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Start `normalize --audit AUDIT` on a pipe kept open, write five lines, wait until events
/// went out, send `sig`: its exit status, stdout and stderr.
fn stopped_by(sig: &str, audit: &Path, out: &Path) -> (Option<i32>, Vec<u8>, String) {
    let mut child = Command::new(BIN)
        .arg("--audit")
        .arg(audit)
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create(out).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&five_lines()).unwrap();
    stdin.flush().unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    while std::fs::read(out)
        .unwrap()
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        < 3
    {
        assert!(Instant::now() < until, "no events within 20 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    let st = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(st.success());
    let sent = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if sent.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("normalize did not end within 10 s of {sig}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // The writer end stays open the whole time: only the signal ended the run.
    drop(stdin);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    (status.code(), std::fs::read(out).unwrap(), err)
}

#[test]
fn a_signal_ends_every_sink_with_run_end_interrupted() {
    for (sig, code) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
        let d = tempfile::tempdir().unwrap();
        let audit = d.path().join("run.audit.jsonl");
        let (status, stdout, stderr) = stopped_by(sig, &audit, &d.path().join("out.ndjson"));
        assert_eq!(status, Some(code), "SIG{sig}; stderr: {stderr}");
        assert_eq!(stderr, "", "SIG{sig}");
        let ev = events(&stdout);
        assert!(ev.iter().any(|e| e["type"] == "tool.call"), "SIG{sig}");
        let end = ev.last().unwrap();
        assert_eq!(end["type"], "run.end", "SIG{sig}: {end}");
        assert_eq!(end["cause"], "interrupted", "SIG{sig}: {end}");
        assert_eq!(end["reason"], format!("SIG{sig}"), "SIG{sig}: {end}");
        assert_eq!(end["stats"]["lines"], 5, "SIG{sig}: {end}");
        let v = Command::new(BIN)
            .args(["audit", "verify", "--require-complete"])
            .arg(&audit)
            .output()
            .unwrap();
        assert!(
            v.status.success(),
            "SIG{sig}: {}{}",
            String::from_utf8_lossy(&v.stdout),
            String::from_utf8_lossy(&v.stderr)
        );
        let text = std::fs::read_to_string(&audit).unwrap();
        let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(last["event"]["cause"], "interrupted", "SIG{sig}");
        assert_eq!(last["event"]["reason"], format!("SIG{sig}"), "SIG{sig}");
    }
}

/// `replay --follow` of a file that stops growing (no `result` yet): a signal ends the wait with
/// `run.end` (`interrupted`) and 128 + N, as `normalize`.
#[test]
fn a_signal_ends_a_follower_with_run_end_interrupted() {
    let d = tempfile::tempdir().unwrap();
    let growing = d.path().join("growing.ndjson");
    std::fs::write(&growing, five_lines()).unwrap();
    let out = d.path().join("out.ndjson");
    let mut child = Command::new(BIN)
        .args(["replay", "--follow"])
        .arg(&growing)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_lines(&out, 3);
    let st = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(st.success());
    let until = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > until {
            let _ = child.kill();
            panic!("replay --follow did not end within 10 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(143));
    let ev = events(&std::fs::read(&out).unwrap());
    let end = ev.last().unwrap();
    assert_eq!(end["type"], "run.end", "{end}");
    assert_eq!(end["cause"], "interrupted", "{end}");
    assert_eq!(end["reason"], "SIGTERM", "{end}");
}
