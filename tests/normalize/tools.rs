//! What a tool call does, in the envelope (issue 37): on every capture, each `tool.call`'s
//! `kind`, `paths`, `command` and `edit` are the tool table's answer for its own name and input,
//! `subagent` agrees with `kind`, a result carries its call's kind; and the edit calls of a run
//! name exactly the files its results say were edited.

use std::collections::{BTreeMap, BTreeSet};

use boo_normalize::tool::{self, Dialect, Kind};
use serde_json::{Value, json};

use crate::common::{self, bin, events, of_type, root};

/// The table's answer for `name` and `input`, written as the envelope writes it.
fn expected(name: Option<&str>, input: Option<&Value>) -> Value {
    let m = tool::meaning(Dialect::Claude, name, input.filter(|v| !v.is_null()));
    let edit = m.edit.map(|e| {
        let mut o = json!({"path": e.path});
        if let Some(cell) = e.cell {
            o["cell"] = json!(cell);
        }
        o["changes"] = e
            .changes
            .iter()
            .map(|c| {
                let mut x = json!({"old_text": c.old, "new_text": c.new});
                if c.all {
                    x["replace_all"] = json!(true);
                }
                x
            })
            .collect();
        o
    });
    let paths: Vec<&str> = m.paths.iter().filter_map(|p| p.text()).collect();
    json!({"kind": m.kind.as_str(), "paths": paths, "command": m.command, "edit": edit})
}

#[test]
fn every_call_carries_the_tables_answer() {
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for f in common::fixtures() {
        let out = bin().arg(&f).output().unwrap();
        let ev = events(&out.stdout);
        let mut call_kind: BTreeMap<String, Value> = BTreeMap::new();
        for e in ev.iter() {
            let t = e["type"].as_str().unwrap_or("");
            if t == "tool.call" || t == "tool.call.revised" {
                let got = json!({"kind": e["kind"], "paths": e["paths"], "command": e["command"], "edit": e["edit"]});
                let want = expected(e["name"].as_str(), Some(&e["input"]));
                assert_eq!(got, want, "{}: {e}", f.display());
                if t == "tool.call" {
                    assert_eq!(e["subagent"], json!(e["kind"] == "subagent"), "{e}");
                }
                *kinds
                    .entry(e["kind"].as_str().unwrap().to_owned())
                    .or_default() += 1;
                if let Some(id) = e["tool_use_id"].as_str() {
                    call_kind.insert(id.to_owned(), e["kind"].clone());
                }
            } else if t == "tool.result" {
                let want = e["tool_use_id"]
                    .as_str()
                    .and_then(|id| call_kind.get(id))
                    .cloned()
                    .unwrap_or(Value::Null);
                // A resumed session's result may pair with a call of an earlier scope: then only
                // a kind the table has.
                if !want.is_null() {
                    assert_eq!(e["kind"], want, "{}: {e}", f.display());
                }
                let s = &e["structured"];
                match (
                    &e["edit"],
                    s["filePath"].as_str(),
                    s["structuredPatch"].as_array(),
                ) {
                    (Value::Null, Some(_), Some(_)) => {
                        panic!("{}: patch not in edit: {e}", f.display())
                    }
                    (Value::Null, _, _) => {}
                    (edit, Some(p), Some(h)) => {
                        assert_eq!(
                            (edit["path"].as_str(), edit["patch"].as_array()),
                            (Some(p), Some(h))
                        )
                    }
                    (edit, ..) => panic!("{}: edit without a patch: {edit}", f.display()),
                }
            }
        }
    }
    // The captures exercise most kinds.
    for k in [
        "read",
        "edit",
        "search",
        "execute",
        "fetch",
        "subagent",
        "plan",
        "switch_mode",
        "other",
    ] {
        assert!(
            kinds.get(k).is_some_and(|n| *n > 0),
            "no {k} call in the fixtures: {kinds:?}"
        );
    }
    assert!(Kind::ALL.iter().all(|k| Kind::parse(k.as_str()).is_some()));
}

/// The README's `jq 'select(.type=="tool.call" and .kind=="edit") | .paths[]'`: on a run whose
/// edits all succeeded it lists exactly the files the CLI reports it changed (its
/// `tool_use_result.filePath`s, read from the capture itself).
#[test]
fn edit_calls_name_exactly_the_files_the_run_edited() {
    let f = root().join("fixtures/real/backflow__claude-output.ndjson");
    let out = bin().arg(&f).output().unwrap();
    let ev = events(&out.stdout);
    let listed: BTreeSet<String> = of_type(&ev, "tool.call")
        .iter()
        .filter(|e| e["kind"] == "edit")
        .flat_map(|e| e["paths"].as_array().unwrap().clone())
        .map(|p| p.as_str().unwrap().to_owned())
        .collect();
    let text = std::fs::read_to_string(&f).unwrap();
    let edited: BTreeSet<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["tool_use_result"]["structuredPatch"].is_array())
        .filter_map(|v| v["tool_use_result"]["filePath"].as_str().map(str::to_owned))
        .collect();
    assert!(edited.len() > 5, "{edited:?}");
    assert_eq!(listed, edited);
}

/// A Write of megabytes (its content a hollowed literal: the parser keeps only a stub of it) and
/// a long command still give their whole text in `edit` and `command`, in every parser mode.
#[test]
fn long_texts_are_whole_in_edit_and_command() {
    let content = "a \"quoted\" line, a \\ and caf\u{e9}\n".repeat(40_000);
    let command = format!("echo {}", "x".repeat(200_000));
    let call = json!({"type": "assistant", "session_id": "s", "parent_tool_use_id": null,
        "message": {"id": "m1", "role": "assistant", "model": "m", "content": [
            {"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": "/big.txt", "content": content}},
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": command}}]}});
    let input = format!("{call}\n");
    for mode in [&[][..], &["--reference-parser"][..]] {
        let mut args = vec!["--allow-no-result"];
        args.extend_from_slice(mode);
        let out = common::run(&args, input.as_bytes());
        let ev = events(&out.stdout);
        let calls = of_type(&ev, "tool.call");
        assert_eq!(
            calls[0]["edit"]["changes"][0]["new_text"],
            json!(content),
            "{mode:?}"
        );
        assert_eq!(calls[0]["edit"]["changes"][0]["old_text"], Value::Null);
        assert_eq!(calls[1]["command"], json!(command), "{mode:?}");
    }
}
