//! Every dialect fixture through every output format (`--format envelope|audit|sse|otlp|pretty`),
//! `report`, `redact` and `profile` without an error; `profile`/`diff` of two copies of one
//! capture find nothing, and a changed item type is named.

use crate::common::{bin, root};

use super::contract::agent_fixtures;

#[test]
fn every_output_format_reads_every_dialect() {
    let dir = tempfile::tempdir().unwrap();
    for (_, path) in agent_fixtures() {
        let p = path.to_str().unwrap();
        for f in ["envelope", "audit", "sse", "otlp", "pretty"] {
            let out = bin().args(["--format", f, p]).output().unwrap();
            assert!(out.status.success(), "{p} --format {f}: {out:?}");
            assert!(!out.stdout.is_empty(), "{p} --format {f}");
        }
        let html = dir.path().join("r.html");
        let out = bin()
            .args(["report", "-o", html.to_str().unwrap(), p])
            .output()
            .unwrap();
        assert!(out.status.success(), "{p} report: {out:?}");
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(page.contains("<html"), "{p}");
        let out = bin().args(["redact", p]).output().unwrap();
        assert!(out.status.success(), "{p} redact: {out:?}");
        let out = bin().args(["profile", p]).output().unwrap();
        assert!(out.status.success(), "{p} profile: {out:?}");
    }
}

#[test]
fn diff_of_one_codex_capture_is_empty_and_a_changed_item_type_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let src = root().join("fixtures/agents/codex/documented-two-runs.jsonl");
    let text = std::fs::read_to_string(&src).unwrap();
    let a = dir.path().join("a.jsonl");
    let b = dir.path().join("b.jsonl");
    let c = dir.path().join("c.jsonl");
    std::fs::write(&a, &text).unwrap();
    std::fs::write(&b, &text).unwrap();
    std::fs::write(&c, text.replace("\"file_change\"", "\"patch_apply\"")).unwrap();
    let same = bin()
        .args(["diff", a.to_str().unwrap(), b.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(same.status.success(), "{same:?}");
    let changed = bin()
        .args(["diff", a.to_str().unwrap(), c.to_str().unwrap()])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&changed.stdout);
    assert!(said.contains("patch_apply"), "{said}");
}
