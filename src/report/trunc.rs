//! Head-and-tail previews of long text: the first and last lines kept, the middle counted
//! ("… N more lines (M bytes) …"), with a byte cap so one huge line cannot defeat it.

/// A preview of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview<'a> {
    /// The start kept (the whole text when nothing was cut).
    pub head: &'a str,
    /// The end kept (empty when nothing was cut).
    pub tail: &'a str,
    /// Lines left out (counting a partial line as one).
    pub lines: usize,
    /// Bytes left out.
    pub bytes: usize,
}

impl Preview<'_> {
    /// Whether anything was left out.
    pub fn cut(&self) -> bool {
        self.bytes > 0
    }
}

/// Limits of a preview.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Lines kept at the start.
    pub head: usize,
    /// Lines kept at the end.
    pub tail: usize,
    /// At most this many bytes kept in all (split 2:1 between head and tail).
    pub bytes: usize,
}

/// Tool output and long inputs.
pub const BODY: Limits = Limits {
    head: 8,
    tail: 4,
    bytes: 1200,
};

/// The preview of `s` within `l`.
pub fn preview(s: &str, l: Limits) -> Preview<'_> {
    let total_lines = s.lines().count();
    if total_lines <= l.head + l.tail + 1 && s.len() <= l.bytes {
        return Preview {
            head: s,
            tail: "",
            lines: 0,
            bytes: 0,
        };
    }
    let head_max = l.bytes * 2 / 3;
    let tail_max = l.bytes - head_max;
    // The end of the first `l.head` lines, capped by bytes.
    let mut head_end = nth_line_end(s, l.head).min(floor(s, head_max));
    // The start of the last `l.tail` lines, capped by bytes.
    let mut tail_start =
        nth_line_start_from_end(s, l.tail).max(ceil(s, s.len().saturating_sub(tail_max)));
    if tail_start < head_end {
        tail_start = head_end;
    }
    if head_end == 0 && tail_start == s.len() {
        head_end = floor(s, head_max);
        tail_start = ceil(s, s.len() - tail_max.min(s.len() - head_end));
    }
    let mid = &s[head_end..tail_start];
    if mid.is_empty() {
        return Preview {
            head: s,
            tail: "",
            lines: 0,
            bytes: 0,
        };
    }
    Preview {
        head: &s[..head_end],
        tail: &s[tail_start..],
        lines: mid.lines().count().max(usize::from(!mid.is_empty())),
        bytes: mid.len(),
    }
}

fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Byte offset just after the `n`th newline (the whole text when it has fewer).
fn nth_line_end(s: &str, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    memchr::memchr_iter(b'\n', s.as_bytes())
        .nth(n - 1)
        .map_or(s.len(), |i| i + 1)
}

/// Byte offset where the last `n` lines start (0 when it has fewer).
fn nth_line_start_from_end(s: &str, n: usize) -> usize {
    if n == 0 {
        return s.len();
    }
    let body = s.strip_suffix('\n').unwrap_or(s);
    memchr::memrchr_iter(b'\n', body.as_bytes())
        .nth(n - 1)
        .map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_whole() {
        let p = preview("a\nb\n", BODY);
        assert_eq!((p.head, p.tail, p.cut()), ("a\nb\n", "", false));
    }

    #[test]
    fn head_and_tail_lines() {
        let s: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let p = preview(
            &s,
            Limits {
                head: 2,
                tail: 2,
                bytes: 10_000,
            },
        );
        assert_eq!(p.head, "line 1\nline 2\n");
        assert_eq!(p.tail, "line 99\nline 100\n");
        assert_eq!(p.lines, 96);
        assert_eq!(p.head.len() + p.bytes + p.tail.len(), s.len());
    }

    #[test]
    fn nothing_is_lost_at_any_size() {
        for n in 0..40 {
            for w in [1, 30, 200] {
                let s: String = (0..n)
                    .map(|i| format!("{}\n", "x".repeat(w + i % 3)))
                    .collect();
                let p = preview(&s, BODY);
                assert_eq!(
                    p.head.len() + p.bytes + p.tail.len(),
                    s.len(),
                    "{n} lines of {w}"
                );
                assert!(p.cut() || (p.head == s && p.tail.is_empty()));
            }
        }
    }

    #[test]
    fn one_huge_line_is_cut_by_bytes() {
        let s = "é".repeat(10_000);
        let p = preview(&s, BODY);
        assert!(p.cut() && p.head.len() <= 1600 && p.tail.len() <= 800);
        assert_eq!(p.head.len() + p.bytes + p.tail.len(), s.len());
    }
}
