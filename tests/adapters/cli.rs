//! What every adapter relies on, against the real CLI: tool calls paired with their results,
//! strict-schema validity, `--max-turns`, and record/replay of a live run.

use std::fs;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use super::harness::*;
use crate::spawn::common::*;

#[test]
fn tool_calls_and_results() {
    need_cli!();
    let d = Dirs::new();
    fs::write(d.work.join("notes.txt"), "fixture notes\n").unwrap();
    let script: Value = scenario("tools.json");
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
    assert_eq!(end["cli_version"], cli_version());
    assert_eq!(end["signals_sent"], json!([]));
    assert_eq!(code, Some(0));
    let v = schema_validator();
    for e in &ev {
        assert!(v.is_valid(e), "not valid under the strict schema: {e}");
    }
    assert_no_procs(&mark, Duration::from_secs(2));
}

#[test]
fn max_turns() {
    need_cli!();
    let d = Dirs::new();
    fs::write(d.work.join("notes.txt"), "fixture notes\n").unwrap();
    let script: Value = scenario("max_turns.json");
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

/// Record a live run of the real CLI with `spawn --record`, replay it (the same envelope, byte
/// for byte), then let the capture stand in for the CLI under `spawn` (`replay --as-claude`
/// behind `--claude-bin`): the same envelope again, except `run.end`'s `elapsed_ms`.
#[test]
fn record_replay_and_stand_in_round_trip() {
    need_cli!();
    let d = Dirs::new();
    fs::write(d.work.join("notes.txt"), "fixture notes\n").unwrap();
    let script: Value = scenario("tools.json");
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
    let live = succeeded_within(c, RUN_MAX);
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
    assert_eq!(end["cli_version"], cli_version());

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
