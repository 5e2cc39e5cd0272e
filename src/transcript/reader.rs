//! A session as one stream-json byte stream: the main transcript and its sidechain files read
//! together, merged in time order, each line rewritten by [`Mapper`]. Every command that reads
//! stream-json reads a transcript through this [`Read`].
//!
//! Merging: each file is read in its own order; of the files' next lines, the one with the
//! earliest `timestamp` goes first (the main file first on a tie; a line without a timestamp
//! counts as its file's previous one, so it stays behind it). A subagent's lines thus come
//! between the call that started it and that call's result, as in the live stream. Memory is one
//! line per file.
//!
//! The reader also counts usage ([`Counter`], one count per API message) as the lines pass, for
//! the run's cost estimate: [`SessionReader::usage`] shares it.

use std::io::{self, Read};
use std::sync::{Arc, Mutex, PoisonError};

use serde::Deserialize;

use super::map::Mapper;
use super::usage::Counter;
use crate::read::LineReader;

/// One input file of a session.
pub struct Part {
    /// The bytes.
    pub reader: Box<dyn Read + Send>,
    /// The subagent call this file's lines belong to, when known (a sidechain file).
    pub owner: Option<String>,
}

struct Src {
    lines: LineReader<Box<dyn Read + Send>>,
    owner: Option<String>,
    /// The next line (bytes, terminated), read ahead.
    next: Option<(Vec<u8>, bool)>,
    /// The time of `next` (or of the line before it).
    at: String,
    done: bool,
}

#[derive(Deserialize)]
struct Stamp<'a> {
    #[serde(borrow, default)]
    timestamp: Option<&'a str>,
}

/// Usage counted as a session is read, shared with whoever reports it at the end.
pub type SharedUsage = Arc<Mutex<Counter>>;

/// See the module docs.
pub struct SessionReader {
    srcs: Vec<Src>,
    mapper: Mapper,
    out: Vec<u8>,
    pos: usize,
    usage: SharedUsage,
    assistant: memchr::memmem::Finder<'static>,
    /// Rewrite lines into stream-json (else pass them as written).
    map: bool,
}

impl SessionReader {
    /// A reader of `parts` (the main file first).
    pub fn new(parts: Vec<Part>) -> Self {
        let srcs = parts
            .into_iter()
            .map(|p| Src {
                lines: LineReader::new(p.reader),
                owner: p.owner,
                next: None,
                at: String::new(),
                done: false,
            })
            .collect();
        SessionReader {
            srcs,
            mapper: Mapper::new(),
            out: Vec::new(),
            pos: 0,
            usage: Arc::default(),
            assistant: memchr::memmem::Finder::new(b"\"assistant\""),
            map: true,
        }
    }

    /// Whether lines are rewritten into stream-json (the default) or passed as written (the
    /// session's files still merged in time order).
    pub fn mapped(mut self, map: bool) -> Self {
        self.map = map;
        self
    }

    /// Count usage into `usage` (shared with other readers: a message two sessions share counts
    /// once) instead of a counter of its own.
    pub fn with_usage(mut self, usage: SharedUsage) -> Self {
        self.usage = usage;
        self
    }

    /// The usage counted so far.
    pub fn usage(&self) -> SharedUsage {
        Arc::clone(&self.usage)
    }

    /// Read `i`'s next line ahead (and its time, when several files are merged).
    fn fill(&mut self, i: usize) -> io::Result<()> {
        let merging = self.srcs.len() > 1;
        let s = &mut self.srcs[i];
        if s.done || s.next.is_some() {
            return Ok(());
        }
        match s.lines.next_line()? {
            None => s.done = true,
            Some(l) => {
                if merging
                    && let Ok(Stamp { timestamp: Some(t) }) =
                        serde_json::from_slice::<Stamp<'_>>(l.bytes)
                {
                    t.clone_into(&mut s.at);
                }
                s.next = Some((l.bytes.to_vec(), l.terminated));
            }
        }
        Ok(())
    }

    /// Produce the next mapped line into `out`; false at the end.
    fn produce(&mut self) -> io::Result<bool> {
        for i in 0..self.srcs.len() {
            self.fill(i)?;
        }
        let pick = self
            .srcs
            .iter()
            .enumerate()
            .filter(|(_, s)| s.next.is_some())
            .min_by(|(i, a), (j, b)| a.at.cmp(&b.at).then(i.cmp(j)))
            .map(|(i, _)| i);
        let Some(i) = pick else {
            return Ok(false);
        };
        let (line, terminated) = self.srcs[i].next.take().expect("picked a line");
        self.out.clear();
        self.pos = 0;
        if self.assistant.find(&line).is_some() {
            self.usage
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .add_line(&line);
        }
        if self.map {
            let owner = self.srcs[i].owner.clone();
            self.mapper.map_line(&line, owner.as_deref(), &mut self.out);
        } else {
            self.out.extend_from_slice(&line);
        }
        // An unterminated last line stays unterminated (the normalizer reports it as possibly
        // cut); one followed by lines of other files gets its newline.
        let last = !terminated && {
            self.fill(i)?;
            self.srcs.iter().all(|s| s.done && s.next.is_none())
        };
        if terminated || !last {
            self.out.push(b'\n');
        }
        Ok(true)
    }
}

impl Read for SessionReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        // Fill the buffer with as many lines as fit, so a line reader over this one sees whole
        // chunks (and its caller does not flush after every line).
        let mut n = 0;
        while n < buf.len() {
            if self.pos == self.out.len() && !self.produce()? {
                break;
            }
            let k = (buf.len() - n).min(self.out.len() - self.pos);
            buf[n..n + k].copy_from_slice(&self.out[self.pos..self.pos + k]);
            self.pos += k;
            n += k;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(s: &'static str, owner: Option<&str>) -> Part {
        Part {
            reader: Box::new(s.as_bytes()),
            owner: owner.map(str::to_owned),
        }
    }

    #[test]
    fn files_merge_in_time_order() {
        let main = "{\"type\":\"user\",\"sessionId\":\"s\",\"timestamp\":\"1\",\"uuid\":\"a\"}\n\
                    {\"type\":\"summary\",\"summary\":\"x\"}\n\
                    {\"type\":\"user\",\"sessionId\":\"s\",\"timestamp\":\"4\",\"uuid\":\"d\"}\n";
        let side = "{\"type\":\"user\",\"sessionId\":\"s\",\"timestamp\":\"2\",\"isSidechain\":true,\"uuid\":\"b\"}\n\
                    {\"type\":\"user\",\"sessionId\":\"s\",\"timestamp\":\"3\",\"isSidechain\":true,\"uuid\":\"c\"}";
        let mut r = SessionReader::new(vec![part(main, None), part(side, Some("toolu_1"))]);
        let mut s = String::new();
        r.read_to_string(&mut s).unwrap();
        let uuids: Vec<&str> = s
            .lines()
            .map(|l| l.split("\"uuid\":\"").nth(1).map_or("-", |x| &x[..1]))
            .collect();
        assert_eq!(uuids, ["a", "-", "b", "c", "d"]);
        assert!(
            s.lines()
                .nth(2)
                .unwrap()
                .contains("\"parent_tool_use_id\":\"toolu_1\"")
        );
        assert!(s.ends_with("}\n"));
    }

    #[test]
    fn an_unterminated_last_line_stays_so() {
        let mut r = SessionReader::new(vec![part("{\"type\":\"summary\"}\n{\"type\":\"us", None)]);
        let mut s = String::new();
        r.read_to_string(&mut s).unwrap();
        assert_eq!(s, "{\"type\":\"summary\"}\n{\"type\":\"us");
    }
}
