//! `--record FILE`: a capture written next to the normal output (normalize now; spawn wires the
//! same [`Recording`] to its stdout/stderr lines and exit status).

use std::fs::File;
use std::io::{self, BufWriter, Read};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use boo_normalize::capture::record::{Recorder, Tee, is_capture_error};
use boo_normalize::capture::{End, Header};
use boo_normalize::clock::{ManualClock, Stamp};
use boo_normalize::error::Error;
use boo_normalize::normalize::EndInfo;
use boo_normalize::redact::{Engine, Redactor};

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
        let rec = boo_normalize::files::create_locked(path, "capture").and_then(|f| {
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
pub fn start_normalize(
    path: Option<&Path>,
    run_id: Option<&str>,
) -> Result<Option<Recording>, Error> {
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
pub fn finish_normalize(
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

/// `spawn --record`: the capture of a supervised child.
#[cfg(unix)]
pub mod spawn {
    use std::io;
    use std::path::Path;
    use std::time::Instant;

    use boo_normalize::capture::{End, Header};
    use boo_normalize::error::Error;
    use boo_normalize::normalize::EndInfo;
    use boo_normalize::read::Line;
    use boo_normalize::spawn::procs::{Ended, signal_name};
    use boo_normalize::spawn::{Driver, Outcome, Spec};

    use super::Recording;

    /// Open the `--record` file, if any, for a run of `spec` (call right before starting it).
    /// A failure gives the file's name and the cause.
    pub fn start(
        path: Option<&Path>,
        spec: &Spec,
    ) -> Result<Option<Recording>, (String, io::Error)> {
        let Some(path) = path else { return Ok(None) };
        let mut header = Header::now("spawn");
        let mut argv = vec![spec.program.to_string_lossy().into_owned()];
        argv.extend(spec.args.iter().map(|a| a.to_string_lossy().into_owned()));
        header.argv = Some(argv);
        header.stdin.clone_from(&spec.stdin);
        Recording::create(path, &header).map(Some)
    }

    /// A driver that records every line before handing it on.
    pub struct Tap<'d> {
        inner: &'d mut dyn Driver,
        rec: Option<&'d mut Recording>,
    }

    /// `inner`, recorded when recording.
    pub fn tap<'d>(rec: &'d mut Option<Recording>, inner: &'d mut dyn Driver) -> Tap<'d> {
        Tap {
            inner,
            rec: rec.as_mut(),
        }
    }

    impl Tap<'_> {
        /// A failed capture write stops the run like a failed output write (the supervisor
        /// reports it as an output error; [`Recording::finish`] names the file).
        /// After a failure nothing more is recorded (the recorder keeps the cause).
        fn record(&mut self, f: impl FnOnce(&mut Recording) -> io::Result<()>) -> io::Result<()> {
            let Some(r) = self.rec.as_mut() else {
                return Ok(());
            };
            let res = f(r);
            if res.is_err() {
                self.rec = None;
            }
            res
        }
    }

    impl Driver for Tap<'_> {
        fn line(&mut self, line: &Line<'_>) -> io::Result<Option<&'static str>> {
            let recorded = self.record(|r| r.rec.stdout_framed(line, Instant::now()));
            let stop = self.inner.line(line);
            recorded.and(stop)
        }

        fn stderr(&mut self, line: &[u8], truncated: bool) -> io::Result<()> {
            let recorded = self.record(|r| r.rec.stderr_line(line, truncated, Instant::now()));
            recorded.and(self.inner.stderr(line, truncated))
        }

        fn idle(&mut self) -> io::Result<()> {
            let recorded = self.record(|r| r.rec.flush());
            recorded.and(self.inner.idle())
        }

        fn keep_alive(&mut self) -> io::Result<()> {
            self.inner.keep_alive()
        }

        fn ready(&mut self) -> bool {
            self.inner.ready()
        }

        fn tool_running_since(&self) -> Option<Instant> {
            self.inner.tool_running_since()
        }

        fn stall(&mut self, quiet: std::time::Duration) -> io::Result<()> {
            self.inner.stall(quiet)
        }
    }

    /// Write the end record: the child's status, and the `run.end` members the live run wrote.
    pub fn finish(
        rec: Option<Recording>,
        outcome: &Outcome,
        run_end: EndInfo,
        cli_version: Option<&str>,
        at: Instant,
    ) -> Result<(), Error> {
        let Some(r) = rec else { return Ok(()) };
        let (exit_code, signal) = match outcome.ended {
            Some(Ended::Code(c)) => (Some(c), None),
            Some(Ended::Signal(s)) => (None, Some(signal_name(s))),
            None => (None, None),
        };
        let end = End {
            at_us: 0,
            exit_code,
            signal,
            cli_version: cli_version.map(str::to_owned),
            run_end,
        };
        r.finish(end, at)
    }
}
