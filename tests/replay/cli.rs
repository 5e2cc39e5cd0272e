//! Record and replay over every real capture: recording never changes the envelope, a replay
//! gives the same bytes as the direct normalize (every time), `--raw` gives back the input,
//! resuming gives the tail, audit logs replay like captures, and bad inputs are clear errors.

use crate::common;

use std::path::Path;

use common::{bin, events, fixtures, run};
use serde_json::{Value, json};

fn ok(out: &std::process::Output) -> &[u8] {
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    &out.stdout
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn record_replay_round_trip_on_every_fixture() {
    let dir = tempfile::tempdir().unwrap();
    for f in fixtures() {
        let input = std::fs::read(&f).unwrap();
        let cap = dir.path().join("cap.jsonl");
        let direct = run(&[], &input);
        let recorded = run(&["--record", s(&cap)], &input);
        assert_eq!(
            ok(&recorded),
            ok(&direct),
            "{}: --record changed the envelope",
            f.display()
        );
        // The capture is plain JSONL: a header, one `out` per input line, an end.
        let recs = events(&std::fs::read(&cap).unwrap());
        assert_eq!(recs[0]["rec"], "header");
        assert_eq!(recs.last().unwrap()["rec"], "end");
        assert_eq!(recs.len() as u64, common::line_count(&input) + 2);
        let replayed = run(&["replay", "--speed", "max", s(&cap)], b"");
        assert_eq!(
            ok(&replayed),
            ok(&direct),
            "{}: replay differs",
            f.display()
        );
        let again = run(&["replay", "--speed", "max", s(&cap)], b"");
        assert_eq!(
            ok(&again),
            ok(&replayed),
            "{}: replay not deterministic",
            f.display()
        );
        let raw = run(&["replay", "--raw", "--speed", "max", s(&cap)], b"");
        assert_eq!(
            ok(&raw),
            &input[..],
            "{}: --raw differs from the input",
            f.display()
        );
        // A plain stream-json file replays like normalize too.
        let plain = bin().args(["replay", s(&f)]).output().unwrap();
        assert_eq!(
            ok(&plain),
            ok(&direct),
            "{}: stream-json replay",
            f.display()
        );
    }
}

#[test]
fn awkward_bytes_survive_record_and_raw_replay() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("cap.jsonl");
    let input: &[u8] =
        b"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\"}\r\n\xff\xfe not utf8\n\n{\"type\":\"result\",\"subtype\":\"success\",\"session_id\":\"s\"}";
    let direct = run(&["--max-line-bytes", "20"], input);
    let rec = run(&["--max-line-bytes", "20", "--record", s(&cap)], input);
    assert_eq!(ok(&rec), ok(&direct));
    let recs = events(&std::fs::read(&cap).unwrap());
    assert_eq!(recs[2]["b64"], true);
    assert_eq!(recs[4]["nl"], false);
    let raw = run(&["replay", "--raw", s(&cap)], b"");
    assert_eq!(ok(&raw), input);
    let env = run(&["replay", "--max-line-bytes", "20", s(&cap)], b"");
    assert_eq!(ok(&env), ok(&direct));
}

#[test]
fn several_inputs_replay_as_one_stream() {
    let fx = fixtures();
    let (a, b) = (&fx[0], &fx[1]);
    let both = bin().args([s(a), s(b)]).output().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("cap.jsonl");
    let rec = bin()
        .args(["--record", s(&cap), s(a), s(b)])
        .output()
        .unwrap();
    assert_eq!(ok(&rec), ok(&both));
    let rep = bin().args(["replay", s(&cap)]).output().unwrap();
    assert_eq!(ok(&rep), ok(&both));
    let rep = bin().args(["replay", s(a), s(b)]).output().unwrap();
    assert_eq!(ok(&rep), ok(&both));
}

/// Every event line of `out` with its seq.
fn seqs(out: &[u8]) -> Vec<(u64, &[u8])> {
    out.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let v: Value = serde_json::from_slice(l).unwrap();
            (v["seq"].as_u64().unwrap(), l)
        })
        .collect()
}

#[test]
fn resume_gives_exactly_the_tail() {
    let fx: Vec<_> = fixtures().into_iter().step_by(9).collect();
    for f in fx {
        let full = bin().args(["replay", s(&f)]).output().unwrap();
        let all = seqs(ok(&full));
        let n = all.len() as u64;
        for from in [0, 1, n / 2, n - 1, n, n + 5] {
            let out = bin()
                .args(["replay", "--from-seq", &from.to_string(), s(&f)])
                .output()
                .unwrap();
            let got: Vec<_> = seqs(ok(&out));
            let want: Vec<_> = all.iter().filter(|(q, _)| *q >= from).cloned().collect();
            assert_eq!(got, want, "{} --from-seq {from}", f.display());
            let out = bin()
                .args(["replay", "--last-event-id", &from.to_string(), s(&f)])
                .output()
                .unwrap();
            let got: Vec<_> = seqs(ok(&out));
            let want: Vec<_> = all.iter().filter(|(q, _)| *q > from).cloned().collect();
            assert_eq!(got, want, "{} --last-event-id {from}", f.display());
        }
    }
}

/// An audit log in the sinks' documented format, built from the envelope and the input: the
/// first record of each input line carries it as `raw`.
fn audit_log(input: &[u8], envelope: &[u8], run_id: &str, extra_end: Value) -> String {
    let lines: Vec<&[u8]> = input
        .strip_suffix(b"\n")
        .unwrap_or(input)
        .split(|&b| b == b'\n')
        .collect();
    let mut out = String::new();
    let mut last_line = 0;
    for (i, mut ev) in events(envelope).into_iter().enumerate() {
        let mut rec = json!({
            "seq": ev["seq"],
            "run_id": run_id,
            "ts": format!("2025-11-22T15:32:{:02}.{:06}Z", i / 1000 % 60, i % 1000 * 1000),
            "mono_us": i * 1000,
            "cli_version": null,
        });
        if ev["type"] == "run.end" {
            for (k, v) in extra_end.as_object().unwrap() {
                ev[k] = v.clone();
            }
        }
        rec["event"] = ev.clone();
        if let Some(n) = ev["line"].as_u64()
            && n > last_line
        {
            last_line = n;
            let raw = lines[n as usize - 1];
            match std::str::from_utf8(raw) {
                Ok(t) => rec["raw"] = json!(t),
                Err(_) => panic!("fixture with invalid UTF-8"),
            }
        }
        rec["prev"] = json!("0".repeat(64));
        rec["hash"] = json!("0".repeat(64));
        out.push_str(&rec.to_string());
        out.push('\n');
    }
    out
}

#[test]
fn audit_logs_replay_their_last_run() {
    let fx = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("run.audit.jsonl");
    let (a, b) = (&fx[3], &fx[10]);
    let (ia, ib) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    let (ea, eb) = (run(&[], &ia), run(&[], &ib));
    let mut text = audit_log(&ia, ok(&ea), "run-a", json!({}));
    text += &audit_log(&ib, ok(&eb), "run-b", json!({}));
    std::fs::write(&log, text).unwrap();
    let out = bin().args(["replay", s(&log)]).output().unwrap();
    assert_eq!(ok(&out), ok(&eb), "the last run by default");
    let out = bin()
        .args(["replay", "--run", "run-a", s(&log)])
        .output()
        .unwrap();
    assert_eq!(ok(&out), ok(&ea), "--run picks one");
    let raw = bin()
        .args(["replay", "--raw", "--run", "run-a", s(&log)])
        .output()
        .unwrap();
    assert_eq!(ok(&raw), &ia[..]);
}

#[test]
fn run_end_members_of_the_recorded_run_are_kept() {
    let f = &fixtures()[5];
    let input = std::fs::read(f).unwrap();
    let env = run(&[], &input);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("a.jsonl");
    let extra = json!({"cause": "exit", "exit_code": 3, "signal": null, "elapsed_ms": 1234});
    std::fs::write(&log, audit_log(&input, ok(&env), "r", extra)).unwrap();
    let out = bin().args(["replay", s(&log)]).output().unwrap();
    let evs = events(ok(&out));
    let end = evs.last().unwrap();
    assert_eq!(end["cause"], "exit");
    assert_eq!(end["exit_code"], 3);
    assert_eq!(end["elapsed_ms"], 1234);
    assert!(end["signal"].is_null());
    let keys: Vec<&str> = end
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(
        keys.last(),
        Some(&"stats"),
        "extras come before stats, like a live run.end"
    );
}

#[test]
fn bad_inputs_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.jsonl");
    let out = bin().args(["replay", s(&missing)]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("boo-normalize: ") && err.contains("missing.jsonl"),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    let cap = dir.path().join("bad.jsonl");
    std::fs::write(
        &cap,
        "{\"rec\":\"header\",\"format\":\"boo-capture\",\"version\":1}\n{\"rec\":\"out\",\"at_us\":1,\"line\":\"{}\"}\nnot json \x1b[31m\n",
    )
    .unwrap();
    let out = bin().args(["replay", s(&cap)]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.jsonl:3: not a record"), "{err}");
    assert!(!err.contains('\x1b'), "control characters are not echoed");

    let out = bin()
        .args(["replay", "--speed", "0", s(&cap)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = bin().args(["replay"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = bin()
        .args(["replay", "--follow", s(&cap), s(&cap)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));

    let out = bin()
        .args(["--record", s(&dir.path().join("no/such/dir/c.jsonl"))])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/dir/c.jsonl"));
}

#[test]
fn unknown_record_kinds_are_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("c.jsonl");
    std::fs::write(
        &cap,
        "{\"rec\":\"header\",\"format\":\"boo-capture\",\"version\":1,\"run_id\":\"r\"}\n{\"rec\":\"note\",\"at_us\":1}\n{\"rec\":\"note\",\"at_us\":2}\n{\"rec\":\"out\",\"at_us\":3,\"line\":\"{\\\"type\\\":\\\"result\\\",\\\"subtype\\\":\\\"success\\\"}\"}\n",
    )
    .unwrap();
    let out = bin().args(["replay", s(&cap)]).output().unwrap();
    let evs = events(ok(&out));
    assert_eq!(evs[0]["type"], "turn.end");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("unknown kind `note`").count(), 1, "{err}");
}

/// `rec`'s records with their `seq` and `mono_us` moved on by `seq` and `mono`: a session's
/// restarted CLI goes on numbering the session's run.
fn moved(rec: &str, seq: u64, mono: u64) -> String {
    let mut out = String::new();
    for l in rec.lines() {
        let mut r: Value = serde_json::from_str(l).unwrap();
        r["seq"] = json!(r["seq"].as_u64().unwrap() + seq);
        r["event"]["seq"] = r["seq"].clone();
        r["mono_us"] = json!(r["mono_us"].as_u64().unwrap() + mono);
        out.push_str(&r.to_string());
        out.push('\n');
    }
    out
}

#[test]
fn a_restarted_session_replays_to_its_last_run_end() {
    // `acp` writes a session as one run; its CLI restarted, the run has a run.end per CLI run,
    // and another session's records may come in between.
    let fx = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("acp.audit.jsonl");
    let (a, b) = (&fx[3], &fx[10]);
    let (ia, ib) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    let (ea, eb) = (run(&[], &ia), run(&[], &ib));
    let first = audit_log(&ia, ok(&ea), "sess", json!({"cause": "signal"}));
    let n = first.lines().count() as u64;
    let mut text = first;
    // The other session's lines are the first CLI's again: taking them would show.
    text += &audit_log(&ia, ok(&ea), "other", json!({}));
    text += &moved(&audit_log(&ib, ok(&eb), "sess", json!({})), n, n * 1000);
    std::fs::write(&log, &text).unwrap();
    let ends = text.lines().filter(|l| l.contains("\"run.end\"")).count();
    assert_eq!(
        ends, 3,
        "two CLI runs of the session and the other one's end"
    );

    let raw = bin()
        .args(["replay", "--raw", "--run", "sess", s(&log)])
        .output()
        .unwrap();
    assert_eq!(
        ok(&raw),
        [&ia[..], &ib[..]].concat(),
        "both CLI runs' lines, not the first only"
    );
    let both = run(&[], &[&ia[..], &ib[..]].concat());
    let out = bin()
        .args(["replay", "--speed", "max", "--run", "sess", s(&log)])
        .output()
        .unwrap();
    assert_eq!(ok(&out), ok(&both), "one run, to its last run.end");
    // The last run to begin is the default: the other session, left as it was.
    let other = bin()
        .args(["replay", "--speed", "max", s(&log)])
        .output()
        .unwrap();
    assert_eq!(ok(&other), ok(&ea));
}
