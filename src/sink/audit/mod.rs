//! The audit log sink: the [`Sink`] that turns each envelope event into one hash-chained
//! record (the format, reader and verifier are [`crate::audit`]), lossless (every input line is
//! kept), written whole records at a time; records are hashed on a helper thread ([`hasher`]) and
//! a file is written through [`cut_back::CutBack`] (cut back to the last whole record on failure).
//! Batching is in `batch.rs`, records too large to hold in `stream.rs`.

mod batch;
pub mod cut_back;
pub mod hasher;
pub mod runs;
pub mod shared;
mod stream;

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use self::hasher::{DEPTH, Hasher, Rec};
use self::shared::Shared;
use self::stream::CHUNK;
use crate::audit::TAIL_LEN;
use crate::audit::record::{Ts, head, raw_member, tail};
use crate::envelope::{EventMeta, Events};
use crate::json::Out;
use crate::sink::{EventCtx, Sink};

/// The audit sink over any writer (a file opened with [`crate::audit::open_append`], stdout, a `Vec`).
pub struct Audit<W: Write> {
    w: W,
    run_id: String,
    prev: [u8; 64],
    rec: Out,
    last_raw_line: Option<u64>,
    sync: Option<fn(&mut W) -> io::Result<()>>,
    ts: Ts,
    stream_at: usize,
    b64: Vec<u8>,
    /// Records in `rec` waiting to be finished, when batching.
    recs: Vec<Rec>,
    /// Emptied batch buffers, for the next batches.
    pool: Vec<Vec<u8>>,
    hasher: Option<Hasher>,
    /// Added to every `mono_us` (a continued run, see [`Audit::continuing_from`]).
    mono_base: u64,
    /// The raw lines of the batch being built are escaped here rather than on the hashing
    /// thread (see [`Audit::ship`]).
    escape_here: bool,
    /// Batches on their way from which the next batch's raw lines are escaped here: [`DEPTH`]
    /// (tests: 0, always, or more than `DEPTH`, never).
    escape_from: usize,
    /// Where the hashing thread writes the batches it finishes (see
    /// [`Audit::writing_on_helper`]); `None`: this thread writes them.
    helper_out: Option<Arc<Mutex<dyn Write + Send>>>,
    /// Every record is written as it comes, never batched (see [`Audit::unbatched`]).
    unbatched: bool,
}

/// Which run the next records belong to, for a sink that writes several runs one record at a
/// time ([`runs`]): swapped in before a run's record and out after it ([`Audit::swap_run`]).
#[derive(Debug, Clone, Default)]
pub struct RunCursor {
    /// The run id.
    pub run_id: String,
    /// Added to the `mono_us` of its pipeline's stamps.
    pub mono_base: u64,
    /// The input line whose raw line was recorded last (numbers of the run's pipeline).
    last_raw_line: Option<u64>,
}

impl RunCursor {
    /// The run goes on in a new pipeline (whose input lines are numbered anew).
    pub fn last_raw_line_reset(&mut self) {
        self.last_raw_line = None;
    }
}

impl<W: Write + Send + 'static> Audit<Shared<W>> {
    /// An audit sink whose batches the hashing thread writes to `w` itself (see
    /// [`shared`]): for a file, whose `write` calls (copying the records into the page
    /// cache) are then not on the pipeline thread. Otherwise as [`Audit::new`].
    pub fn writing_on_helper(w: W, run_id: &str, prev: [u8; 64]) -> Self {
        let w = Shared::new(w);
        let out = w.handle();
        let mut a = Audit::new(w, run_id, prev);
        a.helper_out = Some(out);
        a
    }
}

impl<W: Write> Audit<W> {
    /// An audit sink writing records of run `run_id`, chaining from `prev` (hex of the last hash
    /// already in the destination; [`crate::audit::GENESIS`] for a new file or a stream).
    pub fn new(w: W, run_id: &str, prev: [u8; 64]) -> Self {
        Audit {
            w,
            run_id: run_id.to_owned(),
            prev,
            rec: Out::default(),
            last_raw_line: None,
            sync: None,
            ts: Ts::default(),
            stream_at: STREAM_RECORD,
            b64: vec![0; CHUNK + 4],
            recs: Vec::new(),
            pool: Vec::new(),
            hasher: None,
            mono_base: 0,
            escape_here: false,
            escape_from: DEPTH,
            helper_out: None,
            unbatched: false,
        }
    }

    /// Write each record whole as it comes (one `write`), never batched on the hashing thread:
    /// for a log that several runs write ([`runs`]), whose records must carry the run id of the
    /// moment they are made.
    pub fn unbatched(mut self) -> Self {
        self.unbatched = true;
        self
    }

    /// Exchange the run this sink writes (its id, time base, last raw line) with `c`: call it
    /// before a run's record and again after it. Only for an [unbatched](Audit::unbatched) sink.
    pub fn swap_run(&mut self, c: &mut RunCursor) {
        debug_assert!(self.unbatched);
        std::mem::swap(&mut self.run_id, &mut c.run_id);
        std::mem::swap(&mut self.mono_base, &mut c.mono_base);
        std::mem::swap(&mut self.last_raw_line, &mut c.last_raw_line);
    }

    /// Continue a run whose last record had `mono_us` = `base`: this process's times count on
    /// from there, so `mono_us` never decreases within the run.
    pub fn continuing_from(mut self, base: u64) -> Self {
        self.mono_base = base;
        self
    }

    /// Call `sync` (e.g. `File::sync_data`) after every record.
    pub fn with_sync(mut self, sync: fn(&mut W) -> io::Result<()>) -> Self {
        self.sync = Some(sync);
        self
    }

    /// The hash of the last record written (or the `prev` given to [`Audit::new`]). Records are
    /// batched: call [`Sink::flush`] first to have every record given so far written.
    pub fn head(&self) -> &[u8; 64] {
        &self.prev
    }

    /// Records at least this long (event plus raw line) are hashed and written piece by piece
    /// (see [`Sink::event`]); default [`STREAM_RECORD`].
    pub fn stream_records_from(mut self, bytes: usize) -> Self {
        self.stream_at = bytes;
        self
    }

    /// Escape the raw lines of the batches built while `n` batches are on their way on this
    /// thread (0: all of them).
    #[cfg(test)]
    fn escape_from(mut self, n: usize) -> Self {
        self.escape_from = n;
        self.escape_here = n == 0;
        self
    }

    /// `{"seq":…,"event":`, appended to `rec`.
    fn begin_record(&mut self, meta: &EventMeta, ctx: &EventCtx<'_>) {
        let ts = self.ts.of(ctx.stamp.unix_us);
        let mono_us = self.mono_base + ctx.stamp.mono_us;
        head(&mut self.rec, meta.seq, &self.run_id, ts, mono_us);
        self.cli_and_event_key(ctx);
    }

    /// The value of `cli_version` and the key `,"event":`, appended to `rec`.
    fn cli_and_event_key(&mut self, ctx: &EventCtx<'_>) {
        self.rec.opt_str(ctx.cli_version);
        self.rec.key("event");
    }

    /// The input line to record with this event, if it is the line's first record.
    fn raw_of<'c>(&mut self, meta: &EventMeta, ctx: &EventCtx<'c>) -> Option<&'c [u8]> {
        let raw = ctx.raw?;
        if meta.line.is_none() || meta.line == self.last_raw_line {
            return None;
        }
        self.last_raw_line = meta.line;
        Some(raw)
    }

    /// `,"raw_eol":…` and `,"raw_cut_from":…` when they apply, into `rec`.
    fn raw_extras(&mut self, ctx: &EventCtx<'_>) {
        let o = &mut self.rec;
        if let Some(l) = ctx.line {
            match l.eol() {
                b"\n" => {}
                b"\r\n" => o.raw(b",\"raw_eol\":\"\\r\\n\""),
                b"\r" => o.raw(b",\"raw_eol\":\"\\r\""),
                _ => o.raw(b",\"raw_eol\":\"\""),
            }
            if let Some(n) = l.oversized {
                o.key("raw_cut_from");
                o.u64(n);
            }
        }
    }

    /// `,"prev":"…",` into `rec`.
    fn prev_member(&mut self) {
        self.rec.raw(b",\"prev\":\"");
        self.rec.raw(&self.prev);
        self.rec.raw(b"\",");
    }

    /// The `"hash":"…"}` tail for `digest`, which becomes the next `prev`.
    fn tail(&mut self, digest: &[u8]) -> [u8; TAIL_LEN - 1] {
        let (hex, t) = tail(digest);
        self.prev = hex;
        t
    }

    /// `,"raw":…` (or `raw_b64`) and its extras, appended to `rec`, when this is the first
    /// record of its input line. `defer`: the line's bytes go into `rec` as they are, for the
    /// hashing thread to make the member of; their place is returned.
    fn raw_and_extras(
        &mut self,
        meta: &EventMeta,
        ctx: &EventCtx<'_>,
        defer: bool,
    ) -> Option<(usize, usize)> {
        let raw = self.raw_of(meta, ctx)?;
        let at = self.rec.buf.len();
        if defer {
            self.rec.raw(raw);
        } else {
            raw_member(&mut self.rec, raw);
        }
        let placed = (at, self.rec.buf.len());
        self.raw_extras(ctx);
        defer.then_some(placed)
    }

    /// The whole record, built in `rec` (cleared first) and hashed.
    fn record(&mut self, events: &Events, meta: &EventMeta, ctx: &EventCtx<'_>) {
        self.rec.buf.clear();
        self.begin_record(meta, ctx);
        self.rec.raw(events.bytes(meta));
        self.raw_and_extras(meta, ctx, false);
        self.prev_member();
        let digest = Sha256::digest(&self.rec.buf);
        let tail = self.tail(&digest);
        self.rec.raw(&tail);
    }
}

/// Default of [`Audit::stream_records_from`]: records from 1 MiB on are streamed.
pub const STREAM_RECORD: usize = 1 << 20;

impl<W: Write> Sink for Audit<W> {
    fn event(&mut self, events: &Events, meta: &EventMeta, ctx: &EventCtx<'_>) -> io::Result<()> {
        let size = events.bytes(meta).len() + ctx.raw.map_or(0, <[u8]>::len);
        if size >= self.stream_at {
            // One write per record would mean holding a copy of a huge line (escaped) and of its
            // event; such a record is written in pieces, a torn one is still detected by verify.
            self.drain()?;
            self.stream_record(events, meta, ctx)?;
        } else if self.sync.is_none() && !self.unbatched {
            // Hashed on a helper thread and written a batch at a time (at the latest when the
            // pipeline flushes, which it does whenever its input has nothing more buffered).
            return self.batch_record(events, meta, ctx);
        } else {
            self.record(events, meta, ctx);
            self.w.write_all(&self.rec.buf)?;
        }
        self.w.flush()?;
        if let Some(sync) = self.sync {
            sync(&mut self.w)?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.drain()?;
        self.w.flush()
    }
}

impl<W: Write> Drop for Audit<W> {
    fn drop(&mut self) {
        // Records still batched when the run stops early (an error elsewhere) are written.
        if !self.recs.is_empty() || self.hasher.is_some() {
            let _ = self.drain();
            let _ = self.w.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::hasher::BATCH_BYTES;
    use super::*;
    use crate::audit::{GENESIS, last_hash, parse_tail};

    /// Streamed and batched records are byte for byte the records built whole.
    #[test]
    fn streamed_records_match_whole_ones() {
        use crate::clock::Stamp;
        use crate::envelope::Ctx;
        let text: String = (0..200_000)
            .map(|i| ['a', '"', '\n', 'é', '😀', '\\', '\u{1}'][i % 7])
            .collect();
        let mut ev = Events::default();
        let ctx = Ctx {
            line: Some(1),
            ..Default::default()
        };
        ev.begin("text", &ctx).key("text");
        ev.out().str(&text);
        ev.end();
        ev.begin("other", &ctx);
        ev.end();
        let mut bad_utf8 = text.clone().into_bytes();
        bad_utf8[7] = 0xff;
        for raw in [text.as_bytes(), &bad_utf8[..], &bad_utf8[..100_001]] {
            let write = |stream_at: usize, sync: bool| {
                let mut a = Audit::new(Vec::new(), "r", GENESIS).stream_records_from(stream_at);
                if sync {
                    a = a.with_sync(|_| Ok(()));
                }
                for m in &ev.metas {
                    let c = EventCtx {
                        raw: Some(raw),
                        line: None,
                        stamp: Stamp {
                            unix_us: 1,
                            mono_us: 2,
                        },
                        cli_version: Some("2.1.0"),
                        ..EventCtx::default()
                    };
                    a.event(&ev, m, &c).unwrap();
                }
                a.flush().unwrap();
                (std::mem::take(&mut a.w), a.prev)
            };
            let (whole, h1) = write(usize::MAX, true);
            let (streamed, h2) = write(0, false);
            let (batched, h3) = write(usize::MAX, false);
            let (mixed, h4) = write(raw.len() + 1000, false);
            assert!(whole == streamed, "streamed record differs");
            assert!(whole == batched, "batched record differs");
            assert!(whole == mixed, "streamed then batched records differ");
            assert_eq!(h1, h2);
            assert_eq!(h1, h3);
            assert_eq!(h1, h4);
            let first = whole.split(|&b| b == b'\n').next().unwrap();
            serde_json::from_slice::<serde_json::Value>(first).unwrap();
        }
    }

    /// Many batches on their way at once, a streamed record between them (the sink drains and
    /// the next batch chains from the head it knows again), then batches again, the CLI version
    /// known from some record on: the same bytes and hashes as records written one at a time,
    /// and the log verifies.
    #[test]
    fn batches_in_flight_chain_like_single_records() {
        use crate::clock::Stamp;
        use crate::envelope::Ctx;
        let mut ev = Events::default();
        let lines: Vec<String> = (0..4000u64)
            .map(|i| {
                let n = if i == 2500 {
                    300_000
                } else {
                    500 + (i as usize * 37) % 2000
                };
                format!(
                    "{{\"type\":\"x\",\"text\":\"{}\"}}",
                    "ab\\\"é".repeat(n / 5)
                )
            })
            .collect();
        for i in 0..lines.len() as u64 {
            let ctx = Ctx {
                line: Some(i + 1),
                ..Default::default()
            };
            ev.begin("text", &ctx).key("n");
            ev.out().u64(i);
            ev.end();
        }
        fn feed<W: Write>(mut a: Audit<W>, ev: &Events, lines: &[String]) -> Audit<W> {
            for (m, raw) in ev.metas.iter().zip(lines) {
                let c = EventCtx {
                    raw: Some(raw.as_bytes()),
                    stamp: Stamp {
                        unix_us: m.seq as i64,
                        mono_us: m.seq,
                    },
                    cli_version: (m.seq >= 1000).then_some("2.1.0"),
                    ..EventCtx::default()
                };
                a.event(ev, m, &c).unwrap();
            }
            a.flush().unwrap();
            a
        }
        let write = |sync: bool, escape_from: usize| {
            let mut a = Audit::new(Vec::new(), "r", GENESIS)
                .stream_records_from(200_000)
                .escape_from(escape_from);
            if sync {
                a = a.with_sync(|_| Ok(()));
            }
            let mut a = feed(a, &ev, &lines);
            (std::mem::take(&mut a.w), a.prev)
        };
        let (whole, h1) = write(true, DEPTH);
        assert!(whole.len() > 8 * BATCH_BYTES, "several batches");
        // Raw lines escaped on the hashing thread, on the pipeline's, or as the threads' pace
        // decides: the same bytes.
        for escape_from in [usize::MAX, 0, DEPTH] {
            let (batched, h2) = write(false, escape_from);
            assert!(whole == batched, "batched records differ ({escape_from})");
            assert_eq!(h1, h2);
        }
        // Batches written by the hashing thread, the big record by the sink in between: the
        // same bytes, in order.
        let a = Audit::writing_on_helper(Vec::new(), "r", GENESIS).stream_records_from(200_000);
        let mut a = feed(a, &ev, &lines);
        assert_eq!(a.prev, h1);
        let by_helper = a.w.with(std::mem::take);
        assert!(
            whole == by_helper,
            "records written by the hashing thread differ"
        );
        let summary = crate::audit::verify::verify(&by_helper[..]).unwrap();
        assert_eq!(summary.records, 4000);
    }

    #[test]
    fn tail_parses_only_exact_form() {
        let good = format!(",\"hash\":\"{}\"}}\n", "ab".repeat(32));
        assert_eq!(
            parse_tail(good.as_bytes()).unwrap(),
            *"ab".repeat(32).as_bytes()
        );
        let upper = format!(",\"hash\":\"{}\"}}\n", "AB".repeat(32));
        assert!(parse_tail(upper.as_bytes()).is_none());
        assert!(parse_tail(&good.as_bytes()[1..]).is_none());
        assert!(parse_tail(b"{}\n").is_none());
    }

    #[test]
    fn empty_file_chains_from_genesis() {
        let mut c = io::Cursor::new(Vec::new());
        assert_eq!(last_hash(&mut c).unwrap(), GENESIS);
        let mut torn = io::Cursor::new(b"{\"seq\":0".to_vec());
        assert!(
            last_hash(&mut torn)
                .unwrap_err()
                .to_string()
                .contains("torn")
        );
    }
}
