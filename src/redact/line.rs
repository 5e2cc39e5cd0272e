//! The line redactor: one stream-json line in, the same line with secrets replaced out (same
//! shape, every other byte unchanged), plus the `redactions` marks of that line.
//!
//! JSON lines are redacted string by string on decoded values (member names included) and the
//! placeholders are spliced into the raw bytes. Lines that are not JSON are redacted as text
//! (with a private key block followed across lines). `stream_event` delta lines feed per-block
//! streams ([`super::fragments`]); a delta line whose text is not decided yet is held whole until
//! its stream decides it ([`super::hold`]).

use std::sync::Arc;

use super::engine::{Engine, Hit, KindId, Scratch, Seen};
use super::fragments::{Queue, Stream};
use super::lex::{
    Frame, Lexer, NotJson, Tok, decode, escape_into, has_escaped_slash, has_unicode_escape,
    hides_literals,
};
use crate::read::Line;
use crate::transform::{LineTransform, Transformed};

/// How to redact a JSON line.
struct How<'a> {
    /// The line was cut by a length limit.
    cut: bool,
    /// Start of a string to replace with `Redactor::lit` (a delta's fragment).
    replace: Option<usize>,
    /// The line's detector literals (`None`: unknown).
    anchors: Option<&'a [(usize, usize)]>,
    /// The line has escapes that can hide literals.
    hides: bool,
}

/// Per-line counts of what was redacted, by kind.
pub type Counts = std::collections::BTreeMap<String, u64>;

/// Redacts stream-json lines. Deterministic for a given engine key.
pub struct Redactor {
    pub(super) engine: Arc<Engine>,
    /// Search state: made on first use, or handed over warm by [`Redactor::lend_scratch`].
    pub(super) sc: Option<Scratch>,
    pub(super) hits: Vec<Hit>,
    pub(super) stack: Vec<Frame>,
    pub(super) dec: Vec<u8>,
    pub(super) map: Vec<u32>,
    pub(super) key: Vec<u8>,
    pub(super) path: String,
    pub(super) marks: Vec<(String, KindId, u32)>,
    pub(super) streams: Vec<Stream>,
    pub(super) pem_open: bool,
    pub(super) frag: Vec<u8>,
    pub(super) lit: Vec<u8>,
    pub(super) totals: Vec<u64>,
    pub(super) held_max: usize,
    pub(super) anchors: Vec<(usize, usize)>,
    pub(super) line_anchors: Vec<(usize, usize)>,
    pub(super) seen: Seen,
    /// Lines held back, oldest first (see [`super::hold`]).
    pub(super) queue: Queue,
    pub(super) next_serial: u64,
    /// The output for the line being pushed.
    pub(super) one: Transformed,
}

impl Redactor {
    /// A redactor using `engine`.
    pub fn new(engine: Arc<Engine>) -> Self {
        Redactor {
            sc: None,
            engine,
            hits: Vec::new(),
            stack: Vec::new(),
            dec: Vec::new(),
            map: Vec::new(),
            key: Vec::new(),
            path: String::new(),
            marks: Vec::new(),
            streams: Vec::new(),
            pem_open: false,
            frag: Vec::new(),
            lit: Vec::new(),
            totals: Vec::new(),
            held_max: 0,
            anchors: Vec::new(),
            line_anchors: Vec::new(),
            seen: Seen::default(),
            queue: Default::default(),
            next_serial: 0,
            one: Transformed::default(),
        }
    }

    /// Hand this redactor warm search state (caches of the same engine) instead of making its
    /// own: many short-lived redactors (one per file redacted ahead) then share a few.
    pub fn lend_scratch(&mut self, sc: Option<Scratch>) {
        if sc.is_some() {
            self.sc = sc;
        }
    }

    /// Take this redactor's search state back (it makes a new one if it searches again).
    pub fn take_scratch(&mut self) -> Option<Scratch> {
        self.sc.take()
    }

    /// Placeholders written so far, by kind.
    pub fn counts(&self) -> Counts {
        self.totals
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| (self.engine.kind(k as KindId).to_owned(), *n))
            .collect()
    }

    /// The most bytes any delta stream held back at once (the added latency).
    pub fn max_held(&self) -> usize {
        self.held_max
    }

    /// True when nothing carries over to the next line (no delta stream open, no private-key
    /// block open): a fresh redactor would redact what follows the same way.
    pub fn is_idle(&self) -> bool {
        self.streams.is_empty() && !self.pem_open && self.queue.is_empty()
    }

    pub(super) fn mark(&mut self, kind: KindId) {
        self.clean_path();
        if let Some(m) = self
            .marks
            .iter_mut()
            .find(|m| m.1 == kind && m.0 == self.path)
        {
            m.2 += 1;
        } else {
            self.marks.push((self.path.clone(), kind, 1));
        }
        let k = kind as usize;
        if self.totals.len() <= k {
            self.totals.resize(k + 1, 0);
        }
        self.totals[k] += 1;
    }

    /// A member name on the way to a redacted string can be a secret itself (a map keyed by
    /// tokens): each segment of `self.path` is scanned and written with placeholders, so a
    /// mark never carries a secret.
    fn clean_path(&mut self) {
        if self.path.len() < 5 {
            return;
        }
        let mut out = String::with_capacity(self.path.len());
        let mut changed = false;
        let mut seg = Vec::new();
        for (i, raw) in self.path.split('/').enumerate() {
            if i > 0 {
                out.push('/');
            }
            seg.clear();
            seg.extend_from_slice(raw.replace("~1", "/").replace("~0", "~").as_bytes());
            let sc = scratch(&mut self.sc, &self.engine);
            let red = super::redact_str(&self.engine, sc, None, &seg);
            if red == seg {
                out.push_str(raw);
                continue;
            }
            changed = true;
            let red = String::from_utf8_lossy(&red);
            out.push_str(&red.replace('~', "~0").replace('/', "~1"));
        }
        if changed {
            self.path = out;
        }
    }

    pub(super) fn end_line(&mut self, out: &mut Transformed) {
        if !self.marks.is_empty() {
            let m = out.members();
            m.extend_from_slice(b",\"redactions\":[");
            for (i, (path, kind, n)) in self.marks.iter().enumerate() {
                if i > 0 {
                    m.push(b',');
                }
                m.extend_from_slice(b"{\"path\":\"");
                escape_into(m, path.as_bytes());
                m.extend_from_slice(b"\",\"kind\":\"");
                escape_into(m, self.engine.kind(*kind).as_bytes());
                m.extend_from_slice(b"\",\"count\":");
                m.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes());
                m.push(b'}');
            }
            m.push(b']');
            self.marks.clear();
        }
        out.end_line(None);
    }

    /// A line that is not a delta (or a delta whose fragment was already replaced by
    /// `replace = (fragment start, new literal)`).
    pub(super) fn plain(
        &mut self,
        b: &[u8],
        cut: bool,
        replace: Option<usize>,
        out: &mut Transformed,
    ) {
        // `push` found the line's literals.
        let anchors = std::mem::take(&mut self.line_anchors);
        let known = self.seen.known;
        let hides = self.seen.unicode_escape || has_escaped_slash(b);
        // Fast path: no detector literal anywhere, nothing escaped that could hide one.
        if known
            && replace.is_none()
            && !cut
            && !self.pem_open
            && !hides
            && (anchors.is_empty()
                || (!has_unicode_escape(b)
                    && self
                        .engine
                        .clear_raw(scratch(&mut self.sc, &self.engine), b, &anchors)))
        {
            self.line_anchors = anchors;
            out.keep_line();
            return;
        }
        let known = known.then_some(&anchors[..]);
        let mark = out.buf().len();
        let res = match Lexer::new(b, &mut self.stack) {
            Some(_) => {
                let how = How {
                    cut,
                    replace,
                    anchors: known,
                    hides,
                };
                self.json(b, &how, out.buf())
            }
            None => Err(NotJson),
        };
        if res.is_ok() {
            // Only text lines continue a private key block.
            self.pem_open = false;
        }
        if res == Ok(false) {
            self.line_anchors = anchors;
            out.keep_line();
            return;
        }
        if res.is_err() {
            out.buf().truncate(mark);
            self.marks.clear();
            self.text(b, cut, known, out.buf());
        }
        self.line_anchors = anchors;
        self.end_line(out);
    }

    fn json(&mut self, b: &[u8], how: &How<'_>, out: &mut Vec<u8>) -> Result<bool, NotJson> {
        let mut stack = std::mem::take(&mut self.stack);
        let r = self.json_inner(b, how, out, &mut stack);
        self.stack = stack;
        r
    }

    fn json_inner(
        &mut self,
        b: &[u8],
        how: &How<'_>,
        out: &mut Vec<u8>,
        stack: &mut Vec<Frame>,
    ) -> Result<bool, NotJson> {
        let (cut, replace, line_anchors, line_hides) =
            (how.cut, how.replace, how.anchors, how.hides);
        let mut lx = Lexer::new(b, stack).ok_or(NotJson)?;
        let mut anchors = std::mem::take(&mut self.anchors);
        let mut copied = 0;
        let mut cur = 0;
        let mut key_literal = false;
        let res = loop {
            let s = match lx.next_tok() {
                Ok(Some(Tok::Str(s))) => s,
                Ok(Some(Tok::Scalar(..))) => continue,
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            };
            if replace == Some(s.start) {
                out.extend_from_slice(&b[copied..s.start - 1]);
                out.extend_from_slice(&self.lit);
                copied = s.end + 1;
                continue;
            }
            let raw = &b[s.start..s.end];
            let cut_here = cut && !s.terminated;
            let key: Option<&[u8]> = match lx.value_key() {
                Some((ks, ke, esc)) if !s.key => {
                    if esc {
                        decode(&b[ks..ke], &mut self.key, None);
                        Some(&self.key)
                    } else {
                        Some(&b[ks..ke])
                    }
                }
                _ => None,
            };
            // Skip strings that certainly hold nothing: no literal inside, none hidden by an
            // escape, not the value of a secret-looking member. (Strings come in order, so
            // the line's literals are walked with a cursor.)
            let inside = line_anchors.map(|la| {
                while cur < la.len() && la[cur].0 < s.start {
                    cur += 1;
                }
                let mut end = cur;
                while end < la.len() && la[end].0 < s.end {
                    end += 1;
                }
                &la[cur..end]
            });
            let hides = line_hides && s.escaped && hides_literals(raw);
            if s.key {
                // A member name can only be secret-looking if it holds a keyword literal.
                key_literal = inside.is_none_or(|i| !i.is_empty()) || hides;
            }
            if s.terminated && s.end - s.start < 4 {
                continue;
            }
            let key = key.filter(|k| {
                key_literal
                    && raw.len() >= 6
                    && self
                        .engine
                        .is_secret_key(scratch(&mut self.sc, &self.engine), k)
            });
            let needed = inside.is_none_or(|i| !i.is_empty()) || cut_here || hides || key.is_some();
            if !needed {
                continue;
            }
            self.hits.clear();
            // First on the raw bytes (no decoding) when the escapes cannot matter; the
            // decoded string when they can.
            let mut decoded = false;
            let simple = s.escaped && !hides && !cut_here;
            let direct = match inside {
                Some(i) if !s.escaped || simple => {
                    anchors.clear();
                    anchors.extend(i.iter().map(|&(a, k)| (a - s.start, k)));
                    self.engine
                        .scan_value_at(
                            scratch(&mut self.sc, &self.engine),
                            key,
                            raw,
                            cut_here,
                            Some(&anchors),
                            simple,
                            &mut self.hits,
                        )
                        .is_ok()
                }
                _ => false,
            };
            if !direct {
                let text: &[u8] = if s.escaped {
                    decode(raw, &mut self.dec, None);
                    decoded = true;
                    &self.dec
                } else {
                    raw
                };
                // The literals in decoded coordinates (two-byte escapes shorten by 1).
                let known = match inside {
                    Some(i) if !hides => {
                        shift(raw, s.start, s.escaped, i, &mut anchors);
                        Some(&anchors[..])
                    }
                    _ => None,
                };
                self.hits.clear();
                let r = self.engine.scan_value_at(
                    scratch(&mut self.sc, &self.engine),
                    key,
                    text,
                    cut_here,
                    known,
                    false,
                    &mut self.hits,
                );
                debug_assert!(r.is_ok());
            }
            if self.hits.is_empty() {
                continue;
            }
            if decoded {
                decode(raw, &mut self.dec, Some(&mut self.map));
            }
            lx.pointer(s.key, &mut self.path);
            let hits = std::mem::take(&mut self.hits);
            for h in &hits {
                let (rs, re) = if decoded {
                    (self.map[h.start] as usize, self.map[h.end] as usize)
                } else {
                    (h.start, h.end)
                };
                out.extend_from_slice(&b[copied..s.start + rs]);
                let text: &[u8] = if decoded { &self.dec } else { raw };
                self.engine.placeholder(h.kind, &text[h.start..h.end], out);
                copied = s.start + re;
                self.mark(h.kind);
            }
            self.hits = hits;
        };
        self.anchors = anchors;
        res?;
        if copied == 0 {
            // Nothing replaced: the caller keeps the input line.
            return Ok(false);
        }
        out.extend_from_slice(&b[copied..]);
        Ok(true)
    }

    /// A line that is not JSON, as text.
    fn text(&mut self, b: &[u8], cut: bool, anchors: Option<&[(usize, usize)]>, out: &mut Vec<u8>) {
        self.path.clear();
        let mut from = 0;
        if self.pem_open {
            // Inside a private key block that a previous text line opened: its base64 lines
            // (after any log prefix), header lines, and the footer line.
            let end_at = memchr::memmem::find(b, b"-----END");
            let footer_end = end_at
                .and_then(|e| memchr::memmem::find(&b[e + 8..], b"-----").map(|f| e + 8 + f + 5));
            let tail_start = |upto: usize| {
                b[..upto]
                    .iter()
                    .rposition(u8::is_ascii_whitespace)
                    .map_or(0, |i| i + 1)
            };
            let base64 = |s: &[u8]| {
                !s.is_empty()
                    && s.iter()
                        .all(|&c| c.is_ascii_alphanumeric() || b"+/=".contains(&c))
            };
            let trimmed = b.trim_ascii_end().len();
            let span = match (end_at, footer_end) {
                (Some(e), Some(f)) => {
                    self.pem_open = false;
                    let t = tail_start(e);
                    Some((if base64(&b[t..e]) { t } else { e }, f))
                }
                _ if base64(&b[tail_start(trimmed)..trimmed]) => {
                    Some((tail_start(trimmed), trimmed))
                }
                _ if contains(b, b"Proc-Type:") || contains(b, b"DEK-Info:") || trimmed == 0 => {
                    None
                }
                _ => {
                    self.pem_open = false;
                    None
                }
            };
            if let Some((st, en)) = span {
                let kind = self.pem_kind();
                out.extend_from_slice(&b[..st]);
                self.engine.placeholder(kind, &b[st..en], out);
                self.mark(kind);
                from = en;
            }
        }
        self.hits.clear();
        let rest = &b[from..];
        let anchors = anchors.filter(|_| from == 0);
        let r = self.engine.scan_value_at(
            scratch(&mut self.sc, &self.engine),
            None,
            rest,
            cut,
            anchors,
            false,
            &mut self.hits,
        );
        debug_assert!(r.is_ok());
        let hits = std::mem::take(&mut self.hits);
        let mut at = 0;
        for h in &hits {
            out.extend_from_slice(&rest[at..h.start]);
            self.engine.placeholder(h.kind, &rest[h.start..h.end], out);
            at = h.end;
            self.mark(h.kind);
            if self.engine.kind(h.kind) == "private_key"
                && !contains(&rest[h.start..h.end], b"-----END")
            {
                self.pem_open = true;
            }
        }
        out.extend_from_slice(&rest[at..]);
        self.hits = hits;
    }

    fn pem_kind(&self) -> KindId {
        (0..u16::MAX)
            .find(|&k| self.engine.kind(k) == "private_key")
            .expect("built-in kind")
    }
}

/// Literal positions `line` (line coordinates, inside the string starting at `start`) in the
/// coordinates of the decoded string: each escape before them (2 raw bytes for 1; `\u` and `\/`
/// are not handled here) shifts them by one.
fn shift(
    raw: &[u8],
    start: usize,
    escaped: bool,
    line: &[(usize, usize)],
    out: &mut Vec<(usize, usize)>,
) {
    out.clear();
    if !escaped {
        out.extend(line.iter().map(|&(a, b)| (a - start, b)));
        return;
    }
    let mut k = 0;
    let mut gone = 0;
    let mut i = 0;
    loop {
        let next = memchr::memchr(b'\\', &raw[i.min(raw.len())..]).map(|j| i + j);
        let limit = next.unwrap_or(raw.len());
        while k < line.len() && line[k].0 - start < limit {
            let p = line[k].0 - start;
            out.push((p.saturating_sub(gone), line[k].1));
            k += 1;
        }
        let Some(j) = next else { break };
        gone += 1;
        i = j + 2;
    }
    out.extend(
        line[k..]
            .iter()
            .map(|&(a, b)| ((a - start).saturating_sub(gone), b)),
    );
    // A literal made of an escape's letter (`\npm_…`) can land on a real one: keep the
    // larger reach.
    out.dedup_by(|b, a| {
        let same = a.0 == b.0;
        if same {
            a.1 = a.1.max(b.1);
        }
        same
    });
}

fn contains(h: &[u8], n: &[u8]) -> bool {
    memchr::memmem::find(h, n).is_some()
}

impl LineTransform for Redactor {
    fn line(&mut self, line: &Line<'_>, out: &mut Transformed) {
        self.push(line, out);
    }

    fn finish(&mut self, out: &mut Transformed) {
        self.flush(out);
    }
}

/// A redactor's search state, made on first use.
pub(super) fn scratch<'a>(sc: &'a mut Option<Scratch>, engine: &Engine) -> &'a mut Scratch {
    sc.get_or_insert_with(|| engine.scratch())
}
