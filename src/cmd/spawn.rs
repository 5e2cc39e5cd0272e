//! `spawn`: validate, read the prompt, split off the guardian, and run the child in the worker
//! ([`worker::run`]) with stdout and stderr written by threads of their own.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Duration;

use boo_normalize::error::Error;
use boo_normalize::error::counted;
use boo_normalize::exit::Exit;
use boo_normalize::spawn::env::credentials_in;
use boo_normalize::spawn::outbox::{Full, Outbox};
use boo_normalize::spawn::worker::{self, Run};
use boo_normalize::spawn::{command, guardian, procs};

use crate::cli::SpawnArgs;

pub fn run(a: SpawnArgs) -> Result<Exit, Error> {
    if !boo_normalize::spawn::supported() {
        return Err(Error::msg("spawn", "only supported on Linux"));
    }
    let guards = a.guards.config();
    guards.validate().map_err(|m| Error::msg("--enforce", m))?;
    let policy = a.env_policy();
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
    let run = a.run(prompt, guards, policy);
    // From here on, the process the caller started is the guardian; the run goes on in the
    // worker, which survives neither its guardian nor lets the run survive it.
    guardian::split().map_err(|e| Error::io("spawn: fork", e))?;
    // Stdout and stderr go through queues with writer threads: a reader that stops reading
    // cannot stall the supervisor (see spawn::outbox).
    let std_out = Outbox::start(dup_of(io::stdout().as_fd())?, Full::Hold, "stdout")
        .map_err(|e| Error::io("stdout", e))?;
    let mut std_err = Outbox::start(dup_of(io::stderr().as_fd())?, Full::Drop, "stderr")
        .map_err(|e| Error::io("stderr", e))?;
    let res = in_worker(&a, run, &std_out, &std_err);
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

/// The run, in the worker: its sinks and files are opened here, after the split.
fn in_worker(a: &SpawnArgs, run: Run, std_out: &Outbox, std_err: &Outbox) -> Result<Exit, Error> {
    procs::become_subreaper().map_err(|e| Error::io("prctl(PR_SET_CHILD_SUBREAPER)", e.into()))?;
    let setup = a.stream.plan()?.open()?;
    worker::run(run, setup, std_out, std_err, &mut io::stderr())
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

/// `--prompt`, or `--prompt-file` (`-`: stdin), or none.
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
