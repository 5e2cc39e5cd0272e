//! Redaction options: a reusable clap `Args` group (`normalize` flattens it; `spawn` and
//! `replay` can too) and the `redact` subcommand's arguments.

use std::path::PathBuf;

use clap::Args;

use boo_normalize::redact::setup::RuleOptions;

/// The rule options, shared by `--redact` and `redact`.
#[derive(Debug, Args, Default, Clone)]
#[command(next_help_heading = "Redaction")]
pub struct RedactRules {
    /// Also redact this exact value (repeatable; at least 4 bytes; arguments show in the
    /// process list, prefer --redact-env). Implies --redact.
    #[arg(long, value_name = "VALUE")]
    pub redact_literal: Vec<String>,
    /// Also redact the current value of environment variable NAME (repeatable). Implies --redact.
    #[arg(long, value_name = "NAME")]
    pub redact_env: Vec<String>,
    /// Also apply the named regexes in FILE: one `name = regex` per line, `#` comments; the
    /// name (a-z, 0-9, _) is the placeholder kind; the regex's first capture group, if any,
    /// is the part replaced (repeatable). Implies --redact.
    #[arg(long, value_name = "FILE")]
    pub redact_rules: Vec<PathBuf>,
    /// Key of the placeholder hash, for placeholders that are stable across runs (default: a
    /// random key per run). Never printed.
    #[arg(
        long,
        value_name = "KEY",
        env = "BOO_NORMALIZE_REDACT_KEY",
        hide_env_values = true
    )]
    pub redact_key: Option<String>,
    /// Minimum Shannon entropy (bits per character) of a value after a secret-looking keyword
    /// (`token=`, `"api_key":`) for it to be redacted.
    #[arg(long, value_name = "BITS", default_value_t = 3.5)]
    pub redact_entropy: f64,
}

impl RedactRules {
    /// The rules as the library takes them (files and the environment are read when the
    /// engine is built, [`RuleOptions::build`]).
    pub fn options(&self) -> RuleOptions {
        RuleOptions {
            literals: self.redact_literal.clone(),
            env: self.redact_env.clone(),
            rule_files: self.redact_rules.clone(),
            key: self.redact_key.clone(),
            entropy_bits: self.redact_entropy,
        }
    }

    /// Whether any rule option was given (they imply `--redact`).
    pub fn any(&self) -> bool {
        !self.redact_literal.is_empty()
            || !self.redact_env.is_empty()
            || !self.redact_rules.is_empty()
    }
}

/// `--redact` and its rules, for commands that normalize.
#[derive(Debug, Args, Default, Clone)]
pub struct RedactArgs {
    /// Replace secrets (API keys, tokens, passwords, private keys, …) with
    /// `[REDACTED:<kind>:<hash>]` before anything is written.
    #[arg(long, help_heading = "Redaction")]
    pub redact: bool,
    /// Rules.
    #[command(flatten)]
    pub rules: RedactRules,
}

impl RedactArgs {
    /// Whether redaction is on.
    pub fn enabled(&self) -> bool {
        self.redact || self.rules.any()
    }

    /// The rules, when redaction is on.
    pub fn options(&self) -> Option<RuleOptions> {
        self.enabled().then(|| self.rules.options())
    }
}

/// `redact` options.
#[derive(Debug, Args)]
pub struct RedactCmdArgs {
    /// Input files; `-` or none reads stdin. Several inputs are read as one stream. A session
    /// transcript, a directory of them or a session id is written as one transcript: the
    /// session's files (subagents included) in time order.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// What the inputs are (see `normalize --input-format`).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t)]
    pub input_format: super::input::InputFormatArg,
    /// Flush after every input line.
    #[arg(long)]
    pub line_buffered: bool,
    /// Print what was redacted (counts by kind, never values) to stderr at the end.
    #[arg(long)]
    pub summary: bool,
    /// Rules.
    #[command(flatten)]
    pub rules: RedactRules,
}
