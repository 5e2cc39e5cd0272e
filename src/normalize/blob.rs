//! Base64 blob elision: image/document payloads become `{media_type, bytes, sha256}`.
//!
//! An image `Read` line carries the same base64 twice (in `tool_result` and in
//! `tool_use_result`) and can pass 1 MB. Unless `--keep-blobs`, every string under a `data` or
//! `base64` key that is at least [`MIN_BLOB`] characters of valid base64 is replaced by
//! `{"elided":"base64","media_type":…,"bytes":<decoded length>,"sha256":<hex of decoded bytes>}`,
//! so consumers can still verify a blob they kept elsewhere (`base64 -d | sha256sum`).

use base64::Engine as _;
use sha2::{Digest, Sha256};

use super::State;
use super::write::joined;
use crate::json::{Miss, Out, Spans, Val, get_str, str_of};

/// Shorter strings are left alone (they cost nothing and may not be blobs).
pub const MIN_BLOB: usize = 64;

impl State {
    /// Write `v`, eliding blobs unless `keep_blobs`; copied from the line where `spans` has it
    /// canonical (and without blob candidates).
    pub(super) fn write_blobbed(&mut self, v: Val<'_, '_>, out: &mut Out, spans: &Spans<'_>) {
        if self.opts.keep_blobs {
            out.value_in(v, spans);
        } else {
            write_elided_in(v, out, &mut self.blob_scratch, spans);
        }
    }
}

/// Write `v` with blobs elided; `scratch` is reused for decoding.
pub fn write_elided(v: Val<'_, '_>, out: &mut Out, scratch: &mut Vec<u8>) {
    write_elided_in(v, out, scratch, &Spans::default());
}

/// [`write_elided`], copying from the line each largest part that `spans` has canonical and
/// without blob candidates.
fn write_elided_in(v: Val<'_, '_>, out: &mut Out, scratch: &mut Vec<u8>, spans: &Spans<'_>) {
    let spans = match spans.canonical_without_blobs(v, MIN_BLOB) {
        Ok(b) => return out.raw_value(b),
        // Its parts are canonical too: some of them may be copied.
        Err(Miss::Blob) => spans,
        Err(Miss::Form) => &Spans::default(),
    };
    if let Some(obj) = v.as_object() {
        joined(out, (b"{", b"}"), obj.iter(), |out, (k, x)| {
            out.str(k);
            out.raw(b":");
            let blob = (k == "data" || k == "base64") && try_elide(v, x, out, scratch);
            if !blob {
                write_elided_in(x, out, scratch, spans);
            }
        });
    } else if let Some(arr) = v.as_array() {
        joined(out, (b"[", b"]"), arr.iter(), |out, x| {
            write_elided_in(x, out, scratch, spans)
        });
    } else {
        out.value(v);
    }
}

/// If `x` is a base64 blob, write its summary and return true.
fn try_elide(parent: Val<'_, '_>, x: Val<'_, '_>, out: &mut Out, scratch: &mut Vec<u8>) -> bool {
    let Some(s) = str_of(x) else { return false };
    if s.len() < MIN_BLOB {
        return false;
    }
    let media_type = || {
        get_str(parent, "media_type")
            .or_else(|| get_str(parent, "mediaType"))
            .or_else(|| get_str(parent, "mime_type"))
            .or_else(|| get_str(parent, "type").filter(|t| t.contains('/')))
    };
    if let Some(h) = out.hole_of(s).cloned() {
        // Only the stub is here: decide when the content is spliced in (see `fill_holes`).
        out.blob_splice(&h, media_type());
        return true;
    }
    write_summary(s.as_bytes(), media_type(), out, scratch)
}

/// If `data` is valid base64, write the blob summary of its decoded bytes and return true.
pub(super) fn write_summary(
    data: &[u8],
    media_type: Option<&str>,
    out: &mut Out,
    scratch: &mut Vec<u8>,
) -> bool {
    scratch.clear();
    let ok = base64::engine::general_purpose::STANDARD
        .decode_vec(data, scratch)
        .is_ok();
    if !ok {
        return false;
    }
    let digest = Sha256::digest(&scratch[..]);
    out.raw(b"{\"elided\":\"base64\",\"media_type\":");
    out.opt_str(media_type);
    out.raw(b",\"bytes\":");
    out.u64(scratch.len() as u64);
    out.raw(b",\"sha256\":\"");
    out.raw(hex::encode(digest).as_bytes());
    out.raw(b"\"}");
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Engine, Parser};

    #[test]
    fn elides_image_source_and_read_result() {
        let png = base64::engine::general_purpose::STANDARD.encode([7u8; 100]);
        let line = format!(
            r#"{{"a":{{"type":"base64","media_type":"image/png","data":"{png}"}},"file":{{"base64":"{png}","type":"image/png"}},"data":"short"}}"#
        );
        let mut p = Parser::new(Engine::Simd);
        let parsed = p.parse(line.as_bytes()).unwrap();
        let mut out = Out::default();
        write_elided(parsed.tape.as_value(), &mut out, &mut Vec::new());
        let s = String::from_utf8(out.buf).unwrap();
        let sha = hex::encode(Sha256::digest([7u8; 100]));
        let want = format!(
            r#"{{"elided":"base64","media_type":"image/png","bytes":100,"sha256":"{sha}"}}"#
        );
        assert_eq!(s.matches(&want).count(), 2, "{s}");
        assert!(s.ends_with(r#""data":"short"}"#));
    }
}
