//! JSON in and out: parsing a line into a simd-json tape (with the serde_json reference path and
//! fallback), reading fields from it, and writing JSON into a reused byte buffer.
//!
//! simd-json parses the line in place (it rewrites escapes in the buffer), so the parser keeps its
//! own padded copy of the line and the caller's bytes stay untouched for raw passthrough. The tape
//! keeps object keys in input order, duplicates included, so what is written back keeps the order
//! the CLI wrote.

use simd_json::prelude::*;
use simd_json::{Buffers, Node, StaticNode, Tape};

pub mod depth;
pub mod fields;
mod hollow;
pub(crate) mod literal;
mod out;
pub mod range;
mod raw;
mod reference;
pub mod repair;
pub use hollow::Hole;
pub use out::{Out, Splice, escape_content, static_of};
pub use raw::{Miss, Spans};
pub use reference::{RefValue, build_ref_tape};

/// A read-only view of a parsed JSON value.
pub type Val<'t, 'i> = simd_json::tape::Value<'t, 'i>;

pub use depth::MAX_DEPTH;

/// Default of [`Parser::hollowing`]: literals of 64 KiB and more in lines of 1 MiB and more.
pub const HOLLOW_DEFAULT: (usize, usize) = (1 << 20, 1 << 16);

/// Which parser produced a tape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// simd-json, the fast path.
    Simd,
    /// serde_json, the reference path (also the fallback when simd-json rejects a line).
    Serde,
}

/// Why a line is not a JSON document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The parser's message (no input bytes are echoed in it).
    pub message: String,
}

/// Reusable state for parsing one line at a time.
pub struct Parser {
    engine: Engine,
    scratch: Vec<u8>,
    holes: Vec<Hole>,
    /// Lines at least `.0` bytes long have their string literals of at least `.1` bytes hollowed.
    hollow: Option<(usize, usize)>,
    buffers: Buffers,
    tape: Option<Tape<'static>>,
    reference: Option<RefValue>,
}

impl Default for Parser {
    fn default() -> Self {
        Self::new(Engine::Simd)
    }
}

/// A parsed line: a tape plus the engine that made it.
pub struct Parsed<'a> {
    /// The tape; `tape.as_value()` is the document.
    pub tape: Tape<'a>,
    /// Which engine produced it.
    pub engine: Engine,
    /// With [`Engine::Simd`]: the address of the parser's copy of the line, where the tape's
    /// strings point (for [`Out::set_source`]); 0 otherwise.
    pub base: usize,
    /// Length of that copy (0 with [`Engine::Serde`]).
    pub len: usize,
    /// True when that copy holds no backslash: none of its strings needs escaping.
    pub plain: bool,
    /// The string literals left out of that copy (see [`Parser::hollowing`]).
    pub holes: &'a [Hole],
    /// With [`Engine::Simd`]: offsets in that copy of every structural character and of the
    /// first byte of every string and scalar (simd-json's stage 1), in order; empty otherwise.
    pub structurals: &'a [u32],
}

/// An emptied tape allocation, no longer borrowing the parser.
pub struct Spare(Option<Tape<'static>>);

impl Parsed<'_> {
    /// Empty the tape so its allocation can go back to the parser.
    pub fn into_spare(self) -> Spare {
        match self.engine {
            Engine::Simd => Spare(Some(self.tape.reset())),
            Engine::Serde => Spare(None),
        }
    }
}

impl Parser {
    /// A parser that uses `engine` first. With [`Engine::Simd`], lines simd-json rejects are
    /// retried with serde_json so both engines accept exactly the same documents.
    pub fn new(engine: Engine) -> Self {
        Parser {
            engine,
            scratch: Vec::new(),
            holes: Vec::new(),
            hollow: Some(HOLLOW_DEFAULT),
            // Both engines refuse nesting deeper than MAX_DEPTH (see `depth`).
            buffers: Buffers::with_max_depth(0, MAX_DEPTH),
            tape: Some(Tape::null()),
            reference: None,
        }
    }

    /// Hollow string literals of at least `min_string` bytes in lines of at least `min_line`
    /// bytes (`None`: never). Their content is then not in the tape: the tape holds a prefix (see
    /// [`Hole`]) and [`Out`] writes the content from the input line. Default: strings of 64 KiB
    /// and more in lines of 1 MiB and more, which keeps memory near the input line's size.
    pub fn hollowing(mut self, sizes: Option<(usize, usize)>) -> Self {
        self.hollow = sizes;
        self
    }

    /// Parse `line` into a tape. The tape borrows the parser until it is handed back with
    /// [`Parser::recycle`].
    pub fn parse<'p>(&'p mut self, line: &[u8]) -> Result<Parsed<'p>, ParseError> {
        self.parse_inner(line, self.hollow)
    }

    /// [`Parser::parse`] without hollowing: every string of `line` is in the tape.
    pub fn parse_whole<'p>(&'p mut self, line: &[u8]) -> Result<Parsed<'p>, ParseError> {
        self.parse_inner(line, None)
    }

    fn parse_inner<'p>(
        &'p mut self,
        line: &[u8],
        hollow: Option<(usize, usize)>,
    ) -> Result<Parsed<'p>, ParseError> {
        let mut tape: Tape<'p> = self.tape.take().unwrap_or_else(Tape::null).reset();
        self.holes.clear();
        if self.engine == Engine::Simd {
            let hollowed = match hollow {
                Some((min_line, min_string)) if line.len() >= min_line => {
                    hollow::hollow(line, min_string, &mut self.scratch, &mut self.holes)
                }
                _ => false,
            };
            if !hollowed {
                self.scratch.clear();
                self.scratch.extend_from_slice(line);
            }
            let len = self.scratch.len();
            let plain = memchr::memchr(b'\\', &self.scratch).is_none();
            self.scratch.resize(len + simd_json::INPUT_PADDING, b' ');
            let base = self.scratch.as_ptr() as usize;
            // `fill_tape_padded` (a safe fn) unescapes strings in place in `scratch[..len]`; the
            // caller's bytes stay untouched for raw passthrough and the fallback below.
            let res =
                simd_json::fill_tape_padded(&mut self.scratch, len, &mut self.buffers, &mut tape);
            // simd-json can be one ULP off on floats with 16–17 significant digits (fuzzing found
            // 0.38520001354184372 read as 0.3852000135418437). Such values print with many digits
            // either way, so each is read again from its text with an exact parse (the one
            // serde_json's `float_roundtrip` feature does); when that cannot be done the line is
            // parsed again by serde_json.
            if res.is_ok()
                && (!tape.0.iter().any(is_long_float)
                    || (!hollowed
                        && exact_floats(&mut tape.0, line, self.buffers.structural_indexes())))
            {
                return Ok(Parsed {
                    tape,
                    engine: Engine::Simd,
                    base,
                    len,
                    plain,
                    holes: &self.holes,
                    structurals: self.buffers.structural_indexes(),
                });
            }
            // Fall through to the reference parser: it decides what is JSON.
        }
        // Keep the tape's allocation for the next line.
        self.tape = Some(tape.reset());
        self.holes.clear();
        match depth::from_slice::<RefValue>(line) {
            Ok(v) => {
                self.reference = Some(v);
                let v = self.reference.as_ref().expect("just set");
                let mut nodes = Vec::new();
                build_ref_tape(v, &mut nodes);
                Ok(Parsed {
                    tape: Tape(nodes),
                    engine: Engine::Serde,
                    base: 0,
                    len: 0,
                    plain: false,
                    holes: &[],
                    structurals: &[],
                })
            }
            Err(e) => Err(ParseError {
                message: serde_error_text(&e),
            }),
        }
    }

    /// Take back a tape allocation (from [`Parsed::into_spare`]) for the next line.
    pub fn recycle(&mut self, spare: Spare) {
        if let Some(t) = spare.0 {
            self.tape = Some(t);
        }
    }
}

/// Read every long float ([`is_long_float`]) of `tape` again from its text in `line`, the line the
/// tape was parsed from (not hollowed), exactly. The numbers of the tape are in document order,
/// and so are the structural indexes that start a number (a `-` or a digit: every scalar's first
/// byte is one), so the k-th number node is the k-th number in the text. False (the tape partly
/// patched: parse again) when they do not line up or a text does not read as a finite number.
fn exact_floats(tape: &mut [Node<'_>], line: &[u8], structurals: &[u32]) -> bool {
    let mut starts = structurals
        .iter()
        .map(|&i| i as usize)
        .filter(|&i| matches!(line.get(i), Some(b'-' | b'0'..=b'9')));
    for n in tape.iter_mut() {
        let Node::Static(s) = n else {
            continue;
        };
        if !matches!(
            s,
            StaticNode::I64(_) | StaticNode::U64(_) | StaticNode::F64(_)
        ) {
            continue;
        }
        let Some(start) = starts.next() else {
            return false;
        };
        if let StaticNode::F64(f) = s
            && is_long(*f)
        {
            let len = line[start..]
                .iter()
                .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                .unwrap_or(line.len() - start);
            let text = std::str::from_utf8(&line[start..start + len]).unwrap_or("");
            match text.parse::<f64>() {
                Ok(exact) if exact.is_finite() => *f = exact,
                _ => return false,
            }
        }
    }
    starts.next().is_none()
}

/// A float whose shortest decimal form has 15 or more significant digits. Asked of every node of
/// every tape: inlined, so that the other nodes cost a compare, not a call.
#[inline]
fn is_long_float(n: &Node<'_>) -> bool {
    match n {
        Node::Static(StaticNode::F64(f)) => is_long(*f),
        _ => false,
    }
}

/// [`is_long_float`] for a float.
fn is_long(f: f64) -> bool {
    if !f.is_finite() {
        return true;
    }
    let mut b = ryu::Buffer::new();
    let text = b.format_finite(f);
    let mantissa = text.split(['e', 'E']).next().unwrap_or(text);
    let digits = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .skip_while(|&d| d == b'0')
        .count();
    // "1.0" style output ends in a zero that is not significant; it never reaches 15 digits.
    digits >= 15
}

fn serde_error_text(e: &serde_json::Error) -> String {
    // serde_json's messages name the problem and the column, never the input bytes.
    e.to_string()
}

/// `v` as a string borrowed from the input.
pub fn str_of<'i>(v: Val<'_, 'i>) -> Option<&'i str> {
    v.into_string()
}

/// Member `key` of object `v`. With duplicate keys the last one wins, as in JavaScript's
/// `JSON.parse` and Python's `json`.
///
/// Inlined: the callers name `key` as a literal, so the length test is against a constant and
/// the byte test an inline compare of that many bytes, never a call to `memcmp`.
#[inline]
pub fn get<'t, 'i>(v: Val<'t, 'i>, key: &str) -> Option<Val<'t, 'i>> {
    let obj = v.as_object()?;
    let mut found = None;
    for (k, x) in obj.iter() {
        // The length tells most names apart without reading the key's bytes.
        if k.len() == key.len() && k.as_bytes() == key.as_bytes() {
            found = Some(x);
        }
    }
    found
}

/// `v[key]` as a string.
#[inline]
pub fn get_str<'t, 'i>(v: Val<'t, 'i>, key: &str) -> Option<&'i str> {
    get(v, key).and_then(str_of)
}

/// `v[key]` if present and not null.
#[inline]
pub fn get_some<'t, 'i>(v: Val<'t, 'i>, key: &str) -> Option<Val<'t, 'i>> {
    get(v, key).filter(|x| !x.is_null())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    fn roundtrip(engine: Engine, s: &str) -> String {
        let mut p = Parser::new(engine);
        let parsed = p.parse(s.as_bytes()).unwrap();
        let mut o = Out::default();
        o.value(parsed.tape.as_value());
        String::from_utf8(o.buf).unwrap()
    }

    #[test]
    fn engines_agree_and_keep_order() {
        let s = r#"{"z":1,"a":[true,null,-2,3.5,"\u00e9\n\"x\"",{"k":18446744073709551615}],"z":"dup"}"#;
        let a = roundtrip(Engine::Simd, s);
        assert_eq!(
            a,
            r#"{"z":1,"a":[true,null,-2,3.5,"é\n\"x\"",{"k":18446744073709551615}],"z":"dup"}"#
        );
        // serde_json's map keeps the last duplicate and sorts keys; the simd path keeps both.
        let b = roundtrip(
            Engine::Serde,
            r#"{"a":[1e400]}"#.replace("1e400", "1.5").as_str(),
        );
        assert_eq!(b, r#"{"a":[1.5]}"#);
    }

    proptest::proptest! {
        #[test]
        fn str_escaping_matches_serde_json(s in "[\\u{0}-\\u{7f}\\u{80}-\\u{10ffff}]{0,300}") {
            let mut o = Out::default();
            o.str(&s);
            proptest::prop_assert_eq!(String::from_utf8(o.buf).unwrap(), serde_json::to_string(&s).unwrap());
        }
    }

    /// Both engines read exactly [`MAX_DEPTH`] levels of arrays and objects, and refuse one more
    /// as too deep, without overflowing a 2 MiB thread stack (a test thread's and a worker's).
    #[test]
    fn engines_agree_on_nesting_limits() {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                for depth in [
                    1,
                    127,
                    128,
                    129,
                    998,
                    MAX_DEPTH - 1,
                    MAX_DEPTH,
                    MAX_DEPTH + 1,
                ] {
                    let arrays = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
                    let objects = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
                    for doc in [arrays, objects] {
                        for engine in [Engine::Simd, Engine::Serde] {
                            let mut p = Parser::new(engine);
                            let got = p.parse(doc.as_bytes()).map(|parsed| {
                                let mut o = Out::default();
                                o.value(parsed.tape.as_value());
                                o.buf
                            });
                            match got {
                                Ok(out) => {
                                    assert!(depth <= MAX_DEPTH, "{engine:?} read depth {depth}");
                                    assert_eq!(out, doc.as_bytes(), "{engine:?} depth {depth}");
                                }
                                Err(e) => {
                                    assert!(depth > MAX_DEPTH, "{engine:?} depth {depth}: {e:?}");
                                    assert!(depth::is_too_deep(&e.message), "{e:?}");
                                }
                            }
                        }
                    }
                }
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn long_floats_are_exact() {
        // Found by the parse_line fuzz target: simd-json reads this one ULP low.
        let line = br#"{"costUSD":0.38520001354184372,"short":0.0036142,"n":3}"#;
        let mut p = Parser::new(Engine::Simd);
        let parsed = p.parse(line).unwrap();
        let mut o = Out::default();
        o.value(parsed.tape.as_value());
        assert_eq!(
            String::from_utf8(o.buf).unwrap(),
            r#"{"costUSD":0.38520001354184374,"short":0.0036142,"n":3}"#
        );
    }

    proptest::proptest! {
        /// Long floats read exactly on the fast path agree with the reference parser, among
        /// other numbers, strings that look like numbers and nesting.
        #[test]
        fn long_floats_agree_with_the_reference(
            xs in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::num::f64::NORMAL.prop_map(|f| format!("{f:e}")),
                    proptest::num::f64::ANY.prop_filter("finite", |f| f.is_finite()).prop_map(|f| f.to_string()),
                    "-?[0-9]{1,3}\\.[0-9]{14,19}",
                    "-?[1-9][0-9]{0,24}",
                    "\"-?[0-9.e]{1,20}\"",
                    "\\[-?[0-9]\\.[0-9]{16}\\]",
                ],
                1..12,
            )
        ) {
            let line = format!("{{\"a\":[{}],\"b\":{{\"c\":{}}}}}", xs.join(","), xs[0]);
            let fast = Parser::new(Engine::Simd).parse(line.as_bytes()).map(|p| {
                let mut o = Out::default();
                o.value(p.tape.as_value());
                o.buf
            });
            let slow = Parser::new(Engine::Serde).parse(line.as_bytes()).map(|p| {
                let mut o = Out::default();
                o.value(p.tape.as_value());
                o.buf
            });
            proptest::prop_assert_eq!(fast.ok(), slow.ok(), "{}", line);
        }
    }

    #[test]
    fn control_chars_escape() {
        let mut o = Out::default();
        o.str("a\u{1}\u{7f}\u{2028}b");
        assert_eq!(
            String::from_utf8(o.buf).unwrap(),
            "\"a\\u0001\u{7f}\u{2028}b\""
        );
    }
}
