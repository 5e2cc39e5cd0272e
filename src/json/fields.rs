//! Structured access to one serialized envelope event for the sinks that need more than its
//! bytes (OTLP, the AI SDK profile): where each top-level member's value lies in the bytes the
//! normalizer wrote, found by one pass over the event that steps over values instead of parsing
//! them (a long value the writer marked is jumped over at once, see [`crate::json::Out::marks`];
//! another string is skipped with `memchr`, a container by its brackets), and the values read
//! from those slices only when asked. Nothing is allocated per event (the index is reused) and
//! nothing is decoded that no sink reads: a tool result's content stays a slice of the event.
//!
//! The values are the ones a full parse would give: a string is read as JSON (escapes decoded)
//! and [`Fields::value`] parses the member's slice with serde_json, which gives the same value as
//! the same member of a parse of the whole event. A key that occurs twice resolves to its last
//! value, as serde_json's map does.

use std::borrow::Cow;

use serde_json::Value;

pub use super::literal::string;
use super::out::{MARK_MIN, Mark};

/// One member: the bytes of its key (inside the quotes, as written) and of its value.
#[derive(Debug, Clone, Copy)]
struct Member {
    /// The key's length and its first 8 bytes: compared first, so a lookup rarely touches the
    /// bytes.
    tag: u64,
    key: (u32, u32),
    val: (u32, u32),
}

/// The reusable index of one event's top-level members (see [`Index::build`]).
#[derive(Debug, Default)]
pub struct Index {
    members: Vec<Member>,
}

impl Index {
    /// Index `bytes`, one JSON object. Returns false (and holds no member) when it is not one.
    pub fn build(&mut self, bytes: &[u8]) -> bool {
        self.build_marked(bytes, 0, &[])
    }

    /// [`Index::build`] for `bytes` that lie at offset `base` of a buffer whose long values
    /// are `marks` (see [`crate::json::Out::marks`]): those are stepped over without reading
    /// them.
    pub fn build_marked(&mut self, bytes: &[u8], base: usize, marks: &[Mark]) -> bool {
        self.members.clear();
        let mut known = Known::new(marks, base);
        let ok = members(bytes, &mut known, |key, val| {
            self.members.push(Member {
                tag: tag_in(bytes, key.0, key.1),
                key: (key.0 as u32, key.1 as u32),
                val: (val.0 as u32, val.1 as u32),
            })
        })
        .is_some();
        if !ok || bytes.len() > u32::MAX as usize {
            self.members.clear();
            return false;
        }
        true
    }

    /// The members indexed last, over the `bytes` they were indexed from.
    pub fn view<'a>(&'a self, bytes: &'a [u8]) -> Fields<'a> {
        Fields {
            bytes,
            members: &self.members,
        }
    }
}

/// The top-level members of one event (an [`Index`] over its bytes).
#[derive(Debug, Clone, Copy, Default)]
pub struct Fields<'a> {
    bytes: &'a [u8],
    members: &'a [Member],
}

impl<'a> Fields<'a> {
    /// The raw JSON of member `key` (its last occurrence), as written in the event.
    pub fn raw(&self, key: &str) -> Option<&'a [u8]> {
        let k = key.as_bytes();
        let t = tag(k, true);
        self.members
            .iter()
            .rev()
            .find(|m| {
                (m.tag == t || m.tag & ESCAPED != 0)
                    && key_is(&self.bytes[m.key.0 as usize..m.key.1 as usize], k)
            })
            .map(|m| &self.bytes[m.val.0 as usize..m.val.1 as usize])
    }

    /// Every member as (its key, raw value), in order: a [`Key`] compares with a name by its
    /// tag first.
    pub fn keyed(&self) -> impl Iterator<Item = (Key<'a>, &'a [u8])> + '_ {
        let b = self.bytes;
        self.members.iter().map(move |m| {
            let key = Key {
                tag: m.tag,
                written: &b[m.key.0 as usize..m.key.1 as usize],
            };
            (key, &b[m.val.0 as usize..m.val.1 as usize])
        })
    }

    /// Member `key` when it is a string.
    pub fn str(&self, key: &str) -> Option<Cow<'a, str>> {
        self.raw(key).and_then(string)
    }

    /// Member `key` when it is a boolean.
    pub fn bool(&self, key: &str) -> Option<bool> {
        match self.raw(key)? {
            b"true" => Some(true),
            b"false" => Some(false),
            _ => None,
        }
    }

    /// Member `key` as raw JSON when it is present and not `null` (as serde_json reads an
    /// `Option` member).
    pub fn json(&self, key: &str) -> Option<&'a [u8]> {
        self.raw(key).filter(|r| *r != b"null")
    }

    /// Member `key` when it is a whole number from 0 to `u64::MAX` (as
    /// `serde_json::Value::as_u64` reads it).
    pub fn u64(&self, key: &str) -> Option<u64> {
        self.raw(key).and_then(whole)
    }

    /// Member `key` when it is a whole number that fits an `i64` (as
    /// `serde_json::Value::as_i64` reads it).
    pub fn i64(&self, key: &str) -> Option<i64> {
        let r = self.raw(key)?;
        let n = whole(r.strip_prefix(b"-").unwrap_or(r))?;
        if n == 0 && r[0] == b'-' {
            return None; // serde_json reads `-0` as a float
        }
        std::str::from_utf8(r).ok()?.parse().ok()
    }

    /// Member `key` when it is a number (as `serde_json::Value::as_f64` reads it).
    pub fn f64(&self, key: &str) -> Option<f64> {
        let r = self.raw(key)?;
        if !r.first().is_some_and(|c| *c == b'-' || c.is_ascii_digit()) {
            return None;
        }
        serde_json::from_slice::<Value>(r).ok()?.as_f64()
    }

    /// Member `key` parsed (`None` when absent or not JSON).
    pub fn value(&self, key: &str) -> Option<Value> {
        self.raw(key).and_then(|r| serde_json::from_slice(r).ok())
    }

    /// Whether member `key` is present and not `null`.
    pub fn has(&self, key: &str) -> bool {
        self.raw(key).is_some_and(|r| r != b"null")
    }
}

/// A JSON number made only of digits (no sign, fraction or exponent) that fits a `u64`.
fn whole(r: &[u8]) -> Option<u64> {
    if r.is_empty() || !r.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(r).ok()?.parse().ok()
}

/// A member's key as written, with its lookup tag (see [`Fields::keyed`]).
#[derive(Debug, Clone, Copy)]
pub struct Key<'a> {
    tag: u64,
    written: &'a [u8],
}

impl<'a> Key<'a> {
    /// Whether this key is `name` (which needs no escape), `tag` being [`key_tag`]`(name)`:
    /// only a key of the same tag is compared in full, and a key written with an escape never
    /// is `name`.
    #[inline]
    pub fn is(&self, tag: u64, name: &str) -> bool {
        self.tag == tag && self.written == name.as_bytes()
    }

    /// The key as written (escapes not decoded).
    pub fn written(&self) -> &'a [u8] {
        self.written
    }
}

/// The lookup tag of the name `key` (which needs no escape), computable at compile time: what
/// [`Key::is`] compares first.
pub const fn key_tag(key: &str) -> u64 {
    let k = key.as_bytes();
    let n = if k.len() < 7 { k.len() } else { 7 };
    let mut t = 0u64;
    let mut i = 0;
    while i < n {
        t |= (k[i] as u64) << (8 * i);
        i += 1;
    }
    let len = if k.len() < 127 { k.len() } else { 127 };
    t | (len as u64) << 56
}

/// The member `key` (its last occurrence) of the JSON object `obj`, as raw JSON; `None` when
/// absent or when `obj` is not an object.
pub fn member<'a>(obj: &'a [u8], key: &str) -> Option<&'a [u8]> {
    let [found] = members_named(obj, [key]);
    found
}

/// The members `keys` of the JSON object `obj` in one pass over it, as [`member`] finds each.
pub fn members_named<'a, const N: usize>(obj: &'a [u8], keys: [&str; N]) -> [Option<&'a [u8]>; N] {
    let mut found = [None; N];
    let whole = members(obj, &mut Known::default(), |k, v| {
        for (key, slot) in keys.iter().zip(&mut found) {
            if key_is(&obj[k.0..k.1], key.as_bytes()) {
                *slot = Some(&obj[v.0..v.1]);
            }
        }
    });
    if whole.is_none() {
        return [None; N];
    }
    found
}

/// Call `f(key, value)` for every member of the JSON object `obj`, in order: the key decoded,
/// the value as raw JSON. Returns false (maybe after some calls) when `obj` is not an object.
pub fn each_member<'a>(obj: &'a [u8], mut f: impl FnMut(&[u8], &'a [u8])) -> bool {
    members(obj, &mut Known::default(), |k, v| {
        let key = &obj[k.0..k.1];
        let value = &obj[v.0..v.1];
        if memchr::memchr(b'\\', key).is_none() {
            return f(key, value);
        }
        if let Ok(decoded) = serde_json::from_slice::<String>(&obj[k.0 - 1..k.1 + 1]) {
            f(decoded.as_bytes(), value);
        }
    })
    .is_some()
}

/// Whether a key as written (escaped) is `want` (which needs no escape).
fn key_is(written: &[u8], want: &[u8]) -> bool {
    if written == want {
        return true;
    }
    // An escaped spelling of the same key (never written by the normalizer, but possible).
    memchr::memchr(b'\\', written).is_some()
        && serde_json::from_slice::<String>(&[b"\"", written, b"\""].concat())
            .is_ok_and(|s| s.as_bytes() == want)
}

/// The tag bit of a key written with an escape: always compared in full (by [`key_is`]).
const ESCAPED: u64 = 1 << 63;

/// The lookup tag of a key: its first 7 bytes and its length (up to 127), plus [`ESCAPED`] when
/// it holds a backslash (`wanted`: a key looked up, which never does).
#[inline]
fn tag(k: &[u8], wanted: bool) -> u64 {
    let n = k.len().min(7);
    let mut b = [0u8; 8];
    b[..n].copy_from_slice(&k[..n]);
    let t = head_tag(u64::from_le_bytes(b), k.len());
    if !wanted && k.contains(&b'\\') {
        return t | ESCAPED;
    }
    t
}

/// [`tag`] of the key `b[start..end]` of an object being indexed: its first bytes are read 8 at
/// once from `b` (a key is followed by more of the object).
#[inline]
fn tag_in(b: &[u8], start: usize, end: usize) -> u64 {
    let k = &b[start..end];
    let Some(w) = b.get(start..).and_then(|r| r.first_chunk::<8>()) else {
        return tag(k, false);
    };
    let t = head_tag(u64::from_le_bytes(*w), k.len());
    if k.contains(&b'\\') {
        return t | ESCAPED;
    }
    t
}

/// A tag from the 8 bytes a key starts with (`head`, little-endian) and its length.
#[inline]
fn head_tag(head: u64, len: usize) -> u64 {
    let n = len.min(7);
    (head & ((1u64 << (8 * n)) - 1)) | ((len.min(127) as u64) << 56)
}

/// The marked values of the bytes being indexed, met in order (see [`Index::build_marked`]).
#[derive(Default)]
struct Known<'m> {
    /// The marks not passed yet, offsets in the buffer.
    marks: &'m [Mark],
    /// Where the indexed bytes start in that buffer.
    base: usize,
}

impl<'m> Known<'m> {
    fn new(marks: &'m [Mark], base: usize) -> Self {
        let first = marks.partition_point(|m| m.0 < base);
        Known {
            marks: &marks[first..],
            base,
        }
    }

    /// The end of the value that starts at `i` of `b`, when a mark says where it is. Positions
    /// are asked in increasing order; a mark whose first and last bytes are not those of a
    /// whole string, object or array is not believed.
    #[inline]
    fn end(&mut self, b: &[u8], i: usize) -> Option<usize> {
        let at = self.base + i;
        while let Some((&(start, end), rest)) = self.marks.split_first() {
            if start > at {
                return None;
            }
            self.marks = rest;
            if start == at {
                let end = end - self.base;
                let whole = matches!(
                    (b.get(i), end.checked_sub(1).and_then(|e| b.get(e))),
                    (Some(b'"'), Some(b'"')) | (Some(b'{'), Some(b'}')) | (Some(b'['), Some(b']'))
                );
                debug_assert!(whole, "a mark that is no whole value at {at}");
                return (whole && end > i).then_some(end);
            }
        }
        None
    }
}

/// Call `f(key, value)` with the byte ranges of every member of the object `b` (the key inside
/// its quotes). `None` when `b` is not one JSON object (trailing bytes included).
fn members(
    b: &[u8],
    known: &mut Known<'_>,
    mut f: impl FnMut((usize, usize), (usize, usize)),
) -> Option<()> {
    let mut i = ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return (ws(b, i + 1) == b.len()).then_some(());
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = skip_string(b, i)?;
        let key = (i + 1, key_end - 1);
        i = ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = ws(b, i + 1);
        let end = skip_value(b, i, known)?;
        f(key, (i, end));
        i = ws(b, end);
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1),
            Some(b'}') => return (ws(b, i + 1) == b.len()).then_some(()),
            _ => return None,
        }
    }
}

/// The first index at or after `i` that is not JSON whitespace.
fn ws(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\r' | b'\t') = b.get(i) {
        i += 1;
    }
    i
}

/// The index just after the string literal that opens at `i`: the first quote after it that
/// follows an even number of backslashes (escapes such as `\\n` are frequent in text, escaped
/// quotes much rarer, so the search stops only at quotes).
fn skip_string(b: &[u8], i: usize) -> Option<usize> {
    // Most literals (keys, ids, names; a marked buffer's unmarked strings are all shorter than
    // `MARK_MIN`) are short: look at their first bytes 8 at a time (SWAR) for a quote or a
    // backslash; from a backslash, or past that window, search for quotes.
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut j = i + 1;
    while j <= i + MARK_MIN
        && let Some(w) = b.get(j..).and_then(|r| r.first_chunk::<8>())
    {
        let x = u64::from_le_bytes(*w);
        let (q, bs) = (x ^ (ONES * 0x22), x ^ (ONES * 0x5c));
        // The lowest flagged byte is exact (a borrow only flags bytes above a true match).
        let m = ((q.wrapping_sub(ONES) & !q) | (bs.wrapping_sub(ONES) & !bs)) & HIGH;
        if m != 0 {
            let k = j + (m.trailing_zeros() / 8) as usize;
            if b[k] == b'"' {
                return Some(k + 1);
            }
            // A backslash at k: no quote before it.
            j = k;
            break;
        }
        j += 8;
    }
    // No quote in i + 1 .. j.
    loop {
        let p = j + memchr::memchr(b'"', b.get(j..)?)?;
        let backslashes = b[i + 1..p]
            .iter()
            .rev()
            .take_while(|c| **c == b'\\')
            .count();
        if backslashes % 2 == 0 {
            return Some(p + 1);
        }
        j = p + 1;
    }
}

/// The index just after the value that starts at `i` (its syntax is checked only as far as
/// finding its end needs; `known` steps over marked values, inside containers too).
fn skip_value(b: &[u8], i: usize, known: &mut Known<'_>) -> Option<usize> {
    if let Some(end) = known.end(b, i) {
        return Some(end);
    }
    match *b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match *b.get(j)? {
                    b'"' => {
                        j = match known.end(b, j) {
                            Some(end) => end,
                            None => skip_string(b, j)?,
                        };
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let n = b[i..]
                .iter()
                .position(|c| matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t'))
                .unwrap_or(b.len() - i);
            (n > 0).then_some(i + n)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields_of(s: &str, f: impl FnOnce(Fields<'_>)) {
        let mut ix = Index::default();
        assert!(ix.build(s.as_bytes()), "{s}");
        f(ix.view(s.as_bytes()));
    }

    #[test]
    fn typed_members_read_as_serde_json_values_read_them() {
        let s = r#"{"a":0,"b":18446744073709551615,"c":18446744073709551616,"d":-3,"e":-9223372036854775808,"f":1.5,"g":-2e3,"h":"7","i":null,"j":true,"k":[1],"l":1.0,"m":-0}"#;
        let full: Value = serde_json::from_str(s).unwrap();
        fields_of(s, |f| {
            for k in [
                "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "zz",
            ] {
                let v = full.get(k);
                assert_eq!(f.u64(k), v.and_then(Value::as_u64), "u64 {k}");
                assert_eq!(f.i64(k), v.and_then(Value::as_i64), "i64 {k}");
                assert_eq!(f.f64(k), v.and_then(Value::as_f64), "f64 {k}");
                assert_eq!(
                    f.json(k).is_some(),
                    v.is_some_and(|v| !v.is_null()),
                    "json {k}"
                );
            }
        });
    }

    #[test]
    fn members_are_found_with_their_raw_values() {
        let s = r#"{"v":1,"type":"tool.call","input":{"a":[1,{"b":"}]\"{"}],"c":null},"text":"x\"y\\","n":-1.5e3,"ok":true,"e":{},"l":[]}"#;
        fields_of(s, |f| {
            assert_eq!(f.raw("v"), Some(&b"1"[..]));
            assert_eq!(
                f.raw("input"),
                Some(&br#"{"a":[1,{"b":"}]\"{"}],"c":null}"#[..])
            );
            assert_eq!(f.str("text").as_deref(), Some("x\"y\\"));
            assert_eq!(f.str("type").as_deref(), Some("tool.call"));
            assert_eq!(f.raw("n"), Some(&b"-1.5e3"[..]));
            assert_eq!(f.bool("ok"), Some(true));
            assert_eq!(f.raw("e"), Some(&b"{}"[..]));
            assert_eq!(f.raw("l"), Some(&b"[]"[..]));
            assert_eq!(f.raw("missing"), None);
            assert_eq!(f.str("v"), None, "a number is not a string");
            let full: Value = serde_json::from_str(s).unwrap();
            for (k, v) in full.as_object().unwrap() {
                assert_eq!(f.value(k).as_ref(), Some(v), "{k}");
            }
            let input = f.raw("input").unwrap();
            assert_eq!(member(input, "c"), Some(&b"null"[..]));
            assert_eq!(member(input, "b"), None, "only the object's own members");
        });
    }

    #[test]
    fn tags_made_at_compile_time_are_the_index_tags() {
        for k in [
            "",
            "a",
            "seq",
            "session_id",
            "1234567",
            "12345678",
            &"x".repeat(200),
        ] {
            assert_eq!(key_tag(k), tag(k.as_bytes(), true), "{k}");
            assert_eq!(key_tag(k), tag(k.as_bytes(), false), "{k}");
            let obj = format!("{{\"{k}\":1}}");
            assert_eq!(key_tag(k), tag_in(obj.as_bytes(), 2, 2 + k.len()), "{k}");
        }
        fields_of(r#"{"text":1,"te\u0078t":2}"#, |f| {
            let keys: Vec<bool> = f
                .keyed()
                .map(|(k, _)| k.is(key_tag("text"), "text"))
                .collect();
            assert_eq!(keys, [true, false]);
        });
    }

    #[test]
    fn a_repeated_key_resolves_to_its_last_value_and_escaped_keys_match() {
        fields_of(r#"{"k":1,"\u006b2":2,"k":3}"#, |f| {
            assert_eq!(f.raw("k"), Some(&b"3"[..]));
            assert_eq!(f.raw("k2"), Some(&b"2"[..]));
        });
        let full: Value = serde_json::from_str(r#"{"k":1,"k":3}"#).unwrap();
        assert_eq!(full["k"], 3, "as serde_json's map");
    }

    proptest::proptest! {
        /// A serialized string of quotes, backslashes and newlines (escaped quotes after runs
        /// of backslashes, long and short) ends where serde_json wrote its closing quote.
        #[test]
        fn serialized_strings_are_skipped_whole(text in "[a\"\\\\\n]{0,300}") {
            let lit = serde_json::to_string(&text).unwrap();
            let mut b = lit.clone().into_bytes();
            b.extend_from_slice(b",\"x\"}");
            proptest::prop_assert_eq!(skip_string(&b, 0), Some(lit.len()));
        }
    }

    #[test]
    fn whitespace_is_allowed_and_malformed_input_is_refused() {
        fields_of(" { \"a\" : [ 1 , 2 ] , \"b\":\"\" } ", |f| {
            assert_eq!(f.raw("a"), Some(&b"[ 1 , 2 ]"[..]));
            assert_eq!(f.str("b").as_deref(), Some(""));
        });
        let mut ix = Index::default();
        for bad in [
            "",
            "[]",
            "{",
            "{\"a\"}",
            "{\"a\":}",
            "{\"a\":1,}",
            "{\"a\":\"x}",
            "{\"a\":1} x",
            "{\"a\":[1}",
        ] {
            assert!(!ix.build(bad.as_bytes()), "{bad}");
        }
        assert!(ix.build(b"{}"));
    }
}
