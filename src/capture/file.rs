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

impl Recording {
    /// Create `path` (truncating it) and write `header`; offsets count from now. A failure
    /// gives the file's name and the cause.
    pub fn create(path: &Path, header: &Header) -> Result<Recording, (String, io::Error)> {
        let name = path.display().to_string();
        let rec = crate::files::create_locked(path, "capture").and_then(|f| {
            Recorder::new(
                BufWriter::with_capacity(256 * 1024, f),
                header,
                Instant::now(),
            )
        });
        match rec {
            Ok(rec) => Ok(Recording { name, rec }),
            Err(e) => Err((name, e)),
        }
    }

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

/// Open the `--record` file, if any, for a `normalize` run (`run_id`: the one the other sinks
/// use; `None`: a fresh one).
pub fn start(path: Option<&Path>, run_id: Option<&str>) -> Result<Option<Recording>, Error> {
    let mut header = Header::now("normalize");
    if let Some(id) = run_id {
        header.run_id = id.to_owned();
    }
    path.map(|p| Recording::create(p, &header))
        .transpose()
        .map_err(|(name, e)| Error::io(name, e))
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
    let r = rec.as_mut()?;
    if !is_capture_error(e) {
        return None;
    }
    let cause = r
        .rec
        .take_error()
        .unwrap_or_else(|| io::Error::other("write failed"));
    Some((r.name.clone(), cause))
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
