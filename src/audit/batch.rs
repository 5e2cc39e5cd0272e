//! Hashing audit records on a helper thread: while the pipeline builds the next batch of records,
//! the previous batch's records are hashed up to their `prev` member.
//!
//! A record's hash covers its bytes through `"prev":"…",`, and only that short end depends on
//! the record before it. So the long part of each record is hashed here, in parallel with the
//! pipeline, and the sink finishes the chain in order: prev member, digest, tail, each a few
//! dozen bytes. The bytes written are exactly those of a record built and hashed in one go.

use std::io;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use sha2::{Digest, Sha256};

/// Records back to back, each followed by room for its end (see [`END_LEN`]).
#[derive(Default)]
pub struct Batch {
    /// The records.
    pub buf: Vec<u8>,
    /// Per record: its start and the end of its prefix (where `,"prev":"` goes).
    pub recs: Vec<(usize, usize)>,
    /// Per record, once hashed: SHA-256 fed with the prefix.
    pub states: Vec<Sha256>,
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
                    b.states.clear();
                    for &(start, end) in &b.recs {
                        let mut h = Sha256::new();
                        h.update(&b.buf[start..end]);
                        b.states.push(h);
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
