//! Time for sinks that record it (the audit log): a wall-clock instant in µs plus a monotonic
//! offset from the start of the run, behind a small trait so a replay can supply the times a
//! capture recorded and reproduce an audit log byte for byte.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// One reading of a [`Clock`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stamp {
    /// Wall-clock time: microseconds since the Unix epoch (UTC).
    pub unix_us: i64,
    /// Monotonic microseconds since the run started (never goes backwards within a run).
    pub mono_us: u64,
}

impl Stamp {
    /// The wall-clock part as RFC 3339 UTC with exactly six fractional digits,
    /// e.g. `2025-11-22T15:32:00.123456Z`. Instants before 1970 print as the epoch.
    pub fn rfc3339(&self) -> String {
        let us = u64::try_from(self.unix_us).unwrap_or(0);
        let t = UNIX_EPOCH + Duration::from_micros(us);
        humantime::format_rfc3339_micros(t).to_string()
    }
}

/// A source of [`Stamp`]s. The pipeline reads it once per input line (and once for `run.end`);
/// every event of that line carries the same stamp.
pub trait Clock {
    /// The current time.
    fn now(&mut self) -> Stamp;
}

/// The real clock: `SystemTime` for the wall clock, `Instant` for the offset from creation.
#[derive(Debug, Clone)]
pub struct SystemClock {
    start: Instant,
}

impl SystemClock {
    /// A clock whose monotonic offset starts at 0 now.
    pub fn new() -> Self {
        SystemClock {
            start: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn now(&mut self) -> Stamp {
        let unix_us = match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
            Err(e) => -i64::try_from(e.duration().as_micros()).unwrap_or(i64::MAX),
        };
        let mono_us = u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX);
        Stamp { unix_us, mono_us }
    }
}

/// A clock that says whatever it was last told: replays set it from the capture before each
/// line, tests set it to fixed values. Clones share the same reading.
#[derive(Debug, Clone, Default)]
pub struct ManualClock(Arc<Mutex<Stamp>>);

impl ManualClock {
    /// A clock reading `stamp`.
    pub fn new(stamp: Stamp) -> Self {
        ManualClock(Arc::new(Mutex::new(stamp)))
    }

    /// Change the reading (seen by every clone).
    pub fn set(&self, stamp: Stamp) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = stamp;
    }
}

impl Clock for ManualClock {
    fn now(&mut self) -> Stamp {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_has_microseconds() {
        let s = Stamp {
            unix_us: 1_763_825_520_123_456,
            mono_us: 0,
        };
        assert_eq!(s.rfc3339(), "2025-11-22T15:32:00.123456Z");
        let s = Stamp {
            unix_us: 1_763_825_520_000_000,
            mono_us: 0,
        };
        assert_eq!(s.rfc3339(), "2025-11-22T15:32:00.000000Z");
        assert_eq!(
            Stamp {
                unix_us: -5,
                mono_us: 0
            }
            .rfc3339(),
            "1970-01-01T00:00:00.000000Z"
        );
    }

    #[test]
    fn system_clock_is_monotonic_and_recent() {
        let mut c = SystemClock::new();
        let a = c.now();
        let b = c.now();
        assert!(b.mono_us >= a.mono_us);
        assert!(a.unix_us > 1_700_000_000_000_000);
    }

    #[test]
    fn manual_clock_clones_share() {
        let c = ManualClock::default();
        let mut d = c.clone();
        c.set(Stamp {
            unix_us: 7,
            mono_us: 3,
        });
        assert_eq!(d.now().mono_us, 3);
    }
}
