//! The child's environment: an allowlist over the parent's, with API credentials removed.
//!
//! # Policy
//!
//! By default the child sees only these variables of boo-normalize's environment:
//!
//! | variables | why |
//! |---|---|
//! | `PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`, `TERM`, `LANG`, `LC_*`, `TZ`, `TMPDIR` | a working Unix process (finding `node`, the login in `~/.claude`, locale) |
//! | `http_proxy`, `https_proxy`, `no_proxy` (any case) | reaching the API from behind a proxy |
//! | `CLAUDE_*` | Claude Code's own settings (`CLAUDE_CONFIG_DIR`, `CLAUDE_CODE_*`, the subscription's `CLAUDE_CODE_OAUTH_TOKEN`) |
//! | what `--env KEY` names (`KEY*` for a prefix) or `--env KEY=VALUE` sets | everything else, explicitly |
//!
//! `--inherit-env` passes the whole environment instead. Either way, **API credentials** are
//! removed unless `--keep-env-key` (which passes them all): `ANTHROPIC_*` variables whose name
//! contains `KEY`, `TOKEN`,
//! `SECRET`, `PASSWORD` or `CREDENTIAL` (`ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`, …) and
//! `ANTHROPIC_CUSTOM_HEADERS` (it can carry an `Authorization` header). An API key in the
//! environment silently switches a subscription login to per-token billing.
//!
//! The other `ANTHROPIC_*` variables (`ANTHROPIC_BASE_URL`, `ANTHROPIC_MODEL`, …) are not
//! credentials, but they are not on the default allowlist either: `ANTHROPIC_BASE_URL` sends
//! every request, login token included, to another host, so it must be asked for with
//! `--env ANTHROPIC_BASE_URL` (or `--inherit-env`).
//!
//! Another agent (`spawn --agent`) gets the same rules over its own variables
//! ([`crate::agent::EnvVars`]): its own prefix instead of `CLAUDE_*` (`CODEX_*`, `GEMINI_*`,
//! `QWEN_*`, `OPENCODE_*`, `COPILOT_*`), its API keys as the credentials (`OPENAI_API_KEY`,
//! `GEMINI_API_KEY`, `COPILOT_PROVIDER_API_KEY`, …), its base URLs only when named, and its
//! providers' variables named when not passed. The functions without an agent are Claude's.

use std::ffi::{OsStr, OsString};

use crate::agent::Agent;

/// Exact names on the default allowlist.
pub const ALLOW_EXACT: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "TZ", "TMPDIR",
];

/// Name prefixes on the default allowlist (besides the agent's own, `CLAUDE_*` for Claude).
pub const ALLOW_PREFIX: &[&str] = &["LC_"];

/// Proxy variables, matched case-insensitively.
pub const ALLOW_PROXY: &[&str] = &["http_proxy", "https_proxy", "no_proxy"];

/// How the child's environment is built.
#[derive(Debug, Clone, Default)]
pub struct EnvPolicy {
    /// Pass the whole environment (credentials still removed unless `keep_credentials`).
    pub inherit: bool,
    /// Keep API credentials.
    pub keep_credentials: bool,
    /// `--env` entries: `KEY`, `KEY*` (a prefix) or `KEY=VALUE`.
    pub extra: Vec<String>,
}

/// Whether `name` is an API credential of Claude's (removed unless `--keep-env-key`).
pub fn is_credential(name: &str) -> bool {
    Agent::Claude.env().is_credential(name)
}

/// The provider settings of boo-normalize's environment that the child's does not get (names
/// only, never values): the stderr notice and `run.end`'s `env_removed` are made from it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removed {
    /// The agent they were not passed to.
    pub agent: Agent,
    /// API credentials (passed only with `--keep-env-key`), sorted.
    pub credentials: Vec<String>,
    /// Other provider settings (passed with `--env NAME` or `--inherit-env`), sorted.
    pub settings: Vec<String>,
}

impl Removed {
    /// Claude's provider variables set in `parent` but absent from `child`.
    pub fn between(parent: &[(OsString, OsString)], child: &[(OsString, OsString)]) -> Self {
        Removed::between_for(Agent::Claude, parent, child)
    }

    /// `agent`'s provider variables set in `parent` but absent from `child`.
    pub fn between_for(
        agent: Agent,
        parent: &[(OsString, OsString)],
        child: &[(OsString, OsString)],
    ) -> Self {
        let vars = agent.env();
        let passed = |k: &OsStr| child.iter().any(|(c, _)| c == k);
        let mut r = Removed {
            agent,
            ..Removed::default()
        };
        for (k, _) in parent {
            let Some(name) = k.to_str() else { continue };
            if passed(k) || !vars.is_provider(name) {
                continue;
            }
            if vars.is_credential(name) {
                r.credentials.push(name.to_owned());
            } else {
                r.settings.push(name.to_owned());
            }
        }
        r.credentials.sort_unstable();
        r.settings.sort_unstable();
        r
    }

    /// Every name, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self
            .credentials
            .iter()
            .chain(&self.settings)
            .map(String::as_str)
            .collect();
        all.sort_unstable();
        all
    }

    /// `run.end`'s `env_removed` member: the names as a JSON array (`[]` when none).
    pub fn end_member(&self) -> (String, String) {
        let names = serde_json::to_string(&self.names()).expect("strings serialize");
        ("env_removed".into(), names)
    }

    /// One stderr line naming each variable with the flag that passes it; `None` when none.
    pub fn notice(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.credentials.is_empty() {
            parts.push(format!(
                "{} (credentials: --keep-env-key)",
                self.credentials.join(", ")
            ));
        }
        if !self.settings.is_empty() {
            parts.push(format!(
                "{} (--env NAME, or --inherit-env)",
                self.settings.join(", ")
            ));
        }
        if parts.is_empty() {
            return None;
        }
        Some(format!(
            "boo-normalize: spawn: not passed to {}: {}",
            self.agent.name(),
            parts.join("; ")
        ))
    }
}

/// The provider settings in `parent` that the child's environment `child` does not get, as one
/// stderr line (names only, never values, each with the flag that passes it); `None` when none.
pub fn removed_notice(
    parent: &[(OsString, OsString)],
    child: &[(OsString, OsString)],
) -> Option<String> {
    Removed::between(parent, child).notice()
}

/// Whether `name` is on Claude's default allowlist.
pub fn is_allowed(name: &str) -> bool {
    is_allowed_for(Agent::Claude, name)
}

/// Whether `name` is on `agent`'s default allowlist: the common names and `agent`'s own
/// settings (never a credential or a base URL).
pub fn is_allowed_for(agent: Agent, name: &str) -> bool {
    ALLOW_EXACT.contains(&name)
        || ALLOW_PREFIX.iter().any(|p| name.starts_with(p))
        || ALLOW_PROXY.iter().any(|p| name.eq_ignore_ascii_case(p))
        || agent.env().is_own(name)
}

/// `--refuse-api-key`: an error naming Claude's credential variables set in `vars` (the
/// environment `claude` would inherit), if any.
pub fn refuse_credentials<'a>(
    vars: impl IntoIterator<Item = (&'a OsStr, &'a OsStr)>,
) -> Result<(), crate::error::Error> {
    refuse_credentials_for(Agent::Claude, vars)
}

/// `--refuse-api-key` for `agent`: an error naming its credential variables set in `vars`.
pub fn refuse_credentials_for<'a>(
    agent: Agent,
    vars: impl IntoIterator<Item = (&'a OsStr, &'a OsStr)>,
) -> Result<(), crate::error::Error> {
    let found: Vec<String> = vars
        .into_iter()
        .filter_map(|(k, _)| k.to_str())
        .filter(|k| agent.env().is_credential(k))
        .map(str::to_owned)
        .collect();
    if found.is_empty() {
        return Ok(());
    }
    Err(crate::error::Error::msg(
        "--refuse-api-key",
        format!("{} is set in the environment", found.join(", ")),
    ))
}

/// The credential variables set in `vars` (names only, for `--refuse-api-key`).
pub fn credentials_in<'a>(vars: impl IntoIterator<Item = (&'a OsStr, &'a OsStr)>) -> Vec<String> {
    vars.into_iter()
        .filter_map(|(k, _)| k.to_str())
        .filter(|k| is_credential(k))
        .map(str::to_owned)
        .collect()
}

impl EnvPolicy {
    /// [`EnvPolicy::validate_for`] Claude.
    pub fn validate(&self) -> Result<(), String> {
        self.validate_for(Agent::Claude)
    }

    /// Check the `--env` entries: names must be non-empty and free of `=`/NUL; a credential of
    /// `agent` with an explicit value needs `keep_credentials` (an explicit error beats a silent
    /// drop).
    pub fn validate_for(&self, agent: Agent) -> Result<(), String> {
        let is_credential = |n: &str| agent.env().is_credential(n);
        for e in &self.extra {
            let name = e.split_once('=').map_or(e.as_str(), |(k, _)| k);
            let bare = name.strip_suffix('*').unwrap_or(name);
            if bare.is_empty() {
                return Err(format!("--env {e:?}: empty variable name"));
            }
            if bare.contains(['*', '\0']) || e.contains('\0') {
                return Err(format!("--env {name:?}: bad variable name"));
            }
            if e.contains('=') && is_credential(name) && !self.keep_credentials {
                return Err(format!(
                    "--env {name}: an API credential; add --keep-env-key to pass it"
                ));
            }
        }
        Ok(())
    }

    fn named(&self, name: &str) -> bool {
        self.extra.iter().any(|e| {
            if e.contains('=') {
                return false;
            }
            match e.strip_suffix('*') {
                Some(p) => name.starts_with(p),
                None => e == name,
            }
        })
    }

    /// [`EnvPolicy::build_for`] Claude.
    pub fn build(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        self.build_for(Agent::Claude, vars)
    }

    /// `agent`'s environment from the parent's `vars`, sorted by name. Non-UTF-8 names pass
    /// only with `inherit`.
    pub fn build_for(
        &self,
        agent: Agent,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        let is_credential = |n: &str| agent.env().is_credential(n);
        let mut out: Vec<(OsString, OsString)> = Vec::new();
        for (k, v) in vars {
            let keep = match k.to_str() {
                Some(name) if is_credential(name) => self.keep_credentials,
                Some(name) => self.inherit || is_allowed_for(agent, name) || self.named(name),
                None => self.inherit,
            };
            if keep {
                out.push((k, v));
            }
        }
        for e in &self.extra {
            if let Some((k, v)) = e.split_once('=')
                && (self.keep_credentials || !is_credential(k))
            {
                out.retain(|(n, _)| n.as_os_str() != OsStr::new(k));
                out.push((k.into(), v.into()));
            }
        }
        out.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(list: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        list.iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    fn names(env: &[(OsString, OsString)]) -> Vec<String> {
        env.iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    }

    const PARENT: &[(&str, &str)] = &[
        ("PATH", "/bin"),
        ("HOME", "/h"),
        ("LC_ALL", "C"),
        ("HTTPS_PROXY", "http://p"),
        ("no_proxy", "localhost"),
        ("CLAUDE_CONFIG_DIR", "/c"),
        ("CLAUDE_CODE_OAUTH_TOKEN", "oauth"),
        ("ANTHROPIC_API_KEY", "sk-ant-secret"),
        ("ANTHROPIC_AUTH_TOKEN", "tok"),
        ("ANTHROPIC_CUSTOM_HEADERS", "Authorization: x"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:1"),
        ("AWS_SECRET_ACCESS_KEY", "aws"),
        ("MY_APP_A", "1"),
        ("MY_APP_B", "2"),
    ];

    #[test]
    fn removed_provider_settings_are_named() {
        let parent = vars(&[
            ("ANTHROPIC_API_KEY", "sk-secret"),
            ("ANTHROPIC_BASE_URL", "http://x"),
            ("AWS_REGION", "us-east-1"),
            ("HOME", "/h"),
            ("UNRELATED", "1"),
        ]);
        let child = vars(&[("HOME", "/h"), ("AWS_REGION", "us-east-1")]);
        let line = removed_notice(&parent, &child).unwrap();
        assert_eq!(
            line,
            "boo-normalize: spawn: not passed to claude: ANTHROPIC_API_KEY (credentials: --keep-env-key); ANTHROPIC_BASE_URL (--env NAME, or --inherit-env)"
        );
        assert!(!line.contains("sk-secret") && !line.contains("http://x"));
        assert_eq!(removed_notice(&child, &child), None);
        let r = Removed::between(&parent, &child);
        assert_eq!(
            r.end_member(),
            (
                "env_removed".to_owned(),
                r#"["ANTHROPIC_API_KEY","ANTHROPIC_BASE_URL"]"#.to_owned()
            )
        );
        assert_eq!(Removed::between(&child, &child).end_member().1, "[]");
    }

    #[test]
    fn another_agent_gets_its_own_settings_and_loses_its_own_keys() {
        let parent = vars(&[
            ("PATH", "/bin"),
            ("CODEX_HOME", "/c"),
            ("OPENAI_API_KEY", "sk-secret"),
            ("OPENAI_BASE_URL", "http://x"),
            ("CLAUDE_CONFIG_DIR", "/c"),
            ("ANTHROPIC_API_KEY", "a"),
        ]);
        let env = EnvPolicy::default().build_for(Agent::Codex, parent.clone());
        assert_eq!(names(&env), ["CODEX_HOME", "PATH"]);
        let r = Removed::between_for(Agent::Codex, &parent, &env);
        assert_eq!(
            r.notice().unwrap(),
            "boo-normalize: spawn: not passed to codex: OPENAI_API_KEY (credentials: --keep-env-key); OPENAI_BASE_URL (--env NAME, or --inherit-env)"
        );
        let p = EnvPolicy {
            keep_credentials: true,
            extra: vec!["OPENAI_BASE_URL".into()],
            ..Default::default()
        };
        let n = names(&p.build_for(Agent::Codex, parent.clone()));
        assert_eq!(
            n,
            ["CODEX_HOME", "OPENAI_API_KEY", "OPENAI_BASE_URL", "PATH"]
        );
        let refused = refuse_credentials_for(
            Agent::Codex,
            parent.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str())),
        )
        .unwrap_err()
        .to_string();
        assert!(refused.contains("OPENAI_API_KEY") && !refused.contains("ANTHROPIC"));
        let bad = EnvPolicy {
            extra: vec!["GEMINI_API_KEY=x".into()],
            ..Default::default()
        };
        assert!(bad.validate_for(Agent::Gemini).is_err() && bad.validate().is_ok());
        // A base URL under the agent's own prefix is still not passed unless named.
        let cp = vars(&[
            ("COPILOT_MODEL", "m"),
            ("COPILOT_PROVIDER_BASE_URL", "http://x"),
        ]);
        let n = names(&EnvPolicy::default().build_for(Agent::Copilot, cp));
        assert_eq!(n, ["COPILOT_MODEL"]);
    }

    #[test]
    fn default_allowlist_strips_everything_else() {
        let env = EnvPolicy::default().build(vars(PARENT));
        assert_eq!(
            names(&env),
            [
                "CLAUDE_CODE_OAUTH_TOKEN",
                "CLAUDE_CONFIG_DIR",
                "HOME",
                "HTTPS_PROXY",
                "LC_ALL",
                "PATH",
                "no_proxy"
            ]
        );
    }

    #[test]
    fn env_flag_adds_names_prefixes_and_values() {
        let p = EnvPolicy {
            extra: vec![
                "ANTHROPIC_BASE_URL".into(),
                "MY_APP_*".into(),
                "IS_SANDBOX=1".into(),
                "HOME=/other".into(),
                "ANTHROPIC_API_KEY".into(),
            ],
            ..Default::default()
        };
        p.validate().unwrap();
        let env = p.build(vars(PARENT));
        let n = names(&env);
        assert!(n.contains(&"ANTHROPIC_BASE_URL".into()));
        assert!(n.contains(&"MY_APP_A".into()) && n.contains(&"MY_APP_B".into()));
        assert!(n.contains(&"IS_SANDBOX".into()));
        assert!(
            !n.contains(&"ANTHROPIC_API_KEY".into()),
            "credential named: still removed"
        );
        let home: Vec<_> = env.iter().filter(|(k, _)| k == "HOME").collect();
        assert_eq!(home.len(), 1);
        assert_eq!(home[0].1, "/other");
    }

    #[test]
    fn inherit_keeps_all_but_credentials_unless_asked() {
        let env = EnvPolicy {
            inherit: true,
            ..Default::default()
        }
        .build(vars(PARENT));
        let n = names(&env);
        assert!(n.contains(&"AWS_SECRET_ACCESS_KEY".into()));
        assert!(n.contains(&"ANTHROPIC_BASE_URL".into()));
        for c in [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_CUSTOM_HEADERS",
        ] {
            assert!(!n.contains(&c.into()), "{c}");
        }
        let env = EnvPolicy {
            inherit: true,
            keep_credentials: true,
            ..Default::default()
        }
        .build(vars(PARENT));
        assert_eq!(env.len(), PARENT.len());
        let env = EnvPolicy {
            keep_credentials: true,
            ..Default::default()
        }
        .build(vars(PARENT));
        let n = names(&env);
        assert!(
            n.contains(&"ANTHROPIC_API_KEY".into()),
            "--keep-env-key alone passes keys"
        );
        assert!(!n.contains(&"ANTHROPIC_BASE_URL".into()) && !n.contains(&"MY_APP_A".into()));
    }

    #[test]
    fn credentials_and_validation() {
        assert!(is_credential("ANTHROPIC_API_KEY"));
        assert!(is_credential("ANTHROPIC_FOUNDRY_API_KEY"));
        assert!(!is_credential("ANTHROPIC_BASE_URL"));
        assert!(!is_credential("ANTHROPIC_MODEL"));
        assert!(!is_credential("CLAUDE_CODE_OAUTH_TOKEN"));
        let bad = |e: &str| {
            EnvPolicy {
                extra: vec![e.into()],
                ..Default::default()
            }
            .validate()
            .is_err()
        };
        assert!(bad("ANTHROPIC_API_KEY=sk"));
        assert!(bad("=x"));
        assert!(bad("A*B"));
        assert!(!bad("ANTHROPIC_API_KEY"));
        assert!(!bad("X=a=b"));
        let found = credentials_in(
            vars(PARENT)
                .iter()
                .map(|(k, v)| (k.as_os_str(), v.as_os_str())),
        );
        assert_eq!(found.len(), 3);
    }
}
