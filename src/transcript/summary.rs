//! One line per session for `sessions`: when it ran, how much it did and what it cost, read
//! from its transcript files in one pass (every line is parsed, but only the few members
//! needed are decoded: the rest is skipped unread).
//!
//! Counts: `messages` is the session's user lines plus its distinct assistant API messages
//! (the CLI writes one line per content block); `tool_calls` the distinct `tool_use` ids;
//! `subagents` the sidechain files plus the subagents written inline (CLI 1.0.x); usage follows
//! [`super::usage`] (each API message once, subagents included).

use std::borrow::Cow;
use std::collections::HashSet;
use std::fs::File;
use std::io::{self, Read};
use std::path::PathBuf;
use std::time::SystemTime;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::session::SessionFiles;
use super::usage::{Counter, Message};
use crate::read::LineReader;

/// What `sessions` shows of one session.
#[derive(Debug, Default)]
pub struct Summary {
    /// The session id (the main file's name).
    pub id: String,
    /// The project directory's name.
    pub project: String,
    /// The working directory the lines name (the first one that names one).
    pub cwd: Option<String>,
    /// The main transcript.
    pub path: PathBuf,
    /// The CLI version of the last line that names one.
    pub version: Option<String>,
    /// The earliest and latest `timestamp` of any line.
    pub start: Option<String>,
    /// See `start`.
    pub end: Option<String>,
    /// See the module docs.
    pub messages: u64,
    /// See the module docs.
    pub tool_calls: u64,
    /// See the module docs.
    pub subagents: u64,
    /// Usage, each API message once.
    pub usage: Counter,
    /// Bytes read.
    pub bytes: u64,
    /// Lines that were not JSON objects (skipped).
    pub bad_lines: u64,
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cwd: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    version: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain", default)]
    sidechain: Option<serde_json::Value>,
    #[serde(rename = "parentUuid", default)]
    parent: Option<serde_json::Value>,
    #[serde(rename = "requestId", borrow, default)]
    request_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Content<'a> {
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
}

/// The newest modification time of a session's files (`None` when none could be read).
pub fn modified(s: &SessionFiles) -> Option<SystemTime> {
    std::iter::once(&s.main)
        .chain(s.sidechains.iter().map(|c| &c.path))
        .filter_map(|p| p.metadata().and_then(|m| m.modified()).ok())
        .max()
}

/// The total size of a session's files.
pub fn size(s: &SessionFiles) -> u64 {
    std::iter::once(&s.main)
        .chain(s.sidechains.iter().map(|c| &c.path))
        .filter_map(|p| p.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// Read a session's files and summarise them (`buf`: a line buffer to reuse).
pub fn summarize(s: &SessionFiles, buf: &mut Vec<u8>) -> io::Result<Summary> {
    let mut sum = Summary {
        id: s.id.clone(),
        project: s.project.clone(),
        path: s.main.clone(),
        subagents: s.sidechains.len() as u64,
        ..Default::default()
    };
    let mut acc = Acc::default();
    let files = std::iter::once(&s.main).chain(s.sidechains.iter().map(|c| &c.path));
    for (i, p) in files.enumerate() {
        let f = File::open(p)?;
        let size = f.metadata().ok().map(|m| m.len());
        let mut r = LineReader::reusing(Box::new(f) as Box<dyn Read>, std::mem::take(buf), size);
        while let Some(l) = r.next_line()? {
            sum.bytes += l.raw_len;
            acc.line(l.bytes, i == 0, &mut sum);
        }
        *buf = r.into_buffer();
    }
    sum.messages += acc.assistant_ids.len() as u64;
    sum.tool_calls = acc.tool_ids.len() as u64;
    Ok(sum)
}

#[derive(Default)]
struct Acc {
    assistant_ids: HashSet<String>,
    tool_ids: HashSet<String>,
}

impl Acc {
    fn line(&mut self, bytes: &[u8], main: bool, sum: &mut Summary) {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let Ok(l) = serde_json::from_slice::<Line<'_>>(bytes) else {
            sum.bad_lines += 1;
            return;
        };
        if let Some(t) = l.timestamp.as_deref() {
            if sum.start.as_deref().is_none_or(|s| t < s) {
                sum.start = Some(t.to_owned());
            }
            if sum.end.as_deref().is_none_or(|e| t > e) {
                sum.end = Some(t.to_owned());
            }
        }
        if sum.cwd.is_none()
            && let Some(c) = l.cwd
        {
            sum.cwd = Some(c.into_owned());
        }
        if let Some(v) = l.version {
            sum.version = Some(v.into_owned());
        }
        let sidechain = l.sidechain.as_ref().and_then(serde_json::Value::as_bool) == Some(true);
        match l.kind.as_deref() {
            Some("user") => {
                sum.messages += 1;
                // A subagent written inline (CLI 1.0.x): its first line has no parent.
                if main && sidechain && l.parent.as_ref().is_none_or(serde_json::Value::is_null) {
                    sum.subagents += 1;
                }
            }
            Some("assistant") => {
                let Some(raw) = l.message else { return };
                if let Ok(m) = serde_json::from_str::<Message<'_>>(raw.get()) {
                    if let Some(id) = m.id {
                        self.assistant_ids.insert(id.to_owned());
                    }
                    sum.usage.add_message(&m, l.request_id.as_deref());
                }
                self.tools(raw);
            }
            _ => {}
        }
    }

    fn tools(&mut self, message: &RawValue) {
        let Some(c) = serde_json::from_str::<Content<'_>>(message.get())
            .ok()
            .and_then(|c| c.content)
        else {
            return;
        };
        let Ok(blocks) = serde_json::from_str::<Vec<Block<'_>>>(c.get()) else {
            return;
        };
        for b in blocks {
            let call = matches!(
                b.kind.as_deref(),
                Some("tool_use" | "server_tool_use" | "mcp_tool_use")
            );
            if let (true, Some(id)) = (call, b.id) {
                self.tool_ids.insert(id.into_owned());
            }
        }
    }
}
