//! Raw spans: a value the normalizer passes through is copied from the input line as it is when
//! those bytes are exactly what [`Out`] would write for it (canonical), instead of being written
//! again from the tape.
//!
//! *Canonical* means: no whitespace between tokens; string literals (keys included) spelled the
//! way [`Out::str`] spells them (only `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t` and lowercase
//! `\u00xx` for the other control characters; everything else, `/` and non-ASCII included, as
//! is); numbers as [`Out::static_node`] prints them (`12`, not `12.0`, `1.2e1`, `-0`). Claude
//! Code writes its lines with `JSON.stringify`, which is canonical in all but rare numbers.
//!
//! Where a value lies in the line comes from simd-json itself: it parses a copy of the line in
//! place, so a string of the tape points into that copy at the offset where its literal's content
//! starts in the line, and stage 1 leaves the offsets of every structural character and of the
//! first byte of every scalar ([`simd_json::Buffers::structural_indexes`]). A container starts
//! right before its first member (or element); from there the check walks those offsets, which
//! also finds where it ends: a canonical value has every offset right after the previous token.
//! Backslashes occur only inside literals, so one pass over the span checks every escape.
//!
//! Lines whose literals were hollowed (see [`super::Hole`]) and lines parsed by serde_json have
//! no spans: their values are written from the tape as before.

use super::out::{ESCAPE, Out};
use super::{Parsed, Val, str_of};
use crate::json::Engine;
use memchr::memmem::Finder;
use std::cell::OnceCell;
use std::sync::LazyLock;

/// Where the values of one parsed line lie in its input bytes. Empty (nothing is copied) unless
/// simd-json parsed the whole line unchanged.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spans<'a> {
    line: &'a [u8],
    structurals: &'a [u32],
    /// Address of the parser's copy of the line, where the tape's strings point.
    base: usize,
    /// The line holds no backslash: no escape to check.
    plain: bool,
    /// Whether every escape of the whole line is canonical, once asked: one pass over the line
    /// serves all its values (a tool result's text comes twice, in `content` and `structured`).
    escapes: Option<&'a OnceCell<bool>>,
}

/// Strings shorter than this are written, not looked up: finding them costs more.
const LONG: usize = 64;

/// Why a value is not copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Miss {
    /// It is not canonical (or its place in the line is unknown): write it from the tape.
    Form,
    /// It is canonical but holds a base64 candidate (a long `data`/`base64` member): the caller
    /// writes its members one by one.
    Blob,
}

impl<'a> Spans<'a> {
    /// The spans of `line` as `parsed` parsed it (empty when the tape does not point into an
    /// unchanged copy of `line`); `memo` (new for each line) keeps what is learnt about the line.
    pub fn new(parsed: &Parsed<'a>, line: &'a [u8], memo: &'a OnceCell<bool>) -> Self {
        if parsed.engine != Engine::Simd || !parsed.holes.is_empty() || parsed.len != line.len() {
            return Spans::default();
        }
        Spans {
            line,
            structurals: parsed.structurals,
            base: parsed.base,
            plain: parsed.plain,
            escapes: Some(memo),
        }
    }

    /// Whether nothing can be copied.
    pub fn is_empty(&self) -> bool {
        self.line.is_empty()
    }

    /// The bytes of `v` in the line, when they are what [`Out::value`] writes for it.
    pub fn canonical(&self, v: Val<'_, '_>) -> Option<&'a [u8]> {
        self.span(v, None).ok()
    }

    /// Like [`Spans::canonical`], for a value whose string members under `data` or `base64` of
    /// `min_blob` bytes or more are elided (see `crate::normalize::write_elided`).
    pub fn canonical_without_blobs(
        &self,
        v: Val<'_, '_>,
        min_blob: usize,
    ) -> Result<&'a [u8], Miss> {
        self.span(v, Some(min_blob))
    }

    fn span(&self, v: Val<'_, '_>, blobs: Option<usize>) -> Result<&'a [u8], Miss> {
        // A short string is written faster than found.
        if self.is_empty() || str_of(v).is_some_and(|s| s.len() < LONG) {
            return Err(Miss::Form);
        }
        let start = self.start(v).ok_or(Miss::Form)?;
        let i = self
            .structurals
            .binary_search(&u32::try_from(start).map_err(|_| Miss::Form)?)
            .map_err(|_| Miss::Form)?;
        let end = self.walk(i, blobs)?;
        let span = &self.line[start..end];
        if !self.plain && !self.line_escapes_canonical() && !escapes_canonical(span) {
            return Err(Miss::Form);
        }
        Ok(span)
    }

    fn line_escapes_canonical(&self) -> bool {
        self.escapes
            .is_some_and(|m| *m.get_or_init(|| escapes_canonical(self.line)))
    }

    /// The literal of `s`, quotes included, when it is what [`Out::str`] writes for it. `s` must
    /// be a whole string of this line's tape (as [`super::get_str`] gives it), never part of one:
    /// the literal found is the one starting where `s` starts. Only worth asking for long
    /// strings of lines with backslashes.
    pub fn string(&self, s: &str) -> Option<&'a [u8]> {
        if self.is_empty() || self.plain {
            return None;
        }
        let start = self.literal(s)?;
        let i = self
            .structurals
            .binary_search(&u32::try_from(start).ok()?)
            .ok()?;
        let end = self.walk(i, None).ok()?;
        let span = &self.line[start..end];
        (self.line_escapes_canonical() || escapes_canonical(span)).then_some(span)
    }

    /// Offset in the line of the literal whose content the tape string `s` is.
    fn literal(&self, s: &str) -> Option<usize> {
        let at = (s.as_ptr() as usize)
            .checked_sub(self.base)?
            .checked_sub(1)?;
        (self.line.get(at) == Some(&b'"')).then_some(at)
    }

    /// Offset of the first byte of `v` (a string or a non-empty container whose first leaf is a
    /// string or container) when nothing stands between its opening bracket and its first member.
    fn start(&self, v: Val<'_, '_>) -> Option<usize> {
        let (first, open) = if let Some(s) = str_of(v) {
            return self.literal(s);
        } else if let Some(o) = v.as_object() {
            let (k, _) = o.iter().next()?;
            (self.literal(k)?, b'{')
        } else if let Some(a) = v.as_array() {
            (self.start(a.iter().next()?)?, b'[')
        } else {
            return None;
        };
        let at = first.checked_sub(1)?;
        (self.line[at] == open).then_some(at)
    }

    /// End of the value whose first token is structural `i`, when every token follows the one
    /// before without a gap and every scalar is canonical.
    fn walk(&self, mut i: usize, blobs: Option<usize>) -> Result<usize, Miss> {
        let (line, s) = (self.line, self.structurals);
        let at = |i: usize| s.get(i).map(|&p| p as usize).ok_or(Miss::Form);
        let mut cursor = at(i)?;
        let mut depth = 0usize;
        // The last key was `data` or `base64` (with `blobs`).
        let mut blob_key = false;
        loop {
            let p = at(i)?;
            if p != cursor {
                return Err(Miss::Form);
            }
            let c = *line.get(p).ok_or(Miss::Form)?;
            match c {
                b'{' | b'[' => {
                    depth += 1;
                    cursor = p + 1;
                    blob_key = false;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1).ok_or(Miss::Form)?;
                    cursor = p + 1;
                    if depth == 0 {
                        return Ok(cursor);
                    }
                }
                b':' | b',' => cursor = p + 1,
                b'"' => {
                    let q = at(i + 1)?;
                    // The closing quote right before the next token: no whitespace between.
                    if q < p + 2 || line[q - 1] != b'"' {
                        return Err(Miss::Form);
                    }
                    if let Some(min) = blobs {
                        let content = &line[p + 1..q - 1];
                        if line.get(q) == Some(&b':') {
                            blob_key = content == b"data" || content == b"base64";
                        } else if std::mem::take(&mut blob_key) && content.len() >= min {
                            return Err(Miss::Blob);
                        }
                    }
                    cursor = q;
                }
                _ => {
                    let q = at(i + 1)?;
                    if !scalar_canonical(&line[p..q]) {
                        return Err(Miss::Form);
                    }
                    cursor = q;
                    blob_key = false;
                }
            }
            if depth == 0 {
                // A lone string or scalar.
                return Ok(cursor);
            }
            i += 1;
        }
    }
}

/// Whether every escape in `b` (the bytes of whole JSON values) is one [`Out::str`] writes.
///
/// Of JSON's escapes only `\/` and `\u` can be non-canonical, so only those two-byte sequences
/// are looked at (each found in one SIMD pass); one that follows an escaped backslash (`\\u`)
/// is text, not an escape.
fn escapes_canonical(b: &[u8]) -> bool {
    static U: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\\u"));
    static SLASH: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\\/"));
    U.find_iter(b)
        .all(|at| !starts_escape(b, at) || b.get(at + 2..at + 6).is_some_and(is_canonical_u))
        && SLASH.find_iter(b).all(|at| !starts_escape(b, at))
}

/// Whether the backslash at `at` starts an escape: an even number of backslashes comes before it.
fn starts_escape(b: &[u8], at: usize) -> bool {
    b[..at].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 0
}

/// `00xx` (lowercase hex) naming a control character that has no short escape: what
/// [`Out::str`] writes for it.
pub(super) fn is_canonical_u(h: &[u8]) -> bool {
    let hex = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    match (h[0], h[1], hex(h[2]), hex(h[3])) {
        (b'0', b'0', Some(hi @ 0..=1), Some(lo)) => ESCAPE[usize::from(hi << 4 | lo)] == b'u',
        _ => false,
    }
}

/// Whether the scalar token `t` (from a valid JSON line, up to the next token) is what the
/// writer prints for the value simd-json reads from it.
fn scalar_canonical(t: &[u8]) -> bool {
    match t {
        b"true" | b"false" | b"null" => return true,
        [] => return false,
        _ => {}
    }
    let digits = t.strip_prefix(b"-").unwrap_or(t);
    let integer = digits.iter().all(u8::is_ascii_digit);
    // Short integers without a leading zero: simd-json reads an i64, written back the same.
    if integer && digits.len() <= 18 && (digits[0] != b'0' || t == b"0") {
        return !digits.is_empty();
    }
    // The rest: print what the value reads as, the writer's way, and compare.
    let Ok(text) = std::str::from_utf8(t) else {
        return false;
    };
    let node = if integer {
        match (text.parse::<i64>(), text.parse::<u64>()) {
            (Ok(i), _) => simd_json::StaticNode::I64(i),
            (_, Ok(u)) => simd_json::StaticNode::U64(u),
            _ => return false,
        }
    } else {
        match text.parse::<f64>() {
            Ok(f) => simd_json::StaticNode::F64(f),
            Err(_) => return false,
        }
    };
    let mut o = Out::default();
    o.static_node(&node);
    o.buf == t
}

impl Out {
    /// [`Out::value`], copied from the line when `spans` has it canonical.
    pub fn value_in(&mut self, v: Val<'_, '_>, spans: &Spans<'_>) {
        match spans.canonical(v) {
            Some(b) => self.raw_value(b),
            None => self.value(v),
        }
    }

    /// [`Out::opt_str`], copied from the line when `spans` has a long `s` canonical (`s` a whole
    /// string of the line, see [`Spans::string`]).
    pub fn opt_str_in(&mut self, s: Option<&str>, spans: &Spans<'_>) {
        match s.filter(|s| s.len() >= LONG).and_then(|s| spans.string(s)) {
            Some(b) => self.raw_value(b),
            None => self.opt_str(s),
        }
    }

    /// [`Out::opt_value`], copied from the line when `spans` has it canonical.
    pub fn opt_value_in(&mut self, v: Option<Val<'_, '_>>, spans: &Spans<'_>) {
        match v {
            Some(v) => self.value_in(v, spans),
            None => self.raw(b"null"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Parser;

    /// What `value_in` writes for `line`'s member `k`, and whether it was a copy.
    fn write(line: &str, k: &str) -> (String, bool) {
        let mut p = Parser::default();
        let parsed = p.parse(line.as_bytes()).unwrap();
        let memo = OnceCell::new();
        let spans = Spans::new(&parsed, line.as_bytes(), &memo);
        let v = crate::json::get(parsed.tape.as_value(), k).unwrap();
        let copied = spans.canonical(v).is_some();
        let mut a = Out::default();
        a.value_in(v, &spans);
        let mut b = Out::default();
        b.value(v);
        assert_eq!(a.buf, b.buf, "{line}");
        (String::from_utf8(a.buf).unwrap(), copied)
    }

    #[test]
    fn canonical_values_are_copied() {
        for (line, want) in [
            (
                r#"{"a":{"b":[1,-2,"x\n\"\\\u001f",true,null,{}],"c":1.5,"é":"/"}}"#,
                true,
            ),
            (r#"{"a":[[{"k":"v"}],[]],"z":0}"#, true),
            (r#"{"a":"plain text"}"#, false),
            (
                r#"{"a":"a long plain text, longer than the shortest string worth copying"}"#,
                true,
            ),
            (r#"{"a":[]}"#, false),
            (r#"{"a":[1,"x"]}"#, false),
            (r#"{"a": {"b":1}}"#, true),
            (r#"{"a":{ "b":1}}"#, false),
            (r#"{"a":{"b" :1}}"#, false),
            (r#"{"a":{"b":1 }}"#, false),
            (r#"{"a":{"b":"x" }}"#, false),
            (r#"{"a":{"b":"\/"}}"#, false),
            (r#"{"a":{"b":"\u00e9"}}"#, false),
            (r#"{"a":{"b":"\u001F"}}"#, false),
            (r#"{"a":{"b":"\u000a"}}"#, false),
            (r#"{"a":{"b":1.0}}"#, true),
            (r#"{"a":{"b":1e2}}"#, false),
            (r#"{"a":{"b":-0}}"#, false),
            (r#"{"a":{"b":-0.0}}"#, false),
            (r#"{"a":{"b":0.1}}"#, true),
            (r#"{"a":{"b":18446744073709551615}}"#, true),
            (r#"{"a":{"b":100000000000000000000}}"#, false),
            (r#"{"a":{"b\n":1}}"#, true),
            (r#"{"a":{"b":"\\u00e9\\/\\\\\u001f"}}"#, true),
            (r#"{"a":{"b":"\\\u00e9"}}"#, false),
            (r#"{"a":{"b":"\\\/"}}"#, false),
        ] {
            assert_eq!(write(line, "a").1, want, "{line}");
        }
    }

    #[test]
    fn blob_candidates_are_found() {
        let long = "A".repeat(80);
        let line = format!(r#"{{"a":{{"x":[{{"data":"{long}"}}]}},"b":{{"data":"short"}}}}"#);
        let mut p = Parser::default();
        let parsed = p.parse(line.as_bytes()).unwrap();
        let memo = OnceCell::new();
        let spans = Spans::new(&parsed, line.as_bytes(), &memo);
        let v = parsed.tape.as_value();
        let a = crate::json::get(v, "a").unwrap();
        let b = crate::json::get(v, "b").unwrap();
        assert_eq!(spans.canonical_without_blobs(a, 64), Err(Miss::Blob));
        assert!(spans.canonical(a).is_some());
        assert_eq!(
            spans.canonical_without_blobs(b, 64),
            Ok(&br#"{"data":"short"}"#[..])
        );
    }
}
