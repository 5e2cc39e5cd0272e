//! Property tests: framing independence, line accounting, engine agreement, and robustness of the
//! normalizer on arbitrary and mutated real input.

use crate::common;

use std::io::Read;

use boo_normalize::normalize::{EndInfo, NormalizeOptions, Normalizer};
use boo_normalize::pipeline::Pipeline;
use boo_normalize::sink::Ndjson;
use proptest::prelude::*;

/// A reader that hands out the input in the given chunk sizes (cycled).
struct Chunked<'a> {
    data: &'a [u8],
    sizes: Vec<usize>,
    i: usize,
}

impl Read for Chunked<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let want = self.sizes[self.i % self.sizes.len()].max(1);
        self.i += 1;
        let n = want.min(self.data.len()).min(out.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn normalize_with(input: &[u8], sizes: Vec<usize>, opts: NormalizeOptions) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let sink = Ndjson::new(&mut out);
        let mut p = Pipeline::new(Normalizer::new(opts), vec![Box::new(sink)]);
        p.run(
            Chunked {
                data: input,
                sizes,
                i: 0,
            },
            None,
        )
        .unwrap();
        p.finish(&EndInfo::eof()).unwrap();
    }
    out
}

fn normalize(input: &[u8]) -> Vec<u8> {
    normalize_with(input, vec![1 << 20], NormalizeOptions::default())
}

/// Small real captures (plain and partial-message ones), concatenated.
fn corpus() -> Vec<u8> {
    let mut v = Vec::new();
    for f in [
        "terragon__followup.ndjson",
        "happy-cli__sample-error-edit-multiedit.ndjson",
        "effective-prompting__create-loop-script.ndjson",
        "claude-debussy__task-tool-output.ndjson",
    ] {
        v.extend(std::fs::read(common::root().join("fixtures/real").join(f)).unwrap());
    }
    // The first 120 lines of a --include-partial-messages capture.
    let fc = std::fs::read(common::root().join("fixtures/real/financecim__loop-log-small.ndjson"))
        .unwrap();
    let cut = fc
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .nth(119)
        .unwrap()
        .0
        + 1;
    v.extend_from_slice(&fc[..cut]);
    v
}

fn corpus_lines() -> Vec<Vec<u8>> {
    corpus()
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

fn validator() -> &'static jsonschema::Validator {
    static V: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    V.get_or_init(|| jsonschema::validator_for(&boo_normalize::schema::schema(true)).unwrap())
}

fn check_stream(input: &[u8], out: &[u8]) {
    let text = std::str::from_utf8(out).expect("UTF-8 output");
    let events: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("every output line is JSON"))
        .collect();
    let end = events.last().expect("run.end");
    assert_eq!(end["type"], "run.end");
    assert_eq!(end["stats"]["lines"], common::line_count(input));
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["seq"], i as u64);
        if let Err(err) = validator().validate(e) {
            panic!("event {i} fails the strict schema: {err}\n{e}");
        }
    }
}

proptest! {
    #![proptest_config(common::proptest_config(256))]

    #[test]
    fn chunking_never_changes_output(sizes in prop::collection::vec(1usize..5000, 1..8)) {
        let input = corpus();
        let want = normalize(&input);
        let got = normalize_with(&input, sizes, NormalizeOptions::default());
        prop_assert_eq!(want, got);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..4000), sizes in prop::collection::vec(1usize..300, 1..4)) {
        let out = normalize_with(&bytes, sizes, NormalizeOptions::default());
        check_stream(&bytes, &out);
    }

    #[test]
    fn mutated_real_lines_never_panic(
        picks in prop::collection::vec((any::<prop::sample::Index>(), 0u8..5, any::<prop::sample::Index>(), any::<u8>()), 1..40),
    ) {
        let lines = corpus_lines();
        let mut input = Vec::new();
        for (pick, op, at, byte) in picks {
            let mut l = lines[pick.index(lines.len())].clone();
            let i = at.index(l.len().max(1)).min(l.len().saturating_sub(1));
            match op {
                0 if !l.is_empty() => l[i] ^= byte | 1,                     // flip bits
                1 => l.truncate(i),                                          // truncate
                2 => { let d = l.clone(); l.extend_from_slice(b"\n"); l.extend(d) } // duplicate
                3 => { let other = &lines[(pick.index(lines.len()) + 1) % lines.len()]; l.truncate(i); l.extend_from_slice(&other[other.len() / 2..]) } // splice
                _ => {}                                                      // unchanged
            }
            input.extend(l);
            input.push(b'\n');
        }
        let out = normalize(&input);
        check_stream(&input, &out);
        // The reference parser agrees on every mutated stream.
        let reference = normalize_with(&input, vec![1 << 20], NormalizeOptions { reference_parser: true, ..NormalizeOptions::default() });
        prop_assert_eq!(String::from_utf8(out.clone()).unwrap(), String::from_utf8(reference).unwrap());
        // So does the fast path with every long string literal hollowed.
        let hollowed = normalize_with(&input, vec![1 << 20], NormalizeOptions { hollow: Some((0, 64)), ..NormalizeOptions::default() });
        prop_assert_eq!(String::from_utf8(out).unwrap(), String::from_utf8(hollowed).unwrap());
    }

    #[test]
    fn engines_agree_on_arbitrary_json(v in arb_json()) {
        // Wrap arbitrary JSON into the places the normalizer passes through raw.
        let line = serde_json::json!({
            "type": "assistant",
            "message": {"id": "m1", "model": "x", "content": [
                {"type": "tool_use", "id": "t1", "name": "X", "input": v.clone()},
                {"type": "text", "text": v.to_string()}
            ], "usage": {"input_tokens": 1}},
            "session_id": "s", "parent_tool_use_id": null
        });
        let unknown = serde_json::json!({"type": "brand_new", "payload": v});
        let input = format!("{line}\n{unknown}\n");
        let fast = normalize(input.as_bytes());
        let slow = normalize_with(input.as_bytes(), vec![1 << 20], NormalizeOptions { reference_parser: true, ..NormalizeOptions::default() });
        let hollowed = normalize_with(input.as_bytes(), vec![1 << 20], NormalizeOptions { hollow: Some((0, 16)), ..NormalizeOptions::default() });
        prop_assert_eq!(String::from_utf8(fast.clone()).unwrap(), String::from_utf8(slow).unwrap());
        prop_assert_eq!(String::from_utf8(fast).unwrap(), String::from_utf8(hollowed).unwrap());
    }
}

proptest! {
    #![proptest_config(common::proptest_config(256))]

    /// Lines holding unpaired surrogate escapes (high or low, at string ends and middles, in keys
    /// and values) are repaired the same way by both engines and by the hollowing fast path, and
    /// give the events of the line with each escape replaced by `\ufffd`.
    #[test]
    fn lone_surrogates_are_repaired_by_both_engines(v in arb_marked_json(), kinds in prop::collection::vec(0u8..3, 1..16)) {
        let line = serde_json::json!({
            "type": "user", "session_id": "s", "parent_tool_use_id": null,
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": v.to_string()},
                {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "x"}], "extra": v}
            ]}
        }).to_string();
        // Each marker becomes a lone high, a lone low, or a lone high right before a real pair.
        let mut broken = String::new();
        let mut fixed = String::new();
        let mut n = 0usize;
        for (i, part) in line.split(MARK).enumerate() {
            if i > 0 {
                let (b, f) = match kinds[(i - 1) % kinds.len()] {
                    0 => ("\\ud83d", "\\ufffd"),
                    // (an `x` first, so a lone low never follows a high: that would be a pair)
                    1 => ("x\\ude00", "x\\ufffd"),
                    _ => ("\\ud83d\\ud83d\\ude00", "\\ufffd\\ud83d\\ude00"),
                };
                broken.push_str(b);
                fixed.push_str(f);
                n += 1;
            }
            broken.push_str(part);
            fixed.push_str(part);
        }
        let input = format!("{broken}\n");
        let fast = normalize(input.as_bytes());
        check_stream(input.as_bytes(), &fast);
        let slow = normalize_with(input.as_bytes(), vec![1 << 20], NormalizeOptions { reference_parser: true, ..NormalizeOptions::default() });
        let hollowed = normalize_with(input.as_bytes(), vec![1 << 20], NormalizeOptions { hollow: Some((0, 16)), ..NormalizeOptions::default() });
        prop_assert_eq!(String::from_utf8(fast.clone()).unwrap(), String::from_utf8(slow).unwrap());
        prop_assert_eq!(String::from_utf8(fast.clone()).unwrap(), String::from_utf8(hollowed).unwrap());
        let text = String::from_utf8(fast).unwrap();
        let events: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let end = events.last().unwrap();
        let repaired: Vec<&serde_json::Value> = events.iter().filter(|e| e["type"] == "line.repaired").collect();
        if n == 0 {
            prop_assert!(repaired.is_empty());
            prop_assert_eq!(&end["stats"]["repaired"], 0);
        } else {
            prop_assert_eq!(repaired.len(), 1);
            prop_assert_eq!(&repaired[0]["count"], n as u64);
            prop_assert_eq!(&end["stats"]["repaired"], 1);
            prop_assert_eq!(&end["stats"]["diagnostics"], 0);
            // Apart from the notice (and the counts in run.end), the events are those of the
            // line repaired by hand.
            let want = String::from_utf8(normalize(format!("{fixed}\n").as_bytes())).unwrap();
            let strip = |t: &str| t.lines().filter(|l| !l.contains("\"line.repaired\"") && !l.contains("\"run.end\"") && !l.contains("\"run.error\"")).collect::<Vec<_>>().join("\n");
            let got: Vec<serde_json::Value> = events.iter().filter(|e| e["type"] != "line.repaired" && e["type"] != "run.end" && e["type"] != "run.error").cloned().collect();
            let want_ev: Vec<serde_json::Value> = strip(&want).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
            prop_assert_eq!(got.len(), want_ev.len());
            for (g, w) in got.iter().zip(&want_ev) {
                let (mut g, mut w) = (g.clone(), w.clone());
                g["seq"] = 0.into();
                w["seq"] = 0.into();
                prop_assert_eq!(g, w);
            }
        }
    }
}

/// A character the marked strategy puts into strings, replaced by surrogate escapes afterwards.
const MARK: char = '\u{E000}';

fn arb_marked_json() -> impl Strategy<Value = serde_json::Value> {
    let s = "[a-z\u{E000}\u{1F600}]{0,6}";
    let leaf = prop_oneof![
        any::<i64>().prop_map(serde_json::Value::from),
        s.prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::from),
            prop::collection::btree_map(s, inner, 0..5)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

fn arb_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<u64>().prop_map(serde_json::Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(serde_json::Value::from),
        ".*".prop_map(serde_json::Value::from),
        "[\\u{0}-\\u{1f}\"\\\\\\u{2028}\\u{1F600}a-z]{0,12}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
            prop::collection::btree_map(".{0,8}", inner, 0..6)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Hollowing long string literals (what huge lines get) changes no byte of the output, on every
/// capture, with the literals cut at several sizes.
#[test]
fn hollowing_changes_no_output_on_any_capture() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut files = Vec::new();
    for dir in [
        "real",
        "captured/1.0.128",
        "captured/2.0.76",
        "captured/2.1.45",
        "captured/2.1.330",
    ] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "ndjson") {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 60);
    for p in files {
        let input = std::fs::read(&p).unwrap();
        let plain = normalize_with(
            &input,
            vec![1 << 20],
            NormalizeOptions {
                hollow: Some((usize::MAX, 0)),
                ..NormalizeOptions::default()
            },
        );
        for sizes in [(0, 0), (0, 64), (0, 300), (4096, 1000)] {
            let hollowed = normalize_with(
                &input,
                vec![1 << 20],
                NormalizeOptions {
                    hollow: Some(sizes),
                    ..NormalizeOptions::default()
                },
            );
            assert!(
                plain == hollowed,
                "{}: hollowing {sizes:?} changed the output",
                p.display()
            );
        }
    }
}

/// Found by the normalize_stream fuzz target: a long string inside `usage`, which the normalizer
/// keeps until the message is over, was hollowed and its stub written later.
#[test]
fn hollowing_leaves_kept_usage_whole() {
    let long = "x".repeat(500);
    let input = format!(
        "{}\n{}\n",
        serde_json::json!({"type": "assistant", "session_id": "s", "parent_tool_use_id": null,
            "message": {"id": "m1", "model": "x", "content": [{"type": "text", "text": long}],
                "usage": {"input_tokens": 1, "inference_geo": long}}}),
        serde_json::json!({"type": "result", "subtype": "success", "session_id": "s", "result": long,
            "usage": {"note": long, "nested": {"deep": [long.clone()]}}})
    );
    let plain = normalize_with(
        input.as_bytes(),
        vec![1 << 20],
        NormalizeOptions {
            hollow: Some((usize::MAX, 0)),
            ..NormalizeOptions::default()
        },
    );
    let hollowed = normalize_with(
        input.as_bytes(),
        vec![1 << 20],
        NormalizeOptions {
            hollow: Some((0, 16)),
            ..NormalizeOptions::default()
        },
    );
    assert_eq!(
        String::from_utf8(plain).unwrap(),
        String::from_utf8(hollowed).unwrap()
    );
}

/// Copying canonical values from the input line (instead of writing them from the tape) changes
/// no byte of the output, on every capture.
#[test]
fn raw_copies_change_no_output_on_any_capture() {
    for p in common::fixtures() {
        let input = std::fs::read(&p).unwrap();
        let copied = normalize(&input);
        let written = normalize_with(
            &input,
            vec![1 << 20],
            NormalizeOptions {
                write_from_tape: true,
                ..NormalizeOptions::default()
            },
        );
        assert!(
            copied == written,
            "{}: raw copies changed the output",
            p.display()
        );
    }
}

proptest! {
    #![proptest_config(common::proptest_config(256))]

    /// The same values written loosely (whitespace between tokens, needless or other escapes,
    /// other number forms) give the same events as written canonically: values that cannot be
    /// copied are written from the tape, and copied ones are exactly what the tape gives.
    #[test]
    fn loose_json_gives_the_canonical_output(v in arb_json(), seed in any::<u64>()) {
        let lines = [
            serde_json::json!({
                "type": "assistant", "session_id": "s", "parent_tool_use_id": null,
                "message": {"id": "m1", "model": "x", "content": [
                    {"type": "tool_use", "id": "t1", "name": "X", "input": v.clone()},
                    {"type": "text", "text": v.to_string()},
                    {"type": "thinking", "thinking": format!("{v}{v}{v}")}
                ], "usage": {"input_tokens": 1}}
            }),
            serde_json::json!({
                "type": "user", "session_id": "s", "parent_tool_use_id": null,
                "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": v.clone()},
                    {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "x"}, {"type": "image", "source": {"data": v.clone()}}]}
                ]},
                "tool_use_result": {"stdout": v.clone(), "file": {"data": v.clone()}}
            }),
            serde_json::json!({"type": "brand_new", "payload": v}),
        ];
        let canonical: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let mut rng = seed | 1;
        let mut loose = String::new();
        for l in &lines {
            render_loose(l, &mut rng, &mut loose);
            loose.push('\n');
        }
        let want = without_bytes(&normalize(canonical.as_bytes()));
        prop_assert_eq!(&without_bytes(&normalize(loose.as_bytes())), &want);
        let from_tape = normalize_with(loose.as_bytes(), vec![1 << 20], NormalizeOptions { write_from_tape: true, ..NormalizeOptions::default() });
        prop_assert_eq!(&without_bytes(&from_tape), &want);
    }
}

/// The output's lines, byte for byte, but for run.end's input byte count (which depends on the
/// spelling) set to 0.
fn without_bytes(out: &[u8]) -> Vec<String> {
    let text = std::str::from_utf8(out).unwrap();
    text.lines()
        .map(|l| {
            let mut e: serde_json::Value = serde_json::from_str(l).unwrap();
            if e["type"] == "run.end" {
                e["stats"]["bytes"] = 0.into();
                return e.to_string();
            }
            l.to_owned()
        })
        .collect()
}

/// A step of a xorshift generator: the choices of [`render_loose`].
fn next(rng: &mut u64) -> u64 {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    *rng
}

/// `v` as valid JSON spelled the way the writer never spells it, here and there.
fn render_loose(v: &serde_json::Value, rng: &mut u64, out: &mut String) {
    use serde_json::Value;
    let ws = |rng: &mut u64, out: &mut String| {
        out.push_str(["", "", "", " ", "\t", " \r "][(next(rng) % 6) as usize]);
    };
    ws(rng, out);
    match v {
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                loose_str(k, rng, out);
                ws(rng, out);
                out.push(':');
                render_loose(x, rng, out);
            }
            ws(rng, out);
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                render_loose(x, rng, out);
            }
            ws(rng, out);
            out.push(']');
        }
        Value::String(s) => loose_str(s, rng, out),
        Value::Number(n) => match (n.as_f64(), n.is_f64(), next(rng) % 3) {
            // The same double in exponent form (Rust prints the shortest round-trip digits).
            (Some(f), true, 0) => out.push_str(&format!("{f:e}")),
            (Some(f), true, 1) => out.push_str(&format!("{f:E}")),
            (_, false, 0) if n.as_i64() == Some(0) => out.push_str("-0"),
            _ => out.push_str(&n.to_string()),
        },
        other => out.push_str(&other.to_string()),
    }
    ws(rng, out);
}

/// A string literal with some characters escaped needlessly or otherwise.
fn loose_str(s: &str, rng: &mut u64, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        let r = next(rng) % 4;
        let canonical = serde_json::to_string(&c.to_string()).unwrap();
        match (c, r) {
            ('/', 0) => out.push_str("\\/"),
            ('\n', 1) => out.push_str("\\u000a"),
            (c, 0) if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            (c, 2) if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            (c, 3) => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{:04X}", u));
                }
            }
            _ => out.push_str(&canonical[1..canonical.len() - 1]),
        }
    }
    out.push('"');
}
