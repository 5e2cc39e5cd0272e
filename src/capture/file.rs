//! `--record FILE`: a capture file written next to the normal output of a run. `normalize` tees
//! its input into it; `spawn` records the child's lines and exit status through
//! `spawn::tap`.

use std::fs::File;
use std::io::{self, BufWriter, Read};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use super::record::{Recorder, Tee, is_capture_error};
use super::{End, Header};
use crate::clock::{ManualClock, Stamp};
use crate::error::Error;
use crate::normalize::EndInfo;
use crate::redact::{Engine, Redactor};

/// An open capture file.
pub struct Recording {
    name: String,
    rec: Recorder<BufWriter<File>>,
}

/// A capture file created (truncated, locked) whose header is not written yet: opening is
/// checked with the other outputs, before the run; the header's write is the run's first.
pub struct Opened {
    name: String,
    file: File,
}

impl Opened {
    /// Create `path` (truncating it, after taking its lock). A failure gives the file's name
    /// and the cause.
    pub fn create(path: &Path) -> Result<Opened, Error> {
        let name = path.display().to_string();
        match crate::files::create_locked(path, "capture") {
            Ok(file) => Ok(Opened { name, file }),
            Err(e) => Err(Error::io(name, e)),
        }
    }

    /// Write `header`; offsets count from now. A failure (a full disk) is a failed sink: the
    /// file's name and the cause.
    pub fn start(self, header: &Header) -> Result<Recording, (String, io::Error)> {
        let w = BufWriter::with_capacity(256 * 1024, self.file);
        match Recorder::new(w, header, Instant::now()) {
            Ok(rec) => Ok(Recording {
                name: self.name,
                rec,
            }),
            Err(e) => Err((self.name, e)),
        }
    }
}

impl Recording {
    /// Record lines as `--redact` rewrites them (separate redactor state for stdout and
    /// stderr, same key, so placeholders match the envelope's).
    pub fn redact(&mut self, engine: &Arc<Engine>) {
        self.rec.rewrite(
            Box::new(Redactor::new(engine.clone())),
            Box::new(Redactor::new(engine.clone())),
        );
    }

    /// The recorded time of instant `at` (µs since the start, wall clock µs): set the audit
    /// clock to it before `Pipeline::finish` and pass the same `at` to [`Recording::finish`].
    pub fn time_of(&self, at: Instant) -> (u64, i64) {
        self.rec.time_of(at)
    }

    /// The recorder, for drivers that record lines themselves (`spawn`).
    pub fn recorder(&mut self) -> &mut Recorder<BufWriter<File>> {
        &mut self.rec
    }

    /// When `e` is a failed write of this capture: its name and the real cause.
    pub fn failed(&mut self, e: &io::Error) -> Option<(String, io::Error)> {
        if !is_capture_error(e) {
            return None;
        }
        let cause = self
            .rec
            .take_error()
            .unwrap_or_else(|| io::Error::other("write failed"));
        Some((self.name.clone(), cause))
    }

    /// Write the end record (dated `at`) and close the file.
    pub fn finish(mut self, end: End, at: Instant) -> Result<(), Error> {
        if let Some(e) = self.rec.take_error() {
            return Err(Error::io(&self.name, e));
        }
        self.rec
            .end(end, at)
            .map(drop)
            .map_err(|e| Error::io(&self.name, e))
    }
}

/// Create the `--record` file, if any (a failure: exit 2, before any output).
pub fn open(path: Option<&Path>) -> Result<Option<Opened>, Error> {
    path.map(Opened::create).transpose()
}

/// Start the opened `--record` file, if any, for a `normalize` run (`run_id`: the one the other
/// sinks use; `None`: a fresh one). A failure gives the file's name and the cause.
pub fn start(
    opened: Option<Opened>,
    run_id: Option<&str>,
) -> Result<Option<Recording>, (String, io::Error)> {
    let mut header = Header::now("normalize");
    if let Some(id) = run_id {
        header.run_id = id.to_owned();
    }
    opened.map(|o| o.start(&header)).transpose()
}

/// `src`, recorded when recording; `clock` is set to each line's recorded time (the pipeline's
/// clock while recording, so the live audit log carries the capture's times).
pub fn tee<'r>(
    rec: &'r mut Option<Recording>,
    src: Box<dyn Read + 'r>,
    clock: &ManualClock,
) -> Box<dyn Read + 'r> {
    match rec {
        Some(r) => {
            let clock = clock.clone();
            Box::new(Tee::new(src, &mut r.rec).on_time(move |at, unix| {
                clock.set(Stamp {
                    unix_us: unix,
                    mono_us: at,
                })
            }))
        }
        None => src,
    }
}

/// When `e` is a failed capture write: the capture file's name and the real cause.
pub fn failed(rec: &mut Option<Recording>, e: &io::Error) -> Option<(String, io::Error)> {
    rec.as_mut()?.failed(e)
}

/// Close a `normalize` recording: the run ended at `at` as `end` says.
pub fn finish(
    rec: Option<Recording>,
    cli_version: Option<&str>,
    end: &EndInfo,
    at: Instant,
) -> Result<(), Error> {
    let Some(r) = rec else { return Ok(()) };
    let end = End {
        cli_version: cli_version.map(str::to_owned),
        run_end: end.clone(),
        ..Default::default()
    };
    r.finish(end, at)
}
