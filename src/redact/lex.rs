//! A forgiving JSON tokenizer over one line's raw bytes: it finds every string (member names
//! included) with its byte span and JSON path, so a redacted line can be rebuilt by splicing
//! placeholders into the original bytes (everything else stays byte for byte).
//!
//! It does not build values. It accepts what a JSON parser accepts, plus a line cut in the
//! middle (an open string or container at the end); anything else outside strings (a bare
//! word, `=`, a second document) makes it give up, and the line is then redacted as text.
//!
//! Below it are the byte-level facts of JSON escapes and UTF-8 boundaries that the tokenizer, the
//! search and the engine share (`escaped`, `unescape`, `char_floor`, `widen`).

use std::sync::LazyLock;

use memchr::memmem::Finder;

pub(crate) use crate::json::literal::decode;

/// One open container.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Frame {
    obj: bool,
    index: u32,
    /// Raw span (inside the quotes) of the current member name.
    key: Option<(usize, usize, bool)>,
}

/// A string token.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Str {
    /// First byte after the opening quote.
    pub start: usize,
    /// The closing quote (or the end of the line when unterminated).
    pub end: usize,
    /// Contains backslash escapes.
    pub escaped: bool,
    /// A member name.
    pub key: bool,
    /// Has its closing quote.
    pub terminated: bool,
}

/// A token.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Tok {
    /// A string.
    Str(Str),
    /// A number, `true`, `false` or `null`.
    Scalar(usize, usize),
}

/// The line is not JSON.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct NotJson;

/// The tokenizer. `stack` is borrowed scratch space.
pub(crate) struct Lexer<'a, 's> {
    b: &'a [u8],
    i: usize,
    stack: &'s mut Vec<Frame>,
    expect_key: bool,
    done: bool,
}

impl<'a, 's> Lexer<'a, 's> {
    /// A tokenizer over `b`, or `None` when `b` does not start like a JSON object or array.
    pub fn new(b: &'a [u8], stack: &'s mut Vec<Frame>) -> Option<Self> {
        stack.clear();
        let i = b.iter().position(|c| !c.is_ascii_whitespace())?;
        if !matches!(b[i], b'{' | b'[') {
            return None;
        }
        Some(Lexer {
            b,
            i,
            stack,
            expect_key: false,
            done: false,
        })
    }

    /// The next string or scalar; `Ok(None)` at the end of the line.
    pub fn next_tok(&mut self) -> Result<Option<Tok>, NotJson> {
        let b = self.b;
        while self.i < b.len() {
            let c = b[self.i];
            match c {
                b' ' | b'\t' | b'\r' | b'\n' => self.i += 1,
                _ if self.done => return Err(NotJson),
                b'{' | b'[' => {
                    if self.expect_key {
                        return Err(NotJson);
                    }
                    self.stack.push(Frame {
                        obj: c == b'{',
                        index: 0,
                        key: None,
                    });
                    self.expect_key = c == b'{';
                    self.i += 1;
                }
                b'}' | b']' => {
                    let f = self.stack.pop().ok_or(NotJson)?;
                    if f.obj != (c == b'}') {
                        return Err(NotJson);
                    }
                    self.expect_key = false;
                    self.done = self.stack.is_empty();
                    self.i += 1;
                }
                b',' => {
                    let f = self.stack.last_mut().ok_or(NotJson)?;
                    if f.obj {
                        self.expect_key = true;
                        f.key = None;
                    } else {
                        f.index += 1;
                    }
                    self.i += 1;
                }
                b':' => {
                    if !self.stack.last().is_some_and(|f| f.obj) {
                        return Err(NotJson);
                    }
                    self.i += 1;
                }
                b'"' => {
                    let s = self.string();
                    if s.key {
                        let f = self.stack.last_mut().expect("keys are in objects");
                        f.key = Some((s.start, s.end, s.escaped));
                        self.expect_key = false;
                    }
                    return Ok(Some(Tok::Str(s)));
                }
                b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                    if self.expect_key || self.stack.is_empty() {
                        return Err(NotJson);
                    }
                    let st = self.i;
                    let mut j = st;
                    while j < b.len()
                        && matches!(b[j], b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' | b'+' | b'-' | b'.')
                    {
                        j += 1;
                    }
                    let w = &b[st..j];
                    let number = matches!(w[0], b'-' | b'0'..=b'9')
                        && w.iter()
                            .all(|&x| matches!(x, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-'));
                    let literal = matches!(w, b"true" | b"false" | b"null");
                    // A word cut by the end of a truncated line is fine too.
                    let cut = j == b.len()
                        && (b"true".starts_with(w)
                            || b"false".starts_with(w)
                            || b"null".starts_with(w));
                    if !(number || literal || cut) {
                        return Err(NotJson);
                    }
                    self.i = j;
                    return Ok(Some(Tok::Scalar(st, j)));
                }
                _ => return Err(NotJson),
            }
        }
        Ok(None)
    }

    fn string(&mut self) -> Str {
        let b = self.b;
        let key = self.expect_key && self.stack.last().is_some_and(|f| f.obj);
        let start = self.i + 1;
        let mut j = start;
        // The first quote not escaped, i.e. not preceded by an odd run of backslashes.
        let end = loop {
            match memchr::memchr(b'"', &b[j.min(b.len())..]) {
                None => break None,
                Some(k) => {
                    let q = j + k;
                    let run = b[start..q]
                        .iter()
                        .rev()
                        .take_while(|&&c| c == b'\\')
                        .count();
                    if run % 2 == 0 {
                        break Some(q);
                    }
                    j = q + 1;
                }
            }
        };
        let stop = end.unwrap_or(b.len());
        self.i = end.map_or(b.len(), |q| q + 1);
        Str {
            start,
            end: stop,
            escaped: memchr::memchr(b'\\', &b[start..stop]).is_some(),
            key,
            terminated: end.is_some(),
        }
    }

    /// Raw span of the member name the current value belongs to (`None` inside arrays).
    pub fn value_key(&self) -> Option<(usize, usize, bool)> {
        self.stack.last().filter(|f| f.obj).and_then(|f| f.key)
    }

    /// Whether the current value sits at `path` (member names, compared raw).
    pub fn at(&self, path: &[&[u8]]) -> bool {
        self.stack.len() == path.len()
            && self
                .stack
                .iter()
                .zip(path)
                .all(|(f, want)| f.obj && f.key.is_some_and(|(s, e, _)| &self.b[s..e] == *want))
    }

    /// Like [`Self::at`], with array elements in the path: `Some(name)` a member, `None` an
    /// array's element number `index`.
    pub fn at_indexed(&self, path: &[(Option<&[u8]>, u32)]) -> bool {
        self.stack.len() == path.len()
            && self.stack.iter().zip(path).all(|(f, want)| match want {
                (Some(name), _) => f.obj && f.key.is_some_and(|(s, e, _)| &self.b[s..e] == *name),
                (None, i) => !f.obj && f.index == *i,
            })
    }

    /// The element number of the array at `path` (members from the top) that the current
    /// token is inside of, if it is inside one there.
    pub fn index_under(&self, path: &[&[u8]]) -> Option<u32> {
        let f = self.stack.get(path.len())?;
        (!f.obj
            && self.stack[..path.len()]
                .iter()
                .zip(path)
                .all(|(f, want)| f.obj && f.key.is_some_and(|(s, e, _)| &self.b[s..e] == *want)))
        .then_some(f.index)
    }

    /// The JSON Pointer (RFC 6901) of the current token: of the value for a value, of the
    /// enclosing object for a member name.
    pub fn pointer(&self, tok_is_key: bool, out: &mut String) {
        out.clear();
        let n = self.stack.len();
        let mut tmp = Vec::new();
        for (i, f) in self.stack.iter().enumerate() {
            if f.obj {
                if tok_is_key && i + 1 == n {
                    break;
                }
                out.push('/');
                if let Some((s, e, esc)) = f.key {
                    let name = if esc {
                        tmp.clear();
                        decode(&self.b[s..e], &mut tmp, None);
                        &tmp[..]
                    } else {
                        &self.b[s..e]
                    };
                    for ch in String::from_utf8_lossy(name).chars() {
                        match ch {
                            '~' => out.push_str("~0"),
                            '/' => out.push_str("~1"),
                            c => out.push(c),
                        }
                    }
                }
            } else {
                out.push('/');
                out.push_str(itoa::Buffer::new().format(f.index));
            }
        }
    }
}

/// Whether raw JSON string text has an escape that can hide a detector literal (`\u00…`, which
/// can encode an ASCII character, or `\/`).
pub(crate) fn hides_literals(raw: &[u8]) -> bool {
    static U: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\\u00"));
    U.find(raw).is_some() || has_escaped_slash(raw)
}

/// Whether raw JSON text has a `\u` escape (or a backslash before a `u`).
pub(crate) fn has_unicode_escape(raw: &[u8]) -> bool {
    static U: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\\u"));
    U.find(raw).is_some()
}

/// Whether raw JSON text has a `\/` escape.
pub(crate) fn has_escaped_slash(raw: &[u8]) -> bool {
    static SLASH: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\\/"));
    SLASH.find(raw).is_some()
}

/// Append `s` JSON-escaped (without quotes), as the envelope writer does.
pub(crate) fn escape_into(out: &mut Vec<u8>, s: &[u8]) {
    crate::json::escape_content(out, s);
}

/// Whether the byte at `p` is escaped (follows an odd run of backslashes).
pub(super) fn escaped(text: &[u8], p: usize) -> bool {
    text[..p].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 1
}

/// The byte a two-byte JSON escape stands for (`None`: not one).
pub(super) fn unescape(e: u8) -> Option<u8> {
    Some(match e {
        b'n' => b'\n',
        b't' => b'\t',
        b'r' => b'\r',
        b'b' => 8,
        b'f' => 12,
        b'"' | b'\\' | b'/' => e,
        _ => return None,
    })
}

/// Whether `b` continues a UTF-8 character (is not its first byte).
pub(super) fn is_cont(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// Move `p` back to a UTF-8 character start (not before `floor`).
pub(super) fn char_floor(text: &[u8], mut p: usize, floor: usize) -> usize {
    while p > floor && p < text.len() && is_cont(text[p]) {
        p -= 1;
    }
    p
}

/// Widen `[s, e)` to whole UTF-8 characters.
pub(super) fn widen(text: &[u8], mut s: usize, mut e: usize) -> (usize, usize) {
    while s > 0 && s < text.len() && is_cont(text[s]) {
        s -= 1;
    }
    while e < text.len() && is_cont(text[e]) {
        e += 1;
    }
    (s, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(s: &str) -> Result<Vec<(String, String, bool)>, NotJson> {
        let mut st = Vec::new();
        let mut lx = Lexer::new(s.as_bytes(), &mut st).ok_or(NotJson)?;
        let mut v = Vec::new();
        while let Some(t) = lx.next_tok()? {
            if let Tok::Str(x) = t {
                let mut p = String::new();
                lx.pointer(x.key, &mut p);
                v.push((p, s[x.start..x.end].to_owned(), x.key));
            }
        }
        Ok(v)
    }

    #[test]
    fn paths_and_keys() {
        let v = strings(r#"{"a":[1,"x",{"b/~":"y"}],"c":"z\"q"}"#).unwrap();
        assert_eq!(v[1], ("/a/1".into(), "x".into(), false));
        assert_eq!(v[2], ("/a/2".into(), "b/~".into(), true));
        assert_eq!(v[3], ("/a/2/b~1~0".into(), "y".into(), false));
        assert_eq!(v[5], ("/c".into(), "z\\\"q".into(), false));
        assert!(strings(r#"{"a": sk-ant-x}"#).is_err());
        assert!(strings(r#"{"a":1} x"#).is_err());
        assert!(strings(r#"{"a":"cut"#).is_ok());
        assert!(strings("plain text").is_err());
    }

    #[test]
    fn decodes_with_map() {
        let mut out = Vec::new();
        let mut map = Vec::new();
        decode(br"a\u0041\/\ud83d\ude00\n", &mut out, Some(&mut map));
        assert_eq!(out, "aA/\u{1F600}\n".as_bytes());
        assert_eq!(map, vec![0, 1, 7, 9, 9, 9, 9, 21, 23]);
        let mut e = Vec::new();
        escape_into(&mut e, b"a\"\n\x01");
        assert_eq!(e, br#"a\"\n\u0001"#);
    }
}
