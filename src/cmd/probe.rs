//! `probe`: pick the scenarios, check the CLI, run every scenario in every mode under the
//! spawn supervisor, write the profile and the summary, and diff against a baseline.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io::{self, Write};
use std::path::PathBuf;

use boo_normalize::error::Error;
use boo_normalize::exit::Exit;
use boo_normalize::probe::summary::SUMMARY_VERSION;
use boo_normalize::probe::{self, PROFILE_FILE, RunFailure, SUMMARY_FILE, Setup, Source, Summary};
use boo_normalize::profile::input;
use boo_normalize::spawn::command::{ResolveError, resolve_program};
use boo_normalize::spawn::{guardian, procs};

use crate::cli::{DiffArgs, ProbeArgs};

pub fn run(a: ProbeArgs) -> Result<Exit, Error> {
    if a.list {
        return list();
    }
    if let Some(script) = &a.serve_only {
        return serve_only(script, a.port_file.as_deref(), a.log.as_deref());
    }
    if !boo_normalize::spawn::supported() {
        return Err(Error::msg("probe", "only supported on Linux"));
    }
    let (Some(bin), Some(out)) = (&a.claude_bin, &a.out) else {
        return Err(Error::msg("probe", "--claude-bin and --out are required"));
    };
    let sources = select(&a)?;
    let path =
        std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
    let claude = resolve_program(Some(bin.as_os_str()), Some(&path)).map_err(|e| match e {
        ResolveError::NotFound(m) => {
            Error::msg("probe: --claude-bin", m).with_exit(Exit::NOT_FOUND)
        }
        ResolveError::NotExecutable(m) => {
            Error::msg("probe: --claude-bin", m).with_exit(Exit::CANNOT_EXECUTE)
        }
    })?;
    // Runs start in a working directory of their own: a relative path must not change meaning.
    let claude = std::path::absolute(&claude).map_err(|e| Error::io("probe: --claude-bin", e))?;
    probe::prepare_out(out)?;
    // As `spawn` does: a guardian that outlives nothing of the run, and every orphan of the CLI
    // re-parented to the worker so that the cleanup after each run finds it.
    guardian::split().map_err(|e| Error::io("probe: fork", e))?;
    let _ = procs::become_subreaper();
    let setup = Setup {
        claude: claude.clone(),
        out: out.clone(),
        timeout: a.timeout,
        path,
    };
    let mut err = io::stderr();
    let cli_version = probe::run::version(&setup).map_err(|f| failure("claude --version", f))?;
    let _ = writeln!(
        err,
        "boo-normalize: probe: {} ({}), API on 127.0.0.1, output in {}",
        claude.display(),
        cli_version.as_deref().unwrap_or("version unknown"),
        out.display()
    );
    let mut summary = Summary {
        summary_version: SUMMARY_VERSION,
        generator: format!("boo-normalize {}", env!("CARGO_PKG_VERSION")),
        claude_bin: claude.display().to_string(),
        cli_version,
        modes: a.modes.clone(),
        runs: Vec::new(),
        failed: 0,
        not_run: Vec::new(),
        unknown_requests: BTreeMap::new(),
    };
    let plan: Vec<(&Source, &str)> = sources
        .iter()
        .flat_map(|s| {
            a.modes
                .iter()
                .filter(|m| s.scenario.modes.as_ref().is_none_or(|ms| ms.contains(m)))
                .map(move |m| (s, m.as_str()))
        })
        .collect();
    let mut first_failure: Option<Error> = None;
    for (i, (src, mode)) in plan.iter().enumerate() {
        if first_failure.is_some() && !a.keep_going {
            summary.not_run.extend(
                plan[i..]
                    .iter()
                    .map(|(s, m)| format!("{}.{m}", s.scenario.name)),
            );
            break;
        }
        let id = format!("{}.{mode}", src.scenario.name);
        let r = match probe::run::run(&setup, src, mode) {
            Ok(r) => r,
            Err(RunFailure::Interrupted(sig)) => {
                summary.not_run.extend(
                    plan[i..]
                        .iter()
                        .map(|(s, m)| format!("{}.{m}", s.scenario.name)),
                );
                finish(&summary, out)?;
                return Err(
                    Error::msg("probe", format!("stopped by {}", procs::signal_name(sig)))
                        .with_exit(Exit::signal(sig)),
                );
            }
            Err(f) => {
                let e = failure(&id, f);
                finish(&summary, out)?;
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
            let _ = writeln!(err, "boo-normalize: {e}");
            first_failure.get_or_insert(e);
        } else {
            let _ = writeln!(
                err,
                "boo-normalize: probe: {id}: ok ({} lines, {} s)",
                r.lines, r.seconds
            );
        }
        summary.runs.push(r);
    }
    finish(&summary, out)?;
    let _ = write!(err, "{}", summary.table());
    if let Some(e) = first_failure {
        return Err(if a.keep_going && summary.failed > 1 {
            Error::msg(
                "probe",
                format!(
                    "{} of {} runs failed (see above and {})",
                    summary.failed,
                    summary.runs.len(),
                    out.join(SUMMARY_FILE).display()
                ),
            )
            .with_exit(Exit::PROBE_FAILED)
        } else {
            e
        });
    }
    match &a.baseline {
        Some(base) => super::diff::run(DiffArgs {
            old: base.clone(),
            new: out.clone(),
            format: a.diff_format,
            fail_on: a.fail_on,
            allow: a.allow.clone(),
            verbose: false,
        }),
        None => Ok(Exit::OK),
    }
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
        RunFailure::Interrupted(sig) => {
            Error::msg(ctx, format!("stopped by {}", procs::signal_name(sig)))
                .with_exit(Exit::signal(sig))
        }
    }
}

/// Write `summary.json` and, when there are captures, `profile.json`.
fn finish(summary: &Summary, out: &std::path::Path) -> Result<(), Error> {
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
    let profile = input::load(&captures, false, &mut std::io::stderr())?;
    let path = out.join(PROFILE_FILE);
    fs::write(&path, profile.to_json()).map_err(|e| Error::io(path.display().to_string(), e))
}

/// The scenarios to run: the built-ins and those of `--scenario-file`, narrowed by
/// `--scenario`.
fn select(a: &ProbeArgs) -> Result<Vec<Source>, Error> {
    let mut from_files = Vec::new();
    for f in &a.scenario_file {
        let name = f.display().to_string();
        let text = fs::read_to_string(f).map_err(|e| Error::io(&name, e))?;
        from_files.extend(probe::scenario::parse_file(&text).map_err(|e| Error::msg(&name, e))?);
    }
    let builtin = probe::scenario::builtin();
    let mut all: Vec<Source> = Vec::new();
    for s in from_files.iter().chain(builtin.iter()) {
        if !all.iter().any(|x| x.scenario.name == s.scenario.name) {
            all.push(s.clone());
        }
    }
    if a.scenarios.is_empty() {
        return Ok(if from_files.is_empty() {
            builtin
        } else {
            from_files
        });
    }
    a.scenarios
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

fn list() -> Result<Exit, Error> {
    let mut out = io::stdout().lock();
    for s in probe::scenario::builtin() {
        let modes = s
            .scenario
            .modes
            .as_ref()
            .map_or("stream,partial".to_owned(), |m| m.join(","));
        writeln!(
            out,
            "{:<18} {:<15} {}",
            s.scenario.name, modes, s.scenario.description
        )
        .map_err(|e| Error::io("stdout", e))?;
    }
    Ok(Exit::OK)
}

/// Serve a script (a scenario, or a `fake_anthropic.py` script) until killed.
fn serve_only(
    path: &std::path::Path,
    port_file: Option<&std::path::Path>,
    log: Option<&std::path::Path>,
) -> Result<Exit, Error> {
    let name = path.display().to_string();
    let text = fs::read_to_string(path).map_err(|e| Error::io(&name, e))?;
    let src = probe::scenario::parse_script(&text).map_err(|e| Error::msg(&name, e))?;
    let log = match log {
        Some(p) => Some(
            fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| Error::io(p.display().to_string(), e))?,
        ),
        None => None,
    };
    let api = probe::api::Api::start_logged(&src.scenario, log)
        .map_err(|e| Error::io("probe: loopback API", e))?;
    if let Some(pf) = port_file {
        let tmp = pf.with_extension("tmp");
        fs::write(&tmp, format!("{}\n", api.port()))
            .and_then(|()| fs::rename(&tmp, pf))
            .map_err(|e| Error::io(pf.display().to_string(), e))?;
    }
    let mut out = io::stdout().lock();
    writeln!(out, "PORT={}", api.port()).map_err(|e| Error::io("stdout", e))?;
    out.flush().map_err(|e| Error::io("stdout", e))?;
    loop {
        std::thread::park();
    }
}
