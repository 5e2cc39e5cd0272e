//! Output sinks: where serialized envelope events go. Each sink owns its framing only; the
//! pipeline decides when to flush.

pub mod ai_sdk;
pub mod audit;
pub mod choice;
pub mod named;
pub mod otlp;
pub mod pretty;
pub mod registry;
pub mod sse;

use std::io::{self, Write};

use crate::clock::Stamp;
use crate::envelope::{EventMeta, Events};
use crate::json::fields::{Fields, Index};
use crate::read::Line;

/// Everything the pipeline knows about an event besides its bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct EventCtx<'a> {
    /// The input line the event came from, when it came from one (the first event of each line
    /// carries it).
    pub raw: Option<&'a [u8]>,
    /// The input line being processed when the event was written (`None` while finishing).
    pub line: Option<&'a Line<'a>>,
    /// When the line was read (one reading per input line, and one for `run.end`).
    pub stamp: Stamp,
    /// The Claude Code version from `system/init`, once seen.
    pub cli_version: Option<&'a str>,
    /// The event comes before the run's resume point (`--last-event-id`): only sinks that
    /// [keep state](Sink::keeps_history) get it, to rebuild their state, and write nothing.
    pub before_resume: bool,
    /// The event's top-level members, indexed once by the pipeline for every sink that
    /// [wants them](Sink::wants_fields) (`None` when none does): read them with
    /// [`EventCtx::fields`].
    pub fields: Option<Fields<'a>>,
}

impl<'a> EventCtx<'a> {
    /// The members of the event `meta`: the pipeline's index, or (when the sink is driven without
    /// one) an index built in `own`. `None` when the event is not a JSON object.
    pub fn fields<'b>(
        &self,
        events: &'b Events,
        meta: &EventMeta,
        own: &'b mut Index,
    ) -> Option<Fields<'b>>
    where
        'a: 'b,
    {
        if let Some(f) = self.fields {
            return Some(f);
        }
        let bytes = events.bytes(meta);
        events.index(meta, own).then(|| own.view(bytes))
    }
}

/// A destination for envelope events.
pub trait Sink {
    /// Write one event (its bytes are `events.bytes(meta)`) with the pipeline's context: the
    /// input line, time, CLI version, whether it precedes the resume point.
    fn event(&mut self, events: &Events, meta: &EventMeta, ctx: &EventCtx<'_>) -> io::Result<()>;
    /// Whether this sink reads the members of event `meta` ([`EventCtx::fields`]): the pipeline
    /// indexes an event only when some sink does, once for all of them. Default false (the sink
    /// reads only the event's bytes).
    fn wants_fields(&self, _meta: &EventMeta) -> bool {
        false
    }
    /// Whether this sink needs the events before the resume point (marked
    /// [`EventCtx::before_resume`]) to rebuild its state; the others never see them. Default
    /// false.
    fn keeps_history(&self) -> bool {
        false
    }
    /// The source has been idle for a while (spawn, timed replay): write a keep-alive if the
    /// format has one, and flush it. The default does nothing.
    fn idle(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// The run is about to end (`cause`, at `at`): every other event has been written and
    /// `run.end` comes next. A sink that must settle before then (the OTLP exporter delivering
    /// its spans) does so here and returns members for `run.end` (raw JSON values). The
    /// default does nothing.
    fn end_members(&mut self, _cause: &str, _at: Stamp) -> io::Result<Vec<(String, String)>> {
        Ok(Vec::new())
    }
    /// Push buffered bytes to the underlying writer.
    fn flush(&mut self) -> io::Result<()>;
    /// Whether this sink reads [`EventCtx::stamp`]; the pipeline reads the clock only if one does.
    /// Defaults to true (correct for any sink); sinks that ignore time say false.
    fn wants_time(&self) -> bool {
        true
    }
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
    fn wants_time(&self) -> bool {
        false
    }

    fn event(&mut self, events: &Events, meta: &EventMeta, _: &EventCtx<'_>) -> io::Result<()> {
        self.w.write_all(events.bytes(meta))?;
        self.w.write_all(b"\n")
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}
