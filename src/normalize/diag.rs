//! Events about the input itself rather than what the CLI said: `diagnostic` for a line that
//! is not usable (not JSON, no `type`, …) and `line.repaired` for one that was repaired first.

use super::{State, TEXT_CAP};
use crate::envelope::kind;
use crate::envelope::{Ctx, Events};
use crate::json::{Out, Val};

impl State {
    pub(super) fn diagnostic(
        &mut self,
        ev: &mut Events,
        line: u64,
        kind: &str,
        bytes: &[u8],
        len: u64,
        detail: Option<&str>,
    ) {
        let ctx = Ctx {
            session_id: self.session.as_deref(),
            parent: None,
            line: Some(line),
            uuid: None,
            ..Default::default()
        };
        let o = ev.begin(kind::DIAGNOSTIC, &ctx);
        o.key("kind");
        o.str(kind);
        o.key("text");
        let cut = &bytes[..bytes.len().min(TEXT_CAP)];
        let text = String::from_utf8_lossy(cut);
        // Do not end in the middle of a replacement: lossy decoding of a cut multibyte char.
        o.str(&text);
        o.key("bytes");
        o.u64(len);
        o.key("truncated");
        o.bool(bytes.len() > TEXT_CAP || (len as usize) > bytes.len());
        o.key("detail");
        o.opt_str(detail);
        ev.end();
    }

    /// `line.repaired`: line `line` was normalized after `count` unpaired surrogate escapes were
    /// replaced by U+FFFD (see [`crate::json::repair`]).
    pub(super) fn repaired(&mut self, ev: &mut Events, line: u64, count: usize) {
        let ctx = self.ctx_line(line);
        let o = ev.begin(kind::LINE_REPAIRED, &ctx);
        o.key("kind");
        o.str("lone_surrogate");
        o.key("count");
        o.u64(count as u64);
        o.key("detail");
        o.str("unpaired UTF-16 surrogate escapes replaced by \\ufffd (U+FFFD), as JavaScript's JSON.parse followed by a UTF-8 encoder would");
        ev.end();
    }

    /// `line.repaired` `bom`: line `line` began with a UTF-8 byte order mark, which was dropped.
    pub(super) fn bom(&mut self, ev: &mut Events, line: u64) {
        let ctx = self.ctx_line(line);
        let o = ev.begin(kind::LINE_REPAIRED, &ctx);
        o.key("kind");
        o.str("bom");
        o.key("count");
        o.u64(1);
        o.key("detail");
        o.str("a UTF-8 byte order mark (U+FEFF) before the JSON was dropped");
        ev.end();
    }

    /// `diagnostic` `missing_type`: a JSON object without a `type` member.
    pub(super) fn missing_type(&mut self, v: Val<'_, '_>, line: u64, ev: &mut Events) {
        let ctx = self.ctx_line(line);
        let o = ev.begin(kind::DIAGNOSTIC, &ctx);
        o.key("kind");
        o.str("missing_type");
        o.key("text");
        let mut tmp = Out::default();
        tmp.value(v);
        let cut = tmp.buf.len().min(TEXT_CAP);
        o.str(&String::from_utf8_lossy(&tmp.buf[..cut]));
        o.key("bytes");
        o.u64(tmp.buf.len() as u64);
        o.key("truncated");
        o.bool(tmp.buf.len() > TEXT_CAP);
        o.key("detail");
        o.str("a JSON object without a \"type\" member");
        ev.end();
    }
}
