//! The options shared by every command that runs the pipeline (`normalize`, `spawn`, `replay`):
//! envelope, output and redaction, and what they make of them ([`StreamArgs::setup`]); and the
//! `normalize` command's own arguments.

use std::path::PathBuf;

use clap::Args;

use boo_normalize::error::Error;
use boo_normalize::pipeline::setup::{Plan, Setup};

use super::output::OutputArgs;
use super::redact::RedactArgs;
use super::units::size_usize;

/// Envelope options shared by `normalize`, `spawn` and `replay`.
#[derive(Debug, Args, Default, Clone)]
#[command(next_help_heading = "Input and envelope")]
pub struct EnvelopeArgs {
    /// Keep base64 image/document data instead of replacing it by {elided, media_type, bytes,
    /// sha256}.
    #[arg(long)]
    pub keep_blobs: bool,
    /// Write the whole stream, then exit 1 (when it otherwise succeeded) if any line was unusable
    /// or of an unknown type.
    #[arg(long)]
    pub strict: bool,
    /// Flush after every input line (default: flush whenever no input is pending).
    #[arg(long)]
    pub line_buffered: bool,
    /// Cut lines longer than SIZE (bytes, or 1MB, 500KB, 1MiB, 64KiB; reported as
    /// `line_too_long`); default: no limit.
    #[arg(long, value_name = "SIZE", value_parser = size_usize)]
    pub max_line_bytes: Option<usize>,
    /// Accept a stream that ends without a `result` line: no `run.error` (cause `no_result`) before
    /// `run.end`, and no exit status 3 for it.
    #[arg(long)]
    pub allow_no_result: bool,
    /// Parse with serde_json only (the reference parser) instead of simd-json.
    #[arg(long, hide = true)]
    pub reference_parser: bool,
}

impl EnvelopeArgs {
    /// The normalizer options these flags select.
    pub fn options(&self) -> boo_normalize::normalize::NormalizeOptions {
        boo_normalize::normalize::NormalizeOptions {
            keep_blobs: self.keep_blobs,
            reference_parser: self.reference_parser,
            allow_no_result: self.allow_no_result,
            ..Default::default()
        }
    }
}

/// `normalize` options.
#[derive(Debug, Args, Default)]
pub struct NormalizeArgs {
    /// Input files; `-` or none reads stdin. Several inputs are read as one stream. A Claude
    /// Code session transcript, a directory of them or a session id reads that session with its
    /// subagents (see --input-format).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Input format and transcript prices.
    #[command(flatten)]
    pub input: super::InputArgs,
    /// Also write a capture of the input (each line with its arrival time) to FILE, for
    /// `boo-normalize replay` (created mode 0600; locked while written).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Envelope, output and redaction options.
    #[command(flatten)]
    pub stream: StreamArgs,
}

/// The options of every command that runs the pipeline: envelope, output, redaction.
#[derive(Debug, Args, Default, Clone)]
pub struct StreamArgs {
    /// Envelope options.
    #[command(flatten)]
    pub envelope: EnvelopeArgs,
    /// Output options (stdout format, audit log, SSE, OTLP, resume point).
    #[command(flatten)]
    pub output: OutputArgs,
    /// Redaction (applied to every input line before any output or record).
    #[command(flatten)]
    pub redact: RedactArgs,
}

impl StreamArgs {
    /// The run these options describe (validated; files are read by [`Plan::open`]).
    pub fn plan(&self) -> Result<Plan, Error> {
        Ok(Plan {
            setup: Setup {
                envelope: self.envelope.options(),
                line_buffered: self.envelope.line_buffered,
                max_line: self.envelope.max_line_bytes,
                strict: self.envelope.strict,
                outputs: self.output.outputs(),
                resume: self.output.last_event_id()?,
                run_id: self.output.run_id(),
                redact: None,
                first_seq: 0,
                input_format: Default::default(),
            },
            redact: self.redact.options(),
            continue_audit: self.output.continue_run,
        })
    }
}
