//! Tests of the spawn guards: each rule on calls of Claude and other agents, the early catch of
//! a disallowed tool as its block starts, and the output cap.

use super::*;

/// One more tool call, and the guards' verdict on it.
fn next_call(
    g: &mut Guards,
    ev: &mut Events,
    name: &str,
    input: &str,
    parent: Option<&str>,
) -> Verdict {
    let n = ev.len();
    call(ev, name, input, parent);
    g.inspect(ev, n)
}

fn call(ev: &mut Events, name: &str, input: &str, parent: Option<&str>) {
    let ctx = Ctx {
        session_id: Some("s"),
        parent,
        line: Some(3),
        uuid: None,
        ..Default::default()
    };
    let o = ev.begin(kind::TOOL_CALL, &ctx);
    o.key("tool_use_id");
    o.str("toolu_1");
    o.key("name");
    o.str(name);
    o.key("input");
    o.raw(input.as_bytes());
    ev.end();
}

fn violations(ev: &Events) -> Vec<serde_json::Value> {
    ev.metas
        .iter()
        .filter(|m| m.kind == kind::POLICY_VIOLATION)
        .map(|m| serde_json::from_slice(ev.bytes(m)).unwrap())
        .collect()
}

#[test]
fn allow_list_with_prefixes() {
    let mut g = Guards::new(GuardConfig {
        allow_tools: Some(vec!["Read".into(), "mcp__gh__*".into()]),
        ..Default::default()
    });
    let mut ev = Events::default();
    call(&mut ev, "Read", "{}", None);
    call(&mut ev, "mcp__gh__issue", "{}", None);
    call(&mut ev, "Bash", r#"{"command":"ls"}"#, None);
    assert_eq!(g.inspect(&mut ev, 0), Verdict::Go, "not enforced");
    let v = violations(&ev);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["rule"], "allow_tools");
    assert_eq!(v[0]["name"], "Bash");
    assert_eq!(v[0]["line"], 3);
    assert_eq!(v[0]["session_id"], "s");
    assert_eq!(v[0]["enforced"], false);
}

#[test]
fn another_agents_tools_are_allowed_by_kind_or_by_claudes_name() {
    let names = |agent: Agent, allow: &[&str], calls: &[&str]| {
        let mut g = Guards::new(GuardConfig {
            allow_tools: Some(allow.iter().map(|s| s.to_string()).collect()),
            agent,
            ..Default::default()
        });
        let mut ev = Events::default();
        for c in calls {
            call(&mut ev, c, "{}", None);
        }
        g.inspect(&mut ev, 0);
        violations(&ev)
            .iter()
            .map(|v| v["name"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    // Codex: Bash stands for its shell call, `edit` (a kind) for its file changes.
    assert_eq!(
        names(
            Agent::Codex,
            &["Bash", "edit"],
            &["command_execution", "file_change", "web_search"]
        ),
        ["web_search"]
    );
    // Gemini: Read stands for read_file, not for the shell.
    assert_eq!(
        names(
            Agent::Gemini,
            &["Read"],
            &["read_file", "run_shell_command"]
        ),
        ["run_shell_command"]
    );
    // Its own names match as they are; a Claude name of kind `other` stands for nothing.
    assert_eq!(
        names(Agent::Opencode, &["bash", "Skill"], &["bash", "mystery"]),
        ["mystery"]
    );
    // Claude's list is matched by name only, as before.
    assert_eq!(names(Agent::Claude, &["execute"], &["Bash"]), ["Bash"]);
}

fn block_start(ev: &mut Events, block_type: &str, name: &str) {
    let ctx = Ctx {
        session_id: Some("s"),
        line: Some(2),
        ..Default::default()
    };
    let o = ev.begin_ephemeral(kind::BLOCK_START, &ctx);
    o.key("index");
    o.u64(0);
    o.key("block_type");
    o.str(block_type);
    o.key("tool_use_id");
    o.str("toolu_1");
    o.key("name");
    o.str(name);
    ev.end();
}

#[test]
fn a_disallowed_tool_is_caught_as_its_block_starts() {
    let mut g = Guards::new(GuardConfig {
        allow_tools: Some(vec!["Read".into()]),
        max_tool_calls: Some(0),
        enforce: true,
        ..Default::default()
    });
    let mut ev = Events::default();
    block_start(&mut ev, "text", "");
    block_start(&mut ev, "tool_use", "Read");
    assert_eq!(g.inspect(&mut ev, 0), Verdict::Go);
    let n = ev.len();
    block_start(&mut ev, "tool_use", "Bash");
    assert_eq!(
        g.inspect(&mut ev, n),
        Verdict::Kill,
        "SIGKILL before it can run"
    );
    let v = violations(&ev);
    assert_eq!(v.len(), 1);
    assert_eq!(
        (v[0]["rule"].as_str(), v[0]["name"].as_str()),
        (Some("allow_tools"), Some("Bash"))
    );
    assert_eq!(v[0]["tool_use_id"], "toolu_1");
    assert_eq!(v[0]["line"], 2);
    // Its tool.call is not reported again under allow_tools (other rules still count it).
    assert_eq!(
        next_call(&mut g, &mut ev, "Bash", "{}", None),
        Verdict::Stop
    );
    let v = violations(&ev);
    assert_eq!(v.len(), 2);
    assert_eq!(v[1]["rule"], "max_tool_calls");
}

#[test]
fn counts_and_repeats() {
    let mut g = Guards::new(GuardConfig {
        max_tool_calls: Some(5),
        max_repeat_calls: Some(3),
        enforce: true,
        ..Default::default()
    });
    let mut ev = Events::default();
    call(&mut ev, "Bash", r#"{"command":"ls"}"#, None);
    call(&mut ev, "Bash", r#"{"command":"ls"}"#, Some("sub"));
    call(&mut ev, "Bash", r#"{"command":"ls"}"#, None);
    assert_eq!(
        g.inspect(&mut ev, 0),
        Verdict::Go,
        "two in a row per agent is fine"
    );
    assert_eq!(
        next_call(&mut g, &mut ev, "Bash", r#"{"command":"ls"}"#, None),
        Verdict::Stop,
        "the third identical call in a row"
    );
    let v = violations(&ev);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["rule"], "max_repeat_calls");
    assert_eq!(v[0]["count"], 3);
    assert_eq!(v[0]["limit"], 3);
    assert_eq!(
        next_call(&mut g, &mut ev, "Bash", r#"{"command":"ls"}"#, None),
        Verdict::Stop,
        "every further repeat is reported"
    );
    let v = violations(&ev);
    assert_eq!(v[1]["rule"], "max_repeat_calls");
    assert_eq!(v[1]["count"], 4);
    assert_eq!(
        next_call(&mut g, &mut ev, "Read", "{}", None),
        Verdict::Stop
    );
    let v = violations(&ev);
    assert_eq!(v[2]["rule"], "max_tool_calls");
    assert_eq!(v[2]["limit"], 5);
    assert_eq!(g.violations(), 3);
}

#[test]
fn output_cap_fires_once() {
    let mut g = Guards::new(GuardConfig {
        max_output_bytes: Some(100),
        ..Default::default()
    });
    let mut ev = Events::default();
    assert!(!g.count_output(60));
    assert!(g.count_output(50));
    assert!(!g.count_output(50));
    assert!(!g.output_violation(&mut ev, &Ctx::default()));
    let v = violations(&ev);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["count"], 160);
}
