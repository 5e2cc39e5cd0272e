#!/usr/bin/env python3
"""Side by side: `boo-normalize acp` and `@zed-industries/claude-code-acp` on the same ACP client
script (tests/support/acp-client/drive.mjs, the official SDK), the same claude CLI (2.1.45,
tests/support/install-claude.sh) and the same scripted loopback API (`probe --serve-only`).

Checks each agent on: text; a Bash rejected (the file is not created, the turn ends normally);
"always allow" (asked once for two identical calls); cancel during a stalled answer (cancelled
within 2 s) then a second prompt (its own stop reason). Measures time to `initialize`, time from
`session/new` to the first agent_message_chunk of a prompt sent right after it, and the agent's peak RSS (its own processes, not the
CLI), median of N runs, as ratios to the adapter. Appends a section to benches/RESULTS.md.

  python3 benches/acp_compare.py [--runs 5] [--bin target/release/boo-normalize] [--no-write]
"""
import argparse, json, os, platform, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ZED_VERSION = "0.16.2"


def sh(*a, **k):
    return subprocess.run(a, check=True, capture_output=True, text=True, **k).stdout


def install():
    claude = sh("bash", str(ROOT / "tests/support/install-claude.sh"), "2.1.45").strip()
    client = ROOT / "target/acp-client"
    client.mkdir(parents=True, exist_ok=True)
    for f in ("package.json", "package-lock.json", "drive.mjs"):
        (client / f).write_bytes((ROOT / "tests/support/acp-client" / f).read_bytes())
    if not (client / "node_modules/@agentclientprotocol/sdk").exists():
        sh("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error", cwd=client)
    zed = ROOT / "target/zed-acp"
    entry = zed / "node_modules/@zed-industries/claude-code-acp/dist/index.js"
    if not entry.exists():
        zed.mkdir(parents=True, exist_ok=True)
        (zed / "package.json").write_text('{"name":"zed-acp-bench","private":true}')
        sh("npm", "install", "--no-audit", "--no-fund", "--loglevel=error",
           f"@zed-industries/claude-code-acp@{ZED_VERSION}", cwd=zed)
    return claude, client, entry


class Api:
    def __init__(self, bin_, script, d):
        sp = Path(d) / "script.json"
        sp.write_text(json.dumps(script))
        self.pf = Path(d) / "port"
        self.p = subprocess.Popen([bin_, "probe", "--serve-only", str(sp), "--port-file", str(self.pf)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if self.pf.exists() and self.pf.read_text().strip():
                break
            time.sleep(0.03)
        self.port = int(self.pf.read_text())

    def close(self):
        self.p.kill()
        self.p.wait()


TEXT = {"responses": [{"label": "t", "content": [{"type": "text", "text": "Hello from the model."}]}]}
REJECT = {"responses": [
    {"label": "bash", "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch denied.txt", "description": "d"}}]},
    {"label": "end", "content": [{"type": "text", "text": "Not permitted."}]}]}
ALWAYS = {"responses": [
    {"label": "one", "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch a.txt", "description": "a"}}]},
    {"label": "two", "content": [{"type": "tool_use", "name": "Bash", "input": {"command": "touch a.txt", "description": "a"}}]},
    {"label": "end", "content": [{"type": "text", "text": "Both done."}]}]}
CANCEL = {"responses": [
    {"label": "second", "match": {"last_user": "second"}, "content": [{"type": "text", "text": "Second answer."}]},
    {"label": "stalled", "match": {"last_user": "first"}, "hang": True}]}


def drive(agent, client, api, work, home, env_extra, permissions, steps, match):
    env = {"PATH": os.environ["PATH"], "HOME": home, "LANG": "C.UTF-8",
           "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{api.port}", "ANTHROPIC_API_KEY": "sk-ant-dummy",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "CLAUDE_CODE_MAX_RETRIES": "0",
           "DISABLE_AUTOUPDATER": "1", "IS_SANDBOX": "1", **env_extra}
    steps = steps + [{"op": "measure_rss", "match": match}]
    plan = {"agent": agent, "env": env, "cwd": work, "permissions": permissions, "steps": steps,
            "timeout_ms": 60000}
    pf = Path(work).parent / "plan.json"
    pf.write_text(json.dumps(plan))
    out = subprocess.run(["node", str(client / "drive.mjs"), str(pf)], capture_output=True, text=True,
                         cwd=client, timeout=120)
    return json.loads(out.stdout)


def texts(r, kind="agent_message_chunk"):
    return "".join(u["update"].get("content", {}).get("text", "") for u in r["updates"]
                   if u["update"]["sessionUpdate"] == kind)


def stop(r, name):
    return (r["results"].get(name) or {}).get("ok", {}).get("stopReason")


def run_case(name, agents, bin_, client):
    init = [{"op": "initialize"}, {"op": "new", "as": "s"}]
    out = {}
    for label, (agent, env_extra, match) in agents.items():
        with tempfile.TemporaryDirectory() as d:
            work, home = Path(d) / "work", Path(d) / "home"
            work.mkdir(); home.mkdir()
            script = {"text": TEXT, "reject": REJECT, "always": ALWAYS, "cancel": CANCEL}[name]
            api = Api(bin_, script, d)
            try:
                if name == "text":
                    r = drive(agent, client, api, str(work), str(home), env_extra, [],
                              init + [{"op": "prompt", "session": "s", "text": "say hello", "as": "p"}], match)
                    p = r["results"].get("s", {})
                    first = r["times"].get("first_message_chunk")
                    out[label] = {
                        "ok": stop(r, "p") == "end_turn" and "Hello from the model." in texts(r),
                        "init_ms": r["results"].get("initialize", {}).get("at"),
                        "first_chunk_ms": (first - (p["at"] - p["ms"])) if first is not None and p else None,
                        "rss_kb": r["results"].get("rss", {}).get("kb"),
                        "error": r["results"].get("client_error")}
                elif name == "reject":
                    r = drive(agent, client, api, str(work), str(home), env_extra, ["reject"],
                              init + [{"op": "prompt", "session": "s", "text": "touch it", "as": "p"}], match)
                    out[label] = {"ok": stop(r, "p") == "end_turn" and not (work / "denied.txt").exists(),
                                  "detail": {"stop": stop(r, "p"), "created": (work / "denied.txt").exists()}}
                elif name == "always":
                    r = drive(agent, client, api, str(work), str(home), env_extra, ["allow_always", "reject"],
                              init + [{"op": "prompt", "session": "s", "text": "touch twice", "as": "p"}], match)
                    out[label] = {"ok": stop(r, "p") == "end_turn" and len(r["permissions"]) == 1,
                                  "detail": {"stop": stop(r, "p"), "asked": len(r["permissions"]),
                                             "options": [o["optionId"] for o in (r["permissions"] or [{}])[0].get("options", [])]}}
                else:
                    r = drive(agent, client, api, str(work), str(home), env_extra, [], init + [
                        {"op": "prompt", "session": "s", "text": "first question", "as": "p1", "wait": False},
                        {"op": "until_update", "session": "s", "kind": "available_commands_update", "timeout_ms": 30000},
                        {"op": "sleep", "ms": 3000},
                        {"op": "cancel", "session": "s"},
                        {"op": "await", "prompt": "p1"},
                        {"op": "prompt", "session": "s", "text": "second question", "as": "p2"}], match)
                    c = r["results"].get("cancel@s", {}).get("at")
                    p1 = r["results"].get("p1", {})
                    took = (p1.get("at") - c) if c is not None and p1.get("at") is not None else None
                    out[label] = {"ok": stop(r, "p1") == "cancelled" and took is not None and took <= 2000
                                  and stop(r, "p2") == "end_turn" and "Second answer." in texts(r),
                                  "detail": {"p1": stop(r, "p1") or p1.get("error"), "cancel_ms": took,
                                             "p2": stop(r, "p2") or r["results"].get("p2", {}).get("error"),
                                             "client_error": r["results"].get("client_error")}}
            except Exception as e:  # a hung or crashed run is a failed check
                out[label] = {"ok": False, "detail": {"exception": str(e)[:300]}}
            finally:
                api.close()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bin", default=str(ROOT / "target/debug/boo-normalize"))
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    # The agent is started from the client's folder: a relative path would name nothing there.
    a.bin = str(Path(a.bin).resolve())
    claude, client, entry = install()
    agents = {
        "boo-normalize acp": ([a.bin, "acp", "--claude-bin", claude, "--env", "IS_SANDBOX"], {}, "boo-normalize"),
        "claude-code-acp": (["node", str(entry)], {"CLAUDE_CODE_EXECUTABLE": claude}, "claude-code-acp"),
    }
    checks = {n: run_case(n, agents, a.bin, client) for n in ("reject", "always", "cancel")}
    perf = [run_case("text", agents, a.bin, client) for _ in range(a.runs)]
    perf.append(run_case("text", agents, a.bin, client))
    med = {}
    for label in agents:
        rows = [p[label] for p in perf]
        med[label] = {k: statistics.median([r[k] for r in rows if r.get(k) is not None] or [float("nan")])
                      for k in ("init_ms", "first_chunk_ms", "rss_kb")}
        med[label]["text_ok"] = all(r["ok"] for r in rows)
    print(json.dumps({"checks": checks, "median": med}, indent=1))
    b, z = med["boo-normalize acp"], med["claude-code-acp"]
    lines = [f"## {time.strftime('%Y-%m-%d')} — acp side by side ({os.cpu_count()} cores, {platform.machine()})", "",
             f"`python3 benches/acp_compare.py --runs {a.runs}` with `{Path(a.bin).relative_to(ROOT) if Path(a.bin).is_relative_to(ROOT) else a.bin}`: "
             f"the same client script (the official ACP SDK), the same claude CLI 2.1.45 and the same "
             f"scripted loopback API; `@zed-industries/claude-code-acp` {ZED_VERSION} with "
             f"`CLAUDE_CODE_EXECUTABLE` set to that CLI. Medians of {len(perf)} runs.", "",
             "| | boo-normalize acp | claude-code-acp | ratio |", "|---|---:|---:|---:|"]
    for k, name in (("init_ms", "time to `initialize` (ms, from spawn)"),
                    ("first_chunk_ms", "`session/new` sent → first `agent_message_chunk` (ms; the prompt is sent as soon as the session exists)"),
                    ("rss_kb", "agent's peak RSS (KiB, its own processes)")):
        lines.append(f"| {name} | {b[k]:.0f} | {z[k]:.0f} | {b[k] / z[k]:.2f}× |")
    lines += ["", "| check | boo-normalize acp | claude-code-acp |", "|---|---|---|",
              f"| text, end_turn | {'pass' if b['text_ok'] else 'FAIL'} | {'pass' if z['text_ok'] else 'FAIL'} |"]
    for n, title in (("reject", "Bash rejected: not run, end_turn"), ("always", "always allow: asked once for two calls"),
                     ("cancel", "cancel a stalled answer ≤ 2 s, next prompt its own stop reason")):
        c = checks[n]
        lines.append(f"| {title} | {'pass' if c['boo-normalize acp']['ok'] else 'FAIL'} | "
                     f"{'pass' if c['claude-code-acp']['ok'] else 'FAIL'} ({json.dumps(c['claude-code-acp'].get('detail'))}) |")
    goal_start = b["init_ms"] <= z["init_ms"] / 3
    goal_mem = b["rss_kb"] <= z["rss_kb"] / 5
    lines += ["", f"- goal (issue 40: start in under a third of the adapter's time): {'met' if goal_start else 'not met'}",
              f"- goal (issue 40: a fifth of its memory): {'met' if goal_mem else 'not met'}", ""]
    text = "\n".join(lines)
    print(text)
    if not a.no_write:
        p = ROOT / "benches/RESULTS.md"
        old = p.read_text()
        head, sep, rest = old.partition("\n## ")
        p.write_text(head.rstrip("\n") + "\n\n" + text + "\n" + (sep.lstrip("\n") and "## " + rest))


if __name__ == "__main__":
    main()
