//! The agent CLIs a probe can run, and what differs between them: the model API each speaks,
//! how each is pointed at the loopback API (config files in its isolated home, environment),
//! its command line in each output mode, its built-in scenarios, and which stdout line ends a
//! run and how (the result a scenario expects).

use std::ffi::OsString;
use std::fs;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::scenario::{Scenario, Source, mode_flags, parse_builtin};

use crate::agent::PromptArg;
pub use crate::agent::{ALL, Agent};

/// The dummy key every CLI gets (the loopback API accepts any).
pub const DUMMY_KEY: &str = "sk-probe-dummy-key-000000000000";

/// The dummy API key Claude Code gets (the built-in API accepts any).
const CLAUDE_DUMMY_KEY: &str = "sk-ant-probe-dummy-key-000000000000";

/// The environment every Claude Code run gets besides `PATH`, `HOME` and `ANTHROPIC_BASE_URL`: a
/// dummy key, no auto-updates, telemetry, error reports or other non-essential traffic,
/// permission bypass allowed for root (`IS_SANDBOX`), a fixed locale and time zone.
const CLAUDE_ENV: &[(&str, &str)] = &[
    ("ANTHROPIC_API_KEY", CLAUDE_DUMMY_KEY),
    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    ("DISABLE_AUTOUPDATER", "1"),
    ("DISABLE_TELEMETRY", "1"),
    ("DISABLE_ERROR_REPORTING", "1"),
    ("IS_SANDBOX", "1"),
    ("LANG", "C.UTF-8"),
    ("TZ", "UTC"),
];

/// The model the OpenAI-speaking CLIs are told to use (in Codex's bundled catalog, so no
/// "model metadata not found" item).
const OPENAI_MODEL: &str = "gpt-5.5";

impl Agent {
    /// The output modes it has (the first is its default).
    pub fn modes(self) -> &'static [&'static str] {
        match self {
            Agent::Claude | Agent::Qwen => &["stream", "partial"],
            Agent::Gemini => &["stream"],
            Agent::Codex | Agent::Opencode | Agent::Copilot => &["json"],
        }
    }

    /// Its built-in scenarios, in run order.
    pub fn scenarios(self) -> Vec<Source> {
        let list: &[(&str, &str)] = match self {
            Agent::Claude => return super::scenario::builtin(),
            Agent::Codex => CODEX,
            Agent::Gemini => GEMINI,
            Agent::Qwen => QWEN,
            Agent::Opencode => OPENCODE,
            Agent::Copilot => COPILOT,
        };
        list.iter()
            .map(|(name, text)| parse_builtin(name, text))
            .collect()
    }

    /// Write the CLI's configuration into `home` (and trust `work`) and return its environment
    /// besides `PATH` and `HOME`, for the loopback API at `base_url` (`http://127.0.0.1:PORT`).
    pub fn prepare(
        self,
        home: &Path,
        work: &Path,
        base_url: &str,
    ) -> Result<Vec<(String, String)>, String> {
        let write = |rel: &str, text: String| -> Result<(), String> {
            let p = home.join(rel);
            if let Some(d) = p.parent() {
                fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
            }
            fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))
        };
        let h = home.to_string_lossy().into_owned();
        let mut env: Vec<(String, String)> = vec![
            ("LANG".into(), "C.UTF-8".into()),
            ("TZ".into(), "UTC".into()),
            ("NO_COLOR".into(), "1".into()),
            ("XDG_CONFIG_HOME".into(), format!("{h}/.config")),
            ("XDG_DATA_HOME".into(), format!("{h}/.local/share")),
            ("XDG_CACHE_HOME".into(), format!("{h}/.cache")),
            ("XDG_STATE_HOME".into(), format!("{h}/.local/state")),
            // Whatever a CLI asks the npm registry goes nowhere.
            ("NPM_CONFIG_REGISTRY".into(), "http://127.0.0.1:9/".into()),
            ("npm_config_registry".into(), "http://127.0.0.1:9/".into()),
        ];
        if self == Agent::Claude {
            env.clear();
        }
        let mut add = |k: &str, v: String| env.push((k.to_owned(), v));
        match self {
            Agent::Claude => {
                add("ANTHROPIC_BASE_URL", base_url.to_owned());
                for (k, v) in CLAUDE_ENV {
                    add(k, (*v).to_owned());
                }
            }
            Agent::Codex => {
                write(
                    ".codex/config.toml",
                    format!(
                        "model = \"{OPENAI_MODEL}\"\nmodel_provider = \"probe\"\n\
                         check_for_update_on_startup = false\n\n\
                         [analytics]\nenabled = false\n\n\
                         [features]\nplugins = false\n\n\
                         [model_providers.probe]\nname = \"probe\"\n\
                         base_url = \"{base_url}/v1\"\nenv_key = \"PROBE_OPENAI_API_KEY\"\n\
                         wire_api = \"responses\"\nrequest_max_retries = 0\n\
                         stream_max_retries = 0\n"
                    ),
                )?;
                add("CODEX_HOME", format!("{h}/.codex"));
                add("PROBE_OPENAI_API_KEY", DUMMY_KEY.into());
            }
            Agent::Gemini => {
                let settings = json!({
                    "security": {"auth": {"selectedType": "gemini-api-key"}},
                    "privacy": {"usageStatisticsEnabled": false},
                    "telemetry": {"enabled": false},
                    "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
                });
                write(".gemini/settings.json", settings.to_string())?;
                let trust = json!({work.to_string_lossy(): "TRUST_FOLDER"});
                write(".gemini/trustedFolders.json", trust.to_string())?;
                add("GEMINI_API_KEY", DUMMY_KEY.into());
                add("GOOGLE_GEMINI_BASE_URL", base_url.to_owned());
                add("GEMINI_CLI_NO_RELAUNCH", "true".into());
            }
            Agent::Qwen => {
                // The managed memory extraction (a second conversation after the answer) is
                // off: it held every run about five seconds longer (it is answered if it runs).
                let settings = json!({
                    "memory": {"enableManagedAutoMemory": false},
                    "privacy": {"usageStatisticsEnabled": false},
                    "telemetry": {"enabled": false},
                    "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
                });
                write(".qwen/settings.json", settings.to_string())?;
                add("OPENAI_BASE_URL", format!("{base_url}/v1"));
                add("OPENAI_API_KEY", DUMMY_KEY.into());
                add("OPENAI_MODEL", "qwen3-coder-plus".into());
                // No second Node process with a larger heap: the relaunch loaded the CLI twice,
                // 3 to 7 s of every run's start on 2 busy cores.
                add("QWEN_CODE_NO_RELAUNCH", "true".into());
            }
            Agent::Opencode => {
                let config = json!({
                    "$schema": "https://opencode.ai/config.json",
                    "model": "probe/probe-model",
                    "small_model": "probe/probe-model",
                    "autoupdate": false,
                    "share": "disabled",
                    "permission": {"edit": "allow", "bash": "allow", "webfetch": "deny"},
                    "provider": {"probe": {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "probe",
                        "options": {"baseURL": format!("{base_url}/v1"), "apiKey": DUMMY_KEY},
                        "models": {"probe-model": {"name": "probe-model"}},
                    }},
                });
                write(".config/opencode/opencode.json", config.to_string())?;
                add("OPENCODE_DISABLE_MODELS_FETCH", "1".into());
                add("OPENCODE_DISABLE_AUTOUPDATE", "1".into());
                add("OPENCODE_DISABLE_SHARE", "1".into());
                add("OPENCODE_DISABLE_LSP_DOWNLOAD", "1".into());
            }
            Agent::Copilot => {
                add("COPILOT_PROVIDER_BASE_URL", format!("{base_url}/v1"));
                add("COPILOT_PROVIDER_API_KEY", DUMMY_KEY.into());
                add("COPILOT_PROVIDER_WIRE_API", "responses".into());
                add("COPILOT_MODEL", "gpt-5.4".into());
                add("COPILOT_AUTO_UPDATE", "false".into());
                // No GitHub sign-in, telemetry, web tools or update checks (it looked up
                // api.github.com without this).
                add("COPILOT_OFFLINE", "true".into());
            }
        }
        Ok(env)
    }

    /// The CLI's arguments for `sc` in `mode` (the scenario's `args` included).
    pub fn argv(self, sc: &Scenario, mode: &str) -> Vec<OsString> {
        let p = || OsString::from(&sc.prompt);
        let mut a: Vec<OsString> = Vec::new();
        if self == Agent::Claude {
            a.extend(["-p".into(), p()]);
            a.extend(mode_flags(mode).iter().map(OsString::from));
            a.push("--permission-mode".into());
            a.push(sc.permission_mode.clone().into());
        } else {
            if self.prompt_arg() == PromptArg::Flag {
                a.extend(["-p".into(), p()]);
            }
            a.extend(self.json_args().iter().map(OsString::from));
            a.extend(self.unattended_args().iter().map(OsString::from));
            if let (Some(flag), "partial") = (self.partial_flag(), mode) {
                a.push(flag.into());
            }
        }
        a.extend(sc.args.iter().map(OsString::from));
        if self.prompt_arg() == PromptArg::Last {
            a.push(p());
        }
        a
    }

    /// The CLI's arguments for resuming the last session of `sc` with `prompt` in `mode`.
    pub fn resume_argv(self, sc: &Scenario, mode: &str, prompt: &str) -> Vec<OsString> {
        let mut again = sc.clone();
        again.prompt = prompt.to_owned();
        let mut a = self.argv(&again, mode);
        match self {
            // `exec resume` takes no `-s`: the sandbox goes through `-c`.
            Agent::Codex => {
                a = [
                    "exec",
                    "--json",
                    "--skip-git-repo-check",
                    "-c",
                    "sandbox_mode=\"danger-full-access\"",
                    "resume",
                    "--last",
                ]
                .map(OsString::from)
                .to_vec();
                a.extend(sc.args.iter().map(OsString::from));
                a.push(prompt.into());
            }
            Agent::Gemini => a.extend(["--resume", "latest"].map(OsString::from)),
            Agent::Opencode => a.insert(3, "--continue".into()),
            Agent::Claude | Agent::Qwen | Agent::Copilot => a.push("--continue".into()),
        }
        a
    }

    /// How a stdout line ends the run, if it does: the result (`success`, `error`, or the
    /// CLI's own subtype) and its `is_error`.
    pub fn terminal(self, m: &Map<String, Value>) -> Option<(String, Option<bool>)> {
        let s = |k: &str| m.get(k).and_then(Value::as_str);
        let kind = s("type")?;
        let is_error = m.get("is_error").and_then(Value::as_bool);
        match self {
            Agent::Claude | Agent::Qwen => {
                (kind == "result").then(|| (s("subtype").unwrap_or("(none)").to_owned(), is_error))
            }
            Agent::Codex => match kind {
                "turn.completed" => Some(("success".into(), Some(false))),
                "turn.failed" => Some(("error".into(), Some(true))),
                _ => None,
            },
            Agent::Gemini => (kind == "result").then(|| {
                let st = s("status").unwrap_or("(none)").to_owned();
                let err = st != "success";
                (st, Some(err))
            }),
            Agent::Opencode => match kind {
                "step_finish" => {
                    let reason = m
                        .get("part")
                        .and_then(|p| p.get("reason"))
                        .and_then(Value::as_str);
                    (reason != Some("tool-calls")).then(|| ("success".into(), Some(false)))
                }
                "error" => Some(("error".into(), Some(true))),
                _ => None,
            },
            Agent::Copilot => (kind == "result").then(|| {
                let code = m.get("exitCode").and_then(Value::as_i64).unwrap_or(-1);
                let r = if code == 0 { "success" } else { "error" };
                (r.to_owned(), Some(code != 0))
            }),
        }
    }
}

macro_rules! scenarios {
    ($name:ident, $dir:literal, [$($s:literal),* $(,)?]) => {
        const $name: &[(&str, &str)] =
            &[$(($s, include_str!(concat!("scenarios/", $dir, "/", $s, ".json")))),*];
    };
    // The scenarios every agent but Claude has, each from the agent's own folder.
    ($name:ident, $dir:literal) => {
        scenarios!(
            $name,
            $dir,
            [
                "plain",
                "bash",
                "parallel_tools",
                "write_edit",
                "api_error",
                "turns",
                "thinking",
                "resume"
            ]
        );
    };
}

scenarios!(CODEX, "codex");
scenarios!(GEMINI, "gemini");
scenarios!(QWEN, "qwen");
scenarios!(OPENCODE, "opencode");
scenarios!(COPILOT, "copilot");

/// The built-in scenarios of `agent` as `probe --list` prints them: name, modes, description,
/// a line each.
pub fn table(agent: Agent) -> String {
    let mut t = String::new();
    for s in agent.scenarios() {
        let modes = s
            .scenario
            .modes
            .as_ref()
            .map_or(agent.modes().join(","), |m| m.join(","));
        let (name, about) = (&s.scenario.name, &s.scenario.description);
        t.push_str(&format!("{name:<18} {modes:<15} {about}\n"));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agents_scenarios_parse_and_name_their_modes() {
        for a in ALL {
            assert_eq!(Agent::parse(a.name()), Some(*a));
            let all = a.scenarios();
            assert!(!all.is_empty(), "{}", a.name());
            for s in &all {
                assert!(!s.scenario.description.is_empty(), "{}", s.scenario.name);
                for m in s.scenario.modes.iter().flatten() {
                    assert!(a.modes().contains(&m.as_str()), "{} {m}", s.scenario.name);
                }
            }
        }
    }

    #[test]
    fn each_clis_command_line_is_its_json_mode_unattended() {
        let argv = |a: Agent, mode: &str| {
            let sc = a.scenarios().into_iter().next().unwrap().scenario;
            let v: Vec<String> = a
                .argv(&sc, mode)
                .iter()
                .map(|x| x.to_string_lossy().replace(&sc.prompt, "P"))
                .collect();
            v.join(" ")
        };
        assert_eq!(
            argv(Agent::Codex, "json"),
            "exec --json --skip-git-repo-check -s danger-full-access P"
        );
        assert_eq!(
            argv(Agent::Gemini, "stream"),
            "-p P --output-format stream-json --yolo"
        );
        assert_eq!(
            argv(Agent::Qwen, "partial"),
            "-p P --output-format stream-json --yolo --include-partial-messages"
        );
        assert_eq!(argv(Agent::Opencode, "json"), "run --format json P");
        assert_eq!(
            argv(Agent::Copilot, "json"),
            "-p P --output-format json --allow-all-tools --no-color"
        );
    }

    #[test]
    fn a_resumed_run_continues_the_session() {
        let sc = Agent::Codex
            .scenarios()
            .into_iter()
            .find(|s| s.scenario.name == "resume")
            .unwrap()
            .scenario;
        let s = |a: Vec<OsString>| {
            a.iter()
                .map(|x| x.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
        };
        let codex = s(Agent::Codex.resume_argv(&sc, "json", "again"));
        assert_eq!(&codex[codex.len() - 3..], ["resume", "--last", "again"]);
        assert!(!codex.contains(&"-s".to_owned()), "{codex:?}");
        let oc = s(Agent::Opencode.resume_argv(&sc, "json", "again"));
        assert_eq!(oc[..4], ["run", "--format", "json", "--continue"]);
        assert_eq!(oc.last().map(String::as_str), Some("again"));
        let g = s(Agent::Gemini.resume_argv(&sc, "stream", "again"));
        assert_eq!(g[1], "again");
        assert!(g.ends_with(&["--resume".to_owned(), "latest".to_owned()]));
        assert!(s(Agent::Qwen.resume_argv(&sc, "stream", "x")).contains(&"--continue".to_owned()));
    }

    #[test]
    fn the_end_of_a_run_is_each_clis_own() {
        let m = |v: Value| v.as_object().unwrap().clone();
        let t = |a: Agent, v: Value| a.terminal(&m(v)).map(|(r, _)| r);
        assert_eq!(
            t(Agent::Codex, json!({"type": "turn.completed"})).as_deref(),
            Some("success")
        );
        assert_eq!(
            t(Agent::Codex, json!({"type": "turn.failed"})).as_deref(),
            Some("error")
        );
        assert_eq!(
            t(Agent::Gemini, json!({"type": "result", "status": "error"})).as_deref(),
            Some("error")
        );
        assert_eq!(
            t(
                Agent::Opencode,
                json!({"type": "step_finish", "part": {"reason": "tool-calls"}})
            ),
            None
        );
        assert_eq!(
            t(Agent::Copilot, json!({"type": "result", "exitCode": 0})).as_deref(),
            Some("success")
        );
        assert_eq!(t(Agent::Claude, json!({"type": "assistant"})), None);
    }
}
