//! `spawn`: run `claude` as a child, safely, and normalize its output live (Linux only).
//!
//! The pieces, in the order a run uses them:
//!
//! - [`command`]: which binary, which flags are added, and whether the prompt goes in argv or
//!   on stdin;
//! - [`env`]: the environment allowlist and credential removal;
//! - [`procs`]: subreaper, `/proc` descendant tracking, signalling and reaping;
//! - [`child`]: starting the child in its own process group, with reader threads;
//! - [`supervise`]: the loop with timeouts, interrupt forwarding, escalation and cleanup;
//! - [`drive`] and [`guard`]: the output side: the [`Pipeline`](crate::pipeline::Pipeline),
//!   `policy.violation` and `child.stderr` events;
//! - [`outcome`]: `run.end` members and the exit status mapping.
//!
//! Linux only: descendants are found through `/proc` and the child subreaper is a Linux
//! `prctl`. The module builds on other Unix systems, but [`supported`] is false there and the
//! command refuses to run.

pub mod child;
pub mod command;
pub mod drive;
pub mod env;
pub mod guard;
pub mod outcome;
pub mod procs;
pub mod supervise;

pub use child::Spec;
pub use outcome::{Cause, Outcome};
pub use supervise::{Driver, Limits, RunError, supervise};

/// Whether this platform supports `spawn`.
pub const fn supported() -> bool {
    cfg!(target_os = "linux")
}

/// Parse a duration: `30s`, `5m`, `1500ms`, `1h 30m` (humantime syntax) or bare seconds (`30`,
/// `0.5`).
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    if let Ok(secs) = t.parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 {
            return Ok(std::time::Duration::from_secs_f64(secs));
        }
        return Err(format!("{s:?}: not a duration"));
    }
    humantime::parse_duration(t).map_err(|e| format!("{s:?}: {e} (e.g. 30s, 5m, 1500ms)"))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn durations() {
        let p = super::parse_duration;
        assert_eq!(p("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(p("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(p("1500ms"), Ok(Duration::from_millis(1500)));
        assert_eq!(p("2"), Ok(Duration::from_secs(2)));
        assert_eq!(p("0.25"), Ok(Duration::from_millis(250)));
        assert!(p("-1").is_err());
        assert!(p("soon").is_err());
    }
}
