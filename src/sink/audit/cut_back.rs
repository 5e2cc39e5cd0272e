//! The audit log's file writer: it remembers where the last whole record ends and, when a write
//! fails (full disk, file size limit), cuts the file back there, so the log verifies and the
//! next run appends to it without manual repair.
//!
//! Every audit record ends with `\n` and no record contains one (JSON escapes it), so the end of
//! the last `\n` written in full is the end of the last whole record. After a failure the writer
//! refuses every later write: records still batched when the sink is dropped are not written
//! into the gap the cut left.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};

/// A file opened for appending records (the writer holds its lock, so nothing else appends).
#[derive(Debug)]
pub struct CutBack {
    f: File,
    /// File length after the bytes written so far.
    pos: u64,
    /// File length after the last whole record.
    whole: u64,
    failed: bool,
}

impl CutBack {
    /// Wrap `f`, whose current end is the end of its last whole record.
    pub fn new(mut f: File) -> io::Result<Self> {
        let pos = f.seek(SeekFrom::End(0))?;
        Ok(CutBack {
            f,
            pos,
            whole: pos,
            failed: false,
        })
    }

    /// `fdatasync` the file (`--fsync`); a failure cuts back like a failed write.
    pub fn sync_data(&mut self) -> io::Result<()> {
        let r = self.f.sync_data();
        self.check(r)
    }

    fn check<T>(&mut self, r: io::Result<T>) -> io::Result<T> {
        if r.is_err() && !self.failed {
            self.failed = true;
            // Best effort: when even this fails, `audit verify` still reports the torn record.
            if self.f.set_len(self.whole).is_ok() {
                self.pos = self.whole;
            }
        }
        r
    }
}

impl Write for CutBack {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.failed {
            return Err(io::Error::other(
                "an earlier write failed (the file was cut back to its last whole record)",
            ));
        }
        let r = self.f.write(buf);
        let n = self.check(r)?;
        if let Some(i) = memchr::memrchr(b'\n', &buf[..n]) {
            self.whole = self.pos + i as u64 + 1;
        }
        self.pos += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        let r = self.f.flush();
        self.check(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failing write (here: a file size limit imitated by a read-only handle after some
    /// writes) leaves the file ending at the last whole record.
    #[test]
    fn failure_cuts_back_to_last_newline() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("log");
        std::fs::write(&p, b"{\"a\":1}\n").unwrap();
        let f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        let mut w = CutBack::new(f).unwrap();
        w.write_all(b"{\"b\":2}\n{\"c\":").unwrap();
        // Simulate the failure at the next write.
        let r: io::Result<()> = Err(io::Error::from_raw_os_error(28));
        assert!(w.check(r).is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"{\"a\":1}\n{\"b\":2}\n");
        assert!(w.write_all(b"3}\n").is_err(), "no write after a failure");
        assert_eq!(std::fs::read(&p).unwrap(), b"{\"a\":1}\n{\"b\":2}\n");
    }
}
