//! Finishing audit records on a helper thread: while the pipeline builds the next batch of
//! records, the previous batch's raw lines are escaped, its records hashed and chained.
//!
//! The pipeline copies each record's raw line into the batch as it was read; this thread writes
//! the records again with the line as a JSON string (the costliest part of a record after its
//! hash), each followed by its `prev` member, and hashes each record in the same pass, while it
//! is in cache. Batches are finished one at a time and in order, each starting from the chain
//! head the sink handed over with it, so the chain is the one a record-by-record writer makes:
//! the bytes written are exactly those of records built and hashed one at a time.

use std::io;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use sha2::{Digest, Sha256};

use super::write::{raw_member, tail};
use crate::json::Out;

/// Records back to back, as the sink built them up to their `prev` member.
pub struct Batch {
    /// The records. Handed over: each up to its `prev` member, its raw line unescaped (see
    /// `raws`); handed back: the finished records, ready to write.
    pub buf: Vec<u8>,
    /// Per record: where it starts and where its `prev` member goes.
    pub recs: Vec<(usize, usize)>,
    /// Per record: where its raw line's bytes are in `buf`, as they were read, if the record
    /// has one; they become its `raw` (or `raw_b64`) member here (see [`raw_member`]).
    pub raws: Vec<Option<(usize, usize)>>,
    /// Handed over: the hash the first record chains from; handed back: the last record's.
    pub prev: [u8; 64],
    /// Room for the finished records (handed back holding the records as they were handed
    /// over, emptied, for reuse).
    pub spare: Vec<u8>,
}

impl Batch {
    /// Write the finished records into `spare` (raw members made, `prev`, `hash`), hashing
    /// each as it is written, and swap `spare` and `buf`.
    fn finish(&mut self) {
        let mut out = Out::from_buf(std::mem::take(&mut self.spare));
        out.buf.clear();
        out.buf
            .reserve(self.buf.len() + self.buf.len() / 8 + self.recs.len() * END_LEN);
        for (&(start, end), raw) in self.recs.iter().zip(&self.raws) {
            let at = out.buf.len();
            match *raw {
                Some((rs, re)) => {
                    out.raw(&self.buf[start..rs]);
                    raw_member(&mut out, &self.buf[rs..re]);
                    out.raw(&self.buf[re..end]);
                }
                None => out.raw(&self.buf[start..end]),
            }
            out.raw(b",\"prev\":\"");
            out.raw(&self.prev);
            out.raw(b"\",");
            let (hex, t) = tail(&Sha256::digest(&out.buf[at..]));
            out.raw(&t);
            self.prev = hex;
        }
        self.spare = std::mem::replace(&mut self.buf, out.buf);
        self.spare.clear();
    }
}

/// `,"prev":"<64 hex>","hash":"<64 hex>"}\n`: what follows a record's prefix.
const END_LEN: usize = 9 + 64 + 2 + 8 + 64 + 3;

/// Batches are handed over once they hold this many bytes (or at a flush).
pub const BATCH_BYTES: usize = 1 << 20;

/// The helper thread and the batch it is hashing, if any.
pub struct Hasher {
    to: Option<SyncSender<Batch>>,
    from: Receiver<Batch>,
    thread: Option<JoinHandle<()>>,
    in_flight: bool,
}

impl Hasher {
    /// Start the helper thread.
    pub fn start() -> io::Result<Self> {
        let (to, work) = sync_channel::<Batch>(1);
        let (done, from) = sync_channel::<Batch>(1);
        let thread = std::thread::Builder::new()
            .name("audit-hash".into())
            .spawn(move || {
                for mut b in work {
                    b.finish();
                    if done.send(b).is_err() {
                        return;
                    }
                }
            })?;
        Ok(Hasher {
            to: Some(to),
            from,
            thread: Some(thread),
            in_flight: false,
        })
    }

    /// Hand `b` over. The previous batch must have been taken back with [`Hasher::wait`].
    pub fn send(&mut self, b: Batch) -> io::Result<()> {
        debug_assert!(!self.in_flight);
        self.to
            .as_ref()
            .and_then(|t| t.send(b).ok())
            .ok_or_else(gone)?;
        self.in_flight = true;
        Ok(())
    }

    /// The batch handed over last, hashed (`None` if there is none).
    pub fn wait(&mut self) -> io::Result<Option<Batch>> {
        if !self.in_flight {
            return Ok(None);
        }
        self.in_flight = false;
        self.from.recv().map(Some).map_err(|_| gone())
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
