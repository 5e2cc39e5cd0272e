//! `redact` is the identity on input without secrets, and never changes the line count: every
//! fixture comes out byte for byte, `--redact` gives the very envelope plain normalization
//! gives, and a secret streamed across delta lines is replaced in the line where the undecided
//! text began, the lines after it keeping an empty fragment.

use crate::common;

use common::{bin, events, fixtures, line_count, run};
use serde_json::{Value, json};

#[test]
fn every_fixture_is_unchanged_and_redact_gives_the_same_envelope() {
    for path in fixtures() {
        let input = std::fs::read(&path).unwrap();
        let out = bin().arg("redact").arg(&path).output().unwrap();
        assert!(out.status.success(), "{}: {out:?}", path.display());
        assert!(
            out.stdout == input,
            "{}: redact changed clean input",
            path.display()
        );
        let plain = bin().arg(&path).output().unwrap();
        let redacted = bin().arg("--redact").arg(&path).output().unwrap();
        assert_eq!(plain.status.code(), redacted.status.code());
        assert!(
            plain.stdout == redacted.stdout,
            "{}: --redact changed the envelope",
            path.display()
        );
    }
}

fn delta(index: u64, text: &str, uuid: &str) -> Value {
    json!({"type": "stream_event", "event": {"type": "content_block_delta", "index": index,
        "delta": {"type": "text_delta", "text": text}},
        "session_id": "s", "parent_tool_use_id": null, "uuid": uuid})
}

fn ndjson(lines: &[Value]) -> Vec<u8> {
    let mut b = Vec::new();
    for l in lines {
        b.extend_from_slice(l.to_string().as_bytes());
        b.push(b'\n');
    }
    b
}

#[test]
fn a_secret_across_delta_lines_is_replaced_where_it_starts_and_lines_stay() {
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let lines = vec![
        json!({"type": "stream_event", "event": {"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}, "session_id": "s",
            "parent_tool_use_id": null, "uuid": "u0"}),
        delta(0, "The token is ", "u1"),
        delta(0, &secret[..10], "u2"),
        json!({"type": "system", "subtype": "status", "status": "requesting", "session_id": "s", "uuid": "u3"}),
        delta(0, &secret[10..25], "u4"),
        delta(0, &secret[25..], "u5"),
        delta(0, " and that is all.", "u6"),
        json!({"type": "stream_event", "event": {"type": "content_block_stop", "index": 0},
            "session_id": "s", "parent_tool_use_id": null, "uuid": "u7"}),
    ];
    let input = ndjson(&lines);
    let out = run(&["redact"], &input);
    assert!(out.status.success());
    assert_eq!(line_count(&out.stdout), line_count(&input));
    let got = events(&out.stdout);
    // Same lines, same order, same uuids.
    for (a, b) in lines.iter().zip(&got) {
        assert_eq!(a["uuid"], b["uuid"]);
    }
    let frag = |v: &Value| v["event"]["delta"]["text"].as_str().unwrap().to_owned();
    assert_eq!(frag(&got[1]), "The token is ", "decided text is untouched");
    assert!(
        frag(&got[2]).starts_with("[REDACTED:github_token:"),
        "{}",
        frag(&got[2])
    );
    assert_eq!(frag(&got[4]), "");
    assert_eq!(frag(&got[5]), "");
    assert_eq!(got[3], lines[3], "a line between deltas is unchanged");
    assert_eq!(got[6], lines[6]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains(&secret[..10]));
    // The envelope counts exactly the input lines; its events keep their own line numbers.
    let env = run(&["--redact", "--allow-no-result"], &input);
    let evs = events(&env.stdout);
    let end = evs.last().unwrap();
    assert_eq!(end["stats"]["lines"], 8);
    let status = evs.iter().find(|e| e["type"] == "status").unwrap();
    assert_eq!(status["line"], 4);
    let marked = evs
        .iter()
        .find(|e| e.get("redactions").is_some())
        .expect("the line with the placeholder says so");
    assert_eq!(marked["line"], 3);
}
