//! Finishing audit records on a helper thread: while the pipeline builds the next batch of
//! records, the previous batch's raw lines are escaped and its records hashed up to their `prev`
//! member.
//!
//! A record's hash covers its bytes through `"prev":"…",`, and only that short end depends on
//! the record before it. So the long part of each record is made and hashed here, in parallel
//! with the pipeline: the pipeline copies the raw line into the batch as it is, and this thread
//! writes the record with the line escaped as a JSON string (the costliest part of a record
//! after its hash) and feeds the hash in the same pass, while the record is in cache. The sink
//! then finishes the chain in order: prev member, digest, tail, each a few dozen bytes. The
//! bytes written are exactly those of a record built and hashed in one go.

use std::io;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use sha2::{Digest, Sha256};

use super::write::raw_member;
use crate::json::Out;

/// Records back to back, each followed by room for its end (see [`END_LEN`]).
#[derive(Default)]
pub struct Batch {
    /// The records. Handed over: their raw lines unescaped (see `raws`); handed back: finished.
    pub buf: Vec<u8>,
    /// Per record: its start and the end of its prefix (where `,"prev":"` goes).
    pub recs: Vec<(usize, usize)>,
    /// Per record: where its raw line's bytes are in `buf`, as they were read, if the record
    /// has one; they become its `raw` (or `raw_b64`) member here (see [`raw_member`]).
    pub raws: Vec<Option<(usize, usize)>>,
    /// Per record, once hashed: SHA-256 fed with the prefix.
    pub states: Vec<Sha256>,
    /// Room for the finished records (handed over empty; handed back holding the records as
    /// they were handed over, for reuse).
    pub spare: Vec<u8>,
}

impl Batch {
    /// Write the records into `spare` with their raw members made, hash each up to its end,
    /// and swap `spare` and `buf`.
    fn finish(&mut self) {
        self.states.clear();
        let mut out = Out::from_buf(std::mem::take(&mut self.spare));
        out.buf.clear();
        out.buf.reserve(self.buf.len() + self.buf.len() / 8);
        for (r, raw) in self.recs.iter_mut().zip(&self.raws) {
            let (start, end) = *r;
            let at = out.buf.len();
            match *raw {
                Some((rs, re)) => {
                    out.raw(&self.buf[start..rs]);
                    raw_member(&mut out, &self.buf[rs..re]);
                    out.raw(&self.buf[re..end]);
                }
                None => out.raw(&self.buf[start..end]),
            }
            let mut h = Sha256::new();
            h.update(&out.buf[at..]);
            self.states.push(h);
            *r = (at, out.buf.len());
            out.buf.resize(out.buf.len() + END_LEN, 0);
        }
        self.spare = std::mem::replace(&mut self.buf, out.buf);
        self.spare.clear();
    }
}

/// `,"prev":"<64 hex>","hash":"<64 hex>"}\n`: what follows a record's prefix.
pub const END_LEN: usize = 9 + 64 + 2 + 8 + 64 + 3;

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
