#!/usr/bin/env python3
"""Capture real `claude -p --output-format stream-json --verbose` output offline.

Runs scenario scripts (tests/support/scenarios/*.json) against an installed
CLI version (tests/support/install-claude.sh) and the loopback stand-in
tests/support/fake_anthropic.py, and writes

    fixtures/captured/<VERSION>/<variant>.ndjson        the CLI's stdout, verbatim
    fixtures/captured/<VERSION>/<variant>.stderr.txt    the CLI's stderr
    fixtures/captured/PROVENANCE.tsv                    one row per .ndjson (upserted)

where <variant> is the scenario name, plus ".partial" when run with
--include-partial-messages.  Stdlib only.

    python3 tests/support/capture.py --cli-version 2.1.45                 # all variants
    python3 tests/support/capture.py --cli-version 2.0.76 --scenario tools --scenario tools.partial
    python3 tests/support/capture.py --cli-version 2.1.45 --scenario tools --run2   # + tools.run2.ndjson
    python3 tests/support/capture.py --cli-version 2.1.45 --check-determinism tools # run twice, diff (writes nothing)
    python3 tests/support/capture.py --list

HOME and the working directory are fresh temp dirs under a fixed root
(default /tmp/boo-capture, recreated for every run) so that paths in the
output are the same from run to run; captures therefore run one at a time.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SCEN_DIR = os.path.join(HERE, "scenarios")
FAKE = os.path.join(HERE, "fake_anthropic.py")
INSTALL = os.path.join(HERE, "install-claude.sh")
DEFAULT_OUT = os.path.join(ROOT, "fixtures", "captured")
NOTE = "generated offline against tests/support/fake_anthropic.py"

# Flags common to every run.  bypassPermissions is refused for root unless
# IS_SANDBOX=1 is set (all versions tried); it is needed so tools run in -p.
BASE_ARGS = ["--output-format", "stream-json", "--verbose",
             "--permission-mode", "bypassPermissions"]

# Environment for the CLI: nothing from the caller's environment except PATH
# (node must be found for JS releases).
BASE_ENV = {
    "ANTHROPIC_API_KEY": "sk-ant-dummy-key-for-offline-tests-000000",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "IS_SANDBOX": "1",
    "LANG": "C.UTF-8",
    "TZ": "UTC",
}

# A custom slash command (.claude/commands/greet.md) and the fixed session id that
# slash_compact resumes.
SLASH_FILES = {".claude/commands/greet.md":
               "---\ndescription: Greet someone and read the notes\n---\n"
               "Greet $ARGUMENTS, then tell me what notes.txt says.\n"}
SLASH_SESSION = "0b0e0000-0000-4000-8000-000000000001"
# The first run's session id in the resume/continue scenarios.
RESUME_SESSION = "0b0e0000-0000-4000-8000-000000000002"


def resumed_run(args, partial_variant=True):
    """A scenario whose captured run finds (ARGS: --resume, --continue, …) an earlier run made
    under RESUME_SESSION in the same HOME and cwd."""
    sc = {
        "script": "resume.json",
        "prompt": "What did the command print before, and what do the notes say?",
        "args": ["--max-turns", "5"] + args,
        "env": {},
        "before": [{"prompt": "Run `echo hello`.",
                    "args": ["--max-turns", "5", "--session-id", RESUME_SESSION]}],
        "min_version": "2.1.300",
    }
    if not partial_variant:
        sc["partial_variant"] = False
    return sc

# The custom agent the agents scenarios define with --agents.
REVIEWER_AGENTS = ('{"reviewer":{"description":"Reviews code and commands",'
                   '"prompt":"You are a careful reviewer.","tools":["Bash","Read","Agent","Task"]}}')


def user_line(content):
    """A user message line for `--input-format stream-json` (CONTENT: a string or blocks)."""
    return {"type": "user", "session_id": "", "parent_tool_use_id": None,
            "message": {"role": "user", "content": content}}


def control(request_id, request):
    """A control request line for `--input-format stream-json`."""
    return {"type": "control_request", "request_id": request_id, "request": request}


# name -> scenario.  "prompt" is the -p prompt (None: `-p` alone, the prompt comes on stdin);
# "args" extra claude flags; "env" extra environment; "stdin" (for --input-format stream-json)
# a list of steps {"after_results": N, "sleep": S, "line": OBJ}: OBJ is written to the CLI's
# stdin as one JSON line once N `result` lines have appeared on its stdout and S seconds more
# have passed; stdin is closed after the last step and "close_after_results" results.
# "answer_can_use_tool" (with stdin and --permission-prompt-tool stdio) answers each
# `control_request` `can_use_tool` the CLI writes: deny when the tool input (as JSON) contains
# "deny_if" (with "message"), else allow with the input unchanged.
# "permission_mode" replaces bypassPermissions; "files" maps names to write under the temp root
# (a string, or {"copy": "<file in tests/support>"}); in "args" and in those files `@TMP@` stands
# for the temp root and `@CWD@` for the working directory.  Every scenario is captured twice: "<name>" and
# "<name>.partial" (with --include-partial-messages), unless
# "partial_variant" is False; "min_version" skips older CLIs.
# Optional (see prepare_work and run_before): "work_files" {path: text} written into the working
# directory; "support_files" [name] copied from tests/support into it; "before" [{"prompt",
# "args"}] earlier runs in the same HOME and cwd against the same fake API (for --resume and
# --continue), whose output is not kept.
SCENARIOS = {
    "tools": {
        "script": "tools.json",
        "prompt": "Run `echo hello`, then read notes.txt and tell me what it says.",
        "args": ["--max-turns", "5"],
        "env": {},
    },
    "subagent": {
        "script": "subagent.json",
        "prompt": "Use a subagent to run the marker command and tell me what it printed.",
        "args": ["--max-turns", "5"],
        "env": {},
    },
    "subagent_bg": {
        "script": "subagent_bg.json",
        "prompt": "Use a background subagent to run the marker command and tell me what it printed.",
        "args": ["--max-turns", "5"],
        "env": {},
        # 1.0.x has no run_in_background: it would just repeat `subagent`.
        "min_version": "2.0.0",
    },
    "api_error": {
        "script": "api_error.json",
        "prompt": "Say hi.",
        "args": ["--max-turns", "3"],
        "env": {"CLAUDE_CODE_MAX_RETRIES": "1"},
    },
    "api_timeout": {
        "script": "api_timeout.json",
        "prompt": "Say hi.",
        "args": ["--max-turns", "3"],
        "env": {"API_TIMEOUT_MS": "3000", "CLAUDE_CODE_MAX_RETRIES": "0"},
        "partial_variant": False,
    },
    "auth_error": {
        "script": "auth_error.json",
        "prompt": "Say hi.",
        "args": ["--max-turns", "3"],
        "env": {"CLAUDE_CODE_MAX_RETRIES": "1"},
        "partial_variant": False,
    },
    "emoji_cut": {
        "script": "emoji_cut.json",
        "prompt": "Run the emoji command and tell me what it printed.",
        "args": ["--max-turns", "3"],
        "env": {},
    },
    "bare": {
        "script": "tools.json",
        "prompt": "Run `echo hello`, then read notes.txt and tell me what it says.",
        "args": ["--max-turns", "5", "--bare"],
        "env": {},
        "partial_variant": False,
        # --bare (no hooks, plugins, CLAUDE.md) writes system/ui_invalidate.
        "min_version": "2.1.300",
    },
    "named": {
        "script": "tools.json",
        "prompt": "Run `echo hello`, then read notes.txt and tell me what it says.",
        "args": ["--max-turns", "5", "--name", "fixture run"],
        "env": {},
        "partial_variant": False,
        # --name writes system/session_title_changed.
        "min_version": "2.1.300",
    },
    "max_tokens": {
        "script": "max_tokens.json",
        "prompt": "Run `echo hello` and explain the result at length.",
        "args": ["--max-turns", "5"],
        "env": {},
        # Per-message stop_reason (issue 22): captured for the newest CLI.
        "min_version": "2.1.300",
    },
    "refusal": {
        "script": "refusal.json",
        "prompt": "Say hi.",
        "args": ["--max-turns", "3"],
        "env": {},
        "min_version": "2.1.300",
    },
    "stream_input": {
        "script": "stream_input.json",
        "prompt": None,
        "args": ["--input-format", "stream-json", "--replay-user-messages", "--max-turns", "5"],
        "env": {},
        # An SDK-style session over stdin: an initialize control request, a string message,
        # a content-array message after the first result (runs Bash), a third message whose
        # reply is slow and an interrupt control request while it waits.
        "stdin": [
            {"after_results": 0, "line": control("req_init_1", {"subtype": "initialize"})},
            {"after_results": 0, "line": user_line("first question")},
            {"after_results": 1, "line": user_line([{"type": "text", "text": "second question"}])},
            {"after_results": 2, "line": user_line("third question")},
            {"after_results": 2, "sleep": 1.5,
             "line": control("req_int_1", {"subtype": "interrupt"})},
        ],
        "close_after_results": 3,
        "min_version": "2.1.300",
    },
    "stream_control": {
        "script": "stream_control.json",
        "prompt": None,
        "args": ["--input-format", "stream-json", "--max-turns", "5"],
        "env": {},
        # The SDKs' other control requests: each gets a control_response (an error one for the
        # unsupported subtype); set_permission_mode also makes a system/status line.
        # (get_context_usage is left out: its 20 KB answer races with the first request.)
        "stdin": [{"after_results": 0, "line": control("req_%d" % i, r)}
                  for i, r in enumerate([
                      {"subtype": "set_permission_mode", "mode": "plan"},
                      {"subtype": "set_model", "model": "claude-sonnet-4-5"},
                      {"subtype": "mcp_status"},
                      {"subtype": "set_max_thinking_tokens", "max_thinking_tokens": 1000},
                      {"subtype": "no_such_request"},
                  ])]
        + [{"after_results": 0, "sleep": 1.0,
            "line": user_line("first question")}],
        "close_after_results": 1,
        "partial_variant": False,
        "min_version": "2.1.300",
    },
    "stream_interrupt": {
        "script": "stream_interrupt.json",
        "prompt": None,
        "args": ["--input-format", "stream-json", "--max-turns", "5"],
        "env": {},
        # The interrupt arrives while the reply's tool input is still streaming.
        "stdin": [
            {"after_results": 0, "line": user_line("Run the long command.")},
            {"after_results": 0, "sleep": 2.5,
             "line": control("req_int_1", {"subtype": "interrupt"})},
        ],
        "close_after_results": 1,
        "min_version": "2.1.300",
    },
    "permission_stdio": {
        "script": "permission_prompt.json",
        "prompt": None,
        "permission_mode": "default",
        "args": ["--input-format", "stream-json", "--max-turns", "5",
                 "--permission-prompt-tool", "stdio"],
        "env": {},
        # As the Agent SDKs run the CLI: permission prompts are control requests on stdout,
        # answered with control responses on stdin.
        "stdin": [{"after_results": 0,
                   "line": {"type": "user", "session_id": "", "parent_tool_use_id": None,
                            "message": {"role": "user",
                                        "content": "Create allowed.txt and denied.txt with touch."}}}],
        "close_after_results": 1,
        "answer_can_use_tool": {"deny_if": "denied",
                                "message": "denied by the host: the input contains 'denied'"},
        "min_version": "2.1.300",
    },
    "permission_prompt": {
        "script": "permission_prompt.json",
        "prompt": "Create allowed.txt and denied.txt with touch.",
        "permission_mode": "default",
        "args": ["--max-turns", "5",
                 "--mcp-config", '{"mcpServers":{"perm":{"command":"python3",'
                                 '"args":["@TMP@/mcp_echo.py","--approve-deny","denied"]}}}',
                 "--permission-prompt-tool", "mcp__perm__approve"],
        "env": {},
        # The MCP tool allows `touch allowed.txt` and denies `touch denied.txt`.
        "files": {"mcp_echo.py": {"copy": "mcp_echo.py"}},
        "min_version": "2.1.300",
    },
    "agents": {
        "script": "agents.json",
        "prompt": "Ask the reviewer agent to check the marker command.",
        "args": ["--max-turns", "5", "--agents", REVIEWER_AGENTS],
        "env": {},
        "min_version": "2.1.300",
    },
    "agents_forward": {
        "script": "agents.json",
        "prompt": "Ask the reviewer agent to check the marker command.",
        "args": ["--max-turns", "5", "--forward-subagent-text", "--agents", REVIEWER_AGENTS],
        "env": {},
        "min_version": "2.1.300",
    },
    "hooks": {
        "script": "hooks.json",
        "prompt": "Run `echo allowed`, then `echo hook-denied`, then tell me what happened.",
        "args": ["--max-turns", "8", "--settings", "@TMP@/settings.json"],
        "env": {},
        # PreToolUse denies any Bash command containing "hook-denied"; the Stop hook blocks the
        # first stop with feedback (the CLI then writes a synthetic user line).
        "files": {"settings.json": {"copy": "scenarios/hooks.settings.json"}},
        "min_version": "2.1.300",
    },
    "hook_events": {
        "script": "hooks.json",
        "prompt": "Run `echo allowed`, then `echo hook-denied`, then tell me what happened.",
        "args": ["--max-turns", "8", "--settings", "@TMP@/settings.json", "--include-hook-events"],
        "env": {},
        "files": {"settings.json": {"copy": "scenarios/hooks.settings.json"}},
        "partial_variant": False,
        "min_version": "2.1.300",
    },
    "json_schema": {
        "script": "json_schema.json",
        "prompt": "What is the answer? Reply in the requested structure.",
        "args": ["--max-turns", "5", "--json-schema",
                 '{"type":"object","properties":{"answer":{"type":"string"},'
                 '"confidence":{"type":"number"}},"required":["answer"]}'],
        "env": {},
        "min_version": "2.1.300",
    },
    "max_budget": {
        "script": "max_budget.json",
        "prompt": "Run `echo one` and `echo two`.",
        # One request costs about $0.013 against the stand-in's fixed usage.
        "args": ["--max-turns", "5", "--max-budget-usd", "0.005"],
        "env": {},
        "min_version": "2.1.300",
    },
    "fallback_model": {
        "script": "fallback_model.json",
        "prompt": "Run `echo fallback` and tell me what it printed.",
        "args": ["--max-turns", "5", "--model", "claude-opus-5-5",
                 "--fallback-model", "claude-sonnet-4-5"],
        # The default retries: the CLI switches models after a few 529s in a row.
        "env": {},
        "min_version": "2.1.300",
    },
    "max_turns": {
        "script": "max_turns.json",
        "prompt": "Keep checking until it works.",
        "args": ["--max-turns", "1"],
        "env": {},
    },
    "mcp": {
        "script": "mcp.json",
        "prompt": "Ask the echo MCP server to echo `hello mcp` and tell me what it said.",
        "args": ["--max-turns", "5", "--mcp-config",
                 '{"mcpServers":{"echo":{"command":"python3","args":["mcp_echo.py"]},'
                 '"broken":{"command":"./no-such-mcp-server","args":[]}}}'],
        "env": {},
        "support_files": ["mcp_echo.py"],
        "min_version": "2.1.300",
    },
    "plan": {
        "script": "plan.json",
        "prompt": "Plan how to run `echo hello` and report its output; read notes.txt first.",
        # The later --permission-mode wins over the base one (commander keeps the last value).
        "args": ["--max-turns", "5", "--permission-mode", "plan"],
        "env": {},
        "min_version": "2.1.300",
    },
    "auto": {
        "script": "auto.json",
        "prompt": "Run `echo hello`, create the file made-by-auto.txt, then delete ../home/does-not-exist.",
        "args": ["--max-turns", "5", "--permission-mode", "auto"],
        "env": {},
        "min_version": "2.1.300",
    },
    "slash_context": {
        "script": "slash.json",
        "prompt": "/context",
        "args": ["--max-turns", "3"],
        "env": {},
        "work_files": SLASH_FILES,
        # A local command makes no request: the same lines with partial messages (2.1.332).
        "partial_variant": False,
        "min_version": "2.1.300",
    },
    "slash_cost": {
        "script": "slash.json",
        "prompt": "/cost",
        "args": ["--max-turns", "3"],
        "env": {},
        "work_files": SLASH_FILES,
        # A local command makes no request: the same lines with partial messages (2.1.332).
        "partial_variant": False,
        "min_version": "2.1.300",
    },
    "slash_custom": {
        "script": "slash.json",
        "prompt": "/greet fixture",
        "args": ["--max-turns", "3"],
        "env": {},
        "work_files": SLASH_FILES,
        "partial_variant": True,
        "min_version": "2.1.300",
    },
    "slash_compact": {
        "script": "slash.json",
        "prompt": "/compact",
        "args": ["--max-turns", "3", "--resume", SLASH_SESSION],
        "env": {},
        "work_files": SLASH_FILES,
        # A conversation to compact: one earlier run under a fixed session id, resumed here.
        "before": [{"prompt": "Greet me and tell me what the notes say.",
                    "args": ["--max-turns", "3", "--session-id", SLASH_SESSION]}],
        # The same lines with --include-partial-messages (masked diff empty on 2.1.332).
        "partial_variant": False,
        "min_version": "2.1.300",
    },
    "resume": resumed_run(["--resume", RESUME_SESSION]),
    # The same lines as resume (masked); partial messages add nothing --resume did not show.
    "continue": resumed_run(["--continue"], partial_variant=False),
    # The fork gets a session id of its own; partial messages add what --resume showed.
    "resume_fork": resumed_run(["--resume", RESUME_SESSION, "--fork-session"],
                               partial_variant=False),
    "autocompact": {
        "script": "autocompact.json",
        "prompt": "Run `echo one`, `echo two`, `echo three` and `echo four`, one at a time.",
        "args": ["--max-turns", "8", "--autocompact", "100000"],
        "env": {},
        # Partial messages add only the streams and `requesting` statuses (2.1.332).
        "partial_variant": False,
        "min_version": "2.1.300",
    },
    "bash_bg_stop": {
        "script": "bash_bg_stop.json",
        "prompt": "Start `sleep 30` in the background, then stop it.",
        "args": ["--max-turns", "6"],
        "env": {},
        "partial_variant": False,
        "min_version": "2.1.300",
    },
    "bash_bg": {
        "script": "bash_bg.json",
        "prompt": "Run the marker command in the background and tell me what it printed.",
        # A fixed session id keeps the output file's path (which the model reads) the same
        # but for the task id, which the CLI makes up.
        "args": ["--max-turns", "5", "--session-id", "0b0e0000-0000-4000-8000-000000000004"],
        "env": {},
        "min_version": "2.1.300",
    },
}


def variants():
    out = []
    for name, sc in SCENARIOS.items():
        out.append(name)
        if sc.get("partial_variant", True):
            out.append(name + ".partial")
    return out


def vtuple(v):
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def applies(variant, version):
    mv = SCENARIOS[split_variant(variant)[0]].get("min_version")
    return mv is None or vtuple(version) >= vtuple(mv)


def split_variant(v):
    if v.endswith(".partial"):
        return v[: -len(".partial")], True
    return v, False


def install(version):
    p = subprocess.run(["bash", INSTALL, version], stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("capture.py: install-claude.sh %s failed" % version)
    return p.stdout.strip().splitlines()[-1]


_HELP = {}


def without_unknown(entry, args):
    """ARGS less `--permission-mode X` and `--max-turns N` where ENTRY's --help does not list
    them: CLIs before about 1.0.3x have neither (and refuse unknown options), and as root they
    refuse --dangerously-skip-permissions, so such a CLI runs with its default permissions."""
    if entry not in _HELP:
        p = subprocess.run([entry, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                           "HOME": "/tmp"})
        _HELP[entry] = p.stdout
    out, skip = [], False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a in ("--permission-mode", "--max-turns") and a not in _HELP[entry]:
            skip = True
            continue
        out.append(a)
    return out


def start_fake(script_path, log_path, workdir, port=0):
    port_file = os.path.join(workdir, "port")
    proc = subprocess.Popen([sys.executable, FAKE, "--script", script_path, "--port", str(port),
                             "--port-file", port_file, "--log", log_path],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if os.path.exists(port_file):
            with open(port_file) as f:
                return proc, int(f.read().strip())
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    sys.exit("capture.py: fake_anthropic.py did not start")


def fresh_root(tmp_root):
    """Recreate TMP_ROOT with an empty HOME and a working directory holding notes.txt; return
    (home, work)."""
    if os.path.exists(tmp_root):
        shutil.rmtree(tmp_root)
    home = os.path.join(tmp_root, "home")
    work = os.path.join(tmp_root, "work")
    os.makedirs(home)
    os.makedirs(work)
    with open(os.path.join(work, "notes.txt"), "w") as f:
        f.write("fixture notes\n")
    return home, work


def run_variant(entry, variant, tmp_root, timeout, port=0):
    """Run one variant; return (stdout bytes, stderr bytes, rc, argv, env, log path)."""
    name, partial = split_variant(variant)
    sc = SCENARIOS[name]
    home, work = fresh_root(tmp_root)
    for fname, spec in sc.get("files", {}).items():
        if isinstance(spec, dict):
            with open(os.path.join(HERE, spec["copy"])) as f:
                spec = f.read()
        with open(os.path.join(tmp_root, fname), "w") as f:
            f.write(spec.replace("@TMP@", tmp_root).replace("@CWD@", work))
    prepare_work(sc, work)
    with open(os.path.join(SCEN_DIR, sc["script"])) as f:
        script_text = f.read().replace("@CWD@", work)
    script_path = os.path.join(tmp_root, "script.json")
    with open(script_path, "w") as f:
        f.write(script_text)
    log_path = os.path.join(tmp_root, "requests.jsonl")

    fake, port = start_fake(script_path, log_path, tmp_root, port)
    try:
        base = list(BASE_ARGS)
        if "permission_mode" in sc:
            base[base.index("bypassPermissions")] = sc["permission_mode"]
        extra = [a.replace("@TMP@", tmp_root).replace("@CWD@", work) for a in sc["args"]]
        args = (["-p"] if sc["prompt"] is None else ["-p", sc["prompt"]]) + base + extra
        if partial:
            args.append("--include-partial-messages")
        args = without_unknown(entry, args)
        env = dict(BASE_ENV)
        env.update(sc["env"])
        env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:%d" % port
        env["HOME"] = home
        env["PATH"] = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")
        run_before(entry, sc, work, env, timeout)
        cmd = [entry] + args
        if sc.get("stdin"):
            out, err, rc = converse(cmd, work, env, sc["stdin"], sc.get("close_after_results", 0),
                                    timeout, sc.get("answer_can_use_tool"))
        else:
            p = subprocess.Popen(cmd, cwd=work, env=env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 start_new_session=True)
            try:
                out, err = p.communicate(timeout=timeout)
                rc = p.returncode
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, err = p.communicate()
                rc = "timeout"
    finally:
        fake.terminate()
        fake.wait()
    shown_env = {k: v for k, v in env.items() if k not in ("PATH",)}
    return out, err, rc, args, shown_env, log_path


def prepare_work(sc, work):
    """Write the scenario's "work_files" and copy its "support_files" into WORK."""
    for rel, text in sc.get("work_files", {}).items():
        path = os.path.join(work, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    for name in sc.get("support_files", []):
        shutil.copy(os.path.join(HERE, name), os.path.join(work, name))


def run_before(entry, sc, work, env, timeout):
    """Run the scenario's "before" runs (same HOME, cwd and fake API); exit if one fails."""
    for i, b in enumerate(sc.get("before", [])):
        args = ["-p", b["prompt"]] + BASE_ARGS + b.get("args", [])
        p = subprocess.run([entry] + args, cwd=work, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        if p.returncode != 0:
            sys.exit("capture.py: run %d before the captured one exited %d: %s"
                     % (i + 1, p.returncode, p.stderr.decode("utf-8", "replace")[-400:]))


def before_note(sc):
    """How the scenario's "before" runs were made, for PROVENANCE.tsv's flags column."""
    return "".join(" (after a run of: -p %s %s)" % (json.dumps(b["prompt"]),
                                                    " ".join(BASE_ARGS + b.get("args", [])))
                   for b in sc.get("before", []))


def can_use_tool_answer(line, rule):
    """The control_response to a `can_use_tool` control_request LINE under RULE, else None."""
    if line.get("type") != "control_request" or rule is None:
        return None
    req = line.get("request") or {}
    if req.get("subtype") != "can_use_tool":
        return None
    inp = req.get("input") or {}
    if rule["deny_if"] in json.dumps(inp):
        verdict = {"behavior": "deny", "message": rule["message"]}
    else:
        verdict = {"behavior": "allow", "updatedInput": inp}
    return {"type": "control_response",
            "response": {"subtype": "success", "request_id": line.get("request_id"),
                         "response": verdict}}


def converse(cmd, work, env, steps, close_after, timeout, can_use_tool=None):
    """Run CMD with a piped stdin fed by STEPS (see SCENARIOS) as `result` lines appear, and
    `can_use_tool` control requests answered under the rule CAN_USE_TOOL."""
    p = subprocess.Popen(cmd, cwd=work, env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    cond = threading.Condition()
    state = {"results": 0, "eof": False}
    out, err = [], []
    stdin_lock = threading.Lock()

    def write(obj):
        with stdin_lock:
            p.stdin.write((json.dumps(obj) + "\n").encode())
            p.stdin.flush()

    def wait_results(n):
        with cond:
            cond.wait_for(lambda: state["results"] >= n or state["eof"])
            return state["results"] >= n

    def writer():
        try:
            for st in steps:
                if not wait_results(st.get("after_results", 0)):
                    return
                if st.get("sleep"):
                    time.sleep(float(st["sleep"]))
                write(st["line"])
            wait_results(close_after)
            with stdin_lock:
                p.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def reader():
        for line in p.stdout:
            out.append(line)
            try:
                obj = json.loads(line)
                is_result = obj.get("type") == "result"
            except (ValueError, AttributeError):
                obj, is_result = None, False
            answer = can_use_tool_answer(obj, can_use_tool) if isinstance(obj, dict) else None
            if answer is not None:
                try:
                    write(answer)
                except (BrokenPipeError, OSError, ValueError):
                    pass
            if is_result:
                with cond:
                    state["results"] += 1
                    cond.notify_all()
        with cond:
            state["eof"] = True
            cond.notify_all()

    threads = [threading.Thread(target=writer, daemon=True), threading.Thread(target=reader),
               threading.Thread(target=lambda: err.append(p.stderr.read()))]
    for t in threads:
        t.start()
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        rc = "timeout"
    threads[1].join()
    threads[2].join()
    return b"".join(out), b"".join(err), rc


# ------------------------------------------------------------ determinism
UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TS_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?")
ID_RE = re.compile(r"\b(msg|toolu|req|srvtoolu)_[0-9A-Za-z]{10,}")
VOLATILE_KEY = re.compile(r"(duration|_ms$|Ms$|ttft|elapsed|timestamp|_time$|^pid$)", re.I)
PID_RE = re.compile(r"(/cc-socks/)\d+")
DUR_TEXT_RE = re.compile(r"((?:duration|_ms)[A-Za-z_]*\"?:\s*)\d+", re.I)
# keys whose values are random per run (ids of background tasks / agents);
# their values are also replaced wherever they occur inside other strings.
ID_KEYS = ("task_id", "agent_id", "run_id", "agentId", "taskId")


def collect_ids(obj, acc):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in ID_KEYS and isinstance(v, str) and len(v) >= 5:
                acc.add(v)
            collect_ids(v, acc)
    elif isinstance(obj, list):
        for v in obj:
            collect_ids(v, acc)
    return acc


def mask(obj, key="", ids=()):
    if isinstance(obj, dict):
        return {k: mask(v, k, ids) for k, v in obj.items()}
    if isinstance(obj, list):
        return [mask(v, "", ids) for v in obj]
    if isinstance(obj, (int, float)) and not isinstance(obj, bool) and VOLATILE_KEY.search(key):
        return "<N>"
    if isinstance(obj, str):
        s = UUID_RE.sub("<UUID>", obj)
        s = TS_RE.sub("<TS>", s)
        s = ID_RE.sub(lambda m: m.group(1) + "_<ID>", s)
        s = PID_RE.sub(lambda m: m.group(1) + "<PID>", s)
        s = DUR_TEXT_RE.sub(lambda m: m.group(1) + "<N>", s)
        for i in ids:
            s = s.replace(i, "<TASKID>")
        return s
    return obj


def masked_lines(data):
    """Lines of DATA with run-specific values (ids, uuids, timestamps,
    durations, background-task ids, socket pids) replaced by placeholders."""
    objs = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            objs.append(json.loads(line))
        except ValueError:
            objs.append(("NONJSON", line))
    ids = set()
    for o in objs:
        collect_ids(o, ids)
    ids = sorted(ids, key=len, reverse=True)
    out = []
    for o in objs:
        if isinstance(o, tuple):
            out.append("NONJSON " + o[1])
        else:
            out.append(json.dumps(mask(o, "", ids), sort_keys=True))
    return out


# -------------------------------------------------------------- outputs
def summarize(data):
    counts = {}
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            o = json.loads(line)
        except ValueError:
            k = "<non-json>"
        else:
            k = str(o.get("type"))
            if o.get("subtype") is not None:
                k += "/" + str(o.get("subtype"))
            if o.get("type") == "stream_event":
                k += "/" + str((o.get("event") or {}).get("type"))
        counts[k] = counts.get(k, 0) + 1
    return counts


def upsert_provenance(out_dir, rows):
    path = os.path.join(out_dir, "PROVENANCE.tsv")
    header = ["file", "cli_version", "scenario", "flags", "env", "exit_code", "date", "note"]
    existing = {}
    order = []
    if os.path.exists(path):
        with open(path) as f:
            lines = f.read().splitlines()
        for line in lines[1:]:
            if not line.strip():
                continue
            cols = line.split("\t")
            existing[cols[0]] = cols
            order.append(cols[0])
    for r in rows:
        if r[0] not in existing:
            order.append(r[0])
        existing[r[0]] = r
    order = sorted(set(order), key=lambda f: (f.split("/")[0], f))
    with open(path, "w") as f:
        f.write("\t".join(header) + "\n")
        for k in order:
            f.write("\t".join(existing[k]) + "\n")


def main():
    ap = argparse.ArgumentParser(description="capture claude stream-json fixtures offline")
    ap.add_argument("--cli-version", action="append", default=[],
                    help="CLI version (repeatable)")
    ap.add_argument("--scenario", action="append", default=[],
                    help="variant, e.g. tools or tools.partial (repeatable; default all)")
    ap.add_argument("--out", default=DEFAULT_OUT, help="output root (default fixtures/captured)")
    ap.add_argument("--tmp-root", default="/tmp/boo-capture",
                    help="fixed temp root for HOME/cwd (wiped per run)")
    ap.add_argument("--timeout", type=float, default=180.0)
    ap.add_argument("--port", type=int, default=47123,
                    help="fixed loopback port for the fake API (newer CLIs print it in error "
                         "texts, so a fixed one keeps fixtures stable; 0 = ephemeral)")
    ap.add_argument("--run2", action="store_true",
                    help="also run each selected variant a second time as <variant>.run2")
    ap.add_argument("--check-determinism", metavar="VARIANT",
                    help="run VARIANT twice and diff masked output; writes nothing")
    ap.add_argument("--keep-request-log", action="store_true",
                    help="also copy the fake API request log next to the fixture")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()

    if a.list:
        for v in variants():
            name, partial = split_variant(v)
            sc = SCENARIOS[name]
            print("%-22s %s %s" % (v, " ".join(sc["args"] + (["--include-partial-messages"] if partial else [])),
                                     " ".join("%s=%s" % kv for kv in sc["env"].items())))
        return 0
    if not a.cli_version:
        ap.error("--cli-version is required")

    if a.check_determinism:
        bad = 0
        for ver in a.cli_version:
            entry = install(ver)
            r1 = run_variant(entry, a.check_determinism, a.tmp_root, a.timeout, a.port)
            r2 = run_variant(entry, a.check_determinism, a.tmp_root, a.timeout, a.port)
            m1, m2 = masked_lines(r1[0]), masked_lines(r2[0])
            if m1 == m2:
                print("%s %s: deterministic (%d lines, masked ids/uuids/timestamps/durations)"
                      % (ver, a.check_determinism, len(m1)))
            else:
                bad = 1
                import difflib
                print("%s %s: DIFFERENT" % (ver, a.check_determinism))
                for d in difflib.unified_diff(m1, m2, "run1", "run2", lineterm="", n=0):
                    print(d[:400])
        return bad

    sel = a.scenario or variants()
    for v in sel:
        if split_variant(v)[0] not in SCENARIOS:
            ap.error("unknown scenario %r (see --list)" % v)

    today = datetime.date.today().isoformat()
    status = 0
    for ver in a.cli_version:
        entry = install(ver)
        vdir = os.path.join(a.out, ver)
        os.makedirs(vdir, exist_ok=True)
        rows = []
        vsel = [v for v in sel if applies(v, ver)]
        jobs = [(v, v) for v in vsel] + ([(v, v + ".run2") for v in vsel] if a.run2 else [])
        for v, fname in jobs:
            out, err, rc, args, env, log_path = run_variant(entry, v, a.tmp_root, a.timeout, a.port)
            base = os.path.join(vdir, fname)
            with open(base + ".ndjson", "wb") as f:
                f.write(out)
            with open(base + ".stderr.txt", "wb") as f:
                f.write(err)
            if a.keep_request_log and os.path.exists(log_path):
                shutil.copy(log_path, base + ".requests.jsonl")
            if SCENARIOS[split_variant(v)[0]]["prompt"] is None:
                flags = " ".join(args) + " (stdin: %d lines)" % len(SCENARIOS[split_variant(v)[0]]["stdin"])
            else:
                flags = "-p %s %s" % (json.dumps(args[1]), " ".join(args[2:]))
            flags += before_note(SCENARIOS[split_variant(v)[0]])
            envs = " ".join("%s=%s" % (k, v2) for k, v2 in sorted(env.items())
                            if k not in ("HOME", "ANTHROPIC_BASE_URL"))
            rows.append(["%s/%s.ndjson" % (ver, fname), ver, fname, flags, envs, str(rc), today, NOTE])
            n = out.count(b"\n")
            print("%s/%s.ndjson: rc=%s lines=%d %s" % (ver, fname, rc, n,
                                                        json.dumps(summarize(out), sort_keys=True)))
            if rc == "timeout" or n == 0:
                status = 1
        upsert_provenance(a.out, rows)
    if os.path.exists(a.tmp_root):
        shutil.rmtree(a.tmp_root)
    return status


if __name__ == "__main__":
    sys.exit(main())
