//! Helpers of the `probe` families (`tests/probe.rs`, `tests/probe_agents.rs`) and of the spawn
//! tests that run agent CLIs: the loopback-only network namespace, running `probe`, reading its
//! `summary.json`, listing its built-in scenarios, and stand-in CLIs.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Instant;

use serde_json::Value;

/// Whether `unshare -rn` gives a network namespace with a working loopback here.
pub fn netns() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        let ok = Command::new("unshare")
            .args(["-rn", "sh", "-c", "ip link set lo up"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!(
                "NOTE: no network namespace (unshare -rn failed): probing with the host network"
            );
        }
        ok
    })
}

/// `boo-normalize probe ARGS`, inside a loopback-only network namespace when `isolated` and the
/// machine allows it.
pub fn probe(args: &[&str], isolated: bool) -> Output {
    let mut c = if isolated && netns() {
        let mut c = Command::new("unshare");
        c.args(["-rn", "sh", "-c", "ip link set lo up && exec \"$@\"", "sh"])
            .arg(env!("CARGO_BIN_EXE_boo-normalize"));
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_boo-normalize"))
    };
    c.arg("probe").args(args).stdin(Stdio::null());
    let started = Instant::now();
    let out = c.output().expect("run probe");
    eprintln!(
        "probe {} took {:.1} s",
        args.join(" "),
        started.elapsed().as_secs_f64()
    );
    out
}

/// The `summary.json` a probe wrote in `dir`.
pub fn summary(dir: &Path) -> Value {
    let text = fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("summary.json is JSON")
}

/// The names of the built-in scenarios (`probe ARGS --list`: `--agent AGENT` or nothing).
pub fn scenario_names(args: &[&str]) -> Vec<String> {
    let out = super::bin()
        .arg("probe")
        .args(args)
        .arg("--list")
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_owned())
        .collect()
}

/// A stand-in CLI: a shell script `dir/name` (its pid, and those of the processes it starts,
/// go to `dir/pids`).
pub fn fake_cli(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    fs::write(
        &p,
        format!("#!/bin/sh\necho $$ >> '{}/pids'\n{body}\n", dir.display()),
    )
    .unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    p
}
