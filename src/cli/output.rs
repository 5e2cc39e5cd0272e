//! Output options shared by the subcommands that run the pipeline (`normalize`, `spawn`,
//! `replay` flatten [`OutputArgs`]): what stdout carries, extra sink files, SSE profile and
//! resume point, audit run id and durability. They become the library's
//! [`Outputs`](boo_normalize::sink::registry::Outputs), which builds the sinks.

use std::path::PathBuf;

use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

use boo_normalize::error::Error;
use boo_normalize::sink::pretty::{self, ColorChoice, Thinking};
use boo_normalize::sink::registry::{Choice, Format, Outputs, SseProfile};

use super::units::run_id;

/// A parser for the values of a library [`Choice`] table, with each value's help.
pub fn choice<T: Choice + Clone>() -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(
        T::CHOICES
            .iter()
            .map(|(name, _, help)| PossibleValue::new(*name).help(*help)),
    )
    .map(|s| T::named(&s).expect("a listed value"))
}

/// Output options (flatten into a subcommand's arguments).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// What stdout carries.
    #[arg(long, value_parser = choice::<Format>(), default_value = "envelope", value_name = "FORMAT")]
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
    #[arg(long, value_parser = choice::<SseProfile>(), default_value = "default", value_name = "PROFILE")]
    pub sse_profile: SseProfile,
    /// Resume: every sink skips the events with seq <= SEQ (a reconnecting EventSource's
    /// Last-Event-ID); default: $LAST_EVENT_ID when set and not empty.
    #[arg(long, value_name = "SEQ")]
    pub last_event_id: Option<u64>,
    /// Continue the --audit file's last run instead of starting a new one: the same run id, seq
    /// going on from its last record (so SSE ids continue too) and mono_us after it; for a
    /// backend that restarts and resumes the session (`-- --resume ID`). A missing or empty
    /// file starts a run as usual.
    #[arg(long, requires = "audit", conflicts_with = "run_id")]
    pub continue_run: bool,
    /// fdatasync the --audit file after every record.
    #[arg(long, requires = "audit")]
    pub fsync: bool,
    /// Run id written into every audit record (default: a new UUIDv7).
    #[arg(long, value_name = "ID", value_parser = run_id)]
    pub run_id: Option<String>,
    /// How --format pretty looks.
    #[command(flatten)]
    pub pretty: PrettyArgs,
}

/// The look of `--format pretty` (flatten into [`OutputArgs`]).
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Pretty view (--format pretty)")]
pub struct PrettyArgs {
    /// When to color: auto colors only when stdout is a terminal and NO_COLOR (not empty),
    /// CLICOLOR=0 and TERM=dumb do not say otherwise; CLICOLOR_FORCE=1 colors anyway.
    #[arg(long, value_parser = choice::<ColorChoice>(), default_value = "auto", value_name = "WHEN")]
    pub color: ColorChoice,
    /// Width in terminal cells (default: $COLUMNS, else the terminal's, else 100; at least 20).
    #[arg(long, value_name = "CELLS")]
    pub width: Option<usize>,
    /// ASCII glyphs only (default when the locale, LC_ALL/LC_CTYPE/LANG, is not UTF-8).
    #[arg(long)]
    pub ascii: bool,
    /// How much of the model's thinking to show.
    #[arg(long, value_parser = choice::<Thinking>(), default_value = "summary", value_name = "HOW")]
    pub thinking: Thinking,
    /// Lines of each tool result to show, first and last together (default 6).
    #[arg(long, value_name = "N")]
    pub result_lines: Option<usize>,
}

impl PrettyArgs {
    /// The view's options for this process's stdout (a terminal or not, its width) and
    /// environment.
    pub fn options(&self) -> pretty::PrettyOptions {
        use std::io::IsTerminal;
        let tty = std::io::stdout().is_terminal();
        let terminal = terminal_size::terminal_size_of(std::io::stdout())
            .or_else(|| terminal_size::terminal_size_of(std::io::stderr()))
            .map(|(w, _)| usize::from(w.0));
        let flags = pretty::Flags {
            color: self.color,
            width: self.width,
            ascii: self.ascii,
            thinking: self.thinking,
            result_lines: self.result_lines,
        };
        pretty::PrettyOptions::resolve(flags, tty, terminal, &|k| std::env::var(k).ok())
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

    /// The library's output settings.
    pub fn outputs(&self) -> Outputs {
        Outputs {
            format: self.format,
            audit: self.audit.clone(),
            fsync: self.fsync,
            audit_mono_base: 0,
            sse: self.sse.clone(),
            envelope: self.envelope.clone(),
            otlp: self.otlp.clone(),
            otlp_endpoint: self.otlp_endpoint.clone(),
            otlp_content: self.otlp_content,
            otlp_service_name: self.otlp_service_name.clone(),
            otlp_per_turn: None,
            sse_profile: self.sse_profile,
            pretty: if self.format == Format::Pretty {
                self.pretty.options()
            } else {
                pretty::PrettyOptions::default()
            },
        }
    }
}
