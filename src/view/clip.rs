//! Long bodies cut to their head and tail lines, with what was left out counted ("… N more
//! lines (M bytes) …"); with a byte budget (the report's previews) a long line is cut inside and
//! its rest counted too. Works on plain text and on the still-escaped inside of a JSON string
//! (a tool result as the envelope carries it), so a result of many megabytes is measured
//! without being decoded or copied: only the lines kept are decoded.

use std::borrow::Cow;
use std::collections::VecDeque;

/// One source of lines: plain text, or the inside of a JSON string literal (between its quotes).
#[derive(Debug, Clone)]
pub enum Source<'a> {
    /// Decoded text.
    Text(Cow<'a, str>),
    /// The escaped inside of a JSON string, as written in JSON.
    Json(&'a str),
}

/// A line kept, by where it is: source index and byte range in that source.
#[derive(Debug, Clone, Copy)]
struct Span {
    src: usize,
    start: usize,
    end: usize,
}

/// A line of the body: where it is, its index, decoded length and decoded start in the body.
#[derive(Debug, Clone, Copy)]
struct Ln {
    span: Span,
    idx: u64,
    len: u64,
    pos: u64,
}

/// How much of a body to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Lines kept at the start.
    pub head: usize,
    /// Lines kept at the end.
    pub tail: usize,
    /// Bytes kept of each line at most (cut at a character boundary; the rest is not counted).
    pub max_line: usize,
    /// Bytes kept in all at most, two thirds for the head and the rest for the tail, cut inside
    /// a line where one is longer (the rest is counted as left out); `usize::MAX` for none.
    pub budget: usize,
}

impl Limits {
    /// `head` and `tail` lines, each cut to `max_line` bytes, with no limit in all.
    pub fn lines(head: usize, tail: usize, max_line: usize) -> Limits {
        Limits {
            head,
            tail,
            max_line,
            budget: usize::MAX,
        }
    }
}

/// The kept lines of a body and the size of what was left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Clip {
    /// The first lines (each at most the line limit in bytes, cut at a character boundary).
    pub head: Vec<String>,
    /// The last lines (empty when nothing was left out).
    pub tail: Vec<String>,
    /// Lines between head and tail that were left out (the rest of a line cut by the budget
    /// counts as one).
    pub omitted_lines: u64,
    /// Their decoded size in bytes (UTF-8, newlines included).
    pub omitted_bytes: u64,
    /// Lines in the whole body (a last line without newline counts; an empty body has none).
    pub lines: u64,
    /// Decoded bytes of the whole body.
    pub bytes: u64,
    /// The last head line is cut by the budget: no newline follows it in the body.
    pub head_open: bool,
    /// The first tail line is the end of a line cut by the budget.
    pub tail_open: bool,
    /// The body ends with a newline.
    pub final_newline: bool,
}

impl Clip {
    /// The kept start as text: the head lines, and the newline after the last when the body has
    /// one there.
    pub fn head_text(&self) -> String {
        let mut s = self.head.join("\n");
        if !self.head_open && !self.head.is_empty() {
            s.push('\n');
        }
        s
    }

    /// The kept end as text: the tail lines, and the body's final newline.
    pub fn tail_text(&self) -> String {
        let mut s = self.tail.join("\n");
        if self.final_newline && !self.tail.is_empty() {
            s.push('\n');
        }
        s
    }
}

/// Cut the lines of `sources` (each source ends a line) to the first `head` and last `tail`
/// lines of `limits`, and those to its `budget`; when at most `head + tail + 1` lines are there
/// and they fit the budget, all are kept (in `head`). Each kept line is cut to `max_line` bytes.
pub fn clip(sources: &[Source<'_>], limits: Limits) -> Clip {
    let Limits { head, tail, .. } = limits;
    let mut first: Vec<Ln> = Vec::new();
    let mut last: VecDeque<Ln> = VecDeque::new();
    let (mut lines, mut line_bytes) = (0u64, 0u64);
    let mut final_newline = false;
    let mut on_line = |span: Span, len: u64| {
        let ln = Ln {
            span,
            idx: lines,
            len,
            pos: line_bytes + lines,
        };
        lines += 1;
        line_bytes += len;
        if first.len() < head {
            first.push(ln);
        }
        last.push_back(ln);
        if last.len() > tail + 1 {
            last.pop_front();
        }
    };
    for (src, s) in sources.iter().enumerate() {
        let on = |start, end, len| on_line(Span { src, start, end }, len);
        final_newline = match s {
            Source::Text(t) => text_lines(t, on),
            Source::Json(raw) => json_lines(raw, on),
        };
    }
    // Newlines between lines count as bytes too.
    let bytes = line_bytes + lines.saturating_sub(1);
    let total = bytes + u64::from(final_newline && lines > 0);
    let decode = |ln: &Ln, max: usize| {
        let sp = &ln.span;
        line_of(&sources[sp.src], sp.start, sp.end, max)
    };
    let mut clip = Clip {
        lines,
        bytes,
        final_newline,
        ..Clip::default()
    };
    let hidden = lines.saturating_sub((head + tail) as u64);
    if hidden > 1 || total > limits.budget as u64 {
        let mut cut = clip.clone();
        let ends = Ends {
            lines,
            total,
            final_newline,
        };
        cut_to(&mut cut, &first, &last, limits, ends, &decode);
        if cut.omitted_bytes > 0 {
            return cut;
        }
    }
    let rest = last.iter().filter(|ln| ln.idx >= first.len() as u64);
    clip.head = first
        .iter()
        .chain(rest)
        .map(|ln| decode(ln, limits.max_line))
        .collect();
    clip
}

/// The body's size, as [`cut_to`] needs it.
#[derive(Clone, Copy)]
struct Ends {
    lines: u64,
    total: u64,
    final_newline: bool,
}

/// Fill `clip`'s head, tail and what was left out between them, from the `first` lines and the
/// `last` ones (`decode` gives a line cut to a number of bytes).
fn cut_to(
    clip: &mut Clip,
    first: &[Ln],
    last: &VecDeque<Ln>,
    limits: Limits,
    e: Ends,
    decode: &dyn Fn(&Ln, usize) -> String,
) {
    let head_max = (limits.budget.saturating_mul(2) / 3) as u64;
    let tail_max = limits.budget as u64 - head_max;
    // Where a line ends in the body, its newline included (the last may have none).
    let end_of = |ln: &Ln| ln.pos + ln.len + u64::from(ln.idx + 1 < e.lines || e.final_newline);
    // The head: whole lines while they fit the head's budget, then the start of the next.
    let (mut head_idx, mut head_at) = (first.len() as u64, first.last().map_or(0, end_of));
    for ln in first {
        if end_of(ln) <= head_max {
            clip.head.push(decode(ln, limits.max_line));
            continue;
        }
        let room = (head_max - ln.pos) as usize;
        (head_idx, head_at) = (ln.idx, ln.pos);
        if room > 0 {
            let part = decode(ln, room.min(limits.max_line));
            head_at += part.len().min(room) as u64;
            clip.head_open = true;
            clip.head.push(part);
        }
        break;
    }
    // The tail: of the last `tail` lines, what fits the tail's budget and follows the head.
    let from = e.total.saturating_sub(tail_max).max(head_at);
    let (mut tail_idx, mut tail_at) = (e.lines, e.total);
    let mut started = false;
    for ln in last.iter().skip(last.len().saturating_sub(limits.tail)) {
        if ln.pos >= from {
            if !started {
                (tail_idx, tail_at, started) = (ln.idx, ln.pos, true);
            }
            clip.tail.push(decode(ln, limits.max_line));
        } else if from <= ln.pos + ln.len {
            let whole = decode(ln, usize::MAX);
            let off = ceil(&whole, (from - ln.pos) as usize);
            (tail_idx, tail_at, started) = (ln.idx, ln.pos + off as u64, true);
            clip.tail_open = true;
            let rest = &whole[off..];
            clip.tail
                .push(rest[..floor(rest, limits.max_line)].to_owned());
        }
    }
    if tail_at <= head_at {
        // Nothing between head and tail after all: the caller keeps the whole body.
        return;
    }
    // The rest of a line cut in the tail counts as a line.
    clip.omitted_lines = tail_idx - head_idx + u64::from(clip.tail_open);
    clip.omitted_bytes = tail_at - head_at;
}

/// The largest character boundary of `s` at or before `i`.
fn floor(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest character boundary of `s` at or after `i`.
fn ceil(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The lines of decoded text: (start, end, byte length) of each, without its `\n`; whether the
/// text ends with a newline.
fn text_lines(t: &str, mut f: impl FnMut(usize, usize, u64)) -> bool {
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', t.as_bytes()) {
        f(start, nl, (nl - start) as u64);
        start = nl + 1;
    }
    if start < t.len() {
        f(start, t.len(), (t.len() - start) as u64);
    }
    start == t.len() && start > 0
}

/// The lines of an escaped JSON string's inside: (raw start, raw end, decoded byte length);
/// whether it ends with a newline.
fn json_lines(raw: &str, mut f: impl FnMut(usize, usize, u64)) -> bool {
    let b = raw.as_bytes();
    let (mut start, mut pos, mut len) = (0usize, 0usize, 0u64);
    while let Some(off) = memchr::memchr(b'\\', &b[pos..]) {
        let i = pos + off;
        len += off as u64;
        match b.get(i + 1) {
            Some(b'n') => {
                f(start, i, len);
                start = i + 2;
                pos = i + 2;
                len = 0;
            }
            Some(b'u') => {
                let code = raw
                    .get(i + 2..i + 6)
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .unwrap_or(0xfffd);
                // A surrogate half is 2 of its pair's 4 bytes.
                len += match code {
                    0..=0x7f => 1,
                    0x80..=0x7ff => 2,
                    0xd800..=0xdfff => 2,
                    _ => 3,
                };
                pos = (i + 6).min(b.len());
            }
            _ => {
                len += 1;
                pos = (i + 2).min(b.len());
            }
        }
    }
    len += (b.len() - pos) as u64;
    if start < b.len() {
        f(start, b.len(), len);
    }
    start == b.len() && start > 0
}

/// One kept line, decoded and cut to `max` bytes.
fn line_of(src: &Source<'_>, start: usize, end: usize, max: usize) -> String {
    match src {
        Source::Text(t) => {
            let s = &t[start..end];
            s[..floor(s, max)].to_owned()
        }
        Source::Json(raw) => decode(&raw[start..end], max),
    }
}

/// Decode an escaped JSON string inside (valid JSON), keeping at most `max` bytes (whole
/// characters). Only a prefix is decoded: an escape takes at most 6 bytes of `raw` for each byte
/// it stands for, so `6 × max` bytes (plus one escape) decode to `max` bytes or more.
pub fn decode(raw: &str, max: usize) -> String {
    let take = floor(raw, max.saturating_mul(6).saturating_add(12));
    let mut out = Vec::with_capacity(take.min(max));
    crate::json::literal::decode(&raw.as_bytes()[..take], &mut out, None);
    let mut text = String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    text.truncate(floor(&text, max));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Vec<Source<'_>> {
        vec![Source::Text(Cow::Borrowed(s))]
    }

    proptest::proptest! {
        /// The bounded decode is serde_json's reading of the literal, cut to whole characters
        /// within `max` bytes.
        #[test]
        fn decode_is_a_json_reading_cut_to_max(
            text in r#"[a-z"\\\n\t\x01é😀日]{0,60}"#,
            max in 0usize..80,
        ) {
            let lit = serde_json::to_string(&text).unwrap();
            // Escapes of every width: \u00XX for controls, surrogate pairs, two-byte escapes.
            let lit = lit.replace('é', "\\u00e9").replace('😀', "\\ud83d\\ude00");
            let inside = &lit[1..lit.len() - 1];
            let whole: String = serde_json::from_str(&lit).unwrap();
            let mut want = whole.clone();
            want.truncate(floor(&whole, max));
            proptest::prop_assert_eq!(decode(inside, max), want);
        }
    }

    #[test]
    fn short_bodies_are_whole() {
        let c = clip(&text("a\nb\nc"), Limits::lines(1, 1, 100));
        assert_eq!(c.head, vec!["a", "b", "c"]);
        assert!(c.tail.is_empty());
        assert_eq!((c.lines, c.bytes, c.omitted_lines), (3, 5, 0));
        assert_eq!(clip(&text(""), Limits::lines(2, 2, 9)).lines, 0);
    }

    #[test]
    fn long_bodies_keep_head_and_tail_and_count_the_rest() {
        let body: String = (1..=10).map(|i| format!("line{i}\n")).collect();
        let c = clip(&text(&body), Limits::lines(2, 2, 100));
        assert_eq!(c.head, vec!["line1", "line2"]);
        assert_eq!(c.tail, vec!["line9", "line10"]);
        assert_eq!(c.omitted_lines, 6);
        // line3..line8: 6 × 5 bytes + 6 newlines.
        assert_eq!(c.omitted_bytes, 36);
        assert_eq!(c.lines, 10);
        assert_eq!(c.bytes, body.len() as u64 - 1);
    }

    #[test]
    fn json_strings_are_measured_escaped_and_decoded_only_where_kept() {
        let value = "é\t\"q\"\n日本\n\u{1f600}x\nmid\nmid\nlast\\";
        let json = serde_json::to_string(value).unwrap();
        let raw = &json[1..json.len() - 1];
        let c = clip(&[Source::Json(raw)], Limits::lines(1, 1, 100));
        let t = clip(&text(value), Limits::lines(1, 1, 100));
        assert_eq!(c, t);
        assert_eq!(c.head, vec!["é\t\"q\""]);
        assert_eq!(c.tail, vec!["last\\"]);
        assert_eq!(c.bytes, value.len() as u64);
        // Surrogate pairs written as escapes decode and count as one 4-byte character.
        let c = clip(
            &[Source::Json("a\\ud83d\\ude00b")],
            Limits::lines(3, 3, 100),
        );
        assert_eq!((c.head[0].as_str(), c.bytes), ("a\u{1f600}b", 6));
        assert_eq!(decode("abc\\u00e9def", 4), "abc");
        assert_eq!(decode("日本", 4), "日");
    }

    #[test]
    fn several_sources_end_lines_and_lines_are_cut() {
        let src = vec![Source::Json("one\\ntwo"), Source::Text("three".into())];
        let c = clip(&src, Limits::lines(5, 0, 2));
        assert_eq!(c.head, vec!["on", "tw", "th"]);
        assert_eq!(c.lines, 3);
    }

    #[test]
    fn a_budget_cuts_inside_lines_and_counts_the_rest() {
        let budget = |head, tail, budget| Limits {
            head,
            tail,
            max_line: usize::MAX,
            budget,
        };
        // One long line: its start and end kept, the middle counted as one line.
        let long = format!("{}\n", "é".repeat(100));
        let c = clip(&text(&long), budget(8, 4, 30));
        assert_eq!(
            (c.head_text(), c.tail_text()),
            ("é".repeat(10), format!("{}\n", "é".repeat(4)))
        );
        assert!(c.head_open && c.tail_open && c.final_newline);
        assert_eq!((c.omitted_lines, c.omitted_bytes), (1, 172));
        // Whole lines where they fit, the head's last and the tail's first cut.
        let body: String = (1..=20).map(|i| format!("line {i:02}\n")).collect();
        let c = clip(&text(&body), budget(8, 4, 60));
        assert_eq!(
            c.head_text(),
            "line 01\nline 02\nline 03\nline 04\nline 05\n"
        );
        assert_eq!(c.tail_text(), " 18\nline 19\nline 20\n");
        assert_eq!((c.omitted_lines, c.omitted_bytes), (13, 100));
        // A body within the budget and the line limits is whole.
        let c = clip(&text("a\nb\n"), budget(8, 4, 1200));
        assert_eq!(
            (c.head, c.omitted_bytes),
            (vec!["a".to_owned(), "b".to_owned()], 0)
        );
    }
}
