//! The audit, SSE and envelope sinks from one run of the real binary: same seqs everywhere, a
//! lossless audit log, appending runs (chained, locked, refused after a torn record), resume
//! ids, keep-alive comments, and deterministic output under a manual clock. Tamper detection is
//! in `audit/verify.rs`.

use crate::common;

use std::path::{Path, PathBuf};

use common::{bin, events, fixtures, root, run};
use serde_json::Value;

fn fixture(rel: &str) -> PathBuf {
    root().join(rel)
}

const TOOLS_PARTIAL: &str = "fixtures/captured/1.0.128/tools.partial.ndjson";

/// Run the binary with `args`; assert success; return stdout.
fn ok(args: &[&str]) -> Vec<u8> {
    let out = bin().args(args).output().unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn records(bytes: &[u8]) -> Vec<Value> {
    events(bytes)
}

/// SSE blocks as (fields) lists, comments and the retry block included.
fn sse_blocks(text: &str) -> Vec<Vec<(String, String)>> {
    text.split("\n\n")
        .filter(|b| !b.is_empty())
        .map(|b| {
            b.lines()
                .map(|l| {
                    let (k, v) = l.split_once(": ").unwrap_or((l, ""));
                    (k.to_owned(), v.to_owned())
                })
                .collect()
        })
        .collect()
}

fn verify(path: &Path) -> (bool, String, String) {
    let out = bin().args(["audit", "verify"]).arg(path).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn all_sinks_from_one_pass_carry_the_same_seq() {
    let dir = tempfile::tempdir().unwrap();
    let (a, s, e) = (
        dir.path().join("a.jsonl"),
        dir.path().join("s.sse"),
        dir.path().join("e.ndjson"),
    );
    for f in [TOOLS_PARTIAL, "fixtures/real/terragon__websearch.ndjson"] {
        let input = fixture(f);
        let plain = ok(&[input.to_str().unwrap()]);
        let stdout = ok(&[
            "--format",
            "sse",
            "--audit",
            a.to_str().unwrap(),
            "--sse",
            s.to_str().unwrap(),
            "--envelope",
            e.to_str().unwrap(),
            input.to_str().unwrap(),
        ]);
        // --envelope FILE is the plain envelope; --sse FILE equals stdout's SSE.
        assert_eq!(std::fs::read(&e).unwrap(), plain, "{f}");
        assert_eq!(std::fs::read(&s).unwrap(), stdout, "{f}");
        let env = events(&plain);
        let blocks = sse_blocks(std::str::from_utf8(&stdout).unwrap());
        assert_eq!(blocks[0], vec![("retry".to_owned(), "3000".to_owned())]);
        assert_eq!(blocks.len() - 1, env.len());
        for (b, ev) in blocks[1..].iter().zip(&env) {
            assert_eq!(b[0], ("id".into(), ev["seq"].to_string()));
            assert_eq!(b[1], ("event".into(), ev["type"].as_str().unwrap().into()));
            assert_eq!(b[2].0, "data");
            assert_eq!(&serde_json::from_str::<Value>(&b[2].1).unwrap(), ev);
        }
        // The audit file gets appended to: its last run's events are the envelope, byte for byte.
        let text = std::fs::read(&a).unwrap();
        let recs = records(&text);
        let last = &recs[recs.len() - env.len()..];
        let plain_lines: Vec<&str> = std::str::from_utf8(&plain).unwrap().lines().collect();
        let audit_lines: Vec<&str> = std::str::from_utf8(&text).unwrap().lines().collect();
        for (i, (r, ev)) in last.iter().zip(&env).enumerate() {
            assert_eq!(r["seq"], ev["seq"]);
            assert_eq!(&r["event"], ev);
            let line = audit_lines[audit_lines.len() - env.len() + i];
            assert!(line.contains(&format!(",\"event\":{},", plain_lines[i])));
        }
    }
    let (good, stdout, stderr) = verify(&a);
    assert!(good, "{stderr}");
    assert!(stdout.contains("in 2 runs"), "{stdout}");
}

/// Rebuild the input from an audit log: each `raw`/`raw_b64` followed by its `raw_eol`.
fn rebuild(audit: &[u8]) -> Vec<u8> {
    use base64::Engine as _;
    let mut out = Vec::new();
    for r in records(audit) {
        if let Some(s) = r["raw"].as_str() {
            out.extend_from_slice(s.as_bytes());
        } else if let Some(b) = r["raw_b64"].as_str() {
            out.extend(base64::engine::general_purpose::STANDARD.decode(b).unwrap());
        } else {
            assert!(r.get("raw_eol").is_none());
            continue;
        }
        out.extend_from_slice(r["raw_eol"].as_str().unwrap_or("\n").as_bytes());
    }
    out
}

#[test]
fn audit_is_lossless_for_every_capture() {
    for f in fixtures() {
        let input = std::fs::read(&f).unwrap();
        let audit = ok(&["--format", "audit", f.to_str().unwrap()]);
        assert_eq!(rebuild(&audit), input, "{}", f.display());
        let n = records(&audit).len();
        let env = events(&ok(&[f.to_str().unwrap()]));
        assert_eq!(n, env.len(), "{}", f.display());
    }
}

#[test]
fn audit_keeps_invalid_utf8_crlf_and_unterminated_lines() {
    let input: &[u8] = b"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\"}\r\nnot json \xff\xfe\n\n{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\"}";
    let out = run(&["--format", "audit"], input);
    assert!(out.status.success());
    assert_eq!(rebuild(&out.stdout), input);
    let recs = records(&out.stdout);
    assert!(recs.iter().any(|r| r["raw_b64"].is_string()));
    assert!(recs.iter().any(|r| r["raw_eol"] == "\r\n"));
    assert!(recs.iter().any(|r| r["raw_eol"] == ""));
    // Cut lines say how long they really were.
    let out = run(&["--format", "audit", "--max-line-bytes", "20"], input);
    let recs = records(&out.stdout);
    // The real length runs up to the newline (the CR of a cut line counts).
    let first_len = input.iter().position(|&b| b == b'\n').unwrap();
    assert!(recs.iter().any(|r| r["raw_cut_from"] == first_len));
}

#[test]
fn appended_runs_chain_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("audit.jsonl");
    let input = fixture(TOOLS_PARTIAL);
    for id in ["run-one", "run-two", "run-three"] {
        ok(&[
            "--audit",
            a.to_str().unwrap(),
            "--fsync",
            "--run-id",
            id,
            input.to_str().unwrap(),
        ]);
    }
    let recs = records(&std::fs::read(&a).unwrap());
    let per_run = recs.len() / 3;
    for k in 1..3 {
        let first = &recs[k * per_run];
        assert_eq!(first["seq"], 0);
        assert_eq!(first["prev"], recs[k * per_run - 1]["hash"]);
    }
    assert_eq!(recs[0]["prev"], "0".repeat(64));
    let (good, stdout, stderr) = verify(&a);
    assert!(good, "{stderr}");
    assert!(
        stdout.contains(&format!("{} records in 3 runs", recs.len())),
        "{stdout}"
    );
    assert!(stdout.contains(recs.last().unwrap()["hash"].as_str().unwrap()));
}

#[test]
fn append_refuses_torn_logs_and_second_writers() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    let input = fixture(TOOLS_PARTIAL);
    ok(&["--audit", a.to_str().unwrap(), input.to_str().unwrap()]);
    let good = std::fs::read(&a).unwrap();
    std::fs::write(&a, &good[..good.len() - 5]).unwrap();
    let out = bin()
        .args(["--audit", a.to_str().unwrap(), input.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!("boo-normalize: {}: ", a.display())),
        "{err}"
    );
    assert!(err.contains("torn"), "{err}");
    assert!(
        out.stdout.is_empty(),
        "no output before the audit file is usable"
    );

    // A writer holds the lock while its input is open; a second writer is refused.
    std::fs::write(&a, &good).unwrap();
    let mut first = bin()
        .args(["--audit", a.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Once the first writer has written a record it holds the lock (taken before any input).
    use std::io::Write as _;
    let mut stdin = first.stdin.take().unwrap();
    stdin
        .write_all(b"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\"}\n")
        .unwrap();
    stdin.flush().unwrap();
    let start = std::time::Instant::now();
    while std::fs::metadata(&a).unwrap().len() == good.len() as u64 {
        assert!(
            start.elapsed().as_secs() < 30,
            "the first writer wrote nothing"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = bin()
        .args(["--audit", a.to_str().unwrap(), input.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    drop(stdin);
    assert!(matches!(first.wait().unwrap().code(), Some(0 | 3)));
    assert!(err.contains("another process is writing"), "{err}");
    let (good, _, stderr) = verify(&a);
    assert!(good, "{stderr}");
}

#[test]
fn last_event_id_resumes_every_sink() {
    let input = fixture(TOOLS_PARTIAL);
    let dir = tempfile::tempdir().unwrap();
    let e = dir.path().join("e.ndjson");
    let full = ok(&["--format", "sse", input.to_str().unwrap()]);
    let resumed = ok(&[
        "--format",
        "sse",
        "--last-event-id",
        "20",
        "--envelope",
        e.to_str().unwrap(),
        input.to_str().unwrap(),
    ]);
    let text = String::from_utf8(full).unwrap();
    let cut = text.find("id: 21\n").unwrap();
    assert_eq!(
        String::from_utf8(resumed.clone()).unwrap(),
        format!("retry: 3000\n\n{}", &text[cut..])
    );
    let all = events(&ok(&[input.to_str().unwrap()]));
    assert_eq!(events(&std::fs::read(&e).unwrap()), all[21..].to_vec());
    // The environment variable does the same; an empty one is ignored.
    let out = bin()
        .args(["--format", "sse", input.to_str().unwrap()])
        .env("LAST_EVENT_ID", "20")
        .output()
        .unwrap();
    assert_eq!(out.stdout, resumed);
    let out = bin()
        .args(["--format", "sse", input.to_str().unwrap()])
        .env("LAST_EVENT_ID", "")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), text);
    let out = bin()
        .args([
            "--format",
            "sse",
            "--last-event-id",
            "x",
            input.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn ai_sdk_profile_resumes_after_the_last_id() {
    let input = fixture(TOOLS_PARTIAL);
    let full = String::from_utf8(ok(&[
        "--format",
        "sse",
        "--sse-profile",
        "ai-sdk",
        input.to_str().unwrap(),
    ]))
    .unwrap();
    assert!(full.ends_with("data: [DONE]\n\n"));
    assert!(!full.contains("retry:"));
    // Every block is `data:` with at most one `id:`; ids increase.
    let mut last = -1i64;
    for b in sse_blocks(&full) {
        let ids: Vec<i64> = b
            .iter()
            .filter(|(k, _)| k == "id")
            .map(|(_, v)| v.parse().unwrap())
            .collect();
        assert!(ids.len() <= 1);
        if let Some(&id) = ids.first() {
            assert!(id > last);
            last = id;
        }
        assert_eq!(b.last().unwrap().0, "data");
    }
    let resumed = String::from_utf8(ok(&[
        "--format",
        "sse",
        "--sse-profile",
        "ai-sdk",
        "--last-event-id",
        "22",
        input.to_str().unwrap(),
    ]))
    .unwrap();
    // Resuming after 22 = everything after the block that carries `id: 22`.
    let at = full.find("id: 22\n").unwrap();
    let next = at + full[at..].find("\n\n").unwrap() + 2;
    assert_eq!(resumed, full[next..]);
}

#[test]
fn manual_clock_makes_audit_output_reproducible() {
    use boo_normalize::audit::GENESIS;
    use boo_normalize::clock::{ManualClock, Stamp};
    use boo_normalize::normalize::{EndInfo, Normalizer};
    use boo_normalize::pipeline::Pipeline;
    use boo_normalize::read::Line;
    use boo_normalize::sink::audit::Audit;

    let input = std::fs::read(fixture(TOOLS_PARTIAL)).unwrap();
    let produce = || {
        let mut out = Vec::new();
        {
            let clock = ManualClock::default();
            let sink = Audit::new(&mut out, "replayed", GENESIS);
            let mut p = Pipeline::new(Normalizer::default(), vec![Box::new(sink)])
                .with_clock(Box::new(clock.clone()));
            for (i, l) in input
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .enumerate()
            {
                clock.set(Stamp {
                    unix_us: 1_763_825_520_000_000 + i as i64 * 1500,
                    mono_us: i as u64 * 1500,
                });
                let line = Line {
                    bytes: l,
                    number: i as u64 + 1,
                    raw_len: l.len() as u64 + 1,
                    terminated: true,
                    oversized: None,
                    cr: false,
                };
                p.push_line(&line).unwrap();
            }
            p.finish(&EndInfo::eof()).unwrap();
        }
        out
    };
    let a = produce();
    assert_eq!(a, produce());
    let recs = records(&a);
    assert_eq!(recs[0]["ts"], "2025-11-22T15:32:00.000000Z");
    assert_eq!(recs[1]["ts"], "2025-11-22T15:32:00.001500Z");
    assert_eq!(recs[1]["mono_us"], 1500);
    assert!(boo_normalize::audit::verify::verify(&a[..]).is_ok());
    // And the audit log from the binary carries the same events.
    let cli = records(&ok(&[
        "--format",
        "audit",
        fixture(TOOLS_PARTIAL).to_str().unwrap(),
    ]));
    assert_eq!(cli.len(), recs.len());
    for (x, y) in cli.iter().zip(&recs) {
        assert_eq!(x["raw"], y["raw"]);
        if x["event"]["type"] != "run.end" {
            assert_eq!(x["event"], y["event"]);
        }
    }
}

#[test]
fn keep_alive_is_a_comment_for_both_profiles() {
    use boo_normalize::normalize::{EndInfo, Normalizer};
    use boo_normalize::pipeline::Pipeline;
    use boo_normalize::sink::ai_sdk::AiSdk;
    use boo_normalize::sink::sse::Sse;
    for ai in [false, true] {
        let mut out = Vec::new();
        {
            let sink: Box<dyn boo_normalize::sink::Sink> = if ai {
                Box::new(AiSdk::new(&mut out))
            } else {
                Box::new(Sse::new(&mut out))
            };
            let mut p = Pipeline::new(Normalizer::default(), vec![sink]);
            p.idle().unwrap();
            p.run(
                &b"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\"}\n"[..],
                None,
            )
            .unwrap();
            p.idle().unwrap();
            p.finish(&EndInfo::eof()).unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches(": keep-alive\n\n").count(), 2, "{text}");
        if !ai {
            assert!(
                text.starts_with("retry: 3000\n\n: keep-alive\n\n"),
                "{text}"
            );
        }
    }
}

#[test]
fn bad_output_paths_fail_before_any_output() {
    let input = fixture(TOOLS_PARTIAL);
    for opt in ["--audit", "--sse", "--envelope"] {
        let out = bin()
            .args([opt, "/nonexistent-dir/x", input.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{opt}");
        assert!(out.stdout.is_empty(), "{opt}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("boo-normalize: /nonexistent-dir/x: "),
            "{opt}: {err}"
        );
    }
    let out = bin()
        .args(["--fsync", input.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--fsync needs --audit");
}
