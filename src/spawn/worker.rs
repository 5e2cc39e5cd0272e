//! `spawn`'s run: the split into guardian and worker ([`run_guarded`]), then in the worker
//! process the child's program, argv and environment; the pipeline and the capture;
//! supervision with the guards; and the ending, `run.end` on every sink and in the capture,
//! also when the child cannot start.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;

use super::command::{self, ArgvOptions, ResolveError};
use super::drive::{PipelineDriver, StderrMode};
use super::env::{EnvPolicy, Removed};
use super::guard::{GuardConfig, Guards};
use super::outbox::Outbox;
use super::{Cause, Limits, Outcome, RunError, Spec, guardian, supervise, tap};
use crate::agent::Agent;
use crate::capture::file::{self, Recording};
use crate::error::{Error, counted};
use crate::exit::Exit;
use crate::normalize::EndInfo;
use crate::pipeline::Pipeline;
use crate::pipeline::conclude::{Ending, abandon, output_failed};
use crate::pipeline::setup::Setup;
use crate::redact::Redactor;

/// What the command line asked of the child, validated.
#[derive(Debug, Clone)]
pub struct Run {
    /// `--agent`: which CLI the child is (its flags, environment, dialect and tool names).
    pub agent: Agent,
    /// `--bin` (`--claude-bin`): a path, or a name looked up on `PATH` (`None`: the agent's usual
    /// binary).
    pub claude_bin: Option<OsString>,
    /// The agent's own arguments (after `--`).
    pub claude_args: Vec<OsString>,
    /// The prompt (`None`: a continued session).
    pub prompt: Option<Vec<u8>>,
    /// Where the prompt goes and which flags are added.
    pub argv: ArgvOptions,
    /// The child's environment.
    pub policy: EnvPolicy,
    /// The guards over its events.
    pub guards: GuardConfig,
    /// Timeouts and how it is stopped.
    pub limits: Limits,
    /// `--record`: the capture file.
    pub record: Option<PathBuf>,
    /// `--stderr-events`: the child's stderr as `child.stderr` events, not copied to stderr.
    pub stderr_events: bool,
}

/// How long the end of a run waits for a stdout reader that takes nothing (a third of it more
/// for stderr): the run exits at most about a second after it ended.
const OUTPUT_STALL: std::time::Duration = std::time::Duration::from_millis(750);

/// Split off the guardian ([`guardian::split`]); then, in the worker, become the subreaper of
/// the run's processes, open its outputs with `open` (after the split: its files and sinks are
/// the worker's) and [`run`] it, with `stdout` and `stderr` written by threads of their own
/// ([`Outbox`]: a reader that stops reading cannot stall the supervisor). What a reader did not
/// take by the end is said on stderr.
pub fn run_guarded(
    spec: Run,
    open: impl FnOnce() -> Result<Setup, Error>,
    stdout: std::os::fd::BorrowedFd<'_>,
    stderr: std::os::fd::BorrowedFd<'_>,
    notes: &mut dyn Write,
) -> Result<Exit, Error> {
    // From here on, the process the caller started is the guardian; the run goes on in the
    // worker, which survives neither its guardian nor lets the run survive it.
    guardian::split().map_err(|e| Error::io("spawn: fork", e))?;
    let dup = |fd: std::os::fd::BorrowedFd<'_>| {
        fd.try_clone_to_owned()
            .map(std::fs::File::from)
            .map_err(|e| Error::io("dup", e))
    };
    let std_out = Outbox::start(dup(stdout)?, super::outbox::Full::Hold, "stdout")
        .map_err(|e| Error::io("stdout", e))?;
    // A reader that goes away (`| head -1`) is seen at once, not at the next write.
    std_out.watch_reader();
    let mut std_err = Outbox::start(dup(stderr)?, super::outbox::Full::Drop, "stderr")
        .map_err(|e| Error::io("stderr", e))?;
    let res = super::procs::become_subreaper()
        .map_err(|e| Error::io("prctl(PR_SET_CHILD_SUBREAPER)", e.into()))
        .and_then(|()| open())
        .and_then(|setup| run(spec, setup, &std_out, &std_err, notes));
    // Deliver what the readers take; give up after a stall (nobody reads).
    let left = std_out.finish(OUTPUT_STALL);
    if left > 0 {
        let _ = writeln!(
            std_err,
            "boo-normalize: stdout: {} not delivered (the reader stopped reading)",
            counted(left as u64, "byte")
        );
    }
    std_err.finish(OUTPUT_STALL / 3);
    res
}

/// Run `run` through `setup`'s pipeline, the envelope to `std_out` and the child's stderr and
/// notes during the run to `std_err`, the verdict's notes to `notes`: the exit status, or the
/// error that ended the run (its `run.end` already written).
pub fn run(
    run: Run,
    mut setup: Setup,
    std_out: &Outbox,
    std_err: &Outbox,
    notes: &mut dyn Write,
) -> Result<Exit, Error> {
    // The pretty view shows the prompt first (the stream does not carry it).
    setup.outputs.pretty.prompt = run
        .prompt
        .as_deref()
        .map(|p| String::from_utf8_lossy(p).into_owned());
    // Another agent's stream is read by its dialect's reader (named, not guessed).
    if run.agent != Agent::Claude {
        setup.input_format = crate::transcript::InputFormat::Agent(run.agent.dialect());
    }
    // The sinks open before the binary is looked up, so that a run that cannot start still
    // ends with `run.end` (cause `spawn_failed`) on every one of them.
    // The capture file too (a failure: exit 2); its header is written right before the start.
    let recording = file::open(run.record.as_deref())?;
    let mut p = setup.pipeline(std_out.clone(), None, None)?;
    let (spec, resolved, removed) = child(&run, setup.max_line, std_err);
    let mut rec =
        tap::start(recording, &spec).map_err(|(name, e)| output_failed(&mut p, name, e))?;
    let program = match resolved {
        Ok(p) => p,
        Err(ResolveError::NotFound(m)) => {
            let err = Error::msg("spawn", m).with_exit(Exit::NOT_FOUND);
            return Err(spawn_failed(&mut p, rec, err, &removed));
        }
        Err(ResolveError::NotExecutable(m)) => {
            let err = Error::msg("spawn", m).with_exit(Exit::CANNOT_EXECUTE);
            return Err(spawn_failed(&mut p, rec, err, &removed));
        }
    };
    let (outcome, last_ok) =
        match supervised(&run, &setup, &mut p, &mut rec, &spec, std_out, std_err) {
            Ok(ran) => ran,
            Err(e) => {
                let code = if e.kind() == io::ErrorKind::NotFound {
                    Exit::NOT_FOUND
                } else {
                    Exit::CANNOT_EXECUTE
                };
                let err = Error::io(program.display().to_string(), e).with_exit(code);
                return Err(spawn_failed(&mut p, rec, err, &removed));
            }
        };
    let ending = ending(run.agent, &outcome, last_ok, &removed, std_err)
        .recorded(rec, tap::end_record(&outcome));
    setup.conclude(&mut p, ending, notes)
}

/// How a supervised run ended, for [`Setup::conclude`]: `run.end` with the child's end and the
/// provider settings not passed on, and its exit status. Stderr lines dropped are said on
/// `std_err`.
fn ending(
    agent: Agent,
    outcome: &Outcome,
    last_ok: Option<bool>,
    removed: &Removed,
    std_err: &Outbox,
) -> Ending {
    if outcome.stderr_dropped > 0 {
        let _ = writeln!(
            std_err.clone(),
            "boo-normalize: {} stderr: {} dropped (they came faster than they could be passed on)",
            agent.name(),
            counted(outcome.stderr_dropped, "line")
        );
    }
    let mut end = outcome.end_info();
    end.extra.push(removed.end_member());
    Ending {
        end,
        code: outcome.exit_status(last_ok),
        output_error: outcome.output_error.clone(),
        // A closed stdout keeps the cause the supervisor gave (`killed`/`output_closed`).
        keep_end_on_close: true,
        ..Ending::eof()
    }
}

/// What the child is: its program (as found on `PATH`, or why not), argv, environment and
/// stdin; and which provider settings were not passed on (said on stderr now, by name).
fn child(
    run: &Run,
    max_line: Option<usize>,
    std_err: &Outbox,
) -> (Spec, Result<PathBuf, ResolveError>, Removed) {
    let path = std::env::var_os("PATH");
    let requested: PathBuf = run
        .claude_bin
        .clone()
        .unwrap_or_else(|| run.agent.binary().into())
        .into();
    let resolved = command::resolve_agent(run.agent, run.claude_bin.as_deref(), path.as_deref());
    let argv = ArgvOptions {
        agent: run.agent,
        ..run.argv.clone()
    };
    let inv = command::build(&run.claude_args, run.prompt.as_deref(), &argv);
    let parent_env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let child_env = run.policy.build_for(run.agent, parent_env.iter().cloned());
    // Removed provider settings never vanish without a word (names only): a stderr line now,
    // and run.end's env_removed.
    let removed = Removed::between_for(run.agent, &parent_env, &child_env);
    if let Some(line) = removed.notice() {
        let _ = writeln!(std_err.clone(), "{line}");
    }
    let spec = Spec {
        program: resolved.as_ref().map_or(requested, Clone::clone),
        args: inv.args,
        env: child_env,
        stdin: inv.stdin,
        max_line,
        cwd: None,
        attach: None,
    };
    (spec, resolved, removed)
}

/// Run the child of `spec` under supervision through the pipeline (guards, stderr handling,
/// redaction of stderr and of the capture): how it ended and whether its last turn succeeded,
/// or why it could not start.
fn supervised(
    run: &Run,
    setup: &Setup,
    p: &mut Pipeline<'_>,
    rec: &mut Option<Recording>,
    spec: &Spec,
    std_out: &Outbox,
    std_err: &Outbox,
) -> io::Result<(Outcome, Option<bool>)> {
    let mode = if run.stderr_events {
        StderrMode::Events
    } else {
        StderrMode::Pass
    };
    let (ready, gone) = (std_out.clone(), std_out.clone());
    let guards = Guards::new(GuardConfig {
        agent: run.agent,
        ..run.guards.clone()
    });
    let mut driver = PipelineDriver::new(p, guards, mode, std_err.clone())
        .labelled(run.agent.name())
        .with_ready(Box::new(move || ready.ready()))
        .with_gone(Box::new(move || gone.failed()));
    if let Some(e) = &setup.redact {
        driver = driver.rewrite_stderr(Box::new(Redactor::new(e.clone())));
        if let Some(r) = rec.as_mut() {
            r.redact(e);
        }
    }
    let mut outcome = match supervise(spec, &run.limits, &mut tap::tap(rec, &mut driver)) {
        Ok(o) => o,
        Err(RunError::Start(e)) => return Err(e),
    };
    if guardian::guardian_gone() {
        // The process the caller started was killed: the watcher killed the whole run.
        outcome.cause = Cause::Killed("supervisor_killed");
    }
    outcome.stderr_dropped += driver.stderr_dropped() + std_err.dropped();
    Ok((outcome, driver.last_turn_ok()))
}

/// The child could not be started (`err`): every sink and the capture still end with `run.end`
/// (cause `spawn_failed`, with the error), then the run exits with `err`'s status.
fn spawn_failed(
    p: &mut Pipeline<'_>,
    rec: Option<Recording>,
    err: Error,
    removed: &Removed,
) -> Error {
    let mut end = EndInfo::spawn_failed(&err.to_string());
    end.extra.push(removed.end_member());
    abandon(p, rec, &end, err)
}
