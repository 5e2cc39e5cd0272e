//! The OTLP trace sink's lines parsed strictly with the official protobuf definitions (Python
//! `opentelemetry-proto`, installed project-locally; skipped with a message when it cannot be),
//! for every fixture, with and without content and redaction.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::otlp::{ran, secret_input};
use crate::common::{fixtures, root, run};

/// The project-local Python with `opentelemetry-proto`, or None (with the reason printed).
fn proto_python() -> Option<PathBuf> {
    let out = Command::new("bash")
        .arg(root().join("tests/support/otel-venv.sh"))
        .arg("proto")
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "SKIP strict OTLP parsing: the opentelemetry-proto Python package could not be installed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return None;
    }
    Some(PathBuf::from(String::from_utf8(out.stdout).unwrap().trim()))
}

fn check_files(py: &Path, files: &[PathBuf]) -> std::process::Output {
    Command::new(py)
        .arg(root().join("tests/support/otlp_check.py"))
        .args(files)
        .output()
        .unwrap()
}

#[test]
fn every_line_parses_strictly_with_the_official_protobuf_definitions() {
    let Some(py) = proto_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    // The checker must be able to fail: an unknown field and a base64 id are errors.
    let bad = dir.path().join("bad.otlp");
    std::fs::write(&bad, "{\"resourceSpans\":[],\"bogus\":1}\n").unwrap();
    assert!(
        !check_files(&py, std::slice::from_ref(&bad))
            .status
            .success()
    );
    std::fs::write(
        &bad,
        "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":\"AAAAAAAAAAAAAAAAAAAAAA==\",\"spanId\":\"AAAAAAAAAAA=\",\"name\":\"x\"}]}]}]}\n",
    )
    .unwrap();
    assert!(
        !check_files(&py, std::slice::from_ref(&bad))
            .status
            .success()
    );

    let mut files = Vec::new();
    let secret = dir.path().join("secret.ndjson");
    std::fs::write(&secret, secret_input()).unwrap();
    let mut inputs = fixtures();
    inputs.push(secret);
    for (i, f) in inputs.iter().enumerate() {
        for (j, extra) in [
            &[][..],
            &["--otlp-content"][..],
            &["--otlp-content", "--redact"][..],
        ]
        .iter()
        .enumerate()
        {
            let p = dir.path().join(format!("{i}-{j}.otlp"));
            let mut args = vec!["--otlp", p.to_str().unwrap()];
            args.extend_from_slice(extra);
            let out = run(&args, &std::fs::read(f).unwrap());
            assert!(
                ran(&out.status),
                "{}: {}",
                f.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            files.push(p);
        }
    }
    let out = check_files(&py, &files);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        report.lines().filter(|l| l.starts_with("ok ")).count(),
        files.len(),
        "{report}"
    );
}
