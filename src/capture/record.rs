//! Writing captures: [`Recorder`] (header, stdout/stderr lines with arrival offsets, end) and
//! [`Tee`], a `Read` adapter that records every line passing through it on its way to the
//! pipeline — so recording cannot change what the pipeline sees.
//!
//! Each record goes to the writer whole; the recorder flushes after every batch of lines
//! ([`Tee`]: after each `read`), so a `replay --follow` on the capture sees lines as they come.
//!
//! ## Wiring it into a producer (`spawn --record FILE`)
//!
//! ```
//! use boo_normalize::capture::{End, Header, record::Recorder};
//! use std::time::Instant;
//! let mut header = Header::now("spawn");
//! header.argv = Some(vec!["claude".into(), "-p".into(), "--".into(), "hello".into()]);
//! let mut rec = Recorder::new(Vec::new(), &header, Instant::now()).unwrap();
//! rec.stdout_line(br#"{"type":"result"}"#, true, Instant::now()).unwrap(); // each stdout line
//! rec.stderr_line(b"warning", false, Instant::now()).unwrap(); // each stderr line
//! rec.flush().unwrap(); // after each batch
//! let end = End { exit_code: Some(0), ..Default::default() };
//! let bytes = rec.end(end, Instant::now()).unwrap(); // at_us is filled in from the instant
//! assert_eq!(String::from_utf8(bytes).unwrap().lines().count(), 4);
//! ```

use std::io::{self, Read, Write};
use std::time::Instant;

use super::{End, Header, write_err, write_out};
use crate::json::Out;
use crate::read::Line;
use crate::transform::{LineTransform, Transformed};

/// Rewrites applied to lines before they are recorded (redaction): one for stdout, one for
/// stderr, each with its own state.
struct Rewrite {
    stdout: Box<dyn LineTransform>,
    stderr: Box<dyn LineTransform>,
    out: Transformed,
}

/// Writes one capture.
pub struct Recorder<W: Write> {
    w: W,
    start: Instant,
    start_unix: i64,
    last_at: u64,
    rec: Out,
    scratch: Vec<u8>,
    error: Option<io::Error>,
    rewrite: Option<Rewrite>,
}

impl<W: Write> Recorder<W> {
    /// Record every stdout and stderr line as rewritten by these transforms (`--redact`: the
    /// capture never holds what the envelope does not). Lines a transform releases late (held
    /// back delta text) are recorded when it releases them, with the time of that moment.
    pub fn rewrite(&mut self, stdout: Box<dyn LineTransform>, stderr: Box<dyn LineTransform>) {
        self.rewrite = Some(Rewrite {
            stdout,
            stderr,
            out: Transformed::default(),
        });
    }

    /// Run `line` through the stdout (`err` false) or stderr rewrite and write each result.
    fn rewritten(&mut self, line: &Line<'_>, err: bool, us: u64) -> io::Result<()> {
        let mut rw = self.rewrite.take().expect("caller checked");
        rw.out.clear();
        if err {
            rw.stderr.line(line, &mut rw.out);
        } else {
            rw.stdout.line(line, &mut rw.out);
        }
        let mut res = Ok(());
        for i in 0..rw.out.len() {
            let (mut bytes, _, origin) = rw.out.get(i, line.bytes);
            if origin.map_or(line.cr, |o| o.cr) {
                // The line's `\r` goes back, as an unredacted capture keeps it.
                self.scratch.clear();
                self.scratch.extend_from_slice(bytes);
                self.scratch.push(b'\r');
                bytes = &self.scratch;
            }
            if err {
                write_err(&mut self.rec, us, bytes, false);
            } else {
                write_out(&mut self.rec, us, bytes, line.terminated, None);
            }
            res = self.put();
            if res.is_err() {
                break;
            }
        }
        self.rewrite = Some(rw);
        res
    }

    /// A whole stdout line (without its `\n`) framed as `LineReader` frames it: a last `\r` is
    /// left out of `bytes` (and put back when the line is written).
    fn plain_line(bytes: &[u8], terminated: bool) -> Line<'_> {
        let raw_len = bytes.len() as u64 + u64::from(terminated);
        let (bytes, cr) = match bytes {
            [rest @ .., b'\r'] => (rest, true),
            _ => (bytes, false),
        };
        Line {
            bytes,
            number: 0,
            raw_len,
            terminated,
            oversized: None,
            cr,
        }
    }
    /// Write `header` to `w` (pass a buffered writer; the recorder flushes at batch ends).
    /// Offsets are measured from `start`, which should be taken with the header's start time.
    pub fn new(w: W, header: &Header, start: Instant) -> io::Result<Self> {
        let mut r = Recorder {
            w,
            start,
            start_unix: header.start_unix_us,
            last_at: 0,
            rec: Out::default(),
            scratch: Vec::new(),
            error: None,
            rewrite: None,
        };
        header.write(&mut r.rec);
        if let Err(e) = r.put().and_then(|()| r.flush()) {
            return Err(r.error.take().unwrap_or(e));
        }
        Ok(r)
    }

    /// µs from the start to `at` (never less than the previous record's).
    pub fn offset(&mut self, at: Instant) -> u64 {
        let us = at.saturating_duration_since(self.start).as_micros();
        let us = u64::try_from(us).unwrap_or(u64::MAX).max(self.last_at);
        self.last_at = us;
        us
    }

    /// The recorded time of the last record: µs since the start, and the wall clock (the
    /// header's start plus that offset) — what a replay of this capture will report for it.
    pub fn last_time(&self) -> (u64, i64) {
        self.pair(self.last_at)
    }

    /// The recorded time a record written for instant `at` would get (see [`Recorder::last_time`]).
    pub fn time_of(&self, at: Instant) -> (u64, i64) {
        let us = at.saturating_duration_since(self.start).as_micros();
        self.pair(u64::try_from(us).unwrap_or(u64::MAX).max(self.last_at))
    }

    fn pair(&self, at_us: u64) -> (u64, i64) {
        let unix = self
            .start_unix
            .saturating_add(i64::try_from(at_us).unwrap_or(i64::MAX));
        (at_us, unix)
    }

    /// Record one stdout line (without its `\n`) that arrived at `at`; `terminated` is false
    /// for a last line without newline.
    pub fn stdout_line(&mut self, line: &[u8], terminated: bool, at: Instant) -> io::Result<()> {
        let us = self.offset(at);
        if self.rewrite.is_some() {
            return self.rewritten(&Self::plain_line(line, terminated), false, us);
        }
        write_out(&mut self.rec, us, line, terminated, None);
        self.put()
    }

    /// Record a stdout line as [`LineReader`](crate::read::LineReader) framed it (a producer
    /// that frames lines itself, like spawn): the `\r` of a CRLF line is put back, and a line
    /// cut by `--max-line-bytes` is kept as cut, with its real length.
    pub fn stdout_framed(&mut self, line: &Line<'_>, at: Instant) -> io::Result<()> {
        let us = self.offset(at);
        if self.rewrite.is_some() {
            return self.rewritten(line, false, us);
        }
        if line.cr {
            self.scratch.clear();
            self.scratch.extend_from_slice(line.bytes);
            self.scratch.push(b'\r');
            write_out(&mut self.rec, us, &self.scratch, line.terminated, None);
        } else {
            write_out(
                &mut self.rec,
                us,
                line.bytes,
                line.terminated,
                line.oversized,
            );
        }
        self.put()
    }

    /// Record one stderr line (without its newline); `cut` when the producer truncated it.
    pub fn stderr_line(&mut self, line: &[u8], cut: bool, at: Instant) -> io::Result<()> {
        let us = self.offset(at);
        if self.rewrite.is_some() {
            return self.rewritten(&Self::plain_line(line, true), true, us);
        }
        write_err(&mut self.rec, us, line, cut);
        self.put()
    }

    /// Push buffered records to the file.
    pub fn flush(&mut self) -> io::Result<()> {
        let r = self.w.flush();
        self.check(r)
    }

    /// Write the end record (its `at_us` is computed from `at`), flush, and return the writer.
    pub fn end(mut self, mut end: End, at: Instant) -> io::Result<W> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        end.at_us = self.offset(at);
        if let Some(mut rw) = self.rewrite.take() {
            // What the stdout rewrite still holds back belongs before the end.
            rw.out.clear();
            rw.stdout.finish(&mut rw.out);
            for i in 0..rw.out.len() {
                let (bytes, _, _) = rw.out.get(i, b"");
                write_out(&mut self.rec, end.at_us, bytes, true, None);
                self.put()?;
            }
        }
        end.write(&mut self.rec);
        self.put()?;
        self.flush()?;
        Ok(self.w)
    }

    /// The first write error, if writing the capture failed (later writes are skipped).
    pub fn take_error(&mut self) -> Option<io::Error> {
        self.error.take()
    }

    fn put(&mut self) -> io::Result<()> {
        let r = if self.error.is_some() {
            Err(io::Error::other("an earlier write failed"))
        } else {
            self.w.write_all(&self.rec.buf)
        };
        self.rec.buf.clear();
        self.check(r)
    }

    fn check(&mut self, r: io::Result<()>) -> io::Result<()> {
        if let Err(e) = r {
            let kind = e.kind();
            if self.error.is_none() {
                self.error = Some(e);
            }
            return Err(io::Error::new(kind, CaptureWriteFailed));
        }
        Ok(())
    }
}

/// The error a [`Tee`] read returns when writing the capture failed; the recorder's
/// [`Recorder::take_error`] has the real cause.
#[derive(Debug)]
pub struct CaptureWriteFailed;

impl std::fmt::Display for CaptureWriteFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("writing the capture failed")
    }
}

impl std::error::Error for CaptureWriteFailed {}

/// True when `e` came from a failed capture write (not from the input).
pub fn is_capture_error(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|r| r.is::<CaptureWriteFailed>())
}

/// A reader that records every line read through it (stdout lines, stamped with the time of the
/// `read` that completed them).
pub struct Tee<'r, R, W: Write> {
    inner: R,
    rec: &'r mut Recorder<W>,
    partial: Vec<u8>,
    on_time: Option<Box<dyn FnMut(u64, i64) + 'r>>,
}

impl<'r, R: Read, W: Write> Tee<'r, R, W> {
    /// Record what is read from `inner` into `rec`.
    pub fn new(inner: R, rec: &'r mut Recorder<W>) -> Self {
        Tee {
            inner,
            rec,
            partial: Vec::new(),
            on_time: None,
        }
    }

    /// Call `f(at_us, unix_us)` with the recorded time of each read that completed a line, before
    /// the reader returns it. The pipeline processes a read's lines before reading again, so
    /// while it processes a line, the last call told that line's recorded time: feed a manual
    /// clock with it and time-stamping sinks (the audit log) write exactly the times a replay of
    /// the capture will reproduce.
    pub fn on_time(mut self, f: impl FnMut(u64, i64) + 'r) -> Self {
        self.on_time = Some(Box::new(f));
        self
    }

    fn told(&mut self) {
        if let Some(f) = &mut self.on_time {
            let (at, unix) = self.rec.last_time();
            f(at, unix);
        }
    }
}

impl<R: Read, W: Write> Read for Tee<'_, R, W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let now = Instant::now();
        if n == 0 {
            if !self.partial.is_empty() {
                let line = std::mem::take(&mut self.partial);
                self.rec.stdout_line(&line, false, now)?;
                self.rec.flush()?;
                self.told();
            }
            return Ok(0);
        }
        let mut rest = &buf[..n];
        let mut wrote = false;
        while let Some(i) = memchr::memchr(b'\n', rest) {
            if self.partial.is_empty() {
                self.rec.stdout_line(&rest[..i], true, now)?;
            } else {
                self.partial.extend_from_slice(&rest[..i]);
                self.rec.stdout_line(&self.partial, true, now)?;
                self.partial.clear();
            }
            rest = &rest[i + 1..];
            wrote = true;
        }
        self.partial.extend_from_slice(rest);
        if wrote {
            self.rec.flush()?;
            self.told();
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::LineReader;

    use crate::read::tests::Trickle;

    /// A recorder into memory, started now.
    fn recorder() -> Recorder<Vec<u8>> {
        Recorder::new(Vec::new(), &Header::now("test"), Instant::now()).unwrap()
    }

    /// End `rec` and read its records back.
    fn ended(rec: Recorder<Vec<u8>>) -> Vec<serde_json::Value> {
        let out = rec.end(End::default(), Instant::now()).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn tee_records_lines_split_across_reads() {
        let input = b"{\"a\":1}\r\n\nsecond line\nlast";
        for chunk in [1, 3, 7, 100] {
            let mut rec = recorder();
            let mut seen = Vec::new();
            Tee::new(Trickle(input, chunk), &mut rec)
                .read_to_end(&mut seen)
                .unwrap();
            assert_eq!(seen, input);
            let recs = ended(rec);
            let lines: Vec<&str> = recs[1..recs.len() - 1]
                .iter()
                .map(|r| r["line"].as_str().unwrap())
                .collect();
            assert_eq!(lines, ["{\"a\":1}\r", "", "second line", "last"], "{chunk}");
            assert_eq!(recs[4]["nl"], false);
            assert!(recs[1].get("nl").is_none());
        }
    }

    #[test]
    fn framed_lines_are_recorded_as_they_were_read() {
        let input = b"{\"a\":1}\r\n0123456789abcdef\nend";
        let mut rec = recorder();
        let mut r = LineReader::new(&input[..]).with_max_line(Some(10));
        while let Some(l) = r.next_line().unwrap() {
            rec.stdout_framed(&l, Instant::now()).unwrap();
        }
        let recs = ended(rec);
        assert_eq!(recs[1]["line"], "{\"a\":1}\r");
        assert_eq!(recs[2]["line"], "0123456789");
        assert_eq!(recs[2]["cut_from"], 16);
        assert_eq!(recs[3]["line"], "end");
        assert_eq!(recs[3]["nl"], false);
    }

    #[test]
    fn tee_tells_the_recorded_time_of_each_read() {
        let h = Header {
            start_unix_us: 1_000_000,
            ..Header::now("test")
        };
        let mut rec = Recorder::new(Vec::new(), &h, Instant::now()).unwrap();
        let mut told = Vec::new();
        let mut seen = Vec::new();
        Tee::new(Trickle(b"a\nb\nc", 2), &mut rec)
            .on_time(|at, unix| told.push((at, unix)))
            .read_to_end(&mut seen)
            .unwrap();
        let recs = ended(rec);
        let want: Vec<(u64, i64)> = recs[1..4]
            .iter()
            .map(|r| {
                let at = r["at_us"].as_u64().unwrap();
                (at, 1_000_000 + at as i64)
            })
            .collect();
        assert_eq!(
            told, want,
            "one call per line-completing read, with its time"
        );
    }

    /// Accepts that many more bytes, then fails.
    struct Limited(usize);
    impl Write for Limited {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            if self.0 < b.len() {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            self.0 -= b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn write_errors_are_kept_and_reported() {
        let h = Header::now("test");
        assert!(Recorder::new(Limited(0), &h, Instant::now()).is_err());
        let mut rec = Recorder::new(Limited(1000), &h, Instant::now()).unwrap();
        let mut seen = Vec::new();
        let big = vec![b'x'; 2000];
        let e = Tee::new(&big[..], &mut rec)
            .read_to_end(&mut seen)
            .unwrap_err();
        assert!(is_capture_error(&e));
        assert_eq!(rec.take_error().unwrap().to_string(), "disk full");
    }
}
