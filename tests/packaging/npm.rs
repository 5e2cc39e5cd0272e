//! The npm packages (npm/): types generated from the schema are current, the assembled
//! packages (main + this platform's binary package) install from their tarballs into a fresh
//! project where `npx boo-normalize` normalizes a fixture, a missing platform package is named,
//! and the TypeScript client's `node --test` suite and `tsc --noEmit` example pass against the
//! installed package and the real binary.
//!
//! After a schema change: `BOO_UPDATE_TYPES=1 cargo test --test suite npm::typescript_types`.
//! Tooling (typescript, json-schema-to-typescript, @types/node, and the `ai` package the AI SDK
//! helpers are read with; pinned by npm/package-lock.json)
//! is installed into target/npm-work on first use. Without node/npm (or registry access for
//! that first install) these tests print `SKIP:` and pass; `BOO_REQUIRE_PACKAGERS=1` fails instead.

use crate::packaging;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use packaging::{assert_envelope, fixture, have, root, run, size, skip, target_dir};

use crate::common::BIN;
use crate::common::npm::{self, CiError};

/// target/npm-work: a copy of npm/ with its dev dependencies installed, or why not.
fn work() -> Result<&'static Path, String> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(prepare_work)
        .as_ref()
        .map(PathBuf::as_path)
        .map_err(Clone::clone)
}

fn prepare_work() -> Result<PathBuf, String> {
    if !have("node") || !have("npm") {
        return Err("node or npm not found".into());
    }
    let work = target_dir().join("npm-work");
    // A fresh copy of the sources each run; node_modules (keyed by the lockfile) survives.
    for stale in [
        "scripts",
        "boo-normalize",
        "test",
        "examples",
        "out",
        "consumer",
    ] {
        let _ = std::fs::remove_dir_all(work.join(stale));
    }
    copy_tree(&root().join("npm"), &work).map_err(|e| format!("copy npm/: {e}"))?;
    npm::ci_once(&work).map_err(|e| match e {
        CiError::Io(e) => e,
        CiError::Spawn(e) => format!("npm: {e}"),
        CiError::Failed(stderr) => {
            format!("npm ci in {} failed: {}", work.display(), stderr.trim())
        }
    })?;
    Ok(work)
}

/// Copy `from` into `to`, leaving out node_modules and build output.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == "node_modules" || name == "dist" {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if entry.file_type()?.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

/// The tarballs assembled from this test build's binary, installed into a fresh project
/// (`work/consumer`); returns that project.
fn consumer() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let work = match work() {
            Ok(w) => w,
            Err(why) => {
                skip(&format!("npm packages: {why}"));
                return None;
            }
        };
        let out = work.join("out");
        let listing = run(
            Command::new("node")
                .arg("scripts/assemble.mjs")
                .arg("--binary")
                .arg(BIN)
                .arg("--out")
                .arg(&out)
                .current_dir(work),
            "npm/scripts/assemble.mjs",
        );
        let tarballs: Vec<PathBuf> = String::from_utf8_lossy(&listing.stdout)
            .lines()
            .map(|l| PathBuf::from(l.split('\t').next().unwrap()))
            .collect();
        assert_eq!(tarballs.len(), 2, "main and platform tarballs");
        for t in &tarballs {
            eprintln!("{}: {} bytes", t.display(), size(t));
        }
        let project = work.join("consumer");
        npm_install(&project, &tarballs);
        Some(project)
    })
    .as_deref()
}

/// A fresh npm project at `dir` with `tarballs` installed (offline: nothing from a registry).
fn npm_install(dir: &Path, tarballs: &[PathBuf]) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("project dir");
    std::fs::write(
        dir.join("package.json"),
        r#"{"name":"consumer","private":true,"type":"module"}"#,
    )
    .expect("package.json");
    run(
        Command::new("npm")
            .args([
                "install",
                "--offline",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
            ])
            .args(tarballs)
            .current_dir(dir),
        "npm install <tarballs>",
    );
}

/// `BOO_UPDATE_TYPES=1 cargo test --test suite npm::typescript_types` regenerates
/// npm/boo-normalize/src/envelope.ts instead of checking it.
#[test]
fn typescript_types_match_the_schema() {
    let work = match work() {
        Ok(w) => w,
        Err(why) => return skip(&format!("generated types: {why}")),
    };
    let update = std::env::var_os("BOO_UPDATE_TYPES").is_some_and(|v| !v.is_empty());
    let out = Command::new("node")
        .arg("scripts/gen-types.mjs")
        .args((!update).then_some("--check"))
        .env("BOO_NORMALIZE_BINARY", BIN)
        .current_dir(work)
        .output()
        .expect("node");
    assert!(
        out.status.success(),
        "{}(or: BOO_UPDATE_TYPES=1 cargo test --test suite npm::typescript_types)",
        String::from_utf8_lossy(&out.stderr)
    );
    if update {
        let generated = "boo-normalize/src/envelope.ts";
        std::fs::copy(work.join(generated), root().join("npm").join(generated)).expect("copy");
        eprintln!("regenerated npm/{generated}");
    }
}

#[test]
fn npm_packages_install_and_npx_normalizes() {
    let Some(project) = consumer() else { return };
    let piped = Command::new("npx")
        .args(["--offline", "boo-normalize"])
        .stdin(std::fs::File::open(fixture()).expect("fixture"))
        .current_dir(project)
        .output()
        .expect("npx");
    assert_envelope(&piped, "npx boo-normalize < fixture");
    let direct = Command::new("npx")
        .args(["--offline", "boo-normalize", "normalize"])
        .arg(fixture())
        .current_dir(project)
        .output()
        .expect("npx");
    assert_envelope(&direct, "npx boo-normalize normalize FIXTURE");
    assert_eq!(piped.stdout, direct.stdout);
    // The binary's status comes through the launcher.
    let bad = Command::new("npx")
        .args(["--offline", "boo-normalize", "--no-such-flag"])
        .current_dir(project)
        .output()
        .expect("npx");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--no-such-flag"));
}

#[test]
fn npm_without_the_platform_package_names_it() {
    let Some(project) = consumer() else { return };
    let work = project.parent().unwrap();
    let main = std::fs::read_dir(work.join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("boo-normalize-0") && n.ends_with(".tgz")
        })
        .expect("main tarball");
    let alone = work.join("consumer-main-only");
    npm_install(&alone, &[main]);
    let out = Command::new("npx")
        .args(["--offline", "boo-normalize", "--version"])
        .current_dir(&alone)
        .output()
        .expect("npx");
    assert_eq!(out.status.code(), Some(127));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let libc = if cfg!(target_env = "musl") {
        "musl"
    } else {
        "gnu"
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    let name = if cfg!(target_os = "linux") {
        format!("@boo-normalize/linux-{arch}-{libc}")
    } else {
        format!("@boo-normalize/{}-{arch}", std::env::consts::OS)
    };
    assert!(
        stderr.contains(&format!("the platform package {name} is not installed")),
        "{stderr}"
    );
}

#[test]
fn typescript_client_tests_and_example_typecheck() {
    let Some(project) = consumer() else { return };
    let work = project.parent().unwrap();
    for dir in ["test", "examples"] {
        copy_tree(&work.join(dir), &project.join(dir)).expect("copy tests");
    }
    let mut tests: Vec<PathBuf> = std::fs::read_dir(project.join("test"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".test.mjs"))
        .collect();
    tests.sort();
    assert!(tests.len() >= 2, "node tests: {tests:?}");
    let mut node = Command::new("node");
    node.arg("--test")
        .args(&tests)
        .env("BOO_REPO", root())
        .env_remove("BOO_NORMALIZE_BINARY")
        .current_dir(project);
    let real_cli = pinned_claude();
    match &real_cli {
        Some(cli) => node.env("BOO_CLAUDE_BIN", cli),
        None => node.env_remove("BOO_CLAUDE_BIN"),
    };
    let out = node.output().expect("node --test");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "node --test failed:\n{report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains("# fail 0"), "{report}");
    if real_cli.is_some() {
        assert!(
            report.contains("# skipped 0"),
            "the real-CLI test skipped:\n{report}"
        );
    }
    run(
        Command::new(work.join("node_modules/.bin/tsc"))
            .args(["-p", "examples/tsconfig.json"])
            .current_dir(project),
        "tsc --noEmit examples/example.ts",
    );
}

/// The real claude CLI the adapter tests run (`BOO_CLAUDE_VERSION`, else the pinned one; installed
/// project-locally by tests/support/install-claude.sh, as the spawn tests do), or `None` after a
/// note: the real-CLI client test then skips.
fn pinned_claude() -> Option<PathBuf> {
    let version = crate::common::claude_version();
    if !have("python3") {
        eprintln!("note: python3 missing: the client's real-CLI test skips");
        return None;
    }
    let out = Command::new("bash")
        .arg(root().join("tests/support/install-claude.sh"))
        .arg(version)
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("note: claude CLI {version} unavailable: the client's real-CLI test skips");
        return None;
    }
    Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}
