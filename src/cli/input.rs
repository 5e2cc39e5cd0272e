//! The input options of the commands that read stream-json: which format the inputs are in
//! (stream-json or a Claude Code session transcript), and the price table of transcript cost
//! estimates.

use std::path::PathBuf;

use clap::Args;

use boo_normalize::dialect::Dialect;
use boo_normalize::error::Error;
use boo_normalize::transcript::InputFormat;
use boo_normalize::transcript::prices::Prices;

/// `--input-format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum InputFormatArg {
    /// Decide from each input's first lines.
    #[default]
    Auto,
    /// `claude -p --output-format stream-json --verbose` output.
    StreamJson,
    /// A Claude Code session transcript (~/.claude/projects/<project>/<session>.jsonl).
    Transcript,
    /// OpenAI Codex: `codex exec --json`.
    Codex,
    /// Gemini CLI: `gemini -p … --output-format stream-json`.
    Gemini,
    /// Cursor: `cursor-agent -p … --output-format stream-json [--stream-partial-output]`.
    Cursor,
    /// OpenCode: `opencode run --format json`.
    Opencode,
    /// Amp: `amp -x … --stream-json`.
    Amp,
    /// Qwen Code: `qwen -p … --output-format stream-json`.
    Qwen,
    /// GitHub Copilot CLI: `copilot -p … --output-format json`, or its session log
    /// (events.jsonl).
    Copilot,
}

/// Input options.
#[derive(Debug, Args, Default, Clone)]
pub struct InputArgs {
    /// What the inputs are: auto (each input's first lines decide), stream-json, transcript
    /// (a Claude Code session file, a project directory, or a session id), or another agent's
    /// stream (codex, gemini, cursor, opencode, amp, qwen, copilot).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t)]
    pub input_format: InputFormatArg,
    /// Price table (JSON, USD per million tokens per model) for the cost estimate of
    /// transcripts; its models replace the built-in table's.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
}

impl InputFormatArg {
    /// The library's input format.
    pub fn format(self) -> InputFormat {
        match self {
            InputFormatArg::Auto => InputFormat::Auto,
            InputFormatArg::StreamJson => InputFormat::StreamJson,
            InputFormatArg::Transcript => InputFormat::Transcript,
            InputFormatArg::Codex => InputFormat::Agent(Dialect::Codex),
            InputFormatArg::Gemini => InputFormat::Agent(Dialect::Gemini),
            InputFormatArg::Cursor => InputFormat::Agent(Dialect::Cursor),
            InputFormatArg::Opencode => InputFormat::Agent(Dialect::OpenCode),
            InputFormatArg::Amp => InputFormat::Agent(Dialect::Amp),
            InputFormatArg::Qwen => InputFormat::Agent(Dialect::Qwen),
            InputFormatArg::Copilot => InputFormat::Agent(Dialect::Copilot),
        }
    }
}

impl InputArgs {
    /// The library's input format.
    pub fn format(&self) -> InputFormat {
        self.input_format.format()
    }

    /// The price table: the built-in one, with `--prices` applied.
    pub fn prices(&self) -> Result<Prices, Error> {
        match &self.prices {
            Some(p) => Prices::with_file(p),
            None => Ok(Prices::embedded()),
        }
    }
}
