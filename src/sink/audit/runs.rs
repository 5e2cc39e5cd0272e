//! One audit log that several runs write at once (`acp`: each session is a run of its own):
//! one file, one lock, one hash chain, every record whole and chained in the order written.
//! Each run's records carry its own run id, and its `seq` and `mono_us` go on across the
//! pipelines it has one after the other (a session's CLI restarted), so that `audit verify`
//! checks each run on its own within the interleaved file.

use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use super::cut_back::CutBack;
use super::{Audit, RunCursor};
use crate::audit::open_append;
use crate::envelope::{EventMeta, Events};
use crate::sink::{EventCtx, Sink};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The log, open for appending (its lock held while it lives).
pub struct Log {
    audit: Mutex<Audit<CutBack>>,
}

impl Log {
    /// Open `path` for appending (see [`open_append`]); `fsync`: `fdatasync` after every record.
    pub fn open(path: &Path, fsync: bool) -> io::Result<Arc<Log>> {
        let (f, prev) = open_append(path)?;
        let mut a = Audit::new(CutBack::new(f)?, "", prev).unbatched();
        if fsync {
            a = a.with_sync(CutBack::sync_data);
        }
        Ok(Arc::new(Log {
            audit: Mutex::new(a),
        }))
    }
}

/// Where one run stands in the log: shared by its pipelines, one after the other.
pub struct Run {
    log: Arc<Log>,
    at: Mutex<At>,
}

#[derive(Default)]
struct At {
    cursor: RunCursor,
    /// The `seq` the run's next event gets.
    next_seq: u64,
    /// The last record's `mono_us`.
    last_mono: u64,
}

impl Run {
    /// Run `run_id` in `log` (no record yet).
    pub fn new(log: Arc<Log>, run_id: &str) -> Arc<Run> {
        let cursor = RunCursor {
            run_id: run_id.to_owned(),
            ..RunCursor::default()
        };
        Arc::new(Run {
            log,
            at: Mutex::new(At {
                cursor,
                ..At::default()
            }),
        })
    }

    /// The `seq` the run's next pipeline starts at (0, or one after the last record's).
    pub fn next_seq(&self) -> u64 {
        lock(&self.at).next_seq
    }

    /// The sink of the run's next pipeline: its times go on from the last record's.
    pub fn sink(self: &Arc<Self>) -> RunSink {
        let mut at = lock(&self.at);
        at.cursor.mono_base = at.last_mono;
        at.cursor.last_raw_line_reset();
        RunSink { run: self.clone() }
    }
}

/// A pipeline's sink writing its run's records to the shared log.
pub struct RunSink {
    run: Arc<Run>,
}

impl Sink for RunSink {
    fn event(&mut self, events: &Events, meta: &EventMeta, ctx: &EventCtx<'_>) -> io::Result<()> {
        let mut at = lock(&self.run.at);
        let mut a = lock(&self.run.log.audit);
        a.swap_run(&mut at.cursor);
        let res = a.event(events, meta, ctx);
        a.swap_run(&mut at.cursor);
        at.next_seq = meta.seq + 1;
        at.last_mono = at.cursor.mono_base + ctx.stamp.mono_us;
        res
    }

    fn flush(&mut self) -> io::Result<()> {
        lock(&self.run.log.audit).flush()
    }
}
