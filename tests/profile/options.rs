//! `diff`'s options on real captures (`--allow` files, `--fail-on` thresholds, text and markdown
//! reports), the usage and input errors of `profile` and `diff` (exit 2), and both writing the
//! same bytes on any number of threads.

use std::process::Command;

use super::cli::{captured, captured_versions, changes, code, diff_json, run, stdout};
use crate::common::{BIN, root};

#[test]
fn allow_file_accepts_known_drift() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = (
        captured("2.1.45", ""),
        captured(captured_versions().last().unwrap(), ""),
    );
    let o = run(&["diff", &old, &new, "--format", "json"]);
    assert_eq!(code(&o), 1);
    let all = tmp.path().join("all.json");
    std::fs::write(&all, &o.stdout).unwrap();
    // The JSON report itself is an allow list: everything accepted, even at --fail-on info.
    let (rc, r) = diff_json(
        &old,
        &new,
        &["--allow", all.to_str().unwrap(), "--fail-on", "info"],
    );
    assert_eq!(rc, 0);
    assert_eq!(
        r["summary"]["allowed"].as_u64().unwrap() as usize,
        changes(&r).len()
    );
    // A partial list: accepting the rename alone leaves the other breaking changes.
    let some = tmp.path().join("some.json");
    std::fs::write(
        &some,
        r#"{"allow":[{"change":"tool_renamed","from":"Task","value":"Agent","reason":"2.1.x"}]}"#,
    )
    .unwrap();
    let (rc, r) = diff_json(&old, &new, &["--allow", some.to_str().unwrap()]);
    assert_eq!(r["summary"]["allowed"], 1);
    assert_eq!(rc, if r["summary"]["breaking"] == 0 { 0 } else { 1 });
    // Globs.
    let glob = tmp.path().join("glob.json");
    std::fs::write(&glob, r#"[{"kind":"*"}]"#).unwrap();
    let (rc, _) = diff_json(
        &old,
        &new,
        &["--allow", glob.to_str().unwrap(), "--fail-on", "info"],
    );
    assert_eq!(rc, 0);
}

#[test]
fn fail_on_thresholds() {
    // Only additive and info drift between these two logs of one version.
    let (a, b) = (
        "fixtures/real/gymnastics-graphics__graphics-registry-log.ndjson",
        "fixtures/real/gymnastics-graphics__rundown-editor-log.ndjson",
    );
    let (_, r) = diff_json(a, b, &[]);
    assert_eq!(r["summary"]["breaking"], 0);
    assert!(r["summary"]["additive"].as_u64().unwrap() > 0);
    assert_eq!(code(&run(&["diff", a, b])), 0);
    assert_eq!(code(&run(&["diff", a, b, "--fail-on", "breaking"])), 0);
    assert_eq!(code(&run(&["diff", a, b, "--fail-on", "additive"])), 1);
    assert_eq!(code(&run(&["diff", a, b, "--fail-on", "info"])), 1);
}

#[test]
fn text_and_markdown_reports() {
    let v = captured_versions();
    let (old, new) = (captured(&v[0], ""), captured(v.last().unwrap(), ""));
    let o = run(&["diff", &old, &new, "--format", "markdown"]);
    assert_eq!(code(&o), 1);
    let md = stdout(&o);
    assert!(md.starts_with("### stream-json drift:"), "{md}");
    assert!(md.contains("\n#### Breaking ("), "{md}");
    assert!(
        md.contains("| tool_renamed | `assistant.content/tool_use` `name` `Task` → `Agent` |"),
        "{md}"
    );
    let o = run(&["diff", &old, &new]);
    let text = stdout(&o);
    assert!(
        text.starts_with(&format!("old: {old} (CLI {}", v[0])),
        "{text}"
    );
    assert!(text.contains("\nBreaking ("), "{text}");
    assert!(
        text.trim_end()
            .ends_with("drift at or above --fail-on breaking"),
        "{text}"
    );
}

#[test]
fn usage_and_input_errors_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let bad_profile = tmp.path().join("bad.json");
    std::fs::write(
        &bad_profile,
        r#"{"profile_version": 99, "cli_versions": {}}"#,
    )
    .unwrap();
    let bad_allow = tmp.path().join("allow.json");
    std::fs::write(
        &bad_allow,
        r#"{"allow":[{"note":"matches nothing given"}]}"#,
    )
    .unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let cap = captured("2.1.45", "tools.ndjson");
    for args in [
        vec!["diff", "no/such/file.ndjson", cap.as_str()],
        vec!["diff", bad_profile.to_str().unwrap(), cap.as_str()],
        vec![
            "diff",
            cap.as_str(),
            cap.as_str(),
            "--allow",
            bad_allow.to_str().unwrap(),
        ],
        vec!["diff", cap.as_str(), cap.as_str(), "--fail-on", "sometimes"],
        vec!["diff", cap.as_str()],
        vec!["profile", empty.to_str().unwrap()],
        vec!["profile"],
    ] {
        let o = run(&args);
        assert_eq!(code(&o), 2, "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("error") || err.starts_with("boo-normalize: "),
            "{args:?}: {err}"
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

/// `profile` and `diff` write the same bytes on any number of threads: files are profiled on
/// several threads (each reusing one profiler from file to file) and merged in input order.
/// Both inputs are over `batch::PARALLEL_MIN_BYTES`, so more than one thread does work.
#[test]
fn profile_and_diff_are_the_same_on_any_number_of_threads() {
    let with = |threads: &str, args: &[&str]| {
        let o = Command::new(BIN)
            .args(args)
            .current_dir(root())
            .env("BOO_NORMALIZE_THREADS", threads)
            .output()
            .expect("run boo-normalize");
        assert!(
            code(&o) <= 1,
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        o.stdout
    };
    for args in [
        &["profile", "--by-version", "fixtures/captured"][..],
        &[
            "diff",
            "--format",
            "json",
            "fixtures/real",
            "fixtures/captured",
        ][..],
    ] {
        let one = with("1", args);
        assert!(one.len() > 1000, "{args:?} wrote a document");
        for threads in ["2", "3"] {
            assert!(
                with(threads, args) == one,
                "{args:?} on {threads} threads differs"
            );
        }
    }
}
