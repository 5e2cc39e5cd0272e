//! The agent CLIs boo-normalize runs (`spawn --agent`, `probe --agent`), and the facts about
//! each that both commands read: its `--agent` name, its usual binary, the dialect of its JSON
//! stream, its headless JSON-mode flags, where its prompt goes, the flags that let it run tools
//! unattended, and the environment variables holding its own settings, its API keys and its base
//! URLs. How a probe points each CLI at the loopback API is in `probe::agent`; how spawn builds
//! a command line and an environment from these facts is in `spawn::command` and `spawn::env`.

use crate::dialect::Dialect;

/// An agent CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Agent {
    /// Claude Code (`claude -p --output-format stream-json`), Messages API.
    #[default]
    Claude,
    /// Codex (`codex exec --json`), OpenAI Responses.
    Codex,
    /// Gemini CLI (`gemini -p --output-format stream-json`), Gemini API.
    Gemini,
    /// Qwen Code (`qwen -p --output-format stream-json`), OpenAI Chat Completions.
    Qwen,
    /// OpenCode (`opencode run --format json`), OpenAI Chat Completions.
    Opencode,
    /// Copilot CLI (`copilot -p --output-format json`), GitHub's service or bring-your-own-key.
    Copilot,
}

/// Every agent, in the order `--agent` lists them.
pub const ALL: &[Agent] = &[
    Agent::Claude,
    Agent::Codex,
    Agent::Gemini,
    Agent::Qwen,
    Agent::Opencode,
    Agent::Copilot,
];

/// Where an agent takes its prompt on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptArg {
    /// As the value of `-p` (`--prompt=TEXT` when the text starts with `-`).
    Flag,
    /// As the last argument.
    Last,
}

/// Where an agent takes a prompt that cannot go on its command line (too long, not UTF-8, a
/// NUL, or an option-like text where the prompt is the last argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptStdin {
    /// Standard input, the prompt argument left out (the CLI reads a piped stdin).
    Read,
    /// Standard input, with `-` as the prompt argument.
    Dash,
    /// Nowhere: such a prompt is refused.
    No,
}

/// The environment variables an agent reads, by role (names or, ending in `_`, prefixes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvVars {
    /// Prefixes of the agent's own settings: passed to it by default (its credentials and base
    /// URLs among them excepted).
    pub own: &'static [&'static str],
    /// Prefixes under which a variable whose name has `KEY`, `TOKEN`, `SECRET`, `PASSWORD` or
    /// `CREDENTIAL` (or is `…_CUSTOM_HEADERS`) is an API credential: removed unless
    /// `--keep-env-key`, refused by `--refuse-api-key`.
    pub credentials: &'static [&'static str],
    /// Prefixes of the provider settings the agent may read (credentials, base URLs, models,
    /// cloud switches): those not passed are named on stderr and in `run.end`.
    pub providers: &'static [&'static str],
    /// The variables that send its API requests to another host: never passed by default, even
    /// under an own prefix (`--env NAME` passes one).
    pub base_urls: &'static [&'static str],
    /// The variables holding its API key (for the help and the docs; each is also a credential).
    pub keys: &'static [&'static str],
}

const CLAUDE_ENV: EnvVars = EnvVars {
    own: &["CLAUDE_"],
    credentials: &["ANTHROPIC_"],
    providers: &[
        "ANTHROPIC_",
        "AWS_",
        "CLOUD_ML_",
        "VERTEX_",
        "GOOGLE_",
        "GCLOUD_",
    ],
    base_urls: &["ANTHROPIC_BASE_URL"],
    keys: &["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"],
};

const CODEX_ENV: EnvVars = EnvVars {
    own: &["CODEX_"],
    credentials: &["OPENAI_", "CODEX_", "AZURE_OPENAI_"],
    providers: &["OPENAI_", "AZURE_OPENAI_", "CODEX_"],
    base_urls: &["OPENAI_BASE_URL"],
    keys: &["OPENAI_API_KEY", "CODEX_API_KEY"],
};

const GEMINI_ENV: EnvVars = EnvVars {
    own: &["GEMINI_"],
    credentials: &["GEMINI_", "GOOGLE_"],
    providers: &["GEMINI_", "GOOGLE_", "GCLOUD_", "CLOUD_ML_", "VERTEX_"],
    base_urls: &["GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL"],
    keys: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
};

/// The providers Qwen Code can be configured for: their prefixes are both its credentials and
/// its provider settings.
const QWEN_PROVIDERS: &[&str] = &[
    "OPENAI_",
    "DASHSCOPE_",
    "QWEN_",
    "ANTHROPIC_",
    "GEMINI_",
    "GOOGLE_",
    "OPENROUTER_",
];

const QWEN_ENV: EnvVars = EnvVars {
    own: &["QWEN_"],
    credentials: QWEN_PROVIDERS,
    providers: QWEN_PROVIDERS,
    base_urls: &["OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"],
    keys: &["OPENAI_API_KEY", "DASHSCOPE_API_KEY"],
};

/// The providers OpenCode reads keys of from the environment (its AI-SDK providers).
const OPENCODE_PROVIDERS: &[&str] = &[
    "ANTHROPIC_",
    "OPENAI_",
    "GEMINI_",
    "GOOGLE_",
    "OPENROUTER_",
    "GROQ_",
    "MISTRAL_",
    "DEEPSEEK_",
    "XAI_",
    "AZURE_",
    "AWS_",
    "OPENCODE_",
];

const OPENCODE_ENV: EnvVars = EnvVars {
    own: &["OPENCODE_"],
    credentials: OPENCODE_PROVIDERS,
    providers: OPENCODE_PROVIDERS,
    base_urls: &["ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"],
    keys: &["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"],
};

const COPILOT_ENV: EnvVars = EnvVars {
    own: &["COPILOT_"],
    credentials: &["COPILOT_", "GH_", "GITHUB_"],
    providers: &["COPILOT_", "GH_", "GITHUB_"],
    base_urls: &["COPILOT_PROVIDER_BASE_URL"],
    keys: &[
        "COPILOT_PROVIDER_API_KEY",
        "COPILOT_GITHUB_TOKEN",
        "GH_TOKEN",
    ],
};

/// Words that make a provider variable a credential.
const CREDENTIAL_WORDS: &[&str] = &["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"];

impl EnvVars {
    /// Whether `name` is an API credential of the agent.
    pub fn is_credential(&self, name: &str) -> bool {
        self.credentials.iter().any(|p| {
            name.strip_prefix(p).is_some_and(|rest| {
                rest == "CUSTOM_HEADERS" || CREDENTIAL_WORDS.iter().any(|w| rest.contains(w))
            })
        })
    }

    /// Whether `name` is one of the agent's own settings (passed by default).
    pub fn is_own(&self, name: &str) -> bool {
        self.own.iter().any(|p| name.starts_with(p))
            && !self.is_credential(name)
            && !self.base_urls.contains(&name)
    }

    /// Whether `name` is a provider setting the agent may read (named when not passed).
    pub fn is_provider(&self, name: &str) -> bool {
        self.providers.iter().any(|p| name.starts_with(p)) || self.base_urls.contains(&name)
    }
}

impl Agent {
    /// Its `--agent` name.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Qwen => "qwen",
            Agent::Opencode => "opencode",
            Agent::Copilot => "copilot",
        }
    }

    /// The agent named `name`.
    pub fn parse(name: &str) -> Option<Agent> {
        ALL.iter().copied().find(|a| a.name() == name)
    }

    /// Its usual executable name (looked up on `PATH`).
    pub fn binary(self) -> &'static str {
        self.name()
    }

    /// The dialect of its JSON stream (read by that dialect's reader).
    pub fn dialect(self) -> Dialect {
        match self {
            Agent::Claude => Dialect::Claude,
            Agent::Codex => Dialect::Codex,
            Agent::Gemini => Dialect::Gemini,
            Agent::Qwen => Dialect::Qwen,
            Agent::Opencode => Dialect::OpenCode,
            Agent::Copilot => Dialect::Copilot,
        }
    }

    /// The arguments of its headless JSON mode, which come before any other (Claude's stream
    /// mode; partial messages are [`Agent::partial_flag`]).
    pub fn json_args(self) -> &'static [&'static str] {
        match self {
            Agent::Claude => &["-p", "--output-format", "stream-json", "--verbose"],
            Agent::Codex => &["exec", "--json"],
            Agent::Gemini | Agent::Qwen => &["--output-format", "stream-json"],
            Agent::Opencode => &["run", "--format", "json"],
            Agent::Copilot => &["--output-format", "json"],
        }
    }

    /// The flag that adds token-level partial messages to its stream, if it has one.
    pub fn partial_flag(self) -> Option<&'static str> {
        match self {
            Agent::Claude | Agent::Qwen => Some("--include-partial-messages"),
            _ => None,
        }
    }

    /// The flags that let it run every tool without asking (what a probe passes; spawn leaves
    /// them to the user). Claude's is the scenario's `--permission-mode`.
    pub fn unattended_args(self) -> &'static [&'static str] {
        match self {
            Agent::Claude | Agent::Opencode => &[],
            Agent::Codex => &["--skip-git-repo-check", "-s", "danger-full-access"],
            Agent::Gemini | Agent::Qwen => &["--yolo"],
            Agent::Copilot => &["--allow-all-tools", "--no-color"],
        }
    }

    /// Where it takes its prompt on the command line (Claude's: after `--`, see
    /// `spawn::command`).
    pub fn prompt_arg(self) -> PromptArg {
        match self {
            Agent::Claude | Agent::Gemini | Agent::Qwen | Agent::Copilot => PromptArg::Flag,
            Agent::Codex | Agent::Opencode => PromptArg::Last,
        }
    }

    /// Where it takes a prompt that cannot go on its command line.
    pub fn prompt_stdin(self) -> PromptStdin {
        match self {
            Agent::Claude | Agent::Gemini | Agent::Qwen | Agent::Opencode => PromptStdin::Read,
            Agent::Codex => PromptStdin::Dash,
            Agent::Copilot => PromptStdin::No,
        }
    }

    /// The environment variables it reads, by role.
    pub fn env(self) -> &'static EnvVars {
        match self {
            Agent::Claude => &CLAUDE_ENV,
            Agent::Codex => &CODEX_ENV,
            Agent::Gemini => &GEMINI_ENV,
            Agent::Qwen => &QWEN_ENV,
            Agent::Opencode => &OPENCODE_ENV,
            Agent::Copilot => &COPILOT_ENV,
        }
    }

    /// The arguments that continue its last session, or resume one, and so need no prompt.
    pub fn continues(self, arg: &str) -> bool {
        match self {
            Agent::Claude => {
                matches!(
                    arg,
                    "--resume" | "-r" | "--continue" | "-c" | "--input-format"
                ) || arg.starts_with("--resume=")
                    || arg.starts_with("--input-format=")
            }
            Agent::Codex => arg == "resume",
            Agent::Gemini => arg == "--resume" || arg == "-r" || arg.starts_with("--resume="),
            Agent::Qwen | Agent::Copilot => {
                matches!(arg, "--resume" | "-r" | "--continue" | "-c")
                    || arg.starts_with("--resume=")
            }
            Agent::Opencode => {
                matches!(arg, "--continue" | "-c" | "--session" | "-s")
                    || arg.starts_with("--session=")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_binaries_and_dialects() {
        for a in ALL {
            assert_eq!(Agent::parse(a.name()), Some(*a));
            assert_eq!(a.binary(), a.name());
            assert!(!a.json_args().is_empty());
            assert!(!a.env().keys.is_empty(), "{a:?}");
            for k in a.env().keys {
                assert!(a.env().is_credential(k), "{a:?} {k}");
                assert!(a.env().is_provider(k), "{a:?} {k}");
                assert!(!a.env().is_own(k), "{a:?} {k}");
            }
            for u in a.env().base_urls {
                assert!(!a.env().is_own(u) && !a.env().is_credential(u), "{a:?} {u}");
            }
        }
        assert_eq!(Agent::Opencode.dialect(), Dialect::OpenCode);
        assert_eq!(Agent::parse("cursor"), None);
    }

    #[test]
    fn credentials_are_each_agents_own() {
        let c = Agent::Claude.env();
        assert!(
            c.is_credential("ANTHROPIC_API_KEY") && c.is_credential("ANTHROPIC_CUSTOM_HEADERS")
        );
        assert!(!c.is_credential("CLAUDE_CODE_OAUTH_TOKEN") && !c.is_credential("OPENAI_API_KEY"));
        assert!(!c.is_credential("AWS_SECRET_ACCESS_KEY"));
        assert!(c.is_own("CLAUDE_CONFIG_DIR"));
        let x = Agent::Codex.env();
        assert!(x.is_credential("OPENAI_API_KEY") && x.is_credential("CODEX_API_KEY"));
        assert!(x.is_own("CODEX_HOME") && !x.is_own("CODEX_API_KEY"));
        assert!(x.is_provider("OPENAI_BASE_URL") && !x.is_provider("ANTHROPIC_API_KEY"));
        let g = Agent::Gemini.env();
        assert!(g.is_own("GEMINI_MODEL") && !g.is_own("GEMINI_API_KEY"));
        assert!(g.is_credential("GOOGLE_APPLICATION_CREDENTIALS"));
        assert!(!g.is_own("GOOGLE_GEMINI_BASE_URL") && g.is_provider("GOOGLE_GEMINI_BASE_URL"));
        let p = Agent::Copilot.env();
        assert!(p.is_own("COPILOT_MODEL") && !p.is_own("COPILOT_PROVIDER_BASE_URL"));
        assert!(p.is_credential("GH_TOKEN") && p.is_credential("COPILOT_PROVIDER_API_KEY"));
    }

    #[test]
    fn sessions_continue_in_each_agents_words() {
        assert!(Agent::Codex.continues("resume") && !Agent::Codex.continues("--continue"));
        assert!(Agent::Gemini.continues("--resume") && !Agent::Gemini.continues("--continue"));
        assert!(Agent::Opencode.continues("--continue") && Agent::Copilot.continues("--continue"));
        assert!(Agent::Claude.continues("--input-format=stream-json"));
    }
}
