//! Issue 29 §1, "promises on odd but legal input", on the real binary, how input is read: a
//! directory among the inputs, deep JSON, CRLF line ends, profile and normalize reading lines
//! alike (what the runs read then say is in `runs.rs`).

use std::path::{Path, PathBuf};

use crate::common::{self, bin, events, of_type, run};

/// A small real capture with a `result` line.
fn capture() -> PathBuf {
    common::root().join("fixtures/real/terragon__bash.ndjson")
}

pub(super) fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub(super) fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

// ---- 1. a directory (or an unreadable path) among the inputs ----

/// Every command that reads stream-json files refuses a directory before any output, like a
/// missing file: exit 2, `boo-normalize: DIR: Is a directory`, and no audit log is started.
#[test]
fn directory_among_inputs_is_refused_before_any_output() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("somedir");
    std::fs::create_dir(&dir).unwrap();
    let audit = d.path().join("a.jsonl");
    let cap = capture();
    let (c, s) = (path_str(&cap), path_str(&dir));
    let cases: Vec<Vec<&str>> = vec![
        vec![c, s],
        vec![s, c],
        vec!["normalize", "--format", "otlp", c, s],
        vec!["--audit", path_str(&audit), c, s],
        vec!["redact", c, s],
        vec!["replay", "--speed", "max", c, s],
        vec!["replay", "--raw", c, s],
        vec!["audit", "verify", s],
    ];
    for args in cases {
        let o = run(&args, b"");
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?}: output before the refusal");
        let want = format!("boo-normalize: {s}: Is a directory");
        assert!(stderr(&o).starts_with(&want), "{args:?}: {}", stderr(&o));
    }
    assert!(
        std::fs::metadata(&audit).map_or(true, |m| m.len() == 0),
        "an audit log was started for a refused run"
    );
}

/// An input that opens but fails mid-run (`/proc/self/mem` reads as an I/O error) cannot be
/// refused first: the run still ends with `run.end` (cause `input_failed`, naming the input) on
/// stdout and in the audit log, which verifies as complete; exit 2 with the OS error.
#[cfg(target_os = "linux")]
#[test]
fn input_failing_mid_run_still_ends_with_run_end() {
    let d = tempfile::tempdir().unwrap();
    let audit = d.path().join("a.jsonl");
    let cap = capture();
    let o = run(
        &[
            "--audit",
            path_str(&audit),
            path_str(&cap),
            "/proc/self/mem",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("boo-normalize: /proc/self/mem: Input/output error"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("no result"), "{}", stderr(&o));
    let ev = events(&o.stdout);
    let end = ev.last().expect("events");
    assert_eq!(end["type"], "run.end");
    assert_eq!(end["cause"], "input_failed");
    assert_eq!(end["input"], "/proc/self/mem");
    assert!(
        end["error"]
            .as_str()
            .unwrap()
            .contains("Input/output error")
    );
    assert_eq!(
        of_type(&ev, "turn.end").len(),
        1,
        "the first input was read"
    );
    let v = bin()
        .args(["audit", "verify", "--require-complete", path_str(&audit)])
        .output()
        .unwrap();
    assert_eq!(v.status.code(), Some(0), "{}", stderr(&v));
}

// ---- 2. deep but valid JSON ----

/// The nesting limit the README documents (`boo_normalize::json::MAX_DEPTH`).
const MAX_DEPTH: usize = 1024;

/// `levels` objects (or arrays) inside each other around `1`, as compact JSON.
fn nested(levels: usize, objects: bool) -> String {
    if objects {
        format!("{}1{}", "{\"k\":".repeat(levels), "}".repeat(levels))
    } else {
        format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
    }
}

/// A whole run whose tool call's input holds `value` (5 levels below the line's top), and whose
/// tool result echoes it in `tool_use_result`.
fn deep_run(value: &str) -> String {
    let s = r#""session_id":"s-deep""#;
    [
        format!(
            r#"{{"type":"system","subtype":"init",{s},"model":"claude-x","tools":["Deep"],"cwd":"/","claude_code_version":"2.1.0"}}"#
        ),
        format!(
            r#"{{"type":"assistant",{s},"message":{{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{{"type":"tool_use","id":"toolu_1","name":"Deep","input":{{"deep":{value}}}}}],"stop_reason":"tool_use","usage":{{"input_tokens":1,"output_tokens":1}}}}}}"#
        ),
        format!(
            r#"{{"type":"user",{s},"message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"done"}}]}},"tool_use_result":{{"deep":{value}}}}}"#
        ),
        format!(
            r#"{{"type":"result","subtype":"success",{s},"is_error":false,"result":"ok","num_turns":1,"duration_ms":1,"total_cost_usd":0.1,"usage":{{"input_tokens":1,"output_tokens":1}}}}"#
        ),
    ]
    .map(|l| l + "\n")
    .concat()
}

/// The output lines that contain `needle`.
fn lines_with<'a>(out: &'a [u8], needle: &str) -> Vec<&'a str> {
    std::str::from_utf8(out)
        .expect("UTF-8 output")
        .lines()
        .filter(|l| l.contains(needle))
        .collect()
}

/// A tool input nested as deep as Python's `json` reads (990 levels of objects or arrays, the
/// line 995: CPython 3.11 reads 998) reaches every output whole, on both JSON engines, with no
/// `too_deep` diagnostic: envelope, OTLP (its `execute_tool` span), the AI SDK stream, an audit
/// log that verifies and replays, a capture that replays, `redact` (byte-identical, several
/// files: worker threads with 2 MiB stacks) and `profile`.
#[test]
fn deep_tool_input_reaches_every_output() {
    let d = tempfile::tempdir().unwrap();
    for objects in [true, false] {
        let value = nested(990, objects);
        let run_text = deep_run(&value);
        let file = d.path().join("deep.ndjson");
        std::fs::write(&file, &run_text).unwrap();
        let f = path_str(&file);
        let want_input = format!(r#""input":{{"deep":{value}}}"#);
        for args in [vec![f], vec!["--reference-parser", f]] {
            let o = run(&args, b"");
            assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
            assert!(lines_with(&o.stdout, "too_deep").is_empty(), "{args:?}");
            let calls = lines_with(&o.stdout, r#""type":"tool.call""#);
            assert_eq!(calls.len(), 1, "{args:?}");
            assert!(calls[0].contains(&want_input), "{args:?}: input not whole");
            assert_eq!(lines_with(&o.stdout, r#""type":"tool.result""#).len(), 1);
        }
        let o = run(&["--format", "otlp", f], b"");
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(lines_with(&o.stdout, "execute_tool Deep").len(), 1, "otlp");
        let o = run(&["--format", "sse", "--sse-profile", "ai-sdk", f], b"");
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let avail = lines_with(&o.stdout, "tool-input-available");
        assert_eq!(avail.len(), 1, "ai-sdk");
        assert!(avail[0].contains(&format!(r#""input":{{"deep":{value}}}"#)));
        // The audit log and a capture keep it, and replay it.
        let (audit, cap) = (d.path().join("a.jsonl"), d.path().join("c.jsonl"));
        let _ = std::fs::remove_file(&audit);
        let o = run(
            &["--audit", path_str(&audit), "--record", path_str(&cap), f],
            b"",
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v = run(
            &["audit", "verify", "--require-complete", path_str(&audit)],
            b"",
        );
        assert_eq!(v.status.code(), Some(0), "{}", stderr(&v));
        for input in [&audit, &cap] {
            let r = run(&["replay", "--speed", "max", path_str(input)], b"");
            assert_eq!(r.status.code(), Some(0), "{input:?}: {}", stderr(&r));
            let calls = lines_with(&r.stdout, r#""type":"tool.call""#);
            assert_eq!(calls.len(), 1, "{input:?}");
            assert!(calls[0].contains(&want_input), "{input:?}");
        }
        // redact: the same bytes back, on worker threads (several inputs).
        let o = run(&["redact", f, f, f], b"");
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(
            o.stdout == run_text.repeat(3).into_bytes(),
            "redact changed it"
        );
        let o = run(&["profile", f, f, f], b"");
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let p: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(p["input"]["non_json"], 0, "profile: {}", p["input"]);
        assert_eq!(p["tools"]["used"]["Deep"]["count"], 3);
    }
}

/// Beyond the documented limit a line is a `too_deep` diagnostic (both engines), however deep
/// (100,000 levels: no stack overflow anywhere), and the rest of the run is read.
#[test]
fn nesting_beyond_the_limit_is_a_too_deep_diagnostic() {
    let d = tempfile::tempdir().unwrap();
    for (levels, objects) in [(MAX_DEPTH, true), (100_000, true), (100_000, false)] {
        // The tool input sits 5 levels down: the line nests levels + 5 deep.
        let run_text = deep_run(&nested(levels, objects));
        let file = d.path().join("deep.ndjson");
        std::fs::write(&file, &run_text).unwrap();
        let f = path_str(&file);
        for args in [vec![f], vec!["--reference-parser", f]] {
            let o = run(&args, b"");
            assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
            let ev = events(&o.stdout);
            let deep: Vec<_> = of_type(&ev, "diagnostic")
                .into_iter()
                .filter(|e| e["kind"] == "too_deep")
                .collect();
            assert_eq!(
                deep.len(),
                2,
                "{levels} {args:?}: the assistant and user lines"
            );
            assert_eq!(of_type(&ev, "turn.end").len(), 1, "the result line is read");
        }
        for args in [
            vec!["--format", "otlp", f],
            vec!["--format", "sse", "--sse-profile", "ai-sdk", f],
            vec!["redact", f, f],
            vec!["profile", f, f],
        ] {
            let o = run(&args, b"");
            assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        }
    }
    // Just below the limit (the line at exactly MAX_DEPTH levels) is read.
    let run_text = deep_run(&nested(MAX_DEPTH - 5, false));
    let o = run(&[], run_text.as_bytes());
    assert!(lines_with(&o.stdout, "too_deep").is_empty());
    assert_eq!(lines_with(&o.stdout, r#""type":"tool.call""#).len(), 1);
}

// ---- 3. CRLF line ends ----

/// A real capture with CRLF line ends, one line holding a secret that `--redact` replaces.
fn crlf_capture() -> Vec<u8> {
    let text = std::fs::read_to_string(capture()).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let secret = format!("sk-ant-api03-{}AA", "x7Kq9".repeat(19));
    lines.insert(
        2,
        format!(
            r#"{{"type":"assistant","session_id":"9c3fc96f-5c01-4799-918f-0634283e1ada","message":{{"id":"msg_crlf","type":"message","role":"assistant","model":"m","content":[{{"type":"text","text":"the key is {secret} ok"}}],"stop_reason":null,"usage":{{"input_tokens":1,"output_tokens":1}}}}}}"#
        ),
    );
    lines
        .iter()
        .map(|l| format!("{l}\r\n"))
        .collect::<String>()
        .into_bytes()
}

/// Whether every line of `bytes` ends in `\r\n`.
fn all_crlf(bytes: &[u8]) -> bool {
    !bytes.is_empty()
        && bytes.ends_with(b"\r\n")
        && bytes
            .split(|&b| b == b'\n')
            .all(|l| l.is_empty() || l.ends_with(b"\r"))
}

/// `redact` keeps each line's terminator byte for byte: clean CRLF input comes back identical
/// (stdin, one file, several files on worker threads, `--line-buffered`), and a redacted line
/// keeps its `\r\n`.
#[test]
fn redact_keeps_crlf_line_ends() {
    let d = tempfile::tempdir().unwrap();
    let clean: Vec<u8> = std::fs::read_to_string(capture())
        .unwrap()
        .lines()
        .map(|l| format!("{l}\r\n"))
        .collect::<String>()
        .into_bytes();
    let file = d.path().join("clean.ndjson");
    std::fs::write(&file, &clean).unwrap();
    let f = path_str(&file);
    let o = run(&["redact"], &clean);
    assert!(o.stdout == clean, "stdin: not byte-identical");
    let o = run(&["redact", "--line-buffered"], &clean);
    assert!(o.stdout == clean, "--line-buffered: not byte-identical");
    let o = run(&["redact", f, f, f], b"");
    assert!(
        o.stdout == clean.repeat(3),
        "several files: not byte-identical"
    );
    // A line with a secret is rewritten, and keeps its CRLF like the others.
    let o = run(&["redact"], &crlf_capture());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        !o.stdout.windows(9).any(|w| w == b"sk-ant-ap"),
        "not redacted"
    );
    assert!(all_crlf(&o.stdout), "a line lost its \\r");
    assert_eq!(
        common::line_count(&o.stdout),
        common::line_count(&crlf_capture())
    );
}

/// The audit log's `raw` values and a capture keep CRLF (`raw_eol`, the capture's `\r`) with
/// `--redact` too, for normalize and spawn: `replay --raw` of either gives CRLF lines, and
/// without redaction exactly the input.
#[cfg(unix)]
#[test]
fn audit_and_capture_keep_crlf_with_redaction() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let input = crlf_capture();
    let file = d.path().join("crlf.ndjson");
    std::fs::write(&file, &input).unwrap();
    // A stand-in for claude that writes the CRLF capture.
    let fake = d.path().join("fake-claude");
    std::fs::write(&fake, format!("#!/bin/sh\ncat '{}'\n", file.display())).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (audit, cap) = (d.path().join("a.jsonl"), d.path().join("c.jsonl"));
    let (a, c) = (path_str(&audit), path_str(&cap));
    let normalize = |redact: bool| {
        let mut args = vec!["--audit", a, "--record", c, path_str(&file)];
        if redact {
            args.insert(0, "--redact");
        }
        run(&args, b"")
    };
    let spawn = |redact: bool| {
        let mut args = vec![
            "spawn",
            "--claude-bin",
            path_str(&fake),
            "--audit",
            a,
            "--record",
            c,
            "--prompt",
            "hi",
        ];
        if redact {
            args.insert(1, "--redact");
        }
        run(&args, b"")
    };
    for (what, go) in [
        (
            "normalize",
            &normalize as &dyn Fn(bool) -> std::process::Output,
        ),
        ("spawn", &spawn),
    ] {
        for redact in [false, true] {
            let _ = std::fs::remove_file(&audit);
            let o = go(redact);
            assert_eq!(o.status.code(), Some(0), "{what}: {}", stderr(&o));
            for (name, path) in [("audit log", a), ("capture", c)] {
                let r = run(&["replay", "--raw", path], b"");
                assert_eq!(r.status.code(), Some(0), "{what} {name}: {}", stderr(&r));
                if redact {
                    assert!(
                        all_crlf(&r.stdout),
                        "{what} --redact {name}: a line lost its \\r"
                    );
                    assert!(!r.stdout.windows(9).any(|w| w == b"sk-ant-ap"));
                } else {
                    assert!(r.stdout == input, "{what} {name}: not the input");
                }
            }
        }
    }
}

// ---- 4. profile and normalize read lines alike ----

/// `profile`'s line counts for `input` (files).
fn profile_input(files: &[&str]) -> serde_json::Value {
    let mut args = vec!["profile"];
    args.extend_from_slice(files);
    let o = run(&args, b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let p: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    p
}

/// Every line `normalize` reads as JSON (repaired ones included) is profiled, every line it
/// refuses is `non_json` in the profile, and a line it repairs (a lone surrogate escape, high or
/// low) is profiled repaired: its tool shows up. Invalid UTF-8, a too-deep and a cut line are
/// refused by both. Checked on a stream of such lines and on every fixture.
#[test]
fn profile_reads_lines_as_normalize_does() {
    let s = r#""session_id":"s-rep""#;
    let text = [
        format!(
            r#"{{"type":"system","subtype":"init",{s},"model":"m","tools":["Cut"],"cwd":"/","claude_code_version":"1.0.128"}}"#
        ),
        // A tool call whose input holds an emoji cut in half (CLI < 2.1.330).
        format!(
            r#"{{"type":"assistant",{s},"message":{{"id":"m1","role":"assistant","model":"m","content":[{{"type":"tool_use","id":"t1","name":"Cut","input":{{"q":"half \ud83d"}}}}],"stop_reason":"tool_use","usage":{{"input_tokens":1,"output_tokens":1}}}}}}"#
        ),
        format!(
            r#"{{"type":"user",{s},"message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t1","content":"low \udc00 end"}}]}}}}"#
        ),
        format!(r#"{{"type":"assistant",{s},"message":{{"id":"m2","content":[{{"type":"text","text":"bad "#),
        format!(r#"{{"type":"result","subtype":"success",{s},"is_error":false,"result":"ok","num_turns":1}}"#),
        "[1,2]".to_owned(),
        format!("{{\"deep\":{}}}", nested(MAX_DEPTH + 1, false)),
    ]
    .map(|l| l + "\n")
    .concat();
    let mut input = text.into_bytes();
    // A line that is not UTF-8, and a last line cut short.
    input.extend_from_slice(b"{\"type\":\"x\",\"t\":\"\xff\xfe\"}\n{\"type\":\"assistant\",\"mess");
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("repair.ndjson");
    std::fs::write(&file, &input).unwrap();
    let p = profile_input(&[path_str(&file)]);
    assert_eq!(
        p["tools"]["used"]["Cut"]["count"], 1,
        "the repaired tool call"
    );
    assert_eq!(p["input"]["repaired"], 2, "{}", p["input"]);
    assert_eq!(p["input"]["non_json"], 4, "{}", p["input"]);
    let mut files: Vec<PathBuf> = vec![file];
    files.extend(common::fixtures());
    for f in &files {
        let o = run(&["--allow-no-result", path_str(f)], b"");
        let ev = events(&o.stdout);
        let stats = &ev.last().unwrap()["stats"];
        let refused = of_type(&ev, "diagnostic")
            .iter()
            .filter(|e| {
                [
                    "not_json",
                    "invalid_utf8",
                    "too_deep",
                    "number_out_of_range",
                    "truncated_line",
                ]
                .contains(&e["kind"].as_str().unwrap())
            })
            .count() as u64;
        let i = &profile_input(&[path_str(f)])["input"];
        let read = ["objects", "non_object", "foreign"]
            .iter()
            .map(|k| i[k].as_u64().unwrap())
            .sum::<u64>();
        assert_eq!(read, stats["json_lines"].as_u64().unwrap(), "{f:?}: {i}");
        assert_eq!(i["non_json"].as_u64().unwrap(), refused, "{f:?}: {i}");
        assert_eq!(
            i["repaired"].as_u64().unwrap_or(0),
            stats["repaired"],
            "{f:?}"
        );
    }
}
