//! Fuzz target: the redactor over arbitrary bytes split into lines, and over a real-looking
//! stream-json line with a planted GitHub token cut into text deltas at fuzzer-chosen points. No
//! panic; a line that was JSON stays JSON; the planted token never survives.
#![no_main]

use std::sync::Arc;

use boo_normalize::redact::{Config, DEFAULT_ENTROPY_BITS, Engine, Key, Redactor};
use boo_normalize::transform::Transformed;
use libfuzzer_sys::fuzz_target;

const SECRET: &str = "ghp_F0zzR3dactT0kenAbcdefghijklmnopqrst12";

fn engine() -> Arc<Engine> {
    Arc::new(
        Engine::new(Config {
            rules: Vec::new(),
            key: Key::from_bytes(b"fuzz"),
            entropy_bits: DEFAULT_ENTROPY_BITS,
        })
        .expect("built-in rules compile"),
    )
}

fn run(r: &mut Redactor, lines: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = Transformed::default();
    let mut all = Vec::new();
    for l in lines {
        out.clear();
        r.push(l, false, &mut out);
        for i in 0..out.len() {
            let (bytes, _, _) = out.get(i, l);
            all.push(bytes.to_vec());
        }
        if serde_json::from_slice::<serde_json::Value>(l).is_ok() {
            let (last, _, _) = out.get(out.len() - 1, l);
            assert!(
                serde_json::from_slice::<serde_json::Value>(last).is_ok(),
                "a JSON line is no longer JSON"
            );
        }
    }
    out.clear();
    r.flush(&mut out);
    for i in 0..out.len() {
        all.push(out.get(i, b"").0.to_vec());
    }
    all
}

fuzz_target!(|data: &[u8]| {
    let e = engine();
    // 1. Arbitrary lines.
    let lines: Vec<Vec<u8>> = data.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    run(&mut Redactor::new(e.clone()), &lines);

    // 2. The token streamed as text deltas, cut where the fuzzer says.
    let text = format!("here: {SECRET} done");
    let mut cuts: Vec<usize> = data
        .iter()
        .map(|&b| b as usize % (text.len() + 1))
        .collect();
    cuts.push(0);
    cuts.push(text.len());
    cuts.sort_unstable();
    cuts.dedup();
    let mut stream = vec![br#"{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}},"session_id":"s","parent_tool_use_id":null}"#.to_vec()];
    for w in cuts.windows(2) {
        let piece = serde_json::to_string(&text[w[0]..w[1]]).unwrap();
        stream.push(format!(r#"{{"type":"stream_event","event":{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":{piece}}}}},"session_id":"s","parent_tool_use_id":null}}"#).into_bytes());
    }
    stream.push(br#"{"type":"stream_event","event":{"type":"content_block_stop","index":0},"session_id":"s","parent_tool_use_id":null}"#.to_vec());
    let out = run(&mut Redactor::new(e), &stream);
    // Rebuild the streamed text from the deltas that came out.
    let mut rebuilt = String::new();
    for l in &out {
        let v: serde_json::Value = serde_json::from_slice(l).expect("stream lines stay JSON");
        if let Some(t) = v["event"]["delta"]["text"].as_str() {
            rebuilt.push_str(t);
        }
    }
    assert!(!rebuilt.contains(SECRET), "token survived: {rebuilt}");
    assert!(
        rebuilt.starts_with("here: [REDACTED:github_token:") && rebuilt.ends_with(" done"),
        "{rebuilt}"
    );
});
