//! `probe --serve-only`: one script (a scenario, or a `tests/support/fake_anthropic.py` script)
//! served on loopback for a test, its port also written to a file (atomically), each request
//! appended to a log; with `--agent-home`, an agent CLI's configuration for it written into that
//! home and its environment into `agent.env` there (what a probe run gives the CLI), so a test
//! can run the CLI against it another way (`spawn --agent`).

use std::fs;
use std::path::Path;

use super::api::Api;
use super::scenario::parse_script;
use crate::agent::Agent;
use crate::error::Error;

/// Serve the script at `path` until the returned [`Api`] is dropped; the port also goes to
/// `port_file` (a line, renamed into place, after everything else is ready), and each request to
/// `log` (a JSON line). `prepare`: an agent and its home, where its configuration for this API
/// goes (the current directory trusted as its working directory), and `agent.env`, its
/// environment as `export NAME='VALUE'` lines.
pub fn serve(
    path: &Path,
    port_file: Option<&Path>,
    log: Option<&Path>,
    prepare: Option<(Agent, &Path)>,
) -> Result<Api, Error> {
    let name = path.display().to_string();
    let text = fs::read_to_string(path).map_err(|e| Error::io(&name, e))?;
    let src = parse_script(&text).map_err(|e| Error::msg(&name, e))?;
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
    let api =
        Api::start_logged(&src.scenario, log).map_err(|e| Error::io("probe: loopback API", e))?;
    if let Some((agent, home)) = prepare {
        let work = std::env::current_dir().map_err(|e| Error::io("current directory", e))?;
        let env = agent
            .prepare(home, &work, &api.base_url())
            .map_err(|e| Error::msg("probe: --agent-home", e))?;
        let text: String = env
            .iter()
            .map(|(k, v)| format!("export {k}='{}'\n", v.replace('\'', r"'\''")))
            .collect();
        let file = home.join("agent.env");
        fs::write(&file, text).map_err(|e| Error::io(file.display().to_string(), e))?;
    }
    if let Some(pf) = port_file {
        let tmp = pf.with_extension("tmp");
        fs::write(&tmp, format!("{}\n", api.port()))
            .and_then(|()| fs::rename(&tmp, pf))
            .map_err(|e| Error::io(pf.display().to_string(), e))?;
    }
    Ok(api)
}
