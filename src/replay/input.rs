//! One input of a replay and the state that plays the inputs in turn: reading its lines (and
//! following a growing file), decoding them, pacing them on the replay's timeline, and noting how
//! the recording ended.

use std::fs::File;
use std::io::{self, BufRead};
use std::path::PathBuf;
use std::time::Instant;

use super::feed::{Got, LineFeed};
use super::pace::Pacer;
use super::{Outcome, Player, ReplayOptions, Stamp, derived_run_id, out_err, progress};
use crate::capture::Header;
use crate::capture::decode::{Decoder, Item, Kind, Time};
use crate::error::Error;

/// One opened input: its feed of lines, its first line (read at open), its decoder once its kind
/// is known.
pub(super) struct Input {
    pub(super) name: String,
    pub(super) path: Option<PathBuf>,
    pub(super) feed: LineFeed<Box<dyn BufRead>>,
    pub(super) size: Option<u64>,
    pub(super) first: Option<(Vec<u8>, bool)>,
    pub(super) decoder: Option<Decoder>,
    /// Followed file, opened once more to probe its writer's lock.
    pub(super) probe: Option<File>,
}

impl Input {
    pub(super) fn identity(&self) -> (Option<String>, Option<Header>) {
        let Some((line, _)) = &self.first else {
            return (None, None);
        };
        let mut d = Decoder::new(Kind::detect(line), None);
        match (
            self.decoder.as_ref().map(Decoder::kind),
            d.decode(line, true),
        ) {
            (Some(Kind::Capture), Ok(Item::Header(h))) => (Some(h.run_id.clone()), Some(*h)),
            (Some(Kind::Audit), _) => (
                self.decoder
                    .as_ref()
                    .and_then(|d| d.run().map(str::to_owned)),
                None,
            ),
            _ => (Some(derived_run_id(line)), None),
        }
    }
}

/// What carries from one input to the next while they play: the timeline, the outcome, progress.
pub(super) struct State {
    pub(super) pacer: Pacer,
    /// Timeline offset of the current input (where the previous one ended).
    pub(super) base: u64,
    /// Timeline offset of the last item.
    pub(super) last: u64,
    pub(super) outcome: Outcome,
    pub(super) progress: progress::Progress,
    pub(super) done_bytes: u64,
    /// Following: the writer's lock is free (it is gone); read what is left, then stop.
    pub(super) writer_gone: bool,
}

/// Where a line came from, for decoding and error messages.
struct Src<'i> {
    name: &'i str,
    decoder: &'i mut Option<Decoder>,
    follow: bool,
}

impl State {
    pub(super) fn input(
        &mut self,
        inp: &mut Input,
        opts: &ReplayOptions,
        player: &mut dyn Player,
    ) -> Result<(), Error> {
        let follow = opts.follow;
        let Input {
            name,
            feed,
            first,
            decoder,
            probe,
            ..
        } = inp;
        if let Some(d) = decoder.as_mut() {
            d.track_results(follow.is_some());
        }
        let mut src = Src {
            name,
            decoder,
            follow: follow.is_some(),
        };
        if let Some((l, t)) = first.take() {
            if self.line(&mut src, feed.number(), &l, t, player)? {
                return Ok(());
            }
            self.progress
                .update(self.done_bytes + feed.consumed(), self.last);
        }
        let mut last_data = Instant::now();
        loop {
            let n = feed.number() + 1;
            let consumed = feed.consumed();
            let got = match feed.next(follow.is_some()) {
                Ok(g) => g,
                Err(e) => {
                    #[cfg(unix)]
                    if let Some(sig) = crate::interrupt::stopped_by(&e) {
                        self.outcome.interrupted = Some(sig);
                        return Ok(());
                    }
                    return Err(Error::io(src.name, e));
                }
            };
            let (line, term) = match got {
                Got::Line(l, t) => (l, t),
                Got::Eof => return Ok(()),
                Got::Pending => {
                    let f = follow.expect("pending only when following");
                    #[cfg(unix)]
                    if let Some(sig) = crate::interrupt::caught() {
                        self.outcome.interrupted = Some(sig);
                        return Ok(());
                    }
                    if self.writer_gone {
                        return Ok(());
                    }
                    let timed = src.decoder.as_ref().is_some_and(|d| d.kind().timed());
                    if timed && probe.as_ref().and_then(crate::files::has_writer) == Some(false) {
                        // Gone: whatever it wrote before dying is read first.
                        self.writer_gone = true;
                        continue;
                    }
                    let stream_over = src
                        .decoder
                        .as_ref()
                        .is_some_and(|d| d.kind() == Kind::Stream && d.result_seen())
                        && last_data.elapsed() >= f.idle;
                    if stream_over {
                        if let Some(l) = feed.take_partial() {
                            self.line(&mut src, n, l, false, player)?;
                        }
                        return Ok(());
                    }
                    self.pacer.idle_for(f.poll, player).map_err(out_err)?;
                    continue;
                }
            };
            last_data = Instant::now();
            let len = line.len() as u64 + u64::from(term);
            if self.line(&mut src, n, line, term, player)? {
                return Ok(());
            }
            self.progress
                .update(self.done_bytes + consumed + len, self.last);
        }
    }

    /// Decode and play one line; true when the run ended.
    fn line(
        &mut self,
        src: &mut Src<'_>,
        n: u64,
        line: &[u8],
        term: bool,
        player: &mut dyn Player,
    ) -> Result<bool, Error> {
        let follow = src.follow;
        let dec = src.decoder.get_or_insert_with(|| {
            let mut d = Decoder::new(Kind::detect(line), None);
            d.track_results(follow);
            d
        });
        let item = dec
            .decode(line, term)
            .map_err(|m| Error::msg(format!("{}:{n}", src.name), m))?;
        while let Some(k) = dec.take_unknown() {
            player.warn(&format!(
                "{}: skipping records of unknown kind `{k}`",
                src.name
            ));
        }
        let ended = dec.ended();
        self.item(item, player).map_err(out_err)?;
        Ok(ended)
    }

    fn at(&mut self, time: &Time) -> (Option<u64>, Stamp) {
        let off = time.at_us.map(|a| self.base.saturating_add(a));
        if let Some(o) = off {
            self.last = self.last.max(o);
        }
        let stamp = Stamp {
            unix_us: time.unix_us.unwrap_or(0),
            mono_us: self.last,
        };
        (off, stamp)
    }

    fn item(&mut self, item: Item, player: &mut dyn Player) -> io::Result<()> {
        match item {
            Item::Skip => Ok(()),
            Item::Header(h) => player.header(&h),
            Item::Out(o) => {
                let (off, stamp) = self.at(&o.time);
                let skipping = player.skipping();
                if !skipping {
                    self.pacer.wait(off, player)?;
                }
                player.out(&o, stamp)?;
                if skipping && !player.skipping() {
                    self.pacer.rebase(off);
                }
                self.pacer.touch();
                Ok(())
            }
            Item::Err { bytes, cut, time } => {
                let (off, stamp) = self.at(&time);
                if !player.skipping() {
                    self.pacer.wait(off, player)?;
                }
                player.err(&bytes, cut, stamp)
            }
            Item::End(end, time) => {
                let (off, stamp) = self.at(&time);
                if !player.skipping() {
                    self.pacer.wait(off, player)?;
                }
                self.outcome.end = Some(*end);
                self.outcome.end_stamp = stamp;
                Ok(())
            }
        }
    }
}
