//! `audit verify`: walk an audit log and report the first record that breaks the hash chain,
//! the `seq` continuity of its run, or the record format (see [`crate::audit`]).
//!
//! Checks, per line in order: it ends with a newline (else: torn last record); it ends with the
//! literal `,"hash":"<64 lowercase hex>"}`; the SHA-256 of everything before `"hash"` equals
//! that hash; it is a JSON object with the record keys; `prev` equals the previous line's hash
//! (64 `0`s on line 1); `event.seq` equals `seq`; within a run (the records with one `run_id`)
//! `seq` goes up by exactly 1 and `mono_us` never decreases; the records of several runs may
//! interleave (one `acp` process writes each session as a run of its own), but a `run_id` that
//! comes back after another run's records must continue its own `seq`; `ts` is RFC 3339;
//! `raw_b64` is base64. Any single changed, removed, inserted or reordered byte or record
//! fails one of these.
//!
//! A run whose last record is not `run.end` is listed in [`Summary::incomplete`]: its writer was
//! killed (or is still writing). The chain is intact, so this is not a failure by itself, unless
//! `--require-complete` asks for it ([`report`], the command's words and exit status).

use std::collections::HashMap;
use std::fmt;
use std::io::{self, BufRead};

use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::read::Record;
use super::{GENESIS, TAIL_LEN, parse_tail};
use crate::envelope::kind;
use crate::error::{Error, counted, sanitize};
use crate::exit::Exit;

/// A verified log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Records (lines).
    pub records: u64,
    /// Runs (distinct `run_id`s).
    pub runs: u64,
    /// The last record's hash (64 `0`s for an empty file): a new run appended to the file
    /// chains from it.
    pub head: String,
    /// Run ids, in file order, whose last record is not a `run.end`.
    pub incomplete: Vec<String>,
}

/// The first problem found.
#[derive(Debug)]
pub enum Failure {
    /// The log could not be read.
    Io(io::Error),
    /// Line `line` (1-based) is bad for `reason`.
    Bad {
        /// 1-based line number.
        line: u64,
        /// What is wrong, in a few words.
        reason: String,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Io(e) => write!(f, "{e}"),
            Failure::Bad { line, reason } => write!(f, "line {line}: {reason}"),
        }
    }
}

struct Run {
    seq: u64,
    mono_us: u64,
    ended: bool,
    /// The line of its last record.
    line: u64,
}

/// Whether `rec`, of a run seen before another run's records, continues it as one of several
/// runs written at once (`acp`'s sessions): its `seq` is the next one. A run that started over,
/// or records spliced in from elsewhere, do not.
fn interleaved(run: &Run, rec: &Record<'_>) -> bool {
    rec.seq == run.seq + 1
}

/// Verify the audit log read from `r`.
pub fn verify<R: BufRead>(mut r: R) -> Result<Summary, Failure> {
    let mut buf = Vec::new();
    let mut prev = GENESIS;
    let mut n = 0u64;
    // Every run seen (several may interleave), in order of first appearance.
    let mut runs: HashMap<String, Run> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut last: Option<String> = None;
    loop {
        buf.clear();
        if r.read_until(b'\n', &mut buf).map_err(Failure::Io)? == 0 {
            break;
        }
        n += 1;
        let bad = |reason: String| Failure::Bad { line: n, reason };
        if buf.last() != Some(&b'\n') {
            return Err(bad(
                "torn last record: the file does not end with a newline".into(),
            ));
        }
        let Some(hash) = parse_tail(&buf) else {
            return Err(bad(
                "not an audit record: it does not end with ,\"hash\":\"<64 lowercase hex>\"}"
                    .into(),
            ));
        };
        let body = &buf[..buf.len() - TAIL_LEN + 1];
        let mut want = [0u8; 64];
        hex::encode_to_slice(Sha256::digest(body), &mut want).expect("64 hex digits");
        if want != hash {
            return Err(bad(
                "hash mismatch: the record was altered after it was written".into(),
            ));
        }
        let rec = Record::parse(&buf[..buf.len() - 1])
            .map_err(|e| bad(format!("not a valid record: {e}")))?;
        let head = rec
            .head()
            .map_err(|e| bad(format!("not a valid record: event: {e}")))?;
        if rec.prev.as_bytes() != prev {
            let reason = if n == 1 {
                "prev is not the genesis value: records before this one are missing".to_owned()
            } else {
                format!(
                    "prev is not the hash of line {}: a record was removed, inserted or reordered",
                    n - 1
                )
            };
            return Err(bad(reason));
        }
        let Some(event_seq) = head.seq else {
            return Err(bad("not a valid record: event: missing field `seq`".into()));
        };
        if event_seq != rec.seq {
            return Err(bad(format!(
                "event.seq {event_seq} differs from the record's seq {}",
                rec.seq
            )));
        }
        if humantime::parse_rfc3339(&rec.ts).is_err() {
            return Err(bad(format!("ts {:?} is not RFC 3339 UTC", rec.ts)));
        }
        if let Some(b) = &rec.raw_b64
            && base64::engine::general_purpose::STANDARD
                .decode(b.as_bytes())
                .is_err()
        {
            return Err(bad("raw_b64 is not base64".into()));
        }
        let ended = head.kind.as_deref() == Some(kind::RUN_END);
        let same = last.as_deref() == Some(&*rec.run_id);
        match runs.get_mut(&*rec.run_id) {
            Some(cur) => {
                if !same && !interleaved(cur, &rec) {
                    return Err(bad(format!(
                        "run {} appears again after another run (seq {} after its seq {} on line {}; records of runs written at once continue their own seq)",
                        rec.run_id, rec.seq, cur.seq, cur.line
                    )));
                }
                if rec.seq != cur.seq + 1 {
                    return Err(bad(format!(
                        "seq {} follows seq {} in run {}: expected {}",
                        rec.seq,
                        cur.seq,
                        rec.run_id,
                        cur.seq + 1
                    )));
                }
                if rec.mono_us < cur.mono_us {
                    return Err(bad(format!(
                        "mono_us {} is before the previous record's {} in the same run",
                        rec.mono_us, cur.mono_us
                    )));
                }
                cur.seq = rec.seq;
                cur.mono_us = rec.mono_us;
                cur.ended = ended;
                cur.line = n;
            }
            None => {
                order.push(rec.run_id.clone().into_owned());
                runs.insert(
                    rec.run_id.clone().into_owned(),
                    Run {
                        seq: rec.seq,
                        mono_us: rec.mono_us,
                        ended,
                        line: n,
                    },
                );
            }
        }
        if !same {
            last = Some(rec.run_id.into_owned());
        }
        prev = hash;
    }
    let incomplete = order
        .iter()
        .filter(|id| runs.get(*id).is_some_and(|r| !r.ended))
        .cloned()
        .collect();
    Ok(Summary {
        records: n,
        runs: order.len() as u64,
        incomplete,
        head: String::from_utf8(prev.to_vec()).expect("hex is ASCII"),
    })
}

/// `audit verify FILE`'s whole report on the log called `name` read from `r`: the verdict line
/// on `out` (`NAME: ok: …` or, with `require_complete` and a run without `run.end`,
/// `NAME: incomplete: N runs without run.end (--require-complete)`), each incomplete run on
/// `err`, and the exit status (findings when a record is bad or, with `require_complete`, a run
/// is incomplete; a bad record is the error `NAME:LINE: reason`).
pub fn report<R: BufRead>(
    name: &str,
    r: R,
    require_complete: bool,
    out: &mut dyn io::Write,
    err: &mut dyn io::Write,
) -> Result<Exit, Error> {
    let s = match verify(r) {
        Ok(s) => s,
        Err(Failure::Io(e)) => return Err(Error::io(name, e)),
        Err(Failure::Bad { line, reason }) => {
            return Err(Error::msg(name, reason)
                .at(line, None)
                .with_exit(Exit::FINDINGS));
        }
    };
    // With --require-complete a run without run.end fails the file: never "ok" then.
    let failed = require_complete && !s.incomplete.is_empty();
    let verdict = match failed {
        true => format!(
            "incomplete: {} without run.end (--require-complete)",
            counted(s.incomplete.len() as u64, "run")
        ),
        false => "ok".to_owned(),
    };
    writeln!(
        out,
        "{}: {verdict}: {} in {}, last hash {}",
        sanitize(name),
        counted(s.records, "record"),
        counted(s.runs, "run"),
        s.head
    )
    .map_err(|e| Error::io("stdout", e))?;
    for id in &s.incomplete {
        let _ = writeln!(
            err,
            "{}: run {}: incomplete: no run.end",
            sanitize(name),
            sanitize(id)
        );
    }
    Ok(if failed { Exit::FINDINGS } else { Exit::OK })
}
