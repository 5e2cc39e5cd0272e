//! `boo-normalize probe`: the real binary against real claude CLI releases (2.1.45 by default;
//! 2.0.76 and the newest with `BOO_PROBE_VERSIONS=1`) and against stand-in CLIs that are
//! missing, not executable, crash, hang or print garbage. Each failure path checks that nothing
//! is left running and that the API's port is free again.
//!
//! Real-CLI runs go through `unshare -rn` (a network namespace with only loopback) where the
//! machine allows it; a test says `NOTE:` when it could not.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::probe::{fake_cli, probe, scenario_names, summary};
use crate::common::{bin, root};

/// The CLI installed by `install-claude.sh VERSION` (honours `CLAUDE_CLI_ROOT`), or `None` after
/// a `SKIP:` line when npm (or the install) is unavailable.
fn cli(version: &str) -> Option<PathBuf> {
    if !Command::new("npm")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
    {
        eprintln!("SKIP: npm is not available, cannot install claude {version}");
        return None;
    }
    let out = Command::new("bash")
        .arg(root().join("tests/support/install-claude.sh"))
        .arg(version)
        .stderr(Stdio::piped())
        .output()
        .expect("bash");
    if !out.status.success() {
        eprintln!(
            "SKIP: claude {version} could not be installed: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
        return None;
    }
    Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every scenario in both modes (auth_error only in stream) passes against `version`: the
/// captures, profile.json and summary.json are there and every run is clean.
fn full_probe(version: &str, dir: &Path) -> Option<Value> {
    let claude = cli(version)?;
    let out = probe(
        &[
            "--claude-bin",
            claude.to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
            "--keep-going",
        ],
        true,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "probe of {version}: {err}");
    let s = summary(dir);
    assert_eq!(s["failed"], 0, "{err}");
    let runs = s["runs"].as_array().unwrap();
    assert_eq!(runs.len(), scenario_names(&[]).len() * 2 - 1, "{err}");
    for r in runs {
        let file = dir.join(r["file"].as_str().unwrap());
        let text = fs::read_to_string(&file).unwrap();
        assert!(
            text.lines()
                .all(|l| serde_json::from_str::<Value>(l).is_ok()),
            "{}",
            file.display()
        );
        assert!(r["port_released"].as_bool().unwrap(), "{r}");
        assert!(r["problems"].as_array().unwrap().is_empty(), "{r}");
    }
    assert!(dir.join("profile.json").is_file());
    assert!(err.contains("run ") && err.contains("0 failed"), "{err}");
    Some(s)
}

/// 2.1.45 end to end: every scenario passes, the summary says what each run did, and the probe
/// directory is something `diff` takes as it is.
#[test]
fn probe_2_1_45_runs_every_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("probe");
    let Some(s) = full_probe("2.1.45", &out_dir) else {
        return;
    };
    assert_eq!(s["cli_version"], "2.1.45");
    let run = |id: &str| {
        s["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| {
                format!(
                    "{}.{}",
                    r["scenario"].as_str().unwrap(),
                    r["mode"].as_str().unwrap()
                ) == id
            })
            .cloned()
            .unwrap_or_else(|| panic!("no run {id}"))
    };
    assert_eq!(run("max_turns.stream")["results"][0], "error_max_turns");
    assert_eq!(run("auth_error.stream")["is_error"], true);
    assert_eq!(run("retry.partial")["requests"]["main"], 2);
    // The subagent's two turns and the main agent's two.
    assert_eq!(run("subagent.stream")["requests"]["main"], 4);
    let partial = fs::read_to_string(out_dir.join("thinking.partial.ndjson")).unwrap();
    for needle in [
        "thinking_delta",
        "signature_delta",
        "message_delta",
        "message_stop",
    ] {
        assert!(partial.contains(needle), "{needle}");
    }
    let tools = fs::read_to_string(out_dir.join("parallel_tools.partial.ndjson")).unwrap();
    assert!(tools.contains("input_json_delta"));
    let denied = fs::read_to_string(out_dir.join("permission_denied.stream.ndjson")).unwrap();
    assert!(denied.contains("\"permission_denials\":[{"));
    // A probe directory diffs against itself as it is (summary.json and profile.json included).
    let o = bin()
        .args(["diff", "--fail-on", "info"])
        .arg(&out_dir)
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// Two probes of one version: `diff --fail-on info` finds nothing (ids, timestamps and
/// durations vary, shapes do not), and `probe --baseline` runs that diff itself. Two scenarios
/// (the subagent one has the most moving parts), both modes, to keep the suite quick; the whole
/// set is compared by `BOO_PROBE_VERSIONS=1` (and by hand: benches/RESULTS.md).
#[test]
fn two_probes_of_one_version_do_not_differ() {
    let Some(claude) = cli("2.1.45") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let args = |out: &Path| {
        vec![
            "--claude-bin".to_owned(),
            claude.to_str().unwrap().to_owned(),
            "--out".to_owned(),
            out.to_str().unwrap().to_owned(),
            "--scenario".to_owned(),
            "bash".to_owned(),
            "--scenario".to_owned(),
            "subagent".to_owned(),
        ]
    };
    let first = args(&a);
    let out = probe(&first.iter().map(String::as_str).collect::<Vec<_>>(), true);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut second = args(&b);
    second.extend(
        [
            "--baseline",
            a.to_str().unwrap(),
            "--fail-on",
            "info",
            "--diff-format",
            "json",
        ]
        .map(str::to_owned),
    );
    let out = probe(&second.iter().map(String::as_str).collect::<Vec<_>>(), true);
    let report: Value = serde_json::from_slice(&out.stdout).expect("the diff report on stdout");
    assert_eq!(out.status.code(), Some(0), "{report}\n{}", stderr(&out));
    assert_eq!(report["changes"], serde_json::json!([]), "{report}");
    let o = bin()
        .args(["diff", "--fail-on", "info"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// A scenario file of the user's own runs instead of the built-ins; a script turn the CLI
/// never asks for fails the scenario with exit 4, naming it and the turn.
#[test]
fn scenario_files_run_and_unexpected_answers_fail() {
    let Some(claude) = cli("2.1.45") else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.json");
    fs::write(
        &file,
        r#"{"scenarios": [
          {"name": "mine", "prompt": "Say OK.", "modes": ["stream"],
           "responses": [{"label": "ok", "delay": 0.5, "content": [{"type": "text", "text": "OK."}]}]},
          {"name": "too_much", "prompt": "Say OK.", "modes": ["stream"],
           "responses": [{"label": "ok", "delay": 0.5, "content": [{"type": "text", "text": "OK."}]},
                         {"label": "a second turn", "content": [{"type": "text", "text": "never asked"}]}]}
        ]}"#,
    )
    .unwrap();
    let out_dir = dir.path().join("o");
    let out = probe(
        &[
            "--claude-bin",
            claude.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
            "--scenario-file",
            file.to_str().unwrap(),
            "--keep-going",
        ],
        true,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("probe: mine.stream: ok"), "{err}");
    assert!(
        err.contains("boo-normalize: probe: too_much.stream: the CLI never asked for scripted turn(s): a second turn"),
        "{err}"
    );
    let s = summary(&out_dir);
    assert_eq!(s["failed"], 1);
    assert_eq!(
        s["runs"].as_array().unwrap().len(),
        2,
        "only the file's scenarios"
    );
}

/// Newest release and 2.0.76 (`BOO_PROBE_VERSIONS=1`; the newest is a 380 MB download unless
/// `CLAUDE_CLI_ROOT` has it): every scenario passes on both, a second probe of the newest
/// does not differ at `--fail-on info`, and `diff` from 2.0.76 to the newest finds the real
/// changes: the subagent tool renamed Task → Agent, new `system` subtypes, new assistant-line
/// fields.
#[test]
fn old_and_newest_releases_differ_where_the_format_changed() {
    if std::env::var_os("BOO_PROBE_VERSIONS").is_none() {
        eprintln!("SKIP: set BOO_PROBE_VERSIONS=1 to probe 2.0.76 and the newest release");
        return;
    }
    let newest = Command::new("npm")
        .args(["view", "@anthropic-ai/claude-code", "version"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    let Some(newest) = newest else {
        eprintln!("SKIP: npm view @anthropic-ai/claude-code version failed");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("2.0.76");
    let new = dir.path().join(&newest);
    let new2 = dir.path().join("again");
    if full_probe("2.0.76", &old).is_none() || full_probe(&newest, &new).is_none() {
        return;
    }
    full_probe(&newest, &new2).unwrap();
    let same = bin()
        .args(["diff", "--fail-on", "info"])
        .arg(&new)
        .arg(&new2)
        .output()
        .unwrap();
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&same.stdout)
    );
    let o = bin()
        .args(["diff", "--format", "json"])
        .arg(&old)
        .arg(&new)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "breaking drift expected");
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let changes = report["changes"].as_array().unwrap();
    let text = serde_json::to_string(changes).unwrap();
    let has = |f: &dyn Fn(&Value) -> bool| changes.iter().any(f);
    assert!(
        has(&|c| c["change"] == "tool_renamed" && c["from"] == "Task" && c["value"] == "Agent"),
        "Task → Agent: {text}"
    );
    assert!(
        has(&|c| c["change"] == "kind_added"
            && c["kind"].as_str().is_some_and(|k| k.starts_with("system/"))),
        "new system subtypes: {text}"
    );
    assert!(
        has(&|c| c["change"] == "path_added" && c["kind"] == "assistant"),
        "new assistant-line fields: {text}"
    );
    // The same changes as the captures made against tests/support/fake_anthropic.py show
    // (fixtures/captured/, more scenarios): the rename, the task and retry subtypes, the
    // assistant-line fields both sets exercise.
    let fx = bin()
        .args(["diff", "--format", "json"])
        .arg(root().join("fixtures/captured/2.0.76"))
        .arg(root().join("fixtures/captured/2.1.332"))
        .output()
        .unwrap();
    let fx: Value = serde_json::from_slice(&fx.stdout).unwrap();
    let key = |c: &Value| format!("{} {} {} {}", c["change"], c["kind"], c["path"], c["value"]);
    let fixture: std::collections::HashSet<String> =
        fx["changes"].as_array().unwrap().iter().map(key).collect();
    for want in [
        "\"tool_renamed\" \"assistant.content/tool_use\" \"name\" \"Agent\"",
        "\"kind_added\" \"system/task_started\" null null",
        "\"kind_added\" \"system/task_notification\" null null",
        "\"kind_added\" \"system/api_retry\" null null",
        "\"path_added\" \"assistant\" \"request_id\" null",
        "\"path_added\" \"assistant\" \"subagent_type\" null",
    ] {
        let probed = changes.iter().any(|c| key(c) == want);
        assert!(
            probed && fixture.contains(want),
            "{want}: probe {probed}, fixtures {}",
            fixture.contains(want)
        );
    }
}

// ------------------------------------------------------------------ failure paths

/// Every pid the stand-in wrote is gone (not even a zombie of ours is left).
fn assert_nothing_left(dir: &Path) {
    let pids = fs::read_to_string(dir.join("pids")).unwrap_or_default();
    assert!(!pids.trim().is_empty(), "the stand-in never ran");
    for pid in pids.split_whitespace() {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat"));
        assert!(stat.is_err(), "process {pid} is still there: {stat:?}");
    }
}

/// The ports of the runs in `out/summary.json` can be bound again.
fn assert_ports_free(out: &Path) {
    let s = summary(out);
    let runs = s["runs"].as_array().unwrap();
    assert!(!runs.is_empty());
    for r in runs {
        let port = r["port"].as_u64().unwrap() as u16;
        assert!(r["port_released"].as_bool().unwrap());
        std::net::TcpListener::bind(("127.0.0.1", port))
            .unwrap_or_else(|e| panic!("port {port} still bound: {e}"));
    }
}

fn probe_fake(claude: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "--claude-bin",
        claude.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--scenario",
        "plain",
        "--modes",
        "stream",
    ];
    args.extend(extra);
    probe(&args, false)
}

#[test]
fn a_missing_cli_is_exit_127() {
    let dir = tempfile::tempdir().unwrap();
    let out = probe_fake(
        &dir.path().join("no-such-claude"),
        &dir.path().join("o"),
        &[],
    );
    assert_eq!(out.status.code(), Some(127));
    let err = stderr(&out);
    assert!(
        err.starts_with("boo-normalize: probe: --claude-bin: ") && err.contains("no such file"),
        "{err}"
    );
    assert!(!dir.path().join("o").exists(), "nothing written");
}

#[test]
fn a_cli_that_is_not_executable_is_exit_126() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("claude");
    fs::write(&p, "#!/bin/sh\n").unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
    let out = probe_fake(&p, &dir.path().join("o"), &[]);
    assert_eq!(out.status.code(), Some(126));
    assert!(
        stderr(&out).contains("not an executable file"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_crashing_cli_fails_the_scenario_with_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let claude = fake_cli(
        dir.path(),
        "claude",
        "echo 'Segmentation fault (core dumped)' >&2\nexit 1",
    );
    let o = dir.path().join("o");
    let out = probe_fake(&claude, &o, &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("boo-normalize: probe: plain.stream: the CLI printed nothing on stdout (exit 1; stderr: Segmentation fault (core dumped))"),
        "{err}"
    );
    assert!(err.contains("version unknown"), "{err}");
    assert_nothing_left(dir.path());
    assert_ports_free(&o);
}

#[test]
fn a_hanging_cli_is_stopped_and_everything_it_started_killed() {
    let dir = tempfile::tempdir().unwrap();
    // A child that leaves the process group (setsid) and one that stays; both must go.
    let claude = fake_cli(
        dir.path(),
        "claude",
        &format!(
            "setsid sleep 300 & echo $! >> '{d}/pids'\nsleep 300 & echo $! >> '{d}/pids'\nwait",
            d = dir.path().display()
        ),
    );
    let o = dir.path().join("o");
    let started = Instant::now();
    let out = probe_fake(
        &claude,
        &o,
        &["--timeout", "2s", "--scenario", "bash", "--keep-going"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("boo-normalize: probe: plain.stream: no end within 2 s: the CLI was stopped"),
        "{err}"
    );
    assert!(
        err.contains("probe: bash.stream: no end within 2 s"),
        "--keep-going: {err}"
    );
    assert!(
        err.contains("boo-normalize: probe: 2 of 2 runs failed"),
        "{err}"
    );
    // The version check (2 s), two runs (2 s each) and their stops (a few seconds of grace).
    assert!(started.elapsed() < Duration::from_secs(40));
    assert_nothing_left(dir.path());
    assert_ports_free(&o);
}

#[test]
fn a_cli_printing_garbage_fails_the_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let claude = fake_cli(
        dir.path(),
        "claude",
        "echo 'Welcome to claude!'\necho '{\"type\":\"result\",\"subtype\":\"success\"}'\necho 'bye'",
    );
    let o = dir.path().join("o");
    let out = probe_fake(&claude, &o, &["--scenario", "bash"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("boo-normalize: probe: plain.stream: 2 of 3 stdout lines are not JSON objects (first: \"Welcome to claude!\")"),
        "{err}"
    );
    // Without --keep-going the rest is not run, and the summary says so.
    let s = summary(&o);
    assert_eq!(s["not_run"], serde_json::json!(["bash.stream"]));
    assert_eq!(
        fs::read_to_string(o.join("plain.stream.ndjson"))
            .unwrap()
            .lines()
            .count(),
        3,
        "stdout kept verbatim"
    );
    assert_nothing_left(dir.path());
    assert_ports_free(&o);
}

/// `--claude-bin ./claude` means the caller's `./claude`, although each run starts in a
/// working directory of its own.
#[test]
fn a_relative_claude_bin_is_the_callers() {
    let dir = tempfile::tempdir().unwrap();
    fake_cli(dir.path(), "claude", "echo 'not json'");
    let out = Command::new(env!("CARGO_BIN_EXE_boo-normalize"))
        .current_dir(dir.path())
        .args([
            "probe",
            "--claude-bin",
            "./claude",
            "--out",
            "o",
            "--scenario",
            "plain",
        ])
        .args(["--modes", "stream"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("probe: plain.stream: 1 of 1 stdout lines are not JSON"),
        "{err}"
    );
    assert_nothing_left(dir.path());
}

#[test]
fn unknown_scenarios_and_bad_files_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let claude = fake_cli(dir.path(), "claude", "exit 0");
    let out = probe(
        &[
            "--claude-bin",
            claude.to_str().unwrap(),
            "--out",
            dir.path().join("o").to_str().unwrap(),
            "--scenario",
            "nope",
        ],
        false,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("probe: --scenario: no scenario \"nope\" (there are: plain, bash"),
        "{}",
        stderr(&out)
    );
    let bad = dir.path().join("bad.json");
    fs::write(
        &bad,
        r#"{"name": "x", "prompt": "p", "responses": [{"contnet": []}]}"#,
    )
    .unwrap();
    let out = probe(
        &[
            "--claude-bin",
            claude.to_str().unwrap(),
            "--out",
            dir.path().join("o").to_str().unwrap(),
            "--scenario-file",
            bad.to_str().unwrap(),
        ],
        false,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown field `contnet`"),
        "{}",
        stderr(&out)
    );
    // A directory holding other captures is refused (they would mix into diff).
    let other = dir.path().join("other");
    fs::create_dir(&other).unwrap();
    fs::write(other.join("mine.ndjson"), "{}\n").unwrap();
    let out = probe_fake(&claude, &other, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("already holds captures"),
        "{}",
        stderr(&out)
    );
}
