//! A sink writing to a named file: its I/O errors carry the file's name, so the CLI can say
//! `boo-normalize: FILE: cause` for an `--audit`/`--sse`/`--envelope` file instead of blaming
//! stdout or the input.

use std::fmt;
use std::io;

use crate::clock::Stamp;
use crate::envelope::{EventMeta, Events};
use crate::error::Error;
use crate::sink::{EventCtx, Sink};

/// `inner`, with its errors wrapped in [`NamedError`].
pub struct Named<'a> {
    name: String,
    inner: Box<dyn Sink + 'a>,
}

impl<'a> Named<'a> {
    /// Wrap `inner`, which writes to the file called `name`.
    pub fn new(name: impl Into<String>, inner: Box<dyn Sink + 'a>) -> Self {
        Named {
            name: name.into(),
            inner,
        }
    }

    fn wrap(&self, err: io::Error) -> io::Error {
        io::Error::other(NamedError {
            name: self.name.clone(),
            err,
        })
    }
}

/// An I/O error of a [`Named`] sink (inside an `io::Error` of kind `Other`).
#[derive(Debug)]
pub struct NamedError {
    /// The file.
    pub name: String,
    /// What went wrong.
    pub err: io::Error,
}

impl fmt::Display for NamedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.err)
    }
}

impl std::error::Error for NamedError {}

/// The CLI error for an output error `e`: a [`Named`] sink's error names its file; anything
/// else is `Error::io(otherwise, e)`.
pub fn output_error(e: io::Error, otherwise: &str) -> Error {
    if e.get_ref().is_some_and(|r| r.is::<NamedError>()) {
        let inner = e.into_inner().expect("checked above");
        let n = inner.downcast::<NamedError>().expect("checked above");
        return Error::io(n.name, n.err);
    }
    Error::io(otherwise, e)
}

/// The CLI error for a pipeline I/O error: a closed stdout is `stdout` (a quiet exit), a
/// [`Named`] sink's error names its file, anything else happened reading `input`.
pub fn io_error(e: io::Error, input: &str) -> Error {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Error::io("stdout", e)
    } else {
        output_error(e, input)
    }
}

impl Sink for Named<'_> {
    fn event(&mut self, events: &Events, meta: &EventMeta, ctx: &EventCtx<'_>) -> io::Result<()> {
        self.inner
            .event(events, meta, ctx)
            .map_err(|e| self.wrap(e))
    }

    fn keeps_history(&self) -> bool {
        self.inner.keeps_history()
    }

    fn wants_fields(&self, meta: &EventMeta) -> bool {
        self.inner.wants_fields(meta)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().map_err(|e| self.wrap(e))
    }

    fn wants_time(&self) -> bool {
        self.inner.wants_time()
    }

    fn idle(&mut self) -> io::Result<()> {
        self.inner.idle().map_err(|e| self.wrap(e))
    }

    fn end_members(&mut self, cause: &str, at: Stamp) -> io::Result<Vec<(String, String)>> {
        self.inner.end_members(cause, at).map_err(|e| self.wrap(e))
    }

    fn finish(&mut self) -> io::Result<()> {
        self.inner.finish().map_err(|e| self.wrap(e))
    }
}
