//! The audit log sink: one hash-chained JSON record per envelope event, lossless (every input
//! line is kept), written whole in one `write` per record.
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
//! after a torn last record. Each record is handed to the kernel in one `write`; `--fsync` also
//! calls `fdatasync` after each record, so a crash loses at most the record being written,
//! which `audit verify` reports as a torn last record.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use base64::Engine as _;
use sha2::{Digest, Sha256};

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
        }
    }

    /// Call `sync` (e.g. `File::sync_data`) after every record.
    pub fn with_sync(mut self, sync: fn(&mut W) -> io::Result<()>) -> Self {
        self.sync = Some(sync);
        self
    }

    /// The hash of the last record written (or the `prev` given to [`Audit::new`]).
    pub fn head(&self) -> &[u8; 64] {
        &self.prev
    }

    fn record(&mut self, events: &Events, meta: &EventMeta, ctx: &EventCtx<'_>) {
        let unix_us = ctx.stamp.unix_us;
        if self.ts_of.as_ref().is_none_or(|(t, _)| *t != unix_us) {
            self.ts_of = Some((unix_us, ctx.stamp.rfc3339()));
        }
        let ts = &self.ts_of.as_ref().expect("just set").1;
        let o = &mut self.rec;
        o.buf.clear();
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
        o.raw(events.bytes(meta));
        if let Some(raw) = ctx.raw
            && meta.line.is_some()
            && meta.line != self.last_raw_line
        {
            self.last_raw_line = meta.line;
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
        o.raw(b",\"prev\":\"");
        o.raw(&self.prev);
        o.raw(b"\",");
        let digest = Sha256::digest(&o.buf);
        let mut hex = [0u8; 64];
        hex::encode_to_slice(digest, &mut hex).expect("64 hex digits");
        o.raw(b"\"hash\":\"");
        o.raw(&hex);
        o.raw(b"\"}\n");
        self.prev = hex;
    }
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
        self.record(events, meta, ctx);
        self.w.write_all(&self.rec.buf)?;
        self.w.flush()?;
        if let Some(sync) = self.sync {
            sync(&mut self.w)?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// Open `path` for appending audit records: create it if missing, take an exclusive advisory
/// lock (held while the `File` lives), and return the file with the hash the next record must
/// chain from. Fails if another writer holds the lock or the last record is torn or not an audit
/// record.
pub fn open_append(path: &Path) -> io::Result<(File, [u8; 64])> {
    let mut f = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)?;
    match f.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "another process is writing this audit log (it holds the lock)",
            ));
        }
        Err(TryLockError::Error(e)) => return Err(e),
    }
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
