//! Fuzz target: the redactor over arbitrary bytes split into lines, and over a real-looking
//! stream-json line with a planted GitHub token cut into text deltas at fuzzer-chosen points. No
//! panic; a line that was JSON stays JSON; the planted token never survives.
#![no_main]

use std::sync::Arc;

use boo_normalize::json::depth;
use boo_normalize::read::Line;
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
    let is_json = |b: &[u8]| depth::from_slice::<serde_json::Value>(b).is_ok();
    let mut json_input = Vec::new();
    let mut check = |out: &Transformed, input: &[u8], number: u64, json_input: &[bool]| {
        for i in 0..out.len() {
            let (bytes, _, origin) = out.get(i, input);
            let n = origin.map_or(number, |o| o.number);
            assert!(
                !json_input[n as usize - 1] || is_json(bytes),
                "a JSON line is no longer JSON"
            );
            all.push(bytes.to_vec());
        }
    };
    for (n, l) in lines.iter().enumerate() {
        json_input.push(is_json(l));
        out.clear();
        let line = Line {
            bytes: l,
            number: n as u64 + 1,
            raw_len: l.len() as u64 + 1,
            terminated: true,
            oversized: None,
            cr: false,
        };
        r.push(&line, &mut out);
        check(&out, l, n as u64 + 1, &json_input);
    }
    out.clear();
    r.flush(&mut out);
    check(&out, b"", 0, &json_input);
    assert_eq!(all.len(), lines.len(), "one output line per input line");
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
