//! `replay`: a capture, audit log or stream-json file back through the pipeline (envelope), as
//! raw stream-json (`--raw`), or as a stand-in for the `claude` binary (`--as-claude`).

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use boo_normalize::clock::{ManualClock, Stamp as ClockStamp};
use boo_normalize::error::{Error, sanitize};
use boo_normalize::exit::Exit;
use boo_normalize::normalize::EndInfo;
use boo_normalize::pipeline::conclude::Ending;
use boo_normalize::replay::play::{Claude, Envelope, Raw};
use boo_normalize::replay::{Follow, Replay, ReplayOptions, Speed, exit};

use crate::cli::ReplayArgs;

/// How often a waiting replay pokes its sinks (SSE keep-alive comments).
const KEEPALIVE: Duration = Duration::from_secs(15);

pub fn run(a: ReplayArgs) -> Result<Exit, Error> {
    if a.stream.redact.enabled() && (a.as_claude || a.raw) {
        // These re-emit the recorded bytes; redact a stream with `boo-normalize redact` instead.
        return Err(Error::msg(
            "--redact",
            "not with --raw or --as-claude (they re-emit recorded bytes unchanged)",
        ));
    }
    if a.as_claude {
        return as_claude(a);
    }
    let speed = a.speed.unwrap_or(if a.follow {
        Speed::Max
    } else {
        Speed::Factor(1.0)
    });
    let opts = ReplayOptions {
        speed,
        follow: a.follow.then(|| Follow {
            idle: a.follow_idle,
            ..Follow::default()
        }),
        audit_run: a.run.clone(),
        keepalive: Some(KEEPALIVE),
        progress: !a.no_progress && io::stderr().is_terminal() && !io::stdout().is_terminal(),
    };
    let replay = Replay::open(&a.files, opts)?;
    if a.raw {
        let mut player = Raw::new(io::stdout().lock());
        replay.play(&mut player)?;
        player.flush().map_err(|e| Error::io("stdout", e))?;
        return Ok(Exit::OK);
    }
    envelope(a, replay, speed)
}

fn envelope(a: ReplayArgs, replay: Replay, speed: Speed) -> Result<Exit, Error> {
    let mut setup = a.stream.plan()?.open()?;
    // --from-seq: the pipeline hands no sink the earlier events. --last-event-id: every sink
    // starts after it (stateful ones, the AI SDK profile, still see the earlier events). Both
    // skip the pacing of the lines before the resume point.
    let from = a.from_seq.and_then(|n| n.checked_sub(1));
    // Deterministic by default: the input's run id and recorded times.
    if !a.fresh_ids && a.stream.output.run_id.is_none() {
        replay.run_id().clone_into(&mut setup.run_id);
    }
    let clock = ManualClock::default();
    let recorded_time = (!a.fresh_ids).then(|| Box::new(clock.clone()) as _);
    let mut p = setup.pipeline(io::stdout().lock(), recorded_time, from)?;
    let paced = a.follow || (speed != Speed::Max && replay.kind().is_some_and(|k| k.timed()));
    let mut player = Envelope::new(&mut p, setup.max_line, paced).stderr_events(a.stderr_events);
    if !a.fresh_ids {
        player = player.with_clock(move |s| {
            clock.set(ClockStamp {
                unix_us: s.unix_us,
                mono_us: s.mono_us,
            })
        });
    }
    let played = replay.play(&mut player);
    let outcome = match played {
        Ok(o) => o,
        Err(e) => {
            drop(player);
            // A sink failed: the others still get run.end naming it (as normalize does).
            if p.failure().is_none() {
                return Err(e);
            }
            return setup.conclude(&mut p, Ending::eof(), &mut io::stderr());
        }
    };
    player.stamp_end(outcome.end_stamp);
    drop(player);
    let end = match (outcome.end, outcome.cut) {
        (Some(e), _) => e.run_end,
        (None, Some(cut)) => EndInfo {
            cause: cut.into(),
            extra: Vec::new(),
        },
        (None, None) => EndInfo::eof(),
    };
    if outcome.cut == Some("writer_vanished") {
        p.finish(&end)
            .map_err(|e| boo_normalize::sink::named::io_error(e, "stdout"))?;
        let _ = writeln!(
            io::stderr(),
            "boo-normalize: --follow: the writer of {} is gone (no run.end)",
            sanitize(&a.files[0].display().to_string())
        );
        return Ok(Exit::NO_RESULT);
    }
    setup.conclude(
        &mut p,
        Ending {
            end,
            ..Ending::eof()
        },
        &mut io::stderr(),
    )
}

/// Where `--as-claude` takes its capture from: `--as-claude=FILE`, a FILE before `--as-claude`,
/// `$BOO_REPLAY_CAPTURE`, or the first argument after `--as-claude` (then not claude's).
fn capture_of(a: &mut ReplayArgs) -> Result<PathBuf, Error> {
    if let Some(f) = a.as_claude_file.take() {
        return Ok(f);
    }
    if let [f] = a.files.as_slice() {
        return Ok(f.clone());
    }
    if !a.files.is_empty() {
        return Err(Error::msg("--as-claude", "replays exactly one capture"));
    }
    if let Some(f) = std::env::var_os("BOO_REPLAY_CAPTURE").filter(|f| !f.is_empty()) {
        return Ok(f.into());
    }
    match a.claude_args.first() {
        Some(f) if !f.to_string_lossy().starts_with('-') => Ok(a.claude_args.remove(0).into()),
        _ => Err(Error::msg(
            "--as-claude",
            "no capture: pass --as-claude=FILE or set BOO_REPLAY_CAPTURE",
        )),
    }
}

fn as_claude(mut a: ReplayArgs) -> Result<Exit, Error> {
    let capture = capture_of(&mut a)?;
    let claude_opts = a.claude_args.iter().take_while(|x| *x != "--");
    let version = claude_opts
        .into_iter()
        .any(|x| x == "--version" || x == "-v");
    let opts = ReplayOptions {
        speed: a.speed.unwrap_or(Speed::Factor(1.0)),
        follow: None,
        audit_run: a.run.clone(),
        keepalive: None,
        progress: false,
    };
    let files = std::slice::from_ref(&capture);
    if version {
        let fast = ReplayOptions {
            speed: Speed::Max,
            ..opts
        };
        let v = Replay::open(files, fast)?
            .cli_version()?
            .unwrap_or_else(|| "0.0.0".into());
        println!("{v} (Claude Code)");
        return Ok(Exit::OK);
    }
    let replay = Replay::open(files, opts)?;
    // Like claude, read stdin (a prompt), but ignore it; never let a writer block on it.
    if !io::stdin().is_terminal() {
        std::thread::spawn(|| io::copy(&mut io::stdin().lock(), &mut io::sink()));
    }
    let mut player = Claude::new(io::stdout().lock(), io::stderr().lock());
    let outcome = replay.play(&mut player)?;
    player.flush().map_err(|e| Error::io("stdout", e))?;
    drop(player);
    let Some(end) = outcome.end else {
        return Ok(Exit::OK);
    };
    if let Some(n) = end.signal.as_deref().and_then(exit::signal_number) {
        return Ok(exit::die_by(n));
    }
    Ok(end
        .exit_code
        .map_or(Exit::OK, |c| Exit::child((c & 0xff) as u8)))
}
