//! Pacing a replay: sleeping until each line's recorded offset (scaled by the speed), flushing
//! the player before any wait, and poking it every keep-alive interval while waiting.

use std::io;
use std::time::{Duration, Instant};

use super::{Player, Speed};

/// Waits for recorded offsets.
pub(super) struct Pacer {
    speed: Speed,
    t0: Instant,
    keepalive: Option<Duration>,
    last_active: Instant,
}

impl Pacer {
    pub(super) fn new(speed: Speed, keepalive: Option<Duration>) -> Self {
        let now = Instant::now();
        Pacer {
            speed,
            t0: now,
            keepalive,
            last_active: now,
        }
    }

    fn scaled(&self, off: u64) -> Option<Duration> {
        match self.speed {
            Speed::Max => None,
            Speed::Factor(f) => Some(Duration::from_secs_f64(off as f64 / 1e6 / f)),
        }
    }

    /// Something was just played: the keep-alive interval starts over.
    pub(super) fn touch(&mut self) {
        if self.keepalive.is_some() {
            self.last_active = Instant::now();
        }
    }

    /// Make `off` be now (resumed replays).
    pub(super) fn rebase(&mut self, off: Option<u64>) {
        if let (Some(off), Some(_)) = (off, self.scaled(0)) {
            let d = self.scaled(off).unwrap_or_default();
            let now = Instant::now();
            self.t0 = now.checked_sub(d).unwrap_or(now);
        }
    }

    /// Sleep until offset `off` is due; flush first, keep-alive while waiting.
    pub(super) fn wait(&mut self, off: Option<u64>, player: &mut dyn Player) -> io::Result<()> {
        let (Some(off), Some(_)) = (off, self.scaled(0)) else {
            return Ok(());
        };
        let target = self.t0 + self.scaled(off).unwrap_or_default();
        if Instant::now() >= target {
            return Ok(());
        }
        player.pause()?;
        self.sleep_until(target, player)?;
        self.last_active = Instant::now();
        Ok(())
    }

    /// Following: nothing new; wait `d` (flushing first, keep-alive when due).
    pub(super) fn idle_for(&mut self, d: Duration, player: &mut dyn Player) -> io::Result<()> {
        player.pause()?;
        self.sleep_until(Instant::now() + d, player)
    }

    fn sleep_until(&mut self, target: Instant, player: &mut dyn Player) -> io::Result<()> {
        loop {
            let now = Instant::now();
            if now >= target {
                return Ok(());
            }
            let mut until = target;
            if let Some(k) = self.keepalive {
                let due = self.last_active + k;
                if due <= now {
                    player.idle()?;
                    self.last_active = now;
                    continue;
                }
                until = until.min(due);
            }
            std::thread::sleep(until - now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::decode::OutLine;
    use crate::replay::Stamp;

    #[derive(Default)]
    struct Count {
        pauses: u32,
        idles: u32,
        idle_at: Vec<Instant>,
    }
    impl Player for Count {
        fn out(&mut self, _: &OutLine, _: Stamp) -> io::Result<()> {
            Ok(())
        }
        fn pause(&mut self) -> io::Result<()> {
            self.pauses += 1;
            Ok(())
        }
        fn idle(&mut self) -> io::Result<()> {
            self.idles += 1;
            self.idle_at.push(Instant::now());
            Ok(())
        }
    }

    #[test]
    fn waits_flush_once_and_keep_alive_while_idle() {
        let mut c = Count::default();
        let mut p = Pacer::new(Speed::Factor(1.0), Some(Duration::from_millis(20)));
        let t = Instant::now();
        p.wait(Some(110_000), &mut c).unwrap();
        let waited = t.elapsed();
        assert!(waited >= Duration::from_millis(110));
        assert_eq!(c.pauses, 1);
        // A keep-alive every 20 ms of quiet (about 5 here), never two closer than that; a loaded
        // machine that oversleeps sends fewer, never none and never more.
        assert!(
            (1..=6).contains(&c.idles),
            "{} keep-alives in {waited:?}",
            c.idles
        );
        let mut last = t;
        for at in &c.idle_at {
            assert!(
                *at - last >= Duration::from_millis(20),
                "keep-alives {:?} apart",
                *at - last
            );
            last = *at;
        }
        // Already due: no pause, no sleep.
        p.wait(Some(50_000), &mut c).unwrap();
        assert_eq!(c.pauses, 1);
        // Max speed never waits.
        let mut m = Pacer::new(Speed::Max, None);
        let t = Instant::now();
        m.wait(Some(10_000_000), &mut c).unwrap();
        assert!(t.elapsed() < Duration::from_millis(50));
    }
}
