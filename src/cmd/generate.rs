//! `generate-man` (hidden) and `completions`: the pages and scripts `cli::man` renders, written
//! to a directory or to stdout.

use std::io::Write;
use std::path::Path;

use boo_normalize::error::Error;
use boo_normalize::exit::Exit;

use crate::cli::{Shell, man};

/// Write `boo-normalize.1` and one page per subcommand into `dir`.
pub fn man(dir: &Path) -> Result<Exit, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display().to_string(), e))?;
    for (name, page) in man::pages() {
        let path = dir.join(name);
        std::fs::write(&path, page).map_err(|e| Error::io(path.display().to_string(), e))?;
    }
    Ok(Exit::OK)
}

/// Print a completion script for `shell`.
pub fn completions(shell: Shell) -> Result<Exit, Error> {
    let mut out = std::io::stdout().lock();
    out.write_all(&man::completion(shell))
        .and_then(|()| out.flush())
        .map_err(|e| Error::io("stdout", e))?;
    Ok(Exit::OK)
}
