//! The error type: a context (what was being done, e.g. a file name), where in it (line, byte)
//! when known, and a cause, displayed as `context[:line[:byte]]: cause`; its [`ErrorKind`]; and
//! the exit status it maps to ([`Exit`]).

use std::fmt;
use std::io;

use crate::exit::Exit;

/// A fatal error.
#[derive(Debug)]
pub struct Error {
    context: String,
    cause: Cause,
    /// Exit status other than [`Exit::ERROR`] (e.g. 127 for a missing program).
    code: Option<Exit>,
    /// Where in `context` (a file) it went wrong.
    at: Option<Position>,
}

#[derive(Debug)]
enum Cause {
    Io(io::Error),
    Msg(String),
}

/// A place in a file: 1-based line, and the 1-based byte (column) in it when known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// 1-based line.
    pub line: u64,
    /// 1-based byte in the line.
    pub byte: Option<u64>,
}

/// What kind of failure an [`Error`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// An operating-system I/O error (a missing file, a full disk, …).
    Io,
    /// The reader of stdout went away (`| head -1`): a normal way to stop, exit 0.
    ClosedOutput,
    /// A file sink failed mid-run (exit 74).
    Sink,
    /// `spawn` could not start the child (exit 126 or 127).
    Spawn,
    /// A usage error or invalid input (a bad option value, a malformed file).
    Invalid,
}

impl Error {
    /// An I/O error while doing `context`.
    pub fn io(context: impl Into<String>, e: io::Error) -> Self {
        Error {
            context: context.into(),
            cause: Cause::Io(e),
            code: None,
            at: None,
        }
    }

    /// Any other error.
    pub fn msg(context: impl Into<String>, msg: impl Into<String>) -> Self {
        Error {
            context: context.into(),
            cause: Cause::Msg(msg.into()),
            code: None,
            at: None,
        }
    }

    /// The same error, located at `line` (and `byte`) of its context.
    pub fn at(mut self, line: u64, byte: Option<u64>) -> Self {
        self.at = Some(Position { line, byte });
        self
    }

    /// Where in its context it went wrong, when known.
    pub fn position(&self) -> Option<Position> {
        self.at
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match (&self.cause, self.code) {
            (Cause::Io(e), _) if e.kind() == io::ErrorKind::BrokenPipe => ErrorKind::ClosedOutput,
            (_, Some(Exit::SINK_FAILED)) => ErrorKind::Sink,
            (_, Some(Exit::NOT_FOUND | Exit::CANNOT_EXECUTE)) => ErrorKind::Spawn,
            (Cause::Io(_), _) => ErrorKind::Io,
            (Cause::Msg(_), _) => ErrorKind::Invalid,
        }
    }

    /// The same error with exit status `code` instead of [`Exit::ERROR`].
    pub fn with_exit(mut self, code: Exit) -> Self {
        self.code = Some(code);
        self
    }

    /// Writing the sink `name` (a file, or `stdout`) failed with `e`: exit
    /// [`Exit::SINK_FAILED`] for a file, [`Exit::ERROR`] for stdout (a closed stdout is
    /// quiet).
    pub fn sink(name: impl Into<String>, e: io::Error) -> Self {
        let name = name.into();
        let code = if name == "stdout" {
            Exit::ERROR
        } else {
            Exit::SINK_FAILED
        };
        Error::io(name, e).with_exit(code)
    }

    /// True for a closed pipe on output (`| head -1`): a normal way to finish.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(&self.cause, Cause::Io(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }

    /// The exit status for this error.
    pub fn exit_code(&self) -> Exit {
        if self.is_broken_pipe() {
            Exit::OK
        } else {
            self.code.unwrap_or(Exit::ERROR)
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cause = match &self.cause {
            Cause::Io(e) => e.to_string(),
            Cause::Msg(m) => m.clone(),
        };
        write!(f, "{}", sanitize(&self.context))?;
        if let Some(p) = self.at {
            write!(f, ":{}", p.line)?;
            if let Some(b) = p.byte {
                write!(f, ":{b}")?;
            }
        }
        write!(f, ": {}", sanitize(&cause))
    }
}

impl std::error::Error for Error {}

/// `n` and `noun`, plural unless `n` is 1 (`1 line`, `2 lines`, `0 unknown events`): every
/// count in a message reads right.
pub fn counted(n: u64, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        _ => format!("{n} {noun}s"),
    }
}

/// Replace control characters (terminal escapes from untrusted input) with `?`.
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn position_kind_and_status() {
        let e = Error::msg("log\u{1b}.jsonl", "hash mismatch")
            .at(7, None)
            .with_exit(Exit::FINDINGS);
        assert_eq!(e.to_string(), "log?.jsonl:7: hash mismatch");
        assert_eq!(e.kind(), ErrorKind::Invalid);
        assert_eq!(e.exit_code(), Exit::FINDINGS);
        let e = Error::msg("rules.json", "expected `,`").at(3, Some(14));
        assert_eq!(e.to_string(), "rules.json:3:14: expected `,`");
        let pipe = Error::io("stdout", io::Error::from(io::ErrorKind::BrokenPipe));
        assert_eq!(pipe.kind(), ErrorKind::ClosedOutput);
        assert_eq!(pipe.exit_code(), Exit::OK);
        let sink = Error::sink("a.jsonl", io::Error::other("disk full"));
        assert_eq!(sink.kind(), ErrorKind::Sink);
        assert_eq!(sink.exit_code(), Exit::SINK_FAILED);
        let missing = Error::msg("spawn", "not found").with_exit(Exit::NOT_FOUND);
        assert_eq!(missing.kind(), ErrorKind::Spawn);
    }
}
