//! Redaction: secrets never leave the process. A pure, deterministic engine (no I/O; [`setup`]
//! reads rule files and the environment) that rewrites stream-json lines.
//!
//! # What is found
//!
//! | kind | what |
//! |---|---|
//! | `anthropic_key` | `sk-ant-…` |
//! | `openai_key` | `sk-…`, `sk-proj-…`, `sk-svcacct-…`, `sk-admin-…` |
//! | `aws_access_key_id` | `AKIA…`/`ASIA…`/`ABIA…`/`ACCA…` + 16 |
//! | `aws_secret_key` | 40 characters after `aws_secret_access_key`/`SecretAccessKey` … |
//! | `github_token` | `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_` |
//! | `gitlab_token` | `glpat-…` |
//! | `slack_token` | `xoxb-`, `xoxa-`, `xoxp-`, `xoxr-`, `xoxs-` |
//! | `stripe_key` | `sk_live_`, `rk_live_`, `sk_test_`, `rk_test_` |
//! | `google_api_key` | `AIza…` |
//! | `npm_token` | `npm_…` |
//! | `pypi_token` | `pypi-AgE…` |
//! | `jwt` | `eyJ….eyJ….…` |
//! | `private_key` | PEM `-----BEGIN … PRIVATE KEY-----` blocks (inside strings, or over text lines) |
//! | `authorization` | `Authorization: Bearer|Basic|Token …`, `Bearer <token>` |
//! | `url_password` | the password of `scheme://user:password@host` |
//! | `password` | `password=`, `passwd:`, `pwd=`, `"password": "…"` with a literal value (not a variable, call, template or plain word) |
//! | `secret` | `secret`/`token`/`api_key`/`access_key`/`*_KEY` … `=`/`:` a random-looking value: 16+ characters, letters and digits, Shannon entropy at least the threshold (default 3.5 bits per character, `--redact-entropy`; hex-only values need 0.5 less) |
//! | user rules | `literal`, `env_<name>`, or the rule name from `--redact-rules` |
//! | `truncated` | the tail of a line cut by `--max-line-bytes` that could be the start of a secret |
//!
//! A value found by a keyword detector is reported under the token kind when it is one
//! (`token=ghp_…` is a `github_token`). A JSON member whose name is secret-looking (`password`,
//! `api_key`, `GITHUB_TOKEN`, `Authorization`, `SecretAccessKey`) has its whole string value
//! checked the same way, no keyword needed in the value.
//!
//! # Placeholders
//!
//! `[REDACTED:<kind>:<6 hex>]`, the hex being the first 3 bytes of HMAC-SHA-256(key, secret):
//! the same secret gives the same placeholder in a run, so diffs and repeated values stay
//! readable, and nothing about the secret can be recovered without the key. The key is random
//! per run unless `--redact-key` (or `BOO_NORMALIZE_REDACT_KEY`) gives one, which makes
//! placeholders stable across runs. The key is never printed.
//!
//! # Where
//!
//! Strings are scanned on their decoded value (`\u0073k-ant-…` and `\/` hide nothing) and the
//! placeholder replaces the raw bytes of the secret only: every other byte of the line is kept,
//! so the output is the same JSON, same shape. Lines that are not JSON are scanned as text.
//!
//! # Delta streams and latency
//!
//! `text_delta`, `thinking_delta` and `input_json_delta` fragments of one block (same
//! `parent_tool_use_id` and `index`) are scanned as one text. A fragment is decided when no
//! detector can still match across its end: for prose that is at once; a trailing word that is
//! a prefix of a detector keyword (`pass`, `tok`, `sk-`, `eyJ`…) waits for the next fragment; a
//! secret being streamed waits until it ends (~40–200 bytes for tokens, ~1.7–3.3 KB for a
//! private key block). A delta line whose fragment is not decided is held back WHOLE, with the
//! lines after it (the order never changes), until a later line of its block decides it
//! (`hold`); `content_block_stop`, `message_stop`, a new `message_start` of the same stream
//! or the end of input decide everything. Then the held lines come out: unchanged when they
//! hold no secret (input without secrets comes out byte for byte, and `--redact` gives the
//! envelope plain normalization gives); else the placeholder goes into the line where the
//! undecided text began and the lines the secret spans keep an empty fragment. Exactly one
//! output line per input line, always. The complete `assistant` line gets the same placeholders.
//!
//! # Marks
//!
//! Each output line comes with its marks: `[{"path", "kind", "count"}]`, `path` being the JSON
//! Pointer (RFC 6901) of the redacted string in that input line (`""` for a text line), never
//! the secret. The normalizer writes them as the common member `redactions` of every event
//! made from that line.

pub mod copy;
mod deltas;
mod detect;
mod engine;
mod fragments;
mod hold;
mod lex;
mod line;
pub mod parallel;
mod rules;
mod search;
pub mod setup;

pub use engine::{Config, DEFAULT_ENTROPY_BITS, Engine, Hit, Key, KindId, Scratch, Seen};
pub use line::{Counts, Redactor};
pub use rules::{MIN_LITERAL, Pattern, Rule, RuleError, env, literal, parse_file};

/// Redact one complete string value (`key`: its JSON member name, if any) with a scratch of
/// `engine`: the string with placeholders. For tests and benchmarks.
pub fn redact_str(engine: &Engine, sc: &mut Scratch, key: Option<&[u8]>, s: &[u8]) -> Vec<u8> {
    let mut hits = Vec::new();
    engine.scan_value(sc, key, s, false, &mut hits);
    let mut out = Vec::with_capacity(s.len());
    let mut at = 0;
    for h in &hits {
        out.extend_from_slice(&s[at..h.start]);
        engine.placeholder(h.kind, &s[h.start..h.end], &mut out);
        at = h.end;
    }
    out.extend_from_slice(&s[at..]);
    out
}

/// The built-in detector regexes, in priority order (for benchmarks and experiments).
#[doc(hidden)]
pub fn builtin_patterns() -> Vec<String> {
    detect::BUILTINS
        .iter()
        .map(|b| detect::expand(b.re))
        .collect()
}
