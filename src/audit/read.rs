//! Reading audit records back: the one deserializer of a record (the verifier and the replay
//! decoder both use it) and the list of an audit log's runs.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

/// One audit record, borrowed from its line (see the format in [`crate::audit`]).
#[derive(Deserialize)]
pub struct Record<'a> {
    /// The event's `seq`.
    pub seq: u64,
    /// The run.
    #[serde(borrow)]
    pub run_id: Cow<'a, str>,
    /// Wall clock, RFC 3339.
    #[serde(borrow)]
    pub ts: Cow<'a, str>,
    /// Monotonic µs since the run started.
    pub mono_us: u64,
    /// Claude Code's version, once known.
    #[serde(borrow)]
    pub cli_version: Option<Cow<'a, str>>,
    /// The envelope event, as written.
    #[serde(borrow)]
    pub event: &'a RawValue,
    /// The input line (UTF-8).
    #[serde(borrow)]
    pub raw: Option<Cow<'a, str>>,
    /// The input line, base64 (not UTF-8).
    #[serde(borrow)]
    pub raw_b64: Option<Cow<'a, str>>,
    /// The line's terminator when not `\n`.
    #[serde(borrow)]
    pub raw_eol: Option<Cow<'a, str>>,
    /// The line's real length when `--max-line-bytes` cut it.
    pub raw_cut_from: Option<u64>,
    /// The previous record's hash.
    #[serde(borrow)]
    pub prev: Cow<'a, str>,
}

/// The head of a record's event: its `seq` and `type`.
#[derive(Deserialize)]
pub struct EventHead<'a> {
    /// The event's `seq`.
    pub seq: Option<u64>,
    /// The event's `type`.
    #[serde(borrow, rename = "type")]
    pub kind: Option<Cow<'a, str>>,
}

impl<'a> Record<'a> {
    /// Parse one record (the line without its newline).
    pub fn parse(line: &'a [u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(line)
    }

    /// The event's `seq` and `type`.
    pub fn head(&self) -> Result<EventHead<'a>, serde_json::Error> {
        serde_json::from_str(self.event.get())
    }
}

/// The `run_id`s of an audit log's runs, in order of first appearance (for picking one).
pub fn runs(lines: impl Iterator<Item = Vec<u8>>) -> Vec<String> {
    #[derive(Deserialize)]
    struct R<'a> {
        #[serde(borrow)]
        run_id: Cow<'a, str>,
    }
    let mut runs: Vec<String> = Vec::new();
    for l in lines {
        if let Ok(r) = serde_json::from_slice::<R<'_>>(&l)
            && runs.last().is_none_or(|x| *x != r.run_id)
            && !runs.iter().any(|x| *x == r.run_id)
        {
            runs.push(r.run_id.into_owned());
        }
    }
    runs
}
