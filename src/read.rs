//! Byte-line framing: turns any `Read` into `\n`-delimited lines in one reused buffer.
//!
//! Lines are bytes until something parses them, so UTF-8 split across reads, CRLF, a final line
//! without a newline and lines of any length are all fine. Memory is bounded by the longest line
//! (plus one read chunk), or by `max_line_bytes` when set.

use std::io::{self, Read};

/// Size of one `read` call. Large enough to amortize syscalls, small enough to stay in cache.
const CHUNK: usize = 256 * 1024;

/// Smallest buffer of [`LineReader::with_size_hint`].
const MIN_BUF: usize = 4 * 1024;

/// One framed input line.
#[derive(Debug)]
pub struct Line<'a> {
    /// The line's bytes without the `\n` and without one trailing `\r`.
    pub bytes: &'a [u8],
    /// 1-based line number.
    pub number: u64,
    /// Byte length of the line as it was in the input, terminator included.
    pub raw_len: u64,
    /// False when the input ended before a `\n` (the line may be truncated).
    pub terminated: bool,
    /// When `max_line_bytes` cut the line: its real length (terminator excluded).
    pub oversized: Option<u64>,
    /// The line ended in `\r` (before its `\n`, if any), which is not in `bytes`: whoever writes
    /// the line back (redact, the audit log's `raw`, a capture) puts it back ([`Line::eol`]).
    pub cr: bool,
}

impl<'a> Line<'a> {
    /// The line of `bytes` (without its `\n`) as it is framed for the normalizer: one trailing
    /// `\r` dropped (and remembered) unless the line was cut; `full_len` is its length before any
    /// cut, so `raw_len` is that plus the `\n`. The one framing of [`LineReader`] and of a
    /// replayed line (`replay::play::frame`).
    #[inline]
    pub fn framed(
        bytes: &'a [u8],
        number: u64,
        full_len: u64,
        terminated: bool,
        oversized: Option<u64>,
    ) -> Line<'a> {
        let (bytes, cr) = match bytes {
            [rest @ .., b'\r'] if oversized.is_none() => (rest, true),
            _ => (bytes, false),
        };
        Line {
            bytes,
            number,
            raw_len: full_len + u64::from(terminated),
            terminated,
            oversized,
            cr,
        }
    }

    /// The line's terminator as it was in the input: `\r\n`, `\n`, or for a last line without
    /// newline `\r` or nothing.
    pub fn eol(&self) -> &'static [u8] {
        eol(self.cr, self.terminated)
    }
}

/// The terminator of a line that ended in `\r` (`cr`) and/or `\n` (`terminated`).
pub fn eol(cr: bool, terminated: bool) -> &'static [u8] {
    match (cr, terminated) {
        (true, true) => b"\r\n",
        (false, true) => b"\n",
        (true, false) => b"\r",
        (false, false) => b"",
    }
}

/// The buffer a reader of an input of `size` bytes (when known) needs.
fn buffer_for(size: Option<u64>) -> usize {
    size.and_then(|n| usize::try_from(n).ok())
        .map_or(CHUNK, |n| n.saturating_add(1).clamp(MIN_BUF, CHUNK))
}

/// A `\n` line reader over any byte source.
pub struct LineReader<R> {
    src: R,
    buf: Vec<u8>,
    /// Start of unconsumed bytes in `buf`.
    pos: usize,
    /// End of valid bytes in `buf`.
    end: usize,
    eof: bool,
    number: u64,
    max_line: Option<usize>,
    /// Where [`LineReader::has_buffered_line`] found the next line's `\n`, so that
    /// [`LineReader::next_line`] does not search for it again.
    nl: Option<usize>,
}

impl<R: Read> LineReader<R> {
    /// A reader with no line-length limit.
    pub fn new(src: R) -> Self {
        Self::new_with(src, CHUNK)
    }

    fn new_with(src: R, buf: usize) -> Self {
        LineReader {
            src,
            buf: vec![0; buf],
            pos: 0,
            end: 0,
            eof: false,
            number: 0,
            max_line: None,
            nl: None,
        }
    }

    /// A reader for an input of `size` bytes when known (a regular file): its buffer is no larger
    /// than the input needs (plus one byte, to see the end without growing), so a batch of small
    /// files does not allocate and clear a whole chunk per file. A wrong size is harmless: the
    /// buffer grows as for any long line.
    pub fn with_size_hint(src: R, size: Option<u64>) -> Self {
        Self::new_with(src, buffer_for(size))
    }

    /// [`LineReader::with_size_hint`] reading into `buf`, the buffer of an earlier reader
    /// ([`LineReader::into_buffer`]): memory already touched is used again (grown if it is
    /// smaller than this input needs).
    pub fn reusing(src: R, mut buf: Vec<u8>, size: Option<u64>) -> Self {
        let want = buffer_for(size);
        if buf.len() < want {
            buf.resize(want, 0);
        }
        let mut r = Self::new_with(src, 0);
        r.buf = buf;
        r
    }

    /// The buffer, for [`LineReader::reusing`].
    pub fn into_buffer(self) -> Vec<u8> {
        self.buf
    }

    /// Cut lines longer than `max` bytes: only the first `max` bytes are kept and the rest is
    /// skipped without being stored.
    pub fn with_max_line(mut self, max: Option<usize>) -> Self {
        self.max_line = max;
        self
    }

    /// Number of lines returned so far.
    pub fn lines_read(&self) -> u64 {
        self.number
    }

    /// True when the next line can be returned without another `read` call, i.e. without
    /// possibly blocking. The pipeline flushes its output when this is false.
    pub fn has_buffered_line(&mut self) -> bool {
        if self.eof || self.nl.is_some() {
            return true;
        }
        self.nl = memchr::memchr(b'\n', &self.buf[self.pos..self.end]).map(|i| self.pos + i);
        self.nl.is_some()
    }

    fn fill(&mut self) -> io::Result<usize> {
        if self.end == self.buf.len() {
            if self.pos > 0 {
                self.buf.copy_within(self.pos..self.end, 0);
                self.end -= self.pos;
                self.pos = 0;
            } else {
                // A line longer than the buffer: grow by an eighth, so at most that much of the
                // (zero-filled, hence resident) buffer is unused while the line is held.
                let grow = (self.buf.len() / 8).max(CHUNK);
                self.buf.resize(self.buf.len() + grow, 0);
            }
        }
        loop {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(n) => {
                    self.end += n;
                    if n == 0 {
                        self.eof = true;
                    }
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The next line, or `None` at end of input.
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        // Where to resume the newline search, so long lines are scanned once.
        let mut scanned = 0usize;
        // Bytes of an oversized line that were dropped (not kept in the buffer).
        let mut dropped: u64 = 0;
        loop {
            let found = match self.nl.take() {
                // Found by `has_buffered_line` since the last line (so `scanned` is 0).
                Some(nl) => Some(nl - self.pos - scanned),
                None => memchr::memchr(b'\n', &self.buf[self.pos + scanned..self.end]),
            };
            if let Some(i) = found {
                let start = self.pos;
                let nl = self.pos + scanned + i;
                self.pos = nl + 1;
                let mut line_end = nl;
                if let Some(max) = self.max_line
                    && nl - start > max
                {
                    dropped += (nl - start - max) as u64;
                    line_end = start + max;
                }
                return Ok(Some(self.make_line(start, line_end, dropped, true)));
            }
            scanned = self.end - self.pos;
            if let Some(max) = self.max_line
                && scanned > max
            {
                // Keep the first `max` bytes, drop the rest of what is buffered.
                let keep_end = self.pos + max;
                dropped += (self.end - keep_end) as u64;
                self.end = keep_end;
                scanned = max;
            }
            if self.eof {
                if self.end == self.pos && dropped == 0 {
                    return Ok(None);
                }
                let start = self.pos;
                let end = self.end;
                self.pos = self.end;
                return Ok(Some(self.make_line(start, end, dropped, false)));
            }
            self.fill()?;
        }
    }

    fn make_line(&mut self, start: usize, end: usize, dropped: u64, terminated: bool) -> Line<'_> {
        self.number += 1;
        let full_len = (end - start) as u64 + dropped;
        let oversized = (dropped > 0).then_some(full_len);
        Line::framed(
            &self.buf[start..end],
            self.number,
            full_len,
            terminated,
            oversized,
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A reader that returns at most `n` bytes per call, to exercise re-chunking.
    pub(crate) struct Trickle<'a>(pub(crate) &'a [u8], pub(crate) usize);
    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.1.min(self.0.len()).min(out.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn lines(input: &[u8], chunk: usize, max: Option<usize>) -> Vec<(Vec<u8>, bool, Option<u64>)> {
        let mut r = LineReader::new(Trickle(input, chunk)).with_max_line(max);
        let mut v = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            v.push((l.bytes.to_vec(), l.terminated, l.oversized));
        }
        v
    }

    #[test]
    fn framing_edge_cases() {
        let got = lines(b"a\r\n\nb\r\r\nc", 1, None);
        assert_eq!(
            got,
            vec![
                (b"a".to_vec(), true, None),
                (b"".to_vec(), true, None),
                (b"b\r".to_vec(), true, None),
                (b"c".to_vec(), false, None),
            ]
        );
        assert!(lines(b"", 3, None).is_empty());
        assert_eq!(lines(b"\n", 3, None).len(), 1);
    }

    /// `n` numbered lines of varied length (up to `width` more bytes) ending in `end`, and a last
    /// line without one.
    fn numbered(n: usize, width: usize, end: &str) -> Vec<u8> {
        let mut input = Vec::new();
        for i in 0..n {
            input.extend_from_slice(format!("{i} {}{end}", "w".repeat(i % width)).as_bytes());
        }
        input.extend_from_slice(b"last");
        input
    }

    #[test]
    fn asking_for_a_buffered_line_changes_no_line() {
        let input = numbered(3000, 50, "\r\n");
        for max in [None, Some(20)] {
            let want = lines(&input, 333, max);
            let mut r = LineReader::new(Trickle(&input, 333)).with_max_line(max);
            let mut got = Vec::new();
            loop {
                // Ask once, twice or not at all before each line.
                for _ in 0..got.len() % 3 {
                    r.has_buffered_line();
                }
                let Some(l) = r.next_line().unwrap() else {
                    break;
                };
                got.push((l.bytes.to_vec(), l.terminated, l.oversized));
            }
            assert_eq!(got, want, "max {max:?}");
        }
    }

    /// Every line `r` gives: bytes and whether terminated.
    fn drain<R: Read>(r: &mut LineReader<R>) -> Vec<(Vec<u8>, bool)> {
        let mut v = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            v.push((l.bytes.to_vec(), l.terminated));
        }
        v
    }

    #[test]
    fn a_size_hint_only_sizes_the_buffer() {
        let input = numbered(20_000, 300, "\n");
        let want = drain(&mut LineReader::new(&input[..]));
        // A reused buffer, larger or smaller than the input, with stale bytes in it.
        let mut buf = vec![b'z'; 7];
        for hint in [10, 100 << 20, input.len() as u64] {
            let mut r = LineReader::reusing(Trickle(&input, 5000), buf, Some(hint));
            assert_eq!(drain(&mut r), want, "reused, hint {hint}");
            buf = r.into_buffer();
        }
        // Right, too small (the file grew) and too large.
        for hint in [input.len() as u64, 10, 100 << 20] {
            let mut r = LineReader::with_size_hint(Trickle(&input, 5000), Some(hint));
            assert_eq!(drain(&mut r), want, "hint {hint}");
        }
    }

    #[test]
    fn long_lines_are_cut_when_limited() {
        let mut input = vec![b'x'; 1_000_000];
        input.extend_from_slice(b"\nok\n");
        let got = lines(&input, 70_000, Some(10));
        assert_eq!(got[0].0, vec![b'x'; 10]);
        assert_eq!(got[0].2, Some(1_000_000));
        assert_eq!(got[1].0, b"ok".to_vec());
        let got = lines(&input, 70_000, None);
        assert_eq!(got[0].0.len(), 1_000_000);
    }
}
