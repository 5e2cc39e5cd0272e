//! A whole probe after its command line: the scenarios chosen, the CLI found and asked its
//! version, every scenario run in every mode it allows (stopping at the first failure unless
//! told to go on), `summary.json` and `profile.json` written, and the verdict as an error.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::agent::Agent;
use super::run::{self, RunFailure, Setup};
use super::scenario::{self, Source};
use super::summary::{SUMMARY_VERSION, Summary};
use super::{PROFILE_FILE, SUMMARY_FILE, prepare_out};
use crate::error::Error;
use crate::exit::Exit;
use crate::profile::input;
use crate::spawn::command::{ResolveError, resolve_program};
use crate::spawn::{guardian, procs};

/// What a probe was asked.
#[derive(Debug, Clone)]
pub struct Probe {
    /// Which agent CLI it is.
    pub agent: Agent,
    /// The CLI to probe (a path, or a name looked up in `PATH`).
    pub claude_bin: PathBuf,
    /// Where the captures, `profile.json` and `summary.json` go.
    pub out: PathBuf,
    /// The output modes to run each scenario in.
    pub modes: Vec<String>,
    /// Go on after a failed run.
    pub keep_going: bool,
    /// Longest one run may take.
    pub timeout: Duration,
}

/// Run the probe `p` of the scenarios `sources` ([`select`]): progress lines and the table go
/// to `notes` (stderr). `Ok` when every run passed; otherwise the first failure (or, with
/// `keep_going` and several, their count), with its exit status.
pub fn sweep(p: &Probe, sources: &[Source], notes: &mut dyn Write) -> Result<(), Error> {
    let setup = start(p)?;
    let what = format!("{} --version", p.agent.name());
    let cli_version = run::version(&setup).map_err(|f| failure(&what, f))?;
    let _ = writeln!(
        notes,
        "boo-normalize: probe: {} ({}), API on 127.0.0.1, output in {}",
        setup.claude.display(),
        cli_version.as_deref().unwrap_or("version unknown"),
        p.out.display()
    );
    let mut summary = Summary {
        summary_version: SUMMARY_VERSION,
        generator: format!("boo-normalize {}", env!("CARGO_PKG_VERSION")),
        agent: p.agent.name().to_owned(),
        claude_bin: setup.claude.display().to_string(),
        cli_version,
        modes: p.modes.clone(),
        runs: Vec::new(),
        failed: 0,
        not_run: Vec::new(),
        unknown_requests: BTreeMap::new(),
    };
    let plan: Vec<(&Source, &str)> = sources
        .iter()
        .flat_map(|s| {
            p.modes
                .iter()
                .filter(|m| s.scenario.modes.as_ref().is_none_or(|ms| ms.contains(m)))
                .map(move |m| (s, m.as_str()))
        })
        .collect();
    let first_failure = run_plan(&setup, &plan, p.keep_going, &mut summary, notes)?;
    finish(&summary, &p.out, notes)?;
    let _ = write!(notes, "{}", summary.table());
    match first_failure {
        Some(_) if p.keep_going && summary.failed > 1 => Err(Error::msg(
            "probe",
            format!(
                "{} of {} runs failed (see above and {})",
                summary.failed,
                summary.runs.len(),
                p.out.join(SUMMARY_FILE).display()
            ),
        )
        .with_exit(Exit::PROBE_FAILED)),
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Find the CLI, make the output directory ready, and split off the guardian: what every run
/// shares. As `spawn` does: a guardian that outlives nothing of the run, and every orphan of
/// the CLI re-parented to the worker so that the cleanup after each run finds it.
fn start(p: &Probe) -> Result<Setup, Error> {
    let path =
        std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
    let flag = if p.agent == Agent::Claude {
        "probe: --claude-bin"
    } else {
        "probe: --bin"
    };
    let claude =
        resolve_program(Some(p.claude_bin.as_os_str()), Some(&path)).map_err(|e| match e {
            ResolveError::NotFound(m) => Error::msg(flag, m).with_exit(Exit::NOT_FOUND),
            ResolveError::NotExecutable(m) => Error::msg(flag, m).with_exit(Exit::CANNOT_EXECUTE),
        })?;
    // Runs start in a working directory of their own: a relative path must not change meaning.
    let claude = std::path::absolute(&claude).map_err(|e| Error::io(flag, e))?;
    prepare_out(&p.out)?;
    guardian::split().map_err(|e| Error::io("probe: fork", e))?;
    let _ = procs::become_subreaper();
    Ok(Setup {
        agent: p.agent,
        claude,
        out: p.out.clone(),
        timeout: p.timeout,
        path,
    })
}

/// Run `plan` in order into `summary`, saying how each run went on `notes`: the first failed
/// run's error (the others ran only with `keep_going`), or an error that ends the probe at once
/// (a run that could not be made, a signal), after writing what there is.
fn run_plan(
    setup: &Setup,
    plan: &[(&Source, &str)],
    keep_going: bool,
    summary: &mut Summary,
    notes: &mut dyn Write,
) -> Result<Option<Error>, Error> {
    let mut first_failure: Option<Error> = None;
    for (i, (src, mode)) in plan.iter().enumerate() {
        let rest = || {
            plan[i..]
                .iter()
                .map(|(s, m)| format!("{}.{m}", s.scenario.name))
        };
        if first_failure.is_some() && !keep_going {
            summary.not_run.extend(rest());
            break;
        }
        let id = format!("{}.{mode}", src.scenario.name);
        let r = match run::run(setup, src, mode) {
            Ok(r) => r,
            Err(RunFailure::Interrupted(sig)) => {
                summary.not_run.extend(rest());
                finish(summary, &setup.out, notes)?;
                return Err(stopped("probe".into(), sig));
            }
            Err(f) => {
                let e = failure(&id, f);
                finish(summary, &setup.out, notes)?;
                return Err(e);
            }
        };
        for u in &r.unknown_requests {
            *summary.unknown_requests.entry(u.clone()).or_default() += 1;
        }
        if r.failed() {
            summary.failed += 1;
            let e = Error::msg(format!("probe: {id}"), r.problems.join("; "))
                .with_exit(Exit::PROBE_FAILED);
            let _ = writeln!(notes, "boo-normalize: {e}");
            first_failure.get_or_insert(e);
        } else {
            let _ = writeln!(
                notes,
                "boo-normalize: probe: {id}: ok ({} lines, {} s)",
                r.lines, r.seconds
            );
        }
        summary.runs.push(r);
    }
    Ok(first_failure)
}

/// A run that could not be made: start failures keep their exit status (126/127), the rest is
/// a failed probe.
fn failure(id: &str, f: RunFailure) -> Error {
    let ctx = format!("probe: {id}");
    match f {
        RunFailure::Start(e) => {
            let code = match e.kind() {
                io::ErrorKind::NotFound => Exit::NOT_FOUND,
                io::ErrorKind::PermissionDenied => Exit::CANNOT_EXECUTE,
                _ => Exit::PROBE_FAILED,
            };
            Error::msg(ctx, format!("cannot start the CLI: {e}")).with_exit(code)
        }
        RunFailure::Setup(m) => Error::msg(ctx, m).with_exit(Exit::PROBE_FAILED),
        RunFailure::Interrupted(sig) => stopped(ctx, sig),
    }
}

/// boo-normalize got signal `sig`: the probe stops, with `128 + sig`.
fn stopped(ctx: String, sig: i32) -> Error {
    Error::msg(ctx, format!("stopped by {}", procs::signal_name(sig))).with_exit(Exit::signal(sig))
}

/// Write `summary.json` and, when there are captures, `profile.json` (warnings of reading them
/// to `notes`).
fn finish(summary: &Summary, out: &Path, notes: &mut dyn Write) -> Result<(), Error> {
    let path = out.join(SUMMARY_FILE);
    fs::write(&path, summary.to_json()).map_err(|e| Error::io(path.display().to_string(), e))?;
    // A scenario whose CLI printed nothing, or nothing but non-JSON, fails (the summary says
    // why); the profile is of the JSON the CLIs did print.
    let captures: Vec<PathBuf> = summary
        .runs
        .iter()
        .filter(|r| r.lines > r.non_json)
        .map(|r| out.join(&r.file))
        .filter(|p| p.exists())
        .collect();
    if captures.is_empty() {
        return Ok(());
    }
    let profile = input::load(&captures, false, notes)?;
    let path = out.join(PROFILE_FILE);
    fs::write(&path, profile.to_json()).map_err(|e| Error::io(path.display().to_string(), e))
}

/// The scenarios to run: the built-ins and those of the `files`, narrowed to `names`; without
/// names, the files' scenarios if there are any, else the built-ins.
pub fn select(agent: Agent, files: &[PathBuf], names: &[String]) -> Result<Vec<Source>, Error> {
    let mut from_files = Vec::new();
    for f in files {
        let name = f.display().to_string();
        let text = fs::read_to_string(f).map_err(|e| Error::io(&name, e))?;
        from_files.extend(scenario::parse_file(&text).map_err(|e| Error::msg(&name, e))?);
    }
    let builtin = agent.scenarios();
    if names.is_empty() {
        return Ok(if from_files.is_empty() {
            builtin
        } else {
            from_files
        });
    }
    let mut all: Vec<Source> = Vec::new();
    for s in from_files.into_iter().chain(builtin) {
        if !all.iter().any(|x| x.scenario.name == s.scenario.name) {
            all.push(s);
        }
    }
    names
        .iter()
        .map(|n| {
            all.iter()
                .find(|s| &s.scenario.name == n)
                .cloned()
                .ok_or_else(|| {
                    let names: Vec<&str> = all.iter().map(|s| s.scenario.name.as_str()).collect();
                    Error::msg(
                        "probe: --scenario",
                        format!("no scenario {n:?} (there are: {})", names.join(", ")),
                    )
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(s: &[Source]) -> Vec<&str> {
        s.iter().map(|s| s.scenario.name.as_str()).collect()
    }

    #[test]
    fn files_replace_the_builtins_unless_names_pick_from_both() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mine.json");
        let plain = include_str!("scenarios/plain.json");
        // A scenario of the user's named like a built-in one wins over it.
        let mine = plain.replace("A plain text answer, no tools.", "mine");
        let other = plain.replace("\"plain\"", "\"other\"");
        fs::write(&file, format!("[{mine}, {other}]")).unwrap();
        let files = [file];

        let builtin = select(Agent::Claude, &[], &[]).unwrap();
        assert_eq!(names(&builtin), names(&scenario::builtin()));
        assert_eq!(
            names(&select(Agent::Claude, &files, &[]).unwrap()),
            ["plain", "other"]
        );

        let picked = select(Agent::Claude, &files, &["bash".into(), "plain".into()]).unwrap();
        assert_eq!(names(&picked), ["bash", "plain"]);
        assert_eq!(picked[1].scenario.description, "mine");

        let e = select(Agent::Claude, &files, &["nope".into()])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("probe: --scenario: no scenario \"nope\" (there are: plain, other, bash"),
            "{e}"
        );
        assert!(select(Agent::Claude, &[dir.path().join("missing.json")], &[]).is_err());
    }
}
