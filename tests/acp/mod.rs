//! `boo-normalize acp` driven by the official ACP client SDK (`@agentclientprotocol/sdk`,
//! pinned in `tests/support/acp-client`, installed under `target/acp-client`) against the real
//! Claude Code CLI (installed project-locally, see `adapters::harness`) pointed at the loopback
//! Messages API of `probe --serve-only`. Every line the agent writes is validated against the
//! ACP v1 JSON Schema that ships with the SDK. Skipped, with `SKIP:`, when node/npm or the CLI
//! package are not available.
#![cfg(target_os = "linux")]

mod agent;
mod outputs;
mod supervision;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};

use crate::adapters::harness::{self, Fake};
use crate::common::npm::{self, CiError};
use crate::spawn::common::{Dirs, Mark, marker, output_within};

/// `target/acp-client` with the pinned SDK installed, or why not.
pub fn acp_client() -> Result<&'static Path, String> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(install)
        .as_ref()
        .map(PathBuf::as_path)
        .map_err(Clone::clone)
}

fn install() -> Result<PathBuf, String> {
    let dir = npm::support_copy("acp-client")?;
    npm::ci_once(&dir).map_err(|e| match e {
        CiError::Io(e) => e,
        CiError::Spawn(e) => format!("npm not available ({e})"),
        CiError::Failed(stderr) => format!("npm ci failed: {stderr}"),
    })?;
    Ok(dir)
}

/// What a test needs: the client, the CLI, directories, a marker for leftover processes.
pub struct Env {
    pub client: &'static Path,
    pub claude: &'static PathBuf,
    pub d: Dirs,
    pub mark: Mark,
}

/// The environment, or `None` after printing `SKIP:` and why.
pub fn env(tag: &str) -> Option<Env> {
    let client = match acp_client() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("SKIP (acp): the ACP client SDK could not be installed: {e}");
            return None;
        }
    };
    let claude = harness::cli()?;
    Some(Env {
        client,
        claude,
        d: Dirs::new(),
        mark: marker(tag),
    })
}

/// What the client saw.
pub struct Report {
    pub v: Value,
    /// Every line the agent wrote.
    pub trace: Vec<Value>,
    pub stderr: String,
}

impl Report {
    /// The result (`ok`) or error (`error`) of the request named `name`.
    pub fn result(&self, name: &str) -> &Value {
        &self.v["results"][name]
    }

    /// The stop reason of prompt `name` (panics with what came instead).
    pub fn stop(&self, name: &str) -> &str {
        let r = self.result(name);
        r["ok"]["stopReason"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no stop reason: {r}\nstderr: {}", self.stderr))
    }

    /// The updates of session `s` of kind `kind`.
    pub fn updates(&self, s: &str, kind: &str) -> Vec<&Value> {
        self.v["updates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|u| u["session"] == s && u["update"]["sessionUpdate"] == kind)
            .map(|u| &u["update"])
            .collect()
    }

    /// The text of the chunks of `kind` in session `s`, joined.
    pub fn text(&self, s: &str, kind: &str) -> String {
        self.updates(s, kind)
            .iter()
            .filter_map(|u| u["content"]["text"].as_str())
            .collect()
    }

    /// The permission requests.
    pub fn permissions(&self) -> &Vec<Value> {
        self.v["permissions"].as_array().unwrap()
    }
}

impl Env {
    /// The script's API on loopback.
    pub fn api(&self, script: Value) -> Fake {
        Fake::start(&self.d, &script)
    }

    /// Steps that wait until the CLI is working on the prompt of session `s` (its init line
    /// came: the API request follows at once), and a second more.
    pub fn until_working(&self, s: &str) -> [Value; 2] {
        [
            json!({"op": "until_update", "session": s, "kind": "available_commands_update", "timeout_ms": 30000}),
            json!({"op": "sleep", "ms": 1000}),
        ]
    }

    /// [`Env::drive`] with one session `s` and one prompt in it: `text`, named `name`.
    pub fn one_prompt(
        &self,
        fake: &Fake,
        args: &[&str],
        permissions: Value,
        text: &str,
        name: &str,
    ) -> Report {
        self.drive(
            fake,
            args,
            permissions,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "s"},
                {"op": "prompt", "session": "s", "text": text, "as": name}
            ]),
        )
    }

    /// Run the client with `steps`, answering permission requests with `permissions`; `args`
    /// go to `acp` before `--`.
    pub fn drive(&self, fake: &Fake, args: &[&str], permissions: Value, steps: Value) -> Report {
        let trace = self.d.path().join("trace.jsonl");
        let _ = fs::remove_file(&trace);
        let mut agent: Vec<String> = vec![crate::common::BIN.into(), "acp".into()];
        agent.extend(["--claude-bin".into(), self.claude.display().to_string()]);
        agent.extend(["--env".into(), "BOO_TEST_MARK".into()]);
        // bypassPermissions as root (this test machine) needs the sandbox flag.
        agent.extend(["--env".into(), "IS_SANDBOX".into()]);
        // `args`: acp's options, then (after `--`) claude's, which get the API key helper.
        let split = args.iter().position(|a| *a == "--").unwrap_or(args.len());
        agent.extend(args[..split].iter().map(|s| s.to_string()));
        agent.extend([
            "--".into(),
            "--settings".into(),
            r#"{"apiKeyHelper":"echo sk-ant-helper-dummy-000"}"#.into(),
        ]);
        agent.extend(args[split..].iter().skip(1).map(|s| s.to_string()));
        let plan = json!({
            "agent": agent,
            "env": {
                "PATH": std::env::var("PATH").unwrap_or_default(),
                "HOME": self.d.home,
                "LANG": "C.UTF-8",
                "BOO_TEST_MARK": &*self.mark,
                "ANTHROPIC_BASE_URL": format!("http://127.0.0.1:{}", fake.port),
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "CLAUDE_CODE_MAX_RETRIES": "0",
                "DISABLE_AUTOUPDATER": "1",
                "IS_SANDBOX": "1",
            },
            "cwd": self.d.work,
            "trace": trace,
            "permissions": permissions,
            "steps": steps,
        });
        let pf = self.d.path().join("plan.json");
        fs::write(&pf, plan.to_string()).unwrap();
        let mut c = Command::new("node");
        c.arg(self.client.join("drive.mjs"))
            .arg(&pf)
            .current_dir(self.client);
        let out = output_within(c, Duration::from_secs(150));
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("client output is not JSON ({e}); stderr:\n{stderr}"));
        assert!(
            v["results"].get("client_error").is_none(),
            "client failed: {}\nstderr:\n{stderr}\nsaw: {v}",
            v["results"]["client_error"]
        );
        let trace: Vec<Value> = fs::read_to_string(&trace)
            .unwrap_or_default()
            .lines()
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("agent wrote a non-JSON line ({e}): {l}"))
            })
            .collect();
        validate(&trace);
        Report { v, trace, stderr }
    }
}

/// Every message the agent wrote is valid ACP v1 (the JSON Schema shipped with the SDK), and
/// each `session/update`, permission request and prompt answer is valid as its own type.
pub fn validate(trace: &[Value]) {
    let path = acp_client()
        .unwrap()
        .join("node_modules/@agentclientprotocol/sdk/schema/v1/schema.json");
    let doc: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    let whole = jsonschema::validator_for(&doc).expect("ACP schema compiles");
    let of = |def: &str| {
        let s = json!({"$ref": format!("#/$defs/{def}"), "$defs": doc["$defs"]});
        jsonschema::validator_for(&s).expect("ACP definition compiles")
    };
    let update = of("SessionNotification");
    let permission = of("RequestPermissionRequest");
    for m in trace {
        if let Err(e) = whole.validate(m) {
            panic!("not an ACP v1 message: {m}\n{e}");
        }
        let check = match m["method"].as_str() {
            Some("session/update") => Some(&update),
            Some("session/request_permission") => Some(&permission),
            _ => None,
        };
        if let Some(v) = check
            && let Err(e) = v.validate(&m["params"])
        {
            panic!("invalid {}: {m}\n{e}", m["method"]);
        }
    }
}
