#!/usr/bin/env python3
"""Capture real Claude Code session transcripts (and the stream-json of the same runs) offline.

Runs the runs of a transcript scenario one after another in one isolated HOME and working
directory, against tests/support/fake_anthropic.py, and keeps both what each run printed and
the session files the CLI wrote under $HOME/.claude/projects/:

    fixtures/transcripts/<VERSION>/<scenario>/runN.stream.ndjson   stdout of run N, verbatim
    fixtures/transcripts/<VERSION>/<scenario>/runN.stderr.txt      (only when not empty)
    fixtures/transcripts/<VERSION>/<scenario>/projects/...         $HOME/.claude/projects, verbatim
    fixtures/transcripts/PROVENANCE.tsv                            one row per run (upserted)

    python3 tests/support/capture_transcripts.py --cli-version 2.1.45 [--scenario session]

Uses capture.py's installer, environment and flags.  Stdlib only.  The temp root is fixed
(default /tmp/boo-tr-capture) so the paths inside the transcripts (cwd, project directory name)
are the same on every run; captures therefore run one at a time.
"""

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys

import capture

DEFAULT_OUT = os.path.join(capture.ROOT, "fixtures", "transcripts")

# name -> {"script", "runs": [{"prompt", "args"}]}: every run's stdout is kept.
SCENARIOS = {
    # Parallel tools, a foreground subagent, a resumed run (--continue), a fork (--fork-session: a
    # new session file that repeats the earlier messages) and a compaction (of the fork).
    "session": {
        "script": "transcript.json",
        "runs": [
            {"prompt": "Run `echo hello` and read notes.txt at the same time, then use a "
                       "subagent to run the marker command.",
             "args": ["--max-turns", "6"]},
            {"prompt": "What did the command print before?", "args": ["--max-turns", "3", "--continue"]},
            {"prompt": "Say something in a fork.",
             "args": ["--max-turns", "3", "--continue", "--fork-session"]},
            {"prompt": "/compact", "args": ["--max-turns", "3", "--continue"]},
        ],
    },
}


def run(entry, sc, tmp_root, timeout, out_dir, port):
    home, work = capture.fresh_root(tmp_root)
    with open(os.path.join(capture.SCEN_DIR, sc["script"])) as f:
        script = f.read().replace("@CWD@", work)
    script_path = os.path.join(tmp_root, "script.json")
    with open(script_path, "w") as f:
        f.write(script)
    fake, port = capture.start_fake(script_path, os.path.join(tmp_root, "requests.jsonl"),
                                    tmp_root, port)
    rows = []
    try:
        env = dict(capture.BASE_ENV)
        env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:%d" % port
        env["HOME"] = home
        env["PATH"] = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")
        for i, r in enumerate(sc["runs"], 1):
            args = capture.without_unknown(entry, ["-p", r["prompt"]] + capture.BASE_ARGS + r["args"])
            p = subprocess.run([entry] + args, cwd=work, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
            with open(os.path.join(out_dir, "run%d.stream.ndjson" % i), "wb") as f:
                f.write(p.stdout)
            if p.stderr.strip():
                with open(os.path.join(out_dir, "run%d.stderr.txt" % i), "wb") as f:
                    f.write(p.stderr)
            rows.append((i, args, p.returncode, p.stdout.count(b"\n")))
    finally:
        fake.terminate()
        fake.wait()
    projects = os.path.join(home, ".claude", "projects")
    if os.path.isdir(projects):
        shutil.copytree(projects, os.path.join(out_dir, "projects"))
    envs = " ".join("%s=%s" % kv for kv in sorted(capture.BASE_ENV.items()))
    return rows, envs


def upsert(out_root, new_rows):
    path = os.path.join(out_root, "PROVENANCE.tsv")
    head = ["file", "cli_version", "scenario", "run", "flags", "env", "exit_code", "date", "note"]
    rows = {}
    if os.path.exists(path):
        with open(path) as f:
            lines = f.read().splitlines()
        for line in lines[1:]:
            cols = line.split("\t")
            rows[cols[0]] = cols
    for r in new_rows:
        rows[r[0]] = r
    with open(path, "w") as f:
        f.write("\t".join(head) + "\n")
        for k in sorted(rows):
            f.write("\t".join(rows[k]) + "\n")


def main():
    ap = argparse.ArgumentParser(description="capture claude session transcripts offline")
    ap.add_argument("--cli-version", action="append", required=True)
    ap.add_argument("--scenario", action="append", default=[])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--tmp-root", default="/tmp/boo-tr-capture")
    ap.add_argument("--timeout", type=float, default=180.0)
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    today = datetime.date.today().isoformat()
    status = 0
    for ver in a.cli_version:
        entry = capture.install(ver)
        for name in a.scenario or sorted(SCENARIOS):
            sc = SCENARIOS[name]
            out_dir = os.path.join(a.out, ver, name)
            if os.path.exists(out_dir):
                shutil.rmtree(out_dir)
            os.makedirs(out_dir)
            rows, envs = run(entry, sc, a.tmp_root, a.timeout, out_dir, a.port)
            prov = []
            for i, args, rc, n in rows:
                flags = "-p %s %s" % (json.dumps(args[1]), " ".join(args[2:]))
                prov.append(["%s/%s/run%d.stream.ndjson" % (ver, name, i), ver, name, str(i), flags,
                             envs, str(rc), today,
                             "generated offline against tests/support/fake_anthropic.py "
                             "(scenarios/%s); runs in one HOME, projects/ is its "
                             "~/.claude/projects after the last run" % sc["script"]])
                print("%s/%s run%d: rc=%s lines=%d" % (ver, name, i, rc, n))
                if n == 0:
                    status = 1
            upsert(a.out, prov)
            for dp, _, fs in os.walk(os.path.join(out_dir, "projects")):
                for fn in sorted(fs):
                    p = os.path.join(dp, fn)
                    print("   ", os.path.relpath(p, out_dir), os.path.getsize(p))
    if os.path.exists(a.tmp_root):
        shutil.rmtree(a.tmp_root)
    return status


if __name__ == "__main__":
    sys.exit(main())
