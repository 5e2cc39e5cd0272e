//! `spawn` options with a fake `claude` (a shell script): environment allowlist and
//! credentials, prompt placement (argv or stdin), guards, stderr, usage errors. Fast (no CLI).
#![cfg(target_os = "linux")]

use crate::spawn::common as spawn_common;

use std::fs;
use std::process::Command;
use std::time::Duration;

use spawn_common::fake::*;
use spawn_common::*;

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
    // The provider settings it did not pass are named on stderr, never their values.
    let err = String::from_utf8_lossy(&out.stderr);
    let notice = err
        .lines()
        .find(|l| l.starts_with("boo-normalize: spawn: not passed to claude: "))
        .unwrap_or_else(|| panic!("no notice: {err}"));
    assert!(
        notice.contains("ANTHROPIC_API_KEY") && notice.contains("--keep-env-key"),
        "{notice}"
    );
    assert!(
        notice.contains("ANTHROPIC_BASE_URL") && notice.contains("--env NAME"),
        "{notice}"
    );
    assert!(
        !notice.contains("sk-ant-secret-123") && !notice.contains("127.0.0.1"),
        "{notice}"
    );
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

    // A prompt that starts with `-`, given as the next argument (`"--prompt", prompt` in a
    // caller's argv, as the README's Go example does), is the prompt, not an option: it goes
    // to the child's stdin.
    let c = spawn_cmd(
        &d,
        &bin,
        &mark,
        &["--prompt", "- fix the test", "--no-partial"],
    );
    succeeded_within(c, Duration::from_secs(20));
    assert_eq!(
        fs::read_to_string(d.path().join("stdin.txt")).unwrap(),
        "- fix the test"
    );
    let args = fs::read_to_string(d.path().join("args.txt")).unwrap();
    assert!(!args.contains("fix the test"), "{args}");
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
            "2",
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

/// A child that writes to stderr and exits at once (a bad option, a crash at start-up) still
/// has every stderr line passed on: the run waits for stderr's end, not only stdout's.
#[test]
fn stderr_of_a_child_that_exits_at_once_is_never_lost() {
    let d = Dirs::new();
    // No stdout at all, as `claude --bogus` would: a small binary that prints its usage error
    // and exits before a shell could (`sleep` refusing an option).
    let body = "exec sleep --no-such-option";
    let direct = Command::new("sleep")
        .arg("--no-such-option")
        .output()
        .unwrap();
    let expected: Vec<String> = String::from_utf8_lossy(&direct.stderr)
        .lines()
        .map(str::to_owned)
        .collect();
    assert!(!expected.is_empty());
    for round in 0..40 {
        let (out, ev, _) = run(&d, body, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        for line in &expected {
            assert!(
                err.contains(&format!("claude: {line}")),
                "round {round}: {line} missing in {err}"
            );
        }
        assert_eq!(run_end(&ev)["cause"], "exit");
        let (_, ev, _) = run(&d, body, &["--stderr-events"]);
        let texts: Vec<_> = of_type(&ev, "child.stderr")
            .iter()
            .map(|e| e["text"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(texts, expected, "round {round}");
    }
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
    let out = output_within(c, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(2));
    // A usage error reads like every other error (the npm client takes the last line that
    // starts `boo-normalize: ` as the message).
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("boo-normalize: invalid value 'soon' for '--timeout"),
        "{stderr}"
    );
    assert!(
        stderr.contains("\nFor more information, try '--help'."),
        "{stderr}"
    );
}

/// No prompt and nothing to resume: spawn fails before starting claude (exit 2, no child ran).
/// --resume / --continue among the claude arguments need no prompt.
#[test]
fn no_prompt_fails_before_starting_claude() {
    let d = Dirs::new();
    let mark = marker("noprompt");
    let bin = fake(
        &d,
        "touch \"$HERE/started\"; echo \"$INIT\"; echo \"$RESULT\"",
    );
    let mut c = Command::new(env!("CARGO_BIN_EXE_boo-normalize"));
    c.current_dir(&d.work)
        .env("HOME", &d.home)
        .args(["spawn", "--claude-bin"])
        .arg(&bin)
        .stdin(std::process::Stdio::null());
    let out = output_within(c, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("boo-normalize: spawn: no prompt: "),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    assert!(
        !bin.parent().unwrap().join("started").exists(),
        "claude was started"
    );
    let _ = mark;
    for resume in [&["--", "--resume", "abc"][..], &["--", "--continue"]] {
        let mut c = Command::new(env!("CARGO_BIN_EXE_boo-normalize"));
        c.current_dir(&d.work)
            .env("HOME", &d.home)
            .args(["spawn", "--claude-bin"])
            .arg(&bin)
            .args(resume)
            .stdin(std::process::Stdio::null());
        let out = output_within(c, Duration::from_secs(20));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{resume:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// --max-output-bytes takes units; --max-repeat-calls N is N identical calls in a row.
#[test]
fn guard_units_and_repeat_streaks() {
    let d = Dirs::new();
    let (out, ev, _) = run(
        &d,
        "echo \"$INIT\"; for i in 1 2 3 4; do echo \"$BASH_CALL\" | sed s/toolu_1/toolu_$i/; done; echo \"$RESULT\"",
        &["--max-repeat-calls", "3", "--max-output-bytes", "5MB"],
    );
    assert_eq!(out.status.code(), Some(0));
    let v = of_type(&ev, "policy.violation");
    let got: Vec<(&str, u64)> = v
        .iter()
        .map(|x| {
            (
                x["tool_use_id"].as_str().unwrap(),
                x["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, [("toolu_3", 3), ("toolu_4", 4)], "{v:?}");
    for bad in ["5XB", "1"] {
        let flag = if bad == "1" {
            "--max-repeat-calls"
        } else {
            "--max-output-bytes"
        };
        let o = Command::new(env!("CARGO_BIN_EXE_boo-normalize"))
            .args(["spawn", "--prompt", "x y", flag, bad])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{flag} {bad}");
    }
}
