//! The planted secrets of the redaction tests: one or more per detector, each in a realistic
//! context, generated from a fixed seed (no secret-shaped literal sits in the source).

#![allow(dead_code)]

pub mod build;

/// A secret in context.
#[derive(Debug, Clone)]
pub struct Plant {
    /// The placeholder kind it must get.
    pub kind: &'static str,
    /// Text containing the secret once.
    pub text: String,
    /// The bytes that must disappear.
    pub secret: String,
}

/// A deterministic generator (xorshift).
pub struct Gen(u64);

impl Gen {
    pub fn new(seed: u64) -> Self {
        Gen(seed.max(1))
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// `n` characters of `alphabet`, with at least one of each of its first `must` classes
    /// (lower, upper, digit) when the alphabet has them.
    pub fn chars(&mut self, alphabet: &str, n: usize) -> String {
        let a: Vec<char> = alphabet.chars().collect();
        loop {
            let s: String = (0..n)
                .map(|_| a[(self.next() % a.len() as u64) as usize])
                .collect();
            let ok = |f: fn(&char) -> bool| !a.iter().any(f) || s.chars().any(|c| f(&c));
            if ok(char::is_ascii_lowercase)
                && ok(char::is_ascii_uppercase)
                && ok(char::is_ascii_digit)
            {
                return s;
            }
        }
    }
}

pub const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
pub const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
pub const DIGITS: &str = "0123456789";

fn alnum() -> String {
    format!("{LOWER}{UPPER}{DIGITS}")
}

fn p(kind: &'static str, before: &str, secret: String, after: &str) -> Plant {
    Plant {
        kind,
        text: format!("{before}{secret}{after}"),
        secret,
    }
}

/// One plant per detector shape (and per user rule of [`user_rules`]).
pub fn plants() -> Vec<Plant> {
    let mut g = Gen::new(0x5eed);
    let an = alnum();
    let b64 = format!("{an}+/");
    let url = format!("{an}-_");
    let upd = format!("{UPPER}{DIGITS}");
    let pem_body = |g: &mut Gen| {
        format!(
            "{}\n{}\n{}==",
            g.chars(&b64, 64),
            g.chars(&b64, 64),
            g.chars(&b64, 30)
        )
    };
    let rsa = format!(
        "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----",
        pem_body(&mut g)
    );
    let ssh = format!(
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----",
        pem_body(&mut g)
    );
    vec![
        p(
            "anthropic_key",
            "my key is ",
            format!("sk-ant-api03-{}AA", g.chars(&url, 93)),
            ", keep it safe",
        ),
        p(
            "openai_key",
            "OPENAI says ",
            format!("sk-proj-{}", g.chars(&url, 120)),
            " today",
        ),
        p(
            "openai_key",
            "legacy: ",
            format!("sk-{}T3BlbkFJ{}", g.chars(&an, 20), g.chars(&an, 20)),
            "",
        ),
        p(
            "aws_access_key_id",
            "aws_access_key_id = ",
            format!("AKIA{}", g.chars(&upd, 16)),
            "\n",
        ),
        p(
            "aws_access_key_id",
            "temporary ",
            format!("ASIA{}", g.chars(&upd, 16)),
            " expires",
        ),
        p(
            "aws_secret_key",
            "aws_secret_access_key = ",
            g.chars(&b64, 40),
            "\nregion = us-east-1",
        ),
        p(
            "github_token",
            "pushed with ",
            format!("ghp_{}", g.chars(&an, 36)),
            ".",
        ),
        p(
            "github_token",
            "oauth ",
            format!("gho_{}", g.chars(&an, 36)),
            "",
        ),
        p(
            "github_token",
            "",
            format!("ghu_{}", g.chars(&an, 36)),
            " user",
        ),
        p(
            "github_token",
            "GH_TOKEN=",
            format!("ghs_{}", g.chars(&an, 36)),
            "",
        ),
        p(
            "github_token",
            "refresh ",
            format!("ghr_{}", g.chars(&an, 36)),
            "",
        ),
        p(
            "github_token",
            "fine-grained ",
            format!("github_pat_{}_{}", g.chars(&an, 22), g.chars(&an, 59)),
            " ok",
        ),
        p(
            "gitlab_token",
            "GITLAB ",
            format!("glpat-{}", g.chars(&url, 20)),
            "",
        ),
        p(
            "slack_token",
            "slack bot ",
            format!(
                "xoxb-{}-{}-{}",
                g.chars(DIGITS, 12),
                g.chars(DIGITS, 13),
                g.chars(&an, 24)
            ),
            " posted",
        ),
        p(
            "stripe_key",
            "charge with ",
            format!("sk_live_{}", g.chars(&an, 24)),
            "",
        ),
        p(
            "stripe_key",
            "restricted ",
            format!("rk_live_{}", g.chars(&an, 24)),
            "",
        ),
        p(
            "google_api_key",
            "maps key=",
            format!("AIza{}", g.chars(&url, 35)),
            "&q=1",
        ),
        p(
            "npm_token",
            "NPM_TOKEN is ",
            format!("npm_{}", g.chars(&an, 36)),
            "",
        ),
        p(
            "pypi_token",
            "twine upload -p ",
            format!("pypi-AgEIcHlwaS5vcmc{}", g.chars(&url, 80)),
            " dist/*",
        ),
        p(
            "jwt",
            "session=",
            format!(
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.{}",
                g.chars(&url, 43)
            ),
            "; Path=/",
        ),
        p("private_key", "key file:\n", rsa, "\n(end)"),
        p("private_key", "", ssh, "\n"),
        p(
            "authorization",
            "curl -H 'Authorization: Bearer ",
            g.chars(&an, 40),
            "' https://api.example.com/v1",
        ),
        p(
            "authorization",
            "Authorization: Basic ",
            "dXNlcjpzM2NyM3RQYXNzd29yZA==".to_owned(),
            "\r\nHost: x",
        ),
        p(
            "authorization",
            "sent header bearer ",
            g.chars(&an, 32),
            " upstream",
        ),
        p(
            "url_password",
            "DATABASE_URL=postgres://admin:",
            format!("{}!{}", g.chars(&an, 8), g.chars(&an, 6)),
            "@db.internal:5432/app",
        ),
        p(
            "password",
            "db.connect(host, password=\"",
            format!("{}#{}", g.chars(&an, 7), g.chars(DIGITS, 3)),
            "\")",
        ),
        p(
            "password",
            "PGPASSWORD=",
            format!("{}{}", g.chars(LOWER, 6), g.chars(DIGITS, 4)),
            " psql -h db",
        ),
        p(
            "password",
            "mysql --password ",
            format!("{}%{}", g.chars(&an, 6), g.chars(&an, 4)),
            " -u root",
        ),
        p("secret", "api_key = \"", g.chars(&an, 32), "\""),
        p("secret", "client_secret: ", g.chars(&an, 40), "\n"),
        p(
            "secret",
            "export SENDGRID_KEY=",
            format!("SG{}", g.chars(&an, 30)),
            "",
        ),
        p("literal", "the code is ", LITERAL.to_owned(), " now"),
        p("env_my_token", "value: ", ENV_VALUE.to_owned(), "."),
        p(
            "acme_token",
            "found ",
            format!("acme_{}", g.chars(&format!("{LOWER}{DIGITS}"), 24)),
            " in logs",
        ),
    ]
}

/// Member name and value pairs whose value is a secret only because of the name (tool input
/// and init fields written as JSON objects).
pub fn keyed() -> Vec<(String, Plant)> {
    let mut g = Gen::new(0xbeef);
    let an = alnum();
    let b64 = format!("{an}+/");
    let v = |kind, s: String| Plant {
        kind,
        text: s.clone(),
        secret: s,
    };
    vec![
        (
            "password".into(),
            v(
                "password",
                format!("{}-{}", g.chars(&an, 8), g.chars(DIGITS, 2)),
            ),
        ),
        ("api_key".into(), v("secret", g.chars(&an, 32))),
        (
            "GITHUB_TOKEN".into(),
            v("github_token", format!("ghp_{}", g.chars(&an, 36))),
        ),
        (
            "SecretAccessKey".into(),
            v("aws_secret_key", g.chars(&b64, 40)),
        ),
        (
            "Authorization".into(),
            Plant {
                kind: "authorization",
                text: {
                    let t = g.chars(&an, 30);
                    format!("Bearer {t}")
                },
                secret: String::new(),
            },
        ),
    ]
    .into_iter()
    .map(|(k, mut p)| {
        if p.secret.is_empty() {
            p.secret = p.text["Bearer ".len()..].to_owned();
        }
        (k, p)
    })
    .collect()
}

/// The `--redact-literal` value of the tests.
pub const LITERAL: &str = "corp-internal-7f3k2m9q";
/// The `MY_TOKEN` value of the tests (`--redact-env MY_TOKEN`).
pub const ENV_VALUE: &str = "plain-looking-but-secret-42";

/// The `--redact-rules` file of the tests.
pub fn user_rules() -> &'static str {
    "# test rules\nacme_token = acme_[a-z0-9]{24}\n"
}
