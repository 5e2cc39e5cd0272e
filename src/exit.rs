//! Every exit status the binary can return, in one type: the named codes, the child's own status
//! and `128 + N` for signals, with the table the man page and the README are checked against.

use std::fmt;

/// An exit status of `boo-normalize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Exit(u8);

impl Exit {
    /// Success (also when the reader closed stdout early, `| head -1`).
    pub const OK: Exit = Exit(0);
    /// Findings: `--strict` saw unusable lines or unknown types, `diff` found drift at or above
    /// `--fail-on`, `audit verify` found a bad record (or, with `--require-complete`, a run
    /// without `run.end`).
    pub const FINDINGS: Exit = Exit(1);
    /// Usage error, unreadable input, input without a single stream-json line (envelope output,
    /// an audit log, a capture, text: stderr says what it is, see [`crate::sniff`]), or an I/O
    /// error on stdout.
    pub const ERROR: Exit = Exit(2);
    /// The stream ended without a `result` line after its last `system/init` (`run.error`
    /// precedes `run.end`; `--allow-no-result` turns this off); `replay --follow` when the
    /// followed file's writer vanished before `run.end`.
    pub const NO_RESULT: Exit = Exit(3);
    /// `probe`: a scenario failed (the CLI crashed, hung, printed non-JSON or answered
    /// unexpectedly).
    pub const PROBE_FAILED: Exit = Exit(4);
    /// A file sink (`--audit`, `--record`, `--envelope`, `--sse`, `--otlp`) failed mid-run
    /// (`EX_IOERR`); the other sinks got `run.end` with cause `sink_failed`.
    pub const SINK_FAILED: Exit = Exit(74);
    /// `spawn`: `--timeout`, `--idle-timeout` or `--tool-timeout` stopped the child.
    pub const TIMEOUT: Exit = Exit(124);
    /// `spawn`: a guard stopped the child (`--enforce`).
    pub const POLICY: Exit = Exit(125);
    /// `spawn`: the claude binary is not executable.
    pub const CANNOT_EXECUTE: Exit = Exit(126);
    /// `spawn`: the claude binary was not found.
    pub const NOT_FOUND: Exit = Exit(127);

    /// Every status, as the documentation lists it: the code (or range) and when it happens.
    pub const TABLE: &'static [(&'static str, &'static str)] = &[
        (
            "0",
            "success, also when the reader closed stdout early (as `head -1` does)",
        ),
        (
            "1",
            "findings: `--strict` saw unusable lines or unknown types; `diff` found drift; `audit verify` found a bad record (or an incomplete run with `--require-complete`); `spawn`: the child was stopped after closing stdout and its last result was not a success",
        ),
        (
            "2",
            "usage error, unreadable input, input without a single stream-json line (stderr says what it is instead: envelope output, an audit log, a capture, text; see docs/input-detection.md), or an I/O error on stdout",
        ),
        (
            "3",
            "the stream ended without a `result` line (`run.error` written; `--allow-no-result` makes it 0), also for empty input (a closed stdin: stderr says so); `replay --follow`: the writer vanished",
        ),
        (
            "4",
            "`probe`: a scenario failed (the CLI crashed, hung, printed non-JSON or answered unexpectedly); the error and `summary.json` name it",
        ),
        (
            "74",
            "a file sink (`--audit`, `--record`, `--envelope`, `--sse`, `--otlp`) failed mid-run; the other sinks got `run.end` with cause `sink_failed`",
        ),
        (
            "124",
            "`spawn`: `--timeout`, `--idle-timeout` or `--tool-timeout` stopped the child",
        ),
        ("125", "`spawn`: a guard stopped the child (`--enforce`)"),
        (
            "126",
            "`spawn`, `probe`: the claude binary (`--agent`: that CLI's) is not executable",
        ),
        (
            "127",
            "`spawn`, `probe`: the claude binary (`--agent`: that CLI's) was not found",
        ),
        (
            "128+N",
            "`normalize`, `spawn`: boo-normalize got signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP; `run.end` is still written, cause `interrupted`); `spawn`: the child died by signal N; `replay --as-claude`: the recorded signal",
        ),
        (
            "other",
            "`spawn`: the child's own exit code; `replay --as-claude`: the recorded one",
        ),
    ];

    /// A child's own exit status, passed on (`spawn`, `replay --as-claude`).
    pub const fn child(code: u8) -> Exit {
        Exit(code)
    }

    /// `128 + n`: death by (or receipt of) signal `n`.
    pub const fn signal(n: i32) -> Exit {
        Exit(128u8.wrapping_add(n as u8))
    }

    /// The number.
    pub const fn code(self) -> u8 {
        self.0
    }

    /// Whether this is [`Exit::OK`].
    pub const fn is_ok(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(c: Exit) -> Self {
        std::process::ExitCode::from(c.0)
    }
}

#[cfg(test)]
mod tests {
    use super::Exit;

    /// Every named code is in the table, in order.
    #[test]
    fn the_table_lists_every_named_code() {
        let named = [
            Exit::OK,
            Exit::FINDINGS,
            Exit::ERROR,
            Exit::NO_RESULT,
            Exit::PROBE_FAILED,
            Exit::SINK_FAILED,
            Exit::TIMEOUT,
            Exit::POLICY,
            Exit::CANNOT_EXECUTE,
            Exit::NOT_FOUND,
        ];
        let listed: Vec<&str> = Exit::TABLE.iter().map(|r| r.0).collect();
        for (c, l) in named.iter().zip(&listed) {
            assert_eq!(c.code().to_string(), *l);
        }
        assert_eq!(Exit::signal(15).code(), 143);
    }
}
