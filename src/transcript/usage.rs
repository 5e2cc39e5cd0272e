//! Usage counted once per API message across a session's lines and files.
//!
//! The rule: an assistant line's `message.usage` belongs to the API message named by its
//! `message.id` (a line without one falls back to its `requestId`; a line with neither carries
//! no API usage and counts nothing). The CLI writes one line per content block, each repeating
//! the message's usage, and a resumed or forked session copies earlier messages, ids and usage
//! included, into a new file; so every line of a message after the first *replaces* that
//! message's counts (the last line written carries the most final output count), and is never
//! added. The request id does not split a message: a fork made by CLI 1.0.128 copies the
//! messages without their `requestId`, and a key of message id *and* request id would count
//! each of them twice. Subagents' messages are API messages too and are counted.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use serde_json::value::RawValue;

/// Token counts of one message or a sum of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// `input_tokens`.
    pub input: u64,
    /// `output_tokens`.
    pub output: u64,
    /// `cache_read_input_tokens`.
    pub cache_read: u64,
    /// Cache writes with the 5-minute lifetime (`cache_creation.ephemeral_5m_input_tokens`, or all
    /// of `cache_creation_input_tokens` when the split is not given).
    pub cache_write_5m: u64,
    /// Cache writes with the 1-hour lifetime (`cache_creation.ephemeral_1h_input_tokens`).
    pub cache_write_1h: u64,
}

impl Tokens {
    /// Every count added.
    pub fn add(&mut self, o: &Tokens) {
        self.input += o.input;
        self.output += o.output;
        self.cache_read += o.cache_read;
        self.cache_write_5m += o.cache_write_5m;
        self.cache_write_1h += o.cache_write_1h;
    }

    /// `cache_creation_input_tokens`: both cache-write lifetimes.
    pub fn cache_write(&self) -> u64 {
        self.cache_write_5m + self.cache_write_1h
    }

    /// All tokens: input, output, cache reads and writes.
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_write()
    }
}

/// A `message.usage` object as far as it is counted.
#[derive(Debug, Deserialize, Default)]
pub struct Usage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation: Option<CacheCreation>,
}

#[derive(Debug, Deserialize, Default)]
struct CacheCreation {
    #[serde(default)]
    ephemeral_5m_input_tokens: Option<u64>,
    #[serde(default)]
    ephemeral_1h_input_tokens: Option<u64>,
}

impl Usage {
    /// The counts (a member of the wrong type or missing counts 0).
    pub fn tokens(&self) -> Tokens {
        // `cache_creation_input_tokens` is the total; the split says how much of it lives an
        // hour. Without the total, the split's parts are the total.
        let h = self
            .cache_creation
            .as_ref()
            .and_then(|c| c.ephemeral_1h_input_tokens)
            .unwrap_or(0);
        let (w5, w1) = match self.cache_creation_input_tokens {
            Some(total) => (total.saturating_sub(h), h.min(total)),
            None => (
                self.cache_creation
                    .as_ref()
                    .and_then(|c| c.ephemeral_5m_input_tokens)
                    .unwrap_or(0),
                h,
            ),
        };
        Tokens {
            input: self.input_tokens.unwrap_or(0),
            output: self.output_tokens.unwrap_or(0),
            cache_read: self.cache_read_input_tokens.unwrap_or(0),
            cache_write_5m: w5,
            cache_write_1h: w1,
        }
    }
}

/// One message's record.
#[derive(Debug, Clone)]
struct Record {
    model: String,
    tokens: Tokens,
}

/// The usage of a session (or of many): each API message once.
#[derive(Debug, Default)]
pub struct Counter {
    index: HashMap<(String, String), usize>,
    records: Vec<Record>,
    /// Lines whose usage repeated a message already counted.
    pub repeats: u64,
}

/// The assistant line members the counter reads.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", default)]
    kind: Option<&'a str>,
    #[serde(rename = "requestId", default)]
    request_id: Option<&'a str>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
}

/// The message members the counter reads.
#[derive(Deserialize)]
pub struct Message<'a> {
    /// `message.id`.
    #[serde(default)]
    pub id: Option<&'a str>,
    /// `message.model`.
    #[serde(default)]
    pub model: Option<&'a str>,
    /// `message.usage`.
    #[serde(default)]
    pub usage: Option<Usage>,
}

impl Counter {
    /// An empty counter.
    pub fn new() -> Self {
        Self::default()
    }

    /// Count the usage of one assistant message line (see the module docs for the rule).
    pub fn add(
        &mut self,
        message_id: Option<&str>,
        request_id: Option<&str>,
        model: &str,
        t: Tokens,
    ) {
        let key = match (message_id, request_id) {
            (Some(m), _) => (m.to_owned(), String::new()),
            (None, Some(r)) => (String::new(), r.to_owned()),
            (None, None) => return,
        };
        let rec = Record {
            model: model.to_owned(),
            tokens: t,
        };
        match self.index.get(&key) {
            Some(&i) => {
                self.repeats += 1;
                self.records[i] = rec;
            }
            None => {
                self.index.insert(key, self.records.len());
                self.records.push(rec);
            }
        }
    }

    /// Count a raw transcript line (only `assistant` lines with a message id count).
    pub fn add_line(&mut self, line: &[u8]) {
        let Ok(l) = serde_json::from_slice::<Line<'_>>(line) else {
            return;
        };
        if l.kind != Some("assistant") {
            return;
        }
        let Some(m) = l
            .message
            .and_then(|m| serde_json::from_str::<Message<'_>>(m.get()).ok())
        else {
            return;
        };
        self.add_message(&m, l.request_id);
    }

    /// Count a parsed assistant message.
    pub fn add_message(&mut self, m: &Message<'_>, request_id: Option<&str>) {
        if let Some(u) = &m.usage {
            self.add(m.id, request_id, m.model.unwrap_or(""), u.tokens());
        }
    }

    /// API messages counted.
    pub fn messages(&self) -> usize {
        self.records.len()
    }

    /// Every message's counts added.
    pub fn total(&self) -> Tokens {
        let mut t = Tokens::default();
        for r in &self.records {
            t.add(&r.tokens);
        }
        t
    }

    /// The counts per model (in model order).
    pub fn by_model(&self) -> BTreeMap<String, Tokens> {
        let mut m: BTreeMap<String, Tokens> = BTreeMap::new();
        for r in &self.records {
            m.entry(r.model.clone()).or_default().add(&r.tokens);
        }
        m
    }

    /// Count `other`'s messages too (one message in both counts once; `other`'s record wins).
    pub fn merge(&mut self, other: &Counter) {
        let mut keys: Vec<(&(String, String), &usize)> = other.index.iter().collect();
        keys.sort_by_key(|(_, i)| **i);
        for ((id, req), &i) in keys {
            let r = &other.records[i];
            let (id, req) = (id.as_str(), req.as_str());
            self.add(
                (!id.is_empty()).then_some(id),
                (!req.is_empty()).then_some(req),
                &r.model,
                r.tokens,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = r#"{"type":"assistant","requestId":"req_1","message":{"id":"msg_1","model":"m","usage":{"input_tokens":4,"output_tokens":1,"cache_read_input_tokens":10,"cache_creation_input_tokens":20,"cache_creation":{"ephemeral_5m_input_tokens":15,"ephemeral_1h_input_tokens":5}}}}"#;
    const A2: &str = r#"{"type":"assistant","requestId":"req_1","message":{"id":"msg_1","model":"m","usage":{"input_tokens":4,"output_tokens":9,"cache_read_input_tokens":10,"cache_creation_input_tokens":20,"cache_creation":{"ephemeral_5m_input_tokens":15,"ephemeral_1h_input_tokens":5}}}}"#;

    #[test]
    fn a_message_repeated_on_block_lines_counts_once_with_its_last_counts() {
        let mut c = Counter::new();
        c.add_line(A.as_bytes());
        c.add_line(A2.as_bytes());
        assert_eq!(c.messages(), 1);
        assert_eq!(c.repeats, 1);
        let t = c.total();
        assert_eq!(
            t,
            Tokens {
                input: 4,
                output: 9,
                cache_read: 10,
                cache_write_5m: 15,
                cache_write_1h: 5
            }
        );
        assert_eq!(t.total(), 43);
    }

    #[test]
    fn other_lines_and_messages_without_id_count_nothing() {
        let mut c = Counter::new();
        c.add_line(br#"{"type":"user","message":{"id":"x","usage":{"input_tokens":3}}}"#);
        c.add_line(
            br#"{"type":"assistant","message":{"model":"<synthetic>","usage":{"input_tokens":3}}}"#,
        );
        c.add_line(b"not json");
        assert_eq!(c.messages(), 0);
        // A copy without its request id is the same message.
        c.add_line(A.as_bytes());
        c.add_line(A2.replace(r#""requestId":"req_1","#, "").as_bytes());
        assert_eq!(c.messages(), 1);
    }

    #[test]
    fn a_merged_copy_counts_once() {
        let mut a = Counter::new();
        a.add_line(A.as_bytes());
        let mut b = Counter::new();
        b.add_line(A2.as_bytes());
        b.add_line(br#"{"type":"assistant","message":{"id":"msg_2","model":"n","usage":{"output_tokens":2}}}"#);
        a.merge(&b);
        assert_eq!(a.messages(), 2);
        assert_eq!(a.total().output, 11);
        assert_eq!(a.by_model().len(), 2);
    }
}
