//! Shared helpers for the package tests (crates.io, PyPI, npm, Go): paths, commands, skips,
//! and the check that an installed binary turned a fixture into an envelope.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub use crate::common::root;

/// Cargo's target directory (packages and tool installs are cached under it).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from)
}

/// The real capture every installed binary normalizes.
pub fn fixture() -> PathBuf {
    root().join("fixtures/real/backflow__agent-output-taskprogress.ndjson")
}

/// A packaging tool (maturin, npm, node, go) is missing: say so and pass, unless
/// `BOO_REQUIRE_PACKAGERS=1` asks for a failure instead.
pub fn skip(why: &str) {
    if std::env::var_os("BOO_REQUIRE_PACKAGERS").is_some_and(|v| !v.is_empty()) {
        panic!("required packaging tool unavailable: {why}");
    }
    eprintln!("SKIP: {why}");
}

/// A command that runs cargo (cargo itself, maturin) from inside a test: without the
/// `CARGO_*` variables cargo sets for test processes (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, …),
/// which some build scripts track, so the nested build would otherwise invalidate the outer
/// one's dependencies on every run.
pub fn nested_cargo(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    for (key, _) in std::env::vars_os() {
        let k = key.to_string_lossy();
        if k.starts_with("CARGO_") && k != "CARGO_HOME" && k != "CARGO_TARGET_DIR" {
            cmd.env_remove(&key);
        }
    }
    cmd.env("CARGO_TARGET_DIR", target_dir());
    cmd
}

/// Run `cmd`, panic with its stderr unless it succeeded; returns its output.
pub fn run(cmd: &mut Command, what: &str) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Whether `program --version` runs.
pub fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `out` is a successful run whose stdout is the fixture's envelope: `session.init` first,
/// `run.end` last, every line JSON.
pub fn assert_envelope(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::str::from_utf8(&out.stdout).expect("utf-8 envelope");
    let events: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{what}: {e}: {l}")))
        .collect();
    assert!(events.len() > 10, "{what}: only {} events", events.len());
    assert_eq!(events[0]["type"], "session.init", "{what}");
    assert_eq!(events[events.len() - 1]["type"], "run.end", "{what}");
}

/// Size of a file in bytes, for the record printed by the tests.
pub fn size(path: &Path) -> u64 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .len()
}

mod go;
mod npm;
mod registries;
