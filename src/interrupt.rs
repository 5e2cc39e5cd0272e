//! Ending a command that reads its input (`normalize`) cleanly on SIGINT, SIGTERM or SIGHUP:
//! the signal is caught ([`install`]), the read that waits for input is cut short (its input is
//! [`guard`]ed), and the command ends every sink with `run.end` (cause `interrupted`, `reason`
//! the signal's name, as `spawn` says it) and exits `128 + N`.
//!
//! How a waiting read is cut short: the handler notes the signal and writes to a self-pipe; a
//! guarded input that can block (a pipe, a terminal, a socket) waits in `poll` for its data *or*
//! the self-pipe, so the signal is seen whichever thread it was delivered to, also when it came
//! just before the wait. A regular file never blocks: the note is checked before each read.
//! A second SIGINT, SIGTERM or SIGHUP while the command finishes (a reader that stopped reading
//! its stdout) ends it at once, by that signal's default action.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// The signals that end a reading command cleanly.
pub const SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// Whether one of [`SIGNALS`] was caught.
static ANY: AtomicBool = AtomicBool::new(false);

/// The signal caught (0: none).
static CAUGHT: AtomicUsize = AtomicUsize::new(0);

/// The self-pipe's read end, once [`install`]ed.
static WAKE: OnceLock<OwnedFd> = OnceLock::new();

/// Catch [`SIGNALS`] for the rest of the process: the first is noted ([`caught`]) and wakes
/// guarded reads; a second one runs the default action of its kind (the process dies of it).
/// Call once, before the inputs are opened ([`guard`] does nothing until then).
pub fn install() -> io::Result<()> {
    if WAKE.get().is_some() {
        return Ok(());
    }
    let (read, write) = UnixStream::pair()?;
    read.set_nonblocking(true)?;
    for sig in SIGNALS {
        // In order: a second signal dies of its default action; the first is noted.
        signal_hook::flag::register_conditional_default(sig, &ANY)?;
        signal_hook::flag::register(sig, &ANY)?;
        signal_hook::flag::register_usize(sig, &CAUGHT, sig as usize)?;
        // Registered after the note, so a woken read finds it.
        signal_hook::low_level::pipe::register(sig, write.try_clone()?)?;
    }
    let _ = WAKE.set(read.into());
    Ok(())
}

/// The signal caught, if one was.
pub fn caught() -> Option<i32> {
    match CAUGHT.load(Ordering::SeqCst) {
        0 => None,
        n => Some(n as i32),
    }
}

/// The signal that cut a read short, if `e` is that error (see [`guard`]).
pub fn stopped_by(e: &io::Error) -> Option<i32> {
    e.get_ref()
        .and_then(|r| r.downcast_ref::<Stopped>())
        .map(|s| s.0)
}

/// The error of a read cut short by signal `n`.
#[derive(Debug)]
struct Stopped(i32);

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "interrupted by {}", signal_name(self.0))
    }
}

impl std::error::Error for Stopped {}

/// A signal's name as `run.end` gives it (`SIGTERM`; `SIG9`-style for a number nix does not
/// know): for `normalize` and `replay` here, and for `spawn` and `probe`, which read it from here.
pub fn signal_name(n: i32) -> String {
    nix::sys::signal::Signal::try_from(n)
        .map(|s| s.as_str().to_owned())
        .unwrap_or_else(|_| format!("SIG{n}"))
}

/// `reader`, whose bytes come from `fd` (`None`: files that never block), made to stop at a caught signal: its reads fail with
/// an error [`stopped_by`] recognizes. An input that can block is then read straight from
/// (a duplicate of) `fd`, without `reader`'s buffering, so that waiting for `fd` in `poll` never
/// leaves buffered bytes unread. Without [`install`], `reader` as it is.
pub fn guard(reader: Box<dyn Read + Send>, fd: Option<BorrowedFd<'_>>) -> Box<dyn Read + Send> {
    if WAKE.get().is_none() {
        return reader;
    }
    let Some(fd) = fd else {
        // Not a file descriptor (a transcript's files, read through): never blocks for long.
        return Box::new(Guarded {
            inner: reader,
            file: None,
        });
    };
    let Ok(own) = fd.try_clone_to_owned() else {
        return reader;
    };
    let file = File::from(own);
    match file.metadata() {
        Ok(m) if m.is_file() => Box::new(Guarded {
            inner: reader,
            file: None,
        }),
        Ok(_) => Box::new(Guarded {
            inner: reader,
            file: Some(file),
        }),
        Err(_) => reader,
    }
}

/// A reader that fails once a signal was caught. With `file` (an input that can block), it
/// reads that file descriptor, after waiting for its data or the self-pipe; else `inner`.
struct Guarded {
    inner: Box<dyn Read + Send>,
    file: Option<File>,
}

impl Read for Guarded {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if let Some(sig) = caught() {
                return Err(io::Error::other(Stopped(sig)));
            }
            let Some(f) = &mut self.file else {
                return self.inner.read(buf);
            };
            if wait(f.as_fd())? {
                return f.read(buf);
            }
        }
    }
}

/// Wait until `fd` has data (or its end) or the self-pipe was written: true for `fd`.
fn wait(fd: BorrowedFd<'_>) -> io::Result<bool> {
    use nix::errno::Errno;
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let wake = WAKE.get().expect("installed");
    loop {
        let mut fds = [
            PollFd::new(fd, PollFlags::POLLIN),
            PollFd::new(wake.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {
                let woken = fds[1].revents().is_some_and(|r| !r.is_empty());
                if woken {
                    return Ok(false);
                }
                if fds[0].revents().is_some_and(|r| !r.is_empty()) {
                    return Ok(true);
                }
            }
            Err(Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}
