//! `replay --as-claude` standing in for the CLI under `spawn --claude-bin`, on real captured runs
//! (no CLI needed): spawn sees claude's stdout, stderr and exit status, and `spawn --record`
//! captures it again, line for line, for a replay that gives spawn's envelope byte for byte.
#![cfg(target_os = "linux")]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{bin, events, root};
use serde_json::{Value, json};

/// Real captured runs: stdout, stderr and exit status (fixtures/captured/PROVENANCE.tsv).
fn captured_runs() -> Vec<(PathBuf, PathBuf, i32)> {
    let dir = root().join("fixtures/captured");
    let tsv = std::fs::read_to_string(dir.join("PROVENANCE.tsv")).unwrap();
    tsv.lines()
        .skip(1)
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            let err = dir.join(cols[0].replace(".ndjson", ".stderr.txt"));
            let code = cols.get(5)?.parse().ok()?;
            err.exists().then(|| (dir.join(cols[0]), err, code))
        })
        .collect()
}

/// A capture of a real run (documented format), lines 1 ms apart.
fn capture_of(out: &Path, err: &Path, code: i32) -> String {
    let stdout = std::fs::read_to_string(out).unwrap();
    let stderr = std::fs::read_to_string(err).unwrap();
    let mut recs = vec![
        json!({"rec":"header","format":"boo-capture","version":1,"run_id":"r",
        "start_unix_us":0,"source":"test","argv":null,"cli_version":null}),
    ];
    recs.extend(
        stderr
            .lines()
            .map(|l| json!({"rec":"err","at_us":0,"line":l})),
    );
    for (i, l) in stdout.lines().enumerate() {
        recs.push(json!({"rec":"out","at_us":i * 1000,"line":l}));
    }
    recs.push(
        json!({"rec":"end","at_us":99_999,"exit_code":code,"signal":null,
        "cli_version":null,"run_end":{"cause":"exit"}}),
    );
    recs.iter().map(|r| format!("{r}\n")).collect()
}

fn shim(dir: &Path, cap: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let exe = env!("CARGO_BIN_EXE_boo-normalize");
    let p = dir.join("fake-claude");
    let text = format!(
        "#!/bin/sh\nexec '{exe}' replay --speed max --as-claude='{}' \"$@\"\n",
        cap.display()
    );
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// Records of `kind` (`out`/`err`) of a capture: their lines.
fn lines_of(cap: &[u8], kind: &str) -> Vec<Value> {
    events(cap)
        .into_iter()
        .filter(|r| r["rec"] == kind)
        .map(|r| r["line"].clone())
        .collect()
}

fn spawn(cap: &Path, dir: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_boo-normalize"))
        .arg("spawn")
        .args(extra)
        .arg("--claude-bin")
        .arg(shim(dir, cap))
        .args(["--prompt", "fix the tests", "--", "--max-turns", "3"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn as_claude_drives_spawn_and_spawn_records_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let runs = captured_runs();
    assert!(runs.len() >= 8);
    for (out, err, code) in runs.iter().step_by(4) {
        let name = out.display();
        let cap = dir.path().join("src.jsonl");
        std::fs::write(&cap, capture_of(out, err, *code)).unwrap();
        let again = dir.path().join("again.jsonl");
        let live = spawn(&cap, dir.path(), &["--record", again.to_str().unwrap()]);
        assert_eq!(
            live.status.code(),
            Some(*code),
            "{name}: spawn mirrors the exit"
        );
        let ev = events(&live.stdout);
        let end = ev.last().unwrap();
        assert_eq!(end["cause"], "exit");
        assert_eq!(end["exit_code"], *code);
        // claude's stderr reached spawn (passed through, prefixed).
        let want_err: Vec<String> = std::fs::read_to_string(err)
            .unwrap()
            .lines()
            .map(|l| format!("claude: {l}"))
            .collect();
        // (spawn's own notice of provider settings it did not pass, e.g. this machine's AWS_*,
        // is not claude's)
        let got_err = String::from_utf8_lossy(&live.stderr);
        let got_err: Vec<&str> = got_err
            .lines()
            .filter(|l| !l.starts_with("boo-normalize: spawn: not passed to claude: "))
            .collect();
        assert_eq!(got_err, want_err, "{name}");
        // Everything but run.end is what normalize makes of the same stdout.
        let direct = events(&bin().arg(out).output().unwrap().stdout);
        assert_eq!(ev[..ev.len() - 1], direct[..direct.len() - 1], "{name}");
        // spawn's capture holds what the stand-in wrote and replays to spawn's envelope.
        let (src, rec) = (std::fs::read(&cap).unwrap(), std::fs::read(&again).unwrap());
        assert_eq!(lines_of(&rec, "out"), lines_of(&src, "out"), "{name}");
        assert_eq!(lines_of(&rec, "err"), lines_of(&src, "err"), "{name}");
        let replay = bin()
            .args(["replay", "--speed", "max"])
            .arg(&again)
            .output()
            .unwrap();
        assert_eq!(
            replay.stdout, live.stdout,
            "{name}: replay of spawn's capture"
        );
        // With --stderr-events, each stderr line is a child.stderr event, and a replay with
        // --stderr-events puts them back where they were.
        let with = spawn(
            &cap,
            dir.path(),
            &["--stderr-events", "--record", again.to_str().unwrap()],
        );
        let n = events(&with.stdout)
            .iter()
            .filter(|e| e["type"] == "child.stderr")
            .count();
        assert_eq!(n, want_err.len(), "{name}");
        let replay = bin()
            .args(["replay", "--speed", "max", "--stderr-events"])
            .arg(&again)
            .output()
            .unwrap();
        assert_eq!(replay.stdout, with.stdout, "{name}: replay --stderr-events");
    }
}
