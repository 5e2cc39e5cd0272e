//! The audit sink's records too large to hold twice (see [`super::STREAM_RECORD`]): hashed and
//! written in pieces, the event straight from the envelope and the raw line escaped (or
//! base64-encoded) a chunk at a time, byte for byte the record built whole.

use std::io::{self, Write};

use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::Audit;
use crate::audit::bad;
use crate::envelope::{EventMeta, Events};
use crate::sink::EventCtx;

impl<W: Write> Audit<W> {
    /// The same bytes as [`Audit::record`], hashed and written in pieces: the event straight
    /// from `events`, the raw line escaped (or base64-encoded) a chunk at a time.
    pub(super) fn stream_record(
        &mut self,
        events: &Events,
        meta: &EventMeta,
        ctx: &EventCtx<'_>,
    ) -> io::Result<()> {
        let mut h = Sha256::new();
        self.rec.buf.clear();
        self.begin_record(meta, ctx);
        put(&mut self.w, &mut h, &self.rec.buf)?;
        put(&mut self.w, &mut h, events.bytes(meta))?;
        self.rec.buf.clear();
        if let Some(raw) = self.raw_of(meta, ctx) {
            match simdutf8::basic::from_utf8(raw) {
                Ok(mut s) => {
                    self.rec.key("raw");
                    self.rec.raw(b"\"");
                    while !s.is_empty() {
                        let mut cut = s.len().min(CHUNK);
                        while !s.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        self.rec.str_content(&s[..cut]);
                        s = &s[cut..];
                        put(&mut self.w, &mut h, &self.rec.buf)?;
                        self.rec.buf.clear();
                    }
                    self.rec.raw(b"\"");
                }
                Err(_) => {
                    self.rec.key("raw_b64");
                    self.rec.raw(b"\"");
                    // Whole 3-byte groups per chunk: the pieces join into one encoding.
                    for chunk in raw.chunks(CHUNK / 4 * 3) {
                        base64::engine::general_purpose::STANDARD
                            .encode_slice(chunk, &mut self.b64)
                            .map(|n| self.rec.raw(&self.b64[..n]))
                            .map_err(|_| bad("base64 buffer too small"))?;
                        put(&mut self.w, &mut h, &self.rec.buf)?;
                        self.rec.buf.clear();
                    }
                    self.rec.raw(b"\"");
                }
            }
            self.raw_extras(ctx);
        }
        self.prev_member();
        put(&mut self.w, &mut h, &self.rec.buf)?;
        self.rec.buf.clear();
        let digest = h.finalize();
        let tail = self.tail(&digest);
        self.w.write_all(&tail)
    }
}

/// Bytes of raw line escaped per piece of a streamed record.
pub(super) const CHUNK: usize = 64 * 1024;

fn put<W: Write>(w: &mut W, h: &mut Sha256, bytes: &[u8]) -> io::Result<()> {
    h.update(bytes);
    w.write_all(bytes)
}
