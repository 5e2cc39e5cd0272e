//! Output sinks: where serialized envelope events go. Each sink owns its framing only; the
//! pipeline decides when to flush.

use std::io::{self, Write};

use crate::envelope::{EventMeta, Events};

/// A destination for envelope events.
pub trait Sink {
    /// Write one event. `raw` is the input line the event came from, when it came from one.
    fn event(&mut self, events: &Events, meta: &EventMeta, raw: Option<&[u8]>) -> io::Result<()>;
    /// Push buffered bytes to the underlying writer.
    fn flush(&mut self) -> io::Result<()>;
    /// The run is over (after the last event): write any trailer and flush.
    fn finish(&mut self) -> io::Result<()> {
        self.flush()
    }
}

/// Envelope NDJSON: one event per line.
pub struct Ndjson<W: Write> {
    w: io::BufWriter<W>,
}

impl<W: Write> Ndjson<W> {
    /// An NDJSON sink over `w` (buffered here; pass an unbuffered writer).
    pub fn new(w: W) -> Self {
        Ndjson {
            w: io::BufWriter::with_capacity(128 * 1024, w),
        }
    }
}

impl<W: Write> Sink for Ndjson<W> {
    fn event(&mut self, events: &Events, meta: &EventMeta, _raw: Option<&[u8]>) -> io::Result<()> {
        self.w.write_all(events.bytes(meta))?;
        self.w.write_all(b"\n")
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}
