//! Holding delta lines whole: one output line per input line, in input order, byte for byte
//! the same when there is nothing to redact.
//!
//! A `content_block_delta` line whose fragment ends in text that could still become a secret
//! (`sk-an`, `pass`, a private key block being streamed) is held, whole, until a later line of
//! its block decides it; the lines after it wait behind it, so the order never changes. When its
//! stream has decided everything fed so far, its held lines (the stream's group) come out: as
//! they came in when the group holds no secret, else the group's redacted text goes into the
//! first line of the group (a secret straddling lines is replaced where the group starts, which
//! is where the undecided text began) and the group's other lines keep an empty fragment. A
//! block's `content_block_stop` (or `message_stop`, a new `message_start`, or the end of input)
//! decides whatever its stream still holds. With nothing to redact the latency is the same as
//! the held suffix had: at most until the block's next line.

use super::fragments::{Held, State};
use super::lex::{decode, escape_into, has_escaped_slash, hides_literals};
use super::line::Redactor;
use crate::read::Line;
use crate::transform::{Origin, Transformed};

impl Redactor {
    /// Redact `line` and append to `out` every line that is decided now, in input order.
    pub fn push(&mut self, line: &Line<'_>, out: &mut Transformed) {
        let mut anchors = std::mem::take(&mut self.line_anchors);
        self.seen = self.engine.find_anchors(line.bytes, &mut anchors);
        self.line_anchors = anchors;
        let cut = line.oversized.is_some();
        let origin = Origin::of(line);
        let mut one = std::mem::take(&mut self.one);
        one.clear();
        let held = if self.seen.stream_event
            || self.foreign_open()
            || super::deltas::foreign_hint(line.bytes)
        {
            self.stream_line(line.bytes, cut, origin, &mut one)
        } else {
            None
        };
        if held.is_none() {
            self.plain(line.bytes, cut, None, &mut one);
        }
        if held != Some(true) {
            if self.queue.is_empty() {
                move_line(&one, line.bytes, None, out);
            } else {
                self.queue.push_back(Held {
                    origin,
                    bytes: line.bytes.to_vec(),
                    cut,
                    state: State::Done(std::mem::take(&mut one)),
                });
            }
        }
        self.one = one;
        self.drain(out);
    }

    /// End of input: decide every stream and release every held line.
    pub fn flush(&mut self, out: &mut Transformed) {
        while !self.streams.is_empty() {
            self.release(0);
        }
        self.drain(out);
    }

    /// Queue delta line `b` of stream `serial` (its fragment literal's content is `frag`).
    pub(super) fn hold_delta(
        &mut self,
        b: &[u8],
        cut: bool,
        origin: Origin,
        serial: u64,
        frag: (usize, usize),
    ) {
        // Decided now, from the literals `push` found in this line.
        let outside = |s: usize| s < frag.0 || s >= frag.1;
        let scan = !self.seen.known
            || cut
            || self.line_anchors.iter().any(|&(s, _)| outside(s))
            || ((self.seen.unicode_escape || has_escaped_slash(b))
                && (hides_literals(&b[..frag.0]) || hides_literals(&b[frag.1..])));
        self.queue.push_back(Held {
            origin,
            bytes: b.to_vec(),
            cut,
            state: State::Delta { serial, frag, scan },
        });
    }

    /// Stream `at` has decided all it was fed: its held lines come out (see the module doc).
    pub(super) fn decide(&mut self, at: usize) {
        let serial = self.streams[at].serial;
        let field = self.mark_path(at);
        let text = std::mem::take(&mut self.streams[at].group);
        let kinds = std::mem::take(&mut self.streams[at].group_kinds);
        let mut queue = std::mem::take(&mut self.queue);
        let group: Vec<&mut Held> = queue
            .iter_mut()
            .filter(|h| matches!(h.state, State::Delta { serial: s, .. } if s == serial))
            .collect();
        let texts = if kinds.is_empty() {
            Vec::new()
        } else {
            spread(&text, &group)
        };
        for (i, h) in group.into_iter().enumerate() {
            let State::Delta { frag, scan, .. } = h.state else {
                unreachable!("filtered above")
            };
            let mut t = Transformed::default();
            match texts.get(i) {
                // Nothing redacted in the group, or this line's own text: the fragment stays,
                // the rest of the line is scanned as any line is.
                None | Some(Piece::Own) => self.keep_held(&h.bytes, h.cut, frag, scan, &mut t),
                Some(Piece::Text(range)) => {
                    self.lit.clear();
                    self.lit.push(b'"');
                    escape_into(&mut self.lit, &text[range.clone()]);
                    self.lit.push(b'"');
                    if !range.is_empty() {
                        self.path.clear();
                        self.path.push_str(field);
                        for k in &kinds {
                            self.mark(*k);
                        }
                    }
                    self.rewrite_held(&h.bytes, h.cut, frag.0, &mut t);
                }
            }
            h.state = State::Done(t);
        }
        self.queue = queue;
        // The group's text is spent; its buffers are reused.
        let st = &mut self.streams[at];
        st.group = text;
        st.group.clear();
        st.group_kinds = kinds;
        st.group_kinds.clear();
    }

    /// Rewrite held delta line `b` with `self.lit` as its fragment, scanning the rest of the
    /// line as its own (the anchors of the line being pushed are kept aside meanwhile).
    fn rewrite_held(&mut self, b: &[u8], cut: bool, frag: usize, t: &mut Transformed) {
        let current = (self.seen, std::mem::take(&mut self.line_anchors));
        let mut anchors = Vec::new();
        self.seen = self.engine.find_anchors(b, &mut anchors);
        self.line_anchors = anchors;
        self.plain(b, cut, Some(frag), t);
        (self.seen, self.line_anchors) = current;
    }

    /// Held delta line `b` whose fragment (`frag`) stays as it is: kept whole unless the rest
    /// of the line may hold a secret (`scan`, decided when it was held), else rewritten with its
    /// own fragment and the rest scanned.
    fn keep_held(
        &mut self,
        b: &[u8],
        cut: bool,
        frag: (usize, usize),
        scan: bool,
        t: &mut Transformed,
    ) {
        if !scan {
            t.keep_line();
            return;
        }
        self.lit.clear();
        self.lit.extend_from_slice(&b[frag.0 - 1..frag.1 + 1]);
        self.rewrite_held(b, cut, frag.0, t);
    }

    /// Append the decided lines at the head of the queue to `out`.
    fn drain(&mut self, out: &mut Transformed) {
        while let Some(Held {
            state: State::Done(_),
            ..
        }) = self.queue.front()
        {
            let h = self.queue.pop_front().expect("front exists");
            let State::Done(t) = &h.state else {
                unreachable!("checked above")
            };
            move_line(t, &h.bytes, Some(h.origin), out);
        }
    }

    /// Lines held back right now.
    pub fn held_lines(&self) -> usize {
        self.queue.len()
    }
}

/// What a held line of a group with a secret gets.
enum Piece {
    /// Its own fragment, unchanged.
    Own,
    /// This range of the group's redacted text.
    Text(std::ops::Range<usize>),
}

/// Share the redacted text of a group among its lines: leading and trailing lines whose
/// fragments the text starts or ends with keep them; the first line in between gets the rest
/// (the placeholders: where the undecided text began), the others an empty fragment.
fn spread(text: &[u8], group: &[&mut Held]) -> Vec<Piece> {
    let frags: Vec<Vec<u8>> = group
        .iter()
        .map(|h| {
            let State::Delta { frag, .. } = h.state else {
                return Vec::new();
            };
            let mut d = Vec::new();
            decode(&h.bytes[frag.0..frag.1], &mut d, None);
            d
        })
        .collect();
    let (mut lo, mut hi) = (0, text.len());
    let (mut first, mut last) = (0, frags.len());
    while first < last && text[lo..hi].starts_with(&frags[first]) {
        lo += frags[first].len();
        first += 1;
    }
    while last > first && text[lo..hi].ends_with(&frags[last - 1]) {
        hi -= frags[last - 1].len();
        last -= 1;
    }
    if first == last && lo < hi {
        // Text left over with no line between (cannot happen when the placeholders differ
        // from what they replace): all of it goes into the group's first line.
        (first, last, lo, hi) = (0, frags.len(), 0, text.len());
    }
    (0..frags.len())
        .map(|i| {
            if i < first || i >= last {
                Piece::Own
            } else if i == first {
                Piece::Text(lo..hi)
            } else {
                Piece::Text(hi..hi)
            }
        })
        .collect()
}

/// Append line 0 of `one` (the output for input `bytes`) to `out`: kept as the input line when
/// it is the line being pushed and unchanged, else copied.
fn move_line(one: &Transformed, bytes: &[u8], origin: Option<Origin>, out: &mut Transformed) {
    match origin {
        None if one.is_kept(0) => {
            let (_, members, _) = one.get(0, bytes);
            out.members().extend_from_slice(members);
            out.keep_line();
        }
        None => {
            let (b, members, _) = one.get(0, bytes);
            out.buf().extend_from_slice(b);
            out.members().extend_from_slice(members);
            out.end_line(None);
        }
        Some(o) => out.append_from(one, 0, bytes, o),
    }
}
