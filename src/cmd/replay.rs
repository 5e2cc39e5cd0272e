//! `replay`: a capture, audit log or stream-json file back through the pipeline
//! ([`to_envelope`]), as raw stream-json (`--raw`), or as a stand-in for the `claude` binary
//! (`--as-claude`).

use std::io::{self, IsTerminal};
use std::time::Duration;

use boo_normalize::error::Error;
use boo_normalize::exit::Exit;
use boo_normalize::replay::play::{Claude, Raw};
use boo_normalize::replay::{Follow, Replay, ReplayOptions, Speed, exit, to_envelope};

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
    let opts = ReplayOptions {
        speed: a.pacing(),
        follow: a.follow.then(|| Follow {
            idle: a.follow_idle,
            ..Follow::default()
        }),
        audit_run: a.run.clone(),
        keepalive: Some(KEEPALIVE),
        progress: !a.no_progress && io::stderr().is_terminal() && !io::stdout().is_terminal(),
    };
    // A follower stopped by SIGINT, SIGTERM or SIGHUP ends with run.end (`interrupted`).
    #[cfg(unix)]
    if a.follow && !a.raw {
        boo_normalize::interrupt::install().map_err(|e| Error::io("signals", e))?;
    }
    let replay = Replay::open(&a.files, opts)?;
    if a.raw {
        let mut player = Raw::new(io::stdout().lock());
        replay.play(&mut player)?;
        player.flush().map_err(|e| Error::io("stdout", e))?;
        return Ok(Exit::OK);
    }
    let setup = a.stream.plan()?.open()?;
    let how = a.to_envelope();
    to_envelope::run(replay, setup, io::stdout().lock(), &how, &mut io::stderr())
}

fn as_claude(mut a: ReplayArgs) -> Result<Exit, Error> {
    let capture = a.as_claude_capture()?;
    let opts = ReplayOptions {
        speed: a.speed.unwrap_or(Speed::Factor(1.0)),
        follow: None,
        audit_run: a.run.clone(),
        keepalive: None,
        progress: false,
    };
    let files = std::slice::from_ref(&capture);
    if a.asks_version() {
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
    Ok(exit::recorded(outcome.end.as_ref()))
}
