//! How deep a line may nest: the limit both engines share ([`MAX_DEPTH`]), a scan that measures a
//! document's nesting without parsing it, and serde_json parses bounded by that scan instead of
//! serde_json's own limit of 128 levels.
//!
//! Python's `json` (the Agent SDK's reader) reads about 1,000 levels; a tool input nested a few
//! hundred levels deep is valid stream-json. simd-json's parse is iterative (its limit is a
//! setting); serde_json recurses once per level, so its built-in limit is lifted only after the
//! scan has bounded the depth, and a deep document is parsed on a stack sized for it. What walks
//! a parsed value afterwards (writing it out, redaction, the sinks) recurses in small frames:
//! [`MAX_DEPTH`] levels fit a 2 MiB thread stack (tested).

use serde::Deserialize;

/// Deepest nesting (arrays and objects inside each other) of a line that is read; a deeper line
/// is a `too_deep` diagnostic. Above what Python's `json` reads (998 levels on CPython 3.11).
pub const MAX_DEPTH: usize = 1024;

/// The deepest nesting of arrays and objects in `bytes`, read as JSON text (brackets inside
/// strings do not count), stopping as soon as it exceeds `limit` (the result is then
/// `limit + 1`). Malformed text gets a number too; the parser that follows judges it.
pub fn nesting(bytes: &[u8], limit: usize) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'[' | b'{' => {
                depth += 1;
                if depth > deepest {
                    deepest = depth;
                    if deepest > limit {
                        return deepest;
                    }
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'"' => {
                // Skip the string: to its closing quote, past escaped characters.
                i += 1;
                while i < bytes.len() {
                    match memchr::memchr2(b'"', b'\\', &bytes[i..]) {
                        Some(k) if bytes[i + k] == b'\\' => i += k + 2,
                        Some(k) => {
                            i += k;
                            break;
                        }
                        None => i = bytes.len(),
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    deepest
}

/// The message of a line nested deeper than [`MAX_DEPTH`] (what [`is_too_deep`] recognizes).
pub fn too_deep_message() -> String {
    format!("nesting deeper than {MAX_DEPTH} levels (recursion limit exceeded)")
}

/// Whether a parser's message says the document nests too deeply (this module's message, or
/// serde_json's own "recursion limit exceeded").
pub fn is_too_deep(message: &str) -> bool {
    message.contains("recursion limit exceeded")
}

/// Nesting that serde_json reads within its own limit (it refuses 128 levels), on any stack.
const SHALLOW: usize = 127;

/// Stack for a deep parse (see [`from_slice`]): serde_json takes about 2 KiB a level in a debug
/// build, much less optimized; this leaves four times that.
fn deep_stack(depth: usize) -> usize {
    (1 << 20) + depth * (8 << 10)
}

/// `serde_json::from_slice`, reading up to [`MAX_DEPTH`] levels (serde_json alone stops at 128);
/// deeper text is an error whose message [`is_too_deep`] recognizes. A document deeper than
/// serde_json's own limit is parsed on a helper thread whose stack fits its depth, so that no
/// caller (a 2 MiB worker thread) can overflow its stack however the document nests.
pub fn from_slice<'a, T: Deserialize<'a> + Send>(bytes: &'a [u8]) -> serde_json::Result<T> {
    let depth = nesting(bytes, MAX_DEPTH);
    if depth > MAX_DEPTH {
        return Err(serde::de::Error::custom(too_deep_message()));
    }
    if depth <= SHALLOW {
        return serde_json::from_slice(bytes);
    }
    let parse = move || {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        de.disable_recursion_limit();
        let v = T::deserialize(&mut de)?;
        de.end()?;
        Ok(v)
    };
    std::thread::scope(|s| {
        match std::thread::Builder::new()
            .name("deep-json".into())
            .stack_size(deep_stack(depth))
            .spawn_scoped(s, parse)
        {
            Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            // No thread to be had: refuse the line as too deep rather than risk the stack.
            Err(_) => Err(serde::de::Error::custom(too_deep_message())),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_skips_strings_and_escapes() {
        assert_eq!(nesting(b"1", 9), 0);
        assert_eq!(nesting(br#"[{"a":[1]},[]]"#, 9), 3);
        assert_eq!(nesting(br#"["[[[", "\"[[", {"k\\":"]]]"}]"#, 9), 2);
        assert_eq!(nesting(&[b'['; 50], 9), 10);
        assert_eq!(nesting(br#""unterminated [[["#, 9), 0);
    }

    fn deep(levels: usize) -> String {
        format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn from_slice_reads_up_to_the_limit() {
        assert!(from_slice::<serde_json::Value>(deep(MAX_DEPTH).as_bytes()).is_ok());
        let e = from_slice::<serde_json::Value>(deep(MAX_DEPTH + 1).as_bytes()).unwrap_err();
        assert!(is_too_deep(&e.to_string()), "{e}");
        assert!(from_slice::<serde_json::Value>(b"[1] x").is_err());
    }
}
