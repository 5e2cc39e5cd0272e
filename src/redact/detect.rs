//! The built-in detectors: one regex per secret shape, and the checks that decide whether a
//! regex match really is a secret (so code such as `password = getpass()` is left alone).
//!
//! Every pattern starts with a literal or keyword (never with a bare character class), so a
//! delta stream only holds back text that could really be the start of a secret. Patterns are
//! matched on decoded string values in ASCII mode (`(?-u)`).

/// What a match must satisfy to count as a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// The pattern says it all.
    Any,
    /// At least one ASCII letter and one digit.
    Mixed,
    /// A password literal: not a variable, call, placeholder or plain word.
    Password,
    /// A random-looking value: long enough and at least the entropy threshold.
    Entropy,
    /// The password part of `scheme://user:pass@host`: not a placeholder.
    UrlPassword,
    /// An `Authorization` credential.
    Auth,
    /// A 40-character AWS secret access key.
    AwsSecret,
}

/// One built-in detector.
pub(crate) struct Builtin {
    /// The placeholder kind.
    pub kind: &'static str,
    /// The regex (bytes, ASCII). The first capture group that takes part in a match is the
    /// secret; without groups the whole match is.
    pub re: &'static str,
    /// The check a match must pass.
    pub check: Check,
    /// A context detector (keyword + value): its secret is re-classified by the token
    /// detectors, so `token=ghp_…` is reported as `github_token`.
    pub context: bool,
}

const fn b(kind: &'static str, re: &'static str, check: Check, context: bool) -> Builtin {
    Builtin {
        kind,
        re,
        check,
        context,
    }
}

/// PEM private keys: the whole block when its footer is there, else the header and the
/// base64 body that follows (a block cut by the end of a string or line).
const PEM: &str = r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[A-Za-z0-9+/=\s:,.\\\-]*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]*)";

/// The built-in detectors, most specific first (on the same start, the earlier one wins).
/// Token detectors come before context detectors; `TOKEN_DETECTORS` counts them.
pub(crate) const BUILTINS: &[Builtin] = &[
    b(
        "anthropic_key",
        r"\bsk-ant-[A-Za-z0-9_\-]{20,}",
        Check::Any,
        false,
    ),
    b(
        "openai_key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        Check::Mixed,
        false,
    ),
    b(
        "aws_access_key_id",
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
        Check::Any,
        false,
    ),
    b(
        "github_token",
        r"\bgh[pousr]_[A-Za-z0-9]{36,}\b",
        Check::Any,
        false,
    ),
    b(
        "github_token",
        r"\bgithub_pat_[A-Za-z0-9_]{22,}",
        Check::Any,
        false,
    ),
    b(
        "gitlab_token",
        r"\bglpat-[A-Za-z0-9_\-]{20,}",
        Check::Any,
        false,
    ),
    b(
        "slack_token",
        r"\bxox[baprs]-[A-Za-z0-9\-]{10,}",
        Check::Mixed,
        false,
    ),
    b(
        "stripe_key",
        r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
        Check::Any,
        false,
    ),
    b(
        "google_api_key",
        r"\bAIza[0-9A-Za-z_\-]{35,}",
        Check::Any,
        false,
    ),
    b("npm_token", r"\bnpm_[A-Za-z0-9]{36,}\b", Check::Any, false),
    b(
        "pypi_token",
        r"\bpypi-AgE[A-Za-z0-9_\-]{50,}",
        Check::Any,
        false,
    ),
    b(
        "jwt",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
        Check::Any,
        false,
    ),
    b("private_key", PEM, Check::Any, false),
    // Context detectors: a keyword, then the secret.
    b(
        "aws_secret_key",
        r#"(?:{{aws}}_?{{secret}}_?{{access}}_?{{key}}|{{aws}}_?{{secret}}_?{{key}}|{{secret}}_?{{access}}_?{{key}})["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)"#,
        Check::AwsSecret,
        true,
    ),
    b(
        "authorization",
        r#"\b(?:{{proxy}}-)?{{authorization}}["']?\s*[:=]\s*["']?(?:(?:{{bearer}}|{{basic}}|{{token}}|{{bot}}|{{digest}})\s+)?([A-Za-z0-9._~+/\-]{8,}=*)"#,
        Check::Auth,
        true,
    ),
    b(
        "authorization",
        r"\b{{bearer}}\s+([A-Za-z0-9._~+/\-]{16,}=*)",
        Check::Mixed,
        true,
    ),
    b(
        "url_password",
        r#"//[^\s:@/?#"'<>\\\[\]]+:([^\s@/?#"'<>\\]+)@[A-Za-z0-9\[]"#,
        Check::UrlPassword,
        true,
    ),
    b(
        "password",
        r#"--(?:{{password}}|{{passwd}})\s+([^\s"'`]+)"#,
        Check::Password,
        true,
    ),
    b(
        "password",
        r#"(?:{{password}}|{{passwd}}|{{passphrase}}|\b{{pwd}})[A-Za-z0-9_\-]*["']?\s*[:=]\s*(?:"([^"\r\n]+)"|'([^'\r\n]+)'|([^\s"'`,;&)}\]]+))"#,
        Check::Password,
        true,
    ),
    b(
        "secret",
        r#"(?:{{secret}}|{{token}}|{{api}}[_\-]?{{key}}|{{apikey}}|{{access}}[_\-]?{{key}}|{{private}}[_\-]?{{key}}|{{auth}}[_\-]?{{key}}|{{signing}}[_\-]?{{key}}|{{credential}}s?)[A-Za-z0-9_\-]*["']?\s*[:=]\s*["']?([A-Za-z0-9+/=_.\-~]{16,})"#,
        Check::Entropy,
        true,
    ),
    b(
        "secret",
        r#"[A-Z0-9]_KEY["']?\s*[:=]\s*["']?([A-Za-z0-9+/=_.\-~]{16,})"#,
        Check::Entropy,
        true,
    ),
];

/// Literals such that every match of every built-in contains one, starting at most `back`
/// bytes after the match starts. A string without any is skipped, and a string with some is
/// searched only at the starts they allow. Keywords (second list) stand for their three
/// spellings, like `{{word}}` in the patterns. All are 3+ bytes (the SIMD search then
/// fingerprints 3 bytes); `//` (URL credentials) is searched separately.
pub(crate) const ANCHORS: &[(&str, usize)] = &[
    ("sk-", 0),
    ("AKIA", 0),
    ("ASIA", 0),
    ("ABIA", 0),
    ("ACCA", 0),
    ("ghp_", 0),
    ("gho_", 0),
    ("ghu_", 0),
    ("ghs_", 0),
    ("ghr_", 0),
    ("github_pat_", 0),
    ("glpat-", 0),
    ("xox", 0),
    ("k_live_", 1),
    ("k_test_", 1),
    ("AIza", 0),
    ("npm_", 0),
    ("pypi-", 0),
    ("eyJ", 0),
    ("-----BEGIN", 0),
];

/// Keyword literals, `(word, back)`.
pub(crate) const KEYWORD_ANCHORS: &[(&str, usize)] = &[
    // `aws_secret…`
    ("secret", 4),
    // `proxy-authorization`
    ("authorization", 6),
    ("bearer", 0),
    // `--password`
    ("password", 2),
    ("passwd", 2),
    ("passphrase", 0),
    ("pwd", 0),
    ("token", 0),
    // `signing_key`, `A_KEY`
    ("key", 8),
    ("credential", 0),
];

/// The three spellings of a keyword: `word`, `Word`, `WORD`.
pub(crate) fn spellings(w: &str) -> [String; 3] {
    let mut cap = w.to_owned();
    cap[..1].make_ascii_uppercase();
    [w.to_owned(), cap, w.to_ascii_uppercase()]
}

/// The literal of URL credentials, searched with `memmem` next to [`ANCHORS`].
pub(crate) const URL_ANCHOR: &[u8] = b"//";

/// How many leading entries of [`BUILTINS`] are token detectors (used to classify the value
/// found by a context detector).
pub(crate) const TOKEN_DETECTORS: usize = 13;

/// JSON member names that make their string value secret-looking: `(kind, regex on the key,
/// check on the whole value)`. The value is then checked as a whole (no keyword needed in it).
pub(crate) const KEY_CONTEXTS: &[(&str, &str, Check)] = &[
    (
        "password",
        r"(?:{{password}}|{{passwd}}|{{passphrase}}|\b{{pwd}})$",
        Check::Password,
    ),
    (
        "aws_secret_key",
        r"{{secret}}_?{{access}}_?{{key}}$",
        Check::AwsSecret,
    ),
    ("authorization", r"\b{{authorization}}$", Check::Auth),
    (
        "secret",
        r"(?:{{secret}}|{{token}}|{{api}}[_\-]?{{key}}|{{apikey}}|{{access}}[_\-]?{{key}}|{{private}}[_\-]?{{key}}|{{auth}}[_\-]?{{key}}|{{signing}}[_\-]?{{key}}|{{credential}}s?)$|[A-Z0-9]_KEY$",
        Check::Entropy,
    ),
];

/// The regex of a built-in: each `{{word}}` (a keyword) becomes `(?:word|Word|WORD)`. Keywords
/// match in these three spellings only, not in any case mix: that keeps every pattern's
/// prefixes a small set of literals, which the regex engine searches with SIMD.
pub(crate) fn expand(re: &str) -> String {
    let mut out = String::with_capacity(re.len() * 2);
    let mut rest = re;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let j = after.find("}}").expect("keyword marker is closed");
        let [lower, cap, upper] = spellings(&after[..j]);
        out.push_str(&format!("(?:{lower}|{cap}|{upper})"));
        rest = &after[j + 2..];
    }
    out.push_str(rest);
    format!("(?-u:{out})")
}

/// Shannon entropy of `s` in bits per byte.
pub(crate) fn entropy(s: &[u8]) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &c in s {
        counts[c as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

fn has_digit(s: &[u8]) -> bool {
    s.iter().any(u8::is_ascii_digit)
}

fn has_alpha(s: &[u8]) -> bool {
    s.iter().any(u8::is_ascii_alphabetic)
}

fn contains(s: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(s, needle).is_some()
}

/// Values documentation uses in place of a real secret.
fn is_placeholder_word(s: &[u8]) -> bool {
    const WORDS: &[&[u8]] = &[
        b"password",
        b"passwd",
        b"pass",
        b"secret",
        b"token",
        b"changeme",
        b"example",
        b"redacted",
        b"your_password",
        b"yourpassword",
        b"your-password",
        b"mypassword",
        b"username",
        b"user",
        b"none",
        b"null",
        b"undefined",
    ];
    WORDS.iter().any(|w| s.eq_ignore_ascii_case(w))
        || s.iter().all(|&c| c == s[0])
        || s.iter().all(|&c| matches!(c, b'x' | b'X' | b'*' | b'.'))
}

/// Looks like a reference to a secret rather than the secret: a variable, a template, a call,
/// an index expression, a path.
fn is_reference(s: &[u8]) -> bool {
    matches!(
        s.first(),
        Some(
            b'$' | b'%'
                | b'{'
                | b'<'
                | b'('
                | b'['
                | b'@'
                | b'&'
                | b'*'
                | b'/'
                | b'.'
                | b'~'
                | b'#'
                | b'`'
                | b'\\'
        )
    ) || contains(s, b"${")
        || contains(s, b"{{")
        || s.contains(&b'(')
        || s.contains(&b'[')
}

/// A human-chosen password literal.
fn password_ok(s: &[u8]) -> bool {
    if s.len() < 6 || s.len() > 128 || is_reference(s) || is_placeholder_word(s) {
        return false;
    }
    // A plain word or identifier (`str`, `getpass`, `process.env.PW`) is code, not a password.
    let symbol = s
        .iter()
        .any(|&c| c.is_ascii_punctuation() && !matches!(c, b'_' | b'-' | b'.' | b'/' | b'\\'));
    has_digit(s) || symbol
}

/// A machine-generated value: long, mixed, and at least `bits` of entropy per byte (hex-only
/// values, whose alphabet is smaller, need `bits - 0.5`).
fn random_ok(s: &[u8], bits: f64) -> bool {
    if s.len() < 16 || is_reference(s) || !has_digit(s) || !has_alpha(s) {
        return false;
    }
    let hex = s.iter().all(u8::is_ascii_hexdigit);
    let need = if hex { bits - 0.5 } else { bits };
    entropy(s) >= need
}

/// Apply `check` to the secret `s`.
pub(crate) fn check(check: Check, s: &[u8], bits: f64) -> bool {
    match check {
        Check::Any => true,
        Check::Mixed => has_digit(s) && has_alpha(s),
        Check::Password => password_ok(s),
        Check::Entropy => random_ok(s, bits),
        Check::UrlPassword => !is_reference(s) && !is_placeholder_word(s) && s.len() >= 3,
        Check::Auth => {
            s.len() >= 8
                && !is_reference(s)
                && !is_placeholder_word(s)
                && (has_digit(s)
                    || (s.iter().any(u8::is_ascii_uppercase)
                        && s.iter().any(u8::is_ascii_lowercase)
                        && entropy(s) >= 3.0))
        }
        Check::AwsSecret => {
            s.len() == 40
                && s.iter()
                    .all(|&c| c.is_ascii_alphanumeric() || c == b'/' || c == b'+')
                && s.iter().any(u8::is_ascii_uppercase)
                && s.iter().any(u8::is_ascii_lowercase)
        }
    }
}

/// For a whole value under a secret-looking key: the part that is the secret.
pub(crate) fn key_value_span(check: Check, v: &[u8]) -> (usize, usize) {
    if check == Check::Auth {
        // `Bearer xyz`, `Basic xyz`: the credential follows the scheme (the schemes of the
        // `authorization` pattern, so a value found here is also found in text).
        if let Some(sp) = v.iter().position(u8::is_ascii_whitespace) {
            let scheme = std::str::from_utf8(&v[..sp]).unwrap_or("");
            let known = ["bearer", "basic", "token", "bot", "digest"]
                .iter()
                .any(|w| spellings(w).iter().any(|x| x == scheme));
            if known {
                let mut st = sp;
                while st < v.len() && v[st].is_ascii_whitespace() {
                    st += 1;
                }
                return (st, v.len());
            }
        }
    }
    (0, v.len())
}

/// Whether a whole value under a secret-looking key is shaped like the value of the
/// keyword's text pattern (so whatever a key finds, the text patterns find too, in the raw
/// line): one token of the pattern's characters.
pub(crate) fn key_value_shape(check: Check, s: &[u8]) -> bool {
    match check {
        Check::Entropy => s
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || b"+/=_.-~".contains(&c)),
        Check::Auth => {
            let body = s.strip_suffix(b"=").map_or(s, |_| {
                let n = s.iter().rev().take_while(|&&c| c == b'=').count();
                &s[..s.len() - n]
            });
            body.len() >= 8
                && body
                    .iter()
                    .all(|&c| c.is_ascii_alphanumeric() || b"._~+/-".contains(&c))
        }
        _ => !s.iter().any(|&c| c.is_ascii_whitespace()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks() {
        assert!(password_ok(b"hunter22"));
        assert!(password_ok(b"P@ssword"));
        assert!(!password_ok(b"getpass"));
        assert!(!password_ok(b"process.env.DB_PASSWORD"));
        assert!(!password_ok(b"${DB_PASSWORD}"));
        assert!(!password_ok(b"********"));
        assert!(!password_ok(b"os.environ[\"PW\"]"));
        assert!(random_ok(b"9f8e7d6c5b4a39281726354a5b6c7d8e", 3.5));
        assert!(!random_ok(b"cache_creation_input_tokens", 3.5));
        assert!(!random_ok(b"aaaaaaaaaaaaaaaaaaaa1", 3.5));
        assert!((entropy(b"abcd") - 2.0).abs() < 1e-9);
        assert_eq!(key_value_span(Check::Auth, b"Bearer  abc"), (8, 11));
        assert_eq!(key_value_span(Check::Auth, b"MAC abc"), (0, 7));
        assert_eq!(key_value_span(Check::Auth, b"abc"), (0, 3));
    }
}
