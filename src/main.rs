//! The `boo-normalize` binary: parse arguments, dispatch to a subcommand, map the outcome to an
//! exit status. All the work happens in the library and in `cmd/`.

mod cli;
mod cmd;

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
            if stderr_writable() {
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "boo-normalize: {e}");
            }
            ExitCode::from(e.exit_code())
        }
    }
}

/// Whether stderr takes a short message within a quarter second: a reader that stopped reading stderr
/// must not keep boo-normalize from exiting (a message shorter than `PIPE_BUF` then fits).
#[cfg(unix)]
fn stderr_writable() -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let err = std::io::stderr();
    let mut fds = [PollFd::new(err.as_fd(), PollFlags::POLLOUT)];
    !matches!(poll(&mut fds, PollTimeout::from(250u16)), Ok(0))
}

#[cfg(not(unix))]
fn stderr_writable() -> bool {
    true
}
