//! Readers that stop reading, and a child that floods stderr, against the real binary: timers
//! and signals still act on time, the audit log still gets every event, memory stays bounded.
#![cfg(target_os = "linux")]

use crate::spawn::common as spawn_common;

use std::fs;
use std::io::Read;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use spawn_common::fake::*;
use spawn_common::*;

/// A fake claude writing envelope-worthy stdout lines as fast as it can, forever.
const FIREHOSE: &str = "echo \"$INIT\"; \
    yes '{\"type\":\"assistant\",\"session_id\":\"s1\",\"message\":{\"id\":\"m1\",\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"a line of text a line of text a line of text\"}]}}'";

/// Wait for exit without reading anything; fail (after killing) past `max`.
fn exit_within(child: &mut Child, max: Duration) -> std::process::ExitStatus {
    let until = Instant::now() + max;
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if Instant::now() >= until {
            let _ = child.kill();
            panic!("still running after {max:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Peak resident memory (VmHWM, KiB) of a process, or 0 once gone.
fn hwm_kib(pid: u32) -> u64 {
    let s = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn last_audit_event(p: &std::path::Path) -> Value {
    last_record(p)["event"].clone()
}

/// Nobody reads stdout (the pipe stays open): `--timeout` still stops the run, boo-normalize
/// exits within the grace steps plus about a second with the timeout status, the audit log has
/// every event through `run.end`, and memory stays bounded meanwhile.
#[test]
fn timeout_wins_over_a_reader_that_never_reads_stdout() {
    let d = Dirs::new();
    let mark = marker("stuckout");
    let bin = fake(&d, FIREHOSE);
    let audit = d.path().join("a.jsonl");
    let mut c = spawn_cmd(&d, &bin, &mark, &["--prompt", "hi", "--timeout", "2s"]);
    c.args(["--grace", "1s"]).arg("--audit").arg(&audit);
    c.stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let _stdout_never_read = child.stdout.take();
    let t0 = Instant::now();
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() && t0.elapsed() < Duration::from_secs(2) {
        for p in procs_with(&mark) {
            if p.1.contains("boo-normalize") {
                peak = peak.max(hwm_kib(p.0 as u32));
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // timeout 2 s + at most 3 grace steps + 1 s for the stuck stdout, with slack for a loaded box.
    let st = exit_within(&mut child, Duration::from_secs(12));
    assert_eq!(st.code(), Some(124));
    assert!(
        peak < 64 * 1024,
        "peak RSS {peak} KiB while stdout was not read"
    );
    let end = last_audit_event(&audit);
    assert_eq!(end["type"], "run.end");
    assert_eq!(end["cause"], "timeout");
    let v = audit_verify(&audit, &["--require-complete"]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
    assert_no_procs(&mark, Duration::from_secs(2));
}

/// Nobody reads stdout, and the run is interrupted: SIGTERM acts on time too.
#[test]
fn sigterm_wins_over_a_reader_that_never_reads_stdout() {
    let d = Dirs::new();
    let mark = marker("stuckterm");
    let bin = fake(&d, FIREHOSE);
    let audit = d.path().join("a.jsonl");
    let mut c = spawn_cmd(&d, &bin, &mark, &["--prompt", "hi", "--grace", "1s"]);
    c.arg("--audit").arg(&audit);
    c.stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let _stdout_never_read = child.stdout.take();
    std::thread::sleep(Duration::from_millis(1500));
    send_signal(child.id(), "TERM");
    let st = exit_within(&mut child, Duration::from_secs(8));
    assert_eq!(st.code(), Some(143));
    assert_eq!(last_audit_event(&audit)["cause"], "interrupted");
    assert_no_procs(&mark, Duration::from_secs(2));
}

/// Nobody reads stderr while the child floods it: the run still times out on time, and the
/// dropped lines are counted in `run.end`.
#[test]
fn timeout_wins_over_a_reader_that_never_reads_stderr() {
    let d = Dirs::new();
    let mark = marker("stuckerr");
    let bin = fake(&d, "echo \"$INIT\"; yes 'warning: something on stderr' >&2");
    let mut c = spawn_cmd(&d, &bin, &mark, &["--prompt", "hi", "--timeout", "1s"]);
    c.args(["--grace", "1s"]);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let _stderr_never_read = child.stderr.take();
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let st = exit_within(&mut child, Duration::from_secs(10));
    assert_eq!(st.code(), Some(124));
    let ev = events(reader.join().unwrap().as_bytes());
    let end = run_end(&ev);
    assert_eq!(end["cause"], "timeout");
    assert!(end["stderr_dropped"].as_u64().unwrap() > 0, "{end}");
    assert_no_procs(&mark, Duration::from_secs(2));
}

/// 300 MB of stderr costs a few MB: peak memory of boo-normalize measured from /proc.
#[test]
fn stderr_flood_keeps_memory_bounded() {
    let d = Dirs::new();
    let mark = marker("flood");
    let bin = fake(
        &d,
        "echo \"$INIT\"; yes 'a stderr line of about one hundred bytes, repeated until three hundred megabytes are out' | head -c 300000000 >&2; echo \"$RESULT\"",
    );
    let mut c = spawn_cmd(&d, &bin, &mark, &["--prompt", "hi"]);
    c.stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        for p in procs_with(&mark) {
            if p.1.contains("boo-normalize") {
                peak = peak.max(hwm_kib(p.0 as u32));
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let st = exit_within(&mut child, Duration::from_secs(120));
    assert_eq!(st.code(), Some(0));
    let ev = events(reader.join().unwrap().as_bytes());
    assert_eq!(run_end(&ev)["cause"], "exit");
    assert!(peak > 0);
    assert!(
        peak < 32 * 1024,
        "peak RSS {peak} KiB for a 300 MB stderr flood"
    );
}
