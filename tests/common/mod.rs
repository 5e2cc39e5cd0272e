//! Shared helpers for the integration tests: run the real binary, list fixtures, parse output.
#![allow(dead_code)]

pub mod npm;
pub mod probe;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The path of the binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_boo-normalize");

/// The binary under test.
pub fn bin() -> Command {
    Command::new(BIN)
}

/// Repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every real capture shipped in `fixtures/real` (and captured ones, when present), sorted.
pub fn fixtures() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for dir in ["fixtures/real", "fixtures/captured"] {
        collect(&root().join(dir), &mut v);
    }
    v.sort();
    assert!(v.len() >= 25, "fixtures missing: {}", v.len());
    v
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "ndjson") {
            out.push(p);
        }
    }
}

/// Run the binary with `args`, feeding `stdin`.
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn boo-normalize");
    let mut si = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    // Write on a thread so a full stdout pipe cannot deadlock us.
    let t = std::thread::spawn(move || {
        let _ = si.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait");
    t.join().unwrap();
    out
}

/// Parse NDJSON output into values (panics on any invalid line).
pub fn events(stdout: &[u8]) -> Vec<serde_json::Value> {
    std::str::from_utf8(stdout)
        .expect("output is UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad output line {e}: {l}")))
        .collect()
}

/// Parse NDJSON output into values, reading invalid UTF-8 as U+FFFD (output that carries a
/// child's raw bytes, e.g. `spawn` with stderr events); panics on a line that is not JSON.
pub fn events_lossy(stdout: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// The events of type `t`.
pub fn of_type<'a>(ev: &'a [serde_json::Value], t: &str) -> Vec<&'a serde_json::Value> {
    ev.iter().filter(|e| e["type"] == t).collect()
}

/// The JSON payloads of an SSE stream's `data:` lines, without the AI SDK's closing `[DONE]`.
pub fn sse_data(stdout: &[u8]) -> Vec<serde_json::Value> {
    std::str::from_utf8(stdout)
        .expect("output is UTF-8")
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("bad data line {e}: {d}")))
        .collect()
}

/// Capture `name` of CLI `version` in `fixtures/captured/`.
pub fn captured(version: &str, name: &str) -> PathBuf {
    root().join("fixtures/captured").join(version).join(name)
}

/// The envelope of the file at `path`, which must pass `--strict` (no unknown line, no
/// diagnostic).
pub fn strict_envelope(path: &Path) -> Vec<serde_json::Value> {
    let out = bin()
        .arg("--strict")
        .arg(path)
        .output()
        .expect("run boo-normalize");
    assert!(
        out.status.success(),
        "{}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    events(&out.stdout)
}

/// Number of lines in `bytes` as the tool counts them (an unterminated last line counts).
pub fn line_count(bytes: &[u8]) -> u64 {
    let n = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    n + u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}

/// Property-test settings: `cases` cases unless `PROPTEST_CASES` is set (raise it for a thorough
/// run, e.g. `PROPTEST_CASES=5000 cargo test --test suite props::`; lower it for a quick one). Every other
/// setting keeps proptest's defaults, which read their own `PROPTEST_*` variables.
pub fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    let mut c = proptest::test_runner::Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        c.cases = cases;
    }
    c
}

/// The claude CLI version the real-CLI tests run (the adapter contracts, the TypeScript client's
/// real-CLI test): `BOO_CLAUDE_VERSION` if set (e.g. `BOO_CLAUDE_VERSION=2.1.332`), else the
/// pinned 2.1.45 (a JS release: small install, quick start, captured in fixtures/).
pub fn claude_version() -> &'static str {
    static V: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    V.get_or_init(|| match std::env::var("BOO_CLAUDE_VERSION") {
        Ok(v) if !v.trim().is_empty() => v.trim().to_owned(),
        _ => "2.1.45".to_owned(),
    })
}
