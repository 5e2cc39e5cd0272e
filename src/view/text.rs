//! Untrusted text made safe to show, and measured in display cells: control characters
//! (ESC, CSI, OSC, the rest of C0 and C1, DEL), bidirectional overrides and line separators
//! become visible, inert notation; widths come from `unicode-width` (CJK and emoji take two
//! cells), and text is cut to a width without splitting a character sequence.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// One piece of untrusted text, as it should be shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Text that is safe as it is (no control or bidi characters).
    Plain(&'a str),
    /// A character that must not reach a terminal raw, in visible notation (`^[`, `<U+202E>`).
    Escaped(char),
    /// A tab.
    Tab,
    /// A line break (`\n`; a `\r` right before it is dropped).
    Newline,
}

/// Whether `c` must be made visible instead of written: C0 controls other than tab and
/// newline, DEL, C1 controls, bidirectional embeddings, overrides, isolates and marks, and
/// the Unicode line and paragraph separators.
pub fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The visible notation of an unsafe character: caret notation for C0 and DEL (`^[` for ESC,
/// `^M` for a lone CR), `<U+XXXX>` for the others.
pub fn notation(c: char) -> String {
    match c {
        '\u{0}'..='\u{1f}' => format!("^{}", char::from(c as u8 + 0x40)),
        '\u{7f}' => "^?".to_owned(),
        _ => format!("<U+{:04X}>", c as u32),
    }
}

/// Split untrusted `text` into [`Piece`]s, calling `f` for each, in order.
pub fn pieces<'a>(text: &'a str, mut f: impl FnMut(Piece<'a>)) {
    let mut start = 0;
    let mut iter = text.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        let piece = match c {
            '\n' => Piece::Newline,
            '\t' => Piece::Tab,
            '\r' if iter.peek().is_some_and(|&(_, n)| n == '\n') => {
                if start < i {
                    f(Piece::Plain(&text[start..i]));
                }
                start = i + 1;
                continue;
            }
            c if is_unsafe(c) => Piece::Escaped(c),
            _ => continue,
        };
        if start < i {
            f(Piece::Plain(&text[start..i]));
        }
        f(piece);
        start = i + c.len_utf8();
    }
    if start < text.len() {
        f(Piece::Plain(&text[start..]));
    }
}

/// `text` with every unsafe character in visible notation, tabs as `tab` spaces and line breaks
/// as `newline` (for one-line contexts, e.g. `" ⏎ "`).
pub fn sanitize_with(text: &str, newline: &str, tab: usize) -> String {
    let mut out = String::with_capacity(text.len());
    pieces(text, |p| match p {
        Piece::Plain(s) => out.push_str(s),
        Piece::Escaped(c) => out.push_str(&notation(c)),
        Piece::Tab => out.extend(std::iter::repeat_n(' ', tab)),
        Piece::Newline => out.push_str(newline),
    });
    out
}

/// `text` made safe for one line of a terminal: unsafe characters visible, line breaks as `⏎`.
pub fn one_line(text: &str) -> String {
    sanitize_with(text, " ⏎ ", 2)
}

/// Display width in terminal cells of safe text (no control characters).
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// The width of one character (0 for combining marks and joiners, 2 for wide ones).
pub fn char_width(c: char) -> usize {
    UnicodeWidthChar::width(c).unwrap_or(0)
}

/// The byte length of the longest prefix of safe text `s` that fits in `cells`, never ending
/// between a character and the zero-width marks, joiners and selectors that follow it, nor right
/// after a zero-width joiner.
pub fn fit(s: &str, cells: usize) -> usize {
    let mut used = 0;
    let mut end = 0;
    let mut prev_zwj = false;
    let mut prev_w = 0;
    for (i, c) in s.char_indices() {
        let w = char_width(c);
        // An emoji presentation selector widens a narrow character to two cells (as
        // `width` counts it).
        if c == '\u{fe0f}' && prev_w == 1 {
            if used + 1 > cells {
                return end;
            }
            used += 1;
            prev_w = 2;
            prev_zwj = false;
            continue;
        }
        prev_w = w;
        if w > 0 && !prev_zwj {
            // A break is allowed before this character.
            end = i;
            if used + w > cells {
                return end;
            }
        }
        used += w;
        prev_zwj = c == '\u{200d}';
    }
    if used <= cells { s.len() } else { end }
}

/// The byte offset where the longest suffix of safe text `s` that fits in `cells` starts (the
/// mirror of [`fit`]): never on a zero-width mark, joiner or selector, nor right after a
/// zero-width joiner, so no character is parted from its marks and no joined emoji is split.
/// It reads only as far back as the suffix reaches.
pub fn fit_tail(s: &str, cells: usize) -> usize {
    let mut used = 0;
    let mut start = s.len();
    // A U+FE0F after this character widens it to two cells when it is narrow (see [`fit`]).
    let mut before_fe0f = false;
    let mut it = s.char_indices().rev().peekable();
    while let Some((i, c)) = it.next() {
        if c == '\u{fe0f}' {
            before_fe0f = true;
            continue;
        }
        let w = match char_width(c) {
            1 if before_fe0f => 2,
            w => w,
        };
        before_fe0f = false;
        used += w;
        let after_zwj = it.peek().is_some_and(|&(_, p)| p == '\u{200d}');
        if w > 0 && !after_zwj {
            // A break is allowed before this character.
            if used > cells {
                return start;
            }
            start = i;
        }
    }
    if used <= cells { 0 } else { start }
}

/// Safe text `s` cut to at most `cells` cells, ending in `ellipsis` when it was cut.
pub fn truncate(s: &str, cells: usize, ellipsis: &str) -> String {
    if width(s) <= cells {
        return s.to_owned();
    }
    let room = cells.saturating_sub(width(ellipsis));
    let mut out = s[..fit(s, room)].to_owned();
    out.push_str(ellipsis);
    out
}

/// Untrusted `s` on one line (each line break a space) and cut to at most `cells` cells, ending
/// in `…` when cut; the renderer still makes it safe.
pub fn clip_line(s: &str, cells: usize) -> String {
    let one: String = s
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    truncate(&one, cells, "…")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(s: &str) -> Vec<Piece<'_>> {
        let mut v = Vec::new();
        pieces(s, |p| v.push(p));
        v
    }

    #[test]
    fn escapes_become_visible_and_crlf_is_a_newline() {
        assert_eq!(
            all("a\x1b[2Jb\r\nc\rd\te"),
            vec![
                Piece::Plain("a"),
                Piece::Escaped('\x1b'),
                Piece::Plain("[2Jb"),
                Piece::Newline,
                Piece::Plain("c"),
                Piece::Escaped('\r'),
                Piece::Plain("d"),
                Piece::Tab,
                Piece::Plain("e"),
            ]
        );
        let s = sanitize_with(
            "\x1b]52;c;SGVsbG8=\x07 \u{9b}31m \u{202e}evil \u{7f}",
            "/",
            1,
        );
        assert_eq!(s, "^[]52;c;SGVsbG8=^G <U+009B>31m <U+202E>evil ^?");
        assert!(!s.chars().any(is_unsafe));
        assert_eq!(one_line("a\nb"), "a ⏎ b");
        assert_eq!(notation('\0'), "^@");
    }

    #[test]
    fn widths_count_cells_and_cuts_keep_sequences_whole() {
        assert_eq!(width("日本語"), 6);
        assert_eq!(width("abc"), 3);
        assert_eq!(fit("日本語", 5), "日本".len());
        assert_eq!(fit("abc", 3), 3);
        // e + combining acute stays together.
        assert_eq!(fit("ae\u{301}b", 2), "ae\u{301}".len());
        // A ZWJ family is never split after the joiner.
        let fam = "a\u{1f468}\u{200d}\u{1f469}";
        assert!(fit(fam, 3) == 1 || fit(fam, 3) == fam.len());
        assert_eq!(truncate("hello world", 8, "…"), "hello w…");
        assert_eq!(truncate("日本語です", 7, "…"), "日本語…");
        assert_eq!(truncate("short", 8, "…"), "short");
        assert_eq!(clip_line("a\r\nb\nc", 9), "a  b c");
        assert_eq!(clip_line("日本語です\n", 7), "日本語…");
        // A presentation selector makes a narrow character two cells wide, as `width` counts.
        let info = "\u{2139}\u{fe0f}x";
        assert_eq!(width(info), 3);
        assert_eq!(fit(info, 2), "\u{2139}\u{fe0f}".len());
        assert_eq!(fit(info, 1), 0);
    }

    #[test]
    fn tails_keep_sequences_whole() {
        fn t(s: &str, cells: usize) -> &str {
            &s[fit_tail(s, cells)..]
        }
        assert_eq!(t("abcdef", 3), "def");
        assert_eq!(t("ab", 3), "ab");
        assert_eq!(t("日本語", 5), "本語");
        // Never a combining mark without its letter.
        assert_eq!(
            t("toolu_e\u{301}\u{301}\u{301}", 2),
            "_e\u{301}\u{301}\u{301}"
        );
        assert_eq!(t("\u{301}ab", 5), "\u{301}ab");
        // Never the tail of a joined emoji: all of it or none.
        let fam = "x\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}";
        assert_eq!(t(fam, 6), "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}");
        assert_eq!(t(fam, 5), "");
        // A presentation selector widens a narrow character, as in `fit`.
        assert_eq!(t("a\u{2139}\u{fe0f}", 2), "\u{2139}\u{fe0f}");
        assert_eq!(t("a\u{2139}\u{fe0f}", 1), "");
    }
}
