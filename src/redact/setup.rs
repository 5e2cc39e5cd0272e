//! Building an [`Engine`] from options as a command line gives them: literal values, the
//! environment variables to read, rule files to read, the key and the entropy threshold. The
//! only place of the redaction module that reads files and the environment.

use std::sync::Arc;

use super::{Config, Engine, Key, RuleError, env, literal, parse_file};
use crate::error::Error;

/// What a user asked redaction to do, before anything is read.
#[derive(Debug, Clone, Default)]
pub struct RuleOptions {
    /// Exact values to redact (`--redact-literal`).
    pub literals: Vec<String>,
    /// Environment variables whose current values are redacted (`--redact-env`).
    pub env: Vec<String>,
    /// Rule files, one `name = regex` per line (`--redact-rules`).
    pub rule_files: Vec<std::path::PathBuf>,
    /// Key of the placeholder hash; `None`: a random key per run.
    pub key: Option<String>,
    /// Minimum Shannon entropy of keyword-found values, bits per character.
    pub entropy_bits: f64,
}

impl RuleOptions {
    /// Compile the engine these options describe. Errors name the option or rule, never a value.
    pub fn build(&self) -> Result<Arc<Engine>, Error> {
        let ctx = "redact";
        let bad = |e: RuleError| Error::msg(ctx, e.to_string());
        let mut rules = Vec::new();
        for (i, v) in self.literals.iter().enumerate() {
            rules.push(literal(i + 1, v.as_bytes()).map_err(bad)?);
        }
        for name in &self.env {
            let value = std::env::var_os(name);
            let value = value.as_ref().map(|v| v.as_encoded_bytes());
            rules.push(env(name, value).map_err(bad)?);
        }
        for path in &self.rule_files {
            let name = path.display().to_string();
            let text = std::fs::read_to_string(path)
                .map_err(|e| Error::io(format!("--redact-rules {name}"), e))?;
            rules.extend(parse_file(&name, &text).map_err(bad)?);
        }
        if !(self.entropy_bits.is_finite() && (0.0..=8.0).contains(&self.entropy_bits)) {
            return Err(Error::msg(
                "--redact-entropy",
                "expected bits between 0 and 8",
            ));
        }
        let key = match &self.key {
            Some(k) if !k.is_empty() => Key::from_bytes(k.as_bytes()),
            Some(_) => return Err(Error::msg("--redact-key", "empty key")),
            None => Key::random().map_err(|e| Error::msg(ctx, e))?,
        };
        let cfg = Config {
            rules,
            key,
            entropy_bits: self.entropy_bits,
        };
        Ok(Arc::new(Engine::new(cfg).map_err(bad)?))
    }
}
