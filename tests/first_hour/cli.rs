//! Issue 29, sections 2–3, on the real binary: the wrong input gets an answer (what was read,
//! what to use instead), and a drift check that cannot pass by accident (sections 4–5 are in
//! `command_line.rs`).

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{bin, events, root, run};

const CAPTURE: &str = "fixtures/real/terragon__bash.ndjson";

pub(super) fn capture() -> PathBuf {
    root().join(CAPTURE)
}

pub(super) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn run_args(args: &[&Path]) -> Output {
    bin().args(args).output().unwrap()
}

/// The files a first-hour user feeds by mistake, made by the binary itself where it writes
/// them: envelope output, an audit log, a capture, SSE, a session transcript, text, binary.
struct Wrong {
    _dir: tempfile::TempDir,
    files: Vec<(&'static str, PathBuf, &'static str)>,
}

fn wrong_inputs() -> Wrong {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let cap = capture();
    let env = bin().arg(&cap).output().unwrap();
    assert!(env.status.success());
    std::fs::write(p("env.ndjson"), &env.stdout).unwrap();
    let sse = bin().args(["--format", "sse"]).arg(&cap).output().unwrap();
    std::fs::write(p("out.sse"), &sse.stdout).unwrap();
    for (flag, file) in [("--audit", "run.audit.jsonl"), ("--record", "cap.jsonl")] {
        let made = bin().arg(flag).arg(p(file)).arg(&cap).output().unwrap();
        assert!(made.status.success(), "{flag}");
    }
    std::fs::write(
        p("session.jsonl"),
        concat!(
            r#"{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/x","sessionId":"3f2a","version":"1.0.3","type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","timestamp":"2025-06-01T00:00:00Z"}"#,
            "\n",
            r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"3f2a","type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"hello"}]},"uuid":"u2"}"#,
            "\n"
        ),
    )
    .unwrap();
    std::fs::write(p("answer.txt"), "Sure! Here is the fix.\nDone.\n").unwrap();
    let mut garbage = Vec::new();
    for i in 0..3000u32 {
        garbage.push((i.wrapping_mul(2_654_435_761) >> 13) as u8);
    }
    std::fs::write(p("garbage.bin"), &garbage).unwrap();
    let files = vec![
        (
            "envelope",
            p("env.ndjson"),
            "boo-normalize envelope output (already normalized)",
        ),
        (
            "audit",
            p("run.audit.jsonl"),
            "audit log (--audit); use `boo-normalize replay",
        ),
        (
            "capture",
            p("cap.jsonl"),
            "capture (--record); use `boo-normalize replay",
        ),
        ("sse", p("out.sse"), "SSE output"),
        (
            "text",
            p("answer.txt"),
            "text, not JSON; `claude -p` writes stream-json only with `--output-format stream-json --verbose`",
        ),
        ("binary", p("garbage.bin"), "binary data"),
    ];
    Wrong { _dir: dir, files }
}

/// A session transcript is no wrong input: it is read (issue 32), so it gets no hint and exits 0.
#[test]
fn a_transcript_is_read_not_refused() {
    let w = wrong_inputs();
    let out = run_args(&[&w._dir.path().join("session.jsonl")]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("is stream-json"), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(r#""text":"hello""#), "{text}");
}

/// §2: each wrong input is named with what it is and what to do, exit 2, while the envelope
/// still accounts for every line and ends with `run.end`.
#[test]
fn wrong_input_says_what_it_is_and_what_to_do() {
    let w = wrong_inputs();
    for (what, path, says) in &w.files {
        let out = run_args(&[path]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains(says), "{what}: {err}");
        assert!(err.contains("is stream-json"), "{what}: {err}");
        assert!(!err.contains("no result"), "{what}: {err}");
        assert!(err.starts_with("boo-normalize: "), "{what}: {err}");
        let text = String::from_utf8_lossy(&out.stdout);
        let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(last["type"], "run.end", "{what}");
        let lines = crate::common::line_count(&std::fs::read(path).unwrap());
        assert_eq!(last["stats"]["lines"], lines, "{what}");
        // Same on stdin.
        let out = run(&[], &std::fs::read(path).unwrap());
        assert_eq!(out.status.code(), Some(2), "{what} on stdin");
        assert!(stderr(&out).starts_with("boo-normalize: stdin: "), "{what}");
    }
    // The count is the whole input's: "none of N lines".
    let out = run_args(&[&w.files[0].1]);
    let n = std::fs::read_to_string(&w.files[0].1)
        .unwrap()
        .lines()
        .count();
    assert!(
        stderr(&out).contains(&format!("none of {n} lines is stream-json")),
        "{}",
        stderr(&out)
    );
}

/// §2: empty input (a closed stdin, an empty file) gets its own message; the missing result
/// still exits 3.
#[test]
fn empty_input_gets_its_own_message() {
    let out = run(&[], b"");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("boo-normalize: stdin: empty; no bytes were read"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.ndjson");
    std::fs::write(&empty, "").unwrap();
    let out = run_args(&[&empty]);
    assert!(
        stderr(&out).contains("empty.ndjson: empty; the file holds no bytes"),
        "{}",
        stderr(&out)
    );
    // Beside a real capture an empty file is only a note.
    let out = run_args(&[&empty, &capture()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("empty.ndjson: empty"));
}

/// §2: real captures are read as before, without a word on stderr; a capture after a wrong file
/// still names the wrong one (exit 2).
#[test]
fn real_captures_stay_quiet_and_a_wrong_file_among_them_is_named() {
    for f in crate::common::fixtures() {
        let out = run_args(&[&f]);
        let err = stderr(&out);
        assert!(!err.contains("is stream-json"), "{}: {err}", f.display());
    }
    let w = wrong_inputs();
    let out = run_args(&[&capture(), &w.files[1].1]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("run.audit.jsonl: none of"),
        "{}",
        stderr(&out)
    );
    let ev = events(&out.stdout);
    assert_eq!(ev.last().unwrap()["type"], "run.end");
}

/// §2: `profile` and `redact` say the same; `profile` refuses (exit 2), `redact` writes its copy
/// and exits 2.
#[test]
fn profile_and_redact_name_wrong_input() {
    let w = wrong_inputs();
    for (what, path, says) in &w.files {
        for cmd in ["profile", "redact"] {
            let out = bin().arg(cmd).arg(path).output().unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{cmd} {what}: {err}");
            assert!(err.contains(says), "{cmd} {what}: {err}");
            if cmd == "profile" {
                assert!(out.stdout.is_empty(), "profile {what}");
            }
        }
    }
    let out = bin().arg("redact").arg(capture()).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty());
}

/// §3: a diff side with no stream-json object is refused, naming it (exit 2): an envelope
/// directory, an audit log, an empty file, a directory with no captures.
#[test]
fn diff_refuses_a_side_without_stream_json() {
    let w = wrong_inputs();
    let dir = tempfile::tempdir().unwrap();
    let envdir = dir.path().join("normalized");
    std::fs::create_dir(&envdir).unwrap();
    std::fs::copy(&w.files[0].1, envdir.join("run.ndjson")).unwrap();
    let empty = dir.path().join("empty.ndjson");
    std::fs::write(&empty, "").unwrap();
    let nothing = dir.path().join("nothing");
    std::fs::create_dir(&nothing).unwrap();
    let cap = capture();
    for side in [&envdir, &w.files[1].1, &empty, &nothing, &w.files[5].1] {
        for (old, new) in [(&cap, side), (side, &cap)] {
            let out = bin().arg("diff").arg(old).arg(new).output().unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{}: {err}", side.display());
            assert!(err.contains(&side.display().to_string()), "{err}");
            assert!(out.stdout.is_empty(), "{}", side.display());
        }
    }
    let out = bin().arg("diff").arg(&cap).arg(&envdir).output().unwrap();
    assert!(stderr(&out).contains("envelope output"), "{}", stderr(&out));
    let out = bin()
        .arg("diff")
        .arg(&cap)
        .arg(&w.files[1].1)
        .output()
        .unwrap();
    assert!(stderr(&out).contains("audit log"), "{}", stderr(&out));
}

/// §3: a directory that holds captures beside other files (`probe` writes `profile.json`, a
/// summary and envelope output next to `*.ndjson` captures) is compared on its captures alone.
#[test]
fn diff_reads_the_captures_of_a_probe_directory() {
    let w = wrong_inputs();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for d in [&a, &b] {
        std::fs::create_dir(d).unwrap();
        std::fs::copy(capture(), d.join("bash.stream.ndjson")).unwrap();
        std::fs::write(d.join("summary.json"), "{\"runs\": 1}\n").unwrap();
        std::fs::write(d.join("summary.md"), "# summary\n").unwrap();
    }
    let profile = bin().arg("profile").arg(&a).output().unwrap();
    assert!(profile.status.success(), "{}", stderr(&profile));
    std::fs::write(a.join("profile.json"), &profile.stdout).unwrap();
    std::fs::copy(&w.files[0].1, b.join("bash.envelope.ndjson")).unwrap();
    let out = bin().arg("diff").arg(&a).arg(&b).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("bash.envelope.ndjson: skipped: "),
        "{}",
        stderr(&out)
    );
}

/// Two one-file captures that differ in one field and one enum value, in a temporary directory.
fn drift_pair() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let init =
        r#"{"type":"system","subtype":"init","session_id":"s","model":"m","tools":["Bash"]}"#;
    let old_msg = r#"{"type":"assistant","session_id":"s","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":null}}"#;
    let new_msg = r#"{"type":"assistant","session_id":"s","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":null,"brand_new":1}}"#;
    let old_res = r#"{"type":"result","subtype":"success","session_id":"s","is_error":false,"status":"calm"}"#;
    let new_res = r#"{"type":"result","subtype":"success","session_id":"s","is_error":false,"status":"stormy"}"#;
    let old = dir.path().join("old.ndjson");
    let new = dir.path().join("new.ndjson");
    std::fs::write(&old, format!("{init}\n{old_msg}\n{old_res}\n")).unwrap();
    // NEW has its changes further down: a banner line first, so the lines differ from OLD's.
    std::fs::write(
        &new,
        format!("banner\n{init}\n{old_msg}\n{new_msg}\n{old_res}\n{new_res}\n"),
    )
    .unwrap();
    (dir, old, new)
}

/// §3: each change names where it was first seen on each side (file and line), in text,
/// markdown and JSON.
#[test]
fn diff_changes_name_file_and_line_on_each_side() {
    let (_dir, old, new) = drift_pair();
    let (o, n) = (old.display().to_string(), new.display().to_string());
    let report = |format: &str, old: &Path| {
        let out = bin()
            .args(["diff", "--format", format])
            .arg(old)
            .arg(&new)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let change = |doc: &str, change: &str| {
        let doc: serde_json::Value = serde_json::from_str(doc).unwrap();
        doc["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["change"] == change)
            .unwrap_or_else(|| panic!("no {change} in {doc:#}"))
            .clone()
    };
    let json = report("json", &old);
    let added = change(&json, "path_added");
    assert_eq!(added["path"], "message.brand_new");
    assert_eq!(added["new_at"], serde_json::json!({"file": n, "line": 4}));
    // OLD lacks the field: where OLD's parent object (the message) was first seen.
    assert_eq!(added["old_at"], serde_json::json!({"file": o, "line": 2}));
    let value = change(&json, "value_added");
    assert_eq!(value["value"], "stormy");
    assert_eq!(value["new_at"], serde_json::json!({"file": n, "line": 6}));
    assert_eq!(value["old_at"], serde_json::json!({"file": o, "line": 3}));
    let text = report("text", &old);
    for (a, b) in [(2, 4), (3, 6)] {
        let want = format!("first seen: old {o}:{a}, new {n}:{b}");
        assert!(text.contains(&want), "{want} not in {text}");
    }
    let md = report("markdown", &old);
    assert!(md.contains("| first seen |"), "{md}");
    assert!(md.contains(&format!("old `{o}:2`<br>new `{n}:4`")), "{md}");
    // A saved baseline keeps its locations.
    let profile = bin().arg("profile").arg(&old).output().unwrap();
    let saved = old.with_extension("profile.json");
    std::fs::write(&saved, &profile.stdout).unwrap();
    let c = change(&report("json", &saved), "value_added");
    assert_eq!(c["old_at"]["file"], o.as_str());
}

/// §3: changes accepted by `--allow` are counted, not printed, unless `-v`.
#[test]
fn diff_allowed_changes_are_a_count_unless_verbose() {
    let (dir, old, new) = drift_pair();
    let allow = dir.path().join("allow.json");
    std::fs::write(
        &allow,
        r#"{"allow":[{"change":"path_added"},{"change":"value_added"}]}"#,
    )
    .unwrap();
    let diff = |verbose: &[&str], format: &str| {
        let mut c = bin();
        c.arg("diff")
            .args(verbose)
            .args(["--format", format, "--allow"]);
        let out = c.arg(&allow).arg(&old).arg(&new).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for format in ["text", "markdown"] {
        let text = diff(&[], format);
        assert!(!text.contains("brand_new"), "{format}: {text}");
        assert!(!text.contains("stormy"), "{format}: {text}");
        assert!(text.contains("Allowed (2)"), "{format}: {text}");
        let text = diff(&["-v"], format);
        let listed = text.contains("brand_new") && text.contains("stormy");
        assert!(listed, "{format} -v: {text}");
    }
}
