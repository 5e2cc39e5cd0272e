//! `spawn`: resolve the binary, build argv and environment, run the child under supervision
//! through the pipeline, and map the outcome to an exit status.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Duration;

use boo_normalize::capture::file::{self, Recording};
use boo_normalize::error::Error;
use boo_normalize::exit::ExitCode;
use boo_normalize::normalize::EndInfo;
use boo_normalize::pipeline::Pipeline;
use boo_normalize::pipeline::setup::finish_error;
use boo_normalize::redact::Redactor;
use boo_normalize::spawn::command::{self, ArgvOptions, ResolveError};
use boo_normalize::spawn::drive::{PipelineDriver, StderrMode};
use boo_normalize::spawn::env::{EnvPolicy, Removed, credentials_in};
use boo_normalize::spawn::guard::{GuardConfig, Guards};
use boo_normalize::spawn::outbox::{Full, Outbox};
use boo_normalize::spawn::{Cause, Limits, RunError, Spec, guardian, procs, supervise, tap};

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

pub fn run(a: SpawnArgs) -> Result<ExitCode, Error> {
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
    if prompt.is_none() && !continues_a_session(&a.claude_args) {
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
            "boo-normalize: stdout: {left} bytes not delivered (the reader stopped reading)"
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

/// The run, in the worker process.
fn worker(
    a: &SpawnArgs,
    prompt: Option<Vec<u8>>,
    guards: GuardConfig,
    policy: &EnvPolicy,
    std_out: &Outbox,
    std_err: &Outbox,
) -> Result<ExitCode, Error> {
    let limits = Limits {
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
    };
    procs::become_subreaper().map_err(|e| Error::io("prctl(PR_SET_CHILD_SUBREAPER)", e.into()))?;

    let mut setup = a.stream.setup()?;
    // The pretty view shows the prompt first (the stream does not carry it).
    setup.outputs.pretty.prompt = prompt
        .as_deref()
        .map(|p| String::from_utf8_lossy(p).into_owned());
    let engine = setup.redact.clone();
    // The sinks open before the binary is looked up, so that a run that cannot start still
    // ends with `run.end` (cause `spawn_failed`) on every one of them.
    // The capture file too (a failure: exit 2); its header is written right before the start.
    let recording = file::open(a.record.as_deref())?;
    let mut p = setup.pipeline(std_out.clone(), None, None)?;
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
        max_line: setup.max_line,
    };
    let mut rec = match tap::start(recording, &spec) {
        Ok(r) => r,
        Err((name, e)) => {
            let _ = p.finish(&EndInfo::eof().sink_failed(&name, &e));
            return Err(Error::sink(name, e));
        }
    };
    let program = match resolved {
        Ok(p) => p,
        Err(e) => {
            let (msg, code) = match e {
                ResolveError::NotFound(m) => (m, ExitCode::NOT_FOUND),
                ResolveError::NotExecutable(m) => (m, ExitCode::CANNOT_EXECUTE),
            };
            let err = Error::msg("spawn", msg).with_exit(code);
            return Err(spawn_failed(p, rec, err, &removed));
        }
    };
    let stderr_mode = if a.stderr_events {
        StderrMode::Events
    } else {
        StderrMode::Pass
    };
    let ready = std_out.clone();
    let mut driver = PipelineDriver::new(&mut p, Guards::new(guards), stderr_mode, std_err.clone())
        .with_ready(Box::new(move || ready.ready()));
    if let Some(e) = &engine {
        driver = driver.rewrite_stderr(Box::new(Redactor::new(e.clone())));
    }
    if let (Some(r), Some(e)) = (rec.as_mut(), &engine) {
        r.redact(e);
    }
    let mut tap = tap::tap(&mut rec, &mut driver);
    let mut outcome = match supervise(&spec, &limits, &mut tap) {
        Ok(o) => o,
        Err(RunError::Start(e)) => {
            let code = if e.kind() == io::ErrorKind::NotFound {
                ExitCode::NOT_FOUND
            } else {
                ExitCode::CANNOT_EXECUTE
            };
            let err = Error::io(program.display().to_string(), e).with_exit(code);
            return Err(spawn_failed(p, rec, err, &removed));
        }
    };
    if guardian::guardian_gone() {
        // The process the caller started was killed: the watcher killed the whole run.
        outcome.cause = Cause::Killed("supervisor_killed");
    }
    let last_ok = driver.last_turn_ok();
    outcome.stderr_dropped += driver.stderr_dropped() + std_err.dropped();
    let end_at = std::time::Instant::now();
    // Which output failed, if one did: the capture, or a sink of the pipeline (a closed stdout
    // keeps cause `killed`/`output_closed`: a normal way to stop).
    let capture_failed = outcome
        .output_error
        .as_deref()
        .and_then(|e| file::failed(&mut rec, e));
    let mut closed_stdout = false;
    // What the sinks still hold is written before run.end, so its failure is named there.
    let _ = p.flush();
    let failure = capture_failed
        .map(|f| (f, true))
        .or_else(|| p.take_failure().map(|f| ((f.name, f.error), false)))
        .filter(|((name, e), _)| {
            closed_stdout = name == "stdout" && e.kind() == io::ErrorKind::BrokenPipe;
            !closed_stdout
        });
    let mut end = outcome.end_info();
    end.extra.push(removed.end_member());
    if let Some(((name, e), _)) = &failure {
        end = end.sink_failed(name, e);
    }
    let finished = p.finish(&end);
    if outcome.stderr_dropped > 0 {
        let _ = writeln!(
            std_err.clone(),
            "boo-normalize: claude stderr: {} lines dropped (they came faster than they could be passed on)",
            outcome.stderr_dropped
        );
    }
    let (recording, failure) = match failure {
        Some((f, true)) => (Ok(()), Some(f)),
        f => {
            let cli = p.normalizer().cli_version();
            let r = tap::finish(rec, &outcome, end, cli, end_at);
            (r, f.map(|(f, _)| f))
        }
    };
    if let Some((name, e)) = failure {
        return Err(Error::sink(name, e));
    }
    finished.map_err(|e| finish_error(&mut p, e))?;
    recording?;
    if closed_stdout {
        // `| head -1`: the reader has what it wanted.
        return Ok(ExitCode::OK);
    }
    let code = outcome.exit_status(last_ok);
    Ok(boo_normalize::pipeline::setup::status(
        code,
        p.normalizer(),
        setup.strict,
        &mut io::stderr(),
    ))
}

/// The child could not be started (`err`): every sink and the capture still end with `run.end`
/// (cause `spawn_failed`, with the error), then the run exits with `err`'s status.
fn spawn_failed(
    mut p: Pipeline<'_>,
    rec: Option<Recording>,
    err: Error,
    removed: &Removed,
) -> Error {
    let mut end = EndInfo::spawn_failed(&err.to_string());
    end.extra.push(removed.end_member());
    let at = std::time::Instant::now();
    let _ = p.finish(&end);
    let _ = file::finish(rec, p.normalizer().cli_version(), &end, at);
    err
}

/// Whether the claude arguments resume or continue a session, or take their input from stdin
/// (`--input-format stream-json`): then no prompt is needed.
fn continues_a_session(args: &[std::ffi::OsString]) -> bool {
    args.iter().filter_map(|a| a.to_str()).any(|a| {
        matches!(
            a,
            "--resume" | "-r" | "--continue" | "-c" | "--input-format"
        ) || a.starts_with("--resume=")
            || a.starts_with("--input-format=")
    })
}
