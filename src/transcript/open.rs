//! Opening a command's inputs in whichever format they are: stream-json as it is, a transcript
//! (a session file, a session id, a project directory, stdin) through [`SessionReader`].
//!
//! An argument is, in this order: `-` (stdin); an existing directory (every session in it, or
//! in each project directory under it); an existing file; else, unless the format is forced to
//! stream-json, a session id or the start of one, looked up under `~/.claude/projects`
//! ([`session::projects_root`]). With `--input-format auto` a file or stdin is a transcript when
//! its first lines say so ([`super::detect`]); stdin is read until a line decides (at most
//! [`SNIFF_BYTES`]), and those bytes are then read again.

use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::InputFormat;
use super::detect;
use super::reader::{Part, SessionReader, SharedUsage};
use super::session::{self, SessionFiles};
use crate::error::Error;
use crate::input::{self, Input};

/// How much of an input is looked at to tell its format.
pub const SNIFF_BYTES: usize = 64 * 1024;

/// How a transcript input is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    /// Rewritten into the stream-json the normalizer reads ([`super::map`]).
    StreamJson,
    /// As written (`redact`: a transcript in, a transcript out), the session's files merged.
    AsWritten,
}

/// A command's inputs, opened.
pub struct Opened {
    /// In argument order.
    pub inputs: Vec<Input>,
    /// Whether any input file is a transcript (the run then needs no `result`); stdin is known
    /// only once read: see [`Opened::any_transcript`].
    pub transcript: bool,
    /// The usage the transcript inputs counted (one count per API message across all of them).
    pub usage: SharedUsage,
    lines: Lines,
    stdin_transcript: Decided,
}

/// Open `files` (none: stdin) as `format` says (see the module docs).
pub fn open_inputs(files: &[PathBuf], format: InputFormat, lines: Lines) -> Result<Opened, Error> {
    let stdin = [PathBuf::from("-")];
    let files = if files.is_empty() { &stdin[..] } else { files };
    let mut o = Opened {
        inputs: Vec::new(),
        transcript: false,
        usage: SharedUsage::default(),
        lines,
        stdin_transcript: Decided::default(),
    };
    // Another agent's stream is read line by line like stream-json (no transcript lookup).
    let plain = matches!(format, InputFormat::StreamJson | InputFormat::Agent(_));
    for f in files {
        let name = f.display().to_string();
        if name == "-" {
            let i = input::open_all(std::slice::from_ref(f))?.remove(0);
            o.stdin(i, format).map_err(|e| Error::io("stdin", e))?;
        } else if f.is_dir() && !plain {
            let sessions = sessions_in(f)?;
            if sessions.is_empty() {
                // A directory that holds no sessions is refused as every command refuses a
                // directory among its inputs: before any output.
                return Err(Error::msg(
                    name,
                    "Is a directory (and holds no session transcripts, *.jsonl)",
                ));
            }
            for s in sessions {
                o.session(s)?;
            }
        } else if f.exists() || plain {
            if let InputFormat::Agent(chosen) = format {
                check_dialect(f, chosen)?;
            }
            let is_transcript = match format {
                InputFormat::StreamJson | InputFormat::Agent(_) => false,
                InputFormat::Transcript => true,
                // A file whose first bytes cannot be read is no transcript to the sniffer: the
                // pipeline meets the error and ends the run with run.end naming it.
                InputFormat::Auto => sniff_file(f).unwrap_or(false),
            };
            if is_transcript && f.is_file() {
                o.session(session::session_files(f, None))?;
            } else {
                let i = input::open_all(std::slice::from_ref(f))?.remove(0);
                if is_transcript {
                    o.transcript = true;
                    let usage = o.usage.clone();
                    o.inputs.push(i.wrapped(|r| one_file(r, usage, lines)));
                } else {
                    o.inputs.push(i);
                }
            }
        } else if session::looks_like_id(&name) {
            let root = session::projects_root()
                .ok_or_else(|| Error::msg(&name, "no such file, and HOME is not set"))?;
            let main = session::find(&root, &name)?;
            o.session(session::session_files(&main, None))?;
        } else {
            // Fails with the OS's "No such file or directory".
            input::open_all(std::slice::from_ref(f))?;
        }
    }
    Ok(o)
}

/// The sessions a directory holds: its own transcripts (a project directory), else those of
/// every project directory under it (`~/.claude/projects`).
pub fn sessions_in(dir: &Path) -> Result<Vec<SessionFiles>, Error> {
    let own = session::project_sessions(dir);
    if !own.is_empty() {
        return Ok(own);
    }
    session::all_sessions(dir, None)
}

/// Refuse, before any output, a file whose first lines are another dialect than the `chosen`
/// one (`--input-format`): the message names what it looks like.
fn check_dialect(path: &Path, chosen: crate::dialect::Dialect) -> Result<(), Error> {
    if !path.is_file() {
        return Ok(());
    }
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    if let Ok(f) = File::open(path) {
        let _ = f.take(SNIFF_BYTES as u64).read_to_end(&mut head);
    }
    if detect::looks_like_transcript(&head) {
        let why = format!(
            "--input-format {chosen} was given, but this looks like a Claude Code session transcript; use --input-format transcript (or auto)"
        );
        return Err(Error::msg(path.display().to_string(), why).with_exit(crate::exit::Exit::ERROR));
    }
    match crate::dialect::detect(&head) {
        Some(seen) if seen != chosen => {
            let msg = crate::dialect::mismatch(&path.display().to_string(), chosen, seen);
            let why = msg
                .split_once(": ")
                .map_or(msg.as_str(), |(_, w)| w)
                .to_owned();
            Err(Error::msg(path.display().to_string(), why).with_exit(crate::exit::Exit::ERROR))
        }
        _ => Ok(()),
    }
}

/// Whether the file at `path` starts like a transcript.
fn sniff_file(path: &Path) -> io::Result<bool> {
    if !path.is_file() {
        return Ok(false);
    }
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    File::open(path)?
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)?;
    Ok(detect::looks_like_transcript(&head))
}

impl Opened {
    /// Add one session (its files opened now, so a missing one fails before any output).
    pub fn session(&mut self, mut s: SessionFiles) -> Result<(), Error> {
        session::owners(&mut s).map_err(|e| Error::io(s.main.display().to_string(), e))?;
        let (parts, size) = open_parts(&s)?;
        let reader = SessionReader::new(parts)
            .with_usage(self.usage.clone())
            .mapped(self.lines == Lines::StreamJson);
        self.transcript = true;
        self.inputs.push(Input::from_reader(
            s.main.display().to_string(),
            Box::new(reader),
            Some(size),
        ));
        Ok(())
    }

    fn stdin(&mut self, i: Input, format: InputFormat) -> io::Result<()> {
        if matches!(format, InputFormat::StreamJson | InputFormat::Agent(_)) {
            self.inputs.push(i);
            return Ok(());
        }
        // Decided on the first read, not now: the command opens its outputs (a capture's
        // header, an audit log) before its input says anything.
        let sniff = Sniff {
            state: SniffState::Pending {
                forced: format == InputFormat::Transcript,
                usage: self.usage.clone(),
                lines: self.lines,
            },
            decided: Arc::clone(&self.stdin_transcript),
        };
        self.inputs.push(i.wrapped(move |r| {
            Box::new(Sniffed {
                inner: Some(r),
                sniff,
            })
        }));
        Ok(())
    }

    /// Whether any input is a transcript: the files at once, stdin once it has been read.
    pub fn any_transcript(&self) -> bool {
        self.transcript || self.stdin_transcript.get() == Some(&true)
    }
}

/// What stdin turned out to be (set on its first read).
type Decided = Arc<OnceLock<bool>>;

enum SniffState {
    Pending {
        forced: bool,
        usage: SharedUsage,
        lines: Lines,
    },
    Reading(Box<dyn Read + Send>),
}

struct Sniff {
    state: SniffState,
    decided: Decided,
}

/// stdin, its format told from its first lines on the first read (see the module docs).
struct Sniffed {
    inner: Option<Box<dyn Read + Send>>,
    sniff: Sniff,
}

impl Sniffed {
    fn start(&mut self) -> io::Result<()> {
        let SniffState::Pending {
            forced,
            usage,
            lines,
        } = &self.sniff.state
        else {
            return Ok(());
        };
        let mut r = self.inner.take().expect("read once before the decision");
        let mut head: Vec<u8> = Vec::new();
        let mut is_transcript = *forced;
        let mut decided = *forced;
        let mut chunk = [0u8; 8192];
        while !decided && head.len() < SNIFF_BYTES {
            let n = match r.read(&mut chunk) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                is_transcript = detect::looks_like_transcript(&head);
                break;
            }
            head.extend_from_slice(&chunk[..n]);
            // Only whole lines decide.
            let whole = head.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
            if let Some(t) = detect::decide(&head[..whole]) {
                is_transcript = t;
                decided = true;
            }
        }
        let _ = self.sniff.decided.set(is_transcript);
        let r: Box<dyn Read + Send> = Box::new(Cursor::new(head).chain(r));
        let r = if is_transcript {
            one_file(r, usage.clone(), *lines)
        } else {
            r
        };
        self.sniff.state = SniffState::Reading(r);
        Ok(())
    }
}

impl Read for Sniffed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.start()?;
        match &mut self.sniff.state {
            SniffState::Reading(r) => r.read(buf),
            SniffState::Pending { .. } => unreachable!("start() decides"),
        }
    }
}

/// A transcript read alone (stdin, or a file forced to be one): no sidechain files.
fn one_file(r: Box<dyn Read + Send>, usage: SharedUsage, lines: Lines) -> Box<dyn Read + Send> {
    let part = Part {
        reader: r,
        owner: None,
    };
    let reader = SessionReader::new(vec![part]).with_usage(usage);
    Box::new(reader.mapped(lines == Lines::StreamJson))
}

/// Open a session's files: the main one first, then the sidechains; their total size.
pub fn open_parts(s: &SessionFiles) -> Result<(Vec<Part>, u64), Error> {
    let mut parts = Vec::with_capacity(1 + s.sidechains.len());
    let mut size = 0;
    let paths = std::iter::once((&s.main, None))
        .chain(s.sidechains.iter().map(|c| (&c.path, c.owner.clone())));
    for (p, owner) in paths {
        let f = File::open(p).map_err(|e| Error::io(p.display().to_string(), e))?;
        size += f.metadata().map_or(0, |m| m.len());
        parts.push(Part {
            reader: Box::new(f),
            owner,
        });
    }
    Ok((parts, size))
}

/// For commands that read stream-json files by path (`report`): when any of `files` is a session
/// transcript, a session id or a directory of sessions, the inputs mapped to stream-json (the same
/// lines `normalize` reads) in a temporary file, to read instead; `None` when none is (or when
/// stdin is among them: it is read once, by the command itself).
pub fn as_stream_json_file(files: &[PathBuf]) -> Result<Option<tempfile::NamedTempFile>, Error> {
    if files.is_empty() || files.iter().any(|f| f.as_os_str() == "-") {
        return Ok(None);
    }
    let opened = open_inputs(files, InputFormat::Auto, Lines::StreamJson)?;
    if !opened.transcript {
        return Ok(None);
    }
    let mut tmp = tempfile::NamedTempFile::new().map_err(|e| Error::io("temporary file", e))?;
    for mut i in opened.inputs {
        io::copy(&mut i.reader, tmp.as_file_mut()).map_err(|e| Error::io(&i.name, e))?;
    }
    Ok(Some(tmp))
}
