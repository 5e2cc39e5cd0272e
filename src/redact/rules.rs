//! User rules: literal values (`--redact-literal`, `--redact-env`) and named regexes
//! (`--redact-rules FILE`). Parsing only; reading files and the environment is the caller's job.
//!
//! # Rules file format
//!
//! UTF-8 text, one rule per line:
//!
//! ```text
//! # comments and blank lines are ignored
//! internal_token = itk_[A-Za-z0-9]{32}
//! db_password    = (?i)dbpass=(\S+)
//! ```
//!
//! The name (before the first `=`, 1–40 of `a-z 0-9 _`) becomes the placeholder kind,
//! `[REDACTED:internal_token:…]`. The regex (after the first `=`, surrounding spaces trimmed;
//! write `\x20` for a significant space) uses the `regex` crate syntax and runs on decoded
//! string values. When it has capture groups, the first group that takes part in a match is
//! the secret and the rest of the match stays; otherwise the whole match is the secret. A rule
//! that does not compile, or that matches the empty string, is an error naming the rule and
//! its line, never its text.

use std::fmt;

/// What a user rule matches.
#[derive(Debug, Clone)]
pub enum Pattern {
    /// These exact bytes.
    Literal(Vec<u8>),
    /// A regex (`regex` crate syntax).
    Regex(String),
}

/// One user rule.
#[derive(Clone)]
pub struct Rule {
    /// The rule's name, for errors.
    pub name: String,
    /// The placeholder kind.
    pub kind: String,
    /// What it matches.
    pub pattern: Pattern,
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the value: it is the secret.
        f.debug_struct("Rule")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// A rule that cannot be used. Names the rule, never its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    /// The rule (`literal #2`, `env GITHUB_TOKEN`, `line 3 (internal_token)`).
    pub rule: String,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.rule, self.reason)
    }
}

impl std::error::Error for RuleError {}

/// Shortest literal accepted: shorter ones would shred ordinary text.
pub const MIN_LITERAL: usize = 4;

fn literal_rule(name: String, kind: String, v: &[u8]) -> Result<Rule, RuleError> {
    if v.len() < MIN_LITERAL {
        return Err(RuleError {
            rule: name,
            reason: format!("value shorter than {MIN_LITERAL} bytes"),
        });
    }
    Ok(Rule {
        name,
        kind,
        pattern: Pattern::Literal(v.to_vec()),
    })
}

/// `--redact-literal VALUE` (the `n`th one, 1-based, for errors).
pub fn literal(n: usize, v: &[u8]) -> Result<Rule, RuleError> {
    literal_rule(format!("--redact-literal #{n}"), "literal".into(), v)
}

/// `--redact-env NAME`, given the variable's value (`None` when unset).
pub fn env(name: &str, value: Option<&[u8]>) -> Result<Rule, RuleError> {
    let rule = format!("--redact-env {}", crate::error::sanitize(name));
    let Some(v) = value.filter(|v| !v.is_empty()) else {
        return Err(RuleError {
            rule,
            reason: "the variable is not set or empty".into(),
        });
    };
    let kind: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    literal_rule(rule, format!("env_{kind}"), v)
}

fn valid_name(n: &str) -> bool {
    (1..=40).contains(&n.len())
        && n.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
}

/// Parse a rules file (`source` names it in errors). Regexes are compiled later, by the engine.
pub fn parse_file(source: &str, text: &str) -> Result<Vec<Rule>, RuleError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let at = format!("{source}: line {}", i + 1);
        let Some((name, re)) = t.split_once('=') else {
            return Err(RuleError {
                rule: at,
                reason: "expected `name = regex`".into(),
            });
        };
        let (name, re) = (name.trim(), re.trim());
        if !valid_name(name) {
            return Err(RuleError {
                rule: at,
                reason: "the rule name must be 1-40 of a-z, 0-9, _".into(),
            });
        }
        if re.is_empty() {
            return Err(RuleError {
                rule: format!("{at} ({name})"),
                reason: "empty regex".into(),
            });
        }
        out.push(Rule {
            name: format!("{at} ({name})"),
            kind: name.to_owned(),
            pattern: Pattern::Regex(re.to_owned()),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_without_echoing() {
        let r = parse_file("r.txt", "# c\n\n a_b = x(y)\n").unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].kind, "a_b");
        let e = parse_file("r.txt", "ok = a\nBad Name = hunter2secret\n").unwrap_err();
        assert_eq!(e.rule, "r.txt: line 2");
        assert!(!e.to_string().contains("hunter2"));
        let e = literal(1, b"abc").unwrap_err();
        assert!(!e.to_string().contains("abc"));
        assert_eq!(
            env("MY_TOKEN", Some(b"abcdef")).unwrap().kind,
            "env_my_token"
        );
        assert!(env("X", None).is_err());
    }
}
