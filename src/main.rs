//! The `boo-normalize` binary: parse arguments, dispatch to a subcommand, map the outcome to an
//! exit status. All the work happens in the library and in `cmd/`.

mod cli;
mod cmd;
mod output;
mod replay_cli;

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::parse();
    match cmd::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            if e.is_broken_pipe() {
                return ExitCode::from(e.exit_code());
            }
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "boo-normalize: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
