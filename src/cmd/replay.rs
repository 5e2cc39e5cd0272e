//! `replay`: a capture, audit log or stream-json file back through the pipeline (envelope), as
//! raw stream-json (`--raw`), or as a stand-in for the `claude` binary (`--as-claude`).

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use boo_normalize::clock::{ManualClock, Stamp as ClockStamp};
use boo_normalize::error::{Error, sanitize};
use boo_normalize::exit::ExitCode;
use boo_normalize::normalize::EndInfo;
use boo_normalize::replay::play::{Claude, Envelope, Raw};
use boo_normalize::replay::{Follow, Options, Player, Replay, Speed, Stamp, exit};

use crate::cli::ReplayArgs;

/// How often a waiting replay pokes its sinks (SSE keep-alive comments).
const KEEPALIVE: Duration = Duration::from_secs(15);

pub fn run(a: ReplayArgs) -> Result<ExitCode, Error> {
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
    let opts = Options {
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
        return Ok(ExitCode::OK);
    }
    envelope(a, replay, speed)
}

fn envelope(a: ReplayArgs, replay: Replay, speed: Speed) -> Result<ExitCode, Error> {
    let mut setup = a.stream.setup()?;
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
            return setup.conclude(&mut p, &mut EndInfo::eof(), ExitCode::OK, &mut io::stderr());
        }
    };
    player.stamp_end(outcome.end_stamp);
    drop(player);
    let mut end = match (outcome.end, outcome.cut) {
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
        return Ok(ExitCode::NO_RESULT);
    }
    setup.conclude(&mut p, &mut end, ExitCode::OK, &mut io::stderr())
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

fn as_claude(mut a: ReplayArgs) -> Result<ExitCode, Error> {
    let capture = capture_of(&mut a)?;
    let claude_opts = a.claude_args.iter().take_while(|x| *x != "--");
    let version = claude_opts
        .into_iter()
        .any(|x| x == "--version" || x == "-v");
    let opts = Options {
        speed: a.speed.unwrap_or(Speed::Factor(1.0)),
        follow: None,
        audit_run: a.run.clone(),
        keepalive: None,
        progress: false,
    };
    let files = std::slice::from_ref(&capture);
    if version {
        let fast = Options {
            speed: Speed::Max,
            ..opts
        };
        let v = cli_version(Replay::open(files, fast)?)?.unwrap_or_else(|| "0.0.0".into());
        println!("{v} (Claude Code)");
        return Ok(ExitCode::OK);
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
        return Ok(ExitCode::OK);
    };
    if let Some(n) = end.signal.as_deref().and_then(exit::signal_number) {
        return Ok(exit::die_by(n));
    }
    Ok(end
        .exit_code
        .map_or(ExitCode::OK, |c| ExitCode::child((c & 0xff) as u8)))
}

/// The recorded Claude Code version: the capture header's, else the end record's or the last
/// `system/init` line's.
fn cli_version(replay: Replay) -> Result<Option<String>, Error> {
    if let Some(v) = replay.header().and_then(|h| h.cli_version.clone()) {
        return Ok(Some(v));
    }
    struct Probe(Option<String>);
    impl Player for Probe {
        fn out(&mut self, o: &boo_normalize::capture::decode::OutLine, _: Stamp) -> io::Result<()> {
            if memchr::memmem::find(&o.bytes, b"claude_code_version").is_some()
                && let Ok(v) = boo_normalize::json::depth::from_slice::<serde_json::Value>(&o.bytes)
                && let Some(s) = v.get("claude_code_version").and_then(|s| s.as_str())
            {
                self.0 = Some(s.to_owned());
            }
            Ok(())
        }
        fn pause(&mut self) -> io::Result<()> {
            Ok(())
        }
        fn warn(&mut self, _: &str) {}
    }
    let mut probe = Probe(None);
    let outcome = replay.play(&mut probe)?;
    Ok(outcome.end.and_then(|e| e.cli_version).or(probe.0))
}
