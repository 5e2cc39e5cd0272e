//! `redact` over several inputs on every core. The inputs are one stream (a redactor's state
//! carries from one input to the next: delta text held back, an open private-key block), yet
//! files are redacted ahead on other threads (see [`crate::work`]), each by a fresh redactor,
//! and that output is used whenever the stream reaches the file with nothing carried over;
//! otherwise the file is redacted again in turn. A file nobody took ahead is streamed in turn
//! straight to the output. Either way the bytes are those of one redactor reading the inputs in
//! order.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex};

use super::engine::Scratch;
use super::{Counts, Engine, Redactor};
use crate::error::Error;
use crate::input::Input;
use crate::read::{LineReader, eol};
use crate::transform::Transformed;
use crate::work::{self, Job, Turn};

/// Largest file redacted ahead; larger ones are streamed in turn (memory stays bounded).
pub const AHEAD_MAX: u64 = 16 << 20;

/// What [`redact_inputs`] replaced.
#[derive(Debug, Default)]
pub struct Summary {
    /// Placeholders written, by kind.
    pub counts: Counts,
    /// The most bytes any delta stream held back at once.
    pub max_held: usize,
}

impl Summary {
    fn add(&mut self, red: &Redactor) {
        for (k, n) in red.counts() {
            *self.counts.entry(k).or_insert(0) += n;
        }
        self.max_held = self.max_held.max(red.max_held());
    }
}

/// Redact `inputs` as one stream into `w` (flushed whenever the input has nothing buffered, and
/// after every line with `line_buffered`). Regular files of at most [`AHEAD_MAX`] may be redacted
/// ahead on other threads (see the module docs), unless `line_buffered`, only one thread is
/// available (`BOO_NORMALIZE_THREADS=1`) or the batch is too small to pay for a second thread
/// ([`work::PARALLEL_MIN_BYTES`]).
pub fn redact_inputs<W: Write>(
    engine: &Arc<Engine>,
    inputs: Vec<Input>,
    w: W,
    line_buffered: bool,
) -> Result<Summary, Error> {
    let jobs = inputs
        .into_iter()
        .map(|i| Job {
            bytes: i.size.unwrap_or(0),
            ahead: !line_buffered && i.file.is_some() && i.size.is_some_and(|n| n <= AHEAD_MAX),
            item: i,
        })
        .collect();
    let threads = if line_buffered { 1 } else { work::threads() };
    let chunks = Chunks::default();
    let mut s = InTurn::new(engine, w, line_buffered);
    let mine = work::in_order(
        jobs,
        threads,
        work::AHEAD_BYTES,
        Worker::default,
        |i: Input, wk: &mut Worker| Ahead::run(engine, i, wk, &chunks),
        |turn, wk| match turn {
            // The calling thread's search state serves its redactor in turn as well as the
            // files it redacts ahead: one set of caches to warm per thread.
            Turn::Own(i) => s.with_scratch(wk, |s| s.stream(&i.name, i.reader, i.size)),
            Turn::Done(a) => {
                let out = s.with_scratch(wk, |s| s.take(a.into_inner()))?;
                chunks.put(out);
                Ok(())
            }
        },
    )?;
    s.red.lend_scratch(mine.warm);
    s.finish()
}

/// Bytes in one chunk of output held for a file redacted ahead.
const CHUNK: usize = 64 << 10;

/// The chunks of output of files taken, for files redacted next: memory touched once is used
/// again (fresh pages cost a fault and clearing each), and any chunk fits any file, where
/// buffers of a file's size would each grow to the largest file in turn.
#[derive(Default)]
struct Chunks(Mutex<Vec<Vec<u8>>>);

impl Chunks {
    fn get(&self) -> Vec<u8> {
        let reused = self.0.lock().ok().and_then(|mut p| p.pop());
        reused.unwrap_or_else(|| Vec::with_capacity(CHUNK))
    }

    fn put(&self, mut held: Vec<Vec<u8>>) {
        if let Ok(mut p) = self.0.lock() {
            for c in &mut held {
                c.clear();
            }
            p.append(&mut held);
        }
    }
}

/// Output held in chunks from [`Chunks`].
struct Held<'a> {
    chunks: Vec<Vec<u8>>,
    from: &'a Chunks,
}

impl Write for Held<'_> {
    fn write(&mut self, mut b: &[u8]) -> io::Result<usize> {
        let n = b.len();
        while !b.is_empty() {
            let c = match self.chunks.last_mut() {
                Some(c) if c.len() < c.capacity() => c,
                _ => {
                    self.chunks.push(self.from.get());
                    self.chunks.last_mut().expect("just pushed")
                }
            };
            let k = (c.capacity() - c.len()).min(b.len());
            c.extend_from_slice(&b[..k]);
            b = &b[k..];
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A thread's state for redacting ahead: its search state (warm regex/DFA caches, handed from
/// one file's redactor to the next: a fresh one per file would cost more than a small file), its
/// output scratch and its read buffer.
#[derive(Default)]
struct Worker {
    warm: Option<Scratch>,
    t: Transformed,
    input: Vec<u8>,
}

/// A file redacted ahead by a fresh redactor.
struct Ahead {
    name: String,
    /// The file, to read it again from its start when state carries over into it.
    file: Option<Arc<File>>,
    /// Whether the file could be read to its end (else the output is cut where reading failed,
    /// and the error is the command's when the file's turn comes).
    read: io::Result<()>,
    /// What the fresh redactor wrote, without the separator a previous unterminated input
    /// needs.
    out: Vec<Vec<u8>>,
    red: Redactor,
    /// Whether the file had any line, and whether its last one was unterminated.
    lines: bool,
    last_unterminated: bool,
}

impl Ahead {
    fn run(engine: &Arc<Engine>, i: Input, wk: &mut Worker, chunks: &Chunks) -> Ahead {
        let mut out = Held {
            chunks: Vec::new(),
            from: chunks,
        };
        let mut a = Ahead {
            name: i.name,
            file: i.file,
            read: Ok(()),
            out: Vec::new(),
            red: Redactor::new(engine.clone()),
            lines: false,
            last_unterminated: false,
        };
        a.red.lend_scratch(wk.warm.take());
        let mut reader = LineReader::reusing(i.reader, std::mem::take(&mut wk.input), i.size);
        loop {
            let line = match reader.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => break,
                Err(e) => {
                    a.read = Err(e);
                    break;
                }
            };
            if a.last_unterminated {
                out.write_all(b"\n").expect("writing to memory cannot fail");
            }
            wk.t.clear();
            a.red.push(&line, &mut wk.t);
            write_lines(&mut out, &wk.t, line.bytes, line.terminated, line.cr)
                .expect("writing to memory cannot fail");
            a.lines = true;
            a.last_unterminated = !line.terminated;
        }
        wk.input = reader.into_buffer();
        wk.warm = a.red.take_scratch();
        a.out = out.chunks;
        a
    }
}

/// The stream as one redactor reads it, input after input.
struct InTurn<W: Write> {
    red: Redactor,
    w: W,
    line_buffered: bool,
    last_unterminated: bool,
    out: Transformed,
    summary: Summary,
}

impl<W: Write> InTurn<W> {
    fn new(engine: &Arc<Engine>, w: W, line_buffered: bool) -> Self {
        InTurn {
            red: Redactor::new(engine.clone()),
            w,
            line_buffered,
            last_unterminated: false,
            out: Transformed::default(),
            summary: Summary::default(),
        }
    }

    /// Read `src` to its end through the current redactor.
    fn stream(&mut self, name: &str, src: impl Read, size: Option<u64>) -> Result<(), Error> {
        let out_err = |e: io::Error| Error::io("stdout", e);
        let mut reader = LineReader::with_size_hint(src, size);
        loop {
            if !reader.has_buffered_line() {
                self.w.flush().map_err(out_err)?;
            }
            let Some(line) = reader.next_line().map_err(|e| Error::io(name, e))? else {
                return Ok(());
            };
            if self.last_unterminated {
                // The previous input ended without a newline: keep lines apart.
                self.w.write_all(b"\n").map_err(out_err)?;
            }
            self.out.clear();
            self.red.push(&line, &mut self.out);
            write_lines(&mut self.w, &self.out, line.bytes, line.terminated, line.cr)
                .map_err(out_err)?;
            self.last_unterminated = !line.terminated;
            if self.line_buffered {
                self.w.flush().map_err(out_err)?;
            }
        }
    }

    /// Use what `a` wrote when nothing carries over into its file, else read the file again
    /// from its start and redact it in turn; the output buffer, for reuse.
    fn take(&mut self, a: Ahead) -> Result<Vec<Vec<u8>>, Error> {
        a.read.map_err(|e| Error::io(&a.name, e))?;
        if !self.red.is_idle() {
            let mut f: &File = a.file.as_deref().expect("only regular files go ahead");
            f.seek(SeekFrom::Start(0))
                .map_err(|e| Error::io(&a.name, e))?;
            let size = f.metadata().ok().map(|m| m.len());
            self.stream(&a.name, f, size)?;
            return Ok(a.out);
        }
        let out_err = |e: io::Error| Error::io("stdout", e);
        if a.lines {
            if self.last_unterminated {
                self.w.write_all(b"\n").map_err(out_err)?;
            }
            self.last_unterminated = a.last_unterminated;
        }
        for c in &a.out {
            self.w.write_all(c).map_err(out_err)?;
        }
        let mut done = std::mem::replace(&mut self.red, a.red);
        self.red.lend_scratch(done.take_scratch());
        self.summary.add(&done);
        Ok(a.out)
    }

    /// Run `f` with the current redactor using `wk`'s search state, handed back after.
    fn with_scratch<T>(&mut self, wk: &mut Worker, f: impl FnOnce(&mut Self) -> T) -> T {
        self.red.lend_scratch(wk.warm.take());
        let r = f(self);
        wk.warm = self.red.take_scratch();
        r
    }

    /// Release what is still held, flush, and say what was replaced.
    fn finish(mut self) -> Result<Summary, Error> {
        let out_err = |e: io::Error| Error::io("stdout", e);
        self.out.clear();
        self.red.flush(&mut self.out);
        if !self.out.is_empty() && self.last_unterminated {
            self.w.write_all(b"\n").map_err(out_err)?;
        }
        write_lines(&mut self.w, &self.out, b"", true, false).map_err(out_err)?;
        self.w.flush().map_err(out_err)?;
        self.summary.add(&self.red);
        Ok(self.summary)
    }
}

fn write_lines(
    w: &mut impl Write,
    out: &Transformed,
    input: &[u8],
    terminated: bool,
    cr: bool,
) -> io::Result<()> {
    for i in 0..out.len() {
        // A line released late says how it ended; the others are `input`. Each keeps its
        // terminator byte for byte (`\r\n` stays `\r\n`).
        let (bytes, _, origin) = out.get(i, input);
        w.write_all(bytes)?;
        let (nl, cr) = origin.map_or((terminated, cr), |o| (o.terminated, o.cr));
        w.write_all(eol(cr, nl || i + 1 < out.len()))?;
    }
    Ok(())
}
