//! `sessions`: list the session transcripts under a `projects` directory.

use std::io::{self, Write};

use boo_normalize::error::Error;
use boo_normalize::exit::Exit;
use boo_normalize::transcript::listing::{self, Filter};
use boo_normalize::transcript::prices::Prices;
use boo_normalize::transcript::session;

use crate::cli::{SessionsArgs, SessionsFormat};

pub fn run(a: SessionsArgs) -> Result<Exit, Error> {
    let prices = match &a.prices {
        Some(p) => Prices::with_file(p)?,
        None => Prices::embedded(),
    };
    let named = a.dir.is_some();
    let root = match a.dir {
        Some(d) => d,
        None => session::projects_root()
            .ok_or_else(|| Error::msg("sessions", "HOME is not set; name the directory"))?,
    };
    let filter = Filter {
        project: a.project,
        since: a
            .since
            .as_deref()
            .map(|s| listing::parse_time(s, false))
            .transpose()?,
        until: a
            .until
            .as_deref()
            .map(|s| listing::parse_time(s, true))
            .transpose()?,
    };
    // No Claude Code history yet (a fresh machine, a CI box): no sessions, as for an empty
    // directory. A directory named on the command line must exist.
    let missing = !root.exists();
    if missing && named {
        return Err(Error::msg(root.display().to_string(), "no such directory"));
    }
    // A project directory (transcripts directly in it) lists its own sessions.
    let (list, warnings) = if missing {
        (Vec::new(), Vec::new())
    } else if session::project_sessions(&root).is_empty() {
        listing::list(&root, &filter)?
    } else {
        listing::list_project(&root, &filter)?
    };
    let mut err = io::stderr().lock();
    for w in &warnings {
        let _ = writeln!(err, "boo-normalize: {}", boo_normalize::error::sanitize(w));
    }
    let text = match a.format {
        SessionsFormat::Json => {
            let mut t = serde_json::to_string_pretty(&listing::to_json(&list, &prices))
                .expect("a JSON value serializes");
            t.push('\n');
            t
        }
        SessionsFormat::Table if list.is_empty() => {
            let _ = writeln!(
                err,
                "boo-normalize: {}",
                listing::empty_note(&root, &filter)
            );
            String::new()
        }
        SessionsFormat::Table => listing::to_table(&list, &prices),
    };
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(Error::io("stdout", e)),
        _ => Ok(Exit::OK),
    }
}
