//! The pieces of an audit record that both its writers build (the sink in [`super::write`] and
//! the hashing thread in [`super::batch`]): the leading members, the `raw`/`raw_b64` member, the
//! `ts` text and the tail with the hash.

use base64::Engine as _;

use super::TAIL_LEN;
use crate::json::Out;

/// `,"raw":"…"` with the line escaped, or `,"raw_b64":"…"` when it is not UTF-8.
///
/// The line is escaped with [`crate::json::escape_content`] (the bytes [`Out::str`] writes):
/// on these lines, whose quotes come every 17 bytes or so, its word-at-a-time search does
/// better than the SIMD string writer `Out::str` uses for long strings, which starts over after
/// every escape (196 MB of captures: 0.088 s against 0.111 s).
pub(crate) fn raw_member(o: &mut Out, raw: &[u8]) {
    match simdutf8::basic::from_utf8(raw) {
        Ok(_) => {
            o.key("raw");
            o.raw(b"\"");
            crate::json::escape_content(&mut o.buf, raw);
            o.raw(b"\"");
        }
        Err(_) => {
            o.key("raw_b64");
            o.str(&base64::engine::general_purpose::STANDARD.encode(raw));
        }
    }
}

/// `{"seq":…,"cli_version":`: a record's members before its CLI version.
pub(crate) fn head(o: &mut Out, seq: u64, run_id: &str, ts: &str, mono_us: u64) {
    o.raw(b"{\"seq\":");
    o.u64(seq);
    o.key("run_id");
    o.str(run_id);
    o.key("ts");
    o.str(ts);
    o.key("mono_us");
    o.u64(mono_us);
    o.key("cli_version");
}

/// The `ts` text of the last wall clock time formatted (the events of one line share it).
#[derive(Default)]
pub(crate) struct Ts(Option<(i64, String)>);

impl Ts {
    /// RFC 3339 with µs of `unix_us`.
    pub(crate) fn of(&mut self, unix_us: i64) -> &str {
        if self.0.as_ref().is_none_or(|(t, _)| *t != unix_us) {
            let stamp = crate::clock::Stamp {
                unix_us,
                mono_us: 0,
            };
            self.0 = Some((unix_us, stamp.rfc3339()));
        }
        &self.0.as_ref().expect("just set").1
    }
}

/// The hex of `digest` (the next record's `prev`) and the record tail `"hash":"…"}` + newline.
pub(crate) fn tail(digest: &[u8]) -> ([u8; 64], [u8; TAIL_LEN - 1]) {
    let mut hex = [0u8; 64];
    hex::encode_to_slice(digest, &mut hex).expect("64 hex digits");
    let mut t = [0u8; TAIL_LEN - 1];
    t[..8].copy_from_slice(b"\"hash\":\"");
    t[8..72].copy_from_slice(&hex);
    t[72..].copy_from_slice(b"\"}\n");
    (hex, t)
}
