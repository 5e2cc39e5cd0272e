//! `sessions`: a HOME's transcripts listed as a table and as JSON.

use super::*;

/// A HOME with every version's fixture sessions under ~/.claude/projects.
fn fixture_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    for v in VERSIONS {
        let src = project(v);
        let dst = home.path().join(".claude/projects").join(format!(
            "{}-{v}",
            src.file_name().unwrap().to_str().unwrap()
        ));
        copy_dir(&src, &dst);
    }
    home
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let p = e.unwrap().path();
        let to = dst.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &to);
        } else {
            std::fs::copy(&p, &to).unwrap();
        }
    }
}

#[test]
fn sessions_lists_a_home_as_a_table_and_as_json() {
    let home = fixture_home();
    // The binary with HOME at the fixture home.
    let at_home = |args: &[&str]| {
        bin()
            .args(args)
            .env("HOME", home.path())
            .env_remove("CLAUDE_CONFIG_DIR")
            .output()
            .unwrap()
    };
    let run = |args: &[&str]| at_home(&[&["sessions"], args].concat());
    let out = run(&[]);
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    let mut rows = table.lines();
    let head = rows.next().unwrap();
    for col in [
        "SESSION", "PROJECT", "START", "DURATION", "MSGS", "TOOLS", "TOKENS", "COST", "AGENTS",
    ] {
        assert!(head.contains(col), "{head}");
    }
    let json = sessions_json(&home.path().join(".claude/projects"), &[]);
    let list = json["sessions"].as_array().unwrap();
    // Every main file is a session (2.0.76 leaves two empty ones that own warmup agents).
    let mains: usize = VERSIONS
        .iter()
        .map(|v| {
            std::fs::read_dir(project(v))
                .unwrap()
                .filter(|e| {
                    let n = e.as_ref().unwrap().file_name();
                    let n = n.to_str().unwrap();
                    n.ends_with(".jsonl") && !n.starts_with("agent-")
                })
                .count()
        })
        .sum();
    assert_eq!(list.len(), mains);
    assert_eq!(table.lines().count(), 1 + mains + 2, "{table}");
    for s in list {
        let id = s["id"].as_str().unwrap();
        assert!(table.contains(&id[..8]), "{id} not in the table");
        assert!(s["start"].as_str().unwrap_or("") <= s["end"].as_str().unwrap_or(""));
    }
    // The subagent run of each version counts one subagent and the tool calls of both agents.
    for v in VERSIONS {
        let first = list
            .iter()
            .filter(|s| s["cli_version"] == *v)
            .find(|s| s["tool_calls"] == 4)
            .unwrap_or_else(|| panic!("{v}: no session with the 4 tool calls of run 1: {json}"));
        assert!(first["subagents"].as_u64().unwrap() >= 1, "{v}");
    }
    // Priced and unpriced models: 2.1.332's claude-opus-5-5 is not in the table.
    let opus: Vec<&Value> = list
        .iter()
        .filter(|s| s["cli_version"] == "2.1.332")
        .collect();
    assert!(
        opus.iter().all(|s| s["cost_estimate_usd"].is_null()
            && s["unpriced_models"] == json!(["claude-opus-5-5"]))
    );
    assert!(
        list.iter()
            .any(|s| s["cost_estimate_usd"].as_f64().is_some_and(|c| c > 0.0))
    );
    assert_eq!(json["cost_source"], "embedded");
    // Filters.
    let none = run(&["--project", "no-such-project"]);
    assert!(none.status.success() && none.stdout.is_empty());
    assert!(String::from_utf8_lossy(&none.stderr).contains("matches the filters"));
    let j = |args: &[&str]| sessions_json(&home.path().join(".claude/projects"), args);
    assert_eq!(
        j(&["--project", "2.1.45"])["sessions"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        j(&["--since", "2999-01-01"])["sessions"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        j(&["--until", "2000-01-01"])["sessions"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        j(&["--since", "2000-01-01", "--until", "2999-12-31"])["sessions"]
            .as_array()
            .unwrap()
            .len(),
        mains
    );
    let bad = run(&["--since", "yesterday"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).starts_with("boo-normalize: time \"yesterday\""));
    // A session id, or its start, names the session for normalize.
    let id = list[0]["id"].as_str().unwrap();
    for arg in [id, &id[..8]] {
        let out = at_home(&[arg]);
        assert!(
            out.status.success(),
            "{arg}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ev = events(&out.stdout);
        assert_eq!(ev.last().unwrap()["input_format"], "transcript");
    }
    // profile takes the id too: the session's files, subagents included.
    let with_agents = list
        .iter()
        .find(|s| s["subagents"].as_u64() == Some(1) && s["cli_version"] == "2.1.45")
        .unwrap();
    let id = with_agents["id"].as_str().unwrap();
    let out = at_home(&["profile", &id[..8]]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let prof: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        prof["input"]["streams"], 2,
        "the main file and one sidechain file"
    );
    let missing = at_home(&["ffffffff"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("session ffffffff: no such file"));
}
