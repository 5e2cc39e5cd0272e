//! The audit log format: one hash-chained JSON record per envelope event. Its reader ([`read`],
//! for replay) and its verifier ([`verify`]) live here, and this file holds the format and the
//! file operations of appending (lock, the last hash); the writer is a sink,
//! [`crate::sink::audit`].
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
//! | `raw_eol` | string | only when the line did not end in `"\n"`: `"\r\n"`, or for a last line without newline `""` (or `"\r"` when it ends in one) |
//! | `raw_cut_from` | integer | only when `--max-line-bytes` cut the line: its real length up to the `\n` (`raw` holds the kept prefix) |
//! | `prev` | string | `hash` of the previous record in the file; 64 `0`s for the first record of a file |
//! | `hash` | string | lowercase hex SHA-256 of this record's bytes from `{` through the `,` before `"hash"` |
//!
//! `raw`/`raw_b64` (and `raw_eol`, `raw_cut_from`) appear on the **first** record of each input
//! line and are omitted from the other records of that line and from synthesized events
//! (`run.end`, flushed tool calls, …) — so concatenating the `raw` values, each followed by its
//! `raw_eol` (default `"\n"`), rebuilds the input stream exactly. Ephemeral events (deltas,
//! stream lifecycle) are recorded like any other. When redaction is on, `raw` is the redacted
//! line. For another agent's stream ([`crate::dialect`]) `raw` is that agent's line as read,
//! not the stream-json the dialect reader made of it (so replaying the log reads it again with
//! the same reader); with redaction on, it is the redacted stream-json line, as redaction
//! rewrites the lines the normalizer reads.
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
//! batch of whole records per `write` (by that thread for `--audit FILE`, see [`shared`]), at
//! the latest whenever the pipeline flushes (its input has nothing more ready); a record of
//! 1 MiB or more is written in pieces. With `--fsync` each
//! record is one `write` followed by `fdatasync`, so a crash loses at most the record being
//! written. A crash mid-write leaves a torn last record, which `audit verify` reports and which
//! appending refuses to build on.

pub mod read;
pub(crate) mod record;
pub mod verify;

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// `prev` of the first record of a file.
pub const GENESIS: [u8; 64] = [b'0'; 64];

/// Length of the literal tail `,"hash":"<64 hex>"}\n` every record ends with.
pub const TAIL_LEN: usize = 1 + 8 + 64 + 3;

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

/// Where the last run of an audit file stands, for continuing it in a new process: its id, the
/// last `seq` and the last `mono_us`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunTail {
    /// The run id.
    pub run_id: String,
    /// The last record's `seq`.
    pub seq: u64,
    /// The last record's `mono_us`.
    pub mono_us: u64,
}

/// The last run of the audit file at `path` (`None`: the file is missing or empty). Reads the
/// last record only (backwards from the end, however long it is).
pub fn last_run(path: &Path) -> io::Result<Option<RunTail>> {
    let mut f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let len = f.seek(SeekFrom::End(0))?;
    if len == 0 {
        return Ok(None);
    }
    // Read backwards in chunks until the newline before the last record.
    let mut tail: Vec<u8> = Vec::new();
    let mut at = len;
    let start = loop {
        let n = at.min(64 * 1024);
        at -= n;
        f.seek(SeekFrom::Start(at))?;
        let mut chunk = vec![0u8; n as usize];
        f.read_exact(&mut chunk)?;
        chunk.extend_from_slice(&tail);
        tail = chunk;
        let body = &tail[..tail.len().saturating_sub(1)];
        if let Some(i) = memchr::memrchr(b'\n', body) {
            break i + 1;
        }
        if at == 0 {
            break 0;
        }
    };
    let line = &tail[start..];
    let line = line.strip_suffix(b"\n").ok_or_else(|| {
        bad("the last record is torn (no newline at the end); check it with `boo-normalize audit verify`")
    })?;
    let rec = read::Record::parse(line)
        .map_err(|e| bad(&format!("not an audit log: its last line: {e}")))?;
    Ok(Some(RunTail {
        run_id: rec.run_id.into_owned(),
        seq: rec.seq,
        mono_us: rec.mono_us,
    }))
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

pub(crate) fn bad(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}
