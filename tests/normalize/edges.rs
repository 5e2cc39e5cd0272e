//! The real binary at the edges of its input and output: bad lines become diagnostics and never
//! abort (a number beyond a double's range is told from text), a long line is cut
//! (`--max-line-bytes`) or kept whole, a reader that closes the pipe early, a missing file.

use crate::common;

use common::{bin, events, run};

#[test]
fn bad_lines_become_diagnostics_and_never_abort() {
    let mut input = Vec::new();
    input.extend_from_slice(b"-n\r\n");
    input.extend_from_slice(b"\n");
    input.extend_from_slice(b"[1,2]\n");
    input.extend_from_slice(b"{\"no_type\":1}\n");
    input.extend_from_slice(b"{\"type\":\"brand_new\",\"x\":1}\n");
    input.extend_from_slice(b"{\"type\":\"system\",\"subtype\":\"brand_new\"}\n");
    input.extend_from_slice(
        b"{\"type\":\"user\",\"message\":{},\"sessionId\":\"s\",\"parentUuid\":null}\n",
    );
    input.extend_from_slice(b"\xff\xfe not utf8\n");
    input.extend_from_slice(
        format!(
            "{{\"type\":\"x\",\"deep\":{}{}}}\n",
            "[".repeat(2000),
            "]".repeat(2000)
        )
        .as_bytes(),
    );
    input.extend_from_slice(b"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"");
    let out = run(&[], &input);
    // No result line among them: exit 3, with run.error before run.end.
    assert_eq!(out.status.code(), Some(3));
    let ev = events(&out.stdout);
    let kinds: Vec<String> = ev
        .iter()
        .map(|e| {
            format!(
                "{}:{}",
                e["type"].as_str().unwrap(),
                e["kind"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "diagnostic:not_json",
            "diagnostic:empty_line",
            "diagnostic:not_object",
            "diagnostic:missing_type",
            "unknown:type",
            "unknown:subtype",
            "unknown:lookalike",
            "diagnostic:invalid_utf8",
            "diagnostic:too_deep",
            "diagnostic:truncated_line",
            "run.error:",
            "run.end:",
        ]
    );
    assert_eq!(ev.last().unwrap()["stats"]["lines"], 10);
    // --strict: same stream, a summary; the missing result (3) says more than the unusable lines
    // (1), which --allow-no-result leaves alone.
    let strict = run(&["--strict"], &input);
    assert_eq!(strict.status.code(), Some(3));
    assert_eq!(strict.stdout, out.stdout);
    let err = String::from_utf8(strict.stderr).unwrap();
    assert!(err.starts_with("boo-normalize: strict: "), "{err}");
    assert!(err.contains("boo-normalize: no result: "), "{err}");
    let strict = run(&["--strict", "--allow-no-result"], &input);
    assert_eq!(strict.status.code(), Some(1));
    assert!(
        !events(&strict.stdout)
            .iter()
            .any(|e| e["type"] == "run.error")
    );
}

/// `1e400` is valid JSON (JSON.parse reads Infinity) that no JSON output can carry: its own
/// diagnostic and an accurate message, not "text, not JSON"; a line that also has a syntax error
/// stays `not_json`.
#[test]
fn a_number_out_of_range_is_not_called_text() {
    let line = b"{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"session_id\":\"s\",\"result\":\"done\",\"total_cost_usd\":1e400}\n";
    let out = run(&[], line);
    assert_eq!(out.status.code(), Some(2));
    let ev = events(&out.stdout);
    assert_eq!(ev[0]["type"], "diagnostic");
    assert_eq!(ev[0]["kind"], "number_out_of_range", "{}", ev[0]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(
            "its one line is not usable stream-json: JSON with a number beyond a double's range"
        ) && !err.contains("text, not JSON"),
        "{err}"
    );
    let mut two = line.to_vec();
    two.extend_from_slice(b"{\"type\":\"result\",\"x\":1e400,}\n");
    let ev = events(&run(&[], &two).stdout);
    assert_eq!(ev[1]["kind"], "not_json", "{}", ev[1]);
}

#[test]
fn max_line_bytes_cuts_without_storing() {
    let mut input = vec![b'{'; 5_000_000];
    input.extend_from_slice(b"\n{\"type\":\"keep_alive\"}\n");
    let out = run(&["--max-line-bytes", "1000"], &input);
    let ev = events(&out.stdout);
    assert_eq!(ev[0]["kind"], "line_too_long");
    assert_eq!(ev[0]["bytes"], 5_000_000);
    assert_eq!(ev[1]["type"], "keep_alive");
}

#[test]
fn huge_line_without_limit() {
    // A 12 MB tool result line is normalized whole.
    let big = "x".repeat(12 << 20);
    let line = format!(
        "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"{big}\"}}]}},\"session_id\":\"s\",\"parent_tool_use_id\":null}}\n"
    );
    let out = run(&[], line.as_bytes());
    let ev = events(&out.stdout);
    assert_eq!(ev[0]["type"], "tool.result");
    assert_eq!(ev[0]["content"].as_str().unwrap().len(), 12 << 20);
}

#[test]
fn head_closes_the_pipe_quietly() {
    use std::process::{Command, Stdio};
    let path = common::root().join("fixtures/real/gymnastics-graphics__rundown-editor-log.ndjson");
    let script = format!(
        "set -o pipefail; '{}' '{}' '{}' | head -1 >/dev/null",
        env!("CARGO_BIN_EXE_boo-normalize"),
        path.display(),
        path.display()
    );
    let out = Command::new("bash")
        .args(["-c", &script])
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success(), "exit {:?}", out.status);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn missing_file_is_a_clear_error() {
    let out = bin().arg("does/not/exist.ndjson").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err,
        "boo-normalize: does/not/exist.ndjson: No such file or directory (os error 2)\n"
    );
}
