//! `kill -9` against the real binary: of the process the caller started (the guardian), of the
//! worker that runs the supervisor, and what a follower, `audit verify` and `replay` make of the
//! files such a run leaves.
#![cfg(target_os = "linux")]

use crate::spawn::common as spawn_common;

use std::fs;
use std::io::BufReader;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use spawn_common::fake::*;
use spawn_common::*;

/// A fake claude that starts background processes of every kind (same group, `setsid`, a
/// double fork out of a new session), then says init and waits.
const SCATTER: &str = "sleep 301 & setsid sleep 302 & (setsid sh -c 'sleep 303 & sleep 304' &); \
    sh -c '(sleep 305 &); true'; sleep 0.2; echo \"$INIT\"; exec sleep 300";

/// The worker: the guardian's child.
fn worker_of(guardian: u32) -> i32 {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        for e in fs::read_dir("/proc").unwrap().flatten() {
            let stat = fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                continue;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            if f.len() > 1 && f[1] == guardian.to_string() && stat.contains("(boo-normalize)") {
                return stat.split(' ').next().unwrap().parse().unwrap();
            }
        }
        assert!(Instant::now() < until, "no worker process under {guardian}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill9(pid: i32) {
    let st = Command::new("kill").args(["-9", &pid.to_string()]).status();
    assert!(st.unwrap().success());
}

/// Start a run of SCATTER with an audit log and a capture; returns once init was read.
fn start_scatter(
    d: &Dirs,
    mark: &str,
) -> (std::process::Child, BufReader<std::process::ChildStdout>) {
    let bin = fake(d, SCATTER);
    let mut c = spawn_cmd(d, &bin, mark, &["--prompt", "hi"]);
    c.arg("--audit").arg(d.path().join("a.jsonl"));
    c.arg("--record").arg(d.path().join("c.jsonl"));
    c.stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = c.spawn().unwrap();
    let mut r = BufReader::new(child.stdout.take().unwrap());
    read_until(&mut r, |e| e["type"] == "session.init");
    // Let the double fork settle.
    std::thread::sleep(Duration::from_millis(300));
    (child, r)
}

#[test]
fn kill_9_of_boo_normalize_leaves_no_process() {
    let d = Dirs::new();
    let mark = marker("kill9");
    let (mut child, _r) = start_scatter(&d, &mark);
    assert!(procs_with(&mark).len() >= 7, "{:?}", procs_with(&mark));
    kill9(child.id() as i32);
    let _ = child.wait();
    assert_no_procs(&mark, Duration::from_secs(2));
    // The worker still ended the audit log and the capture.
    let audit = d.path().join("a.jsonl");
    let v = audit_verify(&audit, &[]);
    assert!(v.status.success());
    assert!(
        v.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&v.stderr)
    );
    let end = &last_record(&audit)["event"];
    assert_eq!(end["type"], "run.end");
    assert_eq!(end["reason"], "supervisor_killed");
    assert_eq!(last_record(&d.path().join("c.jsonl"))["rec"], "end");
}

#[test]
fn kill_9_of_the_worker_leaves_no_process() {
    let d = Dirs::new();
    let mark = marker("kill9w");
    let (mut child, _r) = start_scatter(&d, &mark);
    kill9(worker_of(child.id()));
    let t0 = Instant::now();
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(137));
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    assert_no_procs(&mark, Duration::from_secs(2));
}

/// The writer of a followed capture and audit log dies without an end record: the follower
/// ends with `run.end` (cause `writer_vanished`) and exit 3; one started afterwards ends at once.
#[test]
fn follow_of_a_killed_writer_ends() {
    let d = Dirs::new();
    let mark = marker("follow");
    let (mut child, _r) = start_scatter(&d, &mark);
    let follow = |file: &str| {
        let mut c = Command::new(BIN);
        c.args(["replay", "--follow"]).arg(d.path().join(file));
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        c.spawn().unwrap()
    };
    let followers = [follow("c.jsonl"), follow("a.jsonl")];
    std::thread::sleep(Duration::from_millis(500));
    kill9(worker_of(child.id()));
    let _ = child.wait();
    let t0 = Instant::now();
    for f in followers {
        let out = wait_within(f, Duration::from_secs(10));
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
        assert_eq!(out.status.code(), Some(3));
        let ev = events(&out.stdout);
        assert_eq!(run_end(&ev)["cause"], "writer_vanished");
        assert_eq!(of_type(&ev, "session.init").len(), 1);
        assert!(String::from_utf8_lossy(&out.stderr).contains("is gone"));
    }
    for file in ["c.jsonl", "a.jsonl"] {
        let t0 = Instant::now();
        let out = wait_within(follow(file), Duration::from_secs(10));
        assert!(
            t0.elapsed() < Duration::from_secs(2),
            "{file}: {:?}",
            t0.elapsed()
        );
        assert_eq!(run_end(&events(&out.stdout))["cause"], "writer_vanished");
        assert_eq!(out.status.code(), Some(3));
    }
    // Without --follow the cut capture says so instead of a normal end of file.
    let out = Command::new(BIN)
        .args(["replay", "--speed", "max"])
        .arg(d.path().join("c.jsonl"))
        .output()
        .unwrap();
    assert_eq!(run_end(&events(&out.stdout))["cause"], "recording_cut");
    // And audit verify calls the run incomplete.
    let audit = d.path().join("a.jsonl");
    let v = audit_verify(&audit, &[]);
    assert!(v.status.success());
    let run_id = last_record(&audit)["run_id"].as_str().unwrap().to_owned();
    assert_eq!(
        String::from_utf8_lossy(&v.stderr),
        format!(
            "{}: run {run_id}: incomplete: no run.end\n",
            audit.display()
        )
    );
    let v = audit_verify(&audit, &["--require-complete"]);
    assert_eq!(v.status.code(), Some(1));
    assert_no_procs(&mark, Duration::from_secs(2));
}
