//! Lines of one replay input, with `tail -f` semantics when following: at the end of a file that
//! is still being written, a partial last line is kept and completed by later reads.

use std::io::{self, BufRead};

/// What [`LineFeed::next`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Got<'a> {
    /// A line without its `\n`; `false` for a last line without newline.
    Line(&'a [u8], bool),
    /// Following: nothing new yet (a partial line may be pending).
    Pending,
    /// Not following: the input is over.
    Eof,
}

/// A line reader over a buffered input.
pub struct LineFeed<R> {
    r: R,
    line: Vec<u8>,
    /// The last returned line is still in `line` (clear it before reading on).
    returned: bool,
    consumed: u64,
    number: u64,
}

impl<R: BufRead> LineFeed<R> {
    /// Lines of `r`.
    pub fn new(r: R) -> Self {
        LineFeed {
            r,
            line: Vec::new(),
            returned: false,
            consumed: 0,
            number: 0,
        }
    }

    /// Bytes returned so far (terminators included).
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// 1-based number of the last line returned.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The next line. When `follow` is set, the end of the input is [`Got::Pending`] (call again
    /// later) and an unterminated last line waits for its newline.
    pub fn next(&mut self, follow: bool) -> io::Result<Got<'_>> {
        if self.returned {
            self.line.clear();
            self.returned = false;
        }
        let n = loop {
            match self.r.read_until(b'\n', &mut self.line) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        self.consumed += n as u64;
        if self.line.last() == Some(&b'\n') {
            self.returned = true;
            self.number += 1;
            let l = self.line.len() - 1;
            return Ok(Got::Line(&self.line[..l], true));
        }
        if follow {
            return Ok(Got::Pending);
        }
        Ok(self
            .take_partial()
            .map_or(Got::Eof, |l| Got::Line(l, false)))
    }

    /// The pending partial line as a last line without newline (a followed input ended).
    pub fn take_partial(&mut self) -> Option<&[u8]> {
        if self.returned || self.line.is_empty() {
            return None;
        }
        self.returned = true;
        self.number += 1;
        Some(&self.line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn lines_and_unterminated_tail() {
        let mut f = LineFeed::new(&b"a\r\n\nlast"[..]);
        assert_eq!(f.next(false).unwrap(), Got::Line(b"a\r", true));
        assert_eq!(f.next(false).unwrap(), Got::Line(b"", true));
        assert_eq!(f.next(false).unwrap(), Got::Line(b"last", false));
        assert_eq!(f.next(false).unwrap(), Got::Eof);
        assert_eq!(f.consumed(), 8);
        assert_eq!(f.number(), 3);
    }

    #[test]
    fn following_completes_partial_lines() {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(tmp.path())
            .unwrap();
        let reader = std::fs::File::open(tmp.path()).unwrap();
        let mut f = LineFeed::new(io::BufReader::new(reader));
        assert_eq!(f.next(true).unwrap(), Got::Pending);
        file.write_all(b"one\ntw").unwrap();
        assert_eq!(f.next(true).unwrap(), Got::Line(b"one", true));
        assert_eq!(f.next(true).unwrap(), Got::Pending);
        file.write_all(b"o\nthr").unwrap();
        assert_eq!(f.next(true).unwrap(), Got::Line(b"two", true));
        assert_eq!(f.next(true).unwrap(), Got::Pending);
        assert_eq!(f.take_partial(), Some(&b"thr"[..]));
        assert_eq!(f.take_partial(), None);
    }
}
