//! `spawn` against the real Claude Code CLI (npm `@anthropic-ai/claude-code`, pinned below) and
//! the loopback Messages API stand-in `tests/support/fake_anthropic.py`. Skipped, with a
//! message, when node/npm/python3 or the package are not available.
#![cfg(target_os = "linux")]

mod spawn_common;

use std::fs;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use spawn_common::*;

/// The pinned CLI version (JS release: runs on node, small install, captured in fixtures/).
const CLI_VERSION: &str = "2.1.45";

const RUN_MAX: Duration = Duration::from_secs(90);

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The installed CLI, or `None` (after printing why) when it cannot be had.
fn cli() -> Option<&'static PathBuf> {
    static CLI: OnceLock<Option<PathBuf>> = OnceLock::new();
    CLI.get_or_init(|| {
        let py = Command::new("python3").arg("--version").output();
        if !py.is_ok_and(|o| o.status.success()) {
            eprintln!("SKIP spawn_claude: python3 not available (needed for fake_anthropic.py)");
            return None;
        }
        let out = Command::new("bash")
            .arg(root().join("tests/support/install-claude.sh"))
            .arg(CLI_VERSION)
            .stderr(Stdio::piped())
            .output();
        match out {
            Ok(o) if o.status.success() => {
                let p = String::from_utf8_lossy(&o.stdout).trim().to_owned();
                Some(PathBuf::from(p))
            }
            Ok(o) => {
                eprintln!(
                    "SKIP spawn_claude: claude CLI {CLI_VERSION} could not be installed: {}",
                    String::from_utf8_lossy(&o.stderr)
                        .lines()
                        .last()
                        .unwrap_or("")
                );
                None
            }
            Err(e) => {
                eprintln!("SKIP spawn_claude: cannot run install-claude.sh: {e}");
                None
            }
        }
    })
    .as_ref()
}

macro_rules! need_cli {
    () => {
        match cli() {
            Some(c) => c,
            None => return,
        }
    };
}

/// The fake API, killed on drop.
struct Fake {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Fake {
    // The child is waited for in `Drop`.
    #[allow(clippy::zombie_processes)]
    fn start(d: &Dirs, script: &Value) -> Fake {
        let text = script
            .to_string()
            .replace("@CWD@", d.work.to_str().unwrap());
        let sp = d.path().join("script.json");
        fs::write(&sp, text).unwrap();
        let pf = d.path().join("port");
        let log = d.path().join("requests.jsonl");
        let mut child = Command::new("python3")
            .arg(root().join("tests/support/fake_anthropic.py"))
            .arg("--script")
            .arg(&sp)
            .arg("--port-file")
            .arg(&pf)
            .arg("--log")
            .arg(&log)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 fake_anthropic.py");
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(s) = fs::read_to_string(&pf)
                && let Ok(port) = s.trim().parse()
            {
                return Fake { child, port, log };
            }
            if Instant::now() >= until {
                let _ = child.kill();
                let _ = child.wait();
                panic!("fake_anthropic.py did not start");
            }
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    fn requests(&self) -> Vec<Value> {
        fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `boo-normalize spawn` for the real CLI against `fake`: clean environment, key from an
/// `apiKeyHelper` (so `ANTHROPIC_API_KEY` is free for the stripping test), tools allowed.
fn claude_cmd(
    d: &Dirs,
    fake: &Fake,
    mark: &str,
    spawn_args: &[&str],
    claude_args: &[&str],
) -> Command {
    let mut c = command(&d.home, mark);
    c.current_dir(&d.work)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .arg("spawn")
        .arg("--claude-bin")
        .arg(need_path())
        .args(["--env", "BOO_TEST_MARK"])
        .arg("--env")
        .arg(format!("ANTHROPIC_BASE_URL=http://127.0.0.1:{}", fake.port))
        .args(["--env", "IS_SANDBOX=1", "--env", "DISABLE_AUTOUPDATER=1"])
        .args([
            "--env",
            "DISABLE_TELEMETRY=1",
            "--env",
            "DISABLE_ERROR_REPORTING=1",
        ])
        .args(spawn_args)
        .args(["--", "--permission-mode", "bypassPermissions", "--settings"])
        .arg(r#"{"apiKeyHelper":"echo sk-ant-helper-dummy-000"}"#)
        .args(claude_args);
    c
}

fn need_path() -> &'static PathBuf {
    cli().expect("checked by need_cli!")
}

/// Run to the end and return the status code and the (checked) events.
fn finish(c: Command) -> (Option<i32>, Vec<Value>, String) {
    let out = output_within(c, RUN_MAX);
    let ev = events(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!ev.is_empty(), "no output; stderr: {err}");
    check_envelope(&ev);
    (out.status.code(), ev, err)
}

fn schema_validator() -> jsonschema::Validator {
    let out = Command::new(BIN)
        .args(["schema", "--strict"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    jsonschema::validator_for(&doc).expect("schema compiles")
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[test]
fn tool_calls_and_results() {
    need_cli!();
    let d = Dirs::new();
    fs::write(d.work.join("notes.txt"), "fixture notes\n").unwrap();
    let script: Value = serde_json::from_str(
        &fs::read_to_string(root().join("tests/support/scenarios/tools.json")).unwrap(),
    )
    .unwrap();
    let fake = Fake::start(&d, &script);
    let mark = marker("tools");
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &[
            "--prompt",
            "Run `echo hello`, then read notes.txt and tell me what it says.",
        ],
        &["--max-turns", "5"],
    );
    let (code, ev, err) = finish(c);
    let calls = of_type(&ev, "tool.call");
    let names: Vec<_> = calls.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Bash", "Read"], "stderr: {err}");
    let results = of_type(&ev, "tool.result");
    assert_eq!(results.len(), 2);
    for (c, r) in calls.iter().zip(&results) {
        assert_eq!(c["tool_use_id"], r["tool_use_id"]);
        assert_eq!(r["is_error"], false);
    }
    assert!(text_of(&results[0]["content"]).contains("hello"));
    assert!(text_of(&results[1]["content"]).contains("fixture notes"));
    assert!(
        !of_type(&ev, "text.delta").is_empty(),
        "partial messages were requested"
    );
    let turn = of_type(&ev, "turn.end");
    assert_eq!(turn.len(), 1);
    assert_eq!(turn[0]["outcome"], "success");
    let end = run_end(&ev);
    assert_eq!(end["cause"], "exit");
    assert_eq!(end["exit_code"], 0);
    assert_eq!(end["terminal_seen"], true);
    assert_eq!(end["cli_version"], CLI_VERSION);
    assert_eq!(end["signals_sent"], json!([]));
    assert_eq!(code, Some(0));
    let v = schema_validator();
    for e in &ev {
        assert!(v.is_valid(e), "not valid under the strict schema: {e}");
    }
    assert_no_procs(&mark, Duration::from_secs(2));
}

#[test]
fn api_500_and_401_mirror_the_exit_code() {
    need_cli!();
    for status in [500, 401] {
        let d = Dirs::new();
        let fake = Fake::start(&d, &json!({"responses": [{"error": status, "repeat": -1}]}));
        let mark = marker("apierr");
        let mut c = claude_cmd(
            &d,
            &fake,
            &mark,
            &["--prompt", "Say hi."],
            &["--max-turns", "3"],
        );
        c.env("CLAUDE_CODE_MAX_RETRIES", "1");
        let (code, ev, err) = finish(c);
        let turn = of_type(&ev, "turn.end");
        assert_eq!(turn.len(), 1, "{status}: {err}");
        assert_eq!(turn[0]["is_error"], true, "{status}");
        assert_ne!(turn[0]["outcome"], "success");
        let want = if status == 401 { "API key" } else { "500" };
        assert!(text_of(&turn[0]["result"]).contains(want), "{}", turn[0]);
        let end = run_end(&ev);
        assert_eq!(end["cause"], "exit");
        assert_eq!(end["exit_code"], 1, "{status}");
        assert_eq!(code, Some(1), "{status}");
        assert_no_procs(&mark, Duration::from_secs(2));
    }
}

#[test]
fn max_turns() {
    need_cli!();
    let d = Dirs::new();
    fs::write(d.work.join("notes.txt"), "fixture notes\n").unwrap();
    let script: Value = serde_json::from_str(
        &fs::read_to_string(root().join("tests/support/scenarios/max_turns.json")).unwrap(),
    )
    .unwrap();
    let fake = Fake::start(&d, &script);
    let mark = marker("maxturns");
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &["--prompt", "Keep checking until it works."],
        &["--max-turns", "1"],
    );
    let (code, ev, _) = finish(c);
    let turn = of_type(&ev, "turn.end");
    assert_eq!(turn.last().unwrap()["outcome"], "max_turns");
    let end = run_end(&ev);
    assert_eq!(end["cause"], "exit");
    assert_eq!(code.map(Value::from), Some(end["exit_code"].clone()));
}

/// A Bash call that leaves a process in the background (own session via nohup + `&`), then the
/// API hangs.
fn background_then_hang(mark: &str) -> Value {
    json!({"responses": [
        {"content": [{"type": "tool_use", "name": "Bash", "input": {
            "command": format!("nohup sh -c 'sleep 300; echo {mark}' >/dev/null 2>&1 & echo started"),
            "description": "start a background job"}}]},
        {"hang": true, "repeat": -1}
    ]})
}

#[test]
fn idle_timeout_after_background_process_cleans_up() {
    need_cli!();
    let d = Dirs::new();
    let mark = marker("idle");
    let fake = Fake::start(&d, &background_then_hang(&mark));
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &[
            "--prompt",
            "Start the job.",
            "--idle-timeout",
            "6s",
            "--grace",
            "2s",
        ],
        &[],
    );
    let (code, ev, err) = finish(c);
    let results = of_type(&ev, "tool.result");
    assert_eq!(results.len(), 1, "{err}");
    assert!(text_of(&results[0]["content"]).contains("started"));
    let end = run_end(&ev);
    assert_eq!(end["cause"], "idle_timeout");
    assert_eq!(end["terminal_seen"], false);
    assert_eq!(end["signals_sent"][0], "SIGINT");
    assert!(end["descendants_killed"].as_u64().unwrap() >= 1, "{end}");
    assert_eq!(code, Some(124));
    assert_no_procs(&mark, Duration::from_secs(1));
}

#[test]
fn sigint_is_forwarded_and_everything_cleaned_up() {
    need_cli!();
    let d = Dirs::new();
    let mark = marker("sigint");
    let fake = Fake::start(&d, &background_then_hang(&mark));
    let mut c = claude_cmd(
        &d,
        &fake,
        &mark,
        &["--prompt", "Start the job.", "--grace", "3s"],
        &[],
    );
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let _dog = Watchdog::new(child.id(), Duration::from_secs(120));
    let mut r = BufReader::new(child.stdout.take().unwrap());
    let first = read_until(&mut r, |e| e["type"] == "tool.result");
    assert_eq!(first.last().unwrap()["type"], "tool.result", "{first:?}");
    // The background job is running now, in a session of its own.
    let until = Instant::now() + Duration::from_secs(10);
    while !procs_with(&mark)
        .iter()
        .any(|(_, cmd)| cmd.contains("sleep 300"))
    {
        assert!(Instant::now() < until, "background job not found");
        std::thread::sleep(Duration::from_millis(50));
    }
    send_signal(child.id(), "INT");
    let rest = read_until(&mut r, |_| false);
    let out = wait_within(child, RUN_MAX);
    let ev: Vec<_> = first.into_iter().chain(rest).collect();
    check_envelope(&ev);
    let end = run_end(&ev);
    assert_eq!(end["cause"], "interrupted");
    assert_eq!(end["reason"], "SIGINT");
    assert_eq!(end["signals_sent"][0], "SIGINT");
    assert!(end["descendants_killed"].as_u64().unwrap() >= 1, "{end}");
    assert_eq!(out.status.code(), Some(130));
    assert_no_procs(&mark, Duration::from_secs(1));
}

fn env_script() -> Value {
    json!({"responses": [
        {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": "env", "description": "show env"}}]},
        {"content": [{"type": "text", "text": "Here is the environment."}]}
    ]})
}

#[test]
fn api_key_is_stripped_from_the_child() {
    need_cli!();
    for keep in [false, true] {
        let d = Dirs::new();
        let fake = Fake::start(&d, &env_script());
        let mark = marker("key");
        let secret = format!("sk-ant-api03-{mark}");
        let extra: &[&str] = if keep { &["--keep-env-key"] } else { &[] };
        let mut c = claude_cmd(
            &d,
            &fake,
            &mark,
            &[&["--prompt", "Show the env."], extra].concat(),
            &[],
        );
        c.env("ANTHROPIC_API_KEY", &secret);
        let (code, ev, err) = finish(c);
        assert_eq!(code, Some(0), "{err}");
        let results = of_type(&ev, "tool.result");
        assert_eq!(results.len(), 1, "{err}");
        let content = text_of(&results[0]["content"]);
        assert!(
            content.contains("BOO_TEST_MARK="),
            "the env call ran: {content}"
        );
        assert_eq!(content.contains(&secret), keep, "keep={keep}");
        let init = of_type(&ev, "session.init");
        let source = if keep {
            "ANTHROPIC_API_KEY"
        } else {
            "apiKeyHelper"
        };
        assert_eq!(init[0]["api_key_source"], source);
    }
}

#[test]
fn long_prompt_goes_through_stdin() {
    need_cli!();
    let d = Dirs::new();
    let fake = Fake::start(
        &d,
        &json!({"responses": [{"content": [{"type": "text", "text": "Read it."}]}]}),
    );
    let mark = marker("stdin");
    let prompt = format!("{} END-{mark}", "Please read all of this. ".repeat(600));
    assert!(prompt.len() > 10 * 1024);
    let pf = d.path().join("prompt.txt");
    fs::write(&pf, &prompt).unwrap();
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &["--prompt-file", pf.to_str().unwrap()],
        &[],
    );
    let (code, ev, err) = finish(c);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(of_type(&ev, "turn.end")[0]["outcome"], "success");
    let got = fake.requests().iter().any(|r| {
        r["path"]
            .as_str()
            .is_some_and(|p| p.starts_with("/v1/messages"))
            && r["body"]["messages"]
                .to_string()
                .contains(&format!("END-{mark}"))
            && r["body"]["messages"].to_string().contains(&prompt[..200])
    });
    assert!(got, "the prompt did not reach the API");
}

#[test]
fn allow_tools_violation_is_enforced() {
    need_cli!();
    let d = Dirs::new();
    let mark = marker("policy");
    let fake = Fake::start(
        &d,
        &json!({"responses": [
            {"content": [{"type": "tool_use", "name": "Bash", "input": {
                "command": format!("sleep 30 # {mark}"), "description": "wait"}}]},
            {"content": [{"type": "text", "text": "done"}]}
        ]}),
    );
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &[
            "--prompt",
            "Wait a bit.",
            "--allow-tools",
            "Read,Grep",
            "--enforce",
            "--grace",
            "2s",
        ],
        &[],
    );
    let (code, ev, _) = finish(c);
    let v = of_type(&ev, "policy.violation");
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0]["rule"], "allow_tools");
    assert_eq!(v[0]["name"], "Bash");
    assert_eq!(v[0]["enforced"], true);
    assert_eq!(
        v[0]["tool_use_id"],
        of_type(&ev, "tool.call")[0]["tool_use_id"]
    );
    let end = run_end(&ev);
    assert_eq!(end["cause"], "killed");
    assert_eq!(end["reason"], "policy");
    assert_eq!(end["signals_sent"][0], "SIGINT");
    assert_eq!(code, Some(125));
    assert_no_procs(&mark, Duration::from_secs(1));
}

/// The allowlist is load-bearing, not a race: `--allow-tools Read,Grep` becomes claude's own
/// `--tools Read,Grep`, so a Bash call the model asks for is never offered nor run. Without
/// `--enforce` the run goes on (the stream check still reports the call), and the file the
/// call would write never appears.
#[test]
fn allow_tools_keeps_a_disallowed_tool_from_running() {
    need_cli!();
    let d = Dirs::new();
    let mark = marker("allow");
    let target = d.work.join("written-by-bash.txt");
    let fake = Fake::start(
        &d,
        &json!({"responses": [
            {"content": [{"type": "tool_use", "name": "Bash", "input": {
                "command": format!("touch {} # {mark}", target.display()), "description": "write"}}]},
            {"content": [{"type": "text", "text": "done"}]}
        ]}),
    );
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &["--prompt", "Write the file.", "--allow-tools", "Read,Grep"],
        &[],
    );
    let (code, ev, _) = finish(c);
    assert!(!target.exists(), "the disallowed Bash call ran");
    let v = of_type(&ev, "policy.violation");
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0]["name"], "Bash");
    assert_eq!(v[0]["enforced"], false);
    // claude answered the call itself (the tool is not available), and the run ended normally.
    let results = of_type(&ev, "tool.result");
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["is_error"], true);
    assert_eq!(run_end(&ev)["cause"], "exit");
    assert_eq!(code, Some(0));
    // The tools claude offered: no Bash.
    let init = &of_type(&ev, "session.init")[0];
    let tools: Vec<&str> = init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t.as_str())
        .collect();
    assert!(!tools.contains(&"Bash"), "{tools:?}");
    assert!(tools.contains(&"Read"), "{tools:?}");
}

/// Record a live run of the real CLI with `spawn --record`, replay it (the same envelope, byte
/// for byte), then let the capture stand in for the CLI under `spawn` (`replay --as-claude`
/// behind `--claude-bin`): the same envelope again, except `run.end`'s `elapsed_ms`.
#[test]
fn record_replay_and_stand_in_round_trip() {
    need_cli!();
    let d = Dirs::new();
    fs::write(d.work.join("notes.txt"), "fixture notes\n").unwrap();
    let script: Value = serde_json::from_str(
        &fs::read_to_string(root().join("tests/support/scenarios/tools.json")).unwrap(),
    )
    .unwrap();
    let fake = Fake::start(&d, &script);
    let mark = marker("record");
    let cap = d.path().join("run.capture.jsonl");
    let prompt = "Run `echo hello`, then read notes.txt and tell me what it says.";
    let c = claude_cmd(
        &d,
        &fake,
        &mark,
        &["--record", cap.to_str().unwrap(), "--prompt", prompt],
        &["--max-turns", "5"],
    );
    let live = output_within(c, RUN_MAX);
    assert_eq!(
        live.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&live.stderr)
    );
    let recs: Vec<Value> = events(&fs::read(&cap).unwrap());
    assert_eq!(recs[0]["source"], "spawn");
    let argv: Vec<&str> = recs[0]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(argv.contains(&prompt) && argv.contains(&"--output-format"));
    let end = recs.last().unwrap();
    assert_eq!(
        (end["rec"].as_str(), end["exit_code"].as_i64()),
        (Some("end"), Some(0))
    );
    assert_eq!(end["cli_version"], CLI_VERSION);

    let replayed = Command::new(BIN)
        .args(["replay", "--speed", "max"])
        .arg(&cap)
        .output()
        .unwrap();
    assert_eq!(
        replayed.stdout, live.stdout,
        "replay differs from the live run"
    );

    let shim = d.path().join("fake-claude");
    fs::write(
        &shim,
        format!(
            "#!/bin/sh\nexec '{BIN}' replay --speed max --as-claude='{}' \"$@\"\n",
            cap.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&shim, fs::Permissions::from_mode(0o755)).unwrap();
    let mut c = command(&d.home, &mark);
    c.current_dir(&d.work)
        .arg("spawn")
        .arg("--claude-bin")
        .arg(&shim)
        .args(["--prompt", prompt, "--", "--max-turns", "5"]);
    let again = output_within(c, RUN_MAX);
    assert_eq!(again.status.code(), live.status.code());
    let (mut a, mut b) = (events(&live.stdout), events(&again.stdout));
    for ev in [&mut a, &mut b] {
        ev.last_mut()
            .unwrap()
            .as_object_mut()
            .unwrap()
            .remove("elapsed_ms");
    }
    assert_eq!(
        a, b,
        "the capture standing in for claude gives the live run's envelope"
    );
}
