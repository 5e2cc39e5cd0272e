//! Opening a command's inputs: files, or `-` for stdin, each with a readiness probe that tells
//! the pipeline whether a read could block (so output is flushed only when input runs dry).

use std::fs::File;
use std::io;
#[cfg(unix)]
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;

use crate::error::Error;

/// One input, opened.
pub struct Input {
    /// Its name in messages: the path, or `stdin`.
    pub name: String,
    /// The bytes (`Send`: a batch command may read an input on another thread).
    pub reader: Box<dyn io::Read + Send>,
    /// The length of a regular file; `None` for stdin, pipes and devices.
    pub size: Option<u64>,
    /// The regular file `reader` reads (the same handle), for a batch command that reads it
    /// again from its start (`redact`, when a file read ahead must be redacted again in turn).
    pub file: Option<Arc<File>>,
    ready: Readiness,
}

impl Input {
    /// An input read from `reader` that never blocks for long (a transcript session made of
    /// regular files), named `name`, of `size` bytes when known.
    pub fn from_reader(name: String, reader: Box<dyn io::Read + Send>, size: Option<u64>) -> Self {
        #[cfg(unix)]
        let reader = crate::interrupt::guard(reader, None);
        Input {
            name,
            reader,
            size,
            file: None,
            #[cfg(unix)]
            ready: Readiness::Always,
            #[cfg(not(unix))]
            ready: Readiness::Unknown,
        }
    }

    /// The same input read through `wrap` (its name and readiness kept; no longer a plain file).
    pub fn wrapped(
        self,
        wrap: impl FnOnce(Box<dyn io::Read + Send>) -> Box<dyn io::Read + Send>,
    ) -> Self {
        Input {
            reader: wrap(self.reader),
            file: None,
            ..self
        }
    }

    /// A probe answering "is input pending?" without blocking (see
    /// [`crate::pipeline::Pipeline::set_input_ready`]); `None`: unknown, flush whenever the
    /// reader runs dry.
    pub fn ready_probe(&mut self) -> Option<Box<dyn FnMut() -> bool>> {
        std::mem::replace(&mut self.ready, Readiness::Unknown).probe()
    }
}

/// Open every input in order (`-` or none: stdin) before any is read, so that a missing file
/// or a directory fails before any output.
pub fn open_all(files: &[PathBuf]) -> Result<Vec<Input>, Error> {
    let stdin = [PathBuf::from("-")];
    let files = if files.is_empty() { &stdin[..] } else { files };
    let mut inputs = Vec::with_capacity(files.len());
    for f in files {
        let name = f.display().to_string();
        if name == "-" {
            inputs.push(Input {
                name: "stdin".into(),
                ready: Readiness::of_stdin(),
                reader: stdin_reader(),
                size: None,
                file: None,
            });
        } else {
            let file = open_readable(f).map_err(|e| Error::io(&name, e))?;
            let size = file
                .metadata()
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.len());
            let file = Arc::new(file);
            inputs.push(Input {
                size,
                ready: Readiness::of_file(&file),
                reader: file_reader(&file),
                file: size.is_some().then_some(file),
                name,
            });
        }
    }
    Ok(inputs)
}

/// stdin, stopped by a caught signal once [`crate::interrupt::install`] was called.
fn stdin_reader() -> Box<dyn io::Read + Send> {
    #[cfg(unix)]
    {
        crate::interrupt::guard(Box::new(io::stdin()), Some(io::stdin().as_fd()))
    }
    #[cfg(not(unix))]
    {
        Box::new(io::stdin())
    }
}

/// A file input, stopped by a caught signal once [`crate::interrupt::install`] was called.
fn file_reader(file: &Arc<File>) -> Box<dyn io::Read + Send> {
    #[cfg(unix)]
    {
        crate::interrupt::guard(Box::new(Arc::clone(file)), Some(file.as_fd()))
    }
    #[cfg(not(unix))]
    {
        Box::new(Arc::clone(file))
    }
}

/// Open `path` for reading, refusing what opens but can never be read as a stream: a
/// directory (`open` succeeds on one; the first read fails with "Is a directory"), so that it is
/// refused before any output like a missing file.
pub fn open_readable(path: &std::path::Path) -> io::Result<File> {
    let file = File::open(path)?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(is_a_directory());
    }
    Ok(file)
}

/// The OS's "Is a directory" error (EISDIR), worded as a failed read of one would be.
fn is_a_directory() -> io::Error {
    #[cfg(unix)]
    {
        io::Error::from_raw_os_error(nix::errno::Errno::EISDIR as i32)
    }
    #[cfg(not(unix))]
    {
        io::Error::new(io::ErrorKind::IsADirectory, "Is a directory")
    }
}

/// Whether reading an input can block.
enum Readiness {
    /// A regular file: reads never wait.
    #[cfg(unix)]
    Always,
    /// A pipe, terminal or socket: ask `poll` without waiting.
    #[cfg(unix)]
    Poll(OwnedFd),
    /// Unknown: flush whenever the reader runs dry.
    Unknown,
}

impl Readiness {
    #[cfg(unix)]
    fn of_stdin() -> Self {
        Self::of(io::stdin().as_fd())
    }

    #[cfg(unix)]
    fn of_file(f: &File) -> Self {
        Self::of(f.as_fd())
    }

    #[cfg(not(unix))]
    fn of_stdin() -> Self {
        Readiness::Unknown
    }

    #[cfg(not(unix))]
    fn of_file(_: &File) -> Self {
        Readiness::Unknown
    }

    #[cfg(unix)]
    fn of(fd: BorrowedFd<'_>) -> Self {
        let Ok(owned) = fd.try_clone_to_owned() else {
            return Readiness::Unknown;
        };
        let file = File::from(owned);
        match file.metadata() {
            Ok(m) if m.is_file() => Readiness::Always,
            Ok(_) => Readiness::Poll(file.into()),
            Err(_) => Readiness::Unknown,
        }
    }

    fn probe(self) -> Option<Box<dyn FnMut() -> bool>> {
        match self {
            #[cfg(unix)]
            Readiness::Always => Some(Box::new(|| true)),
            #[cfg(unix)]
            Readiness::Poll(fd) => Some(Box::new(move || {
                use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
                let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
                poll(&mut fds, PollTimeout::ZERO).is_ok_and(|n| n > 0)
            })),
            Readiness::Unknown => None,
        }
    }
}
