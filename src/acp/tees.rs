//! The outputs of a session's runs besides ACP: `--envelope` and `--audit`, each one file for
//! every session of the process (opened once, written whole lines / whole records at a time, so
//! sessions running at once never tear each other's lines), and `--otlp-endpoint`, one trace
//! per prompt.

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::Error;
use crate::sink::audit::runs::{Log, Run};
use crate::sink::registry::Outputs;
use crate::sink::{Ndjson, Sink};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The files every session writes to, open.
#[derive(Default)]
pub struct Tees {
    /// `--otlp-endpoint` (and what else of the outputs a session's runs build themselves).
    outputs: Outputs,
    envelope: Option<Arc<Mutex<File>>>,
    audit: Option<Arc<Log>>,
}

impl Tees {
    /// Open `outputs`' `--envelope` (created anew) and `--audit` (appended to, locked while
    /// this process lives); `--otlp-endpoint` is checked when a session starts.
    pub fn open(outputs: &Outputs) -> Result<Tees, Error> {
        let named = |p: &PathBuf, e: io::Error| Error::io(p.display().to_string(), e);
        let envelope = match &outputs.envelope {
            Some(p) => Some(Arc::new(Mutex::new(
                crate::files::create(p).map_err(|e| named(p, e))?,
            ))),
            None => None,
        };
        let audit = match &outputs.audit {
            Some(p) => Some(Log::open(p, outputs.fsync).map_err(|e| named(p, e))?),
            None => None,
        };
        let outputs = Outputs {
            otlp_endpoint: outputs.otlp_endpoint.clone(),
            otlp_content: outputs.otlp_content,
            otlp_service_name: outputs.otlp_service_name.clone(),
            ..Outputs::default()
        };
        Ok(Tees {
            outputs,
            envelope,
            audit,
        })
    }

    /// Session `id`'s run in the audit log (`None`: no `--audit`).
    pub fn audit_run(&self, id: &str) -> Option<Arc<Run>> {
        self.audit.as_ref().map(|log| Run::new(log.clone(), id))
    }

    /// The sinks of a CLI run of session `id` (its run id): the OTLP traces one per prompt
    /// (numbered by `turns`, the session's), its envelope lines, its run in the audit log.
    pub fn sinks(
        &self,
        id: &str,
        turns: &Arc<AtomicU32>,
        audit: Option<&Arc<Run>>,
    ) -> Result<Vec<Box<dyn Sink>>, Error> {
        let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
        if self.outputs.otlp_endpoint.is_some() {
            let mut o = self.outputs.clone();
            o.otlp_per_turn = Some(turns.clone());
            sinks = o.sinks(io::sink(), id)?;
            // The first is stdout's format: stdout is the ACP connection.
            sinks.remove(0);
        }
        if let Some(f) = &self.envelope {
            sinks.push(Box::new(Ndjson::new(Lines {
                file: f.clone(),
                buf: Vec::new(),
            })));
        }
        if let Some(run) = audit {
            sinks.push(Box::new(run.sink()));
        }
        Ok(sinks)
    }
}

/// A writer to a file several sessions share: whole lines only reach the file, each `write`
/// of it holding the file's lock.
struct Lines {
    file: Arc<Mutex<File>>,
    buf: Vec<u8>,
}

impl Lines {
    fn land(&mut self, all: bool) -> io::Result<()> {
        let end = match all {
            true => self.buf.len(),
            false => match memchr::memrchr(b'\n', &self.buf) {
                Some(i) => i + 1,
                None => return Ok(()),
            },
        };
        if end == 0 {
            return Ok(());
        }
        let res = lock(&self.file).write_all(&self.buf[..end]);
        self.buf.drain(..end);
        res
    }
}

impl Write for Lines {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        self.land(false)?;
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.land(false)
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        let _ = self.land(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_lines_reach_the_shared_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.ndjson");
        let file = Arc::new(Mutex::new(File::create(&path).unwrap()));
        let mut a = Lines {
            file: file.clone(),
            buf: Vec::new(),
        };
        let mut b = Lines {
            file,
            buf: Vec::new(),
        };
        a.write_all(b"{\"a\":").unwrap();
        b.write_all(b"{\"b\":1}\n{\"b\":").unwrap();
        a.write_all(b"1}\n").unwrap();
        b.write_all(b"2}\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"b\":1}\n{\"a\":1}\n{\"b\":2}\n"
        );
    }
}
