//! The error type: a context (what was being done, e.g. a file name) and a cause, displayed as
//! `context: cause`, plus the exit-code mapping.

use std::fmt;
use std::io;

/// Exit status: success.
pub const EXIT_OK: u8 = 0;
/// Exit status: `--strict` found diagnostics or unknown events (the stream was still written).
pub const EXIT_STRICT: u8 = 1;
/// Exit status: usage error, unreadable input, or an I/O error on output.
pub const EXIT_ERROR: u8 = 2;

/// Exit status: the stream ended without a `result` line after its last `system/init` (a
/// `run.error` with cause `no_result` precedes `run.end`); `--allow-no-result` turns this off.
/// `replay --follow` also exits 3 when the file's writer vanished before `run.end`.
pub const EXIT_NO_RESULT: u8 = 3;

/// Exit status: a file sink (`--audit`, `--record`, `--envelope`, `--sse`) failed mid-run
/// (`EX_IOERR`); the other sinks got `run.end` with cause `sink_failed`.
pub const EXIT_SINK_FAILED: u8 = 74;

/// A fatal error.
#[derive(Debug)]
pub struct Error {
    context: String,
    cause: Cause,
    /// Exit status other than [`EXIT_ERROR`] (e.g. 127 for a missing program).
    code: Option<u8>,
}

#[derive(Debug)]
enum Cause {
    Io(io::Error),
    Msg(String),
}

impl Error {
    /// An I/O error while doing `context`.
    pub fn io(context: impl Into<String>, e: io::Error) -> Self {
        Error {
            context: context.into(),
            cause: Cause::Io(e),
            code: None,
        }
    }

    /// Any other error.
    pub fn msg(context: impl Into<String>, msg: impl Into<String>) -> Self {
        Error {
            context: context.into(),
            cause: Cause::Msg(msg.into()),
            code: None,
        }
    }

    /// The same error with exit status `code` instead of [`EXIT_ERROR`].
    pub fn with_exit(mut self, code: u8) -> Self {
        self.code = Some(code);
        self
    }

    /// Writing the sink `name` (a file, or `stdout`) failed with `e`: exit
    /// [`EXIT_SINK_FAILED`] for a file, [`EXIT_ERROR`] for stdout (a closed stdout is quiet).
    pub fn sink(name: impl Into<String>, e: io::Error) -> Self {
        let name = name.into();
        let code = if name == "stdout" {
            EXIT_ERROR
        } else {
            EXIT_SINK_FAILED
        };
        Error::io(name, e).with_exit(code)
    }

    /// True for a closed pipe on output (`| head -1`): a normal way to finish.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(&self.cause, Cause::Io(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }

    /// The exit status for this error.
    pub fn exit_code(&self) -> u8 {
        if self.is_broken_pipe() {
            EXIT_OK
        } else {
            self.code.unwrap_or(EXIT_ERROR)
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cause = match &self.cause {
            Cause::Io(e) => e.to_string(),
            Cause::Msg(m) => m.clone(),
        };
        write!(f, "{}: {}", self.context, sanitize(&cause))
    }
}

impl std::error::Error for Error {}

/// Replace control characters (terminal escapes from untrusted input) with `?`.
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
        .collect()
}
