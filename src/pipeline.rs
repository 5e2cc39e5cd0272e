//! The one processing loop: framed lines → normalizer → every sink, with the flush policy.
//!
//! Output is block-buffered while input is arriving faster than it is processed, and flushed
//! whenever the reader has no complete line buffered (the next read could block), so a consumer
//! behind a slow producer sees each event as soon as its line arrives. `line_buffered` flushes
//! after every input line instead.
//!
//! An optional [`LineTransform`] (redaction) rewrites each input line before the normalizer
//! sees it, so no sink ever sees the original bytes.

use std::io::{self, Read};

use crate::envelope::Events;
use crate::normalize::{EndInfo, Normalizer, Stats};
use crate::read::{Line, LineReader};
use crate::sink::Sink;
use crate::transform::{LineTransform, Transformed};

/// Normalizer plus sinks.
pub struct Pipeline<'a> {
    normalizer: Normalizer,
    events: Events,
    sinks: Vec<Box<dyn Sink + 'a>>,
    line_buffered: bool,
    lines: u64,
    transform: Option<Box<dyn LineTransform + 'a>>,
    transformed: Transformed,
    last_line: u64,
}

impl<'a> Pipeline<'a> {
    /// A pipeline writing to `sinks` (every sink sees every event with the same `seq`).
    pub fn new(normalizer: Normalizer, sinks: Vec<Box<dyn Sink + 'a>>) -> Self {
        Pipeline {
            normalizer,
            events: Events::default(),
            sinks,
            line_buffered: false,
            lines: 0,
            transform: None,
            transformed: Transformed::default(),
            last_line: 0,
        }
    }

    /// Rewrite every input line with `t` before normalizing it.
    pub fn transform(mut self, t: Box<dyn LineTransform + 'a>) -> Self {
        self.transform = Some(t);
        self
    }

    /// Flush after every input line.
    pub fn line_buffered(mut self, yes: bool) -> Self {
        self.line_buffered = yes;
        self
    }

    /// Statistics so far.
    pub fn stats(&self) -> &Stats {
        self.normalizer.stats()
    }

    /// The normalizer (for the CLI version, terminal state, …).
    pub fn normalizer(&self) -> &Normalizer {
        &self.normalizer
    }

    /// Read every line of `src`. Line numbers continue across calls, as if the inputs were
    /// concatenated (each input's end also ends its last line).
    pub fn run<R: Read>(&mut self, src: R, max_line: Option<usize>) -> io::Result<()> {
        let mut reader = LineReader::new(src).with_max_line(max_line);
        loop {
            if !reader.has_buffered_line() {
                self.flush()?;
            }
            let Some(line) = reader.next_line()? else {
                break;
            };
            let line = Line {
                number: line.number + self.lines,
                ..line
            };
            self.push_line(&line)?;
        }
        self.lines += reader.lines_read();
        Ok(())
    }

    /// Normalize one line and hand its events to every sink.
    pub fn push_line(&mut self, line: &Line<'_>) -> io::Result<()> {
        self.last_line = line.number;
        if let Some(t) = self.transform.as_mut() {
            self.transformed.clear();
            t.line(line, &mut self.transformed);
            self.push_transformed(line)?;
        } else {
            self.normalizer.push_line(line, &mut self.events);
            self.drain(Some(line))?;
        }
        if self.line_buffered {
            self.flush()?;
        }
        Ok(())
    }

    /// Normalize the transform's output for `orig` (synthesized lines get `raw_len` 0).
    fn push_transformed(&mut self, orig: &Line<'_>) -> io::Result<()> {
        let out = std::mem::take(&mut self.transformed);
        let mut res = Ok(());
        for i in 0..out.len() {
            let (bytes, members, synthesized) = out.get(i, orig.bytes);
            let l = Line {
                bytes,
                number: orig.number,
                raw_len: if synthesized { 0 } else { orig.raw_len },
                terminated: orig.terminated,
                oversized: if synthesized { None } else { orig.oversized },
            };
            self.events.set_line_members(orig.number, members);
            self.normalizer.push_line(&l, &mut self.events);
            self.events.set_line_members(orig.number, b"");
            res = self.drain(Some(&l));
            if res.is_err() {
                break;
            }
        }
        self.transformed = out;
        res
    }

    fn drain(&mut self, line: Option<&Line<'_>>) -> io::Result<()> {
        for m in &self.events.metas {
            let raw = match (line, m.line) {
                (Some(l), Some(n)) if l.number == n => Some(l.bytes),
                _ => None,
            };
            for s in &mut self.sinks {
                s.event(&self.events, m, raw)?;
            }
        }
        self.events.clear();
        Ok(())
    }

    /// Flush every sink.
    pub fn flush(&mut self) -> io::Result<()> {
        for s in &mut self.sinks {
            s.flush()?;
        }
        Ok(())
    }

    /// Write `run.end` (and whatever was pending) and finish every sink.
    pub fn finish(&mut self, end: &EndInfo) -> io::Result<()> {
        if let Some(t) = self.transform.as_mut() {
            self.transformed.clear();
            t.finish(&mut self.transformed);
            let last = Line {
                bytes: b"",
                number: self.last_line,
                raw_len: 0,
                terminated: true,
                oversized: None,
            };
            self.push_transformed(&last)?;
        }
        self.normalizer.finish(end, &mut self.events);
        self.drain(None)?;
        for s in &mut self.sinks {
            s.finish()?;
        }
        Ok(())
    }
}
