//! Numbers beyond a double's range (`1e400`, a 400-digit integer): valid JSON text (RFC 8259 sets
//! no limit) that JavaScript's `JSON.parse` reads as `Infinity`, a value no JSON output can carry.
//! serde_json and simd-json refuse the whole line ("number out of range"); this tells such a line
//! from one that is not JSON, so it gets its own `number_out_of_range` diagnostic and message.

/// Whether a parser's message says a number is out of range (serde_json's wording; simd-json's
/// refusals are decided by serde_json again, see [`super::Parser::new`]).
pub fn is_out_of_range(message: &str) -> bool {
    message.starts_with("number out of range")
}

/// A copy of `line` in which every number too large for a double is `0` padded with spaces to the
/// same length; `None` when it has none. Strings are skipped; the copy may still not be JSON.
pub fn huge_numbers_zeroed(line: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'"' => {
                // To the closing quote, past escaped characters.
                i += 1;
                while i < line.len() {
                    match memchr::memchr2(b'"', b'\\', &line[i..]) {
                        Some(k) if line[i + k] == b'\\' => i += k + 2,
                        Some(k) => {
                            i += k;
                            break;
                        }
                        None => i = line.len(),
                    }
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let len = line[i..]
                    .iter()
                    .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .unwrap_or(line.len() - i);
                let text = std::str::from_utf8(&line[i..i + len]).unwrap_or("");
                if text.parse::<f64>().is_ok_and(f64::is_infinite) {
                    let o = out.get_or_insert_with(|| line.to_vec());
                    o[i] = b'0';
                    o[i + 1..i + len].fill(b' ');
                }
                i += len;
            }
            _ => i += 1,
        }
    }
    out
}

/// Whether `line`, refused with `message`, is JSON but for numbers beyond a double's range.
pub fn only_out_of_range(line: &[u8], message: &str) -> bool {
    is_out_of_range(message)
        && huge_numbers_zeroed(line)
            .is_some_and(|z| super::depth::from_slice::<serde::de::IgnoredAny>(&z).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zeroed(s: &str) -> Option<String> {
        huge_numbers_zeroed(s.as_bytes()).map(|v| String::from_utf8(v).unwrap())
    }

    #[test]
    fn huge_numbers_are_zeroed_in_place() {
        assert_eq!(
            zeroed(r#"{"a":1e400,"b":"1e400","c":[-2E+999,1e-400,5]}"#).as_deref(),
            Some(r#"{"a":0    ,"b":"1e400","c":[0      ,1e-400,5]}"#)
        );
        assert_eq!(zeroed(r#"{"a":1e300,"b":"x\"1e400"}"#), None);
        let big = format!("[{}]", "9".repeat(400));
        assert_eq!(
            zeroed(&big).map(|s| s.replace(" ", "")).as_deref(),
            Some("[0]")
        );
    }

    #[test]
    fn out_of_range_is_told_from_not_json() {
        let msg = |s: &str| {
            serde_json::from_str::<serde_json::Value>(s)
                .unwrap_err()
                .to_string()
        };
        let ok = r#"{"type":"result","total_cost_usd":1e400}"#;
        assert!(only_out_of_range(ok.as_bytes(), &msg(ok)));
        let bad = r#"{"type":"result","total_cost_usd":1e400,}"#;
        assert!(!only_out_of_range(bad.as_bytes(), &msg(bad)));
        let text = "not json 1e400";
        assert!(!only_out_of_range(text.as_bytes(), &msg(text)));
    }
}
