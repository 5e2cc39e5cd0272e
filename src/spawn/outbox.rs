//! Output that never blocks the supervisor: what goes to stdout or stderr is queued and written
//! by a thread of its own, so a reader that stops reading (but keeps the pipe open) cannot stop
//! `--timeout`, `--idle-timeout`, guards or signals from acting on time.
//!
//! - **stdout** ([`Full::Hold`]): the queue takes every write; the supervisor asks
//!   [`Outbox::ready`] before it takes more of the child's stdout, so while the queue holds
//!   [`HOLD_AT`] bytes or more the child's lines wait in the pipe and the child blocks writing
//!   them (backpressure, as before), while timers and signals keep working. Memory stays bounded
//!   by [`HOLD_AT`] plus the stdout batches in flight (see `child`) and their events.
//! - **stderr** ([`Full::Drop`]): a write that does not fit in [`DROP_AT`] bytes is dropped and
//!   counted ([`Outbox::dropped`]); one write is one line.
//!
//! A stdout that is a pipe or a socket can be watched ([`Outbox::watch_reader`]): when its reader
//! goes away (`| head -1` exits) the queue fails with `EPIPE` at once, without waiting for the
//! next write, so a child that has gone quiet is stopped then and not when it next writes.
//!
//! At the end, [`Outbox::finish`] waits while the reader makes progress and gives up after a
//! stall: what was not delivered then is lost (the reader was not reading), and the process can
//! exit (the writer thread, stuck in `write`, ends with it).

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

/// Queued stdout bytes from which the supervisor stops taking the child's output.
pub const HOLD_AT: usize = 4 << 20;

/// Queued stderr bytes beyond which lines are dropped.
pub const DROP_AT: usize = 1 << 20;

/// What happens when the queue is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    /// Keep everything; the producer checks [`Outbox::ready`].
    Hold,
    /// Drop the write and count it.
    Drop,
}

#[derive(Default)]
struct State {
    chunks: VecDeque<Vec<u8>>,
    queued: usize,
    /// Bytes the writer has handed to the kernel.
    written: u64,
    /// The writer thread is in a `write`.
    busy: bool,
    failed: Option<(io::ErrorKind, Option<i32>, String)>,
    dropped: u64,
}

struct Shared {
    state: Mutex<State>,
    cv: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A queue in front of a file descriptor, drained by a writer thread.
#[derive(Clone)]
pub struct Outbox {
    shared: Arc<Shared>,
    full: Full,
    /// The same file, to ask whether a write would block (see [`Outbox::finish`]).
    probe: Option<Arc<File>>,
}

impl Outbox {
    /// Start the writer thread for `dest` (a duplicate of fd 1 or 2).
    pub fn start(dest: File, full: Full, name: &str) -> io::Result<Outbox> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
        });
        let s = shared.clone();
        let probe = dest.try_clone().ok().map(Arc::new);
        thread::Builder::new()
            .name(format!("{name}-writer"))
            .spawn(move || drain(&s, dest))?;
        Ok(Outbox {
            shared,
            full,
            probe,
        })
    }

    /// Bytes waiting to be written.
    pub fn backlog(&self) -> usize {
        self.shared.lock().queued
    }

    /// Whether the producer may go on ([`Full::Hold`]: less than [`HOLD_AT`] queued).
    pub fn ready(&self) -> bool {
        self.backlog() < HOLD_AT
    }

    /// Writes dropped because the queue was full ([`Full::Drop`]).
    pub fn dropped(&self) -> u64 {
        self.shared.lock().dropped
    }

    /// Whether writing failed (the destination's reader went away, or a write error).
    pub fn failed(&self) -> bool {
        self.shared.lock().failed.is_some()
    }

    /// When the destination is a pipe or a socket: a thread that waits (in `poll`, which
    /// reports `POLLERR` on a pipe's write end once no reader is left and `POLLHUP` on a socket
    /// whose peer closed) and then fails the queue with `EPIPE`, so that [`Outbox::failed`] and
    /// the next write or flush say so without writing first. Reads nothing and writes nothing.
    /// Returns whether a watcher was started.
    pub fn watch_reader(&self) -> bool {
        use std::os::unix::fs::FileTypeExt;
        let Some(f) = &self.probe else { return false };
        let watched = f
            .metadata()
            .is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_socket());
        if !watched {
            return false;
        }
        let (shared, f) = (self.shared.clone(), f.clone());
        thread::Builder::new()
            .name("stdout-watch".into())
            .spawn(move || {
                if reader_gone(&f) {
                    let mut st = shared.lock();
                    if st.failed.is_none() {
                        let e = io::Error::from_raw_os_error(nix::errno::Errno::EPIPE as i32);
                        st.failed = Some((e.kind(), e.raw_os_error(), e.to_string()));
                    }
                    // What is queued cannot be delivered (the chunk being written, if any, is
                    // the writer's to count: its write fails too).
                    let left: usize = st.chunks.drain(..).map(|c| c.len()).sum();
                    st.queued -= left;
                    drop(st);
                    shared.cv.notify_all();
                }
            })
            .is_ok()
    }

    /// Wait until everything is written, the writer failed, or the reader took nothing for
    /// `stall` (the destination would block all that time). Returns the bytes left undelivered
    /// (0 after a failure: the write that failed already said so).
    pub fn finish(&self, stall: Duration) -> usize {
        let mut st = self.shared.lock();
        let mut seen = st.written;
        let mut since = Instant::now();
        loop {
            if st.failed.is_some() {
                return 0;
            }
            if st.queued == 0 && !st.busy {
                return st.queued;
            }
            // Only a destination that would block stalls; a writer thread that has not run yet
            // (a loaded machine) is not the reader's fault.
            if st.written != seen || self.writable() {
                seen = st.written;
                since = Instant::now();
            }
            let left = stall.saturating_sub(since.elapsed());
            if left.is_zero() {
                return st.queued;
            }
            st = self
                .shared
                .cv
                .wait_timeout(st, left.min(Duration::from_millis(50)))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

impl Outbox {
    /// Whether a write to the destination would not block now.
    fn writable(&self) -> bool {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        use std::os::fd::AsFd;
        let Some(f) = &self.probe else { return false };
        let mut fds = [PollFd::new(f.as_fd(), PollFlags::POLLOUT)];
        matches!(poll(&mut fds, PollTimeout::ZERO), Ok(n) if n > 0)
            && fds[0]
                .revents()
                .is_some_and(|r| r.contains(PollFlags::POLLOUT))
    }
}

impl Write for Outbox {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut st = self.shared.lock();
        if let Some((kind, os, msg)) = &st.failed {
            return Err(match os {
                Some(code) => io::Error::from_raw_os_error(*code),
                None => io::Error::new(*kind, msg.clone()),
            });
        }
        if buf.is_empty() {
            return Ok(0);
        }
        if self.full == Full::Drop && st.queued + buf.len() > DROP_AT {
            st.dropped += 1;
            return Ok(buf.len());
        }
        st.queued += buf.len();
        st.chunks.push_back(buf.to_vec());
        drop(st);
        self.shared.cv.notify_all();
        Ok(buf.len())
    }

    /// Nothing to push (the writer thread writes as soon as it can); fails once the queue has
    /// failed, so a flush tells that the reader went away.
    fn flush(&mut self) -> io::Result<()> {
        match &self.shared.lock().failed {
            Some((kind, os, msg)) => Err(match os {
                Some(code) => io::Error::from_raw_os_error(*code),
                None => io::Error::new(*kind, msg.clone()),
            }),
            None => Ok(()),
        }
    }
}

/// Wait until `f`'s reader is gone: `POLLERR` or `POLLHUP` (always reported, so nothing is
/// asked for and nothing else wakes the wait). False if `poll` fails.
fn reader_gone(f: &File) -> bool {
    use nix::errno::Errno;
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    loop {
        let mut fds = [PollFd::new(f.as_fd(), PollFlags::empty())];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {
                let r = fds[0].revents().unwrap_or(PollFlags::empty());
                if r.intersects(PollFlags::POLLERR | PollFlags::POLLHUP) {
                    return true;
                }
                if r.contains(PollFlags::POLLNVAL) {
                    return false;
                }
            }
            Err(Errno::EINTR) => {}
            Err(_) => return false,
        }
    }
}

/// Marks the queue failed if the writer thread panics, so that neither [`Outbox::finish`] nor a
/// producer waiting for [`Outbox::ready`] waits for a thread that is gone.
struct FailOnPanic<'a>(&'a Shared);

impl Drop for FailOnPanic<'_> {
    fn drop(&mut self) {
        if thread::panicking() {
            let mut st = self.0.lock();
            st.busy = false;
            st.failed = Some((
                io::ErrorKind::Other,
                None,
                "the writer thread panicked".to_owned(),
            ));
            st.chunks.clear();
            st.queued = 0;
            self.0.cv.notify_all();
        }
    }
}

fn drain(s: &Shared, mut dest: File) {
    let _guard = FailOnPanic(s);
    let mut st = s.lock();
    loop {
        let Some(chunk) = st.chunks.pop_front() else {
            st = s.cv.wait(st).unwrap_or_else(|p| p.into_inner());
            continue;
        };
        st.busy = true;
        drop(st);
        // In pieces, so a slow reader that still reads counts as progress (see `finish`).
        for piece in chunk.chunks(PIECE) {
            let res = dest.write_all(piece);
            st = s.lock();
            st.queued -= piece.len();
            match res {
                Ok(()) => st.written += piece.len() as u64,
                Err(e) => {
                    st.busy = false;
                    st.failed = Some((e.kind(), e.raw_os_error(), e.to_string()));
                    st.chunks.clear();
                    st.queued = 0;
                    s.cv.notify_all();
                    return;
                }
            }
            drop(st);
            s.cv.notify_all();
        }
        st = s.lock();
        st.busy = false;
        s.cv.notify_all();
    }
}

/// Most bytes per `write` of the writer thread: `PIPE_BUF`, so when `poll` says a pipe is
/// writable the write does not block, and [`Outbox::finish`] can tell a full pipe (the reader's
/// doing) from a writer thread that has not run yet.
const PIECE: usize = 4096;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_arrive_and_full_drop_queues_count() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out");
        let mut o = Outbox::start(File::create(&p).unwrap(), Full::Hold, "t").unwrap();
        o.write_all(b"hello ").unwrap();
        o.write_all(b"world").unwrap();
        assert_eq!(o.finish(Duration::from_secs(5)), 0);
        assert_eq!(std::fs::read(&p).unwrap(), b"hello world");
        assert!(o.ready());
    }

    #[test]
    fn a_stuck_reader_does_not_block_writes_and_finish_gives_up() {
        let (r, w) = io::pipe().unwrap();
        let mut o =
            Outbox::start(File::from(std::os::fd::OwnedFd::from(w)), Full::Drop, "t").unwrap();
        let line = vec![b'x'; 4096];
        let t0 = Instant::now();
        for _ in 0..2000 {
            o.write_all(&line).unwrap();
        }
        assert!(t0.elapsed() < Duration::from_secs(2));
        assert!(o.dropped() > 1000, "{}", o.dropped());
        assert!(o.backlog() <= DROP_AT);
        let t0 = Instant::now();
        assert!(o.finish(Duration::from_millis(200)) > 0);
        assert!(t0.elapsed() < Duration::from_secs(2));
        drop(r);
    }

    /// A reader that took a little and stopped (the pipe is not quite full) is still a stall.
    #[test]
    fn a_reader_that_stops_midway_is_a_stall() {
        use std::io::Read;
        let (mut r, w) = io::pipe().unwrap();
        let mut o =
            Outbox::start(File::from(std::os::fd::OwnedFd::from(w)), Full::Hold, "t").unwrap();
        o.write_all(&vec![b'y'; 300 * 1024]).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let mut got = vec![0u8; 10_000];
        r.read_exact(&mut got).unwrap();
        let t0 = Instant::now();
        assert!(o.finish(Duration::from_millis(200)) > 0);
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    }
}
