//! The progress bar of long replays: on stderr, only when the caller says stderr is a terminal,
//! and only once the replay has run for a second (short replays never show one).

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Show the bar once the replay has run this long.
const DELAY: Duration = Duration::from_secs(1);
/// Redraw at most this often.
const EVERY: Duration = Duration::from_millis(100);

/// A lazily shown progress bar over input bytes.
pub struct Progress {
    enabled: bool,
    total: Option<u64>,
    started: Instant,
    last: Instant,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar over `total` bytes (`None`: unknown, a spinner), shown only if `enabled`.
    pub fn new(enabled: bool, total: Option<u64>) -> Self {
        let now = Instant::now();
        Progress {
            enabled,
            total,
            started: now,
            last: now,
            bar: None,
        }
    }

    /// `pos` bytes read; the replay's timeline is at `offset_us`.
    pub fn update(&mut self, pos: u64, offset_us: u64) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        if now - self.last < EVERY || now - self.started < DELAY {
            return;
        }
        self.last = now;
        let bar = self.bar.get_or_insert_with(|| {
            let (bar, tpl) = match self.total {
                Some(t) => (
                    ProgressBar::with_draw_target(Some(t), ProgressDrawTarget::stderr()),
                    "replay {bar:30} {bytes}/{total_bytes} {msg}",
                ),
                None => (
                    ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
                    "replay {spinner} {bytes} {msg}",
                ),
            };
            if let Ok(style) = ProgressStyle::with_template(tpl) {
                bar.set_style(style);
            }
            bar
        });
        bar.set_position(pos);
        bar.set_message(format!("at {:.1}s", offset_us as f64 / 1e6));
    }

    /// Remove the bar.
    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
