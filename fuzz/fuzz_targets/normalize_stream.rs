//! Fuzz target: the whole normalizer over arbitrary bytes. No panic, every output line is JSON,
//! seq has no gaps, run.end is last and stats.lines equals the input's line count; hollowing
//! every long string literal (what huge lines get) changes no output byte.
#![no_main]

use boo_normalize::json::depth;
use boo_normalize::normalize::{EndInfo, NormalizeOptions, Normalizer};
use boo_normalize::pipeline::Pipeline;
use boo_normalize::sink::Ndjson;
use libfuzzer_sys::fuzz_target;

fn normalize(data: &[u8], opts: NormalizeOptions) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let sink = Ndjson::new(&mut out);
        let mut p = Pipeline::new(Normalizer::new(opts), vec![Box::new(sink)]);
        p.run(data, None).unwrap();
        p.finish(&EndInfo::eof()).unwrap();
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let out = normalize(data, NormalizeOptions::default());
    let hollowed = normalize(
        data,
        NormalizeOptions {
            hollow: Some((0, 16)),
            ..NormalizeOptions::default()
        },
    );
    assert!(out == hollowed, "hollowing changed the output");
    let from_tape = normalize(
        data,
        NormalizeOptions {
            write_from_tape: true,
            ..NormalizeOptions::default()
        },
    );
    assert!(
        out == from_tape,
        "copying canonical values changed the output"
    );
    let text = std::str::from_utf8(&out).expect("output is UTF-8");
    let mut last = None;
    for (i, l) in text.lines().enumerate() {
        // Output nests as deep as the input may (json::MAX_DEPTH), beyond serde_json's own limit.
        let v: serde_json::Value = depth::from_slice(l.as_bytes()).expect("output line is JSON");
        assert_eq!(v["seq"], i as u64);
        last = Some(v);
    }
    let end = last.expect("run.end");
    assert_eq!(end["type"], "run.end");
    let nl = data.iter().filter(|&&b| b == b'\n').count() as u64;
    let lines = nl + u64::from(!data.is_empty() && !data.ends_with(b"\n"));
    assert_eq!(end["stats"]["lines"], lines);
});
