//! Running the real CLI for one scenario in one mode: an isolated `HOME` and working directory,
//! the built-in API, a dummy key and no non-essential traffic; the CLI supervised by
//! [`crate::spawn`] (own process group, timeout, every leftover process killed); its stdout
//! written verbatim; and the checks that turn what happened into a [`RunReport`].

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::read::Line;
use crate::spawn::procs::{Ended, signal_name};
use crate::spawn::{Cause, Driver, Halt, Limits, RunError, Spec, supervise};

use super::agent::Agent;
use super::api::{Api, Kind};
use super::scenario::{FileSpec, Scenario, Source};
use super::summary::{Requests, RunReport};

/// What every run shares.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Which agent CLI it is.
    pub agent: Agent,
    /// The CLI to run.
    pub claude: PathBuf,
    /// Where captures go.
    pub out: PathBuf,
    /// Longest a run may take.
    pub timeout: Duration,
    /// `PATH` for the CLI (a JS release needs `node`).
    pub path: OsString,
}

impl Setup {
    /// The CLI's environment for a run with `home`: `PATH`, `HOME`, the agent's own
    /// (`agent_env`, [`Agent::prepare`]), then the scenario's `extra`.
    fn env(
        &self,
        home: &Path,
        agent_env: &[(String, String)],
        extra: &[(String, String)],
    ) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = vec![
            ("PATH".into(), self.path.clone()),
            ("HOME".into(), home.into()),
        ];
        env.extend(agent_env.iter().map(|(k, v)| (k.into(), v.into())));
        for (k, v) in extra {
            env.retain(|(n, _)| n != k.as_str());
            env.push((k.into(), v.into()));
        }
        env
    }

    fn limits(&self) -> Limits {
        Limits {
            timeout: Some(self.timeout),
            grace: Duration::from_secs(2),
            ..Limits::default()
        }
    }
}

/// Why a run could not be made at all (as opposed to a run that failed its checks).
#[derive(Debug)]
pub enum RunFailure {
    /// Setting up (temp directory, files, the API) failed.
    Setup(String),
    /// The CLI could not be started.
    Start(io::Error),
    /// boo-normalize got this signal: the probe stops.
    Interrupted(i32),
}

/// Writes the CLI's stdout verbatim and notes what the lines are.
struct Capture {
    agent: Agent,
    out: BufWriter<File>,
    lines: u64,
    non_json: u64,
    first_non_json: Option<String>,
    results: Vec<String>,
    is_error: Option<bool>,
    stderr: Vec<u8>,
    /// The first error writing the capture.
    write_error: Option<io::Error>,
}

/// Bytes of stderr kept for the report.
const STDERR_TAIL: usize = 2000;

impl Driver for Capture {
    fn line(&mut self, line: &Line<'_>) -> io::Result<Option<Halt>> {
        self.lines += 1;
        let mut res = self.out.write_all(line.bytes);
        if line.terminated {
            let crlf = line.raw_len == line.bytes.len() as u64 + 2;
            res = res.and_then(|()| self.out.write_all(if crlf { b"\r\n" } else { b"\n" }));
        }
        if let Err(e) = res {
            self.write_error.get_or_insert(e);
        }
        match serde_json::from_slice::<Value>(line.bytes) {
            Ok(Value::Object(m)) => {
                if let Some((result, is_error)) = self.agent.terminal(&m) {
                    self.results.push(result);
                    self.is_error = is_error;
                }
            }
            _ => {
                self.non_json += 1;
                if self.first_non_json.is_none() {
                    let s = String::from_utf8_lossy(line.bytes);
                    self.first_non_json = Some(s.chars().take(80).collect());
                }
            }
        }
        Ok(None)
    }

    fn stderr(&mut self, line: &[u8], _truncated: bool) -> io::Result<()> {
        self.stderr.extend_from_slice(line);
        self.stderr.push(b'\n');
        if self.stderr.len() > 2 * STDERR_TAIL {
            self.stderr.drain(..self.stderr.len() - STDERR_TAIL);
        }
        Ok(())
    }

    fn idle(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The last [`STDERR_TAIL`] bytes of `b` as text, on one line.
fn tail(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(&b[b.len().saturating_sub(STDERR_TAIL)..]);
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Run `src` in `mode`, writing `<name>.<mode>.ndjson` (and `.stderr.txt`) into the output
/// directory.
pub fn run(setup: &Setup, src: &Source, mode: &str) -> Result<RunReport, RunFailure> {
    let started = Instant::now();
    let name = &src.scenario.name;
    let tmp = tempfile::Builder::new()
        .prefix("boo-probe-")
        .tempdir()
        .map_err(|e| RunFailure::Setup(format!("temporary directory: {e}")))?;
    let home = tmp.path().join("home");
    let work = tmp.path().join("work");
    for d in [&home, &work] {
        fs::create_dir(d).map_err(|e| RunFailure::Setup(format!("{}: {e}", d.display())))?;
    }
    let sc = src
        .with_cwd(&work.to_string_lossy())
        .map_err(|e| RunFailure::Setup(format!("scenario: {e}")))?;
    write_files(&sc, &work).map_err(RunFailure::Setup)?;
    let api = Api::start(&sc).map_err(|e| RunFailure::Setup(format!("loopback API: {e}")))?;
    let port = api.port();
    let extra: Vec<(String, String)> = sc.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let agent_env = match setup.agent.prepare(&home, &work, &api.base_url()) {
        Ok(e) => e,
        Err(e) => {
            api.finish();
            return Err(RunFailure::Setup(e));
        }
    };
    let spec = Spec {
        program: setup.claude.clone(),
        args: setup.agent.argv(&sc, mode),
        env: setup.env(&home, &agent_env, &extra),
        stdin: None,
        max_line: None,
        cwd: Some(work.clone()),
        attach: None,
    };
    let file = format!("{name}.{mode}.ndjson");
    let out = File::create(setup.out.join(&file))
        .map_err(|e| RunFailure::Setup(format!("{}: {e}", setup.out.join(&file).display())));
    let out = match out {
        Ok(f) => f,
        Err(e) => {
            api.finish();
            return Err(e);
        }
    };
    let mut cap = Capture {
        agent: setup.agent,
        out: BufWriter::new(out),
        lines: 0,
        non_json: 0,
        first_non_json: None,
        results: Vec::new(),
        is_error: None,
        stderr: Vec::new(),
        write_error: None,
    };
    let mut outcome = supervise(&spec, &setup.limits(), &mut cap);
    let mut resumed = None;
    // The resumed run follows a first run that ended by itself.
    if let (Some(again), Ok(first)) = (&sc.resume, &outcome)
        && matches!(first.cause, Cause::Exit)
    {
        let spec2 = Spec {
            args: setup.agent.resume_argv(&sc, mode, &again.prompt),
            ..spec.clone()
        };
        let killed = first.descendants_killed;
        outcome = supervise(&spec2, &setup.limits(), &mut cap).map(|mut o| {
            o.descendants_killed += killed;
            o
        });
        resumed = Some(spec2.args);
    }
    let api_seen = api.finish();
    let outcome = match outcome {
        Ok(o) => o,
        Err(RunError::Start(e)) => return Err(RunFailure::Start(e)),
    };
    if let Cause::Interrupted(sig) = outcome.cause {
        return Err(RunFailure::Interrupted(sig));
    }
    if let Err(e) = cap.out.flush() {
        cap.write_error.get_or_insert(e);
    }
    let stderr_file = setup.out.join(format!("{name}.{mode}.stderr.txt"));
    if let Err(e) = fs::write(&stderr_file, &cap.stderr) {
        cap.write_error.get_or_insert(e);
    }
    let work_dir = work.to_string_lossy().into_owned();
    let mut r = RunReport {
        scenario: name.clone(),
        mode: mode.to_owned(),
        file,
        args: spec
            .args
            .iter()
            .map(|a| a.to_string_lossy().replace(&work_dir, "$CWD"))
            .collect(),
        resume_args: resumed
            .iter()
            .flatten()
            .map(|a| a.to_string_lossy().replace(&work_dir, "$CWD"))
            .collect(),
        end: outcome.cause.as_str().to_owned(),
        lines: cap.lines,
        non_json: cap.non_json,
        results: cap.results.clone(),
        is_error: cap.is_error,
        requests: Requests::of(&api_seen.served),
        unknown_requests: api_seen
            .served
            .iter()
            .filter(|s| s.kind == Kind::Unknown)
            .map(|s| format!("{} {}", s.method, s.path))
            .collect(),
        exhausted: api_seen
            .served
            .iter()
            .filter(|s| s.answered == "exhausted")
            .count() as u64,
        unused_turns: api_seen.unused.clone(),
        leftovers_killed: outcome.descendants_killed,
        port,
        port_released: api_seen.port_released,
        stderr_tail: tail(&cap.stderr),
        seconds: (started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
        ..RunReport::default()
    };
    match outcome.ended {
        Some(Ended::Code(c)) => r.exit = Some(c),
        Some(Ended::Signal(s)) => r.signal = Some(signal_name(s)),
        None => r.signal = Some("not reaped".into()),
    }
    judge(
        &mut r,
        &sc,
        setup.timeout,
        cap.first_non_json.as_deref(),
        cap.write_error,
    );
    Ok(r)
}

/// Claude's arguments for `sc` in `mode`.
pub fn argv(sc: &Scenario, mode: &str) -> Vec<OsString> {
    Agent::Claude.argv(sc, mode)
}

fn write_files(sc: &Scenario, work: &Path) -> Result<(), String> {
    use base64::Engine as _;
    for (rel, spec) in &sc.files {
        let path = work.join(rel);
        let bytes = match spec {
            FileSpec::Text(t) => t.clone().into_bytes(),
            FileSpec::Base64 { base64 } => base64::engine::general_purpose::STANDARD
                .decode(base64.trim())
                .map_err(|e| format!("file {rel}: bad base64: {e}"))?,
        };
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Fill in `problems` (the run failed) and `notes` (unexpected but harmless).
fn judge(
    r: &mut RunReport,
    sc: &Scenario,
    timeout: Duration,
    first_non_json: Option<&str>,
    write_error: Option<io::Error>,
) {
    let exit = match (&r.exit, &r.signal) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("killed by {s}"),
        _ => "no exit status".into(),
    };
    let stderr = if r.stderr_tail.is_empty() {
        String::new()
    } else {
        let t: String = r.stderr_tail.chars().rev().take(200).collect();
        format!("; stderr: {}", t.chars().rev().collect::<String>())
    };
    let p = &mut r.problems;
    if let Some(e) = write_error {
        p.push(format!("writing the capture failed: {e}"));
    }
    match r.end.as_str() {
        "timeout" => p.push(format!(
            "no end within {} s: the CLI was stopped ({} lines by then)",
            timeout.as_secs_f64(),
            r.lines
        )),
        "exit" | "signal" => {}
        other => p.push(format!("the run was stopped ({other})")),
    }
    if r.lines == 0 {
        p.push(format!(
            "the CLI printed nothing on stdout ({exit}{stderr})"
        ));
    } else if r.non_json > 0 {
        p.push(format!(
            "{} of {} stdout lines are not JSON objects (first: {:?})",
            r.non_json,
            r.lines,
            first_non_json.unwrap_or("")
        ));
    }
    if r.lines > 0 && r.results.is_empty() && r.end != "timeout" {
        p.push(format!("no result line ({exit}{stderr})"));
    }
    if let Some(last) = r.results.last() {
        let want = sc.expect.results();
        if !want.contains(last) {
            p.push(format!(
                "result subtype {last:?}, expected {}",
                want.join(" or ")
            ));
        }
        if let (Some(want), Some(got)) = (sc.expect.is_error, r.is_error)
            && want != got
        {
            p.push(format!("result is_error {got}, expected {want}"));
        }
    }
    if r.signal.is_some() && r.end == "signal" {
        p.push(format!("the CLI was {exit}"));
    }
    if !r.unused_turns.is_empty() && r.end != "timeout" {
        p.push(format!(
            "the CLI never asked for scripted turn(s): {}",
            r.unused_turns.join(", ")
        ));
    }
    if !r.port_released {
        p.push("the API's port was still bound after the run".into());
    }
    let n = &mut r.notes;
    if !r.unknown_requests.is_empty() {
        n.push(format!(
            "{} request(s) the API does not know: {}",
            r.unknown_requests.len(),
            r.unknown_requests.join(", ")
        ));
    }
    if r.exhausted > 0 {
        n.push(format!(
            "{} main request(s) after the script ran out (answered \"Done.\")",
            r.exhausted
        ));
    }
    if r.leftovers_killed > 0 {
        n.push(format!(
            "{} process(es) left running by the CLI were killed",
            r.leftovers_killed
        ));
    }
}

/// Collects stdout for [`version`].
struct Collect(Vec<u8>);

impl Driver for Collect {
    fn line(&mut self, line: &Line<'_>) -> io::Result<Option<Halt>> {
        if self.0.len() < 4096 {
            self.0.extend_from_slice(line.bytes);
            self.0.push(b'\n');
        }
        Ok(None)
    }
    fn stderr(&mut self, _: &[u8], _: bool) -> io::Result<()> {
        Ok(())
    }
    fn idle(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// What `claude --version` says (`2.1.45`), run like a scenario (isolated `HOME`, no API);
/// `Ok(None)` when it printed no version.
pub fn version(setup: &Setup) -> Result<Option<String>, RunFailure> {
    let tmp = tempfile::Builder::new()
        .prefix("boo-probe-")
        .tempdir()
        .map_err(|e| RunFailure::Setup(format!("temporary directory: {e}")))?;
    let spec = Spec {
        program: setup.claude.clone(),
        args: vec!["--version".into()],
        env: setup.env(
            tmp.path(),
            &setup
                .agent
                .prepare(tmp.path(), tmp.path(), "http://127.0.0.1:9")
                .map_err(RunFailure::Setup)?,
            &[],
        ),
        stdin: None,
        max_line: None,
        cwd: Some(tmp.path().to_owned()),
        attach: None,
    };
    let limits = Limits {
        timeout: Some(setup.timeout.min(Duration::from_secs(30))),
        ..setup.limits()
    };
    let mut c = Collect(Vec::new());
    let outcome =
        supervise(&spec, &limits, &mut c).map_err(|RunError::Start(e)| RunFailure::Start(e))?;
    if let Cause::Interrupted(sig) = outcome.cause {
        return Err(RunFailure::Interrupted(sig));
    }
    let text = String::from_utf8_lossy(&c.0);
    // `2.1.45 (Claude Code)`, `codex-cli 0.171.0`, `0.61.0`: the first word shaped like one.
    let looks = |w: &str| {
        w.split('.').count() >= 3
            && w.starts_with(|c: char| c.is_ascii_digit())
            && w.split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    };
    let found = text
        .split_whitespace()
        .map(|w| w.trim_start_matches('v').trim_end_matches(['.', ',', ')']))
        .find(|w| looks(w));
    Ok(found
        .filter(|_| outcome.ended == Some(Ended::Code(0)))
        .map(str::to_owned))
}
