//! Subcommand dispatch: each subcommand file only wires the library together.

mod audit;
mod diff;
mod generate;
mod normalize;
mod profile;
mod record;
mod redact;
mod replay;
#[cfg(unix)]
mod spawn;

use boo_normalize::error::{EXIT_NO_RESULT, EXIT_OK, EXIT_STRICT, Error};

use crate::cli::{Cli, Command};

/// `--strict`: true (after a summary on stderr) when the run had unusable lines or unknown events.
pub fn strict_failed(s: &boo_normalize::normalize::Stats) -> bool {
    if s.diagnostics == 0 && s.unknown == 0 {
        return false;
    }
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "boo-normalize: strict: {} of {} lines unusable, {} unknown events",
        s.diagnostics,
        s.lines,
        s.unknown
    );
    true
}

/// The exit status of a run whose own status is `code`: that status when it is not 0 (the child's
/// failure, a stop, a signal say more); else 3 when the stream had no `result` (and
/// `--allow-no-result` was not given), else 1 for `--strict` findings, else 0.
pub fn run_status(code: u8, n: &boo_normalize::normalize::Normalizer, strict: bool) -> u8 {
    let strict = strict && strict_failed(n.stats());
    if code != EXIT_OK {
        return code;
    }
    if n.no_result() {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "boo-normalize: no result: the stream ended without a `result` line (run.error written; --allow-no-result accepts this)"
        );
        return EXIT_NO_RESULT;
    }
    if strict { EXIT_STRICT } else { EXIT_OK }
}

/// Run the chosen subcommand and return its exit status.
pub fn run(cli: Cli) -> Result<u8, Error> {
    match cli.command {
        None => normalize::run(cli.normalize),
        Some(Command::Normalize(a)) => normalize::run(a),
        Some(Command::Audit(a)) => audit::run(a),
        Some(Command::Replay(a)) => replay::run(a),
        #[cfg(unix)]
        Some(Command::Spawn(a)) => spawn::run(*a),
        #[cfg(not(unix))]
        Some(Command::Spawn(_)) => Err(Error::msg("spawn", "only supported on Linux")),
        Some(Command::Completions { shell }) => generate::completions(shell),
        Some(Command::GenerateMan { dir }) => generate::man(&dir),
        Some(Command::Redact(a)) => redact::run(a),
        Some(Command::Schema(a)) => {
            let doc = boo_normalize::schema::schema(a.strict);
            let text = serde_json::to_string_pretty(&doc).expect("schema serializes");
            let mut out = std::io::stdout().lock();
            use std::io::Write;
            writeln!(out, "{text}").map_err(|e| Error::io("stdout", e))?;
            Ok(EXIT_OK)
        }
        Some(Command::Profile(a)) => profile::run(a),
        Some(Command::Diff(a)) => diff::run(a),
    }
}
