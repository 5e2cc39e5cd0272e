//! `probe`: check an agent CLI release (`claude`, or Codex, Gemini CLI, Qwen Code, OpenCode,
//! Copilot CLI) for format drift without an API key. The CLI runs scripted scenarios against a
//! model API that boo-normalize serves itself on loopback; its raw JSON output is kept per
//! scenario and mode, profiled, and summarized.
//!
//! - [`agent`]: what differs between the agent CLIs (configuration, command line, scenarios,
//!   the line that ends a run);
//! - [`scenario`]: the scenario format and the built-in scenarios;
//! - [`script`]: routing a request to a scripted reply;
//! - [`sse`]: the API's message, event stream and error shapes;
//! - [`api`]: the loopback HTTP server;
//! - [`answer`]: how that server answers one request;
//! - [`wire`]: the other model APIs it speaks (OpenAI Responses, Chat Completions, Gemini);
//! - [`run`]: one scenario in one mode against the real CLI;
//! - [`summary`]: the per-run reports, `summary.json` and the table;
//! - [`mod@sweep`]: a whole probe, every scenario in every mode, and its verdict;
//! - [`serve`]: `--serve-only`, one script on loopback for a test.

pub mod agent;
pub mod answer;
pub mod api;
pub mod run;
pub mod scenario;
pub mod script;
pub mod serve;
pub mod sse;
pub mod summary;
pub mod sweep;
pub mod wire;

use std::fs;
use std::path::Path;

use crate::error::Error;

pub use run::{RunFailure, Setup};
pub use scenario::{MODES, Source};
pub use summary::{RunReport, Summary};
pub use sweep::{Probe, sweep};

/// Files a probe writes besides the captures.
pub const SUMMARY_FILE: &str = "summary.json";
/// The profile of the captures.
pub const PROFILE_FILE: &str = "profile.json";

/// Make `dir` ready for a probe: created if missing; a directory a probe wrote before (it has
/// the probe's `summary.json`) is emptied of its captures, stderr files, summary and profile;
/// any other directory must hold no captures (they would mix into `diff`).
pub fn prepare_out(dir: &Path) -> Result<(), Error> {
    let ctx = || dir.display().to_string();
    fs::create_dir_all(dir).map_err(|e| Error::io(ctx(), e))?;
    let summary = dir.join(SUMMARY_FILE);
    if let Ok(text) = fs::read_to_string(&summary) {
        let old: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        if old.get("summary_version").is_none() {
            return Err(Error::msg(
                ctx(),
                "holds a summary.json that no probe wrote; give an empty or new directory",
            ));
        }
        // Every capture a probe writes, also of a run it did not list (it was interrupted).
        for e in fs::read_dir(dir)
            .map_err(|e| Error::io(ctx(), e))?
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            let ours = MODES.iter().any(|m| {
                name.ends_with(&format!(".{m}.ndjson"))
                    || name.ends_with(&format!(".{m}.stderr.txt"))
            });
            if ours && e.path().is_file() {
                let _ = fs::remove_file(e.path());
            }
        }
        let _ = fs::remove_file(&summary);
        let _ = fs::remove_file(dir.join(PROFILE_FILE));
    }
    let found = crate::profile::input::expand(&[dir.to_owned()]);
    if let Ok(files) = found
        && let Some(f) = files.first()
    {
        return Err(Error::msg(
            ctx(),
            format!(
                "already holds captures that no probe listed (e.g. {}); give an empty or new directory",
                f.path.display()
            ),
        ));
    }
    Ok(())
}
