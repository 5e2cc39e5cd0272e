//! Long bodies cut to their head and tail lines, with what was left out counted ("… N more
//! lines (M bytes) …"). Works on plain text and on the still-escaped inside of a JSON string
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

/// The kept lines of a body and the size of what was left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Clip {
    /// The first lines (each at most the line limit in bytes, cut at a character boundary).
    pub head: Vec<String>,
    /// The last lines (empty when nothing was left out).
    pub tail: Vec<String>,
    /// Lines between head and tail that were left out.
    pub omitted_lines: u64,
    /// Their decoded size in bytes (UTF-8, newlines included).
    pub omitted_bytes: u64,
    /// Lines in the whole body (a last line without newline counts; an empty body has none).
    pub lines: u64,
    /// Decoded bytes of the whole body.
    pub bytes: u64,
}

/// Cut the lines of `sources` (each source ends a line) to `head` first and `tail` last lines;
/// when at most `head + tail + 1` lines are there, all are kept (in `head`). Each kept line is
/// cut to `max_line` bytes.
pub fn clip(sources: &[Source<'_>], head: usize, tail: usize, max_line: usize) -> Clip {
    let mut first: Vec<(Span, u64)> = Vec::new();
    let mut last: VecDeque<(Span, u64)> = VecDeque::new();
    let (mut lines, mut bytes) = (0u64, 0u64);
    let mut on_line = |span: Span, len: u64| {
        lines += 1;
        bytes += len;
        if first.len() < head {
            first.push((span, len));
        } else {
            last.push_back((span, len));
            if last.len() > tail + 1 {
                last.pop_front();
            }
        }
    };
    for (src, s) in sources.iter().enumerate() {
        match s {
            Source::Text(t) => {
                text_lines(t, |start, end, len| on_line(Span { src, start, end }, len))
            }
            Source::Json(raw) => json_lines(raw, |start, end, len| {
                on_line(Span { src, start, end }, len)
            }),
        }
    }
    // Newlines between lines count as bytes too.
    let line_bytes = bytes;
    let bytes = bytes + lines.saturating_sub(1);
    let decode = |sp: &Span| line_of(&sources[sp.src], sp.start, sp.end, max_line);
    let mut clip = Clip {
        head: first.iter().map(|(sp, _)| decode(sp)).collect(),
        lines,
        bytes,
        ..Clip::default()
    };
    let hidden = lines.saturating_sub((head + tail) as u64);
    if hidden <= 1 {
        clip.head.extend(last.iter().map(|(sp, _)| decode(sp)));
        return clip;
    }
    let shown: Vec<_> = last.iter().skip(last.len().saturating_sub(tail)).collect();
    let shown_bytes: u64 = first
        .iter()
        .chain(shown.iter().copied())
        .map(|(_, len)| len)
        .sum();
    clip.tail = shown.iter().map(|(sp, _)| decode(sp)).collect();
    clip.omitted_lines = hidden;
    // What is left out: the lines' bytes and their newlines.
    clip.omitted_bytes = line_bytes.saturating_sub(shown_bytes) + hidden;
    clip
}

/// The lines of decoded text: (start, end, byte length) of each, without its `\n`.
fn text_lines(t: &str, mut f: impl FnMut(usize, usize, u64)) {
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', t.as_bytes()) {
        f(start, nl, (nl - start) as u64);
        start = nl + 1;
    }
    if start < t.len() {
        f(start, t.len(), (t.len() - start) as u64);
    }
}

/// The lines of an escaped JSON string's inside: (raw start, raw end, decoded byte length).
fn json_lines(raw: &str, mut f: impl FnMut(usize, usize, u64)) {
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
}

/// One kept line, decoded and cut to `max` bytes.
fn line_of(src: &Source<'_>, start: usize, end: usize, max: usize) -> String {
    match src {
        Source::Text(t) => {
            let s = &t[start..end];
            let mut cut = s.len().min(max);
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            s[..cut].to_owned()
        }
        Source::Json(raw) => decode(&raw[start..end], max),
    }
}

/// Decode an escaped JSON string inside (valid JSON), stopping after `max` bytes.
pub fn decode(raw: &str, max: usize) -> String {
    let mut out = String::with_capacity(raw.len().min(max));
    let b = raw.as_bytes();
    let mut pos = 0;
    while out.len() < max {
        let Some(off) = memchr::memchr(b'\\', &b[pos..]) else {
            push_cut(&mut out, &raw[pos..], max);
            break;
        };
        push_cut(&mut out, &raw[pos..pos + off], max);
        let i = pos + off;
        let (c, next) = match b.get(i + 1) {
            Some(b'u') => {
                let hex = |at: usize| {
                    raw.get(at..at + 4)
                        .and_then(|h| u32::from_str_radix(h, 16).ok())
                };
                let hi = hex(i + 2).unwrap_or(0xfffd);
                if (0xd800..0xdc00).contains(&hi)
                    && raw.get(i + 6..i + 8) == Some("\\u")
                    && let Some(lo @ 0xdc00..=0xdfff) = hex(i + 8)
                {
                    let c = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
                    (char::from_u32(c).unwrap_or('\u{fffd}'), i + 12)
                } else {
                    (char::from_u32(hi).unwrap_or('\u{fffd}'), i + 6)
                }
            }
            Some(&e) => (
                match e {
                    b'n' => '\n',
                    b't' => '\t',
                    b'r' => '\r',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    other => char::from(other),
                },
                i + 2,
            ),
            None => break,
        };
        if out.len() + c.len_utf8() > max {
            break;
        }
        out.push(c);
        pos = next.min(b.len());
    }
    out
}

fn push_cut(out: &mut String, s: &str, max: usize) {
    let room = max.saturating_sub(out.len());
    let mut cut = s.len().min(room);
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    out.push_str(&s[..cut]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Vec<Source<'_>> {
        vec![Source::Text(Cow::Borrowed(s))]
    }

    #[test]
    fn short_bodies_are_whole() {
        let c = clip(&text("a\nb\nc"), 1, 1, 100);
        assert_eq!(c.head, vec!["a", "b", "c"]);
        assert!(c.tail.is_empty());
        assert_eq!((c.lines, c.bytes, c.omitted_lines), (3, 5, 0));
        assert_eq!(clip(&text(""), 2, 2, 9).lines, 0);
    }

    #[test]
    fn long_bodies_keep_head_and_tail_and_count_the_rest() {
        let body: String = (1..=10).map(|i| format!("line{i}\n")).collect();
        let c = clip(&text(&body), 2, 2, 100);
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
        let c = clip(&[Source::Json(raw)], 1, 1, 100);
        let t = clip(&text(value), 1, 1, 100);
        assert_eq!(c, t);
        assert_eq!(c.head, vec!["é\t\"q\""]);
        assert_eq!(c.tail, vec!["last\\"]);
        assert_eq!(c.bytes, value.len() as u64);
        // Surrogate pairs written as escapes decode and count as one 4-byte character.
        let c = clip(&[Source::Json("a\\ud83d\\ude00b")], 3, 3, 100);
        assert_eq!((c.head[0].as_str(), c.bytes), ("a\u{1f600}b", 6));
        assert_eq!(decode("abc\\u00e9def", 4), "abc");
        assert_eq!(decode("日本", 4), "日");
    }

    #[test]
    fn several_sources_end_lines_and_lines_are_cut() {
        let src = vec![Source::Json("one\\ntwo"), Source::Text("three".into())];
        let c = clip(&src, 5, 0, 2);
        assert_eq!(c.head, vec!["on", "tw", "th"]);
        assert_eq!(c.lines, 3);
    }
}
