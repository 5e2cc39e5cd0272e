//! Creating the files boo-normalize writes (audit logs, captures, `--envelope` and `--sse`
//! copies): private by default, and locked while written so a follower can tell a live writer
//! from a dead one.
//!
//! A file boo-normalize creates gets mode 0600 (owner read/write; the umask can only take bits
//! away): these files hold prompts, tool output and model text. A file that already exists keeps
//! its mode, so `chmod 0640 audit.jsonl` once is enough to share a log with a group.
//!
//! The writer of an audit log or a capture holds an exclusive advisory lock (`flock`) on it for
//! the whole run. The lock goes away with the writer's process, however it ends (`kill -9`
//! included), which is how `replay --follow` notices that nobody writes the file any more
//! ([`has_writer`]).

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

/// Options that create a missing file with mode 0600 (where modes exist).
pub fn private() -> OpenOptions {
    let mut o = OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o
}

/// Like `File::create` (write, truncate), but a new file gets mode 0600.
pub fn create(path: &Path) -> io::Result<File> {
    private().write(true).create(true).truncate(true).open(path)
}

/// Create or truncate `path` for a writer that holds its lock while writing (a capture): the
/// file is opened without truncating, locked, and only then emptied, so a second writer is
/// refused before it can destroy the first one's file. Anything but a regular file
/// (`/dev/null`, a FIFO) is opened as it is, without a lock.
pub fn create_locked(path: &Path, what: &str) -> io::Result<File> {
    let f = private()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    if f.metadata()?.is_file() {
        lock_exclusive(&f, what)?;
        f.set_len(0)?;
    }
    Ok(f)
}

/// How long a writer retries a lock that is busy: a follower's [`has_writer`] probe holds a
/// shared lock for a few microseconds, which must not refuse a writer that starts at that moment.
const LOCK_RETRY: Duration = Duration::from_millis(100);

/// Take an exclusive advisory lock on `f` (retrying briefly, see `LOCK_RETRY`); refuse with a
/// clear message when another process holds it. `what` names the file's kind ("audit log").
pub fn lock_exclusive(f: &File, what: &str) -> io::Result<()> {
    let until = Instant::now() + LOCK_RETRY;
    loop {
        match f.try_lock() {
            Ok(()) => return Ok(()),
            Err(TryLockError::WouldBlock) if Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(TryLockError::WouldBlock) => {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    format!("another process is writing this {what} (it holds the lock)"),
                ));
            }
            Err(TryLockError::Error(e)) => return Err(e),
        }
    }
}

/// Whether some process holds the writer's lock on `f` (a file opened for reading). Probes with
/// a shared lock that is released at once; `None` when locks are not supported there.
pub fn has_writer(f: &File) -> Option<bool> {
    match f.try_lock_shared() {
        Ok(()) => {
            let _ = f.unlock();
            Some(false)
        }
        Err(TryLockError::WouldBlock) => Some(true),
        Err(TryLockError::Error(_)) => None,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn new_files_are_private_existing_keep_their_mode() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a");
        create(&p).unwrap();
        assert_eq!(p.metadata().unwrap().permissions().mode() & 0o777, 0o600);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        create(&p).unwrap();
        assert_eq!(p.metadata().unwrap().permissions().mode() & 0o777, 0o640);
    }

    #[test]
    fn lock_is_seen_by_a_follower_and_refuses_a_second_writer() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cap");
        std::fs::write(&p, b"old").unwrap();
        let w = create_locked(&p, "capture").unwrap();
        assert_eq!(p.metadata().unwrap().len(), 0);
        let r = File::open(&p).unwrap();
        assert_eq!(has_writer(&r), Some(true));
        std::fs::write(&p, b"x").unwrap();
        let err = create_locked(&p, "capture").unwrap_err();
        assert!(
            err.to_string()
                .contains("another process is writing this capture")
        );
        assert_eq!(
            p.metadata().unwrap().len(),
            1,
            "refused writer must not truncate"
        );
        drop(w);
        assert_eq!(has_writer(&r), Some(false));
    }
}
