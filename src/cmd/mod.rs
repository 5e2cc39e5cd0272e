//! Subcommand dispatch: each subcommand file only wires the library together.

#[cfg(unix)]
mod acp;
mod audit;
mod diff;
mod generate;
mod normalize;
#[cfg(unix)]
mod probe;
mod profile;
mod redact;
mod replay;
mod report;
mod sessions;
#[cfg(unix)]
mod spawn;

use boo_normalize::error::Error;
use boo_normalize::exit::Exit;

use crate::cli::{Cli, Command};

/// Run the chosen subcommand and return its exit status.
pub fn run(cli: Cli) -> Result<Exit, Error> {
    match cli.command {
        None => normalize::run(cli.normalize),
        Some(Command::Normalize(a)) => normalize::run(a),
        Some(Command::Audit(a)) => audit::run(a),
        Some(Command::Replay(a)) => replay::run(a),
        #[cfg(unix)]
        Some(Command::Spawn(a)) => spawn::run(*a),
        #[cfg(not(unix))]
        Some(Command::Spawn(_)) => Err(Error::msg("spawn", "only supported on Linux")),
        #[cfg(unix)]
        Some(Command::Acp(a)) => acp::run(*a),
        #[cfg(not(unix))]
        Some(Command::Acp(_)) => Err(Error::msg("acp", "only supported on Linux")),
        Some(Command::Completions { shell }) => generate::completions(shell),
        Some(Command::GenerateMan { dir }) => generate::man(&dir),
        Some(Command::Redact(a)) => redact::run(a),
        Some(Command::Report(a)) => report::run(a),
        Some(Command::Schema(a)) => {
            let doc = boo_normalize::schema::schema(a.strict);
            let text = serde_json::to_string_pretty(&doc).expect("schema serializes");
            let mut out = std::io::stdout().lock();
            use std::io::Write;
            writeln!(out, "{text}").map_err(|e| Error::io("stdout", e))?;
            Ok(Exit::OK)
        }
        Some(Command::Profile(a)) => profile::run(a),
        Some(Command::Diff(a)) => diff::run(a),
        #[cfg(unix)]
        Some(Command::Probe(a)) => probe::run(*a),
        #[cfg(not(unix))]
        Some(Command::Probe(_)) => Err(Error::msg("probe", "only supported on Linux")),
        Some(Command::Sessions(a)) => sessions::run(a),
    }
}
