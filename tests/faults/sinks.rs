//! Faults on the output side, against the real binary: a child that cannot start, a sink that
//! fills up mid-run (a file size limit, `/dev/full`), and the modes of the files a run creates.
#![cfg(target_os = "linux")]

use crate::spawn::common as spawn_common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;
use spawn_common::fake::*;
use spawn_common::*;

/// A fake claude printing init and `n` text lines, then waiting to be stopped.
fn chatty(d: &Dirs, n: usize) -> std::path::PathBuf {
    let text = r#"{"type":"assistant","session_id":"s1","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hello hello hello hello hello hello hello hello hello hello"}]}}"#;
    fake(
        d,
        &format!(
            "echo \"$INIT\"; i=0; while [ $i -lt {n} ]; do echo '{text}'; i=$((i+1)); done; exec sleep 60"
        ),
    )
}

/// `sh -c 'PRELUDE; exec boo-normalize ARGS…'` with the test environment of [`command`].
fn via_sh(d: &Dirs, mark: &str, prelude: &str, args: &[&str]) -> Command {
    let mut c = command(&d.home, mark);
    let script = format!("{prelude}; exec \"$0\" \"$@\"");
    let bin = c.get_program().to_owned();
    c = Command::new("sh");
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &d.home)
        .env("BOO_TEST_MARK", mark)
        .stdin(Stdio::null())
        .current_dir(&d.work)
        .arg("-c")
        .arg(script)
        .arg(bin)
        .args(args);
    c
}

/// Run to completion with stdout and stderr drained by threads (a long stdout must not block
/// the run under test); killed and failed after `max`.
fn drained(mut c: Command, max: Duration) -> Output {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = c.spawn().expect("start");
    let pid = child.id();
    let _dog = Watchdog::new(pid, max);
    let out = child.wait_with_output().expect("output");
    assert!(
        out.status.code().is_some(),
        "killed after {max:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A stream-json file of a complete run (init and a successful result).
fn clean_run(d: &Dirs) -> std::path::PathBuf {
    let p = d.path().join("clean.ndjson");
    fs::write(&p, format!("{INIT}\n{RESULT_OK}\n")).unwrap();
    p
}

fn last(out: &Output) -> Value {
    let ev = events(&out.stdout);
    run_end(&ev).clone()
}

fn verify(p: &Path) -> Output {
    audit_verify(p, &[])
}

#[test]
fn missing_or_non_executable_claude_still_ends_every_sink() {
    let d = Dirs::new();
    let noexec = d.path().join("noexec");
    fs::write(&noexec, "#!/bin/sh\n").unwrap();
    fs::set_permissions(&noexec, fs::Permissions::from_mode(0o644)).unwrap();
    let missing = d.path().join("missing");
    for (bin, code) in [(&missing, 127), (&noexec, 126)] {
        for format in ["envelope", "sse", "audit"] {
            let mark = marker("nostart");
            let audit = d.path().join(format!("a-{code}-{format}.jsonl"));
            let rec = d.path().join(format!("r-{code}-{format}.jsonl"));
            let env = d.path().join(format!("e-{code}-{format}.ndjson"));
            let mut c = spawn_cmd(&d, bin, &mark, &["--format", format, "--prompt", "hi"]);
            c.arg("--audit").arg(&audit).arg("--record").arg(&rec);
            c.arg("--envelope").arg(&env);
            let out = output_within(c, Duration::from_secs(20));
            assert_eq!(out.status.code(), Some(code), "{format}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.starts_with("boo-normalize: "), "{stderr}");
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(stdout.contains("spawn_failed"), "{format}: {stdout}");
            let e: Vec<Value> = events(&fs::read(&env).unwrap());
            assert_eq!(run_end(&e)["cause"], "spawn_failed");
            assert!(
                run_end(&e)["error"]
                    .as_str()
                    .unwrap()
                    .contains(bin.to_str().unwrap())
            );
            assert!(verify(&audit).status.success());
            assert!(
                fs::read_to_string(&audit)
                    .unwrap()
                    .contains("\"cause\":\"spawn_failed\"")
            );
            let cap = fs::read_to_string(&rec).unwrap();
            assert!(
                cap.lines()
                    .last()
                    .unwrap()
                    .contains("\"cause\":\"spawn_failed\""),
                "{cap}"
            );
        }
    }
}

/// A chatty spawn run whose `flag FILE` output hits a file size limit mid-run (SIGXFSZ ignored,
/// so writes fail with EFBIG): it must exit 74.
fn spawn_filling_up(d: &Dirs, mark: &str, flag: &str, file: &Path) -> Output {
    let bin = chatty(d, 3000);
    let args = [
        "spawn",
        "--claude-bin",
        bin.to_str().unwrap(),
        "--env",
        "BOO_TEST_MARK",
        "--grace",
        "1s",
        "--prompt",
        "hi",
        flag,
        file.to_str().unwrap(),
    ];
    // 400 blocks: 200 KiB or 400 KiB depending on the shell's unit; either is mid-run.
    let c = via_sh(d, mark, "trap '' XFSZ; ulimit -f 400", &args);
    let out = drained(c, Duration::from_secs(30));
    assert_eq!(
        out.status.code(),
        Some(74),
        "{flag}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The audit log hits a file size limit mid-run (SIGXFSZ ignored, so writes fail with EFBIG):
/// the error names the file, stdout and the other sinks end with `run.end` naming it, exit 74,
/// and the log is cut back to whole records so the next run appends.
#[test]
fn audit_log_filling_up_ends_the_run_cleanly() {
    let d = Dirs::new();
    let mark = marker("fsize");
    let audit = d.path().join("audit.jsonl");
    let out = spawn_filling_up(&d, &mark, "--audit", &audit);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "boo-normalize: {}: File too large",
            audit.display()
        )),
        "{stderr}"
    );
    let end = last(&out);
    assert_eq!(end["cause"], "sink_failed", "{end}");
    assert_eq!(end["sink"], audit.to_str().unwrap());
    assert!(end["error"].as_str().unwrap().contains("File too large"));
    let v = verify(&audit);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
    assert_no_procs(&mark, Duration::from_secs(5));
    // Without the limit, the next run appends to the same chain.
    let out = Command::new(BIN)
        .args(["normalize", "--audit"])
        .arg(&audit)
        .arg(clean_run(&d))
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = String::from_utf8_lossy(&verify(&audit).stdout).into_owned();
    assert!(v.contains("in 2 runs"), "{v}");
}

/// An input of init and 4000 assistant text lines (about 1 MB of envelope), then `tail`.
fn hello_lines(d: &Dirs, tail: &str) -> std::path::PathBuf {
    let input = d.path().join("in.ndjson");
    let line = r#"{"type":"assistant","session_id":"s1","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hello hello hello hello hello hello"}]}}"#;
    let lines = format!("{line}\n").repeat(4000);
    fs::write(&input, format!("{INIT}\n{lines}{tail}")).unwrap();
    input
}

/// `normalize --audit` and `replay --audit` on a full file system (a file size limit) behave the
/// same. The whole log (about 1 MB) is one batch of records, written only when the input ends:
/// that last write failing is still named in `run.end` and exits 74.
#[test]
fn normalize_audit_filling_up() {
    let d = Dirs::new();
    let mark = marker("nfsize");
    let input = hello_lines(&d, "");
    for cmd in [&["normalize"][..], &["replay", "--speed", "max"]] {
        let audit = d.path().join(format!("{}.jsonl", cmd[0]));
        let mut args = cmd.to_vec();
        args.extend(["--audit", audit.to_str().unwrap(), input.to_str().unwrap()]);
        let c = via_sh(&d, &mark, "trap '' XFSZ; ulimit -f 400", &args);
        let out = drained(c, Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(74), "{}", cmd[0]);
        let end = last(&out);
        assert_eq!(end["cause"], "sink_failed");
        assert_eq!(end["sink"], audit.to_str().unwrap());
        assert!(verify(&audit).status.success());
    }
}

/// A reader that closes stdout early (`| head -1`) ends a `normalize`/`replay` run quietly
/// (exit 0, nothing on stderr), and the audit log beside it says so: its `run.end` has cause
/// `output_closed` (not a failed file sink), its `run.error` names that as the end cause, and
/// the log verifies.
#[test]
fn a_closed_stdout_is_output_closed_in_the_audit_log() {
    let d = Dirs::new();
    let mark = marker("closedout");
    let result = r#"{"type":"result","subtype":"success","is_error":false,"session_id":"s1"}"#;
    let input = hello_lines(&d, &format!("{result}\n"));
    for cmd in [&["normalize"][..], &["replay", "--speed", "max"]] {
        let audit = d.path().join(format!("closed-{}.jsonl", cmd[0]));
        let mut c = command(&d.home, &mark);
        c.args(cmd)
            .args(["--audit", audit.to_str().unwrap(), input.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut first = [0u8; 1];
        std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{}: {stderr}", cmd[0]);
        assert!(stderr.is_empty(), "{}: {stderr}", cmd[0]);
        let log = fs::read_to_string(&audit).unwrap();
        let events: Vec<Value> = log
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["event"].clone())
            .collect();
        let end = events.last().unwrap();
        assert_eq!(end["type"], "run.end", "{}", cmd[0]);
        assert_eq!(end["cause"], "output_closed", "{}", cmd[0]);
        assert!(end.get("sink").is_none(), "{}: {end}", cmd[0]);
        let error = &events[events.len() - 2];
        assert_eq!(error["type"], "run.error", "{}", cmd[0]);
        assert_eq!(error["end_cause"], "output_closed", "{}", cmd[0]);
        assert!(verify(&audit).status.success(), "{}", cmd[0]);
    }
}

/// `--record /dev/full`: the error names the file and the OS cause; stdout still ends. Under
/// `normalize` too: the capture's first write (its header) failing is a failed sink, not a
/// refusal to start.
#[test]
fn record_to_a_full_device() {
    let d = Dirs::new();
    let mark = marker("devfull");
    let bin = chatty(&d, 10);
    let input = d.path().join("in.ndjson");
    fs::write(&input, format!("{INIT}\n")).unwrap();
    let mut spawn = spawn_cmd(&d, &bin, &mark, &["--prompt", "hi", "--grace", "1s"]);
    spawn.args(["--record", "/dev/full"]);
    let mut normalize = command(&d.home, &mark);
    normalize.args(["--record", "/dev/full"]).arg(&input);
    for c in [spawn, normalize] {
        let out = drained(c, Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(74));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("boo-normalize: /dev/full: No space left on device"),
            "{stderr}"
        );
        let end = last(&out);
        assert_eq!(end["cause"], "sink_failed");
        assert_eq!(end["sink"], "/dev/full");
    }
    assert_no_procs(&mark, Duration::from_secs(5));
}

/// A `--record` file that cannot be opened (its directory is missing, or another process is
/// writing it) is refused before anything runs, like the other output files: exit 2, nothing
/// on stdout, no child started, the other writer's capture untouched; `normalize` and `spawn`
/// alike (spawn used to start the run, end it with `sink_failed` and exit 74).
#[test]
fn record_that_cannot_be_opened() {
    let d = Dirs::new();
    let mark = marker("recopen");
    let started = d.path().join("started");
    let bin = fake(
        &d,
        &format!("touch '{}'; echo \"$INIT\"", started.display()),
    );
    let input = d.path().join("in.ndjson");
    fs::write(&input, format!("{INIT}\n")).unwrap();
    // A writer that holds its capture open (and locked) while its stdin is.
    let busy = d.path().join("busy.jsonl");
    let mut first = command(&d.home, &mark);
    first.arg("--record").arg(&busy).stdin(Stdio::piped());
    let mut first = first.stdout(Stdio::null()).spawn().unwrap();
    let t0 = std::time::Instant::now();
    while fs::metadata(&busy).map_or(0, |m| m.len()) == 0 {
        assert!(t0.elapsed() < Duration::from_secs(30), "no capture header");
        std::thread::sleep(Duration::from_millis(10));
    }
    let header = fs::read(&busy).unwrap();
    let missing = d.path().join("no-such-dir").join("cap.jsonl");
    for (rec, cause) in [
        (&missing, "No such file"),
        (&busy, "another process is writing this capture"),
    ] {
        let mut normalize = command(&d.home, &mark);
        normalize.arg("--record").arg(rec).arg(&input);
        let mut spawn = spawn_cmd(&d, &bin, &mark, &["--prompt", "hi there"]);
        spawn.arg("--record").arg(rec);
        for c in [normalize, spawn] {
            let out = drained(c, Duration::from_secs(30));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(
                out.stdout.is_empty(),
                "{}",
                String::from_utf8_lossy(&out.stdout)
            );
            let want = format!("boo-normalize: {}: {cause}", rec.display());
            assert!(stderr.contains(&want), "{stderr}");
        }
    }
    assert!(!started.exists(), "the child was started");
    assert_eq!(
        fs::read(&busy).unwrap(),
        header,
        "the busy capture was touched"
    );
    drop(first.stdin.take());
    assert!(first.wait().unwrap().code().is_some());
}

/// `--help` and `--version` write to stdout like any command: a full device is an I/O error
/// on stdout (exit 2, `boo-normalize: stdout: cause`), a reader that closed the pipe is not.
#[test]
fn help_and_version_to_a_full_device_or_a_closed_pipe() {
    let d = Dirs::new();
    let mark = marker("helpfull");
    for args in [
        &["--help"][..],
        &["-h"],
        &["spawn", "--help"],
        &["--version"],
    ] {
        let full = fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let mut c = command(&d.home, &mark);
        c.args(args).stdout(full).stderr(Stdio::piped());
        let out = c.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(
            stderr, "boo-normalize: stdout: No space left on device (os error 28)\n",
            "{args:?}"
        );
        let mut c = command(&d.home, &mark);
        c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
        let child = c.spawn().unwrap();
        let mut child = child;
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(
            out.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A capture that hits the size limit mid-run: same contract as the audit log.
#[test]
fn capture_filling_up_mid_run() {
    let d = Dirs::new();
    let mark = marker("recfsize");
    let rec = d.path().join("cap.jsonl");
    let out = spawn_filling_up(&d, &mark, "--record", &rec);
    let end = last(&out);
    assert_eq!(end["cause"], "sink_failed");
    assert_eq!(end["sink"], rec.to_str().unwrap());
    assert_no_procs(&mark, Duration::from_secs(5));
}

/// Under umask 022, every file a run creates is 0600; a file that exists keeps its mode.
#[test]
fn created_files_are_private() {
    let d = Dirs::new();
    let mark = marker("modes");
    let bin = fake(&d, "echo \"$INIT\"; echo \"$RESULT\"");
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_owned();
    let (audit, rec, env, sse) = (p("a.jsonl"), p("r.jsonl"), p("e.ndjson"), p("s.sse"));
    fs::write(&env, "").unwrap();
    fs::set_permissions(&env, fs::Permissions::from_mode(0o644)).unwrap();
    let args = [
        "spawn",
        "--claude-bin",
        bin.to_str().unwrap(),
        "--prompt",
        "hi",
        "--audit",
        &audit,
        "--record",
        &rec,
        "--envelope",
        &env,
        "--sse",
        &sse,
    ];
    let out = output_within(
        via_sh(&d, &mark, "umask 022", &args),
        Duration::from_secs(30),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mode = |f: &str| fs::metadata(f).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&audit), 0o600);
    assert_eq!(mode(&rec), 0o600);
    assert_eq!(mode(&sse), 0o600);
    assert_eq!(mode(&env), 0o644, "an existing file keeps its mode");
    let nrec = p("n.jsonl");
    let naudit = p("na.jsonl");
    let input = clean_run(&d);
    let args = [
        "normalize",
        "--record",
        &nrec,
        "--audit",
        &naudit,
        input.to_str().unwrap(),
    ];
    let out = output_within(
        via_sh(&d, &mark, "umask 022", &args),
        Duration::from_secs(30),
    );
    assert!(matches!(out.status.code(), Some(0 | 3)));
    assert_eq!(mode(&nrec), 0o600);
    assert_eq!(mode(&naudit), 0o600);
}

/// A real full file system: a 256 KiB tmpfs in a private mount namespace (`unshare -rm`, no
/// privileges needed where user namespaces are enabled; skipped otherwise). The audit log fills
/// it mid-run: ENOSPC names the file, stdout ends with `sink_failed`, the log verifies, and once
/// there is space again the next run appends.
#[test]
fn audit_log_on_a_full_tmpfs() {
    let probe = Command::new("unshare")
        .args([
            "-rm",
            "sh",
            "-c",
            "mount -t tmpfs -o size=64k tmpfs /tmp && echo ok",
        ])
        .output();
    if !probe.is_ok_and(|o| o.stdout == b"ok\n") {
        eprintln!("skipped: cannot mount a tmpfs in a user namespace here (unshare -rm)");
        return;
    }
    let d = Dirs::new();
    let mark = marker("tmpfs");
    let bin = chatty(&d, 3000);
    let fs_dir = d.path().join("small");
    fs::create_dir(&fs_dir).unwrap();
    let audit = fs_dir.join("audit.jsonl");
    let out = d.path().join("stdout");
    let script = r#"
        mount -t tmpfs -o size=256k tmpfs "$1" || exit 99
        "$0" spawn --claude-bin "$2" --env BOO_TEST_MARK --grace 1s --prompt hi --audit "$3" > "$4"
        echo "rc=$?" >&2
        "$0" audit verify "$3" >&2 || exit 98
        mount -o remount,size=1m "$1" || exit 97
        "$0" normalize --audit "$3" "$5" > /dev/null || exit 96
        "$0" audit verify "$3" >&2
    "#;
    let mut c = Command::new("unshare");
    c.args(["-rm", "sh", "-c", script, BIN])
        .arg(&fs_dir)
        .arg(&bin)
        .arg(&audit)
        .arg(&out)
        .arg(clean_run(&d))
        .env("BOO_TEST_MARK", &*mark)
        .stdin(Stdio::null());
    let res = drained(c, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert_eq!(res.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "boo-normalize: {}: No space left on device",
            audit.display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("rc=74"), "{stderr}");
    assert!(stderr.contains("in 2 runs"), "{stderr}");
    let end = run_end(&events(&fs::read(&out).unwrap())).clone();
    assert_eq!(end["cause"], "sink_failed");
    assert_eq!(end["sink"], audit.to_str().unwrap());
    assert_no_procs(&mark, Duration::from_secs(5));
}
