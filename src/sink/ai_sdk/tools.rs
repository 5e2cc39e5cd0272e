//! The AI SDK profile's tool parts: `tool-input-*` from `tool.input.delta`, `tool.call` and
//! `tool.call.revised`, `tool-output-*` from `tool.result`; ids and names the envelope lacks are
//! made up only where the chunk requires them, and then declared.

use std::io::Write;

use super::{AiSdk, Ev, error_text};

/// The `toolCallId` prefix of a call whose envelope `tool_use_id` is null (the event's seq follows).
pub const GENERATED_ID: &str = "boo-normalize-seq-";

/// The `toolName` of a call whose envelope `name` is null.
pub const UNNAMED: &str = "unknown";

/// The data chunk type of a tool result whose envelope `tool_use_id` is null.
pub const UNPAIRED: &str = "data-unpaired-tool-result";

/// What the stream said of one tool call so far.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Sent {
    /// `tool-input-start` (its input streams).
    started: bool,
    /// The call itself (`tool-input-available` or `-error`): its result has a part to go to.
    called: bool,
    /// Its output chunk (a revised input no longer replaces it).
    done: bool,
}

impl<W: Write> AiSdk<W> {
    /// What went out for call `id`, made on first need.
    fn sent(&mut self, id: &str) -> &mut Sent {
        if !self.tools.contains_key(id) {
            self.tools.insert(id.to_owned(), Sent::default());
        }
        self.tools.get_mut(id).expect("inserted above")
    }

    /// Whether call `id`'s call went out and its output did not.
    fn open_call(&self, id: &str) -> bool {
        self.tools.get(id).is_some_and(|s| s.called && !s.done)
    }

    /// `tool.input.delta`: `tool-input-start` once per call, then `tool-input-delta`.
    pub(super) fn tool_input_delta(&mut self, e: &Ev<'_>) {
        // Without an id the deltas have no part to stream into; the tool.call that
        // follows brings the whole input (under a generated id, see tool_call).
        let Some(id) = e.tool_use_id.as_deref() else {
            return;
        };
        self.step(None);
        if !std::mem::replace(&mut self.sent(id).started, true) {
            let o = self.chunk("tool-input-start");
            o.key("toolCallId");
            o.str(id);
            o.key("toolName");
            o.str(e.name.as_deref().unwrap_or(UNNAMED));
            self.tool_flags(false);
            self.end_chunk();
        }
        let delta = e.partial_json.as_deref().unwrap_or("");
        if !delta.is_empty() {
            let o = self.chunk("tool-input-delta");
            o.key("toolCallId");
            o.str(id);
            o.key("inputTextDelta");
            o.str(delta);
            self.end_chunk();
        }
    }

    /// `tool.call`: `tool-input-available`, or `tool-input-error` when the input did not parse.
    pub(super) fn tool_call(&mut self, msg: Option<&str>, e: &Ev<'_>, seq: u64) {
        // A call without id or name still becomes a tool part (the chunk requires both): the
        // id is made from the event's seq (unique and stable across replays) and never paired
        // with a result; the name is UNNAMED; providerMetadata says which values were made up.
        let generated_id = e
            .tool_use_id
            .is_none()
            .then(|| format!("{GENERATED_ID}{seq}"));
        let id = e
            .tool_use_id
            .as_deref()
            .or(generated_id.as_deref())
            .unwrap_or_default();
        let name = e.name.as_deref().unwrap_or(UNNAMED);
        let server = e.server == Some(true);
        self.step(msg);
        if generated_id.is_none() {
            self.sent(id).called = true;
        }
        let ty = if e.input_error.is_some() {
            "tool-input-error"
        } else {
            "tool-input-available"
        };
        let o = self.chunk(ty);
        o.key("toolCallId");
        o.str(id);
        o.key("toolName");
        o.str(name);
        o.key("input");
        match (&e.input_error, e.input) {
            (None, Some(input)) => o.raw(input),
            (None, None) => o.raw(b"{}"),
            (Some(_), _) => o.opt_str(e.partial_json.as_deref()),
        }
        if let Some(err) = &e.input_error {
            o.key("errorText");
            o.str(err);
        }
        let generated = match (generated_id.is_some(), e.name.is_none()) {
            (false, false) => None,
            (true, false) => Some(r#"["toolCallId"]"#),
            (false, true) => Some(r#"["toolName"]"#),
            (true, true) => Some(r#"["toolCallId","toolName"]"#),
        };
        if let Some(list) = generated {
            o.raw(b",\"providerMetadata\":{\"boo-normalize\":{\"generated\":");
            o.raw(list.as_bytes());
            o.raw(b"}}");
        }
        self.tool_flags(server);
        self.end_chunk();
    }

    /// `tool.result`: `tool-output-available`, or `tool-output-error` when `is_error`.
    pub(super) fn tool_result(&mut self, e: &Ev<'_>) {
        // A result without id belongs to no tool part: it is kept as an UNPAIRED data part.
        let Some(id) = e.tool_use_id.as_deref() else {
            let o = self.chunk(UNPAIRED);
            o.raw(b",\"data\":{\"isError\":");
            o.bool(e.is_error == Some(true));
            o.raw(b",\"output\":");
            o.raw(e.content.unwrap_or(b"null"));
            o.raw(b"}");
            self.end_chunk();
            return;
        };
        match self.tools.get_mut(id) {
            Some(s) if s.called => s.done = true,
            _ => return,
        }
        let server = e.server == Some(true);
        if e.is_error == Some(true) {
            let text = e.content.map_or_else(String::new, error_text);
            let o = self.chunk("tool-output-error");
            o.key("toolCallId");
            o.str(id);
            o.key("errorText");
            o.str(&text);
        } else {
            let o = self.chunk("tool-output-available");
            o.key("toolCallId");
            o.str(id);
            o.key("output");
            o.raw(e.content.unwrap_or(b"null"));
        }
        self.tool_flags(server);
        self.end_chunk();
    }

    /// `tool.call.revised`: the call's input came again, different; the part takes the new
    /// input while its output has not arrived (an output chunk would be overwritten otherwise).
    pub(super) fn tool_revised(&mut self, e: &Ev<'_>) {
        let Some(id) = e.tool_use_id.as_deref() else {
            return;
        };
        if !self.open_call(id) {
            return;
        }
        let o = self.chunk("tool-input-available");
        o.key("toolCallId");
        o.str(id);
        o.key("toolName");
        o.str(e.name.as_deref().unwrap_or(UNNAMED));
        o.key("input");
        o.raw(e.input.unwrap_or(b"{}"));
        self.tool_flags(false);
        self.end_chunk();
    }
}
