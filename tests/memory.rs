//! Peak memory on huge lines: at most twice the longest line plus 32 MiB, for every sink.
//!
//! One test in its own binary, so `getrusage(RUSAGE_CHILDREN)` sees only the runs made here.
#![cfg(target_os = "linux")]

mod common;

use std::io::Write;
use std::process::Stdio;

use common::bin;
use nix::sys::resource::{UsageWho, getrusage};

const MIB: u64 = 1 << 20;

/// Write one JSON line whose member holding `@` is a string of `units` copies of `unit`,
/// streaming it, so that this process stays small: a child started by `fork`/`vfork` inherits
/// the parent's peak RSS in `getrusage`.
fn write_line(
    path: &std::path::Path,
    template: serde_json::Value,
    unit: &str,
    units: usize,
) -> u64 {
    let text = template.to_string();
    let (head, tail) = text
        .split_once("\"@\"")
        .expect("template has a \"@\" value");
    let escaped = serde_json::to_string(unit).unwrap();
    let escaped = &escaped[1..escaped.len() - 1];
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    w.write_all(head.as_bytes()).unwrap();
    w.write_all(b"\"").unwrap();
    for _ in 0..units {
        w.write_all(escaped.as_bytes()).unwrap();
    }
    w.write_all(b"\"").unwrap();
    w.write_all(tail.as_bytes()).unwrap();
    w.write_all(b"\n").unwrap();
    w.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// Huge lines in the shapes real ones have: a tool result holding file contents (newlines,
/// quotes, tabs, non-ASCII, escaped the way the CLI escapes) and a long assistant text.
fn lines(dir: &std::path::Path) -> Vec<(&'static str, std::path::PathBuf, u64)> {
    let code = "    let x = \"caf\u{e9}\";\tif a < b { return x; }\n// \u{2192} done\n";
    let user = serde_json::json!({
        "type": "user",
        "message": {"role": "user", "content": [
            {"tool_use_id": "toolu_1", "type": "tool_result", "content": "@", "is_error": false}
        ]},
        "parent_tool_use_id": null,
        "session_id": "s",
        "tool_use_result": {"stdout": "ok", "stderr": "", "interrupted": false}
    });
    let assistant = serde_json::json!({
        "type": "assistant",
        "message": {"id": "msg_1", "model": "m", "role": "assistant", "content": [
            {"type": "text", "text": "@"}
        ], "usage": {"input_tokens": 1, "output_tokens": 2}},
        "parent_tool_use_id": null,
        "session_id": "s"
    });
    let mut v = Vec::new();
    for (name, template, unit) in [
        (
            "assistant_text",
            assistant,
            "The quick brown fox jumps over the lazy dog. ",
        ),
        ("tool_result", user, code),
    ] {
        let path = dir.join(format!("{name}.ndjson"));
        let len = write_line(&path, template, unit, (48 * MIB as usize) / unit.len());
        v.push((name, path, len));
    }
    v
}

fn peak_children_kib() -> u64 {
    getrusage(UsageWho::RUSAGE_CHILDREN).unwrap().max_rss() as u64
}

#[test]
fn huge_lines_stay_within_twice_their_size() {
    let dir = tempfile::tempdir().unwrap();
    // Smallest line first: the peak only grows, and so does the limit.
    let mut lines = lines(dir.path());
    lines.sort_by_key(|l| l.2);
    for (name, input, len) in lines {
        let limit_kib = (2 * len + 32 * MIB) / 1024;
        let audit = dir.path().join(format!("{name}.audit.jsonl"));
        for args in [
            vec!["--format", "envelope"],
            vec!["--format", "sse"],
            vec!["--format", "audit"],
            vec!["--audit", audit.to_str().unwrap(), "--sse", "/dev/null"],
        ] {
            let before = peak_children_kib();
            let out = bin()
                .args(&args)
                .arg(&input)
                .stdout(Stdio::null())
                .output()
                .unwrap();
            assert!(
                matches!(out.status.code(), Some(0 | 3)),
                "{name} {args:?}: {out:?}"
            );
            let peak = peak_children_kib();
            // The counter is a maximum over all children so far: it only says something about
            // this run when this run raised it; otherwise an earlier, larger run already passed.
            let used = if peak > before { peak } else { 0 };
            eprintln!(
                "{name} {args:?}: line {} MiB, peak RSS so far {} MiB",
                len / MIB,
                peak / 1024
            );
            assert!(
                used <= limit_kib,
                "{name} {args:?}: peak RSS {used} KiB over {limit_kib} KiB (2 × {len} B + 32 MiB)"
            );
        }
        // The streamed audit record is a valid one.
        let v = bin()
            .args(["audit", "verify"])
            .arg(&audit)
            .output()
            .unwrap();
        assert!(v.status.success(), "{name}: {v:?}");
    }
}
