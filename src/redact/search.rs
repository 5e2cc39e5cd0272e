//! Searching with a compiled [`Engine`]: the literal-driven scan of complete text, the
//! "could a secret still start here" scan of a stream's text, lazy-DFA walks from a position,
//! and the raw-line test that lets most lines skip tokenizing.

use regex_automata::hybrid::dfa::Cache as DfaCache;
use regex_automata::util::start;
use regex_automata::{Anchored, Input};

use super::engine::{Engine, Escaped, Hit, Scratch};
use super::lex::{char_floor, escaped, unescape};

impl Engine {
    pub(super) fn start_bytes(&self) -> [bool; 256] {
        let mut cache = self.dfa.create_cache();
        let mut t = [false; 256];
        for (b, slot) in t.iter_mut().enumerate() {
            for prev in [None, Some(b'a'), Some(b' ')] {
                let mut hay = Vec::new();
                hay.extend(prev);
                let at = hay.len();
                hay.push(b as u8);
                if self.alive_in(&mut cache, &hay, at) {
                    *slot = true;
                }
            }
        }
        t
    }

    /// Whether an anchored match starting at `p` is still possible (or still growing) at the
    /// end of `text`.
    pub(super) fn alive_in(&self, cache: &mut DfaCache, text: &[u8], p: usize) -> bool {
        let input = Input::new(text).range(p..).anchored(Anchored::Yes);
        let Ok(mut sid) = self.dfa.start_state_forward(cache, &input) else {
            return true;
        };
        if sid.is_dead() {
            return false;
        }
        for &c in &text[p..] {
            match self.dfa.next_state(cache, sid, c) {
                Ok(s) => sid = s,
                Err(_) => return true,
            }
            if sid.is_dead() {
                return false;
            }
            if sid.is_quit() {
                return true;
            }
        }
        true
    }

    pub(super) fn first_alive(
        &self,
        sc: &mut Scratch,
        text: &[u8],
        from: usize,
        to: usize,
    ) -> Option<usize> {
        (from..to)
            .find(|&p| self.can_start[text[p] as usize] && self.alive_in(&mut sc.dfa, text, p))
    }

    /// Find the secrets in `text[from..]`, appending them to `hits` in order.
    ///
    /// With `eof`, `text` is complete and the result is `text.len()`. Without it, more text may
    /// follow: the scan stops at the first position where a match could still start or grow
    /// and returns it. Everything before it is decided (hits end there or before) and is what a
    /// scan of the complete text would decide, so a stream can release it.
    pub fn scan(
        &self,
        sc: &mut Scratch,
        text: &[u8],
        from: usize,
        eof: bool,
        hits: &mut Vec<Hit>,
    ) -> usize {
        let len = text.len();
        if eof && len.saturating_sub(from) < self.min_len {
            return len;
        }
        if eof && self.anchors.is_some() {
            let mut starts = std::mem::take(&mut sc.starts);
            self.find_anchors(&text[from..], &mut starts);
            for a in starts.iter_mut() {
                a.0 += from;
            }
            let r = self.scan_anchored(sc, text, from, &starts, false, hits);
            debug_assert!(r.is_ok());
            sc.starts = starts;
            return len;
        }
        let mut pos = from;
        while pos < len {
            let input = Input::new(text).range(pos..);
            self.re
                .search_captures_with(&mut sc.re, &input, &mut sc.caps);
            let m = sc.caps.get_match();
            if !eof {
                let limit = m.map_or(len, |m| m.start());
                if let Some(p) = self.first_alive(sc, text, pos, limit) {
                    return char_floor(text, p, pos);
                }
            }
            let Some(m) = m else { return len };
            if !eof && self.alive_in(&mut sc.dfa, text, m.start()) {
                return char_floor(text, m.start(), pos);
            }
            match self.accept(sc, text, m.pattern().as_usize()) {
                Some(h) => {
                    hits.push(h);
                    pos = m.end().max(h.end).max(m.start() + 1);
                }
                None => pos = m.start() + 1,
            }
        }
        len
    }

    /// `scan` of complete text, searching only where a detector literal allows a match to
    /// start: the same hits as the leftmost-first scan over every position, since every match
    /// contains a literal at most its `back` bytes after its start.
    /// Scan complete text at the starts `starts` allows (see [`Engine::scan`]).
    ///
    /// With `raw_json`, `text` is the raw inside of a JSON string whose escapes are all
    /// two-byte ones (`\n`, `\"`, …; no `\u`, no `\/`): the result is valid for the decoded
    /// string as long as no search looked at an escape (or at the byte after one), and
    /// `Err(Escaped)` says one did (then scan the decoded string instead).
    pub(super) fn scan_anchored(
        &self,
        sc: &mut Scratch,
        text: &[u8],
        from: usize,
        starts: &[(usize, usize)],
        raw_json: bool,
        hits: &mut Vec<Hit>,
    ) -> Result<(), Escaped> {
        let mut pos = from;
        for &(a, back) in starts {
            let mut s = a.saturating_sub(back).max(pos);
            while s <= a {
                let (m, seen) = self.walk(&mut sc.dfa, text, s);
                if raw_json && memchr::memchr(b'\\', &text[s.saturating_sub(2)..seen]).is_some() {
                    return Err(Escaped);
                }
                let Some(end) = m else {
                    s += 1;
                    continue;
                };
                // The match is known: get its groups.
                let input = Input::new(text).range(s..end).anchored(Anchored::Yes);
                self.re
                    .search_captures_with(&mut sc.re, &input, &mut sc.caps);
                let Some(m) = sc.caps.get_match() else {
                    s += 1;
                    continue;
                };
                match self.accept(sc, text, m.pattern().as_usize()) {
                    Some(h) => {
                        hits.push(h);
                        s = m.end().max(h.end).max(m.start() + 1);
                    }
                    None => s += 1,
                }
            }
            pos = pos.max(s);
        }
        Ok(())
    }

    /// Whether the raw line `text` certainly holds no secret, without tokenizing it. `text`
    /// must have no `\u` and no `\/` escape; `anchors` are its literals
    /// ([`Engine::find_anchors`]).
    ///
    /// True when, at every start the literals allow, no detector matches, neither in the raw
    /// bytes (the line as text) nor with JSON escapes decoded on the fly (the line as JSON).
    /// A search over a decoded string ends at its closing quote where this one goes on past
    /// it (a match ending there is found here too), and whatever a secret-looking member name
    /// finds, its keyword's pattern finds across `"name": "value"` here.
    pub fn clear_raw(&self, sc: &mut Scratch, text: &[u8], anchors: &[(usize, usize)]) -> bool {
        let mut next = 0;
        for &(a, back) in anchors {
            for s in a.saturating_sub(back).max(next)..=a {
                let (m, seen) = self.walk(&mut sc.dfa, text, s);
                if m.is_some() {
                    return false;
                }
                let escapes = s > 0 && (text[s - 1] == b'\\' || escaped(text, s - 1));
                if (escapes || memchr::memchr(b'\\', &text[s..seen]).is_some())
                    && self.walk_unescaped(&mut sc.dfa, text, s)
                {
                    return false;
                }
            }
            next = next.max(a + 1);
        }
        true
    }

    /// Whether a detector may match at raw position `s` of `text` (JSON without `\u`
    /// escapes) with its escapes decoded. Unsure counts as yes.
    pub(super) fn walk_unescaped(&self, cache: &mut DfaCache, text: &[u8], s: usize) -> bool {
        let unit = if escaped(text, s) { s - 1 } else { s };
        let before = match unit.checked_sub(1) {
            None => None,
            Some(p) if escaped(text, p) => match unescape(text[p]) {
                Some(c) => Some(c),
                None => return true,
            },
            Some(p) => Some(text[p]),
        };
        let cfg = start::Config::new()
            .anchored(Anchored::Yes)
            .look_behind(before);
        let Ok(mut sid) = self.dfa.start_state(cache, &cfg) else {
            return true;
        };
        let mut i = unit;
        while i < text.len() {
            let (c, step) = if text[i] == b'\\' {
                match text.get(i + 1).and_then(|&e| unescape(e)) {
                    Some(c) => (c, 2),
                    None => return true,
                }
            } else {
                (text[i], 1)
            };
            sid = match self.dfa.next_state(cache, sid, c) {
                Ok(x) => x,
                Err(_) => return true,
            };
            if sid.is_tagged() {
                if sid.is_match() || sid.is_quit() {
                    return true;
                }
                if sid.is_dead() {
                    return false;
                }
            }
            i += step;
        }
        match self.dfa.next_eoi_state(cache, sid) {
            Ok(x) => x.is_match(),
            Err(_) => true,
        }
    }

    /// The end of the leftmost-first match anchored at `s`, walking the lazy DFA, and the end
    /// of the bytes the walk looked at.
    pub(super) fn walk(
        &self,
        cache: &mut DfaCache,
        text: &[u8],
        s: usize,
    ) -> (Option<usize>, usize) {
        let input = Input::new(text).range(s..).anchored(Anchored::Yes);
        let Ok(mut sid) = self.dfa.start_state_forward(cache, &input) else {
            return self.walk_slow(text, s);
        };
        let mut last = None;
        for (at, &c) in text.iter().enumerate().skip(s) {
            sid = match self.dfa.next_state(cache, sid, c) {
                Ok(x) => x,
                Err(_) => return self.walk_slow(text, s),
            };
            if sid.is_tagged() {
                if sid.is_match() {
                    last = Some(at);
                } else if sid.is_dead() {
                    return (last, at + 1);
                } else if sid.is_quit() {
                    return self.walk_slow(text, s);
                }
            }
        }
        match self.dfa.next_eoi_state(cache, sid) {
            Ok(x) if x.is_match() => (Some(text.len()), text.len()),
            Ok(_) => (last, text.len()),
            Err(_) => self.walk_slow(text, s),
        }
    }

    /// [`Engine::walk`] when the lazy DFA gives up (a Unicode word boundary on non-ASCII
    /// text, a thrashing cache): ask the full regex, and assume it looked at everything.
    pub(super) fn walk_slow(&self, text: &[u8], s: usize) -> (Option<usize>, usize) {
        let input = Input::new(text).range(s..).anchored(Anchored::Yes);
        (self.re.search(&input).map(|m| m.end()), text.len())
    }

    /// The leftmost-first scan over every position (what [`Engine::scan`] does without
    /// literals). For tests: it must agree with the literal-driven one.
    #[doc(hidden)]
    pub fn scan_every_position(&self, sc: &mut Scratch, text: &[u8], hits: &mut Vec<Hit>) {
        let mut pos = 0;
        while pos < text.len() {
            let input = Input::new(text).range(pos..);
            self.re
                .search_captures_with(&mut sc.re, &input, &mut sc.caps);
            let Some(m) = sc.caps.get_match() else { return };
            match self.accept(sc, text, m.pattern().as_usize()) {
                Some(h) => {
                    hits.push(h);
                    pos = m.end().max(h.end).max(m.start() + 1);
                }
                None => pos = m.start() + 1,
            }
        }
    }
}
