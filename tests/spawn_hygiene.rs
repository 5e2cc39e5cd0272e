//! `spawn` process hygiene with a fake `claude` (a shell script): hangs, closed stdout,
//! background grandchildren, escalation, interrupts, environment, stdin, guards. Fast (no CLI).
#![cfg(target_os = "linux")]

mod spawn_common;

use std::fs;
use std::io::BufReader;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use spawn_common::*;

const INIT: &str = r#"{"type":"system","subtype":"init","session_id":"s1","model":"m","cwd":"/","tools":["Bash","Read"]}"#;
const RESULT_OK: &str =
    r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s1"}"#;
const BASH_CALL: &str = r#"{"type":"assistant","session_id":"s1","message":{"id":"msg_1","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]}}"#;

/// A fake claude: `body` is shell code; `$HERE` is its directory.
fn fake(d: &Dirs, body: &str) -> PathBuf {
    let p = d.path().join("claude");
    let script = format!(
        "#!/bin/sh\nHERE=$(dirname \"$0\")\nINIT='{INIT}'\nRESULT='{RESULT_OK}'\nBASH_CALL='{BASH_CALL}'\n{body}\n"
    );
    fs::write(&p, script).unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// `boo-normalize spawn --claude-bin FAKE --env BOO_TEST_MARK ARGS…` in the work dir.
fn spawn_cmd(d: &Dirs, bin: &PathBuf, mark: &str, args: &[&str]) -> Command {
    let mut c = command(&d.home, mark);
    c.current_dir(&d.work)
        .arg("spawn")
        .arg("--claude-bin")
        .arg(bin)
        .arg("--env")
        .arg("BOO_TEST_MARK")
        .args(args);
    c
}

fn run(
    d: &Dirs,
    body: &str,
    args: &[&str],
) -> (std::process::Output, Vec<serde_json::Value>, Mark) {
    let mark = marker("hyg");
    let bin = fake(d, body);
    let out = output_within(spawn_cmd(d, &bin, &mark, args), Duration::from_secs(30));
    let ev = events(&out.stdout);
    check_envelope(&ev);
    (out, ev, mark)
}

#[test]
fn child_without_result_is_visible_in_run_end() {
    let d = Dirs::new();
    let (out, ev, mark) = run(&d, "echo \"$INIT\"; exit 0", &["--prompt", "do it now"]);
    let end = run_end(&ev);
    assert_eq!(end["cause"], "exit");
    assert_eq!(end["terminal_seen"], false);
    assert_eq!(end["exit_code"], 0);
    assert_eq!(end["signal"], serde_json::Value::Null);
    assert_eq!(out.status.code(), Some(0));
    assert_no_procs(&mark, Duration::from_secs(2));
}

#[test]
fn exit_code_is_mirrored() {
    let d = Dirs::new();
    let (out, ev, _) = run(&d, "echo \"$INIT\"; echo \"$RESULT\"; exit 7", &[]);
    assert_eq!(run_end(&ev)["exit_code"], 7);
    assert_eq!(run_end(&ev)["terminal_seen"], true);
    assert_eq!(out.status.code(), Some(7));
}

#[test]
fn child_killed_by_foreign_signal() {
    let d = Dirs::new();
    let (out, ev, _) = run(&d, "echo \"$INIT\"; kill -9 $$", &[]);
    let end = run_end(&ev);
    assert_eq!(end["cause"], "signal");
    assert_eq!(end["signal"], "SIGKILL");
    assert_eq!(end["exit_code"], serde_json::Value::Null);
    assert_eq!(out.status.code(), Some(137));
}

#[test]
fn hang_after_result_with_stdout_open_ends_by_idle_timeout() {
    let d = Dirs::new();
    let t0 = Instant::now();
    let (out, ev, mark) = run(
        &d,
        "trap '' INT; echo \"$INIT\"; echo \"$RESULT\"; while :; do sleep 0.1; done",
        &["--idle-timeout", "400ms", "--grace", "300ms"],
    );
    let end = run_end(&ev);
    assert_eq!(end["cause"], "idle_timeout");
    assert_eq!(end["terminal_seen"], true);
    assert_eq!(
        end["signals_sent"],
        serde_json::json!(["SIGINT", "SIGTERM"])
    );
    assert_eq!(end["signal"], "SIGTERM");
    assert_eq!(out.status.code(), Some(124));
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert_no_procs(&mark, Duration::from_secs(2));
}

#[test]
fn stdout_closed_but_alive_is_ended_after_grace() {
    let d = Dirs::new();
    let t0 = Instant::now();
    let (out, ev, mark) = run(
        &d,
        "echo \"$INIT\"; echo \"$RESULT\"; exec >&-; sleep 300",
        &["--grace", "500ms"],
    );
    let el = t0.elapsed();
    let end = run_end(&ev);
    assert_eq!(end["cause"], "killed");
    assert_eq!(end["reason"], "stdout_closed");
    assert_eq!(end["signals_sent"][0], "SIGINT");
    // The result was a success: exit 0, as the child would have returned.
    assert_eq!(out.status.code(), Some(0));
    assert!(
        el >= Duration::from_millis(500),
        "ended before the grace: {el:?}"
    );
    assert!(el < Duration::from_secs(10), "{el:?}");
    assert_no_procs(&mark, Duration::from_secs(2));
}

#[test]
fn grandchild_in_its_own_session_is_killed_after_exit() {
    let d = Dirs::new();
    let (out, ev, mark) = run(
        &d,
        "setsid sleep 300 </dev/null >/dev/null 2>&1 &\nsleep 0.2; echo \"$INIT\"; echo \"$RESULT\"; exit 0",
        &["--grace", "1s"],
    );
    let end = run_end(&ev);
    assert_eq!(end["cause"], "exit");
    assert!(end["descendants_killed"].as_u64().unwrap() >= 1, "{end}");
    assert_eq!(out.status.code(), Some(0));
    assert_no_procs(&mark, Duration::from_secs(1));
}

#[test]
fn grandchild_holding_stdout_does_not_block_the_end() {
    let d = Dirs::new();
    let t0 = Instant::now();
    let (out, ev, mark) = run(
        &d,
        "sleep 300 &\necho \"$INIT\"; echo \"$RESULT\"; exit 0",
        &["--grace", "2s"],
    );
    assert!(t0.elapsed() < Duration::from_secs(8), "{:?}", t0.elapsed());
    let end = run_end(&ev);
    assert_eq!(end["cause"], "exit");
    assert!(end["descendants_killed"].as_u64().unwrap() >= 1);
    assert_eq!(out.status.code(), Some(0));
    assert_no_procs(&mark, Duration::from_secs(1));
}

#[test]
fn keep_background_leaves_them_running() {
    let d = Dirs::new();
    let (out, ev, mark) = run(
        &d,
        "setsid sleep 300 </dev/null >/dev/null 2>&1 &\nsleep 0.2; echo \"$INIT\"; exit 0",
        &["--keep-background"],
    );
    let end = run_end(&ev);
    assert_eq!(end["descendants_killed"], 0);
    assert_eq!(end["background_left"], 1);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(kill_marked(&mark), 1, "the background sleep survived");
}

#[test]
fn escalation_reaches_sigkill() {
    let d = Dirs::new();
    let t0 = Instant::now();
    let (out, ev, mark) = run(
        &d,
        "trap '' INT TERM; echo \"$INIT\"; while :; do sleep 0.05; done",
        &["--idle-timeout", "300ms", "--grace", "200ms"],
    );
    let el = t0.elapsed();
    let end = run_end(&ev);
    assert_eq!(
        end["signals_sent"],
        serde_json::json!(["SIGINT", "SIGTERM", "SIGKILL"])
    );
    assert_eq!(end["signal"], "SIGKILL");
    assert_eq!(end["cause"], "idle_timeout");
    assert_eq!(out.status.code(), Some(124));
    assert!(el >= Duration::from_millis(700), "{el:?}");
    assert_no_procs(&mark, Duration::from_secs(2));
}

#[test]
fn wall_clock_timeout_while_output_flows() {
    let d = Dirs::new();
    let (out, ev, mark) = run(
        &d,
        "echo \"$INIT\"; while :; do echo '{\"type\":\"keep_alive\"}'; sleep 0.05; done",
        &[
            "--timeout",
            "600ms",
            "--idle-timeout",
            "5s",
            "--grace",
            "1s",
        ],
    );
    let end = run_end(&ev);
    assert_eq!(end["cause"], "timeout");
    assert!(ev.len() > 3, "output flowed before the timeout");
    assert_eq!(out.status.code(), Some(124));
    assert_no_procs(&mark, Duration::from_secs(2));
}

#[test]
fn sigint_and_sigterm_are_forwarded() {
    for (sig, code) in [("INT", 130), ("TERM", 143)] {
        let d = Dirs::new();
        let mark = marker("sig");
        let bin = fake(&d, "echo \"$INIT\"; sleep 300 & wait");
        let mut c = spawn_cmd(&d, &bin, &mark, &["--grace", "2s"]);
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let _dog = Watchdog::new(child.id(), Duration::from_secs(30));
        let mut r = BufReader::new(child.stdout.take().unwrap());
        let first = read_until(&mut r, |e| e["type"] == "session.init");
        assert_eq!(first.last().unwrap()["type"], "session.init");
        send_signal(child.id(), sig);
        let rest = read_until(&mut r, |_| false);
        let out = wait_within(child, Duration::from_secs(20));
        let ev: Vec<_> = first.into_iter().chain(rest).collect();
        check_envelope(&ev);
        let end = run_end(&ev);
        assert_eq!(end["cause"], "interrupted", "{sig}");
        assert_eq!(end["reason"], format!("SIG{sig}"));
        assert_eq!(end["signals_sent"][0], "SIGINT");
        assert_eq!(out.status.code(), Some(code), "{sig}");
        assert_no_procs(&mark, Duration::from_secs(2));
    }
}

#[test]
fn repeated_interrupts_escalate_at_once() {
    let d = Dirs::new();
    let mark = marker("sig3");
    let bin = fake(
        &d,
        "trap '' INT TERM; echo \"$INIT\"; while :; do sleep 0.05; done",
    );
    let mut c = spawn_cmd(&d, &bin, &mark, &["--grace", "60s"]);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let _dog = Watchdog::new(child.id(), Duration::from_secs(30));
    let t0 = Instant::now();
    let mut r = BufReader::new(child.stdout.take().unwrap());
    read_until(&mut r, |e| e["type"] == "session.init");
    for _ in 0..3 {
        send_signal(child.id(), "INT");
        std::thread::sleep(Duration::from_millis(150));
    }
    let rest = read_until(&mut r, |_| false);
    let out = wait_within(child, Duration::from_secs(20));
    assert!(t0.elapsed() < Duration::from_secs(15), "{:?}", t0.elapsed());
    let end = run_end(&rest);
    assert_eq!(
        end["signals_sent"],
        serde_json::json!(["SIGINT", "SIGTERM", "SIGKILL"])
    );
    assert_eq!(out.status.code(), Some(130));
    assert_no_procs(&mark, Duration::from_secs(2));
}

#[test]
fn orphans_are_reaped_while_the_child_runs() {
    let d = Dirs::new();
    let mark = marker("zomb");
    let bin = fake(
        &d,
        "for i in 1 2 3; do (sleep 0.05 &); done; echo \"$INIT\"; sleep 1.5; echo \"$RESULT\"",
    );
    let mut c = spawn_cmd(&d, &bin, &mark, &[]);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let _dog = Watchdog::new(child.id(), Duration::from_secs(30));
    let mut r = BufReader::new(child.stdout.take().unwrap());
    read_until(&mut r, |e| e["type"] == "session.init");
    std::thread::sleep(Duration::from_millis(600));
    let me = child.id().to_string();
    let mut zombies = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let stat = fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() > 1 && f[0] == "Z" && f[1] == me {
            zombies.push(stat.clone());
        }
    }
    let rest = read_until(&mut r, |_| false);
    let out = wait_within(child, Duration::from_secs(20));
    assert!(zombies.is_empty(), "unreaped children: {zombies:?}");
    assert_eq!(run_end(&rest)["cause"], "exit");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn closed_output_stops_the_child_quietly() {
    let d = Dirs::new();
    let mark = marker("epipe");
    let bin = fake(
        &d,
        "echo \"$INIT\"; while :; do echo '{\"type\":\"keep_alive\"}'; sleep 0.01; done",
    );
    let mut c = spawn_cmd(&d, &bin, &mark, &["--grace", "1s", "--line-buffered"]);
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let _dog = Watchdog::new(child.id(), Duration::from_secs(30));
    let mut r = BufReader::new(child.stdout.take().unwrap());
    read_until(&mut r, |e| e["type"] == "session.init");
    drop(r);
    let out = wait_within(child, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_no_procs(&mark, Duration::from_secs(2));
}

/// The fake writes its environment, argv and stdin next to itself.
const RECORD: &str = "env > \"$HERE/env.txt\"; printf '%s\\n' \"$@\" > \"$HERE/args.txt\"; cat > \"$HERE/stdin.txt\"; echo \"$INIT\"; echo \"$RESULT\"";

fn env_of(d: &Dirs) -> Vec<String> {
    fs::read_to_string(d.path().join("env.txt"))
        .unwrap()
        .lines()
        .map(|l| l.split('=').next().unwrap().to_owned())
        .collect()
}

fn parent_env(c: &mut Command) {
    c.env("ANTHROPIC_API_KEY", "sk-ant-secret-123")
        .env("ANTHROPIC_AUTH_TOKEN", "tok-456")
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .env("FOO", "bar")
        .env("CLAUDE_CODE_X", "1")
        .env("LC_ALL", "C")
        .env("https_proxy", "http://proxy:3128");
}

#[test]
fn environment_allowlist() {
    let d = Dirs::new();
    let mark = marker("env");
    let bin = fake(&d, RECORD);
    let mut c = spawn_cmd(&d, &bin, &mark, &[]);
    parent_env(&mut c);
    let out = output_within(c, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0));
    let mut names = env_of(&d);
    names.retain(|n| !["PWD", "SHLVL", "_", "OLDPWD"].contains(&n.as_str()));
    names.sort();
    assert_eq!(
        names,
        [
            "BOO_TEST_MARK",
            "CLAUDE_CODE_X",
            "HOME",
            "LANG",
            "LC_ALL",
            "PATH",
            "https_proxy"
        ]
    );

    let mut c = spawn_cmd(
        &d,
        &bin,
        &mark,
        &[
            "--env",
            "ANTHROPIC_BASE_URL",
            "--env",
            "FOO=baz",
            "--env",
            "ANTHROPIC_API_KEY",
        ],
    );
    parent_env(&mut c);
    output_within(c, Duration::from_secs(20));
    let text = fs::read_to_string(d.path().join("env.txt")).unwrap();
    assert!(text.contains("ANTHROPIC_BASE_URL=http://127.0.0.1:9\n"));
    assert!(text.contains("FOO=baz\n"));
    assert!(
        !text.contains("sk-ant-secret-123"),
        "credential passed: {text}"
    );

    let mut c = spawn_cmd(&d, &bin, &mark, &["--inherit-env"]);
    parent_env(&mut c);
    output_within(c, Duration::from_secs(20));
    let text = fs::read_to_string(d.path().join("env.txt")).unwrap();
    assert!(text.contains("FOO=bar\n") && !text.contains("ANTHROPIC_API_KEY"));
    assert!(!text.contains("ANTHROPIC_AUTH_TOKEN"));

    let mut c = spawn_cmd(&d, &bin, &mark, &["--inherit-env", "--keep-env-key"]);
    parent_env(&mut c);
    output_within(c, Duration::from_secs(20));
    let text = fs::read_to_string(d.path().join("env.txt")).unwrap();
    assert!(text.contains("ANTHROPIC_API_KEY=sk-ant-secret-123\n"));
}

#[test]
fn api_key_refusal_and_explicit_credentials() {
    let d = Dirs::new();
    let mark = marker("refuse");
    let bin = fake(&d, RECORD);
    let mut c = spawn_cmd(&d, &bin, &mark, &["--refuse-api-key"]);
    parent_env(&mut c);
    let out = output_within(c, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("boo-normalize: --refuse-api-key: "),
        "{err}"
    );
    assert!(
        err.contains("ANTHROPIC_API_KEY") && !err.contains("sk-ant-secret"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    assert!(
        !d.path().join("env.txt").exists(),
        "the child must not have run"
    );

    let c = spawn_cmd(&d, &bin, &mark, &["--env", "ANTHROPIC_API_KEY=sk-x"]);
    let out = output_within(c, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--keep-env-key"));

    let c = spawn_cmd(&d, &bin, &mark, &["--refuse-api-key"]);
    let out = output_within(c, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0), "no credential set: runs");
}

#[test]
fn prompt_placement_argv_or_stdin() {
    let d = Dirs::new();
    let mark = marker("stdin");
    let bin = fake(&d, RECORD);
    let big: String = (0..2000).map(|i| format!("line {i} ")).collect();
    assert!(big.len() > 10 * 1024);
    let pf = d.path().join("prompt.txt");
    fs::write(&pf, &big).unwrap();
    let c = spawn_cmd(&d, &bin, &mark, &["--prompt-file", pf.to_str().unwrap()]);
    let out = output_within(c, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(fs::read_to_string(d.path().join("stdin.txt")).unwrap(), big);
    let args = fs::read_to_string(d.path().join("args.txt")).unwrap();
    assert!(
        !args.contains("line 1999"),
        "the long prompt is not in argv"
    );
    assert_eq!(
        args.lines().collect::<Vec<_>>(),
        [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages"
        ]
    );

    let c = spawn_cmd(
        &d,
        &bin,
        &mark,
        &[
            "--prompt",
            "two words",
            "--no-partial",
            "--",
            "--max-turns",
            "2",
        ],
    );
    output_within(c, Duration::from_secs(20));
    assert_eq!(fs::read_to_string(d.path().join("stdin.txt")).unwrap(), "");
    let args = fs::read_to_string(d.path().join("args.txt")).unwrap();
    assert_eq!(
        args.lines().collect::<Vec<_>>(),
        [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--max-turns",
            "2",
            "--",
            "two words"
        ]
    );
}

#[test]
fn allow_tools_violation_enforced() {
    let d = Dirs::new();
    let (out, ev, mark) = run(
        &d,
        "echo \"$INIT\"; echo \"$BASH_CALL\"; sleep 300",
        &["--allow-tools", "Read,Grep", "--enforce", "--grace", "1s"],
    );
    let v = of_type(&ev, "policy.violation");
    assert_eq!(v.len(), 1, "{ev:?}");
    assert_eq!(v[0]["rule"], "allow_tools");
    assert_eq!(v[0]["name"], "Bash");
    assert_eq!(v[0]["tool_use_id"], "toolu_1");
    assert_eq!(v[0]["enforced"], true);
    let call = of_type(&ev, "tool.call")[0];
    assert!(v[0]["seq"].as_u64() > call["seq"].as_u64());
    let end = run_end(&ev);
    assert_eq!(end["cause"], "killed");
    assert_eq!(end["reason"], "policy");
    assert_eq!(end["stats"]["by_type"]["policy.violation"], 1);
    assert_eq!(out.status.code(), Some(125));
    assert_no_procs(&mark, Duration::from_secs(2));
}

#[test]
fn guards_report_without_enforce() {
    let d = Dirs::new();
    // The cap is the first line exactly: the second line crosses it.
    let cap = (INIT.len() + 1).to_string();
    let (out, ev, _) = run(
        &d,
        "echo \"$INIT\"; echo \"$BASH_CALL\"; echo \"$BASH_CALL\" | sed s/toolu_1/toolu_2/; echo \"$RESULT\"",
        &[
            "--allow-tools",
            "Bash",
            "--max-repeat-calls",
            "1",
            "--max-output-bytes",
            &cap,
        ],
    );
    let v = of_type(&ev, "policy.violation");
    let rules: Vec<_> = v.iter().map(|x| x["rule"].as_str().unwrap()).collect();
    assert_eq!(rules, ["max_output_bytes", "max_repeat_calls"], "{v:?}");
    assert_eq!(v[0]["line"], 2);
    assert_eq!(v[1]["line"], 3);
    assert_eq!(v[1]["tool_use_id"], "toolu_2");
    assert!(v.iter().all(|x| x["enforced"] == false));
    assert_eq!(run_end(&ev)["cause"], "exit");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn stderr_passthrough_and_events() {
    let d = Dirs::new();
    let body = "printf 'warn \\033[31mred\\033[0m\\n' >&2; echo \"$INIT\"; echo \"$RESULT\"";
    let (out, ev, _) = run(&d, body, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("claude: warn ?[31mred?[0m"), "{err}");
    assert!(of_type(&ev, "child.stderr").is_empty());
    let (out, ev, _) = run(&d, body, &["--stderr-events"]);
    assert!(out.stderr.is_empty());
    let s = of_type(&ev, "child.stderr");
    assert_eq!(s.len(), 1);
    assert_eq!(s[0]["text"], "warn \u{1b}[31mred\u{1b}[0m");
}

#[test]
fn missing_binary_and_bad_usage() {
    let d = Dirs::new();
    let mark = marker("usage");
    let mut c = command(&d.home, &mark);
    c.env("PATH", "/nonexistent")
        .args(["spawn", "--prompt", "x y"]);
    let out = output_within(c, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not found on PATH"));
    let bin = fake(&d, RECORD);
    let c = spawn_cmd(&d, &bin, &mark, &["--enforce"]);
    assert_eq!(
        output_within(c, Duration::from_secs(10)).status.code(),
        Some(2)
    );
    let c = spawn_cmd(&d, &bin, &mark, &["--timeout", "soon"]);
    assert_eq!(
        output_within(c, Duration::from_secs(10)).status.code(),
        Some(2)
    );
}
