//! Line transforms: a rewrite applied to every input line before the normalizer sees it, so
//! every sink (envelope, audit raw lines, SSE, records) sees only the rewritten bytes. Redaction
//! is one ([`crate::redact::Redactor`]).
//!
//! A transform turns one input line into one or more lines: usually the rewritten line, preceded
//! by lines it synthesizes (e.g. delta text it held back and releases before a
//! `content_block_stop`). Each output line may carry extra common members for the events made
//! from it (raw JSON, e.g. `,"redactions":[…]`).

use std::ops::Range;

use crate::read::Line;

/// A per-line rewrite.
pub trait LineTransform {
    /// Rewrite `line`, appending one or more lines to `out` (the rewritten line last).
    fn line(&mut self, line: &Line<'_>, out: &mut Transformed);
    /// End of input: append whatever is still held back (possibly nothing).
    fn finish(&mut self, out: &mut Transformed);
}

/// One output line of a transform.
#[derive(Debug, Clone)]
struct OutLine {
    /// `None`: the input line, unchanged.
    bytes: Option<Range<usize>>,
    members: Range<usize>,
    synthesized: bool,
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

    /// Close the line written so far. `synthesized`: not an input line (it is not counted as
    /// one: the normalizer gets it with `raw_len` 0).
    pub fn end_line(&mut self, synthesized: bool) {
        self.lines.push(OutLine {
            bytes: Some(self.line_start..self.bytes.len()),
            members: self.members_start..self.members.len(),
            synthesized,
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
            synthesized: false,
        });
        self.members_start = self.members.len();
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// True when there is no line.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Line `i` of the output for input line `input`: its bytes, its extra members, and
    /// whether it was synthesized.
    pub fn get<'s>(&'s self, i: usize, input: &'s [u8]) -> (&'s [u8], &'s [u8], bool) {
        let l = &self.lines[i];
        let bytes = match &l.bytes {
            Some(r) => &self.bytes[r.clone()],
            None => input,
        };
        (bytes, &self.members[l.members.clone()], l.synthesized)
    }
}
