//! Writing JSON into a reused byte buffer: string escaping, scalars, tape values, and the raw
//! copy of string literals straight from the input line. A buffer may also note where the long
//! values it writes lie ([`Out::with_marks`]), so that a reader of its JSON steps over them
//! without reading them again.

use simd_json::StaticNode;
use simd_json::prelude::BaseGenerator;
use simd_json::prelude::*;

use super::{Hole, Parsed, Val, str_of};

/// A growable output buffer with JSON writing helpers. Nothing here allocates per value once the
/// buffer has grown to the working size.
#[derive(Default)]
pub struct Out {
    /// The bytes written so far.
    pub buf: Vec<u8>,
    src: Source,
    splices: Vec<Splice>,
    /// Where the long values written lie in `buf` (see [`Out::with_marks`]); `None`: not noted.
    marks: Option<Vec<Mark>>,
}

/// A whole JSON value (a string literal, or a container copied in one piece) that an [`Out`]
/// wrote at `buf[start..end]`. Marks never overlap and come in buffer order.
pub type Mark = (usize, usize);

/// Values at least this long (quotes or brackets included) are marked.
pub const MARK_MIN: usize = 64;

/// Where the strings being written were parsed from (see [`Out::set_source`]).
#[derive(Default)]
struct Source {
    /// Address range of the parser's copy of the line (empty when unset).
    base: usize,
    len: usize,
    /// That copy holds no backslash, so none of its strings needs escaping.
    plain: bool,
    /// Its hollowed literals.
    holes: Vec<Hole>,
}

/// A place in [`Out::buf`] where the content of a hollowed literal goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Splice {
    /// Offset in the buffer.
    pub at: usize,
    /// The literal's content in the input line.
    pub raw: std::ops::Range<usize>,
    /// `None`: the content goes between quotes already written. `Some(media_type)`: a base64
    /// candidate; the whole value goes here, a blob summary if the content decodes, else the
    /// quoted content.
    pub blob: Option<Option<String>>,
}

/// Strings at least this long are escaped with simd-json's SIMD string writer (see
/// [`Out::str_content`]).
const SIMD_MIN: usize = 32;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// For each byte: 0 = copy as is, otherwise the escape letter (`u` = `\u00XX`).
pub(super) static ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[b'\n' as usize] = b'n';
    t[b'\r' as usize] = b'r';
    t[b'\t' as usize] = b't';
    t[0x08] = b'b';
    t[0x0c] = b'f';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

/// Index of the first byte at or after `from` that needs escaping in a JSON string.
#[inline]
fn next_escape(b: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut i = from;
    while i + 8 <= b.len() {
        let x = u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        // Bytes < 0x20, == '"' (0x22), == '\\' (0x5c); the lowest flagged byte is exact.
        let ctrl = x.wrapping_sub(ONES * 0x20) & !x;
        let q = x ^ (ONES * 0x22);
        let bs = x ^ (ONES * 0x5c);
        let quote = q.wrapping_sub(ONES) & !q;
        let back = bs.wrapping_sub(ONES) & !bs;
        let m = (ctrl | quote | back) & HIGH;
        if m != 0 {
            return Some(i + (m.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b[i..]
        .iter()
        .position(|&c| ESCAPE[c as usize] != 0)
        .map(|p| i + p)
}

/// Append `b` escaped for the inside of a JSON string literal (no quotes), as [`Out::str`]
/// writes it: only ASCII `"`, `\\` and control characters are rewritten, so any bytes may be
/// given. Runs that need no escape are found 8 bytes at a time (SWAR) and copied whole.
pub fn escape_content(out: &mut Vec<u8>, b: &[u8]) {
    let mut start = 0;
    let mut i = 0;
    while let Some(j) = next_escape(b, i) {
        let c = b[j];
        out.extend_from_slice(&b[start..j]);
        let e = ESCAPE[c as usize];
        if e == b'u' {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(c >> 4) as usize],
                HEX[(c & 0xf) as usize],
            ]);
        } else {
            out.extend_from_slice(&[b'\\', e]);
        }
        start = j + 1;
        i = j + 1;
    }
    out.extend_from_slice(&b[start..]);
}

impl Out {
    /// Raw bytes.
    #[inline]
    pub fn raw(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// An output buffer that writes into `buf` (kept, not cleared).
    pub fn from_buf(buf: Vec<u8>) -> Self {
        Out {
            buf,
            ..Out::default()
        }
    }

    /// An output buffer that notes where each long value it writes lies (strings of at least
    /// [`MARK_MIN`] bytes, hollowed literals, values copied whole with [`Out::raw_value`]): see
    /// [`Out::marks`]. Whoever removes or moves bytes of such a buffer moves its marks too
    /// ([`Out::clear`], [`Out::shift_marks`]).
    pub fn with_marks() -> Self {
        Out {
            marks: Some(Vec::new()),
            ..Out::default()
        }
    }

    /// The long values written since the last [`Out::clear`], in buffer order (empty unless
    /// made [`Out::with_marks`]).
    pub fn marks(&self) -> &[Mark] {
        self.marks.as_deref().unwrap_or_default()
    }

    /// Empty the buffer and forget its marks.
    pub fn clear(&mut self) {
        self.buf.clear();
        if let Some(m) = &mut self.marks {
            m.clear();
        }
    }

    /// Bytes were inserted into the buffer: each mark ending after `from` moves as `shift` moves
    /// its offsets.
    pub fn shift_marks(&mut self, from: usize, shift: impl Fn(usize) -> usize) {
        for m in self.marks.iter_mut().flatten().filter(|m| m.1 > from) {
            *m = (shift(m.0), shift(m.1));
        }
    }

    /// Note the value written from `start` to the end of the buffer, when marks are kept and
    /// it is long.
    #[inline]
    fn mark(&mut self, start: usize) {
        if let Some(m) = &mut self.marks
            && self.buf.len() - start >= MARK_MIN
        {
            m.push((start, self.buf.len()));
        }
    }

    /// Raw bytes that are one whole JSON value (a copy of one from the input line): marked when
    /// long (see [`Out::with_marks`]).
    #[inline]
    pub fn raw_value(&mut self, b: &[u8]) {
        let start = self.buf.len();
        self.buf.extend_from_slice(b);
        self.mark(start);
    }

    /// Declare that, until [`Out::clear_source`], the strings written may come from `parsed`.
    /// When its copy of the line holds no backslash, none of them needs escaping (simd-json
    /// rejects raw control characters, and a quote inside a string needs a backslash), so
    /// [`Out::str`] copies them as they are; a hollowed literal's stub becomes a [`Splice`].
    /// Must be cleared before the parser's copy changes.
    pub fn set_source(&mut self, parsed: &Parsed<'_>) {
        let src = &mut self.src;
        (src.base, src.len, src.plain) = (parsed.base, parsed.len, parsed.plain);
        src.holes.clear();
        src.holes.extend_from_slice(parsed.holes);
    }

    /// Forget the source set by [`Out::set_source`].
    pub fn clear_source(&mut self) {
        (self.src.base, self.src.len, self.src.plain) = (0, 0, false);
        self.src.holes.clear();
    }

    /// The hollowed literal `s` is the stub of, if any.
    pub fn hole_of(&self, s: &str) -> Option<&Hole> {
        if self.src.holes.is_empty() {
            return None;
        }
        let at = (s.as_ptr() as usize).checked_sub(self.src.base)?;
        self.src
            .holes
            .iter()
            .find(|h| h.at == at && h.stub_text == s.len())
    }

    /// Leave room for the base64 candidate `hole` (see [`Splice::blob`]).
    pub fn blob_splice(&mut self, hole: &Hole, media_type: Option<&str>) {
        self.splices.push(Splice {
            at: self.buf.len(),
            raw: hole.raw.clone(),
            blob: Some(media_type.map(str::to_owned)),
        });
    }

    /// The splices recorded since the last call, in buffer order.
    pub fn take_splices(&mut self) -> Vec<Splice> {
        std::mem::take(&mut self.splices)
    }

    /// Whether splices are waiting (see [`Out::take_splices`]).
    pub fn has_splices(&self) -> bool {
        !self.splices.is_empty()
    }

    /// A JSON string literal, escaped as `serde_json` and JavaScript's `JSON.stringify` do:
    /// `"`, `\\` and control characters only (`\\n`-style short forms where they exist, else
    /// `\\u00xx`).
    #[inline]
    pub fn str(&mut self, s: &str) {
        let start = self.buf.len();
        if let Some(h) = self.hole_of(s) {
            let raw = h.raw.clone();
            self.buf.extend_from_slice(b"\"\"");
            self.splices.push(Splice {
                at: start + 1,
                raw,
                blob: None,
            });
            // Its content comes between the quotes: the mark grows with it.
            if let Some(m) = &mut self.marks {
                m.push((start, start + 2));
            }
            return;
        }
        let p = s.as_ptr() as usize;
        let src = &self.src;
        let plain = src.plain && p >= src.base && p + s.len() <= src.base + src.len;
        self.buf.reserve(s.len() + 2);
        self.buf.push(b'"');
        if plain {
            // A string of the current line, which has no escapes: nothing to escape.
            self.buf.extend_from_slice(s.as_bytes());
        } else {
            self.str_content(s);
        }
        self.buf.push(b'"');
        self.mark(start);
    }

    /// The inside of a JSON string literal (no quotes), escaped as [`Out::str`] does. Long
    /// strings go through simd-json's SIMD string writer; short ones (keys, ids, names) through
    /// a SWAR loop that finds runs needing no escape 8 bytes at a time and has no setup cost.
    pub fn str_content(&mut self, s: &str) {
        if s.len() >= SIMD_MIN {
            struct Generator<'a>(&'a mut Vec<u8>);
            impl BaseGenerator for Generator<'_> {
                type T = Vec<u8>;
                fn get_writer(&mut self) -> &mut Vec<u8> {
                    self.0
                }
                fn write_min(&mut self, slice: &[u8], _: u8) -> std::io::Result<()> {
                    self.0.extend_from_slice(slice);
                    Ok(())
                }
            }
            // Writing to a Vec cannot fail.
            let _ = Generator(&mut self.buf).write_string_content(s);
            return;
        }
        escape_content(&mut self.buf, s.as_bytes());
    }

    /// A string or `null`.
    pub fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => self.str(s),
            None => self.raw(b"null"),
        }
    }

    /// An unsigned integer.
    pub fn u64(&mut self, n: u64) {
        let mut b = itoa::Buffer::new();
        self.raw(b.format(n).as_bytes());
    }

    /// A signed integer.
    pub fn i64(&mut self, n: i64) {
        let mut b = itoa::Buffer::new();
        self.raw(b.format(n).as_bytes());
    }

    /// A boolean.
    pub fn bool(&mut self, b: bool) {
        self.raw(if b { b"true" } else { b"false" });
    }

    /// `,"key":`, the key escaped as [`Out::str`] does (the names the code writes need none:
    /// they are copied at once).
    #[inline]
    pub fn key(&mut self, k: &str) {
        if k.len() <= 32 && k.bytes().all(|b| ESCAPE[usize::from(b)] == 0) {
            self.buf.reserve(k.len() + 4);
            self.buf.extend_from_slice(b",\"");
            self.buf.extend_from_slice(k.as_bytes());
            self.buf.extend_from_slice(b"\":");
            return;
        }
        self.buf.push(b',');
        self.str(k);
        self.buf.push(b':');
    }

    /// A static node.
    pub fn static_node(&mut self, n: &StaticNode) {
        match *n {
            StaticNode::Null => self.raw(b"null"),
            StaticNode::Bool(b) => self.bool(b),
            StaticNode::I64(i) => {
                let mut b = itoa::Buffer::new();
                self.raw(b.format(i).as_bytes());
            }
            StaticNode::U64(u) => self.u64(u),
            // Negative zero is written `0`, as JavaScript's JSON.stringify does: serde_json reads
            // `-0` as -0.0 and simd-json as the integer 0, and both must write the same bytes
            // (found by the parse_line fuzz target).
            StaticNode::F64(f) if f == 0.0 && f.is_sign_negative() => self.raw(b"0"),
            StaticNode::F64(f) => {
                if f.is_finite() {
                    let mut b = ryu::Buffer::new();
                    self.raw(b.format_finite(f).as_bytes());
                } else {
                    self.raw(b"null");
                }
            }
            #[allow(unreachable_patterns)]
            _ => self.raw(b"null"),
        }
    }

    /// Any tape value, written compactly in its original key order.
    pub fn value(&mut self, v: Val<'_, '_>) {
        self.walk(v, None, &mut |_, _, _| false);
    }

    /// Like [`Out::value`], but `hook(out, key, value)` may write an object member's value itself
    /// (returning true) instead of the default rendering.
    pub fn value_with(
        &mut self,
        v: Val<'_, '_>,
        hook: &mut dyn FnMut(&mut Out, &str, Val<'_, '_>) -> bool,
    ) {
        self.walk(v, None, &mut |o, key, x| key.is_some_and(|k| hook(o, k, x)));
    }

    /// Write `v` compactly in its original key order, but first offer each value to
    /// `hook(out, key, value)` (`key`: the member's, `None` for `v` itself and array elements),
    /// which may write it itself (returning true).
    fn walk<H>(&mut self, v: Val<'_, '_>, key: Option<&str>, hook: &mut H)
    where
        H: FnMut(&mut Out, Option<&str>, Val<'_, '_>) -> bool,
    {
        if hook(self, key, v) {
            return;
        }
        if let Some(o) = v.as_object() {
            self.buf.push(b'{');
            for (i, (k, x)) in o.iter().enumerate() {
                if i > 0 {
                    self.buf.push(b',');
                }
                self.str(k);
                self.buf.push(b':');
                self.walk(x, Some(k), hook);
            }
            self.buf.push(b'}');
        } else if let Some(a) = v.as_array() {
            self.buf.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    self.buf.push(b',');
                }
                self.walk(x, None, hook);
            }
            self.buf.push(b']');
        } else if let Some(s) = str_of(v) {
            self.str(s);
        } else {
            self.static_node(&static_of(v));
        }
    }

    /// The members of object `v` for which `keep(key, value)` holds, as an object in source
    /// order (`{}` when `v` is not an object).
    pub fn members_where(&mut self, v: Val<'_, '_>, keep: impl Fn(&str, Val<'_, '_>) -> bool) {
        self.buf.push(b'{');
        let mut first = true;
        if let Some(obj) = v.as_object() {
            for (k, x) in obj.iter().filter(|(k, x)| keep(k, *x)) {
                if !first {
                    self.buf.push(b',');
                }
                first = false;
                self.str(k);
                self.buf.push(b':');
                self.value(x);
            }
        }
        self.buf.push(b'}');
    }

    /// Like [`Out::value`], for a buffer kept beyond the current line: a string that is a
    /// hollowed literal of `holes`' source is written whole, from `line` (the input line).
    pub fn value_detached(&mut self, v: Val<'_, '_>, holes: &Out, line: &[u8]) {
        self.walk(v, None, &mut |o, _, x| {
            let hole = str_of(x).and_then(|s| holes.hole_of(s));
            let Some(raw) = hole.and_then(|h| line.get(h.raw.clone())) else {
                return false;
            };
            o.buf.push(b'"');
            o.buf.extend_from_slice(raw);
            o.buf.push(b'"');
            true
        });
    }

    /// An optional value (`null` when absent).
    pub fn opt_value(&mut self, v: Option<Val<'_, '_>>) {
        match v {
            Some(v) => self.value(v),
            None => self.raw(b"null"),
        }
    }
}

/// The scalar content of a non-container value.
pub fn static_of(v: Val<'_, '_>) -> StaticNode {
    if v.is_null() {
        StaticNode::Null
    } else if let Some(b) = v.as_bool() {
        StaticNode::Bool(b)
    } else if v.is_i64() {
        StaticNode::I64(v.as_i64().unwrap_or(0))
    } else if v.is_u64() {
        StaticNode::U64(v.as_u64().unwrap_or(0))
    } else {
        StaticNode::F64(v.as_f64().unwrap_or(0.0))
    }
}
