//! The content of a JSON string literal: borrowed from the bytes when it holds no escape, else
//! decoded as serde_json decodes it (a literal this reader is unsure of is left to serde_json).

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
    let hex4 = |h: Option<&[u8]>| -> Option<u32> {
        let h = std::str::from_utf8(h?).ok()?;
        (h.len() == 4 && h.bytes().all(|c| c.is_ascii_hexdigit()))
            .then(|| u32::from_str_radix(h, 16).ok())?
    };
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while let Some(p) = memchr::memchr(b'\\', &inner[i..]) {
        out.extend_from_slice(&inner[i..i + p]);
        i += p + 1;
        let c = match *inner.get(i)? {
            c @ (b'"' | b'\\' | b'/') => char::from(c),
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let mut n = hex4(inner.get(i + 1..i + 5))?;
                i += 4;
                if (0xD800..0xDC00).contains(&n) {
                    // A pair: the low half must follow at once.
                    if inner.get(i + 1..i + 3) != Some(b"\\u") {
                        return None;
                    }
                    let low = hex4(inner.get(i + 3..i + 7))?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return None;
                    }
                    n = 0x10000 + ((n - 0xD800) << 10) + (low - 0xDC00);
                    i += 6;
                }
                char::from_u32(n)?
            }
            _ => return None,
        };
        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        i += 1;
    }
    out.extend_from_slice(&inner[i..]);
    String::from_utf8(out).ok()
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
