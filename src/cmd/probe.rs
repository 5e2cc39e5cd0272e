//! `probe`: list the scenarios, serve one for a test, or sweep a CLI release
//! ([`probe::sweep`]) and compare it with a baseline ([`compare`], as `diff` does).

use std::io::{self, Write};

use boo_normalize::error::Error;
use boo_normalize::exit::Exit;
use boo_normalize::probe::agent::Agent;
use boo_normalize::probe::{self, Probe};
use boo_normalize::profile::compare::compare;

use crate::cli::{DiffArgs, ProbeArgs};

pub fn run(a: ProbeArgs) -> Result<Exit, Error> {
    let agent = Agent::parse(&a.agent).unwrap_or_default();
    if a.list {
        let mut out = io::stdout().lock();
        out.write_all(probe::agent::table(agent).as_bytes())
            .map_err(|e| Error::io("stdout", e))?;
        return Ok(Exit::OK);
    }
    if let Some(script) = &a.serve_only {
        let prepare = a.agent_home.as_deref().map(|h| (agent, h));
        let api = probe::serve::serve(script, a.port_file.as_deref(), a.log.as_deref(), prepare)?;
        let mut out = io::stdout().lock();
        writeln!(out, "PORT={}", api.port())
            .and_then(|()| out.flush())
            .map_err(|e| Error::io("stdout", e))?;
        // Served until killed.
        loop {
            std::thread::park();
        }
    }
    if !boo_normalize::spawn::supported() {
        return Err(Error::msg("probe", "only supported on Linux"));
    }
    let (Some(bin), Some(out)) = (&a.claude_bin, &a.out) else {
        return Err(Error::msg("probe", "--bin and --out are required"));
    };
    let modes: Vec<String> = if a.modes.is_empty() {
        agent.modes().iter().map(|m| (*m).to_owned()).collect()
    } else {
        a.modes.clone()
    };
    if let Some(bad) = modes.iter().find(|m| !agent.modes().contains(&m.as_str())) {
        return Err(Error::msg(
            "probe: --modes",
            format!(
                "{} has no mode {bad:?} (it has: {})",
                agent.name(),
                agent.modes().join(", ")
            ),
        )
        .with_exit(Exit::ERROR));
    }
    let sources = probe::sweep::select(agent, &a.scenario_file, &a.scenarios)?;
    let p = Probe {
        agent,
        claude_bin: bin.clone(),
        out: out.clone(),
        modes,
        keep_going: a.keep_going,
        timeout: a.timeout,
    };
    probe::sweep(&p, &sources, &mut io::stderr())?;
    let Some(base) = &a.baseline else {
        return Ok(Exit::OK);
    };
    let diff = DiffArgs {
        old: base.clone(),
        new: out.clone(),
        format: a.diff_format,
        fail_on: a.fail_on,
        allow: a.allow.clone(),
        verbose: false,
    };
    let failed = compare(&diff.options(), &mut io::stdout().lock(), &mut io::stderr())?;
    Ok(if failed {
        super::diff::EXIT_DRIFT
    } else {
        Exit::OK
    })
}
