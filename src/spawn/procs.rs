//! Process bookkeeping on Linux: becoming a child subreaper, finding every descendant through
//! `/proc`, signalling process groups, and reaping.
//!
//! A background process that the agent started with `nohup … &` or `setsid` leaves the child's
//! process group and, once its parent exits, would be re-parented to init and outlive the run.
//! As a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`) boo-normalize receives those orphans
//! instead, so "the processes this run started" is exactly the set of processes whose parent
//! chain leads to boo-normalize: that set is what [`descendants`] returns and what the cleanup
//! kills and reaps. Reaping is targeted (`waitpid(pid)` on known pids), never `waitpid(-1)`, so a
//! library user's other children are left alone.
//!
//! Limitation: a pid can in principle be reused between the `/proc` scan and the `kill`; the
//! window is a few microseconds and the scan is repeated, but it is not closed (no pidfds here).

use std::collections::{HashMap, HashSet};
use std::fs;

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

/// Make this process a child subreaper: orphaned descendants are re-parented to it.
#[cfg(target_os = "linux")]
pub fn become_subreaper() -> nix::Result<()> {
    nix::sys::prctl::set_child_subreaper(true)
}

/// Not available outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn become_subreaper() -> nix::Result<()> {
    Err(Errno::ENOSYS)
}

/// One process as `/proc/PID/stat` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcInfo {
    /// Process id.
    pub pid: i32,
    /// Parent process id.
    pub ppid: i32,
    /// Process group id.
    pub pgrp: i32,
    /// State letter (`R`, `S`, `Z`, …).
    pub state: char,
}

/// Parse the interesting fields of a `/proc/PID/stat` line (`comm` may contain anything, so
/// the fields are read after its last `)`).
pub fn parse_stat(s: &str) -> Option<ProcInfo> {
    let pid = s.split_once(' ')?.0.parse().ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    let mut f = rest.split_ascii_whitespace();
    let state = f.next()?.chars().next()?;
    let ppid = f.next()?.parse().ok()?;
    let pgrp = f.next()?.parse().ok()?;
    Some(ProcInfo {
        pid,
        ppid,
        pgrp,
        state,
    })
}

/// Every process currently visible in `/proc` (processes that vanish mid-scan are skipped).
pub fn scan() -> Vec<ProcInfo> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Some(p) = read_stat(name) {
            out.push(p);
        }
    }
    out
}

/// `/proc/PID/stat` in one `read` (the kernel makes the line at once; it is far shorter than
/// the buffer): a scan reads one file per process, and `read_to_string` took a `statx` and
/// five growing reads for each.
fn read_stat(pid: &str) -> Option<ProcInfo> {
    use std::io::Read;
    let mut f = fs::File::open(format!("/proc/{pid}/stat")).ok()?;
    let mut buf = [0u8; 1024];
    let n = f.read(&mut buf).ok()?;
    parse_stat(std::str::from_utf8(&buf[..n]).ok()?)
}

/// The processes of `all` whose parent chain leads to `root` (not `root` itself).
///
/// Members of the child's process group are not looked up by group id: they are descendants
/// anyway (orphans come to the subreaper), and a group id can be reused once the group is gone.
pub fn descendants_in(all: &[ProcInfo], root: i32) -> Vec<ProcInfo> {
    let mut kids: HashMap<i32, Vec<usize>> = HashMap::new();
    for (i, p) in all.iter().enumerate() {
        kids.entry(p.ppid).or_default().push(i);
    }
    let mut seen: HashSet<i32> = HashSet::new();
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        for &i in kids.get(&pid).map(Vec::as_slice).unwrap_or(&[]) {
            let p = all[i];
            if p.pid != root && seen.insert(p.pid) {
                out.push(p);
                stack.push(p.pid);
            }
        }
    }
    out
}

/// This process's descendants (see [`descendants_in`]).
pub fn descendants() -> Vec<ProcInfo> {
    descendants_in(&scan(), std::process::id() as i32)
}

/// Send `sig` to process group `pgid`. A group that is already gone is not an error.
pub fn signal_group(pgid: i32, sig: Signal) -> bool {
    match killpg(Pid::from_raw(pgid), sig) {
        Ok(()) => true,
        Err(Errno::ESRCH) => false,
        Err(_) => false,
    }
}

/// Send `sig` to one process; false when it is gone.
pub fn signal_pid(pid: i32, sig: Signal) -> bool {
    kill(Pid::from_raw(pid), sig).is_ok()
}

/// How a reaped process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Exited with this code.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
}

/// Reap `pid` if it has ended (non-blocking). `Err(ECHILD)` means it is not our child (any more).
pub fn try_reap(pid: i32) -> nix::Result<Option<Ended>> {
    loop {
        match waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(_, c)) => return Ok(Some(Ended::Code(c))),
            Ok(WaitStatus::Signaled(_, s, _)) => return Ok(Some(Ended::Signal(s as i32))),
            Ok(WaitStatus::StillAlive) => return Ok(None),
            Ok(_) => continue,
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Reap every zombie among our direct children found in `/proc` except `skip` (the main child,
/// whose status the caller wants); returns how many were reaped.
pub fn reap_orphans(skip: Option<i32>) -> usize {
    let me = std::process::id() as i32;
    let mut n = 0;
    for p in scan() {
        if p.ppid == me
            && p.state == 'Z'
            && Some(p.pid) != skip
            && matches!(try_reap(p.pid), Ok(Some(_)))
        {
            n += 1;
        }
    }
    n
}

pub use crate::interrupt::signal_name;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names() {
        let p = parse_stat("123 (a b) c)) S 45 67 67 0 -1 4194560 0 0").unwrap();
        assert_eq!(
            p,
            ProcInfo {
                pid: 123,
                ppid: 45,
                pgrp: 67,
                state: 'S'
            }
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn tree_walk_finds_orphans_and_group() {
        let p = |pid, ppid, pgrp| ProcInfo {
            pid,
            ppid,
            pgrp,
            state: 'S',
        };
        let all = [
            p(1, 0, 1),
            p(10, 1, 10),  // us
            p(11, 10, 11), // child, own group
            p(12, 11, 11), // grandchild
            p(13, 10, 13), // orphan re-parented to us, own session
            p(14, 13, 13), // its child
            p(30, 1, 30),  // unrelated
        ];
        let mut d: Vec<i32> = descendants_in(&all, 10).iter().map(|x| x.pid).collect();
        d.sort();
        assert_eq!(d, [11, 12, 13, 14]);
    }

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(9), "SIGKILL");
        assert_eq!(signal_name(2), "SIGINT");
        assert_eq!(signal_name(999), "SIG999");
    }
}
