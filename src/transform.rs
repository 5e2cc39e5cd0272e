//! Line transforms: a rewrite applied to every input line before the normalizer sees it, so
//! every sink (envelope, audit raw lines, SSE, records) sees only the rewritten bytes. Redaction
//! is one ([`crate::redact::Redactor`]).
//!
//! A transform turns each input line into exactly one output line, in input order, but may hold
//! lines back and release them with a later line (redaction holds a delta line whose fragment
//! could still be the start of a secret until the next line decides it). So the output for one
//! input line is zero or more lines: released earlier lines (each with its [`Origin`]), then
//! usually the line itself. Each output line may carry extra common members for the events made
//! from it (raw JSON, e.g. `,"redactions":[…]`).

use std::ops::Range;

use crate::read::Line;

/// A per-line rewrite.
pub trait LineTransform {
    /// Rewrite `line`, appending to `out` the lines it releases: earlier held lines, then
    /// usually `line` itself (unless it is held).
    fn line(&mut self, line: &Line<'_>, out: &mut Transformed);
    /// End of input: append whatever is still held back (possibly nothing).
    fn finish(&mut self, out: &mut Transformed);
}

/// The input line an output line stands for, when it is not the line being transformed (it
/// was held back and is released now).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    /// Its 1-based line number.
    pub number: u64,
    /// Its length in the input, terminator included.
    pub raw_len: u64,
    /// Whether it ended with `\n`.
    pub terminated: bool,
    /// When a length limit cut it: its real length.
    pub oversized: Option<u64>,
    /// Whether it ended in `\r` (see [`Line::cr`]).
    pub cr: bool,
}

impl Origin {
    /// The origin of `line`.
    pub fn of(line: &Line<'_>) -> Self {
        Origin {
            number: line.number,
            raw_len: line.raw_len,
            terminated: line.terminated,
            oversized: line.oversized,
            cr: line.cr,
        }
    }

    /// A line of `bytes` that stands where this origin stood in the input.
    pub fn line<'a>(&self, bytes: &'a [u8]) -> Line<'a> {
        Line {
            bytes,
            number: self.number,
            raw_len: self.raw_len,
            terminated: self.terminated,
            oversized: self.oversized,
            cr: self.cr,
        }
    }
}

/// One output line of a transform.
#[derive(Debug, Clone)]
struct OutLine {
    /// `None`: the input line, unchanged.
    bytes: Option<Range<usize>>,
    members: Range<usize>,
    /// `None`: the input line being transformed.
    origin: Option<Origin>,
}

/// The lines a transform produced for one input line. Reused across lines.
#[derive(Debug, Default)]
pub struct Transformed {
    bytes: Vec<u8>,
    members: Vec<u8>,
    lines: Vec<OutLine>,
    line_start: usize,
    members_start: usize,
}

impl Transformed {
    /// Forget every line.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.members.clear();
        self.lines.clear();
        self.line_start = 0;
        self.members_start = 0;
    }

    /// Where the next line's bytes are written (no newline).
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.bytes
    }

    /// Where the next line's extra common members are written: raw JSON, each member starting
    /// with `,` (`,"redactions":[…]`).
    pub fn members(&mut self) -> &mut Vec<u8> {
        &mut self.members
    }

    /// Close the line written so far: the rewritten input line being transformed, or (with an
    /// `origin`) an earlier line released now.
    pub fn end_line(&mut self, origin: Option<Origin>) {
        self.lines.push(OutLine {
            bytes: Some(self.line_start..self.bytes.len()),
            members: self.members_start..self.members.len(),
            origin,
        });
        self.line_start = self.bytes.len();
        self.members_start = self.members.len();
    }

    /// Add the input line itself, unchanged (nothing written to [`Transformed::buf`] for it).
    pub fn keep_line(&mut self) {
        self.bytes.truncate(self.line_start);
        self.lines.push(OutLine {
            bytes: None,
            members: self.members_start..self.members.len(),
            origin: None,
        });
        self.members_start = self.members.len();
    }

    /// Whether line `i` is the input line, unchanged.
    pub fn is_kept(&self, i: usize) -> bool {
        self.lines[i].bytes.is_none()
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// True when there is no line.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Line `i` of the output for input line `input`: its bytes, its extra members, and the
    /// earlier input line it stands for (`None`: `input` itself).
    pub fn get<'s>(&'s self, i: usize, input: &'s [u8]) -> (&'s [u8], &'s [u8], Option<Origin>) {
        let l = &self.lines[i];
        let bytes = match &l.bytes {
            Some(r) => &self.bytes[r.clone()],
            None => input,
        };
        (bytes, &self.members[l.members.clone()], l.origin)
    }

    /// Append line `i` of `other` (for input line `input`) as a line released from `origin`.
    pub fn append_from(&mut self, other: &Transformed, i: usize, input: &[u8], origin: Origin) {
        let (bytes, members, _) = other.get(i, input);
        self.bytes.truncate(self.line_start);
        self.bytes.extend_from_slice(bytes);
        self.members.truncate(self.members_start);
        self.members.extend_from_slice(members);
        self.end_line(Some(origin));
    }
}
