//! Node packages the tests install under `target/` from a pinned lockfile: a package folder of
//! `tests/support/` copied there ([`support_copy`]), and `npm ci` run only when its lockfile
//! changed since the last install ([`ci_once`]). Each caller words its own `SKIP:` reasons.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why [`ci_once`] did not install.
pub enum CiError {
    /// Reading the lockfile or writing the stamp failed.
    Io(String),
    /// npm could not be started.
    Spawn(io::Error),
    /// `npm ci` failed; its stderr.
    Failed(String),
}

/// The files of `tests/support/NAME` copied into `target/NAME` (its folder); the copy's path.
pub fn support_copy(name: &str) -> Result<PathBuf, String> {
    let src = super::root().join("tests/support").join(name);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .join(name);
    fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    for e in fs::read_dir(&src).map_err(|e| e.to_string())? {
        let p = e.map_err(|e| e.to_string())?.path();
        if p.is_file() {
            fs::copy(&p, dir.join(p.file_name().unwrap())).map_err(|e| e.to_string())?;
        }
    }
    Ok(dir)
}

/// `npm ci` in `dir`, unless its `node_modules` were installed from this `package-lock.json`
/// already (a stamp in `node_modules/.boo-lock` holds the lockfile it was installed from).
pub fn ci_once(dir: &Path) -> Result<(), CiError> {
    let lock = fs::read(dir.join("package-lock.json")).map_err(|e| CiError::Io(e.to_string()))?;
    let stamp = dir.join("node_modules/.boo-lock");
    if fs::read(&stamp).ok().as_deref() == Some(&lock[..]) {
        return Ok(());
    }
    let npm = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(dir)
        .output()
        .map_err(CiError::Spawn)?;
    if !npm.status.success() {
        return Err(CiError::Failed(
            String::from_utf8_lossy(&npm.stderr).into_owned(),
        ));
    }
    fs::write(&stamp, &lock).map_err(|e| CiError::Io(e.to_string()))
}
