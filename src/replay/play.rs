//! The three players of a replay: the envelope pipeline, the raw stream-json, and a stand-in for
//! the `claude` binary (stdout, stderr, exit status).

use std::io::{self, Write};

use super::{Player, Stamp};
use crate::capture::decode::OutLine;
use crate::envelope::Ctx;
use crate::envelope::kind;
use crate::pipeline::Pipeline;
use crate::read::Line;

/// The same framing `LineReader` gives `normalize`, so a replayed line normalizes exactly like
/// the live one: one trailing `\r` dropped, `--max-line-bytes` applied, `raw_len` as read.
pub fn frame<'l>(o: &'l OutLine, number: u64, max_line: Option<usize>) -> Line<'l> {
    let full = o.cut_from.unwrap_or(o.bytes.len() as u64);
    let (bytes, oversized) = match max_line {
        Some(max) if o.bytes.len() > max => (&o.bytes[..max], Some(full)),
        _ => (&o.bytes[..], o.cut_from),
    };
    Line::framed(bytes, number, full, o.terminated, oversized)
}

/// Feeds the envelope pipeline (any sinks), like `normalize` does.
pub struct Envelope<'p, 'a> {
    p: &'p mut Pipeline<'a>,
    max_line: Option<usize>,
    lines: u64,
    paced: bool,
    stderr_events: bool,
    clock: Option<Box<dyn FnMut(Stamp) + 'p>>,
}

impl<'p, 'a> Envelope<'p, 'a> {
    /// Play into `p`. `paced`: flush after every line (timed or followed replays).
    pub fn new(p: &'p mut Pipeline<'a>, max_line: Option<usize>, paced: bool) -> Self {
        Envelope {
            p,
            max_line,
            lines: 0,
            paced,
            stderr_events: false,
            clock: None,
        }
    }

    /// Emit the recorded stderr lines as `child.stderr` events, where the live run had them
    /// (`spawn --stderr-events`).
    pub fn stderr_events(mut self, yes: bool) -> Self {
        self.stderr_events = yes;
        self
    }

    /// Call `set` with each line's recorded time before the line goes into the pipeline (feed a
    /// manual clock with it, so time-stamping sinks write the recorded times).
    pub fn with_clock(mut self, set: impl FnMut(Stamp) + 'p) -> Self {
        self.clock = Some(Box::new(set));
        self
    }

    /// Set the clock for `run.end` (call before `Pipeline::finish`).
    pub fn stamp_end(&mut self, at: Stamp) {
        if let Some(c) = &mut self.clock {
            c(at);
        }
    }
}

impl Player for Envelope<'_, '_> {
    fn out(&mut self, o: &OutLine, at: Stamp) -> io::Result<()> {
        self.lines += 1;
        if let Some(c) = &mut self.clock {
            c(at);
        }
        let line = frame(o, self.lines, self.max_line);
        self.p.push_line(&line)?;
        if self.paced {
            self.p.flush()?;
        }
        Ok(())
    }

    fn err(&mut self, bytes: &[u8], cut: bool, at: Stamp) -> io::Result<()> {
        if !self.stderr_events {
            return Ok(());
        }
        if let Some(c) = &mut self.clock {
            c(at);
        }
        // The same event `spawn --stderr-events` writes.
        self.p.emit(|ev, norm| {
            let ctx = Ctx {
                session_id: norm.session_id(),
                ..Default::default()
            };
            let o = ev.begin(kind::CHILD_STDERR, &ctx);
            o.key("text");
            o.str(&String::from_utf8_lossy(bytes));
            o.key("truncated");
            o.bool(cut);
            ev.end();
        })?;
        if self.paced {
            self.p.flush()?;
        }
        Ok(())
    }

    fn pause(&mut self) -> io::Result<()> {
        self.p.flush()
    }

    /// SSE keep-alive comments while a timed or followed replay waits.
    fn idle(&mut self) -> io::Result<()> {
        self.p.idle()
    }

    fn skipping(&self) -> bool {
        self.p.resuming()
    }
}

/// Re-emits the recorded stream-json bytes on a writer (`--raw`).
pub struct Raw<W: Write> {
    out: io::BufWriter<W>,
    warned_cut: bool,
    quiet: bool,
}

impl<W: Write> Raw<W> {
    /// Raw lines to `out`.
    pub fn new(out: W) -> Self {
        Raw {
            out: io::BufWriter::with_capacity(128 * 1024, out),
            warned_cut: false,
            quiet: false,
        }
    }

    /// Flush what is buffered.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn line(&mut self, o: &OutLine) -> io::Result<()> {
        if o.cut_from.is_some() && !self.warned_cut && !self.quiet {
            self.warned_cut = true;
            eprintln!(
                "boo-normalize: warning: the input kept only a prefix of some lines (--max-line-bytes); they are written as kept"
            );
        }
        self.out.write_all(&o.bytes)?;
        if o.terminated {
            self.out.write_all(b"\n")?;
        }
        Ok(())
    }
}

impl<W: Write> Player for Raw<W> {
    fn out(&mut self, o: &OutLine, _at: Stamp) -> io::Result<()> {
        self.line(o)
    }

    fn pause(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Plays the recorded stdout and stderr like the `claude` process did (`--as-claude`). Never
/// writes anything of its own to stderr.
pub struct Claude<W: Write, E: Write> {
    raw: Raw<W>,
    err: E,
}

impl<W: Write, E: Write> Claude<W, E> {
    /// Recorded stdout to `out`, recorded stderr to `err`.
    pub fn new(out: W, err: E) -> Self {
        let mut raw = Raw::new(out);
        raw.quiet = true;
        Claude { raw, err }
    }

    /// Flush stdout and stderr.
    pub fn flush(&mut self) -> io::Result<()> {
        self.raw.flush()?;
        self.err.flush()
    }
}

impl<W: Write, E: Write> Player for Claude<W, E> {
    fn out(&mut self, o: &OutLine, _at: Stamp) -> io::Result<()> {
        self.raw.line(o)
    }

    fn err(&mut self, bytes: &[u8], _cut: bool, _at: Stamp) -> io::Result<()> {
        // Keep the order a reader of both pipes would have seen.
        self.raw.flush()?;
        self.err.write_all(bytes)?;
        self.err.write_all(b"\n")?;
        self.err.flush()
    }

    fn pause(&mut self) -> io::Result<()> {
        self.flush()
    }

    fn warn(&mut self, _msg: &str) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ol(b: &[u8], terminated: bool, cut_from: Option<u64>) -> OutLine {
        OutLine {
            bytes: b.to_vec(),
            terminated,
            cut_from,
            ..Default::default()
        }
    }

    #[test]
    fn framing_matches_the_line_reader() {
        let o = ol(b"{\"a\":1}\r", true, None);
        let l = frame(&o, 3, None);
        assert_eq!(
            (l.bytes, l.raw_len, l.oversized),
            (&b"{\"a\":1}"[..], 9, None)
        );
        let l = frame(&o, 3, Some(4));
        assert_eq!(
            (l.bytes, l.raw_len, l.oversized),
            (&b"{\"a\""[..], 9, Some(8))
        );
        let o = ol(b"abc", false, Some(100));
        let l = frame(&o, 1, None);
        assert_eq!(
            (l.bytes, l.raw_len, l.oversized),
            (&b"abc"[..], 100, Some(100))
        );
    }
}
