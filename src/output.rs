//! Output options shared by the subcommands that run the pipeline (normalize now; spawn and
//! replay flatten the same [`OutputArgs`]): what stdout carries, extra sink files, SSE profile
//! and resume point, audit run id and durability; and the one function that turns them into
//! sinks.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use boo_normalize::envelope::{EventMeta, Events};
use boo_normalize::error::Error;
use boo_normalize::sink::Sink;
use boo_normalize::sink::ai_sdk::AiSdk;
use boo_normalize::sink::audit::{self, Audit, GENESIS};
use boo_normalize::sink::cut_back::CutBack;
use boo_normalize::sink::named::{Named, output_error};
use boo_normalize::sink::otlp::{self, Otlp};
use boo_normalize::sink::sse::Sse;
use boo_normalize::sink::{EventCtx, Ndjson};

/// What a sink writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Envelope v1 NDJSON.
    #[default]
    Envelope,
    /// The hash-chained audit log (JSONL).
    Audit,
    /// Server-sent events (profile: --sse-profile).
    Sse,
    /// OpenTelemetry traces as OTLP/JSON, one ExportTraceServiceRequest per line.
    Otlp,
}

/// Which SSE dialect the SSE sinks speak.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum SseProfile {
    /// One SSE event per envelope event: `id: <seq>`, `event: <type>`, `data: <json>`.
    #[default]
    Default,
    /// The Vercel AI SDK UI message stream v1 (`useChat`).
    AiSdk,
}

/// Output options (flatten into a subcommand's arguments).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// What stdout carries.
    #[arg(long, value_enum, default_value_t, value_name = "FORMAT")]
    pub format: Format,
    /// Also append the hash-chained audit log to FILE (created if missing, mode 0600; a new run
    /// chains from the file's last record; cut back to its last whole record if a write fails).
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,
    /// Also write server-sent events to FILE (truncated first; created mode 0600).
    #[arg(long, value_name = "FILE")]
    pub sse: Option<PathBuf>,
    /// Also write envelope NDJSON to FILE (truncated first; created mode 0600).
    #[arg(long, value_name = "FILE")]
    pub envelope: Option<PathBuf>,
    /// Also write the run's OpenTelemetry trace to FILE as OTLP/JSON lines (truncated first,
    /// created mode 0600; the Collector's otlpjsonfile receiver reads it).
    #[arg(long, value_name = "FILE")]
    pub otlp: Option<PathBuf>,
    /// Also send the trace to an OTLP/HTTP receiver (binary protobuf; http/json with
    /// OTEL_EXPORTER_OTLP_PROTOCOL=http/json). URL is the receiver's base (…/v1/traces is
    /// appended) or its full traces URL; without URL: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    /// $OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318. Delivery runs in the background
    /// and never fails the run: failures go to stderr and into run.end's `otlp` counts.
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    pub otlp_endpoint: Option<String>,
    /// Put message content in the trace (prompts, model output, tool input and results); off by
    /// default, as the GenAI conventions advise. Redacted first under --redact.
    #[arg(long)]
    pub otlp_content: bool,
    /// The trace's service.name (default: $OTEL_SERVICE_NAME, else claude-code).
    #[arg(long, value_name = "NAME")]
    pub otlp_service_name: Option<String>,
    /// SSE dialect of --format sse and --sse.
    #[arg(long, value_enum, default_value_t, value_name = "PROFILE")]
    pub sse_profile: SseProfile,
    /// Resume: every sink skips the events with seq <= SEQ (a reconnecting EventSource's
    /// Last-Event-ID); default: $LAST_EVENT_ID when set and not empty.
    #[arg(long, value_name = "SEQ")]
    pub last_event_id: Option<u64>,
    /// fdatasync the --audit file after every record.
    #[arg(long, requires = "audit")]
    pub fsync: bool,
    /// Run id written into every audit record (default: a new UUIDv7).
    #[arg(long, value_name = "ID", value_parser = parse_run_id)]
    pub run_id: Option<String>,
}

fn parse_run_id(s: &str) -> Result<String, String> {
    if s.is_empty() || s.chars().any(char::is_control) {
        return Err("the run id must be non-empty and printable".into());
    }
    Ok(s.to_owned())
}

/// Turn a pipeline I/O error into the CLI error: a file sink's error names that file, a closed
/// stdout is `stdout` (a quiet exit), anything else happened reading `input`.
pub fn io_error(e: io::Error, input: &str) -> Error {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Error::io("stdout", e)
    } else {
        output_error(e, input)
    }
}

impl OutputArgs {
    /// The run id to use: `--run-id`, or a new UUIDv7 (time-ordered, so runs sort by start).
    pub fn run_id(&self) -> String {
        self.run_id
            .clone()
            .unwrap_or_else(|| uuid::Uuid::now_v7().to_string())
    }

    /// `--last-event-id`, else `$LAST_EVENT_ID` (empty = unset; anything else must be a seq).
    pub fn last_event_id(&self) -> Result<Option<u64>, Error> {
        if self.last_event_id.is_some() {
            return Ok(self.last_event_id);
        }
        match std::env::var("LAST_EVENT_ID") {
            Ok(v) if v.trim().is_empty() => Ok(None),
            Ok(v) => v.trim().parse().map(Some).map_err(|_| {
                Error::msg(
                    "LAST_EVENT_ID",
                    format!("not an event id (a seq number): {v:?}"),
                )
            }),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(Error::msg(
                "LAST_EVENT_ID",
                "not an event id (a seq number): not UTF-8",
            )),
        }
    }

    /// The settings every OTLP sink of this run shares. The trace is always whole: resuming
    /// (--last-event-id) does not apply to it.
    fn otlp_options(&self, run_id: &str) -> Result<otlp::Options, Error> {
        Ok(otlp::Options {
            run_id: run_id.to_owned(),
            content: self.otlp_content,
            resource: otlp::config::resource(
                self.otlp_service_name.as_deref(),
                &otlp::config::process_env,
            )?,
        })
    }

    fn sse_sink<'a, W: Write + 'a>(&self, w: W, resume: Option<u64>) -> Box<dyn Sink + 'a> {
        match self.sse_profile {
            SseProfile::Default => Box::new(Sse::new(w).last_event_id(resume)),
            SseProfile::AiSdk => Box::new(AiSdk::new(w).last_event_id(resume)),
        }
    }

    /// Open every output file (before any input is read, so a bad path fails early) and build
    /// the sinks: stdout's first, then --envelope, --sse, --audit. `run_id` goes into audit
    /// records (see [`OutputArgs::run_id`]).
    pub fn sinks<'a, W: Write + 'a>(
        &self,
        stdout: W,
        run_id: &str,
    ) -> Result<Vec<Box<dyn Sink + 'a>>, Error> {
        let resume = self.last_event_id()?;
        let mut sinks: Vec<Box<dyn Sink + 'a>> = vec![match self.format {
            Format::Envelope => after(resume, Ndjson::new(stdout)),
            Format::Sse => self.sse_sink(stdout, resume),
            Format::Audit => after(resume, Audit::new(stdout, run_id, GENESIS)),
            Format::Otlp => Box::new(Otlp::lines(stdout, self.otlp_options(run_id)?)),
        }];
        if let Some(p) = &self.otlp {
            let f = create(p)?;
            sinks.push(named(
                p,
                Box::new(Otlp::lines(f, self.otlp_options(run_id)?)),
            ));
        }
        if let Some(url) = &self.otlp_endpoint {
            let ep = otlp::config::endpoint(url, &otlp::config::process_env)?;
            sinks.push(Box::new(Otlp::endpoint(ep, self.otlp_options(run_id)?)));
        }
        if let Some(p) = &self.envelope {
            let f = create(p)?;
            sinks.push(named(p, after(resume, Ndjson::new(f))));
        }
        if let Some(p) = &self.sse {
            let f = create(p)?;
            let name = p.display().to_string();
            sinks.push(Box::new(Named::new(name, self.sse_sink(f, resume))));
        }
        if let Some(p) = &self.audit {
            let (f, prev) = audit::open_append(p)
                .and_then(|(f, prev)| Ok((CutBack::new(f)?, prev)))
                .map_err(|e| Error::io(p.display().to_string(), e))?;
            let mut a = Audit::new(f, run_id, prev);
            if self.fsync {
                a = a.with_sync(CutBack::sync_data);
            }
            sinks.push(named(p, after(resume, a)));
        }
        Ok(sinks)
    }
}

fn named<'a>(p: &Path, inner: Box<dyn Sink + 'a>) -> Box<dyn Sink + 'a> {
    Box::new(Named::new(p.display().to_string(), inner))
}

/// `inner`, without the events up to `resume` (the SSE sinks do this themselves: the AI SDK
/// profile needs the skipped events' state).
fn after<'a, S: Sink + 'a>(resume: Option<u64>, inner: S) -> Box<dyn Sink + 'a> {
    match resume {
        None => Box::new(inner),
        Some(n) => Box::new(After { n, inner }),
    }
}

struct After<S> {
    n: u64,
    inner: S,
}

impl<S: Sink> Sink for After<S> {
    fn wants_time(&self) -> bool {
        self.inner.wants_time()
    }

    fn event(&mut self, events: &Events, meta: &EventMeta, raw: Option<&[u8]>) -> io::Result<()> {
        if meta.seq <= self.n {
            return Ok(());
        }
        self.inner.event(events, meta, raw)
    }

    fn event_with(
        &mut self,
        events: &Events,
        meta: &EventMeta,
        ctx: &EventCtx<'_>,
    ) -> io::Result<()> {
        if meta.seq <= self.n {
            return Ok(());
        }
        self.inner.event_with(events, meta, ctx)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    fn idle(&mut self) -> io::Result<()> {
        self.inner.idle()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.inner.finish()
    }
}

fn create(p: &Path) -> Result<File, Error> {
    boo_normalize::files::create(p).map_err(|e| Error::io(p.display().to_string(), e))
}
