//! Finishing audit records on a helper thread: while the pipeline builds the next batch of
//! records, the previous batch's raw lines are escaped, its records hashed and chained.
//!
//! The pipeline copies each record's event and raw line into the batch as they are, with its
//! numbers beside ([`Rec`]); this thread writes the records whole: the members before the event
//! (`seq`, `run_id`, `ts`, …), the line as a JSON string (the costliest part of a record after
//! its hash), the `prev` member, and hashes each record in the same pass, while it is in cache.
//! So the pipeline thread does little more than for the envelope, and the two cores share the
//! work. Batches are finished one at a time and in order, each starting from the chain
//! head the sink handed over with it or, when the sink did not know it yet (batches still on
//! their way), from the last hash of the batch before; so the chain is the one a
//! record-by-record writer makes: the bytes written are exactly those of records built and
//! hashed one at a time.

use std::io::{self, Write};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use sha2::{Digest, Sha256};

use crate::audit::record::{Ts, head as record_head, raw_member, tail};
use crate::json::Out;

/// One record handed over: its numbers, and where its bytes are in [`Batch::buf`].
pub struct Rec {
    /// `seq`.
    pub seq: u64,
    /// The wall clock time `ts` says, µs since the Unix epoch.
    pub unix_us: i64,
    /// `mono_us`.
    pub mono_us: u64,
    /// Where its bytes start: the value of `cli_version`, `,"event":` and the event, then the
    /// raw member and its extras (`raw_eol`, `raw_cut_from`), up to `end`.
    pub start: usize,
    /// Where the raw line's bytes are, as they were read, if the record has one; they become
    /// its `raw` (or `raw_b64`) member here (see `raw_member`).
    pub raw: Option<(usize, usize)>,
    /// Where its bytes end (where its `prev` member goes).
    pub end: usize,
}

/// Records handed to the helper thread to be written whole.
pub struct Batch {
    /// Handed over: the records' bytes from `cli_version` on (see [`Rec`]); handed back: the
    /// finished records, ready to write.
    pub buf: Vec<u8>,
    /// The records.
    pub recs: Vec<Rec>,
    /// Handed over: the hash the first record chains from (`None`: the last hash of the batch
    /// handed over before); handed back: the last record's.
    pub prev: Option<[u8; 64]>,
    /// Room for the finished records (handed back holding the records as they were handed
    /// over, emptied, for reuse).
    pub spare: Vec<u8>,
    /// Handed back: how writing the finished records went, when the helper thread writes them
    /// (see [`Hasher::start`]); `None`: they are for the sink to write.
    pub written: Option<io::Result<()>>,
}

impl Batch {
    /// Write the finished records into `spare` (raw members made, `prev`, `hash`), hashing
    /// each as it is written, chaining from `prev` (or `head`, the last hash of the batch
    /// before), and swap `spare` and `buf`.
    fn finish(&mut self, head: [u8; 64], run_id: &str, ts: &mut Ts) {
        let mut prev = self.prev.unwrap_or(head);
        let mut out = Out::from_buf(std::mem::take(&mut self.spare));
        out.buf.clear();
        out.buf
            .reserve(self.buf.len() + self.buf.len() / 8 + self.recs.len() * (HEAD_LEN + END_LEN));
        for r in &self.recs {
            let (start, end) = (r.start, r.end);
            let at = out.buf.len();
            record_head(&mut out, r.seq, run_id, ts.of(r.unix_us), r.mono_us);
            match r.raw {
                Some((rs, re)) => {
                    out.raw(&self.buf[start..rs]);
                    raw_member(&mut out, &self.buf[rs..re]);
                    out.raw(&self.buf[re..end]);
                }
                None => out.raw(&self.buf[start..end]),
            }
            out.raw(b",\"prev\":\"");
            out.raw(&prev);
            out.raw(b"\",");
            let (hex, t) = tail(&Sha256::digest(&out.buf[at..]));
            out.raw(&t);
            prev = hex;
        }
        self.prev = Some(prev);
        self.spare = std::mem::replace(&mut self.buf, out.buf);
        self.spare.clear();
    }
}

/// About the length of a record's members before `cli_version` (run ids are mostly UUIDs).
const HEAD_LEN: usize = 120;

/// `,"prev":"<64 hex>","hash":"<64 hex>"}\n`: what follows a record's prefix.
const END_LEN: usize = 9 + 64 + 2 + 8 + 64 + 3;

/// Batches are handed over once they hold this many bytes (or at a flush).
pub const BATCH_BYTES: usize = 1 << 20;

/// Batches on their way at most: the pipeline waits for the oldest only when it has handed over
/// this many, so a helper thread that falls behind for a moment (another process had the core)
/// does not stop it.
pub const DEPTH: usize = 3;

/// The helper thread and the batches handed to it and not taken back yet.
pub struct Hasher {
    to: Option<SyncSender<Batch>>,
    from: Receiver<Batch>,
    thread: Option<JoinHandle<()>>,
    in_flight: usize,
}

impl Hasher {
    /// Start the helper thread; with `out`, it writes each batch there once finished.
    pub fn start(run_id: &str, out: Option<Arc<Mutex<dyn Write + Send>>>) -> io::Result<Self> {
        let run_id = run_id.to_owned();
        let (to, work) = sync_channel::<Batch>(DEPTH);
        let (done, from) = sync_channel::<Batch>(DEPTH);
        let thread = std::thread::Builder::new()
            .name("audit-hash".into())
            .spawn(move || {
                let mut head = crate::audit::GENESIS;
                let mut ts = Ts::default();
                for mut b in work {
                    b.finish(head, &run_id, &mut ts);
                    head = b.prev.expect("set by finish");
                    if let Some(out) = &out {
                        let mut w = out.lock().unwrap_or_else(PoisonError::into_inner);
                        b.written = Some(w.write_all(&b.buf));
                    }
                    if done.send(b).is_err() {
                        return;
                    }
                }
            })?;
        Ok(Hasher {
            to: Some(to),
            from,
            thread: Some(thread),
            in_flight: 0,
        })
    }

    /// Hand `b` over (at most [`DEPTH`] batches may be on their way).
    pub fn send(&mut self, b: Batch) -> io::Result<()> {
        debug_assert!(self.in_flight < DEPTH);
        self.to
            .as_ref()
            .and_then(|t| t.send(b).ok())
            .ok_or_else(gone)?;
        self.in_flight += 1;
        Ok(())
    }

    /// How many batches were handed over and not taken back.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// The oldest batch on its way, once finished (`None` if there is none).
    pub fn wait(&mut self) -> io::Result<Option<Batch>> {
        if self.in_flight == 0 {
            return Ok(None);
        }
        let b = self.from.recv().map_err(|_| gone())?;
        self.in_flight -= 1;
        Ok(Some(b))
    }

    /// The oldest batch on its way if it is finished already.
    pub fn try_take(&mut self) -> io::Result<Option<Batch>> {
        if self.in_flight == 0 {
            return Ok(None);
        }
        match self.from.try_recv() {
            Ok(b) => {
                self.in_flight -= 1;
                Ok(Some(b))
            }
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Disconnected) => Err(gone()),
        }
    }
}

impl Drop for Hasher {
    fn drop(&mut self) {
        self.to = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn gone() -> io::Error {
    io::Error::other("the audit hashing thread stopped")
}
