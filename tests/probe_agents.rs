//! `boo-normalize probe --agent …` against real releases of Codex, Gemini CLI, Qwen Code,
//! OpenCode and Copilot CLI from npm (installed under `target/agent-cli` by
//! `tests/support/install-agent.sh`; a test says `SKIP:` when npm or the install is
//! unavailable), inside a loopback-only network namespace where the machine allows it.
//!
//! Each agent's newest release (pinned: the one whose captures are committed) runs every built-in
//! scenario, and its fresh captures show no drift at all against the committed ones of that
//! release (`fixtures/agents/CLI/VERSION`, made by `tests/support/capture-agent.sh`): two
//! probes of one release do not differ. The older committed release is probed the same way
//! (on an idle 2-core machine the two take 0.5–3 minutes per agent). Failure paths (a missing
//! binary, a hanging CLI) are checked per agent with stand-ins.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use serde_json::Value;

use crate::common::probe::{fake_cli, probe, scenario_names, summary};
use crate::common::root;

/// (agent, newest pinned release, an older release) — the releases of `fixtures/agents/`.
pub(crate) const RELEASES: &[(&str, &str, &str)] = &[
    ("codex", "0.171.0", "0.169.0"),
    ("gemini", "0.61.0", "0.59.0"),
    ("qwen", "0.24.4", "0.24.2"),
    ("opencode", "1.18.33", "1.18.31"),
    ("copilot", "1.0.102", "1.0.92"),
];

/// One real probe at a time: each keeps both cores busy.
pub(crate) static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The CLI installed by `install-agent.sh AGENT VERSION`, or `None` after a `SKIP:` line.
pub(crate) fn cli(agent: &str, version: &str) -> Option<PathBuf> {
    let installed = Command::new("bash")
        .arg(root().join("tests/support/install-agent.sh"))
        .args([agent, version])
        .stderr(Stdio::piped())
        .output()
        .expect("bash");
    if !installed.status.success() {
        eprintln!(
            "SKIP: {agent} {version} could not be installed (npm unreachable?): {}",
            String::from_utf8_lossy(&installed.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
        return None;
    }
    Some(PathBuf::from(
        String::from_utf8_lossy(&installed.stdout).trim(),
    ))
}

/// Probe `agent` `version` with every scenario and diff it against its committed captures at
/// `--fail-on info`: every run passes, every line is JSON, every port is free again, and
/// nothing differs.
fn probe_release(agent: &str, version: &str) {
    let Some(bin) = cli(agent, version) else {
        return;
    };
    let baseline = root().join("fixtures/agents").join(agent).join(version);
    assert!(baseline.is_dir(), "{} missing", baseline.display());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(version);
    let o = probe(
        &[
            "--agent",
            agent,
            "--bin",
            bin.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--keep-going",
            "--baseline",
            baseline.to_str().unwrap(),
            "--fail-on",
            "info",
        ],
        true,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    let report = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{agent} {version}: {err}\n{report}"
    );
    assert!(
        report.contains("0 breaking, 0 additive, 0 info"),
        "{report}"
    );
    let s = summary(&out);
    assert_eq!(s["agent"], agent);
    assert_eq!(s["cli_version"], version, "{err}");
    assert_eq!(s["failed"], 0, "{err}");
    let runs = s["runs"].as_array().unwrap();
    let modes = s["modes"].as_array().unwrap().len();
    assert_eq!(
        runs.len(),
        scenario_names(&["--agent", agent]).len() * modes,
        "{err}"
    );
    for r in runs {
        let file = out.join(r["file"].as_str().unwrap());
        let text = fs::read_to_string(&file).unwrap();
        assert!(!text.is_empty(), "{}", file.display());
        for l in text.lines() {
            let v: Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}: {l}", file.display()));
            assert!(v.get("type").is_some(), "{}: {l}", file.display());
        }
        assert!(r["problems"].as_array().unwrap().is_empty(), "{r}");
        assert!(r["port_released"].as_bool().unwrap(), "{r}");
        assert_eq!(r["unknown_requests"], serde_json::json!([]), "{r}");
    }
}

fn releases(agent: &str) -> (&'static str, &'static str) {
    let (_, new, old) = RELEASES.iter().find(|(a, _, _)| *a == agent).unwrap();
    (new, old)
}

fn probe_agent(agent: &str) {
    let (new, old) = releases(agent);
    probe_release(agent, new);
    probe_release(agent, old);
}

#[test]
fn codex_releases_probe_clean_against_their_captures() {
    probe_agent("codex");
}

#[test]
fn gemini_releases_probe_clean_against_their_captures() {
    probe_agent("gemini");
}

#[test]
fn qwen_releases_probe_clean_against_their_captures() {
    probe_agent("qwen");
}

#[test]
fn opencode_releases_probe_clean_against_their_captures() {
    probe_agent("opencode");
}

#[test]
fn copilot_releases_probe_clean_against_their_captures() {
    probe_agent("copilot");
}

/// The committed captures of two releases of each agent compare with `diff` (no CLI needed),
/// and a release compared with itself shows nothing.
#[test]
fn committed_releases_diff() {
    for (agent, new, old) in RELEASES {
        let dir = root().join("fixtures/agents").join(agent);
        let o = crate::common::bin()
            .args(["diff", "--fail-on", "info"])
            .arg(dir.join(new))
            .arg(dir.join(new))
            .output()
            .unwrap();
        let report = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{agent}: {report}");
        assert!(
            report.contains("0 breaking, 0 additive, 0 info"),
            "{report}"
        );
        let o = crate::common::bin()
            .arg("diff")
            .arg(dir.join(old))
            .arg(dir.join(new))
            .output()
            .unwrap();
        let report = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.code().is_some_and(|c| c <= 1) && report.contains("breaking,"),
            "{agent} {old} → {new}: {report}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(report.contains(&format!("CLI {old}")), "{report}");
    }
}

#[test]
fn a_missing_binary_is_exit_127_for_every_agent() {
    for (agent, _, _) in RELEASES {
        let dir = tempfile::tempdir().unwrap();
        let o = crate::common::bin()
            .args(["probe", "--agent", agent, "--bin"])
            .arg(dir.path().join("no-such-cli"))
            .arg("--out")
            .arg(dir.path().join("o"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(127), "{agent}: {err}");
        assert!(
            err.starts_with("boo-normalize: probe: --bin: ") && err.contains("no such file"),
            "{err}"
        );
    }
}

/// A CLI that prints its version, then hangs (with a child of its own) in a scenario, is
/// stopped at --timeout: exit 4, the summary names the timeout, nothing is left running.
#[test]
fn a_hanging_agent_is_stopped_and_nothing_is_left() {
    for (agent, _, _) in RELEASES {
        let dir = tempfile::tempdir().unwrap();
        let cli = fake_cli(
            dir.path(),
            "agent",
            "case \"$*\" in *--version*) echo 9.9.9; exit 0;; esac\n\
             sleep 300 & echo $! >> \"$(dirname \"$0\")/pids\"\n\
             echo '{\"type\":\"started\"}'\nsleep 300",
        );
        let out = dir.path().join("o");
        let o = crate::common::bin()
            .args(["probe", "--agent", agent, "--bin"])
            .arg(&cli)
            .arg("--out")
            .arg(&out)
            .args(["--scenario", "plain", "--timeout", "2s"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(4), "{agent}: {err}");
        assert!(err.contains("no end within 2 s"), "{err}");
        let s = summary(&out);
        assert_eq!(s["runs"][0]["end"], "timeout");
        let pids = fs::read_to_string(dir.path().join("pids")).unwrap();
        assert_eq!(pids.split_whitespace().count(), 3, "{pids}");
        for pid in pids.split_whitespace() {
            assert!(
                fs::read_to_string(format!("/proc/{pid}/stat")).is_err(),
                "{agent}: process {pid} still there"
            );
        }
    }
}

/// Claude 2.1.332 runs the subagent of `subagent_default` (no `run_in_background`) in the
/// background: the capture has `system/background_tasks_changed`, a task notification and a
/// second `init` and `result`, and two probes of it do not differ.
#[test]
fn claude_runs_a_default_subagent_in_the_background() {
    let installed = Command::new("bash")
        .arg(root().join("tests/support/install-claude.sh"))
        .arg("2.1.332")
        .stderr(Stdio::piped())
        .output()
        .expect("bash");
    if !installed.status.success() {
        eprintln!("SKIP: claude 2.1.332 could not be installed (npm unreachable?)");
        return;
    }
    let claude = String::from_utf8_lossy(&installed.stdout).trim().to_owned();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let run = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "--bin",
            claude.as_str(),
            "--out",
            out.to_str().unwrap(),
            "--scenario",
            "subagent_default",
            "--modes",
            "stream",
        ];
        args.extend(extra);
        probe(&args, true)
    };
    let o = run(&a, &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = fs::read_to_string(a.join("subagent_default.stream.ndjson")).unwrap();
    let kinds: Vec<String> = text
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            format!(
                "{}/{}",
                v["type"].as_str().unwrap_or(""),
                v["subtype"].as_str().unwrap_or("")
            )
        })
        .collect();
    let count = |k: &str| kinds.iter().filter(|x| *x == k).count();
    assert!(count("system/background_tasks_changed") >= 1, "{kinds:?}");
    assert_eq!(count("system/task_notification"), 1, "{kinds:?}");
    assert_eq!(count("system/init"), 2, "{kinds:?}");
    assert_eq!(
        kinds.iter().filter(|k| k.starts_with("result/")).count(),
        2,
        "{kinds:?}"
    );
    assert!(
        text.contains("Async agent launched"),
        "no async launch result"
    );
    let o = run(
        &b,
        &["--baseline", a.to_str().unwrap(), "--fail-on", "info"],
    );
    let report = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{report}");
    assert!(
        report.contains("0 breaking, 0 additive, 0 info"),
        "{report}"
    );
}

/// `diff` names the CLI versions of probe directories not named after them, from the version the
/// probe recorded (`summary.json`), never "CLI unknown".
#[test]
fn diff_reads_the_version_of_a_probe_directory_from_its_summary() {
    let (agent, new, old) = RELEASES[0];
    let dir = tempfile::tempdir().unwrap();
    for (side, version) in [("before", old), ("after", new)] {
        let from = root().join("fixtures/agents").join(agent).join(version);
        let to = dir.path().join(side);
        fs::create_dir(&to).unwrap();
        for e in fs::read_dir(&from).unwrap() {
            let p = e.unwrap().path();
            fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        }
        let summary = serde_json::json!({"agent": agent, "cli_version": version, "runs": []});
        fs::write(to.join("summary.json"), summary.to_string()).unwrap();
    }
    let o = crate::common::bin()
        .arg("diff")
        .arg(dir.path().join("before"))
        .arg(dir.path().join("after"))
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(
        report.contains(&format!("CLI {old}")) && report.contains(&format!("CLI {new}")),
        "{report}"
    );
    assert!(!report.contains("unknown"), "{report}");
}
