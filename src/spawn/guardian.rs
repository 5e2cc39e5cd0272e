//! Surviving `kill -9` of boo-normalize itself: a guardian process and a worker, so that no
//! process of the run outlives the process the caller started.
//!
//! `spawn` forks once, before any thread exists. The process the caller started (its pid is the
//! one Go's `exec.CommandContext`, Python's `Popen.kill()` or the OOM killer SIGKILLs) becomes the
//! **guardian**: a child subreaper that forwards SIGINT, SIGTERM and SIGHUP to the worker, waits
//! for it and exits with its status. The **worker** (its child, in a process group of its own so
//! a signal to the caller's group is forwarded exactly once) runs the supervisor, which starts
//! `claude` as usual. The two watch each other:
//!
//! - **The guardian dies** (any signal, SIGKILL included): the worker holds the read end of a
//!   pipe whose only write end the guardian holds; the kernel closes it with the guardian, the
//!   worker's watcher thread reads EOF and SIGKILLs every process of the run at once (the child,
//!   its group, and every descendant that left the group: as a subreaper the worker inherits
//!   them, so they are all its descendants in `/proc`). The supervisor then sees the child die
//!   and ends the run as usual: `run.end` (cause `killed`, reason `supervisor_killed`) goes to
//!   every sink still writable, the audit log included.
//! - **The worker dies**: `claude` has `PR_SET_PDEATHSIG` = SIGKILL and dies with it; orphans are
//!   re-parented to the guardian (a subreaper), which SIGKILLs and reaps every descendant, then
//!   exits 128 + the worker's signal.
//!
//! Limits: killing **both** processes at the same instant (e.g. `kill -9` of both pids, or of a
//! process group that holds both, which the worker's own group prevents for a group signal to the
//! guardian) leaves the descendants that left claude's process group to init: `claude` itself still
//! dies (PDEATHSIG), its group does not get a signal. Only a cgroup can contain that case
//! (`systemd-run --user --scope boo-normalize spawn …`, then `systemctl --user kill`); cgroup v2
//! `cgroup.kill` is not used because an unprivileged user rarely has a delegated cgroup to put the
//! run in. Job control: Ctrl-Z stops the guardian only (the worker is not in the terminal's
//! foreground group); the run goes on. A process that escapes `/proc` ancestry (e.g. started through a daemon such as `at` or
//! `systemd-run`) is not the run's and is never touched.

#![allow(unsafe_code)]

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::Signal;
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, fork, setpgid};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use super::procs;

static GUARDIAN_GONE: AtomicBool = AtomicBool::new(false);

/// True in the worker once its guardian died (the run was killed from outside).
pub fn guardian_gone() -> bool {
    GUARDIAN_GONE.load(Ordering::SeqCst)
}

/// How long a side keeps killing descendants that are still appearing.
const KILL_FOR: Duration = Duration::from_secs(1);

/// Split into guardian and worker (see the module docs). Returns only in the worker; the
/// guardian exits with the worker's status. Call it while the process has a single thread.
pub fn split() -> io::Result<()> {
    procs::become_subreaper().map_err(io::Error::from)?;
    // Close-on-exec (std's pipes are), so no other process holds an end.
    let (r, w) = io::pipe()?;
    // SAFETY: the process is single-threaded here (the caller's contract), so the child may run
    // arbitrary code after the fork.
    match unsafe { fork() }.map_err(io::Error::from)? {
        ForkResult::Child => {
            drop(w);
            let _ = setpgid(Pid::from_raw(0), Pid::from_raw(0));
            // Out of the terminal's foreground group, writing to the terminal under `stty
            // tostop` would stop the worker; ignoring SIGTTOU lets the write through (the child
            // gets the default back before exec).
            // SAFETY: setting a disposition to SIG_IGN installs no handler.
            let _ = unsafe {
                nix::sys::signal::signal(Signal::SIGTTOU, nix::sys::signal::SigHandler::SigIgn)
            };
            thread::Builder::new()
                .name("guardian-watch".into())
                .spawn(move || watch(r))?;
            Ok(())
        }
        ForkResult::Parent { child } => {
            drop(r);
            let code = guard(child);
            drop(w);
            std::process::exit(code)
        }
    }
}

/// Worker side: wait for the guardian's end of the pipe to close, then kill the whole run.
fn watch(mut f: io::PipeReader) {
    let mut b = [0u8; 16];
    loop {
        match f.read(&mut b) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    GUARDIAN_GONE.store(true, Ordering::SeqCst);
    kill_descendants(false);
}

/// SIGKILL every descendant until none is left (or [`KILL_FOR`] passed); `reap`: also reap them
/// (the guardian; the worker's supervisor reaps its own).
fn kill_descendants(reap: bool) {
    let until = Instant::now() + KILL_FOR;
    loop {
        if reap {
            procs::reap_orphans(None);
        }
        let live: Vec<_> = procs::descendants()
            .into_iter()
            .filter(|p| p.state != 'Z')
            .collect();
        if live.is_empty() || Instant::now() >= until {
            return;
        }
        for p in live {
            procs::signal_pid(p.pid, Signal::SIGKILL);
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Guardian side: forward interrupts, wait for the worker, return the exit status.
fn guard(worker: Pid) -> i32 {
    if let Ok(mut sigs) = Signals::new([SIGINT, SIGTERM, SIGHUP]) {
        let _ = thread::Builder::new()
            .name("forward".into())
            .spawn(move || {
                for s in sigs.forever() {
                    if let Ok(sig) = Signal::try_from(s) {
                        let _ = nix::sys::signal::kill(worker, sig);
                    }
                }
            });
    }
    loop {
        match waitpid(worker, None) {
            Ok(WaitStatus::Exited(_, code)) => return code,
            Ok(WaitStatus::Signaled(_, sig, _)) => {
                // The worker was killed: its orphans came to us.
                kill_descendants(true);
                procs::reap_orphans(None);
                return 128 + sig as i32;
            }
            Ok(_) | Err(Errno::EINTR) => {}
            Err(_) => return 1,
        }
    }
}
