//! `profile` and `diff` on real output: the captures of several CLI versions made against the
//! loopback Messages API stand-in (`fixtures/captured/<version>/`) and the real captures from
//! public repositories (`fixtures/real/`). Options, errors and threads are in `options.rs`.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::{BIN, root};

pub(super) fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(root())
        .output()
        .expect("run boo-normalize")
}

pub(super) fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

pub(super) fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

/// `diff OLD NEW --format json [extra]`: exit code and the report.
pub(super) fn diff_json(old: &str, new: &str, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["diff", old, new, "--format", "json"];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(
        code(&o) == 0 || code(&o) == 1,
        "diff {old} {new}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (
        code(&o),
        serde_json::from_slice(&o.stdout).expect("json report"),
    )
}

pub(super) fn changes(report: &Value) -> &Vec<Value> {
    report["changes"].as_array().expect("changes")
}

/// The change with these members (`None` = any), if present.
fn find<'a>(
    report: &'a Value,
    change: &str,
    kind: &str,
    path: Option<&str>,
    value: Option<&str>,
) -> Option<&'a Value> {
    changes(report).iter().find(|c| {
        c["change"] == change
            && c["kind"] == kind
            && path.is_none_or(|p| c["path"] == p)
            && value.is_none_or(|v| c["value"] == v)
    })
}

fn severity<'a>(
    report: &'a Value,
    change: &str,
    kind: &str,
    path: Option<&str>,
    value: Option<&str>,
) -> &'a str {
    find(report, change, kind, path, value)
        .unwrap_or_else(|| panic!("no {change} {kind} {path:?} {value:?} in {report:#}"))["severity"]
        .as_str()
        .expect("severity")
}

/// Captured CLI versions, oldest first.
pub(super) fn captured_versions() -> Vec<String> {
    let dir = root().join("fixtures/captured");
    let mut v: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixtures/captured")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let key = |s: &String| -> Vec<u64> { s.split('.').map(|p| p.parse().unwrap_or(0)).collect() };
    v.sort_by_key(key);
    assert!(v.len() >= 4, "expected captures of at least 4 CLI versions");
    v
}

pub(super) fn captured(version: &str, file: &str) -> String {
    format!("fixtures/captured/{version}/{file}")
}

#[test]
fn oldest_vs_newest_capture_finds_the_documented_drift() {
    let v = captured_versions();
    let (old, new) = (captured(&v[0], ""), captured(v.last().unwrap(), ""));
    let (rc, r) = diff_json(&old, &new, &[]);
    assert_eq!(rc, 1, "breaking drift must fail the default --fail-on");
    // §12: claude_code_version and new init fields appeared; the subagent tool is `Agent`.
    assert_eq!(
        severity(
            &r,
            "path_added",
            "system/init",
            Some("claude_code_version"),
            None
        ),
        "additive"
    );
    assert_eq!(
        severity(
            &r,
            "path_added",
            "system/init",
            Some("fast_mode_state"),
            None
        ),
        "additive"
    );
    let rename = find(
        &r,
        "tool_renamed",
        "assistant.content/tool_use",
        Some("name"),
        Some("Agent"),
    )
    .expect("Task → Agent rename");
    assert_eq!(rename["from"], "Task");
    assert_eq!(rename["severity"], "breaking");
    // tool_use_result is absent before 2.0.5x; terminal_reason arrived ≈2.1.91.
    assert_eq!(
        severity(&r, "path_added", "user", Some("tool_use_result"), None),
        "additive"
    );
    assert_eq!(
        severity(
            &r,
            "path_added",
            "result/success",
            Some("terminal_reason"),
            None
        ),
        "additive"
    );
    assert_eq!(r["old"]["cli_versions"][0], v[0].as_str());
    // Nothing about ids, timestamps, numbers or free text.
    for c in changes(&r) {
        let path = c["path"].as_str().unwrap_or("");
        assert!(c["value"].as_str().is_none_or(|v| v.len() <= 40), "{c}");
        if c["change"] == "value_added" || c["change"] == "value_removed" {
            let last = path.rsplit('.').next().unwrap();
            assert!(
                !["uuid", "session_id", "timestamp", "text", "cwd", "model"].contains(&last),
                "{c}"
            );
        }
    }
}

#[test]
fn adjacent_captured_versions_show_their_changelog() {
    let v = captured_versions();
    // 1.0.x → 2.0.x: claude_code_version, skills, plugins on init; tool_use_result on user lines.
    let (_, r) = diff_json(&captured("1.0.128", ""), &captured("2.0.76", ""), &[]);
    for p in ["claude_code_version", "skills", "plugins"] {
        assert_eq!(
            severity(&r, "path_added", "system/init", Some(p), None),
            "additive"
        );
    }
    assert!(find(&r, "kind_added", "tool_use_result/Task", None, None).is_some());
    // 2.0.x → 2.1.4x: fast_mode_state; result.stop_reason; usage.inference_geo/iterations/speed.
    let (_, r) = diff_json(
        &captured("2.0.76", "subagent.ndjson"),
        &captured("2.1.45", "subagent.ndjson"),
        &[],
    );
    assert_eq!(
        severity(
            &r,
            "path_added",
            "system/init",
            Some("fast_mode_state"),
            None
        ),
        "additive"
    );
    for p in [
        "stop_reason",
        "usage.inference_geo",
        "usage.iterations",
        "usage.speed",
    ] {
        assert_eq!(
            severity(&r, "path_added", "result/success", Some(p), None),
            "additive",
            "{p}"
        );
    }
    // The same scenario on 2.1.45 and the newest that has it (2.1.332 has only captures of
    // modes): the subagent tool_use is renamed, and its tool_use_result shapes are compared with
    // each other rather than reported as a new kind.
    let newest = v
        .iter()
        .rev()
        .find(|n| root().join(captured(n, "subagent.ndjson")).exists())
        .unwrap();
    let (_, r) = diff_json(
        &captured("2.1.45", "subagent.ndjson"),
        &captured(newest, "subagent.ndjson"),
        &[],
    );
    assert!(
        find(
            &r,
            "tool_renamed",
            "assistant.content/tool_use",
            Some("name"),
            Some("Agent")
        )
        .is_some()
    );
    assert!(find(&r, "kind_added", "tool_use_result/Agent", None, None).is_none());
    assert!(find(&r, "kind_removed", "tool_use_result/Task", None, None).is_none());
}

/// Two runs of one scenario on one CLI version whose turns happened to end differently (one
/// stopped with end_turn, the other did not) do not flap: a documented stop reason is not drift.
/// A name added to an open list (2.1.331 added a capability) is reported at info level.
#[test]
fn documented_values_do_not_flap_and_open_lists_are_compared() {
    let dir = tempfile::tempdir().unwrap();
    let first = root().join(captured("1.0.128", "tools.ndjson"));
    let text = std::fs::read_to_string(&first).unwrap();
    assert!(text.contains(r#""stop_reason":"end_turn""#));
    let second = dir.path().join("run2.ndjson");
    std::fs::write(
        &second,
        text.replace(r#""stop_reason":"end_turn""#, r#""stop_reason":"tool_use""#),
    )
    .unwrap();
    let (f, s) = (first.to_str().unwrap(), second.to_str().unwrap());
    for (a, b) in [(f, s), (s, f)] {
        let (rc, r) = diff_json(a, b, &["--fail-on", "info"]);
        assert_eq!(rc, 0, "{r:#}");
        assert!(changes(&r).is_empty(), "{r:#}");
    }
    let newest = root().join(captured("2.1.331", "tools.ndjson"));
    let text = std::fs::read_to_string(&newest).unwrap();
    let grown = dir.path().join("grown.ndjson");
    std::fs::write(
        &grown,
        text.replacen(
            r#""capabilities":["#,
            r#""capabilities":["brand_new_v1","#,
            1,
        ),
    )
    .unwrap();
    let (rc, r) = diff_json(
        newest.to_str().unwrap(),
        grown.to_str().unwrap(),
        &["--fail-on", "info"],
    );
    assert_eq!(rc, 1, "{r:#}");
    let c = changes(&r);
    assert_eq!(c.len(), 1, "{r:#}");
    assert_eq!(c[0]["change"], "item_added");
    assert_eq!(c[0]["severity"], "info");
    assert_eq!(c[0]["value"], "brand_new_v1");
    let (rc, _) = diff_json(newest.to_str().unwrap(), grown.to_str().unwrap(), &[]);
    assert_eq!(rc, 0, "info is below the default --fail-on");
}

#[test]
fn two_runs_of_one_scenario_diff_clean() {
    let mut pairs = 0;
    for v in captured_versions() {
        let dir = root().join("fixtures/captured").join(&v);
        for e in std::fs::read_dir(&dir).unwrap().filter_map(|e| e.ok()) {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(scenario) = name.strip_suffix(".run2.ndjson") else {
                continue;
            };
            let first = captured(&v, &format!("{scenario}.ndjson"));
            let second = captured(&v, &name);
            let (rc, r) = diff_json(&first, &second, &["--fail-on", "info"]);
            assert_eq!(rc, 0, "{first} vs {second}: {r:#}");
            assert!(changes(&r).is_empty(), "{first} vs {second}: {r:#}");
            pairs += 1;
        }
    }
    assert!(pairs >= 1, "no <scenario>.run2.ndjson capture found");
}

#[test]
fn partial_messages_only_add_stream_events() {
    // Same version, same scenario, with and without --include-partial-messages.
    let mut pairs = 0;
    for v in captured_versions() {
        for s in ["tools", "subagent", "max_turns"] {
            let plain = captured(&v, &format!("{s}.ndjson"));
            let partial = captured(&v, &format!("{s}.partial.ndjson"));
            if !root().join(&partial).exists() {
                continue;
            }
            let (rc, r) = diff_json(&plain, &partial, &[]);
            assert_eq!(rc, 0, "{plain} vs {partial}: {r:#}");
            for c in changes(&r) {
                assert_eq!(c["severity"], "additive", "{plain} vs {partial}: {c}");
            }
            assert!(
                changes(&r)
                    .iter()
                    .any(|c| c["kind"].as_str().unwrap().starts_with("stream_event")),
                "{partial} has stream events"
            );
            pairs += 1;
        }
    }
    assert!(pairs >= 4);
}

/// Profile several real fixtures into one saved profile.
fn profile_real(dir: &Path, name: &str, prefix: &str) -> String {
    let mut files: Vec<String> = std::fs::read_dir(root().join("fixtures/real"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix) && n.ends_with(".ndjson"))
        .map(|n| format!("fixtures/real/{n}"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{prefix}");
    let out = dir.join(name).display().to_string();
    let mut args = vec!["profile", "-o", out.as_str()];
    args.extend(files.iter().map(String::as_str));
    let o = run(&args);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    out
}

#[test]
fn real_1_0_x_vs_2_1_76_from_saved_profiles() {
    let tmp = tempfile::tempdir().unwrap();
    let old = profile_real(tmp.path(), "terragon.json", "terragon__");
    let new = profile_real(tmp.path(), "backflow.json", "backflow__");
    let (rc, r) = diff_json(&old, &new, &[]);
    assert_eq!(rc, 1);
    for kind in ["assistant", "user", "system/init", "result/success"] {
        assert_eq!(
            severity(&r, "path_added", kind, Some("uuid"), None),
            "additive",
            "{kind}"
        );
    }
    assert_eq!(
        severity(
            &r,
            "path_added",
            "system/init",
            Some("claude_code_version"),
            None
        ),
        "additive"
    );
    assert_eq!(
        severity(
            &r,
            "path_added",
            "assistant.content/tool_use",
            Some("caller"),
            None
        ),
        "additive"
    );
    assert_eq!(
        severity(
            &r,
            "path_added",
            "result/success",
            Some("total_cost_usd"),
            None
        ),
        "additive"
    );
    for p in ["cost_usd", "total_cost"] {
        assert_eq!(
            severity(&r, "path_removed", "result/success", Some(p), None),
            "breaking",
            "{p}"
        );
    }
    let rename = find(
        &r,
        "tool_renamed",
        "assistant.content/tool_use",
        Some("name"),
        Some("Agent"),
    )
    .expect("Task → Agent");
    assert_eq!(rename["from"], "Task");
    // Old tools gone from init (LS, TodoRead, exit_plan_mode → ExitPlanMode).
    for t in ["LS", "TodoRead", "exit_plan_mode"] {
        assert_eq!(
            severity(&r, "tool_removed", "system/init", Some("tools[]"), Some(t)),
            "breaking"
        );
    }
    // Grep and Glob are both listed by the old CLI: not a rename of one another.
    assert!(
        changes(&r)
            .iter()
            .all(|c| c["change"] != "tool_renamed" || c["value"] == "Agent")
    );
    // Free-form maps are collapsed: no model names or tool argument names as paths.
    for c in changes(&r) {
        let p = c["path"].as_str().unwrap_or("");
        assert!(!p.contains("claude-") && !p.starts_with("input."), "{c}");
    }
}

#[test]
fn same_version_logs_have_no_breaking_drift_in_common_kinds() {
    for (a, b) in [
        (
            "gymnastics-graphics__graphics-registry-log",
            "gymnastics-graphics__rundown-editor-log",
        ),
        (
            "backflow__agent-output-taskprogress",
            "backflow__claude-output",
        ),
    ] {
        let (a, b) = (
            format!("fixtures/real/{a}.ndjson"),
            format!("fixtures/real/{b}.ndjson"),
        );
        let (rc, r) = diff_json(&a, &b, &[]);
        assert_eq!(rc, 0, "{a} vs {b}: {r:#}");
        // Reversed, kinds and tools only one log has are removals; fields of common kinds are not.
        let (_, r) = diff_json(&b, &a, &[]);
        for c in changes(&r) {
            if c["severity"] == "breaking" {
                assert!(
                    matches!(c["change"].as_str(), Some("kind_removed" | "tool_removed")),
                    "{b} vs {a}: {c}"
                );
            }
        }
    }
}

#[test]
fn profile_is_stable_and_saved_profiles_diff_clean_against_their_source() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.json");
    let o = run(&["profile", "fixtures/captured", "-o", a.to_str().unwrap()]);
    assert_eq!(code(&o), 0);
    // Same files named in reverse order, on stdout: byte-identical document.
    let mut files: Vec<String> = Vec::new();
    for v in captured_versions() {
        for e in std::fs::read_dir(root().join("fixtures/captured").join(&v)).unwrap() {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            if n.ends_with(".ndjson") {
                files.push(captured(&v, &n));
            }
        }
    }
    files.sort();
    files.reverse();
    let mut args = vec!["profile"];
    args.extend(files.iter().map(String::as_str));
    let b = stdout(&run(&args));
    let a_text = std::fs::read_to_string(&a).unwrap();
    assert_eq!(a_text, b);
    let doc: Value = serde_json::from_str(&a_text).unwrap();
    assert_eq!(doc["profile_version"], 1);
    assert!(doc.get("by_version").is_none());
    // A saved profile against the captures it came from, and against itself: no changes.
    for new in ["fixtures/captured", a.to_str().unwrap()] {
        let (rc, r) = diff_json(a.to_str().unwrap(), new, &["--fail-on", "info"]);
        assert_eq!(rc, 0);
        assert!(changes(&r).is_empty(), "{r:#}");
    }
}

#[test]
fn by_version_groups_by_init_version_or_version_directory() {
    let o = run(&["profile", "--by-version", "fixtures/captured"]);
    assert_eq!(code(&o), 0);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let groups: Vec<&String> = doc["by_version"].as_object().unwrap().keys().collect();
    let versions = captured_versions();
    let mut expected: Vec<&String> = versions.iter().collect();
    expected.sort();
    assert_eq!(groups, expected);
    // 1.0.x inits carry no claude_code_version: its group comes from the directory name.
    let first = &doc["by_version"][versions[0].as_str()];
    assert!(
        first["kinds"]["system/init"]["fields"]
            .get("claude_code_version")
            .is_none()
    );
    assert!(
        first["cli_versions"][versions[0].as_str()]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn noise_lines_and_foreign_objects_are_counted() {
    // financecim: a literal `-n` line and wrapper marker objects with foreign types.
    let o = run(&["profile", "fixtures/real/financecim__loop-log-small.ndjson"]);
    assert_eq!(code(&o), 0);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["input"]["non_json"], 1);
    assert!(doc["kinds"].get("loop_start_marker").is_some());
    // Arbitrary bytes on stdin.
    let tmp = tempfile::tempdir().unwrap();
    let junk = tmp.path().join("junk.ndjson");
    std::fs::write(
        &junk,
        b"\xff\xfe garbage\n[1,2]\n\"s\"\n{\"no_type\":1}\n{\"type\":42}\n\r\n{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"x\",\"content\":\"y\"}]},\"tool_use_result\":{\"a\":1}}\n{\"type\":\"assistant\"",
    )
    .unwrap();
    let o = run(&["profile", junk.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let i = &doc["input"];
    assert_eq!(
        (i["non_json"].as_u64(), i["non_object"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(
        (i["foreign"].as_u64(), i["blank"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(
        (i["objects"].as_u64(), i["unterminated"].as_u64()),
        (Some(1), Some(1))
    );
    assert!(doc["kinds"].get("tool_use_result/?").is_some());
}
