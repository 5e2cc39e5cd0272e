//! Server-sent events: the default profile (one SSE event per envelope event, with ids for
//! resuming) and the framing shared with the AI SDK profile ([`crate::sink::ai_sdk`]).
//!
//! # SSE framing (default profile, `--format sse` / `--sse FILE`)
//!
//! The stream starts with a `retry:` field in a block of its own (the reconnection delay an
//! `EventSource` should use), then one block per envelope event:
//!
//! ```text
//! retry: 3000
//!
//! id: 0
//! event: session.init
//! data: {"v":1,"seq":0,"type":"session.init",…}
//!
//! id: 1
//! event: text
//! data: {"v":1,"seq":1,"type":"text",…}
//!
//! ```
//!
//! `id` is the event's `seq`, `event` its `type`, `data` the envelope event's JSON on one line
//! (should a JSON text ever contain a CR or LF, it is split over several `data:` lines, which a
//! client joins with `\n`: still the same JSON). In a browser, `new EventSource(url)` plus
//! `addEventListener("tool.call", …)` per type, or `onmessage` for none: a named `event:` is
//! *not* delivered to `onmessage`. Close the `EventSource` on `run.end`: otherwise it reconnects
//! when the response ends.
//!
//! While the source is idle (spawn, timed replay) the loop calls [`Sink::idle`], which writes
//! the comment `: keep-alive` and a blank line so proxies keep the connection open.
//!
//! **Resuming.** A reconnecting `EventSource` sends `Last-Event-ID: <seq>`; a server passes it
//! on as `--last-event-id N` (or `$LAST_EVENT_ID`), and every sink then skips the events with
//! `seq <= N` (the input is still normalized from the start, and the AI SDK profile still
//! tracks the skipped events' state). With a replay of the same input the seqs are the same, so
//! the client continues exactly where it stopped.
//!
//! **Response headers** a server should send with either profile:
//! `Content-Type: text/event-stream`, `Cache-Control: no-cache`, `Connection: keep-alive` (HTTP/1.1
//! only) and `X-Accel-Buffering: no` (stops nginx from buffering the stream); the AI SDK
//! profile adds `x-vercel-ai-ui-message-stream: v1`.

use std::io::{self, Write};

use crate::envelope::{EventMeta, Events};
use crate::sink::{EventCtx, Sink};

/// The `retry:` value written first, in milliseconds.
pub const DEFAULT_RETRY_MS: u64 = 3000;

/// The comment written by [`Sink::idle`].
pub const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// The headers a server must send with the default profile, as (name, value).
pub const HEADERS: &[(&str, &str)] = &[
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache"),
    ("connection", "keep-alive"),
    ("x-accel-buffering", "no"),
];

/// Write `data` as one or more `data:` lines (split at CR, LF or CRLF, which SSE treats as line
/// ends), without the blank line that ends the event.
pub fn write_data<W: Write>(w: &mut W, data: &[u8]) -> io::Result<()> {
    let mut rest = data;
    loop {
        w.write_all(b"data: ")?;
        match memchr::memchr2(b'\r', b'\n', rest) {
            None => {
                w.write_all(rest)?;
                return w.write_all(b"\n");
            }
            Some(i) => {
                w.write_all(&rest[..i])?;
                w.write_all(b"\n")?;
                let skip = if rest[i] == b'\r' && rest.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                rest = &rest[i + skip..];
            }
        }
    }
}

/// Default-profile SSE sink.
pub struct Sse<W: Write> {
    w: io::BufWriter<W>,
    retry_ms: Option<u64>,
    started: bool,
}

impl<W: Write> Sse<W> {
    /// An SSE sink over `w` (buffered here) with `retry: 3000` first.
    pub fn new(w: W) -> Self {
        Sse {
            w: io::BufWriter::with_capacity(128 * 1024, w),
            retry_ms: Some(DEFAULT_RETRY_MS),
            started: false,
        }
    }

    /// The `retry:` value (`None`: no `retry:` field).
    pub fn retry_ms(mut self, ms: Option<u64>) -> Self {
        self.retry_ms = ms;
        self
    }

    fn start(&mut self) -> io::Result<()> {
        if !self.started {
            self.started = true;
            if let Some(ms) = self.retry_ms {
                write!(self.w, "retry: {ms}\n\n")?;
            }
        }
        Ok(())
    }
}

impl<W: Write> Sink for Sse<W> {
    fn wants_time(&self) -> bool {
        false
    }

    fn event(&mut self, events: &Events, meta: &EventMeta, _: &EventCtx<'_>) -> io::Result<()> {
        self.start()?;
        let mut b = itoa::Buffer::new();
        self.w.write_all(b"id: ")?;
        self.w.write_all(b.format(meta.seq).as_bytes())?;
        self.w.write_all(b"\nevent: ")?;
        self.w.write_all(meta.kind.as_bytes())?;
        self.w.write_all(b"\n")?;
        write_data(&mut self.w, events.bytes(meta))?;
        self.w.write_all(b"\n")
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    fn idle(&mut self) -> io::Result<()> {
        self.start()?;
        self.w.write_all(KEEP_ALIVE)?;
        self.w.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.start()?;
        self.w.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_lines_split_on_every_line_end() {
        let mut v = Vec::new();
        write_data(&mut v, b"{\"a\":\r\n1,\r\"b\":\n2}").unwrap();
        assert_eq!(v, b"data: {\"a\":\ndata: 1,\ndata: \"b\":\ndata: 2}\n");
        v.clear();
        write_data(&mut v, b"{}").unwrap();
        assert_eq!(v, b"data: {}\n");
    }
}
