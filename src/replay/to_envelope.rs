//! A replay through a command's pipeline to `run.end`, as `replay` (without `--raw` or
//! `--as-claude`) plays it: the recorded run id and times unless fresh ones are asked for,
//! `--from-seq`, pacing, and the recorded ending (or the sink that failed, or the writer that
//! vanished while followed).

use std::io::Write;

use super::play::Envelope;
use super::{Replay, Speed};
use crate::clock::{ManualClock, Stamp};
use crate::error::{Error, sanitize};
use crate::exit::Exit;
use crate::pipeline::conclude::Ending;
use crate::pipeline::setup::Setup;
use crate::sink::named::io_error;

/// How the replay plays into the pipeline.
#[derive(Debug, Clone)]
pub struct ToEnvelope {
    /// `--from-seq N`: no sink sees the events before `seq` N.
    pub from_seq: Option<u64>,
    /// `--fresh-ids`: a new run id and the system clock, not the recorded ones.
    pub fresh_ids: bool,
    /// `--run-id` was given: it is kept even when the input has one.
    pub run_id_given: bool,
    /// `--follow`.
    pub follow: bool,
    /// The pacing the replay was opened with.
    pub speed: Speed,
    /// `--stderr-events`: recorded stderr lines as `child.stderr` events.
    pub stderr_events: bool,
    /// What notes call the input (the followed file).
    pub name: String,
}

/// Play `replay` through `setup`'s pipeline, envelope to `out`, notes to `notes`: the exit
/// status the recorded ending gives (as `normalize` would), or the error that ended it.
pub fn run<W: Write>(
    replay: Replay,
    mut setup: Setup,
    out: W,
    opts: &ToEnvelope,
    notes: &mut dyn Write,
) -> Result<Exit, Error> {
    // --from-seq: the pipeline hands no sink the earlier events. --last-event-id: every sink
    // starts after it (stateful ones, the AI SDK profile, still see the earlier events). Both
    // skip the pacing of the lines before the resume point.
    let from = opts.from_seq.and_then(|n| n.checked_sub(1));
    // Deterministic by default: the input's run id and recorded times.
    if !opts.fresh_ids && !opts.run_id_given {
        replay.run_id().clone_into(&mut setup.run_id);
    }
    let clock = ManualClock::default();
    let recorded_time = (!opts.fresh_ids).then(|| Box::new(clock.clone()) as _);
    let mut p = setup.pipeline(out, recorded_time, from)?;
    let paced =
        opts.follow || (opts.speed != Speed::Max && replay.kind().is_some_and(|k| k.timed()));
    let mut player = Envelope::new(&mut p, setup.max_line, paced).stderr_events(opts.stderr_events);
    if !opts.fresh_ids {
        player = player.with_clock(move |s| {
            clock.set(Stamp {
                unix_us: s.unix_us,
                mono_us: s.mono_us,
            })
        });
    }
    let outcome = match replay.play(&mut player) {
        Ok(o) => o,
        Err(e) => {
            drop(player);
            // A sink failed: the others still get run.end naming it (as normalize does).
            if p.failure().is_none() {
                return Err(e);
            }
            return setup.conclude(&mut p, Ending::eof(), notes);
        }
    };
    player.stamp_end(outcome.end_stamp);
    drop(player);
    let end = outcome.run_end();
    if outcome.cut == Some("writer_vanished") {
        p.finish(&end).map_err(|e| io_error(e, "stdout"))?;
        let _ = writeln!(
            notes,
            "boo-normalize: --follow: the writer of {} is gone (no run.end)",
            sanitize(&opts.name)
        );
        return Ok(Exit::NO_RESULT);
    }
    // Interrupted while following: 128 + N, as an interrupted `normalize`.
    let code = outcome.interrupted.map_or(Exit::OK, Exit::signal);
    setup.conclude(
        &mut p,
        Ending {
            end,
            code,
            ..Ending::eof()
        },
        notes,
    )
}
