//! `acp`: validate, split off the guardian, and serve ACP on stdin/stdout ([`acp::serve`]).

use std::io::{self, Write};
use std::sync::Mutex;

use boo_normalize::acp::{self, Config};
use boo_normalize::error::Error;
use boo_normalize::exit::Exit;
use boo_normalize::pipeline::setup::Plan;
use boo_normalize::pipeline::setup::Setup;
use boo_normalize::sink::registry::Outputs;
use boo_normalize::spawn::{guardian, procs};

use crate::cli::AcpArgs;

pub fn run(a: AcpArgs) -> Result<Exit, Error> {
    if !boo_normalize::spawn::supported() {
        return Err(Error::msg("acp", "only supported on Linux"));
    }
    let guards = a.guards.config();
    guards.validate().map_err(|m| Error::msg("--enforce", m))?;
    let policy = a.env_policy();
    policy.validate().map_err(|m| Error::msg("acp", m))?;
    let plan = Plan {
        setup: Setup {
            outputs: Outputs {
                audit: a.audit.clone(),
                envelope: a.envelope.clone(),
                otlp_endpoint: a.otlp_endpoint.clone(),
                ..Outputs::default()
            },
            ..Setup::default()
        },
        redact: a.redact.options(),
        continue_audit: false,
    };
    let setup = plan.open()?;
    let parent: Vec<_> = std::env::vars_os().collect();
    let env = policy.build(parent.iter().cloned());
    let passed: Vec<String> = env
        .iter()
        .filter_map(|(k, _)| k.to_str())
        .filter(|k| acp_provider(k))
        .map(str::to_owned)
        .collect();
    let mut err = io::stderr();
    if !passed.is_empty() {
        let _ = writeln!(
            err,
            "boo-normalize: acp: passed to claude (names only): {} (--no-provider-env: not by default)",
            passed.join(", ")
        );
    }
    if let Some(line) = boo_normalize::spawn::env::Removed::between(&parent, &env).notice() {
        let _ = writeln!(err, "{line}");
    }
    // The process the client started becomes the guardian: a SIGKILL of it still kills every
    // session's CLI and what it started.
    guardian::split().map_err(|e| Error::io("acp: fork", e))?;
    procs::become_subreaper().map_err(|e| Error::io("prctl(PR_SET_CHILD_SUBREAPER)", e.into()))?;
    // The audit log and the envelope file are opened (the log locked) once, by the process
    // that serves; every session writes to them.
    let tees = acp::tees::Tees::open(&setup.outputs)?;
    let cfg = Config {
        claude_bin: a.claude_bin.clone(),
        claude_args: a.claude_args.clone(),
        env,
        guards,
        limits: a.limits(),
        envelope: setup.envelope.clone(),
        setup,
        cancel_wait: a.cancel_wait,
        log: Mutex::new(Box::new(io::stderr())),
        tees,
    };
    acp::serve(cfg, io::stdin(), Box::new(io::stdout()))?;
    Ok(Exit::OK)
}

fn acp_provider(name: &str) -> bool {
    crate::cli::acp::PROVIDER_VARS
        .iter()
        .any(|p| match p.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *p,
        })
}
