//! `--format pretty`, the live terminal view: a reviewed snapshot of every fixture's plain view,
//! the summary agreeing with `run.end` to the token, no row wider than the width, the color
//! rules over an environment matrix, terminal escape payloads in every field never reaching the
//! output raw, a real terminal (tmux) at several widths with and without color, `| head -1`,
//! and the other sinks written in the same pass (normalize, replay, spawn).

use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use boo_normalize::view::text::width;
use common::{bin, fixtures, root};
use serde_json::json;

/// The binary with a neutral environment: no color variables, a UTF-8 locale, no COLUMNS.
fn pretty() -> Command {
    let mut c = bin();
    for k in [
        "NO_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "COLUMNS",
        "LC_ALL",
        "LC_CTYPE",
        "TERM",
    ] {
        c.env_remove(k);
    }
    c.env("LANG", "C.UTF-8");
    c
}

fn view(path: &Path, args: &[&str]) -> Output {
    let out = pretty()
        .args(["--format", "pretty"])
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{}: {:?}",
        path.display(),
        out
    );
    out
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap()
        .to_string_lossy()
        .replace(['/', '.'], "_")
}

/// Every fixture, at width 80, plain: the snapshot is the review of the view.
#[test]
fn every_fixture_plain_view() {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path(root().join("tests/snapshots/pretty"));
    settings.bind(|| {
        for f in fixtures() {
            let out = view(&f, &["--width", "80"]);
            let text = String::from_utf8(out.stdout).unwrap();
            assert!(!text.contains('\x1b'), "{}: color into a pipe", f.display());
            insta::assert_snapshot!(rel(&f), text);
        }
    });
}

/// `tokens in … · out … · cache read … · cache write …` of the summary, as numbers.
fn summary_tokens(text: &str) -> Vec<u64> {
    let start = text.rfind("tokens    in ").expect("a summary");
    let block: String = text[start..]
        .lines()
        .take_while(|l| !l.starts_with("   cost"))
        .collect::<Vec<_>>()
        .join(" ");
    ["in ", "out ", "cache read ", "cache write "]
        .iter()
        .map(|k| {
            let at = block
                .find(k)
                .unwrap_or_else(|| panic!("{k:?} in {block:?} of {:?}", &text[start..]))
                + k.len();
            block[at..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == ',')
                .filter(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .unwrap()
        })
        .collect()
}

#[test]
fn summary_agrees_with_run_end_and_rows_fit_the_width() {
    for f in fixtures() {
        let env = bin().arg(&f).output().unwrap();
        let events = common::events(&env.stdout);
        let end = events.last().unwrap();
        assert_eq!(end["type"], "run.end");
        let u = &end["usage"];
        let want: Vec<u64> = [
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ]
        .iter()
        .map(|k| u[k].as_u64().unwrap())
        .collect();
        for w in [40, 120] {
            let out = view(&f, &["--width", &w.to_string(), "--thinking", "full"]);
            let text = String::from_utf8(out.stdout).unwrap();
            assert_eq!(summary_tokens(&text), want, "{} at width {w}", f.display());
            if let Some(c) = end["cost_usd"].as_f64() {
                assert!(
                    text.contains(&format!("cost      ${c:.4}")),
                    "{}: cost {c}",
                    f.display()
                );
            } else {
                assert!(text.contains("cost      n/a"), "{}", f.display());
            }
            for line in text.lines() {
                assert!(
                    width(line) <= w,
                    "{} at width {w}: {} cells: {line:?}",
                    f.display(),
                    width(line)
                );
            }
        }
    }
}

/// The view of `f` with `args`, in the neutral environment plus `env`.
fn with_env(f: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut c = pretty();
    c.args(["--format", "pretty"]).args(args).arg(f);
    for (k, v) in env {
        c.env(k, v);
    }
    String::from_utf8(c.output().unwrap().stdout).unwrap()
}

#[test]
fn color_rules_environment_matrix() {
    let f = root().join("fixtures/captured/2.1.330/tools.ndjson");
    // (flag, environment, colored?) with stdout a pipe (auto: no color unless forced).
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], bool);
    let cases: &[Case<'_>] = &[
        ("auto", &[], false),
        ("auto", &[("CLICOLOR_FORCE", "1")], true),
        ("auto", &[("CLICOLOR_FORCE", "0")], false),
        ("auto", &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")], true),
        ("auto", &[("CLICOLOR_FORCE", "1"), ("TERM", "dumb")], true),
        ("auto", &[("CLICOLOR", "1")], false),
        ("always", &[], true),
        ("always", &[("NO_COLOR", "1")], true),
        ("always", &[("TERM", "dumb")], true),
        ("never", &[("CLICOLOR_FORCE", "1")], false),
        ("never", &[], false),
    ];
    for (flag, env, want) in cases {
        let out = with_env(&f, &["--color", flag], env);
        assert_eq!(out.contains('\x1b'), *want, "--color {flag} {env:?}");
    }
    // The locale picks the glyphs; --ascii forces ASCII.
    let glyphs = |args: &[&str], env: &[(&str, &str)]| with_env(&f, args, env).is_ascii();
    assert!(!glyphs(&[], &[]));
    assert!(glyphs(&["--ascii"], &[]));
    assert!(glyphs(&[], &[("LC_ALL", "C")]));
    assert!(glyphs(&[], &[("LANG", "POSIX")]));
    // --width, else COLUMNS.
    let widest = |args: &[&str], env: &[(&str, &str)]| {
        with_env(&f, args, env).lines().map(width).max().unwrap()
    };
    assert!(widest(&[], &[("COLUMNS", "30")]) <= 30);
    assert!(widest(&["--width", "25"], &[("COLUMNS", "200")]) <= 25);
}

/// Escape sequences and control characters in every field of a stream.
const EVIL: &str = "\x1b[2J\x1b[H\x1b]52;c;SGVsbG8=\x07\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\\u{9b}31m\u{202e}\r\x08\x7f";

fn evil_stream() -> Vec<u8> {
    let e = |s: &str| format!("{s}{EVIL}");
    let usage = json!({"input_tokens": 3, "output_tokens": 4, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0});
    let lines = [
        json!({"type":"system","subtype":"init","session_id":"s","model":e("model"),"cwd":e("/cwd"),"tools":["Bash"],"claude_code_version":"2.0.76","permissionMode":"default"}),
        json!({"type":"user","message":{"role":"user","content":[{"type":"text","text":e("prompt")}]},"session_id":"s","parent_tool_use_id":null,"isReplay":true}),
        json!({"type":"assistant","message":{"id":"m1","model":e("model"),"role":"assistant","content":[
            {"type":"thinking","thinking":e("thinking")},
            {"type":"text","text":e("text")},
            {"type":"tool_use","id":"t1","name":"Bash","input":{"command":e("command")}},
            {"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":e("file"),"old_string":e("old"),"new_string":e("new")}},
            {"type":"tool_use","id":"t3","name":e("mcp__srv__tool"),"input":{e("key"):e("value")}},
            {"type":"tool_use","id":"t4","name":"Task","input":{"subagent_type":e("agent"),"description":e("desc"),"prompt":"p"}},
            {"type":"tool_use","id":"t5","name":e("Frob"),"input":{e("key"):1}}
        ],"usage":usage},"session_id":"s","parent_tool_use_id":null}),
        json!({"type":"assistant","message":{"id":"m2","model":"x","role":"assistant","content":[{"type":"text","text":e("subagent text")}],"usage":usage},"session_id":"s","parent_tool_use_id":"t4"}),
        json!({"type":"user","message":{"role":"user","content":[
            {"type":"tool_result","tool_use_id":"t1","content":e("out\nline 2"),"is_error":true},
            {"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":e("edited")}]},
            {"type":"tool_result","tool_use_id":"t3","content":e("mcp out")},
            {"type":"tool_result","tool_use_id":"t4","content":e("agent out")}
        ]},"session_id":"s","parent_tool_use_id":null}),
        json!({"type":"system","subtype":"api_retry","attempt":1,"max_retries":3,"retry_delay_ms":500,"error_status":529,"error":e("overloaded"),"session_id":"s"}),
        json!({"type":"system","subtype":"permission_denied","tool_name":e("Write"),"message":e("denied"),"session_id":"s"}),
        json!({"type":"system","subtype":"compact_boundary","compact_metadata":{"trigger":e("auto"),"pre_tokens":5},"session_id":"s"}),
        json!({"type":e("weird"),"x":1}),
        json!({"type":"result","subtype":"error_during_execution","is_error":true,"result":e("result"),"session_id":"s","total_cost_usd":0.5,"usage":usage,"num_turns":1,"duration_ms":10,"duration_api_ms":5}),
    ];
    let mut out = Vec::new();
    for l in lines {
        out.extend_from_slice(l.to_string().as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(format!("not json {EVIL}\n").as_bytes());
    out
}

/// No raw control character: only SGR sequences (`ESC [ digits ; m`) when colored.
fn assert_inert(out: &[u8], colored: bool) {
    let text = String::from_utf8(out.to_vec()).unwrap();
    for (i, c) in text.char_indices() {
        if c == '\x1b' {
            assert!(
                colored,
                "ESC without color at {i}: {:?}",
                &text[i..(i + 20).min(text.len())]
            );
            let rest = &text[i + 1..];
            let end = rest.find('m').expect("an SGR sequence ends in m");
            let body = &rest[..end];
            assert!(
                body.starts_with('[') && body[1..].chars().all(|c| c.is_ascii_digit() || c == ';'),
                "not SGR: {:?}",
                &rest[..end + 1]
            );
            continue;
        }
        assert!(
            c == '\n'
                || !(c.is_control()
                    || ('\u{202a}'..='\u{202e}').contains(&c)
                    || ('\u{2066}'..='\u{2069}').contains(&c)),
            "raw {c:?} at {i}: {:?}",
            &text[i.saturating_sub(30)..i]
        );
    }
}

#[test]
fn escape_payloads_in_every_field_stay_text() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("evil.ndjson");
    std::fs::write(&f, evil_stream()).unwrap();
    for color in ["never", "always"] {
        let out = pretty()
            .args([
                "--format",
                "pretty",
                "--thinking",
                "full",
                "--width",
                "1000",
                "--color",
                color,
            ])
            .arg(&f)
            .output()
            .unwrap();
        assert_inert(&out.stdout, color == "always");
        let text = String::from_utf8_lossy(&out.stdout);
        // Each field is shown, its escapes visible.
        for field in [
            "model",
            "/cwd",
            "prompt",
            "thinking",
            "text",
            "command",
            "file",
            "old",
            "new",
            "mcp__srv__tool",
            "key",
            "value",
            "agent",
            "desc",
            "subagent text",
            "out",
            "edited",
            "mcp out",
            "agent out",
            "overloaded",
            "Write",
            "denied",
            "auto",
            "weird",
            "result",
            "not json ",
        ] {
            let shown = format!("{field}^[[2J^[[H^[]52;c;SGVsbG8=^G");
            assert!(
                strip_sgr(&text).contains(&shown),
                "{field} not shown as text ({color}):\n{text}"
            );
        }
        assert!(
            strip_sgr(&text).contains("<U+009B>31m<U+202E>^M^H^?"),
            "{text}"
        );
    }
}

fn strip_sgr(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\x1b' {
            for d in it.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn head_one_is_quiet_and_other_sinks_are_written_in_the_same_pass() {
    let f = root().join("fixtures/real/claude-clean__stream-json-simple.ndjson");
    let exe = env!("CARGO_BIN_EXE_boo-normalize");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "'{exe}' --format pretty '{}' | head -1; exit ${{PIPESTATUS[0]}}",
            f.display()
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 1);
    // --envelope, --audit and --record beside the view: the same bytes as on their own.
    let dir = tempfile::tempdir().unwrap();
    let env = dir.path().join("e.ndjson");
    let rec = dir.path().join("r.capture.jsonl");
    let out = pretty()
        .args(["--format", "pretty", "--envelope"])
        .arg(&env)
        .arg("--record")
        .arg(&rec)
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let plain = bin().arg(&f).output().unwrap();
    assert_eq!(std::fs::read(&env).unwrap(), plain.stdout);
    // The recorded capture replays to the same view, timed or not.
    let again = pretty()
        .args([
            "replay",
            "--speed",
            "max",
            "--format",
            "pretty",
            "--envelope",
        ])
        .arg(dir.path().join("e2.ndjson"))
        .arg(&rec)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    assert_eq!(again.stdout, out.stdout);
    assert_eq!(
        std::fs::read(dir.path().join("e2.ndjson")).unwrap(),
        plain.stdout
    );
}

#[test]
fn deltas_are_shown_once() {
    // The same text streamed as deltas and then whole: shown once, as it streamed.
    for f in [
        "2.1.330/tools.partial.ndjson",
        "2.0.76/subagent.partial.ndjson",
    ] {
        let f = root().join("fixtures/captured").join(f);
        let text = String::from_utf8(view(&f, &["--width", "120"]).stdout).unwrap();
        let env = common::events(&bin().arg(&f).output().unwrap().stdout);
        for t in common::of_type(&env, "text") {
            let body = t["text"].as_str().unwrap();
            let first = body
                .split_whitespace()
                .take(4)
                .collect::<Vec<_>>()
                .join(" ");
            assert_eq!(text.matches(&first).count(), 1, "{first:?} in\n{text}");
        }
    }
}

/// A tmux server of its own, killed on drop.
struct Tmux(String);

impl Tmux {
    fn start(w: u16, h: u16, cmd: &str) -> Option<Tmux> {
        let name = format!("boo-pretty-{}-{w}", std::process::id());
        let ok = Command::new("tmux")
            .args(["-L", &name, "-f", "/dev/null", "new-session", "-d", "-x"])
            .arg(w.to_string())
            .arg("-y")
            .arg(h.to_string())
            .arg(cmd)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .ok()?
            .success();
        ok.then_some(Tmux(name))
    }

    fn capture(&self, escapes: bool) -> String {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.0, "capture-pane", "-p", "-J", "-S", "-"]);
        if escapes {
            c.arg("-e");
        }
        String::from_utf8_lossy(&c.output().unwrap().stdout).into_owned()
    }

    fn wait_for(&self, what: &str) -> String {
        let t0 = Instant::now();
        loop {
            let s = self.capture(false);
            if s.contains(what) || t0.elapsed() > Duration::from_secs(30) {
                return s;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.0, "kill-server"])
            .status();
    }
}

#[test]
fn in_a_real_terminal_at_several_widths_with_and_without_color() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("SKIP: tmux is not installed; the terminal test did not run");
        return;
    }
    let exe = env!("CARGO_BIN_EXE_boo-normalize");
    let f = root().join("fixtures/real/claude-clean__stream-json-simple.ndjson");
    for (w, env) in [
        (60u16, ""),
        (100, ""),
        (80, "NO_COLOR=1"),
        (40, "TERM=dumb"),
    ] {
        let cmd = format!(
            "env -u COLUMNS -u CLICOLOR_FORCE -u NO_COLOR LANG=C.UTF-8 TERM=xterm-256color {env} '{exe}' replay --speed 50 --format pretty '{}'; echo '[done]'; sleep 60",
            f.display()
        );
        let Some(t) = Tmux::start(w, 50, &cmd) else {
            eprintln!("SKIP: tmux could not start a session");
            return;
        };
        let text = t.wait_for("[done]");
        assert!(text.contains("run end"), "{w} {env}: {text}");
        assert!(text.contains("│ Explore ⏺"), "{w} {env}: {text}");
        for line in text.lines() {
            assert!(width(line) <= w as usize, "{w} {env}: {line:?}");
        }
        let colored = t.capture(true);
        let has_sgr = colored.contains("\x1b[");
        assert_eq!(has_sgr, env.is_empty(), "{w} {env}: color on a terminal");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn spawn_shows_the_prompt_and_the_run() {
    use crate::spawn::common::fake::*;
    use crate::spawn::common::*;
    let d = Dirs::new();
    let mark = marker("pretty");
    let bin = fake(&d, "echo \"$INIT\"; echo \"$BASH_CALL\"; echo \"$RESULT\"");
    let env = d.path().join("run.ndjson");
    let mut c = spawn_cmd(
        &d,
        &bin,
        &mark,
        &[
            "--format",
            "pretty",
            "--width",
            "80",
            "--envelope",
            env.to_str().unwrap(),
            "--prompt",
            "list the \x1b[31mfiles",
        ],
    );
    c.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
    let out = succeeded_within(c, Duration::from_secs(30));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("› list the ^[[31mfiles\n"), "{text}");
    assert!(text.contains("⏺ Bash"), "{text}");
    assert!(text.contains("── run end"), "{text}");
    assert!(!common::events(&std::fs::read(&env).unwrap()).is_empty());
}

#[test]
fn resuming_shows_only_later_events_with_whole_totals() {
    // --last-event-id: the events up to the resume point are not shown, but the summary still
    // counts every call and uses run.end's tokens.
    let f = root().join("fixtures/real/claude-clean__stream-json-simple.ndjson");
    let whole = String::from_utf8(view(&f, &["--width", "100"]).stdout).unwrap();
    let resumed =
        String::from_utf8(view(&f, &["--width", "100", "--last-event-id", "30"]).stdout).unwrap();
    assert!(!resumed.contains("── session"), "{resumed}");
    assert!(resumed.len() < whole.len());
    let tail = |s: &str| s[s.rfind("── run end").unwrap()..].to_owned();
    assert_eq!(tail(&resumed), tail(&whole));
    // A result whose call came before the resume point is still paired with it by name.
    assert!(
        resumed.contains("⎿ Task Explore Explore codebase structure"),
        "{resumed}"
    );
}
