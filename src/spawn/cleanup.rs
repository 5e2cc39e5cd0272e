//! The cleanup once a child is gone: every remaining descendant of boo-normalize ([`cleanup`]),
//! or only one child's own processes when several run side by side ([`cleanup_own`]), gets
//! SIGTERM, then SIGKILL after at most `grace`, and is reaped.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::procs;

/// [`cleanup`] for one child of several: its process group `pgid` and the processes in `own`
/// (its descendants seen while it ran, and theirs), no other process.
pub fn cleanup_own(pgid: i32, own: &mut HashSet<i32>, grace: Duration) -> usize {
    let mut signalled = HashSet::new();
    let term_until = Instant::now() + grace;
    let hard_until = term_until + grace.max(Duration::from_secs(1));
    let me = std::process::id() as i32;
    loop {
        let all = procs::scan();
        // Theirs too: forked by one of them since the last look.
        for p in &all {
            if own.contains(&p.ppid) || p.pgrp == pgid {
                own.insert(p.pid);
            }
        }
        let mut live = Vec::new();
        for p in all.iter().filter(|p| p.pid != pgid && own.contains(&p.pid)) {
            if p.state == 'Z' {
                if p.ppid == me {
                    let _ = procs::try_reap(p.pid);
                }
            } else {
                live.push(p.pid);
            }
        }
        let now = Instant::now();
        if live.is_empty() || now >= hard_until {
            break;
        }
        let sig = if now >= term_until {
            Signal::SIGKILL
        } else {
            Signal::SIGTERM
        };
        for pid in live {
            if sig == Signal::SIGKILL || signalled.insert(pid) {
                signalled.insert(pid);
                procs::signal_pid(pid, sig);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    signalled.len()
}

/// Kill and reap every remaining descendant: SIGTERM, then SIGKILL after at most `grace`,
/// repeated until none is left (new ones forked meanwhile included). Returns how many distinct
/// processes were signalled.
pub fn cleanup(grace: Duration) -> usize {
    let mut signalled = HashSet::new();
    let term_until = Instant::now() + grace;
    let hard_until = term_until + grace.max(Duration::from_secs(1));
    let mut hard = false;
    loop {
        procs::reap_orphans(None);
        let d = procs::descendants();
        if d.is_empty() {
            break;
        }
        let now = Instant::now();
        if now >= hard_until {
            break;
        }
        hard |= now >= term_until;
        let sig = if hard {
            Signal::SIGKILL
        } else {
            Signal::SIGTERM
        };
        for p in d.iter().filter(|p| p.state != 'Z') {
            if hard || signalled.insert(p.pid) {
                signalled.insert(p.pid);
                procs::signal_pid(p.pid, sig);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    signalled.len()
}
