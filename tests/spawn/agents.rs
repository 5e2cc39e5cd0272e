//! `spawn --agent codex|gemini|qwen|opencode|copilot` with the real CLIs (the newest pinned
//! release of each, installed under `target/agent-cli` by `tests/support/install-agent.sh` as
//! `probe_agents` does; `SKIP:` when it cannot be) against probe's loopback stand-ins of their
//! model APIs (`probe --serve-only SCRIPT --agent A --agent-home HOME` configures the CLI for it),
//! inside a loopback-only network namespace where the machine allows it. One test per agent on
//! one install: a normal run gives a well-formed envelope read by the agent's reader; a guard
//! stops a repeated call (`--allow-tools Bash` allowing the agent's own shell tool); a stuck CLI
//! (a stand-in that never answers) loses to `--idle-timeout`; `kill -9` of spawn mid-run leaves
//! no process. A missing binary and `--refuse-api-key` need no CLI.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use boo_normalize::agent::Agent;
use serde_json::{Value, json};

use super::common::*;
use crate::common::probe::netns;
use crate::common::root;
use crate::probe_agents::{ONE_AT_A_TIME, RELEASES, cli};

/// A provider variable each agent does not read in these runs: set in spawn's environment, it
/// must be named as not passed (stderr and `run.end`'s `env_removed`).
fn unpassed(agent: Agent) -> &'static str {
    match agent {
        Agent::Gemini => "GOOGLE_VERTEX_BASE_URL",
        Agent::Qwen => "ANTHROPIC_BASE_URL",
        Agent::Copilot => "GH_HOST",
        _ => "OPENAI_BASE_URL",
    }
}

/// One run of `spawn --agent` against a stand-in serving `script`, in a temp dir of its own.
struct AgentRun {
    agent: Agent,
    cli: PathBuf,
    dirs: Dirs,
    mark: Mark,
}

impl AgentRun {
    fn new(agent: Agent, cli: &Path) -> Self {
        AgentRun {
            agent,
            cli: cli.to_owned(),
            dirs: Dirs::new(),
            mark: marker(agent.name()),
        }
    }

    fn log(&self) -> PathBuf {
        self.dirs.path().join("api.log")
    }

    /// Start `bash` (in a network namespace where possible) serving `script`, then running spawn
    /// with `spawn_args` and the agent's unattended flags after `--`.
    fn start(&self, script: &Value, spawn_args: &[&str], prompt: &str) -> Child {
        let d = &self.dirs;
        let script_file = d.path().join("script.json");
        fs::write(&script_file, script.to_string()).unwrap();
        let q = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
        let q_path = |p: &Path| q(&p.to_string_lossy());
        let agent_args: Vec<String> = self.agent.unattended_args().iter().map(|a| q(a)).collect();
        let spawn_args: Vec<String> = spawn_args.iter().map(|a| q(a)).collect();
        let sh = format!(
            r#"set -u
{lo}
cd {work}
{bin} probe --serve-only {script} --agent {agent} --agent-home {home} --port-file {dir}/port --log {log} >/dev/null 2>{dir}/server.err &
S=$!
for i in $(seq 600); do [ -s {dir}/port ] && break; sleep 0.05; done
set -a; . {home}/agent.env; set +a
envs=$(sed -n 's/^export \([A-Za-z_0-9]*\)=.*/--env \1/p' {home}/agent.env)
export HOME={home} BOO_TEST_MARK={mark} {unpassed}=http://127.0.0.1:9
{bin} spawn --agent {agent} --bin {cli} --keep-env-key --env BOO_TEST_MARK $envs --grace 1s {spawn_args} --prompt {prompt} -- {agent_args} &
P=$!
echo $P > {dir}/spawn.pid
wait $P; rc=$?
kill $S 2>/dev/null; wait $S 2>/dev/null
exit $rc
"#,
            lo = if netns() { "ip link set lo up" } else { "" },
            work = q_path(&d.work),
            bin = q(BIN),
            script = q_path(&script_file),
            agent = self.agent.name(),
            home = q_path(&d.home),
            dir = q_path(d.path()),
            log = q_path(&self.log()),
            mark = q(&self.mark),
            unpassed = unpassed(self.agent),
            cli = q_path(&self.cli),
            spawn_args = spawn_args.join(" "),
            prompt = q(prompt),
            agent_args = agent_args.join(" "),
        );
        let run_sh = d.path().join("run.sh");
        fs::write(&run_sh, sh).unwrap();
        let mut c = if netns() {
            let mut c = Command::new("unshare");
            c.args(["-rn", "bash"]);
            c
        } else {
            Command::new("bash")
        };
        c.arg(&run_sh)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &d.home)
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c.spawn().expect("bash")
    }

    /// Run to the end (at most 2 minutes).
    fn run(&self, script: &Value, spawn_args: &[&str], prompt: &str) -> (Output, Vec<Value>) {
        let started = Instant::now();
        let out = finish(
            self.start(script, spawn_args, prompt),
            &self.mark,
            Duration::from_secs(120),
        );
        eprintln!(
            "spawn --agent {} {} took {:.1} s",
            self.agent.name(),
            spawn_args.join(" "),
            started.elapsed().as_secs_f64()
        );
        let ev = events(&out.stdout);
        (out, ev)
    }
}

/// The agent's built-in scenario `name` (its JSON).
fn scenario(agent: Agent, name: &str) -> Value {
    let p = root()
        .join("src/probe/scenarios")
        .join(agent.name())
        .join(format!("{name}.json"));
    serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
}

/// The index of the reply of `s` that calls a tool.
fn call_entry(s: &Value) -> usize {
    s["responses"]
        .as_array()
        .unwrap()
        .iter()
        .position(|r| r.to_string().contains(r#""type":"tool_use""#))
        .unwrap()
}

/// The `bash` scenario with its shell call answered three times in a row.
fn repeated_shell_call(agent: Agent) -> Value {
    let mut s = scenario(agent, "bash");
    s["name"] = json!("repeat");
    let i = call_entry(&s);
    s["responses"][i]["repeat"] = json!(3);
    s
}

/// The `bash` scenario with its shell call running `command` instead of `echo hello`.
fn long_shell_call(agent: Agent, command: &str) -> Value {
    let mut s = scenario(agent, "bash");
    s["name"] = json!("long");
    let i = call_entry(&s);
    let call = s["responses"][i].to_string().replace("echo hello", command);
    s["responses"][i] = serde_json::from_str(&call).unwrap();
    s
}

/// A stand-in that takes the conversation's request and never answers it.
fn stuck() -> Value {
    json!({
        "name": "stuck",
        "description": "The model API never answers the conversation's request.",
        "prompt": "Say hello.",
        "responses": [{"label": "never", "hang": true, "repeat": -1}]
    })
}

fn err_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every check on one install of `agent`'s newest pinned release.
fn check_agent(agent: Agent) {
    let (_, version, _) = RELEASES
        .iter()
        .find(|(a, _, _)| *a == agent.name())
        .unwrap();
    let Some(bin) = cli(agent.name(), version) else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let bash = scenario(agent, "bash");
    let prompt = bash["prompt"].as_str().unwrap().to_owned();

    // A normal run: a well-formed envelope, read by the agent's reader, exit 0.
    let r = AgentRun::new(agent, &bin);
    let (out, ev) = r.run(&bash, &[], &prompt);
    let err = err_of(&out);
    assert_eq!(out.status.code(), Some(0), "{agent:?}: {err}");
    check_envelope(&ev);
    let init = &of_type(&ev, "session.init")[0];
    let dialect = agent.dialect().agent();
    assert_eq!(init["agent"], dialect, "{init}");
    let calls = of_type(&ev, "tool.call");
    assert_eq!(calls.len(), 1, "{agent:?}: {calls:?}");
    assert_eq!(calls[0]["kind"], "execute", "{}", calls[0]);
    assert_eq!(of_type(&ev, "tool.result").len(), 1);
    assert!(
        !of_type(&ev, "turn.end").is_empty(),
        "{agent:?}: no turn.end"
    );
    assert!(
        of_type(&ev, "text")
            .iter()
            .any(|t| t["text"].as_str().unwrap_or("").contains("hello")),
        "{agent:?}: no answer"
    );
    let end = run_end(&ev);
    assert_eq!(end["cause"], "exit", "{end}");
    assert_eq!(end["agent"], dialect, "{end}");
    assert_eq!(end["exit_code"], 0, "{end}");
    let var = unpassed(agent);
    assert_eq!(end["env_removed"], json!([var]), "{end}");
    assert!(
        err.contains(&format!(
            "boo-normalize: spawn: not passed to {}: {var} (--env NAME, or --inherit-env)",
            agent.name()
        )),
        "{err}"
    );
    assert!(!err.contains("sk-probe-dummy"), "{err}");
    assert_no_procs(&r.mark, Duration::from_secs(10));

    // A guard stops a repeated call; Bash (Claude's name) allows the agent's shell tool.
    let r = AgentRun::new(agent, &bin);
    let (out, ev) = r.run(
        &repeated_shell_call(agent),
        &[
            "--allow-tools",
            "Bash",
            "--max-repeat-calls",
            "2",
            "--enforce",
        ],
        &prompt,
    );
    assert_eq!(out.status.code(), Some(125), "{agent:?}: {}", err_of(&out));
    check_envelope(&ev);
    // The second identical call is the violation (a third may start before the CLI stops).
    let rules: Vec<&Value> = of_type(&ev, "policy.violation")
        .iter()
        .map(|v| &v["rule"])
        .collect();
    assert!(
        !rules.is_empty() && rules.iter().all(|r| **r == "max_repeat_calls"),
        "{agent:?}: {rules:?}"
    );
    let end = run_end(&ev);
    assert_eq!(
        (&end["cause"], &end["reason"]),
        (&json!("killed"), &json!("policy"))
    );
    assert!(end["tool_calls"].as_u64().is_some_and(|n| n >= 2), "{end}");
    assert_no_procs(&r.mark, Duration::from_secs(10));

    // A stuck CLI loses to --idle-timeout.
    let r = AgentRun::new(agent, &bin);
    let (out, ev) = r.run(&stuck(), &["--idle-timeout", "4s"], "Say hello.");
    assert_eq!(out.status.code(), Some(124), "{agent:?}: {}", err_of(&out));
    check_envelope(&ev);
    assert_eq!(run_end(&ev)["cause"], "idle_timeout");
    assert_no_procs(&r.mark, Duration::from_secs(10));

    // kill -9 of spawn while the CLI's shell call runs leaves no process, the tool's included.
    let r = AgentRun::new(agent, &bin);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    // The needle is one argument (cmdline separates arguments with NULs).
    let sleep = format!("299.{nanos:09}");
    // Not a standalone sleep (Qwen Code refuses one in the foreground).
    let command = format!("echo start; sleep {sleep}; echo hello");
    let child = r.start(&long_shell_call(agent, &command), &[], &prompt);
    let until = Instant::now() + Duration::from_secs(60);
    while procs_with(&sleep).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let running = !procs_with(&sleep).is_empty();
    let pid = fs::read_to_string(r.dirs.path().join("spawn.pid")).unwrap_or_default();
    if running {
        send_signal(pid.trim().parse().unwrap(), "KILL");
    }
    let out = finish(
        child,
        &r.mark,
        Duration::from_secs(if running { 60 } else { 1 }),
    );
    assert!(
        running,
        "{agent:?}: the shell call never started: {}\n{}\n{}",
        err_of(&out),
        String::from_utf8_lossy(&out.stdout),
        fs::read_to_string(r.log()).unwrap_or_default()
    );
    assert_eq!(out.status.code(), Some(137), "{}", err_of(&out));
    assert_no_procs(&sleep, Duration::from_secs(10));
    assert_no_procs(&r.mark, Duration::from_secs(10));
}

/// Wait for the script with a deadline, reading its output meanwhile; past the deadline, kill
/// what the run left (which would keep the output pipes open) and the script, then fail.
fn finish(mut child: Child, mark: &str, max: Duration) -> Output {
    fn drain(r: Option<impl std::io::Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    }
    let (out, err) = (drain(child.stdout.take()), drain(child.stderr.take()));
    let until = Instant::now() + max;
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() >= until {
            kill_marked(mark);
            let _ = child.kill();
            let _ = child.wait();
            let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
            let out = String::from_utf8_lossy(&out.join().unwrap()).into_owned();
            panic!("the run did not end within {max:?}: {err}\n{out}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

#[test]
fn codex_under_spawn() {
    check_agent(Agent::Codex);
}

#[test]
fn gemini_under_spawn() {
    check_agent(Agent::Gemini);
}

#[test]
fn qwen_under_spawn() {
    check_agent(Agent::Qwen);
}

#[test]
fn opencode_under_spawn() {
    check_agent(Agent::Opencode);
}

#[test]
fn copilot_under_spawn() {
    check_agent(Agent::Copilot);
}

/// Without a CLI: a missing binary is exit 127 with a clear message and `run.end` (cause
/// `spawn_failed`), named or looked up under the agent's own name; `--refuse-api-key` refuses
/// the agent's own keys, and only those.
#[test]
fn a_missing_binary_and_a_refused_key_for_every_agent() {
    for agent in boo_normalize::agent::ALL.iter().copied().skip(1) {
        let d = Dirs::new();
        let mark = marker("missing");
        let missing = d.path().join("no-such-cli");
        let out = output_within(
            {
                let mut c = command(&d.home, &mark);
                c.args(["spawn", "--agent", agent.name(), "--bin"])
                    .arg(&missing)
                    .args(["--prompt", "say hi"]);
                c
            },
            Duration::from_secs(20),
        );
        let err = err_of(&out);
        assert_eq!(out.status.code(), Some(127), "{agent:?}: {err}");
        assert_eq!(
            err.trim_end(),
            format!("boo-normalize: spawn: {}: no such file", missing.display())
        );
        let ev = events(&out.stdout);
        check_envelope(&ev);
        assert_eq!(run_end(&ev)["cause"], "spawn_failed");

        let mut c = command(&d.home, &mark);
        c.env("PATH", &d.work)
            .args(["spawn", "--agent", agent.name(), "--prompt", "say hi"]);
        let out = output_within(c, Duration::from_secs(20));
        assert_eq!(out.status.code(), Some(127), "{agent:?}");
        assert!(
            err_of(&out).contains(&format!(
                "spawn: {}: not found on PATH (use --bin PATH)",
                agent.binary()
            )),
            "{}",
            err_of(&out)
        );

        let key = agent.env().keys[0];
        let mut c = command(&d.home, &mark);
        c.env(key, "sk-secret-value")
            .env("ANTHROPIC_API_KEY", "sk-ant")
            .args(["spawn", "--agent", agent.name(), "--refuse-api-key"])
            .args(["--bin"])
            .arg(&missing)
            .args(["--prompt", "say hi"]);
        let out = output_within(c, Duration::from_secs(20));
        let err = err_of(&out);
        assert_eq!(out.status.code(), Some(2), "{agent:?}: {err}");
        assert!(
            err.starts_with("boo-normalize: --refuse-api-key: ") && err.contains(key),
            "{err}"
        );
        let claude_key_refused = agent.env().is_credential("ANTHROPIC_API_KEY");
        assert_eq!(
            err.contains("ANTHROPIC_API_KEY"),
            claude_key_refused,
            "{err}"
        );
        assert!(!err.contains("sk-secret"), "{err}");
    }
}
