//! Batches over many files (`profile`, `redact`, `sessions`) end when a thread of theirs panics:
//! the panic reaches the user as a failure, never as a process that waits forever.
//!
//! The panic is injected through the debug build's test seam (`BOO_NORMALIZE_TEST_PANIC`, see
//! `src/work.rs`): the calling thread panics as it comes to a given job, once every worker is
//! parked on a full budget, which is the case that used to hang.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{bin, root};

/// `n` copies of a 2.7 MB capture in `dir`: more than any batch's ahead budget, so workers fill
/// it and park while the calling thread is held at the injected job.
fn copies(dir: &Path, n: usize) -> Vec<String> {
    let src = root().join("fixtures/real/gymnastics-graphics__rundown-editor-log.ndjson");
    (0..n)
        .map(|i| {
            let p = dir.join(format!("run-{i:02}.ndjson"));
            std::fs::copy(&src, &p).unwrap();
            p.display().to_string()
        })
        .collect()
}

/// Runs `cmd` with the seam set to panic on the calling thread at job 1, on two threads; returns
/// its exit status and stderr, failing the test when it has not ended within 60 seconds.
fn ends_with_panic(mut cmd: Command) -> (Option<i32>, String) {
    let mut child = cmd
        .env("BOO_NORMALIZE_TEST_PANIC", "caller:1")
        .env("BOO_NORMALIZE_THREADS", "2")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the batch hung after a panic on its calling thread");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    (status.code(), err)
}

#[test]
fn profile_ends_when_its_calling_thread_panics_with_workers_parked() {
    let dir = tempfile::tempdir().unwrap();
    let files = copies(dir.path(), 24);
    let mut cmd = bin();
    cmd.arg("profile").args(&files);
    let (code, err) = ends_with_panic(cmd);
    assert_eq!(code, Some(101), "a panic exits 101: {err}");
    assert!(
        err.contains("BOO_NORMALIZE_TEST_PANIC: the calling thread panics at job 1"),
        "the panic's message reaches stderr: {err}"
    );
    // The seam waited for the worker to park (else the case under test was not reached).
    assert!(err.contains("(1 of 1 workers parked)"), "{err}");
}

#[test]
fn redact_ends_when_its_calling_thread_panics_with_workers_parked() {
    let dir = tempfile::tempdir().unwrap();
    let files = copies(dir.path(), 12);
    let mut cmd = bin();
    cmd.arg("redact").args(&files);
    let (code, err) = ends_with_panic(cmd);
    assert_eq!(code, Some(101), "a panic exits 101: {err}");
    assert!(err.contains("(1 of 1 workers parked)"), "{err}");
}

#[test]
fn without_the_seam_the_same_batch_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let files = copies(dir.path(), 3);
    let out = bin()
        .arg("profile")
        .args(&files)
        .env("BOO_NORMALIZE_THREADS", "2")
        .env_remove("BOO_NORMALIZE_TEST_PANIC")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
