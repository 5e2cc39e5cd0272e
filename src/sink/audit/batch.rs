//! The audit sink's batching: records gathered into a batch as they come (event and raw line as
//! they are), each full batch handed to the hashing thread ([`super::hasher`]), the batches it
//! finished written, and every batch drained at a flush.

use std::io;

use super::Audit;
use super::hasher::{BATCH_BYTES, Batch, DEPTH, Hasher, Rec};
use crate::envelope::{EventMeta, Events};
use crate::sink::EventCtx;

impl<W: io::Write> Audit<W> {
    /// Append the record's `cli_version`, event and raw line (as read) to the batch in `rec`,
    /// and hand the batch to the hashing thread once it is big enough; that thread writes the
    /// record (see [`Batch`]).
    pub(super) fn batch_record(
        &mut self,
        events: &Events,
        meta: &EventMeta,
        ctx: &EventCtx<'_>,
    ) -> io::Result<()> {
        debug_assert!(!self.recs.is_empty() || self.rec.buf.is_empty());
        let start = self.rec.buf.len();
        self.cli_and_event_key(ctx);
        self.rec.raw(events.bytes(meta));
        let raw = self.raw_and_extras(meta, ctx, !self.escape_here);
        self.recs.push(Rec {
            seq: meta.seq,
            unix_us: ctx.stamp.unix_us,
            mono_us: self.mono_base + ctx.stamp.mono_us,
            start,
            raw,
            end: self.rec.buf.len(),
        });
        if self.rec.buf.len() >= BATCH_BYTES {
            self.ship()?;
        }
        Ok(())
    }

    /// Hand the batch in `rec` to the hashing thread, after writing the batches it has
    /// finished (waiting for the oldest only when [`DEPTH`] batches are on their way).
    ///
    /// The two threads share the work by batches: a record's raw line is escaped on the hashing
    /// thread (its costliest part after the hash), except in a batch built while that thread is
    /// [`DEPTH`] batches behind, which this thread would soon have to wait for: that batch's
    /// lines are escaped here instead. So when the hashing thread is the slower one (escaping
    /// and hashing take more than the pipeline's own work on some input, or another process has
    /// its core), the pipeline takes over part of its work rather than wait.
    fn ship(&mut self) -> io::Result<()> {
        if self.recs.is_empty() {
            return Ok(());
        }
        let mut hasher = match self.hasher.take() {
            Some(h) => h,
            None => Hasher::start(&self.run_id, self.helper_out.clone())?,
        };
        let sent = self.land_finished(&mut hasher, DEPTH - 1).and_then(|()| {
            // The chain head is known here only when no batch is on its way; otherwise the
            // helper goes on from the last record it finished.
            let prev = (hasher.in_flight() == 0).then_some(self.prev);
            let buf = self.pool.pop().unwrap_or_default();
            hasher.send(Batch {
                buf: std::mem::replace(&mut self.rec.buf, buf),
                recs: std::mem::take(&mut self.recs),
                prev,
                spare: self.pool.pop().unwrap_or_default(),
                written: None,
            })
        });
        self.escape_here = hasher.in_flight() >= self.escape_from;
        self.hasher = Some(hasher);
        sent
    }

    /// Write the batches `hasher` has finished, waiting for the oldest while more than `keep`
    /// are on their way.
    fn land_finished(&mut self, hasher: &mut Hasher, keep: usize) -> io::Result<()> {
        loop {
            let done = if hasher.in_flight() > keep {
                hasher.wait()?
            } else {
                hasher.try_take()?
            };
            let Some(b) = done else { return Ok(()) };
            self.prev = b.prev.expect("a finished batch holds its last hash");
            let written = match b.written {
                Some(r) => r,
                None => self.w.write_all(&b.buf),
            };
            for mut v in [b.buf, b.spare] {
                v.clear();
                self.pool.push(v);
            }
            written?;
        }
    }

    /// Write every batched record.
    pub(super) fn drain(&mut self) -> io::Result<()> {
        self.ship()?;
        if let Some(mut hasher) = self.hasher.take() {
            let landed = self.land_finished(&mut hasher, 0);
            self.hasher = Some(hasher);
            landed?;
        }
        Ok(())
    }
}
