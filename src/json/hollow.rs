//! Hollowing huge lines: long string literals are left out of the parser's copy of a line, so a
//! line of tens of megabytes is held about twice (the input line and the output events) instead
//! of four times (plus the parser's copy and simd-json's unescaped strings).
//!
//! A literal qualifies (a *hole*) when its content is at least the configured length, is valid
//! UTF-8 without raw control characters, and spells every escape exactly the way
//! [`super::Out::str`] writes it. Then the literal's content *is* its output, byte for byte: the
//! parser's copy keeps only a short prefix of it (the *stub*, so code that looks at the start of
//! the string or at its emptiness sees the truth), and the writer splices the real content back
//! from the input line when the line's events are finished (the normalizer's `holes` module).
//!
//! Whether the line is JSON does not change: the hollowed copy is valid exactly when the line is,
//! since only valid string content is replaced by other valid string content.

use std::ops::Range;

use super::raw::is_canonical_u;

/// One long string literal left out of the parser's copy of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hole {
    /// Offset of the stub (the literal's first bytes) in the parser's copy.
    pub at: usize,
    /// Length of the stub in the parser's copy (escapes as written).
    pub stub: usize,
    /// Length of the stub's decoded text: the length of the tape string that stands for the
    /// literal.
    pub stub_text: usize,
    /// The literal's content (between the quotes) in the input line.
    pub raw: Range<usize>,
}

/// Longest stub kept in the parser's copy. Strings up to this length are whole in the tape even
/// when hollowed, so ids and names the normalizer keeps are never stubs.
const STUB_MAX: usize = 256;

/// Members whose values the normalizer reads, compares, keeps or derives names from (rather than
/// only copying them to the output): their literals are never hollowed, so a stub never stands
/// in for their whole value. Among the members it reads, only `text`, `thinking`, `content` and
/// `result` are copied as they are, and members it does not read (tool inputs, `stdout`, …) are
/// copied too.
const READ_KEYS: &[&[u8]] = &[
    b"type",
    b"subtype",
    b"id",
    b"name",
    b"session_id",
    b"sessionId",
    b"uuid",
    b"tool_use_id",
    b"parent_tool_use_id",
    b"message_id",
    b"model",
    b"claude_code_version",
    b"media_type",
    b"mediaType",
    b"mime_type",
    b"new_conversation_id",
    b"stop_reason",
    b"error",
    b"partial_json",
    b"cwd",
    b"permissionMode",
    b"apiKeySource",
];

/// Members whose whole value (object or array) the normalizer keeps for later rather than
/// writing it at once: nothing inside them is hollowed.
const KEPT_TREES: &[&[u8]] = &[b"usage"];

/// Copy `line` into `copy` with the content of every qualifying literal of at least `min_len`
/// bytes cut down to its stub, recording each in `holes`. Only member values are hollowed, not
/// those of [`READ_KEYS`] nor anything inside [`KEPT_TREES`]. Returns false (and leaves `copy`
/// empty) when there is none.
pub fn hollow(line: &[u8], min_len: usize, copy: &mut Vec<u8>, holes: &mut Vec<Hole>) -> bool {
    copy.clear();
    holes.clear();
    let mut i = 0;
    let mut copied = 0;
    // The lexer state between literals: the key whose value comes next (set by a key literal,
    // valid once `:` follows), and per open container whether it lies inside a kept tree.
    let mut key: Option<Range<usize>> = None;
    let mut after_colon = false;
    let mut kept = false;
    let mut stack: Vec<bool> = Vec::new();
    while let Some(q) = memchr::memchr(b'"', &line[i..]) {
        for &b in &line[i..i + q] {
            match b {
                b':' => after_colon = true,
                b'{' | b'[' => {
                    stack.push(kept);
                    let k = key.take().filter(|_| after_colon);
                    kept |= k.is_some_and(|k| KEPT_TREES.contains(&&line[k]));
                    after_colon = false;
                }
                b'}' | b']' => {
                    kept = stack.pop().unwrap_or(false);
                    key = None;
                    after_colon = false;
                }
                b',' => {
                    key = None;
                    after_colon = false;
                }
                _ => {}
            }
        }
        let start = i + q + 1;
        let Some((end, canonical)) = scan_literal(line, start) else {
            break;
        };
        let content = &line[start..end];
        let value_of = if after_colon { key.take() } else { None };
        after_colon = false;
        if next_non_space(&line[end + 1..]) == Some(b':') {
            key = Some(start..end);
        }
        let hollowable = !kept && value_of.is_some_and(|k| !READ_KEYS.contains(&&line[k]));
        if hollowable
            && canonical
            && content.len() >= min_len
            && !content.iter().any(|&b| b < 0x20)
            && std::str::from_utf8(content).is_ok()
        {
            let (stub, stub_text) = stub_len(content);
            copy.extend_from_slice(&line[copied..start + stub]);
            holes.push(Hole {
                at: copy.len() - stub,
                stub,
                stub_text,
                raw: start..end,
            });
            copied = end;
        }
        i = end + 1;
    }
    if holes.is_empty() {
        copy.clear();
        return false;
    }
    copy.extend_from_slice(&line[copied..]);
    true
}

fn next_non_space(b: &[u8]) -> Option<u8> {
    b.iter().copied().find(|c| !c.is_ascii_whitespace())
}

/// The closing quote of the literal whose content starts at `start`, and whether every escape in
/// it is canonical. `None` when the line ends first.
fn scan_literal(line: &[u8], start: usize) -> Option<(usize, bool)> {
    let mut i = start;
    let mut canonical = true;
    loop {
        let at = i + memchr::memchr2(b'"', b'\\', &line[i..])?;
        if line[at] == b'"' {
            return Some((at, canonical));
        }
        let e = *line.get(at + 1)?;
        match e {
            b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => {}
            b'u' => canonical &= line.get(at + 2..at + 6).is_some_and(is_canonical_u),
            _ => canonical = false,
        }
        // The escaped byte is skipped; the hex digits of `\u` escapes are never `"` or `\`.
        i = at + 2;
    }
}

/// Length of the stub of `content` (valid UTF-8, canonical escapes): at most [`STUB_MAX`] bytes,
/// never splitting an escape or a character, at least one character when `content` is not empty;
/// and the length of its decoded text (every canonical escape decodes to one byte).
fn stub_len(content: &[u8]) -> (usize, usize) {
    let (mut j, mut text) = (0, 0);
    while j < content.len() && j < STUB_MAX {
        let (raw, decoded) = match content[j] {
            b'\\' if content.get(j + 1) == Some(&b'u') => (6, 1),
            b'\\' => (2, 1),
            b => (utf8_len(b), utf8_len(b)),
        };
        j += raw;
        text += decoded;
    }
    (j.min(content.len()), text)
}

fn utf8_len(lead: u8) -> usize {
    match lead {
        0xf0.. => 4,
        0xe0.. => 3,
        0xc0.. => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_long_canonical_literals_become_holes() {
        let long = "ab\\n\\\"é".repeat(100);
        let line = format!(
            r#"{{"k":"{long}","short":"x","slash":"{long}\/","u":"{long}\u0001","v":"{long}\u000a","usage":{{"a":[{{"b":"{long}"}}]}},"name":"{long}","after":["{long}",{{"c":"{long}"}}]}}"#
        );
        let mut copy = Vec::new();
        let mut holes = Vec::new();
        assert!(hollow(line.as_bytes(), 400, &mut copy, &mut holes));
        // `\/` and `\u000a` (which has the short form `\n`) are not how we write them; `usage`
        // is kept for later, `name` is read, array elements are not member values.
        assert_eq!(holes.len(), 3, "{holes:?}");
        let text = String::from_utf8(copy.clone()).unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["short"], "x");
        for h in &holes {
            let stub = &copy[h.at..h.at + h.stub];
            assert!(line.as_bytes()[h.raw.clone()].starts_with(stub));
        }
        assert!(!hollow(line.as_bytes(), 10_000, &mut copy, &mut holes));
        assert!(copy.is_empty() && holes.is_empty());
    }

    #[test]
    fn unterminated_and_invalid_literals_are_left_alone() {
        let mut copy = Vec::new();
        let mut holes = Vec::new();
        assert!(!hollow(
            br#"{"a":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"#,
            4,
            &mut copy,
            &mut holes
        ));
        assert!(!hollow(
            b"{\"a\":\"xxxx\txxxxxxxxxxxxxxx\"}",
            4,
            &mut copy,
            &mut holes
        ));
        assert!(!hollow(
            b"{\"a\":\"xxxx\xffxxxxxxxxxxxxxxx\"}",
            4,
            &mut copy,
            &mut holes
        ));
    }
}
