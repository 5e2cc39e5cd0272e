//! The Go example (docs/go/): `go vet`, its own tests (the hand-kept types checked against
//! `boo-normalize schema`, a real capture decoded), and the built program normalizing a fixture
//! through this build's binary. Without a Go toolchain this prints `SKIP:` and passes
//! (`BOO_REQUIRE_PACKAGERS=1` fails instead). Go's caches live under target/go.

use crate::packaging;

use std::process::Command;

use packaging::{fixture, root, run, skip, target_dir};

use crate::common::BIN;

fn go(args: &[&str]) -> Command {
    let cache = target_dir().join("go");
    let mut cmd = Command::new("go");
    cmd.args(args)
        .current_dir(root().join("docs/go"))
        .env("GOCACHE", cache.join("cache"))
        .env("GOPATH", cache.join("path"))
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "-mod=mod")
        .env("BOO_NORMALIZE_BINARY", BIN)
        .env("BOO_FIXTURE", fixture());
    cmd
}

#[test]
fn go_example_decodes_the_envelope() {
    if !Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return skip("go not found: the docs/go example is not built");
    }
    run(&mut go(&["vet", "./..."]), "go vet");
    let tests = run(&mut go(&["test", "-count=1", "-v", "./..."]), "go test");
    let report = String::from_utf8_lossy(&tests.stdout);
    for name in ["TestTypesMatchTheSchema", "TestDecodeARealCapture"] {
        assert!(report.contains(&format!("--- PASS: {name}")), "{report}");
    }
    let exe = target_dir().join("go/example");
    run(go(&["build", "-o"]).arg(&exe).arg("."), "go build");

    let expected = run(Command::new(BIN).arg(fixture()), "boo-normalize");
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&expected.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let end = events.last().unwrap();
    let from_file = run(
        Command::new(&exe)
            .arg(fixture())
            .env("BOO_NORMALIZE_BINARY", BIN),
        "the Go example",
    );
    let text = String::from_utf8_lossy(&from_file.stdout).into_owned();
    let tools = text.lines().filter(|l| l.starts_with("tool ")).count();
    assert_eq!(tools as u64, end["tool_calls"].as_u64().unwrap(), "{text}");
    let summary = format!(
        "run.end cause=eof turns={} tool_calls={} output_tokens={} lines={}",
        end["turns"], end["tool_calls"], end["usage"]["output_tokens"], end["stats"]["lines"]
    );
    assert_eq!(text.lines().last(), Some(summary.as_str()), "{text}");
    let from_stdin = run(
        Command::new(&exe)
            .stdin(std::fs::File::open(fixture()).unwrap())
            .env("BOO_NORMALIZE_BINARY", BIN),
        "the Go example on stdin",
    );
    assert_eq!(from_stdin.stdout.len(), from_file.stdout.len());
    // The binary's exit status and message come through.
    let missing = Command::new(&exe)
        .arg("/nonexistent/input.ndjson")
        .env("BOO_NORMALIZE_BINARY", BIN)
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("boo-normalize: "));
}
