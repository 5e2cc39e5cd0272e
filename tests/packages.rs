//! Packaging: the crates.io package builds from what it ships and installs a working binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from)
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{stderr}",
        out.status
    );
    stderr
}

/// `cargo package` (which verifies by building the unpacked crate alone), then
/// `cargo install --path` of that unpacked crate: the binary normalizes a fixture
/// and reaches its man pages and completions the way the README says.
#[test]
fn crate_package_builds_and_installs_a_working_binary() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = target_dir();
    let stderr = run(
        Command::new(&cargo)
            .current_dir(root())
            .args([
                "package",
                "--allow-dirty",
                "--locked",
                "--offline",
                "--target-dir",
            ])
            .arg(&target),
        "cargo package",
    );
    assert!(stderr.contains("Packaged"), "{stderr}");
    let version = env!("CARGO_PKG_VERSION");
    let unpacked = target.join(format!("package/boo-normalize-{version}"));
    let crate_file = target.join(format!("package/boo-normalize-{version}.crate"));
    let size = std::fs::metadata(&crate_file)
        .expect(".crate written")
        .len();
    assert!(
        size < 2 << 20,
        "the .crate is {size} bytes: check the include list"
    );
    for shipped in [
        "README.md",
        "CHANGELOG.md",
        "Cargo.lock",
        "man/boo-normalize.1",
        "src/main.rs",
    ] {
        assert!(
            unpacked.join(shipped).is_file(),
            "{shipped} missing from the package"
        );
    }
    for unshipped in ["fixtures", "tests", "benches", "fuzz"] {
        assert!(
            !unpacked.join(unshipped).exists(),
            "{unshipped} shipped in the package"
        );
    }

    // A debug install reuses the test build's dependencies (same target dir).
    let install_root = target.join("packages-test/cargo-root");
    run(
        Command::new(&cargo)
            .args([
                "install",
                "--debug",
                "--locked",
                "--offline",
                "--force",
                "--path",
            ])
            .arg(&unpacked)
            .arg("--root")
            .arg(&install_root)
            .env("CARGO_TARGET_DIR", &target),
        "cargo install --path <packaged crate>",
    );
    let bin = install_root.join("bin/boo-normalize");
    check_installed_binary(&bin, &target.join("packages-test/man"));
}

fn check_installed_binary(bin: &Path, man_dir: &Path) {
    let fixture = root().join("fixtures/real/backflow__agent-output-taskprogress.ndjson");
    let out = Command::new(bin)
        .stdin(std::fs::File::open(&fixture).expect("fixture"))
        .output()
        .expect("run the installed binary");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf-8 envelope");
    let first: serde_json::Value =
        serde_json::from_str(text.lines().next().expect("an event")).expect("JSON");
    assert_eq!(first["type"], "session.init");
    let last: serde_json::Value =
        serde_json::from_str(text.lines().last().expect("an event")).expect("JSON");
    assert_eq!(last["type"], "run.end");

    let _ = std::fs::remove_dir_all(man_dir);
    run(
        Command::new(bin).arg("generate-man").arg(man_dir),
        "generate-man",
    );
    assert!(man_dir.join("boo-normalize.1").is_file());
    assert!(man_dir.join("boo-normalize-spawn.1").is_file());
    let out = Command::new(bin)
        .args(["completions", "bash"])
        .output()
        .expect("completions");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("boo-normalize"));
}

/// `completions bash | head -1` is quiet: no panic on the closed pipe.
#[test]
fn completions_into_a_closed_pipe_is_quiet() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_boo-normalize"))
        .args(["completions", "zsh"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.is_empty(), "stderr: {stderr}");
}
