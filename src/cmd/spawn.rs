//! `spawn`: resolve the binary, build argv and environment, run the child under supervision
//! through the pipeline, and map the outcome to an exit status.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Duration;

use boo_normalize::capture::file::{self, Recording};
use boo_normalize::error::Error;
use boo_normalize::error::counted;
use boo_normalize::exit::Exit;
use boo_normalize::normalize::EndInfo;
use boo_normalize::pipeline::Pipeline;
use boo_normalize::pipeline::conclude::{Ending, abandon, output_failed};
use boo_normalize::pipeline::setup::Setup;
use boo_normalize::redact::Redactor;
use boo_normalize::spawn::command::{self, ArgvOptions, ResolveError};
use boo_normalize::spawn::drive::{PipelineDriver, StderrMode};
use boo_normalize::spawn::env::{EnvPolicy, Removed, credentials_in};
use boo_normalize::spawn::guard::{GuardConfig, Guards};
use boo_normalize::spawn::outbox::{Full, Outbox};
use boo_normalize::spawn::{
    Cause, Limits, Outcome, RunError, Spec, guardian, procs, supervise, tap,
};

use crate::cli::{IdleAction, SpawnArgs, StopSignalArg};

fn read_prompt(a: &SpawnArgs) -> Result<Option<Vec<u8>>, Error> {
    if let Some(p) = &a.prompt {
        return Ok(Some(p.clone().into_bytes()));
    }
    let Some(f) = &a.prompt_file else {
        return Ok(None);
    };
    if f.as_os_str() == "-" {
        let mut buf = Vec::new();
        io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| Error::io("stdin", e))?;
        return Ok(Some(buf));
    }
    fs::read(f)
        .map(Some)
        .map_err(|e| Error::io(f.display().to_string(), e))
}

pub fn run(a: SpawnArgs) -> Result<Exit, Error> {
    if !boo_normalize::spawn::supported() {
        return Err(Error::msg("spawn", "only supported on Linux"));
    }
    let guards = a.guards.config();
    guards.validate().map_err(|m| Error::msg("--enforce", m))?;
    let policy = EnvPolicy {
        inherit: a.inherit_env,
        keep_credentials: a.keep_env_key,
        extra: a.env.clone(),
    };
    policy.validate().map_err(|m| Error::msg("spawn", m))?;
    if a.refuse_api_key {
        let vars: Vec<_> = std::env::vars_os().collect();
        let found = credentials_in(vars.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str())));
        if !found.is_empty() {
            return Err(Error::msg(
                "--refuse-api-key",
                format!("{} is set in the environment", found.join(", ")),
            ));
        }
    }
    let prompt = read_prompt(&a)?;
    if prompt.is_none() && !command::continues_a_session(&a.claude_args) {
        return Err(Error::msg(
            "spawn",
            "no prompt: give --prompt TEXT or --prompt-file FILE (or --resume ID / --continue after --)",
        ));
    }
    // From here on, the process the caller started is the guardian; the run goes on in the
    // worker, which survives neither its guardian nor lets the run survive it.
    guardian::split().map_err(|e| Error::io("spawn: fork", e))?;
    // Stdout and stderr go through queues with writer threads: a reader that stops reading
    // cannot stall the supervisor (see spawn::outbox).
    let std_out = Outbox::start(dup_of(io::stdout().as_fd())?, Full::Hold, "stdout")
        .map_err(|e| Error::io("stdout", e))?;
    let mut std_err = Outbox::start(dup_of(io::stderr().as_fd())?, Full::Drop, "stderr")
        .map_err(|e| Error::io("stderr", e))?;
    let res = worker(&a, prompt, guards, &policy, &std_out, &std_err);
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

/// How long the end of a run waits for a stdout reader that takes nothing (a third of it more
/// for stderr): the run exits at most about a second after it ended.
const OUTPUT_STALL: Duration = Duration::from_millis(750);

/// A duplicate of `fd`, for a writer thread.
fn dup_of(fd: BorrowedFd<'_>) -> Result<File, Error> {
    fd.try_clone_to_owned()
        .map(File::from)
        .map_err(|e| Error::io("dup", e))
}

/// The child's limits as the command line set them.
fn limits(a: &SpawnArgs) -> Limits {
    Limits {
        timeout: a.timeout,
        idle_timeout: a.idle_timeout,
        idle_warn_only: a.idle_action == IdleAction::Warn,
        tool_timeout: a.tool_timeout,
        grace: a.grace,
        stop_signal: match a.stop_signal {
            StopSignalArg::Int => boo_normalize::spawn::StopSignal::Int,
            StopSignalArg::Term => boo_normalize::spawn::StopSignal::Term,
        },
        keep_background: a.keep_background,
        keep_alive: a.keep_alive,
    }
}

/// What the child is: its program (as found on `PATH`, or why not), argv, environment and
/// stdin; and which provider settings were not passed on (said on stderr now, by name).
fn child(
    a: &SpawnArgs,
    prompt: Option<Vec<u8>>,
    policy: &EnvPolicy,
    max_line: Option<usize>,
    std_err: &Outbox,
) -> (Spec, Result<std::path::PathBuf, ResolveError>, Removed) {
    let path = std::env::var_os("PATH");
    let requested: std::path::PathBuf = a
        .claude_bin
        .clone()
        .unwrap_or_else(|| "claude".into())
        .into();
    let resolved = command::resolve_program(a.claude_bin.as_deref(), path.as_deref());
    let inv = command::build(
        &a.claude_args,
        prompt.as_deref(),
        &ArgvOptions {
            partial: !a.no_partial,
            argv_max: a.prompt_argv_max,
            allow_tools: a.guards.allow_tools.clone(),
        },
    );
    let parent_env: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os().collect();
    let child_env = policy.build(parent_env.iter().cloned());
    // Removed provider settings never vanish without a word (names only): a stderr line now,
    // and run.end's env_removed.
    let removed = Removed::between(&parent_env, &child_env);
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
    };
    (spec, resolved, removed)
}

/// The run, in the worker process.
fn worker(
    a: &SpawnArgs,
    prompt: Option<Vec<u8>>,
    guards: GuardConfig,
    policy: &EnvPolicy,
    std_out: &Outbox,
    std_err: &Outbox,
) -> Result<Exit, Error> {
    procs::become_subreaper().map_err(|e| Error::io("prctl(PR_SET_CHILD_SUBREAPER)", e.into()))?;
    let mut setup = a.stream.plan()?.open()?;
    // The pretty view shows the prompt first (the stream does not carry it).
    setup.outputs.pretty.prompt = prompt
        .as_deref()
        .map(|p| String::from_utf8_lossy(p).into_owned());
    // The sinks open before the binary is looked up, so that a run that cannot start still
    // ends with `run.end` (cause `spawn_failed`) on every one of them.
    // The capture file too (a failure: exit 2); its header is written right before the start.
    let recording = file::open(a.record.as_deref())?;
    let mut p = setup.pipeline(std_out.clone(), None, None)?;
    let (spec, resolved, removed) = child(a, prompt, policy, setup.max_line, std_err);
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
        match supervised(a, &setup, &mut p, &mut rec, guards, &spec, std_out, std_err) {
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
    if outcome.stderr_dropped > 0 {
        let _ = writeln!(
            std_err.clone(),
            "boo-normalize: claude stderr: {} dropped (they came faster than they could be passed on)",
            counted(outcome.stderr_dropped, "line")
        );
    }
    let mut end = outcome.end_info();
    end.extra.push(removed.end_member());
    let ending = Ending {
        end,
        code: outcome.exit_status(last_ok),
        output_error: outcome.output_error.clone(),
        // A closed stdout keeps the cause the supervisor gave (`killed`/`output_closed`).
        keep_end_on_close: true,
        ..Ending::eof()
    }
    .recorded(rec, tap::end_record(&outcome));
    setup.conclude(&mut p, ending, &mut io::stderr())
}

/// Run the child of `spec` under supervision through the pipeline (guards, stderr handling,
/// redaction of stderr and of the capture): how it ended and whether its last turn succeeded,
/// or why it could not start.
#[allow(clippy::too_many_arguments)]
fn supervised(
    a: &SpawnArgs,
    setup: &Setup,
    p: &mut Pipeline<'_>,
    rec: &mut Option<Recording>,
    guards: GuardConfig,
    spec: &Spec,
    std_out: &Outbox,
    std_err: &Outbox,
) -> io::Result<(Outcome, Option<bool>)> {
    let mode = if a.stderr_events {
        StderrMode::Events
    } else {
        StderrMode::Pass
    };
    let ready = std_out.clone();
    let mut driver = PipelineDriver::new(p, Guards::new(guards), mode, std_err.clone())
        .with_ready(Box::new(move || ready.ready()));
    if let Some(e) = &setup.redact {
        driver = driver.rewrite_stderr(Box::new(Redactor::new(e.clone())));
        if let Some(r) = rec.as_mut() {
            r.redact(e);
        }
    }
    let mut outcome = match supervise(spec, &limits(a), &mut tap::tap(rec, &mut driver)) {
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
