//! The content of a JSON string literal: borrowed from the bytes when it holds no escape, else
//! decoded as serde_json decodes it (a literal this reader is unsure of is left to serde_json);
//! and the lenient decoding of a literal's inside that redaction uses ([`decode`]).

use std::borrow::Cow;

/// A raw JSON value as a string, when it is a string literal (escapes decoded; `None` for other
/// values and for invalid literals).
pub fn string(raw: &[u8]) -> Option<Cow<'_, str>> {
    let inner = raw.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    if memchr::memchr(b'\\', inner).is_none() {
        // Ids, names, models are short (std's check has no setup to pay), text is long.
        let checked = match inner.len() {
            0..=64 => std::str::from_utf8(inner).ok(),
            _ => simdutf8::basic::from_utf8(inner).ok(),
        };
        return checked.map(Cow::Borrowed);
    }
    unescape(inner)
        .or_else(|| serde_json::from_slice::<String>(raw).ok())
        .map(Cow::Owned)
}

/// The content of a string literal that holds escapes, decoded as serde_json decodes it; `None`
/// where this reader is not sure (raw control characters, invalid UTF-8, an unknown escape, a
/// surrogate not in a pair): serde_json then decides.
fn unescape(inner: &[u8]) -> Option<String> {
    if inner.iter().any(|c| *c < 0x20) || simdutf8::basic::from_utf8(inner).is_err() {
        return None;
    }
    let mut out = Vec::with_capacity(inner.len());
    if !decode(inner, &mut out, None) {
        return None;
    }
    String::from_utf8(out).ok()
}

fn hex4(b: &[u8]) -> Option<u16> {
    if b.len() < 4 {
        return None;
    }
    let s = std::str::from_utf8(&b[..4]).ok()?;
    u16::from_str_radix(s, 16).ok()
}

/// Decode the inside of a JSON string literal, leniently: a bad escape is kept as it is and a
/// surrogate not in a pair becomes U+FFFD (redaction reads text that may be cut or broken).
/// Returns whether every escape was well-formed, so that the result is what a JSON parser
/// reads. With `map`, `map[i]` is the raw offset the decoded byte `i` came from, plus one
/// final entry for the end.
pub fn decode(raw: &[u8], out: &mut Vec<u8>, mut map: Option<&mut Vec<u32>>) -> bool {
    let mut exact = true;
    out.clear();
    if let Some(m) = map.as_deref_mut() {
        m.clear();
    }
    let mut i = 0;
    while i < raw.len() {
        // A run without escapes.
        let run = memchr::memchr(b'\\', &raw[i..]).unwrap_or(raw.len() - i);
        if run > 0 {
            out.extend_from_slice(&raw[i..i + run]);
            if let Some(m) = map.as_deref_mut() {
                m.extend((i..i + run).map(|x| x as u32));
            }
            i += run;
            continue;
        }
        let at = i;
        let before = out.len();
        if i + 1 >= raw.len() {
            out.push(b'\\');
            exact = false;
            i += 1;
        } else {
            let e = raw[i + 1];
            i += 2;
            match e {
                b'"' | b'\\' | b'/' => out.push(e),
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'r' => out.push(b'\r'),
                b'b' => out.push(8),
                b'f' => out.push(12),
                b'u' => match hex4(&raw[i..]) {
                    Some(u) => {
                        // `from_str_radix` also takes a sign: lenient, not what JSON allows.
                        exact &= raw[i..i + 4].iter().all(u8::is_ascii_hexdigit);
                        i += 4;
                        let mut cp = u32::from(u);
                        if (0xD800..0xDC00).contains(&u) {
                            let lo = (raw.get(i) == Some(&b'\\') && raw.get(i + 1) == Some(&b'u'))
                                .then(|| hex4(&raw[i + 2..]))
                                .flatten()
                                .filter(|l| (0xDC00..0xE000).contains(l));
                            match lo {
                                Some(l) => {
                                    i += 6;
                                    cp = 0x10000 + ((cp - 0xD800) << 10) + (u32::from(l) - 0xDC00);
                                }
                                None => {
                                    exact = false;
                                    cp = 0xFFFD;
                                }
                            }
                        } else if (0xDC00..0xE000).contains(&u) {
                            exact = false;
                            cp = 0xFFFD;
                        }
                        let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    }
                    None => {
                        exact = false;
                        out.extend_from_slice(&raw[at..i]);
                    }
                },
                _ => {
                    exact = false;
                    out.extend_from_slice(&raw[at..i]);
                }
            }
        }
        if let Some(m) = map.as_deref_mut() {
            for _ in before..out.len() {
                m.push(at as u32);
            }
        }
    }
    if let Some(m) = map {
        m.push(raw.len() as u32);
    }
    exact
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// A string literal with escapes of every kind reads as serde_json reads it, or is left
        /// to serde_json.
        #[test]
        fn escaped_strings_decode_as_serde_json_decodes_them(
            text in "\\PC{0,40}",
            raw in r#"([a0-9A-Fé]|\\["\\/bfnrtux]|\\u[0-9a-fA-F]{4}|\\u[dD][89aAbBcCdDeEfF][0-9a-f]{2}){0,30}"#,
        ) {
            let lit = serde_json::to_string(&text).unwrap();
            let read = string(lit.as_bytes());
            proptest::prop_assert_eq!(read.as_deref(), Some(text.as_str()));
            let lit = format!("\"{raw}\"");
            let serde = serde_json::from_str::<String>(&lit).ok();
            if let Some(ours) = unescape(raw.as_bytes()) {
                proptest::prop_assert_eq!(Some(ours), serde.clone(), "{}", lit);
            }
            proptest::prop_assert_eq!(string(lit.as_bytes()).map(Cow::into_owned), serde);
        }
    }
}
