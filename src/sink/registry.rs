//! The output formats and the one factory that turns output settings into sinks: what stdout
//! carries (`--format`), the extra sink files (`--audit`, `--sse`, `--envelope`, `--otlp`), the
//! OTLP endpoint, the SSE dialect. A new format is a sink module plus one line in [`Format`]'s
//! table and one arm in [`Outputs::sinks`].

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::audit::{self, GENESIS};
use crate::error::Error;
use crate::sink::ai_sdk::AiSdk;
use crate::sink::audit::Audit;
use crate::sink::audit::cut_back::CutBack;
pub use crate::sink::choice::Choice;
use crate::sink::named::Named;
use crate::sink::otlp::{self, Otlp};
use crate::sink::pretty::{self, Pretty};
use crate::sink::sse::Sse;
use crate::sink::{Ndjson, Sink};

/// What a sink writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Format {
    /// Envelope v1 NDJSON.
    #[default]
    Envelope,
    /// The hash-chained audit log (JSONL).
    Audit,
    /// Server-sent events (dialect: [`SseProfile`]).
    Sse,
    /// OpenTelemetry traces as OTLP/JSON, one ExportTraceServiceRequest per line.
    Otlp,
    /// A live view for people in a terminal (see [`crate::sink::pretty`]).
    Pretty,
}

impl Choice for Format {
    const CHOICES: &'static [(&'static str, Self, &'static str)] = &[
        ("envelope", Format::Envelope, "Envelope v1 NDJSON"),
        ("audit", Format::Audit, "The hash-chained audit log (JSONL)"),
        (
            "sse",
            Format::Sse,
            "Server-sent events (profile: --sse-profile)",
        ),
        (
            "otlp",
            Format::Otlp,
            "OpenTelemetry traces as OTLP/JSON, one ExportTraceServiceRequest per line",
        ),
        (
            "pretty",
            Format::Pretty,
            "A live view for people in a terminal: text, tool calls and results, subagents, usage (--color, --width, --thinking)",
        ),
    ];
}

/// Which SSE dialect the SSE sinks speak.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SseProfile {
    /// One SSE event per envelope event: `id: <seq>`, `event: <type>`, `data: <json>`.
    #[default]
    Default,
    /// The Vercel AI SDK UI message stream v1 (`useChat`).
    AiSdk,
}

impl Choice for SseProfile {
    const CHOICES: &'static [(&'static str, Self, &'static str)] = &[
        (
            "default",
            SseProfile::Default,
            "One SSE event per envelope event: `id: <seq>`, `event: <type>`, `data: <json>`",
        ),
        (
            "ai-sdk",
            SseProfile::AiSdk,
            "The Vercel AI SDK UI message stream v1 (`useChat`)",
        ),
    ];
}

/// Where a run's events go, besides stdout.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    /// What stdout carries.
    pub format: Format,
    /// Append the audit log to this file.
    pub audit: Option<PathBuf>,
    /// fdatasync the audit file after every record.
    pub fsync: bool,
    /// Continue the audit file's last run: its `mono_us` goes on from this value.
    pub audit_mono_base: u64,
    /// Write server-sent events to this file.
    pub sse: Option<PathBuf>,
    /// Write envelope NDJSON to this file.
    pub envelope: Option<PathBuf>,
    /// Write the OpenTelemetry trace to this file (OTLP/JSON lines).
    pub otlp: Option<PathBuf>,
    /// Send the trace to an OTLP/HTTP receiver (`""`: from the environment, else localhost).
    pub otlp_endpoint: Option<String>,
    /// Put message content in the trace.
    pub otlp_content: bool,
    /// The trace's service.name.
    pub otlp_service_name: Option<String>,
    /// One trace per turn, numbered from this counter (see `OtlpOptions::per_turn`).
    pub otlp_per_turn: Option<std::sync::Arc<std::sync::atomic::AtomicU32>>,
    /// The SSE dialect.
    pub sse_profile: SseProfile,
    /// How `--format pretty` looks.
    pub pretty: pretty::PrettyOptions,
}

impl Outputs {
    /// The settings every OTLP sink of this run shares. The trace is always whole: resuming
    /// does not apply to it.
    fn otlp_options(&self, run_id: &str) -> Result<otlp::OtlpOptions, Error> {
        Ok(otlp::OtlpOptions {
            run_id: run_id.to_owned(),
            content: self.otlp_content,
            resource: otlp::config::resource(
                self.otlp_service_name.as_deref(),
                &otlp::config::process_env,
            )?,
            per_turn: self.otlp_per_turn.clone(),
        })
    }

    fn sse_sink<'a, W: Write + 'a>(&self, w: W) -> Box<dyn Sink + 'a> {
        match self.sse_profile {
            SseProfile::Default => Box::new(Sse::new(w)),
            SseProfile::AiSdk => Box::new(AiSdk::new(w)),
        }
    }

    /// Open every output file (before any input is read, so a bad path fails early) and build
    /// the sinks: stdout's first, then the OTLP ones, --envelope, --sse, --audit. `run_id` goes
    /// into audit records and the trace.
    pub fn sinks<'a, W: Write + 'a>(
        &self,
        stdout: W,
        run_id: &str,
    ) -> Result<Vec<Box<dyn Sink + 'a>>, Error> {
        let mut sinks: Vec<Box<dyn Sink + 'a>> = vec![match self.format {
            Format::Envelope => Box::new(Ndjson::new(stdout)),
            Format::Sse => self.sse_sink(stdout),
            Format::Audit => Box::new(Audit::new(stdout, run_id, GENESIS)),
            Format::Otlp => Box::new(Otlp::lines(stdout, self.otlp_options(run_id)?)),
            Format::Pretty => Box::new(Pretty::new(stdout, self.pretty.clone())),
        }];
        if let Some(p) = &self.otlp {
            let f = create(p)?;
            let sink = Otlp::lines(f, self.otlp_options(run_id)?);
            sinks.push(named(p, Box::new(sink)));
        }
        if let Some(url) = &self.otlp_endpoint {
            let ep = otlp::config::endpoint(url, &otlp::config::process_env)?;
            sinks.push(Box::new(Otlp::endpoint(ep, self.otlp_options(run_id)?)));
        }
        if let Some(p) = &self.envelope {
            let f = create(p)?;
            sinks.push(named(p, Box::new(Ndjson::new(f))));
        }
        if let Some(p) = &self.sse {
            let f = create(p)?;
            sinks.push(named(p, self.sse_sink(f)));
        }
        if let Some(p) = &self.audit {
            let (f, prev) = audit::open_append(p)
                .and_then(|(f, prev)| Ok((CutBack::new(f)?, prev)))
                .map_err(|e| Error::io(p.display().to_string(), e))?;
            let mut a =
                Audit::writing_on_helper(f, run_id, prev).continuing_from(self.audit_mono_base);
            if self.fsync {
                a = a.with_sync(|w| w.with(CutBack::sync_data));
            }
            sinks.push(named(p, Box::new(a)));
        }
        Ok(sinks)
    }
}

fn named<'a>(p: &Path, inner: Box<dyn Sink + 'a>) -> Box<dyn Sink + 'a> {
    Box::new(Named::new(p.display().to_string(), inner))
}

fn create(p: &Path) -> Result<File, Error> {
    crate::files::create(p).map_err(|e| Error::io(p.display().to_string(), e))
}
