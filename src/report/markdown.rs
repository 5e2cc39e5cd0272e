//! A small, safe markdown renderer for model text: fenced code, headings, lists, quotes,
//! paragraphs, inline code, bold and links. Every character of the source is escaped; raw HTML
//! in the markdown stays text; only http, https and mailto links become links.

use super::escape::{link, safe_url, text};

/// Render `md` as HTML into `out`.
pub fn render(out: &mut String, md: &str) {
    let mut lines = md.lines().peekable();
    let mut para: Vec<&str> = Vec::new();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if let Some(fence) = fence_of(t) {
            flush(out, &mut para);
            out.push_str("<pre class=\"code\">");
            for l in lines.by_ref() {
                if l.trim_start().starts_with(fence) {
                    break;
                }
                text(out, l);
                out.push('\n');
            }
            out.push_str("</pre>");
        } else if t.is_empty() {
            flush(out, &mut para);
        } else if let Some((level, rest)) = heading(t) {
            flush(out, &mut para);
            out.push_str(&format!("<h{level} class=\"mdh\">"));
            inline(out, rest);
            out.push_str(&format!("</h{level}>"));
        } else if t == "---" || t == "***" || t == "___" {
            flush(out, &mut para);
            out.push_str("<hr>");
        } else if let Some(rest) = t.strip_prefix("> ").or_else(|| (t == ">").then_some("")) {
            flush(out, &mut para);
            out.push_str("<blockquote>");
            inline(out, rest);
            while let Some(r) = lines.peek().and_then(|l| l.trim_start().strip_prefix('>')) {
                out.push('\n');
                inline(out, r.strip_prefix(' ').unwrap_or(r));
                lines.next();
            }
            out.push_str("</blockquote>");
        } else if let Some((ordered, item)) = list_item(t) {
            flush(out, &mut para);
            let tag = if ordered { "ol" } else { "ul" };
            out.push_str(&format!("<{tag}><li>"));
            inline(out, item);
            while let Some(next) = lines.peek() {
                let nt = next.trim_start();
                match list_item(nt) {
                    Some((o, it)) if o == ordered => {
                        out.push_str("</li><li>");
                        inline(out, it);
                    }
                    None if !nt.is_empty()
                        && next.starts_with([' ', '\t'])
                        && fence_of(nt).is_none() =>
                    {
                        out.push('\n');
                        inline(out, nt);
                    }
                    _ => break,
                }
                lines.next();
            }
            out.push_str(&format!("</li></{tag}>"));
        } else {
            para.push(line);
        }
    }
    flush(out, &mut para);
}

fn fence_of(t: &str) -> Option<&'static str> {
    if t.starts_with("```") {
        Some("```")
    } else if t.starts_with("~~~") {
        Some("~~~")
    } else {
        None
    }
}

fn heading(t: &str) -> Option<(usize, &str)> {
    let level = t.bytes().take_while(|&b| b == b'#').count();
    let rest = t[level..].strip_prefix(' ')?;
    (1..=6)
        .contains(&level)
        .then(|| (level.clamp(3, 6), rest.trim_end_matches([' ', '#'])))
}

fn list_item(t: &str) -> Option<(bool, &str)> {
    if let Some(r) = t
        .strip_prefix("- ")
        .or_else(|| t.strip_prefix("* "))
        .or_else(|| t.strip_prefix("+ "))
    {
        return Some((false, r));
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && digits < 10 {
        let r = &t[digits..];
        return r
            .strip_prefix(". ")
            .or_else(|| r.strip_prefix(") "))
            .map(|r| (true, r));
    }
    None
}

fn flush(out: &mut String, para: &mut Vec<&str>) {
    if para.is_empty() {
        return;
    }
    out.push_str("<p>");
    for (i, l) in para.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        inline(out, l);
    }
    out.push_str("</p>");
    para.clear();
}

/// Inline markup: `code`, **bold**, `[label](url)` and bare http(s) URLs; the rest as text.
pub fn inline(out: &mut String, s: &str) {
    let mut rest = s;
    while !rest.is_empty() {
        let next = rest.find(['`', '*', '[', 'h']).unwrap_or(rest.len());
        text(out, &rest[..next]);
        rest = &rest[next..];
        if rest.is_empty() {
            break;
        }
        if let Some(r) = rest.strip_prefix('`')
            && let Some(end) = r.find('`')
        {
            out.push_str("<code>");
            text(out, &r[..end]);
            out.push_str("</code>");
            rest = &r[end + 1..];
        } else if let Some(r) = rest.strip_prefix("**")
            && let Some(end) = r.find("**").filter(|&e| e > 0)
        {
            out.push_str("<strong>");
            text(out, &r[..end]);
            out.push_str("</strong>");
            rest = &r[end + 2..];
        } else if let Some((label, url, used)) = md_link(rest) {
            link(out, url, label);
            rest = &rest[used..];
        } else if let Some(len) = bare_url(rest) {
            link(out, &rest[..len], &rest[..len]);
            rest = &rest[len..];
        } else {
            let c = rest.chars().next().expect("not empty");
            text(out, &rest[..c.len_utf8()]);
            rest = &rest[c.len_utf8()..];
        }
    }
}

/// `[label](url)` at the start of `s`: label, url and bytes used.
fn md_link(s: &str) -> Option<(&str, &str, usize)> {
    let r = s.strip_prefix('[')?;
    let close = r.find(']')?;
    let label = &r[..close];
    let after = r[close + 1..].strip_prefix('(')?;
    let end = after.find(')')?;
    let url = &after[..end];
    (!label.contains('[') && !url.contains(char::is_whitespace)).then_some((
        label,
        url,
        1 + close + 2 + end + 1,
    ))
}

/// Length of a bare `http://` or `https://` URL at the start of `s`, if one is there.
fn bare_url(s: &str) -> Option<usize> {
    if !(s.starts_with("http://") || s.starts_with("https://")) {
        return None;
    }
    let mut len = s
        .find(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '\'' | '`'))
        .unwrap_or(s.len());
    while len > 0
        && matches!(
            s.as_bytes()[len - 1],
            b'.' | b',' | b')' | b';' | b':' | b'!' | b'?'
        )
    {
        len -= 1;
    }
    safe_url(&s[..len]).map(|_| len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(s: &str) -> String {
        let mut o = String::new();
        render(&mut o, s);
        o
    }

    #[test]
    fn blocks_and_inline() {
        assert_eq!(
            md("# T\n\nhi **b** `c`"),
            "<h3 class=\"mdh\">T</h3><p>hi <strong>b</strong> <code>c</code></p>"
        );
        assert_eq!(
            md("```rs\n<a>\n```"),
            "<pre class=\"code\">&lt;a&gt;\n</pre>"
        );
        assert_eq!(md("- a\n- b"), "<ul><li>a</li><li>b</li></ul>");
        assert_eq!(
            md("see https://x.org/a."),
            "<p>see <a rel=\"noopener noreferrer nofollow\" href=\"https://x.org/a\">https://x.org/a</a>.</p>"
        );
    }

    #[test]
    fn hostile_markdown_stays_text() {
        let o =
            md("<script>alert(1)</script> [x](javascript:alert(1)) <img src=x onerror=alert(1)>");
        assert!(
            !o.contains("<script") && !o.contains("<img") && !o.contains("href=\"javascript"),
            "{o}"
        );
        assert!(o.contains("&lt;script&gt;"));
    }
}
