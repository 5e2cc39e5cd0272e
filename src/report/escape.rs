//! Escaping for every context the report writes untrusted text into: HTML text and attribute
//! values, URLs (http, https and mailto only), and JSON inside a `<script>` element.

use std::fmt::Write as _;

/// Append `s` as HTML text (element content; not for attribute values, see [`attr`]).
/// Control characters other than tab and newline (a carriage return too, unless a newline follows
/// it: a lone one would read as a line break), the bidirectional controls that can make text read
/// differently from what it is, and the line and paragraph separators are shown as visible
/// `␛`-style pictures (`␍`) or `[U+202E]` rather than written raw.
pub fn text(out: &mut String, s: &str) {
    escape(out, s, false);
}

/// Append `s` as a quoted attribute value (quotes escaped too).
pub fn attr(out: &mut String, s: &str) {
    escape(out, s, true);
}

fn escape(out: &mut String, s: &str, quotes: bool) {
    let mut last = 0;
    for (i, c) in s.char_indices() {
        let rep: Option<&str> = match c {
            '&' => Some("&amp;"),
            '<' => Some("&lt;"),
            '>' => Some("&gt;"),
            '"' if quotes => Some("&quot;"),
            '\'' if quotes => Some("&#39;"),
            _ => None,
        };
        let crlf = c == '\r' && s.as_bytes().get(i + 1) == Some(&b'\n');
        let special = rep.is_some() || (!crlf && is_hidden(c));
        if !special {
            continue;
        }
        out.push_str(&s[last..i]);
        last = i + c.len_utf8();
        match rep {
            Some(r) => out.push_str(r),
            None => picture(out, c),
        }
    }
    out.push_str(&s[last..]);
}

/// `s` escaped as HTML text, as a new string.
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    text(&mut out, s);
    out
}

/// A character that must not reach the page raw: what no view shows raw
/// ([`crate::view::text::is_unsafe`]: controls, bidirectional controls, line and paragraph
/// separators). The caller lets a `\r` before a `\n` through: HTML reads the pair as one line
/// break, as the text means.
fn is_hidden(c: char) -> bool {
    crate::view::text::is_unsafe(c)
}

fn picture(out: &mut String, c: char) {
    match c {
        '\0'..='\u{1f}' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
        '\u{7f}' => out.push('\u{2421}'),
        _ => {
            let _ = write!(out, "[U+{:04X}]", c as u32);
        }
    }
}

/// The URL if it may be a link target: `http:`, `https:` or `mailto:` (case-insensitive,
/// after trimming), without whitespace or control characters inside; else `None` (the
/// caller shows it as text).
pub fn safe_url(u: &str) -> Option<&str> {
    let u = u.trim();
    let lower = u.get(..8).unwrap_or(u).to_ascii_lowercase();
    let ok = lower.starts_with("http://")
        || lower.starts_with("https://")
        || lower.starts_with("mailto:");
    let clean = !u.chars().any(|c| c.is_whitespace() || c.is_control());
    (ok && clean && u.len() > 7).then_some(u)
}

/// A link to `url` with `label`, or the label as text when the URL is not allowed. Links
/// never send a referrer or give the opened page a handle on this one.
pub fn link(out: &mut String, url: &str, label: &str) {
    match safe_url(url) {
        Some(u) => {
            out.push_str("<a rel=\"noopener noreferrer nofollow\" href=\"");
            attr(out, u);
            out.push_str("\">");
            text(out, label);
            out.push_str("</a>");
        }
        None => text(out, label),
    }
}

/// JSON text made safe inside a `<script>` element: `<`, `>`, `&` and U+2028/U+2029 as
/// `\u` escapes (the JSON value is unchanged; no `</script>` or `<!--` can appear).
pub fn script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_becomes_text() {
        assert_eq!(
            html(r#"<script>alert('x')</script>&""#),
            "&lt;script&gt;alert('x')&lt;/script&gt;&amp;\""
        );
        let mut a = String::new();
        attr(&mut a, r#"x" onload='y'"#);
        assert_eq!(a, "x&quot; onload=&#39;y&#39;");
        assert_eq!(html("a\u{1b}[2Jb\u{202e}c"), "a\u{241b}[2Jb[U+202E]c");
        assert_eq!(html("tab\tnl\n"), "tab\tnl\n");
    }

    #[test]
    fn a_lone_carriage_return_is_a_picture() {
        assert_eq!(html("a\rb"), "a\u{240d}b");
        assert_eq!(html("a\r"), "a\u{240d}");
        assert_eq!(html("a\r\r\nb"), "a\u{240d}\r\nb");
        let mut a = String::new();
        attr(&mut a, "m\rx");
        assert_eq!(a, "m\u{240d}x");
    }

    #[test]
    fn only_web_and_mail_links() {
        assert_eq!(safe_url(" https://x.org/a "), Some("https://x.org/a"));
        assert_eq!(safe_url("MAILTO:a@b.c"), Some("MAILTO:a@b.c"));
        assert_eq!(safe_url("javascript:alert(1)"), None);
        assert_eq!(safe_url("jav\tascript:alert(1)"), None);
        assert_eq!(safe_url("data:text/html,<script>"), None);
        assert_eq!(safe_url("https://a b"), None);
        let mut s = String::new();
        link(&mut s, "javascript:alert(1)", "x<");
        assert_eq!(s, "x&lt;");
    }

    #[test]
    fn script_json_cannot_close_the_element() {
        let j = serde_json::to_string("</script><!--\u{2028}&").unwrap();
        let s = script_json(&j);
        assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'));
        let back: String = serde_json::from_str(&s).unwrap();
        assert_eq!(back, "</script><!--\u{2028}&");
    }
}
