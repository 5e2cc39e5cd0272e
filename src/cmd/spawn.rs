//! `spawn`: validate the options, refuse credentials in the environment when asked
//! ([`env::refuse_credentials`]), read the prompt ([`command::prompt`]) and run the child split
//! from its guardian ([`worker::run_guarded`]) on this process's stdout and stderr.

use std::io;
use std::os::fd::AsFd;

use boo_normalize::error::Error;
use boo_normalize::exit::Exit;
use boo_normalize::spawn::{command, env, worker};

use crate::cli::SpawnArgs;

pub fn run(a: SpawnArgs) -> Result<Exit, Error> {
    if !boo_normalize::spawn::supported() {
        return Err(Error::msg("spawn", "only supported on Linux"));
    }
    let agent = a.agent();
    let guards = a.guards.config();
    guards.validate().map_err(|m| Error::msg("--enforce", m))?;
    let policy = a.env_policy();
    policy
        .validate_for(agent)
        .map_err(|m| Error::msg("spawn", m))?;
    if a.refuse_api_key {
        let vars: Vec<_> = std::env::vars_os().collect();
        env::refuse_credentials_for(
            agent,
            vars.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str())),
        )?;
    }
    let prompt = command::prompt_for(
        agent,
        a.prompt.as_deref(),
        a.prompt_file.as_deref(),
        &a.claude_args,
        &mut io::stdin(),
    )?;
    command::check_prompt(agent, prompt.as_deref()).map_err(|m| Error::msg("spawn", m))?;
    let run = a.run(prompt, guards, policy);
    let (stdout, stderr) = (io::stdout(), io::stderr());
    let open = || a.stream.plan()?.open();
    worker::run_guarded(run, open, stdout.as_fd(), stderr.as_fd(), &mut io::stderr())
}
