//! Recognising a Claude Code session transcript (`~/.claude/projects/<project>/<session>.jsonl`)
//! from its first lines, as opposed to `stream-json` (what `claude -p --output-format
//! stream-json` prints) and the other inputs boo-normalize reads.
//!
//! A transcript line names its session `sessionId` (camelCase) where stream-json says
//! `session_id`; its message lines carry `parentUuid`, `isSidechain` and `userType`; and it has
//! line types stream-json never prints (`summary` with `leafUuid`, `file-history-snapshot`,
//! `queue-operation`, …). The decision is made on the first line that says either way: a line
//! with a transcript's marks, or any other object with a `type` (stream-json, a wrapper's marker
//! line). Lines that say nothing (blank, not JSON, an unfinished last line, an object without
//! `type`) are passed over.

use serde::Deserialize;
use serde::de::IgnoredAny;

/// How many lines are looked at, at most.
const MAX_LINES: usize = 64;

/// Line types only transcripts have (seen in the fixtures of CLI 1.0.128 to 2.1.332).
const TRANSCRIPT_TYPES: &[&str] = &[
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "attachment",
    "last-prompt",
    "custom-title",
    "tools-used",
    "cost-state",
    "api-request",
    "api-request-shape",
    "api-request-blob",
    "atis-latch",
];

/// The members that tell the formats apart (every other member is skipped unread).
#[derive(Deserialize, Default)]
struct Probe<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a str>,
    #[serde(rename = "sessionId", default)]
    session_camel: Option<IgnoredAny>,
    #[serde(rename = "session_id", default)]
    session_snake: Option<IgnoredAny>,
    #[serde(rename = "parentUuid", default)]
    parent_uuid: Option<IgnoredAny>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Option<IgnoredAny>,
    #[serde(rename = "leafUuid", default)]
    leaf_uuid: Option<IgnoredAny>,
    /// An envelope event (boo-normalize's own output) has `v` and `seq`.
    #[serde(default)]
    seq: Option<IgnoredAny>,
}

/// What one line says.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Transcript,
    Other,
    Unsure,
}

/// The members of a JSON object line that tell a session transcript's line from other formats,
/// as each reader of lines finds them (serde here and in `sniff`, the tape in the normalizer).
#[derive(Debug, Default, Clone, Copy)]
pub struct Marks<'a> {
    /// Its `type`, when a string.
    pub kind: Option<&'a str>,
    /// It has `session_id` (stream-json's spelling).
    pub session_snake: bool,
    /// It has `sessionId` (a transcript's).
    pub session_camel: bool,
    /// It has `parentUuid`.
    pub parent_uuid: bool,
    /// It has `isSidechain`.
    pub is_sidechain: bool,
    /// It has `leafUuid`.
    pub leaf_uuid: bool,
    /// It has `seq` (an envelope event: boo-normalize's own output).
    pub seq: bool,
}

/// Whether a line with `m` is a session transcript's: `Some(true)` when it has a transcript's
/// marks (camelCase ids, a line type only transcripts have), `Some(false)` for any other typed
/// object, `None` when it says neither (no `type`). The one answer to "is this a transcript
/// line": input detection, `sniff`'s hints and the normalizer's `lookalike` ask it.
pub fn transcript_line(m: &Marks<'_>) -> Option<bool> {
    if m.session_snake || m.seq {
        return Some(false);
    }
    let camel = m.session_camel || m.parent_uuid || m.is_sidechain;
    let own_type = m
        .kind
        .is_some_and(|k| TRANSCRIPT_TYPES.contains(&k) || (k == "summary" && m.leaf_uuid));
    if camel || own_type {
        return Some(true);
    }
    // A typed object without a transcript's marks (a wrapper's marker line before a stream, a
    // type the normalizer does not know): the CLI writes every transcript line with them, so
    // this is not a transcript. Anything else (no `type`: a foreign object, an old flat line)
    // says nothing.
    m.kind.map(|_| false)
}

fn verdict(line: &[u8]) -> Verdict {
    let line = line.trim_ascii();
    if !line.starts_with(b"{") {
        return Verdict::Unsure;
    }
    let Ok(p) = serde_json::from_slice::<Probe<'_>>(line) else {
        return Verdict::Unsure;
    };
    let marks = Marks {
        kind: p.kind,
        session_snake: p.session_snake.is_some(),
        session_camel: p.session_camel.is_some(),
        parent_uuid: p.parent_uuid.is_some(),
        is_sidechain: p.is_sidechain.is_some(),
        leaf_uuid: p.leaf_uuid.is_some(),
        seq: p.seq.is_some(),
    };
    match transcript_line(&marks) {
        Some(true) => Verdict::Transcript,
        Some(false) => Verdict::Other,
        None => Verdict::Unsure,
    }
}

/// Whether `first_lines` (the first bytes of an input: some whole lines, possibly an unfinished
/// last one) look like a Claude Code session transcript. Pure: no I/O, no state.
pub fn looks_like_transcript(first_lines: &[u8]) -> bool {
    decide(first_lines) == Some(true)
}

/// Like [`looks_like_transcript`], but `None` while no line has said either way (a reader of a
/// live input reads on until one does).
pub fn decide(first_lines: &[u8]) -> Option<bool> {
    for line in first_lines.split(|&b| b == b'\n').take(MAX_LINES) {
        match verdict(line) {
            Verdict::Transcript => return Some(true),
            Verdict::Other => return Some(false),
            Verdict::Unsure => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::looks_like_transcript as t;

    #[test]
    fn transcript_lines_are_recognised() {
        assert!(t(br#"{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/w","sessionId":"s","type":"user","message":{"role":"user","content":"hi"}}"#));
        assert!(t(
            b"{\"type\":\"summary\",\"summary\":\"x\",\"leafUuid\":\"u\"}\n"
        ));
        assert!(t(
            br#"{"type":"queue-operation","operation":"dequeue","timestamp":"t","sessionId":"s"}"#
        ));
        // A first line that says nothing, then a transcript line.
        assert!(t(b"\n-n\n{\"type\":\"user\",\"sessionId\":\"s\"}\n"));
    }

    #[test]
    fn other_inputs_are_not() {
        assert!(!t(
            br#"{"type":"system","subtype":"init","session_id":"s","cwd":"/"}"#
        ));
        assert!(!t(
            br#"{"v":1,"seq":0,"type":"session.init","session_id":"s"}"#
        ));
        assert!(!t(b""));
        assert!(!t(b"not json\n[1,2]\n"));
        // A typed line without a transcript's marks decides too.
        assert!(!t(
            b"{\"type\":\"loop_start_marker\"}\n{\"type\":\"user\",\"sessionId\":\"s\"}\n"
        ));
        // stream-json decides before a later transcript-like line.
        assert!(!t(
            b"{\"type\":\"assistant\",\"session_id\":\"s\"}\n{\"sessionId\":\"x\"}\n"
        ));
        // An unfinished line is not evidence.
        assert!(!t(br#"{"type":"user","sessionId":"s"#));
    }
}
