//! The audit log's file, shared by the pipeline thread and the hashing thread: the hashing
//! thread writes the batches it finishes (so the pipeline thread, which the run's wall time
//! waits for, makes no `write` calls for them), the pipeline thread writes records it does not
//! batch (`--fsync`, records of 1 MiB and more) and flushes.

use std::io::{self, Write};
use std::sync::{Arc, Mutex, PoisonError};

/// A writer behind a mutex, writable from either thread. Writes from the two threads never
/// interleave within a record: the sink hands the hashing thread batches only, and writes itself
/// only once every batch handed over was written (see [`super::Audit::writing_on_helper`]).
pub struct Shared<W>(Arc<Mutex<W>>);

impl<W: Write + Send + 'static> Shared<W> {
    /// Share `w`.
    pub fn new(w: W) -> Self {
        Shared(Arc::new(Mutex::new(w)))
    }

    /// The handle the hashing thread writes through.
    pub(super) fn handle(&self) -> Arc<Mutex<dyn Write + Send>> {
        self.0.clone()
    }

    /// Call `f` with the writer (e.g. `CutBack::sync_data`).
    pub fn with<R>(&mut self, f: impl FnOnce(&mut W) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl<W: Write + Send + 'static> Write for Shared<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.with(|w| w.write(buf))
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.with(|w| w.write_all(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.with(|w| w.flush())
    }
}
