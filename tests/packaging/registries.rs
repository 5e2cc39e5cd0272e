//! Packaging: the crates.io package and the PyPI wheel build from what they ship, install
//! into a clean place, and the installed binary normalizes a fixture.

use crate::packaging;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use packaging::{assert_envelope, fixture, have, nested_cargo, root, run, size, skip, target_dir};

/// `cargo package`, then `cargo install --path` of the unpacked crate (which builds it from
/// what it ships, as `cargo package`'s own verification would, once instead of twice): the binary normalizes a fixture
/// and reaches its man pages and completions the way the README says.
#[test]
fn crate_package_builds_and_installs_a_working_binary() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = target_dir();
    let out = run(
        nested_cargo(&cargo)
            .current_dir(root())
            .args([
                "package",
                // The install below builds the unpacked crate alone: that is the verification.
                "--no-verify",
                "--allow-dirty",
                "--locked",
                "--offline",
                "--target-dir",
            ])
            .arg(&target),
        "cargo package",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Packaged"), "{stderr}");
    let version = env!("CARGO_PKG_VERSION");
    let crate_file = target.join(format!("package/boo-normalize-{version}.crate"));
    // Unpack the .crate itself (what crates.io serves) into a fresh directory.
    let unpack_root = target.join("packages-test/crate");
    let _ = std::fs::remove_dir_all(&unpack_root);
    std::fs::create_dir_all(&unpack_root).expect("unpack dir");
    run(
        Command::new("tar")
            .arg("xzf")
            .arg(&crate_file)
            .arg("-C")
            .arg(&unpack_root),
        "tar xzf <.crate>",
    );
    let unpacked = unpack_root.join(format!("boo-normalize-{version}"));
    let size = size(&crate_file);
    eprintln!("{}: {size} bytes", crate_file.display());
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
    for unshipped in [
        "fixtures",
        "tests",
        "benches",
        "fuzz",
        "src/python",
        "npm",
        "docs",
    ] {
        assert!(
            !unpacked.join(unshipped).exists(),
            "{unshipped} shipped in the package"
        );
    }

    // A debug install reuses the test build's dependencies (same target dir).
    let install_root = target.join("packages-test/cargo-root");
    run(
        nested_cargo(&cargo)
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
            .arg(&install_root),
        "cargo install --path <packaged crate>",
    );
    let bin = install_root.join("bin/boo-normalize");
    check_installed_binary(&bin, &target.join("packages-test/man"));
}

fn check_installed_binary(bin: &Path, man_dir: &Path) {
    let out = Command::new(bin)
        .stdin(std::fs::File::open(fixture()).expect("fixture"))
        .output()
        .expect("run the installed binary");
    assert_envelope(&out, "installed binary");

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

/// The PyPI wheel (maturin's `bin` bindings, configured in pyproject.toml): built with a
/// project-local maturin, its platform tag is one this machine's Python accepts (and a
/// `manylinux`/`musllinux` one on Linux, which PyPI requires), and a fresh venv holding only
/// that wheel runs `boo-normalize` from PATH and `python -m boo_normalize`; `uvx --from WHEEL
/// boo-normalize` runs it too.
///
/// The wheel is built with the dev profile so it reuses this test build; `maturin build
/// --release` differs only in the cargo profile.
#[test]
fn pypi_wheel_installs_into_a_fresh_venv() {
    let Some(maturin) = maturin() else { return };
    let work = target_dir().join("packages-test/pypi");
    let wheels = work.join("wheels");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("work dir");
    run(
        nested_cargo(&maturin)
            .current_dir(root())
            .args([
                "build",
                "--profile",
                "dev",
                "--offline",
                "--locked",
                "--out",
            ])
            .arg(&wheels),
        "maturin build",
    );
    let wheel = std::fs::read_dir(&wheels)
        .expect("wheels dir")
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .expect("a wheel");
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    eprintln!("{name}: {} bytes", size(&wheel));
    let version = env!("CARGO_PKG_VERSION");
    let tag = name
        .strip_prefix(&format!("boo_normalize-{version}-py3-none-"))
        .and_then(|t| t.strip_suffix(".whl"))
        .unwrap_or_else(|| panic!("unexpected wheel name {name}"));
    if cfg!(target_os = "linux") {
        assert!(
            tag.starts_with("manylinux_") || tag.starts_with("musllinux_"),
            "{tag}: PyPI only takes manylinux/musllinux wheels"
        );
        assert!(tag.ends_with(std::env::consts::ARCH), "{tag}");
    }

    let venv = work.join("venv");
    run(
        Command::new("python3").args(["-m", "venv"]).arg(&venv),
        "python3 -m venv",
    );
    let py = venv.join("bin/python");
    let tags = run(
        Command::new(&py).args([
            "-c",
            "from pip._vendor.packaging import tags; print('\\n'.join(str(t) for t in tags.sys_tags()))",
        ]),
        "the venv's platform tags",
    );
    let accepted = String::from_utf8_lossy(&tags.stdout);
    assert!(
        accepted.lines().any(|t| t == format!("py3-none-{tag}")),
        "py3-none-{tag} is not a tag this Python installs"
    );
    // Only the wheel: no index, so nothing else can come in.
    run(
        Command::new(&py)
            .args([
                "-m",
                "pip",
                "install",
                "--no-index",
                "--disable-pip-version-check",
                "-q",
            ])
            .arg(&wheel),
        "pip install <wheel>",
    );
    let path = format!("{}:/usr/bin:/bin", venv.join("bin").display());
    let plain = Command::new("sh")
        .args([
            "-c",
            "exec boo-normalize \"$0\"",
            fixture().to_str().unwrap(),
        ])
        .env("PATH", &path)
        .output()
        .expect("sh");
    assert_envelope(&plain, "boo-normalize from the venv's PATH");
    let module = Command::new(&py)
        .args(["-m", "boo_normalize"])
        .arg(fixture())
        .output()
        .expect("python -m boo_normalize");
    assert_envelope(&module, "python -m boo_normalize");
    assert_eq!(plain.stdout.len(), module.stdout.len());
    // The binary's errors and exit status come through unchanged.
    let bad = Command::new(&py)
        .args(["-m", "boo_normalize", "--no-such-flag"])
        .output()
        .expect("python -m boo_normalize --no-such-flag");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--no-such-flag"));

    // `uvx`: the wheel as a tool run in uv's own throwaway environment, offline.
    let uvx = maturin.with_file_name("uvx");
    if !have(uvx.to_str().unwrap()) {
        return skip("uv is not installed next to maturin: the uvx check is skipped");
    }
    let via_uvx = Command::new(&uvx)
        .args(["--offline", "--from"])
        .arg(&wheel)
        .arg("boo-normalize")
        .arg(fixture())
        .env("UV_CACHE_DIR", work.join("uv-cache"))
        .env("UV_PYTHON_DOWNLOADS", "never")
        .env("UV_NO_CONFIG", "1")
        .output()
        .expect("uvx");
    assert_envelope(&via_uvx, "uvx --from <wheel> boo-normalize");
    assert_eq!(via_uvx.stdout, plain.stdout);
}

/// maturin (and uv) in a project-local venv (target/packaging-tools/maturin), or `None` after a
/// SKIP.
fn maturin() -> Option<PathBuf> {
    if !have("python3") {
        skip("python3 not found: the PyPI wheel test needs it");
        return None;
    }
    // maturin asks `cargo metadata` for every platform's dependencies (Windows' too), which a
    // build for this machine never downloaded: fetch the whole lockfile first, so the offline
    // build below works on a fresh machine (a no-op once they are in cargo's cache).
    let fetched = nested_cargo(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(root())
        .args(["fetch", "--locked", "--quiet"])
        .status()
        .is_ok_and(|s| s.success());
    if !fetched {
        skip(
            "cargo fetch --locked failed (no crates.io access?): the wheel build needs every crate",
        );
        return None;
    }
    let venv = target_dir().join("packaging-tools/maturin");
    let bin = venv.join("bin/maturin");
    let ok = venv.join(".installed-ok-with-uv");
    if ok.is_file() {
        return Some(bin);
    }
    let installed = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .is_ok_and(|s| s.success())
        && Command::new(venv.join("bin/python"))
            .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
            .args(["maturin>=1.5,<2", "uv"])
            .status()
            .is_ok_and(|s| s.success())
        && have(bin.to_str().unwrap());
    if !installed {
        skip(
            "maturin could not be installed into target/packaging-tools/maturin (no PyPI access?)",
        );
        return None;
    }
    std::fs::write(&ok, b"").expect("marker");
    Some(bin)
}
