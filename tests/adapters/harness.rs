//! The real Claude Code CLI (npm `@anthropic-ai/claude-code`: 2.1.45, or `BOO_CLAUDE_VERSION`)
//! against the loopback Messages API built into boo-normalize (`probe --serve-only`, which reads
//! the script format of `tests/support/fake_anthropic.py`): installing it
//! project-locally (or skipping with a message), the scripted API, and the `spawn` command line
//! that runs it.

use std::fs;
use std::io::BufReader;
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::spawn::common::*;

/// The CLI version under test: `BOO_CLAUDE_VERSION`, else the pinned 2.1.45 (see
/// `tests/support/README.md`).
pub fn cli_version() -> &'static str {
    crate::common::claude_version()
}

pub const RUN_MAX: Duration = Duration::from_secs(90);

pub use crate::common::root;

/// The installed CLI, or `None` (after printing why) when it cannot be had.
pub fn cli() -> Option<&'static PathBuf> {
    static CLI: OnceLock<Option<PathBuf>> = OnceLock::new();
    CLI.get_or_init(|| {
        let py = Command::new("python3").arg("--version").output();
        if !py.is_ok_and(|o| o.status.success()) {
            eprintln!("SKIP (real claude CLI): python3 not available (needed for mcp_echo.py)");
            return None;
        }
        let out = Command::new("bash")
            .arg(root().join("tests/support/install-claude.sh"))
            .arg(cli_version())
            .stderr(Stdio::piped())
            .output();
        match out {
            Ok(o) if o.status.success() => {
                let p = String::from_utf8_lossy(&o.stdout).trim().to_owned();
                Some(PathBuf::from(p))
            }
            Ok(o) => {
                eprintln!(
                    "SKIP (real claude CLI): claude CLI {} could not be installed: {}",
                    cli_version(),
                    String::from_utf8_lossy(&o.stderr)
                        .lines()
                        .last()
                        .unwrap_or("")
                );
                None
            }
            Err(e) => {
                eprintln!("SKIP (real claude CLI): cannot run install-claude.sh: {e}");
                None
            }
        }
    })
    .as_ref()
}

/// Whether the CLI under test lists `option` in its `--help` (for flags that came in a later
/// release than the pinned one).
pub fn cli_has_option(option: &str) -> bool {
    let d = Dirs::new();
    let out = Command::new(need_path())
        .arg("--help")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &d.home)
        .stdin(Stdio::null())
        .output()
        .expect("claude --help");
    assert!(out.status.success(), "claude --help failed");
    String::from_utf8_lossy(&out.stdout)
        .split(|c: char| c.is_whitespace() || c == ',')
        .any(|w| w == option)
}

macro_rules! need_cli {
    () => {
        match $crate::adapters::harness::cli() {
            Some(c) => c,
            None => return,
        }
    };
}

/// The fake API, killed on drop.
pub struct Fake {
    child: Child,
    pub port: u16,
    log: PathBuf,
}

impl Fake {
    // The child is waited for in `Drop`.
    #[allow(clippy::zombie_processes)]
    pub fn start(d: &Dirs, script: &Value) -> Fake {
        let text = script
            .to_string()
            .replace("@CWD@", d.work.to_str().unwrap());
        let sp = d.path().join("script.json");
        fs::write(&sp, text).unwrap();
        let pf = d.path().join("port");
        let log = d.path().join("requests.jsonl");
        // The loopback API built into boo-normalize (`probe --serve-only`), which speaks the
        // script format of tests/support/fake_anthropic.py.
        let mut child = Command::new(env!("CARGO_BIN_EXE_boo-normalize"))
            .args(["probe", "--serve-only"])
            .arg(&sp)
            .arg("--port-file")
            .arg(&pf)
            .arg("--log")
            .arg(&log)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("boo-normalize probe --serve-only");
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(s) = fs::read_to_string(&pf)
                && let Ok(port) = s.trim().parse()
            {
                return Fake { child, port, log };
            }
            if Instant::now() >= until {
                let _ = child.kill();
                let _ = child.wait();
                panic!("boo-normalize probe --serve-only did not start");
            }
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    pub fn requests(&self) -> Vec<Value> {
        fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `boo-normalize spawn` for the real CLI against `fake`: clean environment, key from an
/// `apiKeyHelper` (so `ANTHROPIC_API_KEY` is free for the stripping test), tools allowed.
pub fn claude_cmd(
    d: &Dirs,
    fake: &Fake,
    mark: &str,
    spawn_args: &[&str],
    claude_args: &[&str],
) -> Command {
    let mut c = command(&d.home, mark);
    c.current_dir(&d.work)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .arg("spawn")
        .arg("--claude-bin")
        .arg(need_path())
        .args(["--env", "BOO_TEST_MARK"])
        .arg("--env")
        .arg(format!("ANTHROPIC_BASE_URL=http://127.0.0.1:{}", fake.port))
        .args(["--env", "IS_SANDBOX=1", "--env", "DISABLE_AUTOUPDATER=1"])
        .args([
            "--env",
            "DISABLE_TELEMETRY=1",
            "--env",
            "DISABLE_ERROR_REPORTING=1",
        ])
        .args(spawn_args)
        .args(["--", "--permission-mode", "bypassPermissions", "--settings"])
        .arg(r#"{"apiKeyHelper":"echo sk-ant-helper-dummy-000"}"#)
        .args(claude_args);
    c
}

pub fn need_path() -> &'static PathBuf {
    cli().expect("checked by need_cli!")
}

/// Run to the end and return the status code and the (checked) events.
pub fn finish(c: Command) -> (Option<i32>, Vec<Value>, String) {
    let out = output_within(c, RUN_MAX);
    let ev = events(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!ev.is_empty(), "no output; stderr: {err}");
    check_envelope(&ev);
    (out.status.code(), ev, err)
}

pub fn schema_validator() -> jsonschema::Validator {
    let out = Command::new(BIN)
        .args(["schema", "--strict"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    jsonschema::validator_for(&doc).expect("schema compiles")
}

pub fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A scenario of `tests/support/scenarios/`.
pub fn scenario(name: &str) -> Value {
    let p = root().join("tests/support/scenarios").join(name);
    serde_json::from_str(&fs::read_to_string(&p).unwrap()).unwrap()
}

/// A run in progress whose stdout is read as it comes (for signals and timing); stderr is
/// collected by a thread; a watchdog kills it after [`RUN_MAX`].
pub struct Live {
    pub child: Child,
    out: BufReader<ChildStdout>,
    err: Option<std::thread::JoinHandle<String>>,
    seen: Vec<Value>,
    _dog: Watchdog,
}

impl Live {
    pub fn start(mut c: Command) -> Live {
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = c.spawn().expect("start boo-normalize");
        let dog = Watchdog::new(child.id(), RUN_MAX);
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut e = child.stderr.take().unwrap();
        let err = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut e, &mut s);
            s
        });
        Live {
            child,
            out,
            err: Some(err),
            seen: Vec::new(),
            _dog: dog,
        }
    }

    /// Read events until one satisfies `pred`; panics at EOF.
    pub fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let got = read_until(&mut self.out, &pred);
        self.seen.extend(got);
        match self.seen.last() {
            Some(e) if pred(e) => e.clone(),
            _ => panic!("stdout ended before {what}: {:?}", self.seen),
        }
    }

    /// The pid the caller holds (the guardian).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Read to the end: status code, every event (checked), stderr.
    pub fn finish(mut self) -> (Option<i32>, Vec<Value>, String) {
        let rest = read_until(&mut self.out, |_| false);
        self.seen.extend(rest);
        let status = self.child.wait().expect("wait");
        let err = self.err.take().unwrap().join().unwrap();
        check_envelope(&self.seen);
        (status.code(), std::mem::take(&mut self.seen), err)
    }
}

/// The running claude CLI processes of a run: carrying `mark` and running the installed CLI.
/// A JS release starts as `node ENTRY …` and soon renames itself `claude` (so its argv cannot
/// be read from `/proc`); a native release runs as `ENTRY …`.
pub fn claude_procs(mark: &str) -> Vec<(i32, String)> {
    let cli = need_path().to_string_lossy().into_owned();
    procs_with(mark)
        .into_iter()
        .filter(|(_, cmd)| {
            let words: Vec<&str> = cmd.split(' ').take(2).collect();
            words.first() == Some(&"claude") || words.contains(&cli.as_str())
        })
        .collect()
}

/// Wait (up to 20 s) until the run's claude CLI process is there; its pid.
pub fn wait_for_cli(mark: &str) -> i32 {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some((pid, _)) = claude_procs(mark).first() {
            return *pid;
        }
        assert!(
            Instant::now() < until,
            "the claude CLI of the run did not start"
        );
        std::thread::sleep(Duration::from_millis(30));
    }
}

/// Wait (up to `max`) until a process carrying `mark` has `needle` in its command line; its pid.
pub fn wait_for_proc(mark: &str, needle: &str, max: Duration) -> i32 {
    let until = Instant::now() + max;
    loop {
        if let Some((pid, _)) = procs_with(mark)
            .into_iter()
            .find(|(_, c)| c.contains(needle))
        {
            return pid;
        }
        assert!(
            Instant::now() < until,
            "no process {needle:?} of the run appeared"
        );
        std::thread::sleep(Duration::from_millis(30));
    }
}

/// One server-sent event: its `id`, `event` and `data` (parsed as JSON).
#[derive(Debug)]
pub struct SseEvent {
    pub id: Option<String>,
    pub event: String,
    pub data: Value,
}

/// Parse an SSE stream the way a browser's `EventSource` does (fields per line, an event per
/// blank line, comments ignored), requiring every `data` to be JSON; also returns the `retry`
/// value if one was sent.
pub fn sse(bytes: &[u8]) -> (Option<u64>, Vec<SseEvent>) {
    let text = std::str::from_utf8(bytes).expect("SSE is UTF-8");
    let (mut retry, mut out) = (None, Vec::new());
    let (mut id, mut event, mut data) = (None, None::<String>, Vec::<&str>::new());
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            if !data.is_empty() {
                let d = data.join("\n");
                out.push(SseEvent {
                    id: id.clone(),
                    event: event.take().unwrap_or_else(|| "message".into()),
                    data: serde_json::from_str(&d)
                        .unwrap_or_else(|e| panic!("data not JSON ({e}): {d}")),
                });
            }
            data.clear();
            event = None;
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "id" => id = Some(value.to_owned()),
            "event" => event = Some(value.to_owned()),
            "data" => data.push(value),
            "retry" => retry = value.parse().ok(),
            other => panic!("unknown SSE field {other:?}"),
        }
    }
    assert!(data.is_empty(), "the stream ended inside an event");
    (retry, out)
}

/// A script: a Bash call that leaves a process in the background (its own session, via nohup
/// and `&`; its command line carries `mark`), then an API that never answers again.
pub fn background_then_hang(mark: &str) -> Value {
    serde_json::json!({"responses": [
        {"content": [{"type": "tool_use", "name": "Bash", "input": {
            "command": format!("nohup sh -c 'sleep 300; echo {mark}' >/dev/null 2>&1 & echo started"),
            "description": "start a background job"}}]},
        {"hang": true, "repeat": -1}
    ]})
}

/// A Bash command whose tool call runs for `secs` seconds, as a build or a test run would (its
/// command line has `sleep {secs}` and `mark`). Not a bare `sleep N`: newer CLIs (2.1.332)
/// refuse a command that begins with `sleep N` for N ≥ 25 ("Blocked: standalone sleep N") and
/// the call ends at once.
pub fn long_job(secs: u32, mark: &str) -> String {
    format!("sh -c 'sleep {secs}' # {mark}")
}

/// An inline `--mcp-config` JSON for `tests/support/mcp_echo.py` (server `echo`, tool
/// `mcp__echo__echo`), and the file where the server logs every request it gets.
pub fn mcp_echo(d: &Dirs) -> (String, PathBuf) {
    let log = d.path().join("mcp.jsonl");
    let server = root().join("tests/support/mcp_echo.py");
    let config = serde_json::json!({"mcpServers": {"echo": {
        "command": "python3",
        "args": [server.to_str().unwrap(), "--log", log.to_str().unwrap()]
    }}});
    (config.to_string(), log)
}

/// The session error of a run that was stopped before it finished (a timeout, an idle timeout,
/// a signal to boo-normalize): `run.error` (`no_result`, right before `run.end`) when the CLI
/// wrote no result, or, when it wrote one as it stopped, that last `turn.end`, an error. 2.1.45
/// writes none; 2.1.332 answers a SIGINT with an `error_during_execution` result or not,
/// depending on when it lands (with one the interrupt refused a call in progress, or came soon
/// after a tool result; without one it came seconds into a request that hangs). Never a
/// success, never both, and `terminal_seen` says which.
pub fn assert_session_error(ev: &[Value]) {
    let end = run_end(ev);
    let errors = of_type(ev, "run.error");
    let turns = of_type(ev, "turn.end");
    if end["terminal_seen"] == false {
        assert!(turns.is_empty(), "turn.end without terminal_seen: {end}");
        assert_eq!(errors.len(), 1, "{:?}", types(ev));
        assert_eq!(errors[0]["cause"], "no_result");
        assert_eq!(ev[ev.len() - 2]["type"], "run.error", "{:?}", types(ev));
    } else {
        assert_eq!(end["terminal_seen"], true, "{end}");
        assert!(
            errors.is_empty(),
            "run.error although a result came: {errors:?}"
        );
        let last = turns.last().expect("terminal_seen, so a turn.end");
        assert_eq!(last["is_error"], true, "{last}");
        assert_ne!(last["outcome"], "success", "{last}");
    }
}

/// The types of `ev`, for failure messages.
pub fn types(ev: &[Value]) -> Vec<&str> {
    ev.iter().filter_map(|e| e["type"].as_str()).collect()
}

/// The session id of a run's events (the first event that has one).
pub fn session_of(ev: &[Value]) -> String {
    ev.iter()
        .find_map(|e| e["session_id"].as_str())
        .expect("an event with a session id")
        .to_owned()
}

pub(crate) use need_cli;
