//! Subcommand dispatch: each subcommand file only wires the library together.

mod normalize;
mod redact;

use boo_normalize::error::{EXIT_OK, Error};

use crate::cli::{Cli, Command};

/// Run the chosen subcommand and return its exit status.
pub fn run(cli: Cli) -> Result<u8, Error> {
    match cli.command {
        None => normalize::run(cli.normalize),
        Some(Command::Normalize(a)) => normalize::run(a),
        Some(Command::Redact(a)) => redact::run(a),
        Some(Command::Schema(a)) => {
            let doc = boo_normalize::schema::schema(a.strict);
            let text = serde_json::to_string_pretty(&doc).expect("schema serializes");
            let mut out = std::io::stdout().lock();
            use std::io::Write;
            writeln!(out, "{text}").map_err(|e| Error::io("stdout", e))?;
            Ok(EXIT_OK)
        }
    }
}
