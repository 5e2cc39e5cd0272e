//! Usage and cost of a session: counted once per API message (against an independent count),
//! in the envelope and in `sessions`, and priced by estimate when the transcript ends without a
//! result.

use super::*;

/// Usage totals equal the independent de-duplicated sum, in the envelope (`usage` events and
/// `run.end`) and in `sessions --format json`; a forked session's repeated messages count once.
#[test]
fn usage_is_counted_once_per_api_message() {
    for v in VERSIONS {
        let (messages, want) = independent(&transcript_files(v));
        let ev = envelope(&[&project(v)]);
        let usage = of_type(&ev, "usage");
        let ids: BTreeSet<&str> = usage
            .iter()
            .map(|e| e["message_id"].as_str().unwrap())
            .collect();
        assert_eq!(
            ids.len(),
            usage.len(),
            "{v}: a message's usage written twice"
        );
        let mut sum = [0u64; 4];
        for e in &usage {
            let u = &e["usage"];
            for (i, k) in [
                "input_tokens",
                "output_tokens",
                "cache_read_input_tokens",
                "cache_creation_input_tokens",
            ]
            .iter()
            .enumerate()
            {
                sum[i] += u[k].as_u64().unwrap_or(0);
            }
        }
        assert_eq!((usage.len(), sum), (messages, want), "{v}: usage events");
        let end = ev.last().unwrap();
        assert_eq!(end["type"], "run.end");
        let u = &end["usage"];
        assert_eq!(
            [
                u["input_tokens"].as_u64().unwrap(),
                u["output_tokens"].as_u64().unwrap(),
                u["cache_read_input_tokens"].as_u64().unwrap(),
                u["cache_creation_input_tokens"].as_u64().unwrap()
            ],
            want,
            "{v}: run.end"
        );
        let s = sessions_json(&dir(v).join("projects"), &[]);
        let t = &s["total"];
        assert_eq!(
            t["api_messages"].as_u64().unwrap() as usize,
            messages,
            "{v}: sessions total"
        );
        assert_eq!(
            t["tokens"]["total"].as_u64().unwrap(),
            want.iter().sum::<u64>(),
            "{v}: sessions total tokens"
        );
        // Each session alone counts its copies; the sum over sessions is larger because the fork
        // repeats earlier messages (1.0.128's copies without their request ids).
        let per: u64 = s["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["api_messages"].as_u64().unwrap())
            .sum();
        assert!(
            per as usize > messages,
            "{v}: the fork repeats messages ({per} vs {messages})"
        );
    }
}

/// A transcript ends without a result: exit 0, no run.error, an estimated cost beside a null
/// reported one; `--prices` prices a model the table lacks; forced stream-json reads the lines
/// as lookalikes (and misses its result: exit 3).
#[test]
fn a_transcript_ends_without_a_result_and_is_priced_by_estimate() {
    let f = project("2.1.332");
    let ev = envelope(&[&f]);
    assert!(of_type(&ev, "run.error").is_empty());
    let end = ev.last().unwrap();
    assert_eq!(end["terminal_seen"], false);
    assert_eq!(end["cost_usd"], Value::Null);
    assert_eq!(end["cost_estimate_usd"], Value::Null);
    assert_eq!(end["unpriced_models"], json!(["claude-opus-5-5"]));
    let prices = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        prices.path(),
        r#"{"date":"2026-11-01","models":{"claude-opus-5-5":{"input":10,"output":50,"cache_read":1,"cache_write":12.5,"cache_write_1h":20}}}"#,
    )
    .unwrap();
    let out = bin()
        .arg("--prices")
        .arg(prices.path())
        .arg(&f)
        .output()
        .unwrap();
    let end = events(&out.stdout).pop().unwrap();
    let (_, t) = independent(&transcript_files("2.1.332"));
    let want =
        (t[0] as f64 * 10.0 + t[1] as f64 * 50.0 + t[2] as f64 * 1.0 + t[3] as f64 * 12.5) / 1e6;
    let got = end["cost_estimate_usd"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-5, "{got} vs {want}");
    assert_eq!(end["prices_date"], "2026-11-01");
    assert_eq!(end["cost_source"], prices.path().display().to_string());
    let bad = bin()
        .arg("--prices")
        .arg("/nonexistent/prices.json")
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let main = transcript_files("2.1.45")
        .into_iter()
        .find(|p| !p.to_string_lossy().contains("agent-"))
        .unwrap();
    let forced = bin()
        .args(["--input-format", "stream-json"])
        .arg(&main)
        .output()
        .unwrap();
    // Forced to read it as stream-json, a transcript holds none: the wrong-input hint, exit 2.
    assert_eq!(forced.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&forced.stderr).contains("session transcript"));
    assert!(
        of_type(&events(&forced.stdout), "unknown")
            .iter()
            .all(|e| e["kind"] == "lookalike")
    );
}

/// A message whose later line, written after the result of its first tool call, carries larger
/// counts (25 then 173 output tokens, as in a real session): the envelope and `sessions` count
/// its final usage, once, and agree (issue 38: they were 34 and 182 here).
#[test]
fn a_message_counts_its_final_usage_in_the_envelope_and_in_sessions() {
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("projects").join("-work");
    std::fs::create_dir_all(&proj).unwrap();
    let sid = "11111111-2222-4333-8444-555555555555";
    let line = |kind: &str, uuid: &str, t: u32, message: Value| {
        json!({"parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/work",
               "sessionId": sid, "version": "2.1.90", "type": kind, "message": message,
               "uuid": uuid, "timestamp": format!("2026-01-01T00:00:0{t}.000Z")})
        .to_string()
    };
    let usage = |out: u64| json!({"input_tokens": 10, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 0, "output_tokens": out});
    let assistant = |id: &str, block: Value, stop: Value, out: u64| {
        json!({"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
               "content": [block], "stop_reason": stop, "usage": usage(out)})
    };
    let result = |id: &str| json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "x", "is_error": false}]});
    let text = [
        line("user", "u1", 0, json!({"role": "user", "content": "go"})),
        line("assistant", "a1", 1, assistant("msg_A", json!({"type": "thinking", "thinking": "hmm", "signature": "s"}), Value::Null, 25)),
        line("assistant", "a2", 2, assistant("msg_A", json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}), Value::Null, 25)),
        line("user", "u2", 3, result("toolu_1")),
        line("assistant", "a3", 4, assistant("msg_A", json!({"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "pwd"}}), json!("tool_use"), 173)),
        line("user", "u3", 5, result("toolu_2")),
        line("assistant", "a4", 6, assistant("msg_B", json!({"type": "text", "text": "done"}), json!("end_turn"), 9)),
    ]
    .join("\n");
    let file = proj.join(format!("{sid}.jsonl"));
    std::fs::write(&file, format!("{text}\n")).unwrap();
    let ev = envelope(&[&file]);
    let usage_a = of_type(&ev, "usage")
        .into_iter()
        .find(|e| e["message_id"] == "msg_A")
        .unwrap();
    assert_eq!(usage_a["usage"]["output_tokens"], 173, "the final count");
    let end = ev.last().unwrap();
    assert_eq!(end["usage"]["output_tokens"], 173 + 9);
    let s = sessions_json(&tmp.path().join("projects"), &[]);
    assert_eq!(s["total"]["tokens"]["output_tokens"], 173 + 9, "{s}");
}
