//! A fake `claude` (a shell script) and the `spawn` command line to run it.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use super::*;

pub const INIT: &str = r#"{"type":"system","subtype":"init","session_id":"s1","model":"m","cwd":"/","tools":["Bash","Read"]}"#;
pub const RESULT_OK: &str =
    r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s1"}"#;
pub const BASH_CALL: &str = r#"{"type":"assistant","session_id":"s1","message":{"id":"msg_1","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]}}"#;

/// A fake claude: `body` is shell code; `$HERE` is its directory.
pub fn fake(d: &Dirs, body: &str) -> PathBuf {
    let p = d.path().join("claude");
    let script = format!(
        "#!/bin/sh\nHERE=$(dirname \"$0\")\nINIT='{INIT}'\nRESULT='{RESULT_OK}'\nBASH_CALL='{BASH_CALL}'\n{body}\n"
    );
    fs::write(&p, script).unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// `boo-normalize spawn --claude-bin FAKE --env BOO_TEST_MARK ARGS…` in the work dir.
pub fn spawn_cmd(d: &Dirs, bin: &PathBuf, mark: &str, args: &[&str]) -> Command {
    let mut c = command(&d.home, mark);
    c.current_dir(&d.work)
        .arg("spawn")
        .arg("--claude-bin")
        .arg(bin)
        .arg("--env")
        .arg("BOO_TEST_MARK");
    // spawn refuses to start without a prompt (or --resume/--continue): give one unless the test
    // chose its own.
    let before_dashes = args.iter().take_while(|a| **a != "--");
    if !before_dashes
        .clone()
        .any(|a| *a == "--prompt" || *a == "--prompt-file")
    {
        c.args(["--prompt", "run the test task"]);
    }
    c.args(args);
    c
}

pub fn run(
    d: &Dirs,
    body: &str,
    args: &[&str],
) -> (std::process::Output, Vec<serde_json::Value>, Mark) {
    let mark = marker("hyg");
    let bin = fake(d, body);
    let out = output_within(spawn_cmd(d, &bin, &mark, args), Duration::from_secs(30));
    let ev = events(&out.stdout);
    check_envelope(&ev);
    (out, ev, mark)
}
