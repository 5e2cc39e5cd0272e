//! `redact` over several inputs on every core. The inputs are one stream (a redactor's state
//! carries from one input to the next: delta text held back, an open private-key block), yet
//! files are redacted ahead on other cores, each by a fresh redactor, and that output is used
//! whenever the stream reaches the file with nothing carried over; otherwise the file is redacted
//! again in turn. Either way the bytes are those of one redactor reading the inputs in order.

use std::io::{self, Read, Write};
use std::sync::Arc;

use rayon::prelude::*;

use super::engine::Scratch;
use super::{Counts, Engine, Redactor};
use crate::error::Error;
use crate::input::Input;
use crate::read::LineReader;
use crate::transform::Transformed;

/// Largest file redacted ahead; larger ones are streamed in turn (memory stays bounded).
pub const AHEAD_MAX: u64 = 16 << 20;

/// Input bytes redacted ahead at once, at most (one window of files).
const WINDOW_BYTES: u64 = 64 << 20;

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
/// after every line with `line_buffered`). Regular files of at most [`AHEAD_MAX`] are redacted
/// ahead on the other cores (see the module docs), in windows of consecutive ones, unless
/// `line_buffered` or only one thread is available (`RAYON_NUM_THREADS=1`).
pub fn redact_inputs<W: Write>(
    engine: &Arc<Engine>,
    inputs: Vec<Input>,
    w: W,
    line_buffered: bool,
) -> Result<Summary, Error> {
    let ahead = !line_buffered && inputs.len() > 1 && rayon::current_num_threads() > 1;
    let small = |i: &Input| i.size.filter(|&n| ahead && n <= AHEAD_MAX);
    let mut s = InTurn::new(engine, w, line_buffered);
    let mut inputs = inputs.into_iter().peekable();
    while let Some(input) = inputs.next() {
        let Some(mut bytes) = small(&input) else {
            s.stream(&input.name, input.reader)?;
            continue;
        };
        let mut window = vec![input];
        while let Some(next) =
            inputs.next_if(|i| small(i).is_some_and(|n| bytes + n <= WINDOW_BYTES))
        {
            bytes += next.size.unwrap_or(0);
            window.push(next);
        }
        if window.len() == 1 {
            // Nothing to overlap with: in turn, as it streams.
            let input = window.pop().expect("one input");
            s.stream(&input.name, input.reader)?;
            continue;
        }
        // Each worker hands its search state (warm caches) from one file's redactor to the
        // next: a fresh one per file would cost more than the file.
        let done: Vec<Ahead> = window
            .into_par_iter()
            .map_init(
                || None,
                |warm, i| Ahead::run(engine, i.name, i.reader, warm),
            )
            .collect();
        for a in done {
            s.take(a)?;
        }
    }
    s.finish()
}

/// A file redacted ahead by a fresh redactor.
struct Ahead {
    name: String,
    /// The file's bytes (to redact it again in turn when state carries over into it).
    input: io::Result<Vec<u8>>,
    /// What the fresh redactor wrote, without the separator a previous unterminated input needs.
    out: Vec<u8>,
    red: Redactor,
    /// Whether the file had any line, and whether its last one was unterminated.
    lines: bool,
    last_unterminated: bool,
}

impl Ahead {
    fn run(
        engine: &Arc<Engine>,
        name: String,
        mut src: Box<dyn Read + Send>,
        warm: &mut Option<Scratch>,
    ) -> Ahead {
        let mut bytes = Vec::new();
        let input = src.read_to_end(&mut bytes).map(|_| bytes);
        let mut a = Ahead {
            name,
            out: Vec::new(),
            red: Redactor::new(engine.clone()),
            lines: false,
            last_unterminated: false,
            input: Ok(Vec::new()),
        };
        a.red.lend_scratch(warm.take());
        if let Ok(b) = &input {
            let mut t = Transformed::default();
            let mut reader = LineReader::new(&b[..]);
            while let Ok(Some(line)) = reader.next_line() {
                if a.last_unterminated {
                    a.out.push(b'\n');
                }
                t.clear();
                a.red.push(&line, &mut t);
                write_lines(&mut a.out, &t, line.bytes, line.terminated)
                    .expect("writing to memory cannot fail");
                a.lines = true;
                a.last_unterminated = !line.terminated;
            }
        }
        *warm = a.red.take_scratch();
        a.input = input;
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
    fn stream(&mut self, name: &str, src: impl Read) -> Result<(), Error> {
        let out_err = |e: io::Error| Error::io("stdout", e);
        let mut reader = LineReader::new(src);
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
            write_lines(&mut self.w, &self.out, line.bytes, line.terminated).map_err(out_err)?;
            self.last_unterminated = !line.terminated;
            if self.line_buffered {
                self.w.flush().map_err(out_err)?;
            }
        }
    }

    /// Use what `a` wrote when nothing carries over into its file, else redact it in turn.
    fn take(&mut self, a: Ahead) -> Result<(), Error> {
        let input = a.input.map_err(|e| Error::io(&a.name, e))?;
        if !self.red.is_idle() {
            return self.stream(&a.name, &input[..]);
        }
        let out_err = |e: io::Error| Error::io("stdout", e);
        if a.lines {
            if self.last_unterminated {
                self.w.write_all(b"\n").map_err(out_err)?;
            }
            self.last_unterminated = a.last_unterminated;
        }
        self.w.write_all(&a.out).map_err(out_err)?;
        let mut done = std::mem::replace(&mut self.red, a.red);
        self.red.lend_scratch(done.take_scratch());
        self.summary.add(&done);
        Ok(())
    }

    /// Release what is still held, flush, and say what was replaced.
    fn finish(mut self) -> Result<Summary, Error> {
        let out_err = |e: io::Error| Error::io("stdout", e);
        self.out.clear();
        self.red.flush(&mut self.out);
        if !self.out.is_empty() && self.last_unterminated {
            self.w.write_all(b"\n").map_err(out_err)?;
        }
        write_lines(&mut self.w, &self.out, b"", true).map_err(out_err)?;
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
) -> io::Result<()> {
    for i in 0..out.len() {
        // A line released late says whether it had its newline; the others are `input`.
        let (bytes, _, origin) = out.get(i, input);
        w.write_all(bytes)?;
        if origin.map_or(terminated, |o| o.terminated) || i + 1 < out.len() {
            w.write_all(b"\n")?;
        }
    }
    Ok(())
}
