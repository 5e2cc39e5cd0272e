//! Repair of lines that strict JSON parsers refuse but JavaScript's `JSON.parse` accepts: unpaired
//! UTF-16 surrogate escapes.
//!
//! CLI versions before 2.1.330 cut long tool output at a UTF-16 code unit, so a cut emoji leaves
//! `"…\ud83d"` (or a lone low surrogate) inside an otherwise valid line. RFC 8259's grammar allows
//! any `\uXXXX`, and `JSON.parse` (and Python's `json.loads`) accept such a line, but the string
//! it denotes is not valid Unicode, so serde_json and simd-json reject the whole line.
//!
//! The rule, exactly: inside a string literal, a `\uD800`–`\uDBFF` escape not immediately followed
//! by a `\uDC00`–`\uDFFF` escape, and a `\uDC00`–`\uDFFF` escape not immediately preceded by such a
//! high one, is replaced by `\ufffd` (U+FFFD REPLACEMENT CHARACTER), the character `JSON.parse`
//! followed by `TextEncoder` (or any UTF-8 encoder) produces for it. The escape has the same length
//! as its replacement, so byte offsets in the line do not move. Nothing else is repaired: every other
//! defect that strict parsers refuse (bad escapes, raw control characters, trailing commas, invalid
//! UTF-8) is refused by `JSON.parse` too, and stays a `diagnostic`.

use super::ParseError;
use super::depth::is_too_deep;

/// What a line the parser refused is, decided the same way for every reader of stream-json
/// (`normalize`, `profile`): not UTF-8, nested too deep, JSON with a number beyond a double's
/// range, repairable (the repaired copy is in the buffer passed to [`refused`]: parse it
/// instead), or not JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The line is not valid UTF-8 (nothing to repair: `JSON.parse` refuses it too).
    InvalidUtf8,
    /// Nested deeper than [`super::MAX_DEPTH`].
    TooDeep,
    /// JSON but for a number beyond a double's range (`1e400`; see [`super::range`]).
    OutOfRange,
    /// This many unpaired surrogate escapes were replaced; parse the repaired copy. If that
    /// copy does not parse either, the line is not JSON.
    Repaired(usize),
    /// Not JSON (or cut short).
    NotJson,
}

/// Classify `line`, which the parser refused with `e`, repairing it into `fixed` when it can.
pub fn refused(line: &[u8], e: &ParseError, fixed: &mut Vec<u8>) -> Refused {
    if simdutf8::basic::from_utf8(line).is_err() {
        Refused::InvalidUtf8
    } else if is_too_deep(&e.message) {
        Refused::TooDeep
    } else if super::range::only_out_of_range(line, &e.message) {
        Refused::OutOfRange
    } else {
        match lone_surrogates(line, fixed) {
            0 => Refused::NotJson,
            n => Refused::Repaired(n),
        }
    }
}

/// What replaces an unpaired surrogate escape (same length: six bytes).
const REPLACEMENT: &[u8; 6] = b"\\ufffd";

/// Copy `line` into `out` with every unpaired surrogate escape replaced by `\ufffd`; returns how
/// many were replaced (0: `out` is left empty and the line needs no repair of this kind).
pub fn lone_surrogates(line: &[u8], out: &mut Vec<u8>) -> usize {
    out.clear();
    if memchr::memmem::find(line, b"\\u").is_none() {
        return 0;
    }
    let mut in_string = false;
    let mut i = 0;
    // Replacements are recorded as offsets first, so a line with none is never copied.
    let mut at: Vec<usize> = Vec::new();
    while i < line.len() {
        let b = line[i];
        if !in_string {
            if b == b'"' {
                in_string = true;
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                i += 1;
            }
            b'\\' => match escape_unit(line, i) {
                Some(0xD800..=0xDBFF) => {
                    if matches!(escape_unit(line, i + 6), Some(0xDC00..=0xDFFF)) {
                        i += 12;
                    } else {
                        at.push(i);
                        i += 6;
                    }
                }
                Some(0xDC00..=0xDFFF) => {
                    at.push(i);
                    i += 6;
                }
                Some(_) => i += 6,
                None => i += 2,
            },
            _ => i += 1,
        }
    }
    if at.is_empty() {
        return 0;
    }
    out.extend_from_slice(line);
    for &p in &at {
        out[p..p + 6].copy_from_slice(REPLACEMENT);
    }
    at.len()
}

/// The code unit of a `\uXXXX` escape starting at `line[i]` (the backslash), if there is one.
fn escape_unit(line: &[u8], i: usize) -> Option<u32> {
    let e = line.get(i..i + 6)?;
    if e[0] != b'\\' || e[1] != b'u' {
        return None;
    }
    let mut v = 0u32;
    for &h in &e[2..] {
        v = v * 16 + (h as char).to_digit(16)?;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(s: &str) -> (usize, String) {
        let mut out = Vec::new();
        let n = lone_surrogates(s.as_bytes(), &mut out);
        (n, String::from_utf8(out).unwrap())
    }

    #[test]
    fn lone_high_and_low_are_replaced() {
        assert_eq!(fix(r#"{"a":"x\ud83d"}"#), (1, r#"{"a":"x\ufffd"}"#.into()));
        assert_eq!(fix(r#"{"a":"\uDE00y"}"#), (1, r#"{"a":"\ufffdy"}"#.into()));
        assert_eq!(
            fix(r#"{"\ud83d":"\ud83d\ud83d\ude00\ude00"}"#),
            (3, r#"{"\ufffd":"\ufffd\ud83d\ude00\ufffd"}"#.into())
        );
    }

    #[test]
    fn pairs_and_other_escapes_are_left_alone() {
        assert_eq!(fix(r#"{"a":"\ud83d\ude00 \u00e9 \\ud83d"}"#).0, 0);
        // Outside strings nothing is touched (the line stays invalid).
        assert_eq!(fix(r#"{"a":1}\ud83d"#).0, 0);
        // An escaped backslash before `u` is not an escape.
        assert_eq!(fix(r#"{"a":"\\\\ud83d"}"#).0, 0);
    }

    #[test]
    fn repaired_lines_parse_with_both_engines() {
        let (_, s) = fix(r#"{"type":"user","t":"ok \ud83d"}"#);
        assert!(serde_json::from_str::<serde_json::Value>(&s).is_ok());
        let mut b = s.clone().into_bytes();
        assert!(simd_json::to_borrowed_value(&mut b).is_ok());
    }
}
