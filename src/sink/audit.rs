//! The audit log sink: one hash-chained JSON record per envelope event, lossless (every input
//! line is kept), written whole records at a time.
//!
//! # Audit record format (JSONL)
//!
//! One JSON object per line, keys in this order:
//!
//! | key | type | meaning |
//! |---|---|---|
//! | `seq` | integer | the event's `seq` (the same number every sink of the run uses) |
//! | `run_id` | string | one run of `boo-normalize` (`--run-id`; default a fresh UUIDv7) |
//! | `ts` | string | wall clock when the input line was read: RFC 3339 UTC, 6 fractional digits |
//! | `mono_us` | integer | monotonic µs since the run started (never decreases within a run) |
//! | `cli_version` | string \| null | Claude Code's version, once `system/init` said it |
//! | `event` | object | the envelope event, byte for byte as on the envelope stream |
//! | `raw` | string | the input line that produced the event (no line terminator) |
//! | `raw_b64` | string | instead of `raw` when the line is not valid UTF-8: its bytes, base64 (standard, padded) |
//! | `raw_eol` | string | only when the line did not end in `"\n"`: `"\r\n"`, or `""` for a last line without newline |
//! | `raw_cut_from` | integer | only when `--max-line-bytes` cut the line: its real length up to the `\n` (`raw` holds the kept prefix) |
//! | `prev` | string | `hash` of the previous record in the file; 64 `0`s for the first record of a file |
//! | `hash` | string | lowercase hex SHA-256 of this record's bytes from `{` through the `,` before `"hash"` |
//!
//! `raw`/`raw_b64` (and `raw_eol`, `raw_cut_from`) appear on the **first** record of each input
//! line and are omitted from the other records of that line and from synthesized events
//! (`run.end`, flushed tool calls, …) — so concatenating the `raw` values, each followed by its
//! `raw_eol` (default `"\n"`), rebuilds the input stream exactly. Ephemeral events (deltas,
//! stream lifecycle) are recorded like any other. When redaction is on, `raw` is the redacted
//! line.
//!
//! ```text
//! {"seq":0,"run_id":"019a…","ts":"2025-11-22T15:32:00.123456Z","mono_us":85,"cli_version":"2.0.37","event":{"v":1,"seq":0,"type":"session.init",…},"raw":"{\"type\":\"system\",\"subtype\":\"init\",…}","prev":"0000…0000","hash":"5be1…"}
//! ```
//!
//! ## Chain and durability
//!
//! `hash` covers every byte of the record except the hash itself and the closing `"}` and
//! newline, which `boo-normalize audit verify` checks literally; `prev` links each record to the
//! one before it. So changing, removing, inserting or reordering any record breaks the chain.
//! `--audit FILE` appends: the new run's first `prev` is the last hash already in the file, and
//! the file stays one chain across runs. The writer takes an exclusive advisory lock on the file
//! for the whole run (a second writer fails instead of interleaving), and refuses to append
//! after a torn last record. Records are hashed on a helper thread and handed to the kernel a
//! batch of whole records per `write`, at the latest whenever the pipeline flushes (its input
//! has nothing more ready); a record of 1 MiB or more is written in pieces. With `--fsync` each
//! record is one `write` followed by `fdatasync`, so a crash loses at most the record being
//! written. A crash mid-write leaves a torn last record, which `audit verify` reports and which
//! appending refuses to build on.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::audit_batch::{BATCH_BYTES, Batch, END_LEN, Hasher};
use crate::clock::{Clock, SystemClock};
use crate::envelope::{EventMeta, Events};
use crate::json::Out;
use crate::sink::{EventCtx, Sink};

/// `prev` of the first record of a file.
pub const GENESIS: [u8; 64] = [b'0'; 64];

/// Length of the literal tail `,"hash":"<64 hex>"}\n` every record ends with.
pub const TAIL_LEN: usize = 1 + 8 + 64 + 3;

/// The audit sink over any writer (a file opened with [`open_append`], stdout, a `Vec`).
pub struct Audit<W: Write> {
    w: W,
    run_id: String,
    prev: [u8; 64],
    rec: Out,
    last_raw_line: Option<u64>,
    sync: Option<fn(&mut W) -> io::Result<()>>,
    ts_of: Option<(i64, String)>,
    fallback_clock: SystemClock,
    stream_at: usize,
    b64: Vec<u8>,
    /// Records in `rec` waiting to be hashed (start, end of prefix), when batching.
    recs: Vec<(usize, usize)>,
    hasher: Option<Hasher>,
}

impl<W: Write> Audit<W> {
    /// An audit sink writing records of run `run_id`, chaining from `prev` (hex of the last hash
    /// already in the destination; [`GENESIS`] for a new file or a stream).
    pub fn new(w: W, run_id: &str, prev: [u8; 64]) -> Self {
        Audit {
            w,
            run_id: run_id.to_owned(),
            prev,
            rec: Out::default(),
            last_raw_line: None,
            sync: None,
            ts_of: None,
            fallback_clock: SystemClock::new(),
            stream_at: STREAM_RECORD,
            b64: vec![0; CHUNK + 4],
            recs: Vec::new(),
            hasher: None,
        }
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
    /// (see [`Audit::event_with`]); default [`STREAM_RECORD`].
    pub fn stream_records_from(mut self, bytes: usize) -> Self {
        self.stream_at = bytes;
        self
    }

    /// `{"seq":…,"event":`, appended to `rec`.
    fn begin_record(&mut self, meta: &EventMeta, ctx: &EventCtx<'_>) {
        let unix_us = ctx.stamp.unix_us;
        if self.ts_of.as_ref().is_none_or(|(t, _)| *t != unix_us) {
            self.ts_of = Some((unix_us, ctx.stamp.rfc3339()));
        }
        let ts = &self.ts_of.as_ref().expect("just set").1;
        let o = &mut self.rec;
        o.raw(b"{\"seq\":");
        o.u64(meta.seq);
        o.key("run_id");
        o.str(&self.run_id);
        o.key("ts");
        o.str(ts);
        o.key("mono_us");
        o.u64(ctx.stamp.mono_us);
        o.key("cli_version");
        o.opt_str(ctx.cli_version);
        o.key("event");
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
            let full = l.oversized.unwrap_or(l.bytes.len() as u64);
            if !l.terminated {
                o.raw(b",\"raw_eol\":\"\"");
            } else if l.raw_len == full + 2 {
                o.raw(b",\"raw_eol\":\"\\r\\n\"");
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
        let mut hex = [0u8; 64];
        hex::encode_to_slice(digest, &mut hex).expect("64 hex digits");
        self.prev = hex;
        let mut t = [0u8; TAIL_LEN - 1];
        t[..8].copy_from_slice(b"\"hash\":\"");
        t[8..72].copy_from_slice(&hex);
        t[72..].copy_from_slice(b"\"}\n");
        t
    }

    /// `,"raw":…` (or `raw_b64`) and its extras, appended to `rec`, when this is the first
    /// record of its input line.
    fn raw_member(&mut self, meta: &EventMeta, ctx: &EventCtx<'_>) {
        if let Some(raw) = self.raw_of(meta, ctx) {
            let o = &mut self.rec;
            match std::str::from_utf8(raw) {
                Ok(s) => {
                    o.key("raw");
                    o.str(s);
                }
                Err(_) => {
                    o.key("raw_b64");
                    o.str(&base64::engine::general_purpose::STANDARD.encode(raw));
                }
            }
            self.raw_extras(ctx);
        }
    }

    /// The record up to its `prev` member, appended to `rec`.
    fn body(&mut self, events: &Events, meta: &EventMeta, ctx: &EventCtx<'_>) {
        self.begin_record(meta, ctx);
        self.rec.raw(events.bytes(meta));
        self.raw_member(meta, ctx);
    }

    /// The whole record, built in `rec` (cleared first) and hashed.
    fn record(&mut self, events: &Events, meta: &EventMeta, ctx: &EventCtx<'_>) {
        self.rec.buf.clear();
        self.body(events, meta, ctx);
        self.prev_member();
        let digest = Sha256::digest(&self.rec.buf);
        let tail = self.tail(&digest);
        self.rec.raw(&tail);
    }

    /// Append the record to the batch in `rec`, with room for its end, and hand the batch to
    /// the hashing thread once it is big enough.
    fn batch_record(
        &mut self,
        events: &Events,
        meta: &EventMeta,
        ctx: &EventCtx<'_>,
    ) -> io::Result<()> {
        debug_assert!(!self.recs.is_empty() || self.rec.buf.is_empty());
        let start = self.rec.buf.len();
        self.body(events, meta, ctx);
        let end = self.rec.buf.len();
        self.rec.buf.resize(end + END_LEN, 0);
        self.recs.push((start, end));
        if self.rec.buf.len() >= BATCH_BYTES {
            self.ship()?;
        }
        Ok(())
    }

    /// Hand the batch in `rec` to the hashing thread, after writing the batch it had.
    fn ship(&mut self) -> io::Result<()> {
        if self.recs.is_empty() {
            return Ok(());
        }
        let mut hasher = match self.hasher.take() {
            Some(h) => h,
            None => Hasher::start()?,
        };
        let landed = hasher.wait().and_then(|done| match done {
            Some(b) => self.land(b),
            None => Ok(Vec::new()),
        });
        let sent = landed.and_then(|spare| {
            hasher.send(Batch {
                buf: std::mem::replace(&mut self.rec.buf, spare),
                recs: std::mem::take(&mut self.recs),
                states: Vec::new(),
            })
        });
        self.hasher = Some(hasher);
        sent
    }

    /// Finish the chain through a hashed batch (prev members, hashes, tails), write it, and
    /// return its emptied buffer.
    fn land(&mut self, b: Batch) -> io::Result<Vec<u8>> {
        let Batch {
            mut buf,
            recs,
            states,
        } = b;
        for (&(_, end), mut h) in recs.iter().zip(states) {
            let e = &mut buf[end..end + END_LEN];
            e[..9].copy_from_slice(b",\"prev\":\"");
            e[9..73].copy_from_slice(&self.prev);
            e[73..75].copy_from_slice(b"\",");
            h.update(&e[..75]);
            let tail = self.tail(&h.finalize());
            e[75..].copy_from_slice(&tail);
        }
        self.w.write_all(&buf)?;
        buf.clear();
        Ok(buf)
    }

    /// Write every batched record.
    fn drain(&mut self) -> io::Result<()> {
        self.ship()?;
        if let Some(done) = self
            .hasher
            .as_mut()
            .map(Hasher::wait)
            .transpose()?
            .flatten()
        {
            let spare = self.land(done)?;
            if self.rec.buf.is_empty() && spare.capacity() > self.rec.buf.capacity() {
                self.rec.buf = spare;
            }
        }
        Ok(())
    }

    /// The same bytes as [`Audit::record`], hashed and written in pieces: the event straight
    /// from `events`, the raw line escaped (or base64-encoded) a chunk at a time.
    fn stream_record(
        &mut self,
        events: &Events,
        meta: &EventMeta,
        ctx: &EventCtx<'_>,
    ) -> io::Result<()> {
        let mut h = Sha256::new();
        self.rec.buf.clear();
        self.begin_record(meta, ctx);
        put(&mut self.w, &mut h, &self.rec.buf)?;
        put(&mut self.w, &mut h, events.bytes(meta))?;
        self.rec.buf.clear();
        if let Some(raw) = self.raw_of(meta, ctx) {
            match std::str::from_utf8(raw) {
                Ok(mut s) => {
                    self.rec.key("raw");
                    self.rec.raw(b"\"");
                    while !s.is_empty() {
                        let mut cut = s.len().min(CHUNK);
                        while !s.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        self.rec.str_content(&s[..cut]);
                        s = &s[cut..];
                        put(&mut self.w, &mut h, &self.rec.buf)?;
                        self.rec.buf.clear();
                    }
                    self.rec.raw(b"\"");
                }
                Err(_) => {
                    self.rec.key("raw_b64");
                    self.rec.raw(b"\"");
                    // Whole 3-byte groups per chunk: the pieces join into one encoding.
                    for chunk in raw.chunks(CHUNK / 4 * 3) {
                        base64::engine::general_purpose::STANDARD
                            .encode_slice(chunk, &mut self.b64)
                            .map(|n| self.rec.raw(&self.b64[..n]))
                            .map_err(|_| bad("base64 buffer too small"))?;
                        put(&mut self.w, &mut h, &self.rec.buf)?;
                        self.rec.buf.clear();
                    }
                    self.rec.raw(b"\"");
                }
            }
            self.raw_extras(ctx);
        }
        self.prev_member();
        put(&mut self.w, &mut h, &self.rec.buf)?;
        self.rec.buf.clear();
        let digest = h.finalize();
        let tail = self.tail(&digest);
        self.w.write_all(&tail)
    }
}

/// Bytes of raw line escaped per piece of a streamed record.
const CHUNK: usize = 64 * 1024;

/// Default of [`Audit::stream_records_from`]: records from 1 MiB on are streamed.
pub const STREAM_RECORD: usize = 1 << 20;

fn put<W: Write>(w: &mut W, h: &mut Sha256, bytes: &[u8]) -> io::Result<()> {
    h.update(bytes);
    w.write_all(bytes)
}

impl<W: Write> Sink for Audit<W> {
    fn event(&mut self, events: &Events, meta: &EventMeta, raw: Option<&[u8]>) -> io::Result<()> {
        let ctx = EventCtx {
            raw,
            line: None,
            stamp: self.fallback_clock.now(),
            cli_version: None,
        };
        self.event_with(events, meta, &ctx)
    }

    fn event_with(
        &mut self,
        events: &Events,
        meta: &EventMeta,
        ctx: &EventCtx<'_>,
    ) -> io::Result<()> {
        let size = events.bytes(meta).len() + ctx.raw.map_or(0, <[u8]>::len);
        if size >= self.stream_at {
            // One write per record would mean holding a copy of a huge line (escaped) and of its
            // event; such a record is written in pieces, a torn one is still detected by verify.
            self.drain()?;
            self.stream_record(events, meta, ctx)?;
        } else if self.sync.is_none() {
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

/// Open `path` for appending audit records: create it if missing, take an exclusive advisory
/// lock (held while the `File` lives), and return the file with the hash the next record must
/// chain from. Fails if another writer holds the lock or the last record is torn or not an audit
/// record.
pub fn open_append(path: &Path) -> io::Result<(File, [u8; 64])> {
    let mut f = crate::files::private()
        .read(true)
        .append(true)
        .create(true)
        .open(path)?;
    crate::files::lock_exclusive(&f, "audit log")?;
    let prev = last_hash(&mut f)?;
    Ok((f, prev))
}

/// The `hash` of the last record of an audit file ([`GENESIS`] when empty), read from its tail.
pub fn last_hash<F: Read + Seek>(f: &mut F) -> io::Result<[u8; 64]> {
    let len = f.seek(SeekFrom::End(0))?;
    if len == 0 {
        return Ok(GENESIS);
    }
    let n = len.min(TAIL_LEN as u64);
    f.seek(SeekFrom::End(-(n as i64)))?;
    let mut tail = vec![0u8; n as usize];
    f.read_exact(&mut tail)?;
    if tail.last() != Some(&b'\n') {
        return Err(bad(
            "the last record is torn (no newline at the end); check it with `boo-normalize audit verify` and cut the partial line before appending",
        ));
    }
    parse_tail(&tail).ok_or_else(|| {
        bad("not an audit log: its last line does not end with a record hash (refusing to append)")
    })
}

/// The hash in a record's tail `,"hash":"<64 lowercase hex>"}\n`, if `bytes` ends with one.
pub fn parse_tail(bytes: &[u8]) -> Option<[u8; 64]> {
    let t = bytes.get(bytes.len().checked_sub(TAIL_LEN)?..)?;
    let (head, rest) = t.split_at(9);
    let (hash, end) = rest.split_at(64);
    if head != b",\"hash\":\"" || end != b"\"}\n" {
        return None;
    }
    if !hash.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    hash.try_into().ok()
}

fn bad(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

#[cfg(test)]
mod tests {
    use super::*;

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
                    };
                    a.event_with(&ev, m, &c).unwrap();
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
