//! `audit verify` on real audit logs written by the binary: every single-byte change is
//! detected on its own line, truncation anywhere inside a record is a torn last record, and
//! deletion, insertion, reordering, seq gaps and interleaved runs are named with their line.

use crate::common;

use common::{bin, root, run};

const TOOLS_PARTIAL: &str = "fixtures/captured/1.0.128/tools.partial.ndjson";

fn fixture(rel: &str) -> std::path::PathBuf {
    root().join(rel)
}

/// A small real audit log (the first lines of a capture), as bytes.
fn small_audit() -> Vec<u8> {
    let input = std::fs::read(fixture(TOOLS_PARTIAL)).unwrap();
    let head: Vec<u8> = input
        .split_inclusive(|&b| b == b'\n')
        .take(4)
        .flatten()
        .copied()
        .collect();
    let out = run(&["--format", "audit", "--run-id", "flip"], &head);
    assert!(matches!(out.status.code(), Some(0 | 3)));
    out.stdout
}

/// 1-based line of byte `pos`.
fn line_of(bytes: &[u8], pos: usize) -> u64 {
    1 + bytes[..pos].iter().filter(|&&b| b == b'\n').count() as u64
}

#[test]
fn every_single_byte_change_is_detected_on_its_line() {
    use boo_normalize::audit::verify::{Failure, verify};
    let audit = small_audit();
    assert!(verify(&audit[..]).is_ok());
    let mut checked = 0;
    for pos in 0..audit.len() {
        for new in [audit[pos] ^ 0x01, audit[pos] ^ 0x20, b'\n', b' '] {
            if new == audit[pos] {
                continue;
            }
            let mut t = audit.clone();
            t[pos] = new;
            match verify(&t[..]) {
                Ok(_) => panic!("byte {pos} changed to {new:#x} went undetected"),
                Err(Failure::Bad { line, .. }) => {
                    assert_eq!(line, line_of(&audit, pos), "byte {pos} → {new:#x}")
                }
                Err(Failure::Io(e)) => panic!("{e}"),
            }
            checked += 1;
        }
    }
    assert!(checked > 3 * audit.len());
}

#[test]
fn cli_names_file_line_and_reason() {
    let dir = tempfile::tempdir().unwrap();
    let audit = small_audit();
    let lines: Vec<&[u8]> = audit.split_inclusive(|&b| b == b'\n').collect();
    assert!(lines.len() >= 4);
    let cases: Vec<(&str, Vec<u8>, u64, &str)> = vec![
        (
            "flip",
            {
                let mut t = audit.clone();
                let p = lines[0].len() + 30;
                t[p] ^= 1;
                t
            },
            2,
            "hash mismatch",
        ),
        (
            "truncated",
            audit[..audit.len() - 10].to_vec(),
            lines.len() as u64,
            "torn last record",
        ),
        (
            "deleted",
            [lines[0], lines[2], lines[3]].concat(),
            2,
            "prev is not the hash of line 1",
        ),
        (
            "reordered",
            [lines[0], lines[2], lines[1], lines[3]].concat(),
            2,
            "prev is not the hash",
        ),
        ("first-missing", lines[1..].concat(), 1, "genesis"),
        (
            "duplicated",
            [lines[0], lines[1], lines[1]].concat(),
            3,
            "prev is not the hash of line 2",
        ),
    ];
    for (name, bytes, line, reason) in cases {
        let p = dir.path().join(format!("{name}.jsonl"));
        std::fs::write(&p, &bytes).unwrap();
        let out = bin().args(["audit", "verify"]).arg(&p).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        let want = format!("boo-normalize: {}:{line}: ", p.display());
        assert!(err.starts_with(&want), "{name}: {err}");
        assert!(err.contains(reason), "{name}: {err}");
        assert!(out.stdout.is_empty());
    }
    // Truncating at any point inside a record is a torn last record.
    use boo_normalize::audit::verify::{Failure, verify};
    for cut in 1..audit.len() {
        if audit[cut - 1] == b'\n' {
            continue;
        }
        match verify(&audit[..cut]) {
            Err(Failure::Bad { line, reason }) => {
                assert_eq!(line, line_of(&audit, cut - 1));
                assert!(reason.starts_with("torn last record"), "{reason}");
            }
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
    // A missing file is an I/O error (exit 2), not a verdict.
    let out = bin()
        .args(["audit", "verify"])
        .arg(dir.path().join("nope"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn seq_gaps_and_runs_that_start_over_are_reported_interleaved_runs_verify() {
    use boo_normalize::audit::verify::{Failure, verify};
    // Re-chain records after editing them, so only the run/seq rules can catch it.
    fn rechain(recs: &[Vec<u8>]) -> Vec<u8> {
        use sha2::Digest;
        let mut prev = "0".repeat(64);
        let mut out = Vec::new();
        for r in recs {
            let body = &r[..r.len() - boo_normalize::audit::TAIL_LEN];
            let s = std::str::from_utf8(body).unwrap();
            let i = s.rfind(",\"prev\":\"").unwrap();
            let rec = format!("{},\"prev\":\"{prev}\",", &s[..i]);
            let hash = hex::encode(sha2::Sha256::digest(rec.as_bytes()));
            out.extend_from_slice(format!("{rec}\"hash\":\"{hash}\"}}\n").as_bytes());
            prev = hash;
        }
        out
    }
    let audit = small_audit();
    let lines: Vec<Vec<u8>> = audit
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    assert!(verify(&rechain(&lines)[..]).is_ok());
    let gap = [lines[0].clone(), lines[2].clone()];
    match verify(&rechain(&gap)[..]) {
        Err(Failure::Bad { line: 2, reason }) => assert!(reason.contains("expected 1"), "{reason}"),
        other => panic!("{other:?}"),
    }
    let other_run = |l: &Vec<u8>| {
        String::from_utf8(l.clone())
            .unwrap()
            .replace("\"run_id\":\"flip\"", "\"run_id\":\"other\"")
            .into_bytes()
    };
    // Runs written at once (acp's sessions) interleave, each continuing its own seq.
    let interleaved = [
        lines[0].clone(),
        other_run(&lines[0]),
        lines[1].clone(),
        other_run(&lines[1]),
    ];
    let s = verify(&rechain(&interleaved)[..]).unwrap();
    assert_eq!((s.records, s.runs), (4, 2));
    // A run that comes back starting over is not one of them.
    let again = [lines[0].clone(), other_run(&lines[0]), lines[0].clone()];
    match verify(&rechain(&again)[..]) {
        Err(Failure::Bad { line: 3, reason }) => {
            assert!(reason.contains("appears again"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

/// `--continue-run`: a second process continues the audit log's last run (same run id, seq and
/// SSE ids going on, mono_us never going back), and the log still verifies as one run.
#[test]
fn a_continued_run_is_one_run_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("run.audit.jsonl");
    let log_arg = log.to_str().unwrap();
    let input = std::fs::read(fixture(TOOLS_PARTIAL)).unwrap();
    let first = run(&["--audit", log_arg, "--run-id", "r1"], &input);
    assert!(matches!(first.status.code(), Some(0 | 3)), "{first:?}");
    let last_seq = String::from_utf8(first.stdout).unwrap().lines().count() as u64 - 1;
    let second = run(
        &["--format", "sse", "--audit", log_arg, "--continue-run"],
        &input,
    );
    assert!(matches!(second.status.code(), Some(0 | 3)), "{second:?}");
    let sse = String::from_utf8(second.stdout).unwrap();
    let first_id = sse.lines().find_map(|l| l.strip_prefix("id: ")).unwrap();
    assert_eq!(first_id, (last_seq + 1).to_string(), "SSE ids go on");
    let ids = sse.lines().filter(|l| l.starts_with("id: ")).count() as u64;
    let end: serde_json::Value = sse
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .next_back()
        .map(|d| serde_json::from_str(d).unwrap())
        .unwrap();
    assert_eq!(end["type"], "run.end");
    assert_eq!(end["stats"]["events"], ids - 1, "this process's events");
    let recs: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(recs.iter().all(|r| r["run_id"] == "r1"), "one run id");
    for (i, w) in recs.windows(2).enumerate() {
        assert_eq!(
            w[1]["seq"].as_u64(),
            Some(i as u64 + 1),
            "seq without a gap"
        );
        assert!(w[1]["mono_us"].as_u64() >= w[0]["mono_us"].as_u64());
    }
    let verify = run(&["audit", "verify", "--require-complete", log_arg], b"");
    assert!(verify.status.success(), "{verify:?}");
    let said = String::from_utf8_lossy(&verify.stdout);
    assert!(said.contains("in 1 run,"), "{said}");
    // --continue-run without an audit log, or with --run-id, is a usage error.
    let bad = run(&["--continue-run"], &input);
    assert_eq!(bad.status.code(), Some(2));
}
