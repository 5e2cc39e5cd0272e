//! `report`: one self-contained HTML file for a finished run. The input (stream-json, a
//! `--record` capture or an audit log, detected as `replay` does) goes through the normal
//! pipeline (with redaction when asked); a sink builds the [`model::Run`] from the envelope
//! events, and `html::page` draws it.

mod blob;
mod build;
pub mod escape;
mod html;
pub mod markdown;
pub mod model;

use std::cell::RefCell;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::audit::verify::verify;
use crate::capture::decode::{Kind, OutLine};
use crate::clock::{ManualClock, Stamp as ClockStamp};
use crate::envelope::{EventMeta, Events};
use crate::error::Error;
use crate::json::fields::Index;
use crate::normalize::Normalizer;
use crate::pipeline::Pipeline;
use crate::redact::Engine;
use crate::replay::play::Envelope;
use crate::replay::{Player, Replay, ReplayOptions, Speed, Stamp};
use crate::sink::{EventCtx, Sink};
use model::Run;

pub use html::csp;

/// What to build.
#[derive(Clone, Default)]
pub struct ReportOptions {
    /// Redact every input line before anything is drawn.
    pub redact: Option<Arc<Engine>>,
    /// Audit logs: the run to draw (default: the last).
    pub audit_run: Option<String>,
    /// The time written as "generated" (µs since the epoch): fixed for reproducible output.
    pub generated_us: i64,
    /// The tool version in the footer.
    pub tool_version: &'static str,
}

/// One input file, as the footer names it.
#[derive(Debug, Clone)]
pub struct InputDigest {
    /// As given (`-` for stdin).
    pub name: String,
    /// Its size.
    pub bytes: u64,
    /// SHA-256 of its bytes (for stdin: of the lines read).
    pub sha256: String,
}

/// An audit log's hash-chain verdict.
#[derive(Debug, Clone)]
pub enum Chain {
    /// The whole file verifies.
    Verified {
        /// Records.
        records: u64,
        /// Runs.
        runs: u64,
    },
    /// The first problem.
    Broken(String),
}

/// Where the run came from.
#[derive(Debug, Clone)]
pub struct Source {
    /// The inputs.
    pub inputs: Vec<InputDigest>,
    /// `stream-json`, `capture` or `audit log`.
    pub kind: &'static str,
    /// Audit logs: each file's chain verdict.
    pub chains: Vec<(String, Chain)>,
    /// A capture's recorded command line.
    pub argv: Option<Vec<String>>,
    /// The run id (the capture's, the audit run's, or derived from the input).
    pub run_id: String,
    /// [`ReportOptions::generated_us`].
    pub generated_us: i64,
    /// Whether redaction was on.
    pub redacted: bool,
    /// [`ReportOptions::tool_version`].
    pub tool_version: &'static str,
}

/// The report of `files` (`-`: stdin) as HTML.
pub fn render(files: &[PathBuf], opts: &ReportOptions) -> Result<String, Error> {
    let ropts = ReplayOptions {
        speed: Speed::Max,
        follow: None,
        audit_run: opts.audit_run.clone(),
        keepalive: None,
        progress: false,
    };
    let replay = Replay::open(files, ropts)?;
    let kind = replay.kind().unwrap_or(Kind::Stream);
    let mut src = Source {
        inputs: Vec::new(),
        kind: match kind {
            Kind::Capture => "capture",
            Kind::Audit => "audit log",
            Kind::Stream => "stream-json",
        },
        chains: Vec::new(),
        argv: replay.header().and_then(|h| h.argv.clone()),
        run_id: replay.run_id().to_owned(),
        generated_us: opts.generated_us,
        redacted: opts.redact.is_some(),
        tool_version: opts.tool_version,
    };
    if let (Some(e), Some(argv)) = (&opts.redact, src.argv.as_mut()) {
        // The recorded command line holds the prompt: redacted like the lines.
        let mut sc = e.scratch();
        for a in argv.iter_mut() {
            let r = crate::redact::redact_str(e, &mut sc, None, a.as_bytes());
            *a = String::from_utf8_lossy(&r).into_owned();
        }
    }
    let run = Rc::new(RefCell::new(Run::default()));
    let stdin_hash = Rc::new(RefCell::new((Sha256::new(), 0u64)));
    {
        let clock = ManualClock::default();
        let sink = Collect {
            run: run.clone(),
            index: Index::default(),
        };
        let mut p = Pipeline::new(Normalizer::new(Default::default()), vec![Box::new(sink)])
            .with_clock(Box::new(clock.clone()));
        if let Some(e) = &opts.redact {
            p = p.transform(Box::new(crate::redact::Redactor::new(e.clone())));
        }
        let mut env = Envelope::new(&mut p, None, false).with_clock(move |s: Stamp| {
            clock.set(ClockStamp {
                unix_us: s.unix_us,
                mono_us: s.mono_us,
            })
        });
        let mut player = Hashing {
            inner: &mut env,
            hash: stdin_hash.clone(),
            head: Vec::new(),
        };
        let outcome = replay.play(&mut player)?;
        let head = std::mem::take(&mut player.head);
        env.stamp_end(outcome.end_stamp);
        drop(env);
        // Input without a single stream-json line draws an empty run: refuse it and say what
        // it is, as `normalize` does (an envelope written by `--envelope`, text, nothing).
        if kind == Kind::Stream && p.stats().stream_json_lines == 0 {
            let name = match files {
                [one] if one.as_os_str() != "-" => one.display().to_string(),
                [one] if one.as_os_str() == "-" => "stdin".to_owned(),
                [] => "stdin".to_owned(),
                _ => "the inputs".to_owned(),
            };
            let lines = p.stats().lines;
            if let Some((kind, msg)) = crate::sniff::check(&name, &head, lines, 0) {
                let msg = match kind {
                    crate::sniff::Kind::Envelope => format!(
                        "{msg}; `report` draws the stream-json, capture or audit log a run came from"
                    ),
                    _ => msg,
                };
                return Err(Error::msg("report", msg).with_exit(crate::exit::Exit::ERROR));
            }
        }
        p.finish(&outcome.run_end())
            .map_err(|e| Error::io("report", e))?;
    }
    for f in files {
        src.inputs.push(digest(f, &stdin_hash.borrow())?);
        if kind == Kind::Audit && f.as_os_str() != "-" {
            let file = File::open(f).map_err(|e| Error::io(f.display().to_string(), e))?;
            let verdict = match verify(BufReader::new(file)) {
                Ok(s) => Chain::Verified {
                    records: s.records,
                    runs: s.runs,
                },
                Err(e) => Chain::Broken(e.to_string()),
            };
            src.chains.push((f.display().to_string(), verdict));
        }
    }
    let run = run.borrow();
    Ok(html::page(&run, &src))
}

fn digest(f: &Path, stdin: &(Sha256, u64)) -> Result<InputDigest, Error> {
    let name = f.display().to_string();
    if f.as_os_str() == "-" {
        let d = stdin.0.clone().finalize();
        return Ok(InputDigest {
            name,
            bytes: stdin.1,
            sha256: hex::encode(d),
        });
    }
    let mut file = File::open(f).map_err(|e| Error::io(name.clone(), e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let n = file.read(&mut buf).map_err(|e| Error::io(&name, e))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        bytes += n as u64;
    }
    Ok(InputDigest {
        name,
        bytes,
        sha256: hex::encode(h.finalize()),
    })
}

/// `[REDACTED:` placeholders in `bytes`.
fn placeholders(bytes: &[u8]) -> usize {
    memchr::memmem::find_iter(bytes, b"[REDACTED:").count()
}

/// The sink that builds the model: ephemeral events are counted and dropped unparsed.
struct Collect {
    run: Rc<RefCell<Run>>,
    /// The member index of an event when the pipeline gives none.
    index: Index,
}

impl Sink for Collect {
    fn event(&mut self, events: &Events, meta: &EventMeta, ctx: &EventCtx<'_>) -> io::Result<()> {
        let mut run = self.run.borrow_mut();
        if meta.ephemeral {
            run.ephemeral += 1;
            return Ok(());
        }
        let bytes = events.bytes(meta);
        let mut own = std::mem::take(&mut self.index);
        let Some(v) = ctx.fields(events, meta, &mut own) else {
            // Not an object: serde_json says why.
            let err = serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(bytes)
                .err()
                .map_or_else(|| io::Error::other("not a JSON object"), io::Error::other);
            return Err(err);
        };
        // What a tool call does (command, paths, edit) repeats its input's text: a placeholder
        // there is counted once, in the input.
        let derived: usize = ["command", "paths", "edit"]
            .iter()
            .filter_map(|k| v.json(k))
            .map(placeholders)
            .sum();
        run.placeholders += placeholders(bytes).saturating_sub(derived) as u64;
        run.push(meta.kind, meta.seq, &v, ctx.stamp.unix_us);
        drop(run);
        self.index = own;
        Ok(())
    }

    fn wants_fields(&self, meta: &EventMeta) -> bool {
        !meta.ephemeral
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Passes lines on, hashing them as read (the digest of stdin, which cannot be read twice).
struct Hashing<'a, 'p, 'b> {
    inner: &'a mut Envelope<'p, 'b>,
    hash: Rc<RefCell<(Sha256, u64)>>,
    /// The first bytes read, to say what the input is when it holds no stream-json.
    head: Vec<u8>,
}

impl Player for Hashing<'_, '_, '_> {
    fn out(&mut self, line: &OutLine, at: Stamp) -> io::Result<()> {
        let room = crate::sniff::HEAD_BYTES.saturating_sub(self.head.len());
        if room > 0 {
            self.head
                .extend_from_slice(&line.bytes[..line.bytes.len().min(room)]);
            if line.terminated && self.head.len() < crate::sniff::HEAD_BYTES {
                self.head.push(b'\n');
            }
        }
        let mut h = self.hash.borrow_mut();
        h.0.update(&line.bytes);
        h.1 += line.bytes.len() as u64;
        if line.terminated {
            h.0.update(b"\n");
            h.1 += 1;
        }
        drop(h);
        self.inner.out(line, at)
    }
    fn err(&mut self, bytes: &[u8], cut: bool, at: Stamp) -> io::Result<()> {
        self.inner.err(bytes, cut, at)
    }
    fn pause(&mut self) -> io::Result<()> {
        self.inner.pause()
    }
}
