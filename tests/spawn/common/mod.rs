//! Helpers shared by the `spawn` integration tests: running the binary, reading its envelope,
//! and checking `/proc` for processes a run left behind.
#![allow(dead_code)]

pub mod fake;

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use crate::common::{BIN, of_type};

/// A unique marker (pid + counter + time), put in argv and in the environment of everything a
/// run starts, so leftovers can be found in `/proc`. Dropping it (also when a test fails)
/// kills whatever still carries it, so a failing test does not leak processes.
pub struct Mark(String);

impl std::ops::Deref for Mark {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Mark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Drop for Mark {
    fn drop(&mut self) {
        kill_marked(&self.0);
    }
}

/// A new [`Mark`].
pub fn marker(tag: &str) -> Mark {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    Mark(format!("BOOMARK_{tag}_{}_{n}_{t}", std::process::id()))
}

/// A `boo-normalize` command with a clean environment: PATH, HOME and `BOO_TEST_MARK` only.
pub fn command(home: &Path, mark: &str) -> Command {
    let mut c = Command::new(BIN);
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("LANG", "C.UTF-8")
        .env("BOO_TEST_MARK", mark)
        .stdin(Stdio::null());
    c
}

/// The envelope lines of `out` (each must be JSON; a child's bytes may not be UTF-8).
pub use crate::common::events_lossy as events;

/// `boo-normalize audit verify ARGS… FILE`.
pub fn audit_verify(file: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(["audit", "verify"])
        .args(args)
        .arg(file)
        .output()
        .unwrap()
}

/// The last line of a JSONL file, parsed.
pub fn last_record(p: &Path) -> Value {
    let text = fs::read_to_string(p).unwrap();
    serde_json::from_str(text.lines().last().unwrap()).unwrap()
}

/// The last event, which must be `run.end`.
pub fn run_end(ev: &[Value]) -> &Value {
    let last = ev.last().expect("no events");
    assert_eq!(last["type"], "run.end", "last event: {last}");
    last
}

/// Checks the envelope invariants every run keeps: seq 0.. without gaps, run.end last.
pub fn check_envelope(ev: &[Value]) {
    for (i, e) in ev.iter().enumerate() {
        assert_eq!(e["v"], 1);
        assert_eq!(e["seq"], i as u64, "seq gap at {e}");
    }
    run_end(ev);
}

/// Processes (pid, cmdline) whose command line or environment contains `mark`, other than
/// this test process.
pub fn procs_with(mark: &str) -> Vec<(i32, String)> {
    let me = std::process::id() as i32;
    let mut out = Vec::new();
    let Ok(dir) = fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let cmd = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let env = fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let hit = |b: &[u8]| b.windows(mark.len()).any(|w| w == mark.as_bytes());
        if hit(&cmd) || hit(&env) {
            let shown = String::from_utf8_lossy(&cmd).replace('\0', " ");
            out.push((pid, shown));
        }
    }
    out
}

/// Wait until no process carries `mark` (up to `max`), then assert so; kills leftovers so a
/// failing test does not leak them.
pub fn assert_no_procs(mark: &str, max: Duration) {
    let until = Instant::now() + max;
    loop {
        let left = procs_with(mark);
        if left.is_empty() {
            return;
        }
        if Instant::now() >= until {
            for (pid, _) in &left {
                let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            }
            panic!("processes left behind by the run: {left:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Kill (SIGKILL) every process carrying `mark`; returns how many there were.
pub fn kill_marked(mark: &str) -> usize {
    let left = procs_with(mark);
    for (pid, _) in &left {
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    }
    left.len()
}

/// Run to completion with a deadline (the child is killed on overrun, failing the test).
pub fn output_within(mut c: Command, max: Duration) -> Output {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = c.spawn().expect("start boo-normalize");
    wait_within(child, max)
}

/// [`output_within`] of a run that must succeed: exit 0, or the test fails showing its stderr.
#[track_caller]
pub fn succeeded_within(c: Command, max: Duration) -> Output {
    let out = output_within(c, max);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Wait for a started child with a deadline, reading its piped stdout and stderr meanwhile (a
/// run that writes more than a pipe holds is not held back).
pub fn wait_within(mut child: Child, max: Duration) -> Output {
    fn drain<R: std::io::Read + Send + 'static>(r: Option<R>) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    }
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let until = Instant::now() + max;
    let status = loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            break st;
        }
        if Instant::now() >= until {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "boo-normalize did not finish within {max:?}; stdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&out.join().unwrap()),
                String::from_utf8_lossy(&err.join().unwrap())
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// Read stdout lines of a running child until one satisfies `pred` (or EOF / deadline); returns
/// every line read so far plus the reader (to finish later).
pub fn read_until(
    r: &mut BufReader<std::process::ChildStdout>,
    pred: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    let mut got = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return got;
        }
        let v: Value = serde_json::from_str(line.trim_end()).expect("envelope line is JSON");
        let done = pred(&v);
        got.push(v);
        if done {
            return got;
        }
    }
}

/// A temp dir with `home/` and `work/`.
pub struct Dirs {
    pub tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub work: PathBuf,
}

impl Dirs {
    pub fn new() -> Self {
        let tmp = tempfile::Builder::new()
            .prefix("boo-spawn-")
            .tempdir()
            .unwrap();
        let home = tmp.path().join("home");
        let work = tmp.path().join("work");
        fs::create_dir_all(&home).unwrap();
        fs::create_dir_all(&work).unwrap();
        Dirs { tmp, home, work }
    }

    pub fn path(&self) -> &Path {
        self.tmp.path()
    }
}

/// Send `sig` to `pid`.
pub fn send_signal(pid: u32, sig: &str) {
    let st = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .expect("kill");
    assert!(st.success());
}

/// Kills `pid` (SIGKILL) if still alive after `max`, so a test that blocks reading a child's
/// stdout fails instead of hanging. Disarmed on drop.
pub struct Watchdog(Option<std::sync::mpsc::Sender<()>>);

impl Watchdog {
    pub fn new(pid: u32, max: Duration) -> Self {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(max) {
                eprintln!("watchdog: killing {pid} after {max:?}");
                let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            }
        });
        Watchdog(Some(tx))
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}
