//! `spawn`: resolve the binary, build argv and environment, run the child under supervision
//! through the pipeline, and map the outcome to an exit status.

use std::fs;
use std::io::{self, Read};

use boo_normalize::error::{EXIT_OK, EXIT_STRICT, Error};
use boo_normalize::normalize::Normalizer;
use boo_normalize::pipeline::Pipeline;
use boo_normalize::redact::Redactor;
use boo_normalize::spawn::command::{self, ArgvOptions, ResolveError};
use boo_normalize::spawn::drive::{PipelineDriver, StderrMode};
use boo_normalize::spawn::env::{EnvPolicy, credentials_in};
use boo_normalize::spawn::guard::{GuardConfig, Guards};
use boo_normalize::spawn::outcome::{EXIT_CANNOT_EXECUTE, EXIT_NOT_FOUND};
use boo_normalize::spawn::{Limits, RunError, Spec, procs, supervise};

use crate::cli::SpawnArgs;
use crate::cmd::record;
use crate::output::io_error;

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

pub fn run(a: SpawnArgs) -> Result<u8, Error> {
    if !boo_normalize::spawn::supported() {
        return Err(Error::msg("spawn", "only supported on Linux"));
    }
    let guards = GuardConfig {
        allow_tools: a.allow_tools.clone(),
        max_tool_calls: a.max_tool_calls,
        max_repeat_calls: a.max_repeat_calls,
        max_output_bytes: a.max_output_bytes,
        enforce: a.enforce,
    };
    if guards.enforce && guards.is_empty() {
        return Err(Error::msg(
            "--enforce",
            "needs a guard (--allow-tools, --max-tool-calls, --max-repeat-calls, --max-output-bytes)",
        ));
    }
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
    let path = std::env::var_os("PATH");
    let program = command::resolve_program(a.claude_bin.as_deref(), path.as_deref()).map_err(
        |e| match e {
            ResolveError::NotFound(m) => Error::msg("spawn", m).with_exit(EXIT_NOT_FOUND),
            ResolveError::NotExecutable(m) => Error::msg("spawn", m).with_exit(EXIT_CANNOT_EXECUTE),
        },
    )?;
    let prompt = read_prompt(&a)?;
    let inv = command::build(
        &a.claude_args,
        prompt.as_deref(),
        &ArgvOptions {
            partial: !a.no_partial,
            argv_max: a.prompt_argv_max,
        },
    );
    let spec = Spec {
        program: program.clone(),
        args: inv.args,
        env: policy.build(std::env::vars_os()),
        stdin: inv.stdin,
        max_line: a.stream.envelope.max_line_bytes,
    };
    let limits = Limits {
        timeout: a.timeout,
        idle_timeout: a.idle_timeout,
        grace: a.grace,
        keep_background: a.keep_background,
        keep_alive: a.keep_alive,
    };
    procs::become_subreaper().map_err(|e| Error::io("prctl(PR_SET_CHILD_SUBREAPER)", e.into()))?;

    let opts = a.stream.envelope.options();
    let out = &a.stream.output;
    let sinks = out.sinks(io::stdout(), &out.run_id())?;
    let mut p =
        Pipeline::new(Normalizer::new(opts), sinks).line_buffered(a.stream.envelope.line_buffered);
    let engine = if a.stream.redact.enabled() {
        Some(super::redact::engine(&a.stream.redact.rules)?)
    } else {
        None
    };
    if let Some(e) = &engine {
        p = p.transform(Box::new(Redactor::new(e.clone())));
    }
    let stderr_mode = if a.stderr_events {
        StderrMode::Events
    } else {
        StderrMode::Pass
    };
    let mut driver = PipelineDriver::new(&mut p, Guards::new(guards), stderr_mode, io::stderr());
    if let Some(e) = &engine {
        driver = driver.rewrite_stderr(Box::new(Redactor::new(e.clone())));
    }
    let mut rec = record::spawn::start(a.record.as_deref(), &spec)?;
    if let (Some(r), Some(e)) = (rec.as_mut(), &engine) {
        r.redact(e);
    }
    let mut tap = record::spawn::tap(&mut rec, &mut driver);
    let outcome = supervise(&spec, &limits, &mut tap).map_err(|e| match e {
        RunError::Output(e) => {
            record::failed(&mut rec, &e).unwrap_or_else(|| io_error(e, "stdout"))
        }
        RunError::Start(e) => {
            let code = if e.kind() == io::ErrorKind::NotFound {
                EXIT_NOT_FOUND
            } else {
                EXIT_CANNOT_EXECUTE
            };
            Error::io(program.display().to_string(), e).with_exit(code)
        }
    })?;
    let last_ok = driver.last_turn_ok();
    let end_at = std::time::Instant::now();
    p.finish(&outcome.end_info())
        .map_err(|e| io_error(e, "stdout"))?;
    record::spawn::finish(rec, &outcome, p.normalizer().cli_version(), end_at)?;
    let code = outcome.exit_status(last_ok);
    if a.stream.envelope.strict && code == EXIT_OK && super::strict_failed(p.stats()) {
        return Ok(EXIT_STRICT);
    }
    Ok(code)
}
