//! The pretty view's writer: rows of at most the width (a gutter naming the subagent, an indent,
//! styled pieces, cut with an ellipsis), and streaming text (assistant text and thinking as
//! their deltas arrive) word-wrapped with a hanging indent, markdown kept readable (headings,
//! lists, code blocks). Append-only: it only ever writes forward, never moves the cursor.

use std::io::{self, BufWriter, Write};

use super::style::{Glyphs, Palette, Role};
use crate::view::num::plural;
use crate::view::text::{self, Piece};

/// The attribution at the start of every row inside a subagent: a bar per level of nesting and
/// the innermost subagent's label (safe text, styled), at most half the width.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gutter {
    /// What is written (with SGR sequences when colored).
    pub rendered: String,
    /// Its width in cells.
    pub cells: usize,
    /// Levels of nesting.
    pub depth: usize,
}

impl Gutter {
    /// The gutter one level inside this one, labelled `label` (safe text), for rows `width`
    /// cells wide.
    pub fn nested(&self, label: &str, pal: &Palette, g: &Glyphs, width: usize) -> Gutter {
        let depth = self.depth + 1;
        let bars = (text::width(g.bar) + 1) * depth;
        let room = (width / 2).saturating_sub(bars + 1).max(4);
        let label = text::truncate(label, room, g.ellipsis);
        let mut rendered = String::new();
        for _ in 0..depth {
            rendered.push_str(&format!(
                "{}{}{} ",
                pal.start(Role::Dim),
                g.bar,
                pal.reset(Role::Dim)
            ));
        }
        rendered.push_str(&format!(
            "{}{}{} ",
            pal.start(Role::Label),
            label,
            pal.reset(Role::Label)
        ));
        Gutter {
            rendered,
            cells: bars + text::width(&label) + 1,
            depth,
        }
    }
}

/// Which block a stream of text belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamKey {
    /// The subagent (its parent tool use id).
    pub parent: Option<String>,
    /// The API message.
    pub message: Option<String>,
    /// Thinking rather than text.
    pub thinking: bool,
}

/// How a stream is shown.
#[derive(Debug, Clone)]
pub struct StreamStyle {
    /// The first row's marker (safe, `● `), 2 cells wide.
    pub marker: String,
    /// The marker's role.
    pub marker_role: Role,
    /// The text's role.
    pub role: Role,
    /// Only one row: the rest is counted, not shown.
    pub one_row: bool,
}

struct Stream {
    key: StreamKey,
    gutter: Gutter,
    style: StreamStyle,
    line_role: Role,
    col: usize,
    word: String,
    word_w: usize,
    spaces: usize,
    row_open: bool,
    rows: usize,
    continuation: bool,
    line_start: bool,
    hang: usize,
    fence: bool,
    /// The code line being read (spaces kept), written whole at its end, cut to the row.
    code: String,
    code_w: usize,
    blank_rows: usize,
    suppressing: bool,
    line_has_content: bool,
    hidden_lines: u64,
}

/// The view's output.
pub struct Term<W: Write> {
    w: BufWriter<W>,
    /// The width in cells.
    pub width: usize,
    /// Colors.
    pub pal: Palette,
    /// Glyphs.
    pub g: Glyphs,
    stream: Option<Stream>,
    rows: u64,
}

const MARKER: usize = 2;

impl<W: Write> Term<W> {
    /// A writer over `w` (buffered here).
    pub fn new(w: W, width: usize, pal: Palette, g: Glyphs) -> Self {
        Term {
            w: BufWriter::with_capacity(64 * 1024, w),
            width,
            pal,
            g,
            stream: None,
            rows: 0,
        }
    }

    /// Push what is buffered to the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    /// How many rows were written so far (to tell whether anything came between two rows).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Whether text of `key` is being streamed right now (nothing else came in between).
    pub fn streaming(&self, key: &StreamKey) -> bool {
        self.stream.as_ref().is_some_and(|s| &s.key == key)
    }

    /// End the stream being written, if any (its last word, its last row).
    pub fn settle(&mut self) -> io::Result<()> {
        let Some(mut s) = self.stream.take() else {
            return Ok(());
        };
        self.flush_word(&mut s)?;
        self.flush_code(&mut s)?;
        if s.suppressing && s.row_open {
            let note = format!(" (+{})", plural(s.hidden_lines, "line", "lines"));
            if s.hidden_lines > 0 && s.col + text::width(&note) <= self.avail(&s) + 1 {
                self.w.write_all(note.as_bytes())?;
            }
        }
        if s.row_open {
            self.close_row(&mut s)?;
        }
        Ok(())
    }

    /// One row: `gutter`, `indent` spaces, then the pieces (safe text) cut to the width.
    pub fn row(
        &mut self,
        gutter: &Gutter,
        indent: usize,
        pieces: &[(Role, &str)],
    ) -> io::Result<()> {
        self.settle()?;
        self.w.write_all(gutter.rendered.as_bytes())?;
        write_spaces(&mut self.w, indent)?;
        let mut room = self.width.saturating_sub(gutter.cells + indent);
        let total: usize = pieces.iter().map(|(_, s)| text::width(s)).sum();
        let cut = total > room;
        if cut {
            room = room.saturating_sub(text::width(self.g.ellipsis));
        }
        for (role, s) in pieces {
            if room == 0 {
                break;
            }
            let w = text::width(s);
            let part = if w <= room {
                s
            } else {
                &s[..text::fit(s, room)]
            };
            room = room.saturating_sub(if w <= room { w } else { text::width(part) });
            if part.is_empty() {
                continue;
            }
            self.w.write_all(self.pal.start(*role).as_bytes())?;
            self.w.write_all(part.as_bytes())?;
            self.w.write_all(self.pal.reset(*role).as_bytes())?;
        }
        if cut {
            self.w.write_all(self.g.ellipsis.as_bytes())?;
        }
        self.rows += 1;
        self.w.write_all(b"\n")
    }

    /// `lead` then `items` (safe text) separated by `sep`, in as many rows as the width needs:
    /// the rows after the first are indented by `lead`'s width (4 when it is long); an item is never split unless
    /// it alone is wider than a row (then it is cut).
    pub fn packed(
        &mut self,
        gutter: &Gutter,
        indent: usize,
        role: Role,
        lead: &str,
        items: &[String],
        sep: &str,
    ) -> io::Result<()> {
        let room = self.width.saturating_sub(gutter.cells + indent);
        // Rows after the first line up under the items, unless the lead is long.
        let hang = match text::width(lead) {
            w if w > 16 || w > room / 2 => 4,
            w => w,
        };
        let mut line = lead.to_owned();
        let mut used = text::width(lead);
        let mut first_in_row = true;
        let trail = text::width(sep.trim_end());
        for (i, item) in items.iter().enumerate() {
            let add = if first_in_row { 0 } else { text::width(sep) } + text::width(item);
            // Room for the separator that ends the row when more items follow.
            let reserve = if i + 1 < items.len() { trail } else { 0 };
            if !first_in_row && used + add + reserve > room {
                line.push_str(sep.trim_end());
                self.row(gutter, indent, &[(role, &line)])?;
                line = " ".repeat(hang);
                used = hang;
                first_in_row = true;
            }
            if !first_in_row {
                line.push_str(sep);
                used += text::width(sep);
            }
            line.push_str(item);
            used += text::width(item);
            first_in_row = false;
        }
        self.row(gutter, indent, &[(role, &line)])
    }

    /// One row of untrusted text in `role`: unsafe characters shown in notation (highlighted),
    /// tabs as spaces, cut to the width.
    pub fn untrusted_row(
        &mut self,
        gutter: &Gutter,
        indent: usize,
        lead: &[(Role, &str)],
        role: Role,
        line: &str,
    ) -> io::Result<()> {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let mut owned: Vec<(Role, String)> =
            lead.iter().map(|(r, s)| (*r, (*s).to_owned())).collect();
        text::pieces(line, |p| match p {
            Piece::Plain(s) => owned.push((role, s.to_owned())),
            Piece::Escaped(c) => owned.push((Role::Escaped, text::notation(c))),
            Piece::Tab => owned.push((role, "    ".to_owned())),
            Piece::Newline => owned.push((role, format!(" {} ", self.g.newline))),
        });
        let pieces: Vec<(Role, &str)> = owned.iter().map(|(r, s)| (*r, s.as_str())).collect();
        self.row(gutter, indent, &pieces)
    }

    /// Write untrusted streaming `chunk` of the block `key` (starting the block's stream, and
    /// ending any other, when it is not the one being written).
    pub fn stream(
        &mut self,
        key: &StreamKey,
        gutter: &Gutter,
        style: &StreamStyle,
        chunk: &str,
    ) -> io::Result<()> {
        if !self.streaming(key) {
            self.settle()?;
            self.stream = Some(Stream {
                key: key.clone(),
                gutter: gutter.clone(),
                line_role: style.role,
                style: style.clone(),
                col: 0,
                word: String::new(),
                word_w: 0,
                spaces: 0,
                row_open: false,
                rows: 0,
                continuation: false,
                line_start: true,
                hang: 0,
                fence: false,
                code: String::new(),
                code_w: 0,
                blank_rows: 0,
                suppressing: false,
                line_has_content: false,
                hidden_lines: 0,
            });
        }
        let mut s = self.stream.take().expect("a stream");
        let mut res = Ok(());
        text::pieces(chunk, |p| {
            if res.is_err() {
                return;
            }
            res = self.piece(&mut s, p);
        });
        self.stream = Some(s);
        res
    }

    fn piece(&mut self, s: &mut Stream, p: Piece<'_>) -> io::Result<()> {
        match p {
            Piece::Plain(t) => {
                for c in t.chars() {
                    if c == ' ' {
                        self.flush_word(s)?;
                        s.spaces += 1;
                    } else {
                        s.word.push(c);
                        s.word_w += text::char_width(c);
                    }
                }
            }
            Piece::Escaped(c) => {
                let n = text::notation(c);
                s.word_w += text::width(&n);
                s.word.push_str(&n);
            }
            Piece::Tab => {
                self.flush_word(s)?;
                s.spaces += 4;
            }
            Piece::Newline => {
                self.flush_word(s)?;
                self.flush_code(s)?;
                if s.suppressing {
                    s.hidden_lines += u64::from(s.line_has_content);
                } else if s.style.one_row && s.rows + usize::from(s.row_open) > 0 {
                    s.suppressing = true;
                } else if s.row_open {
                    self.close_row(s)?;
                } else if s.rows > 0 && s.blank_rows == 0 {
                    // A paragraph break: one blank row (never at the start, never two).
                    self.open_row(s)?;
                    self.close_row(s)?;
                    s.blank_rows = 1;
                }
                s.line_has_content = false;
                s.line_start = true;
                s.continuation = false;
                s.hang = 0;
                s.spaces = 0;
                s.line_role = if s.fence { Role::Code } else { s.style.role };
            }
        }
        Ok(())
    }

    fn avail(&self, s: &Stream) -> usize {
        self.width.saturating_sub(s.gutter.cells + MARKER).max(8)
    }

    fn open_row(&mut self, s: &mut Stream) -> io::Result<()> {
        self.w.write_all(s.gutter.rendered.as_bytes())?;
        if s.rows == 0 {
            self.w
                .write_all(self.pal.start(s.style.marker_role).as_bytes())?;
            self.w.write_all(s.style.marker.as_bytes())?;
            self.w
                .write_all(self.pal.reset(s.style.marker_role).as_bytes())?;
        } else {
            write_spaces(&mut self.w, MARKER)?;
        }
        s.col = 0;
        if s.continuation {
            write_spaces(&mut self.w, s.hang)?;
            s.col = s.hang;
        }
        self.w.write_all(self.pal.start(s.line_role).as_bytes())?;
        s.row_open = true;
        Ok(())
    }

    fn close_row(&mut self, s: &mut Stream) -> io::Result<()> {
        self.w.write_all(self.pal.reset(s.line_role).as_bytes())?;
        self.w.write_all(b"\n")?;
        s.row_open = false;
        s.rows += 1;
        self.rows += 1;
        Ok(())
    }

    /// Markdown at the start of a source line, from its first word.
    fn line_kind(s: &mut Stream) {
        let w = s.word.as_str();
        if w.starts_with("```") || w.starts_with("~~~") {
            s.fence = !s.fence;
            s.line_role = Role::Code;
        } else if s.fence {
            s.line_role = Role::Code;
        } else if !w.is_empty() && w.bytes().all(|b| b == b'#') {
            s.line_role = Role::Heading;
        } else if matches!(w, "-" | "*" | "+" | ">")
            || w.strip_suffix(['.', ')'])
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        {
            s.hang = s.spaces + s.word_w + 1;
        }
    }

    fn flush_word(&mut self, s: &mut Stream) -> io::Result<()> {
        if s.word.is_empty() {
            return Ok(());
        }
        s.line_has_content = true;
        if s.suppressing {
            s.word.clear();
            s.word_w = 0;
            return Ok(());
        }
        if s.line_start {
            Self::line_kind(s);
            s.line_start = false;
        }
        s.blank_rows = 0;
        if s.line_role == Role::Code && !s.style.one_row {
            self.code_word(s);
            return Ok(());
        }
        let avail = self.avail(s) - usize::from(s.style.one_row);
        if s.row_open && s.col + s.spaces + s.word_w > avail && !s.fence {
            if s.style.one_row {
                return self.cut_one_row(s);
            }
            self.close_row(s)?;
            s.continuation = true;
            s.spaces = 0;
        }
        if !s.row_open {
            self.open_row(s)?;
        }
        let spaces = s.spaces.min(avail.saturating_sub(s.col));
        write_spaces(&mut self.w, spaces)?;
        s.col += spaces;
        s.spaces = 0;
        let word = std::mem::take(&mut s.word);
        let mut rest = word.as_str();
        while !rest.is_empty() {
            let room = avail.saturating_sub(s.col);
            let mut n = text::fit(rest, room);
            if n < rest.len() && s.style.one_row {
                self.w.write_all(&rest.as_bytes()[..n])?;
                s.col += text::width(&rest[..n]);
                return self.cut_one_row(s);
            }
            if n == 0 {
                if s.col > s.hang {
                    self.close_row(s)?;
                    s.continuation = true;
                    self.open_row(s)?;
                    continue;
                }
                n = rest.chars().next().map_or(rest.len(), char::len_utf8);
            }
            self.w.write_all(&rest.as_bytes()[..n])?;
            s.col += text::width(&rest[..n]);
            rest = &rest[n..];
            if !rest.is_empty() {
                self.close_row(s)?;
                s.continuation = true;
                self.open_row(s)?;
            }
        }
        s.word_w = 0;
        s.word = word;
        s.word.clear();
        Ok(())
    }

    /// A word of a code line, with the spaces before it, kept for the line's end. What lies past
    /// the row's end is not kept: the line is cut there.
    fn code_word(&self, s: &mut Stream) {
        if s.code_w <= self.avail(s) {
            s.code.extend(std::iter::repeat_n(' ', s.spaces));
            s.code.push_str(&s.word);
            s.code_w += s.spaces + s.word_w;
        }
        s.spaces = 0;
        s.word.clear();
        s.word_w = 0;
    }

    /// Write the code line read so far on one row: never wrapped (that would reflow its layout)
    /// but cut with `…` at the row's end.
    fn flush_code(&mut self, s: &mut Stream) -> io::Result<()> {
        if s.code.is_empty() {
            return Ok(());
        }
        if !s.row_open {
            self.open_row(s)?;
        }
        let room = self.avail(s).saturating_sub(s.col);
        let code = std::mem::take(&mut s.code);
        if s.code_w <= room {
            self.w.write_all(code.as_bytes())?;
            s.col += s.code_w;
        } else {
            let n = text::fit(&code, room.saturating_sub(text::width(self.g.ellipsis)));
            self.w.write_all(&code.as_bytes()[..n])?;
            self.w.write_all(self.g.ellipsis.as_bytes())?;
            s.col += text::width(&code[..n]) + text::width(self.g.ellipsis);
        }
        s.code = code;
        s.code.clear();
        s.code_w = 0;
        Ok(())
    }

    fn cut_one_row(&mut self, s: &mut Stream) -> io::Result<()> {
        self.w.write_all(self.g.ellipsis.as_bytes())?;
        s.col += text::width(self.g.ellipsis);
        s.suppressing = true;
        s.word.clear();
        s.word_w = 0;
        Ok(())
    }
}

fn write_spaces(w: &mut impl Write, n: usize) -> io::Result<()> {
    const SPACES: &[u8; 64] = &[b' '; 64];
    let mut n = n;
    while n > 0 {
        let k = n.min(64);
        w.write_all(&SPACES[..k])?;
        n -= k;
    }
    Ok(())
}
