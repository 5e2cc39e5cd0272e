//! `probe --serve-only`: one script (a scenario, or a `tests/support/fake_anthropic.py` script)
//! served on loopback for a test, its port also written to a file (atomically), each request
//! appended to a log.

use std::fs;
use std::path::Path;

use super::api::Api;
use super::scenario::parse_script;
use crate::error::Error;

/// Serve the script at `path` until the returned [`Api`] is dropped; the port also goes to
/// `port_file` (a line, renamed into place), and each request to `log` (a JSON line).
pub fn serve(path: &Path, port_file: Option<&Path>, log: Option<&Path>) -> Result<Api, Error> {
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
    if let Some(pf) = port_file {
        let tmp = pf.with_extension("tmp");
        fs::write(&tmp, format!("{}\n", api.port()))
            .and_then(|()| fs::rename(&tmp, pf))
            .map_err(|e| Error::io(pf.display().to_string(), e))?;
    }
    Ok(api)
}
