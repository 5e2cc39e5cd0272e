#!/usr/bin/env python3
"""Whole-binary benchmark: boo-normalize against wc -l, jq and a Python json loop.

Builds the mix from fixtures/real (every capture concatenated 20 times, about 196 MB), times each
command (best of N runs, wall clock and CPU time, one process at a time), reports ratios and peak
RSS, checks the goals of issue #9 (40× jq, 8× wc -l, peak memory on a 50 MB line at most twice
the line plus 32 MiB), and appends a dated section to benches/RESULTS.md.

    python3 benches/compare.py [--runs 3] [--no-build] [--no-write]
"""
import argparse
import datetime
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "boo-normalize")

PY_LOOP = r"""
import json, sys
out = sys.stdout
for line in sys.stdin.buffer:
    try:
        out.write(json.dumps(json.loads(line)))
    except ValueError:
        out.write(json.dumps({"_unparsed": line.decode("utf-8", "replace")}))
    out.write("\n")
"""


def build_mix(path, copies):
    files = sorted(
        os.path.join(ROOT, "fixtures", "real", f)
        for f in os.listdir(os.path.join(ROOT, "fixtures", "real"))
        if f.endswith(".ndjson")
    )
    with open(path, "wb") as out:
        for _ in range(copies):
            for f in files:
                with open(f, "rb") as src:
                    shutil.copyfileobj(src, out)


def run_once(cmd, stdin_path):
    """(wall seconds, CPU seconds: user + system) of one run."""
    with open(stdin_path, "rb") as stdin, open(os.devnull, "wb") as devnull:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=stdin, stdout=devnull, stderr=subprocess.PIPE)
        _, err = p.communicate()
        dt = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            sys.exit(f"{cmd[0]} failed ({p.returncode}): {err.decode(errors='replace')[:400]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far; peak RSS is measured per
    # command in its own wrapper process below instead.
    return dt, cpu


def huge_line(path, mib=50):
    """One tool_result line holding `mib` MiB of file contents (newlines, quotes, tabs, UTF-8)."""
    unit = '    let x = "caf\u00e9";\tif a < b { return x; }\n// \u2192 done\n'
    escaped = json.dumps(unit, ensure_ascii=False)[1:-1]
    head = '{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"'
    tail = '","is_error":false}]},"parent_tool_use_id":null,"session_id":"s"}\n'
    with open(path, "w", encoding="utf-8") as f:
        f.write(head)
        for _ in range(mib * (1 << 20) // len(unit)):
            f.write(escaped)
        f.write(tail)
    return os.path.getsize(path)


def peak_rss_kb(cmd, stdin_path):
    """Peak RSS in KiB via GNU time (a fork of Python would report the interpreter's size)."""
    timer = shutil.which("time") or "/usr/bin/time"
    with open(stdin_path, "rb") as i, open(os.devnull, "wb") as o:
        p = subprocess.run([timer, "-f", "%M"] + cmd, stdin=i, stdout=o, stderr=subprocess.PIPE, check=True)
    return int(p.stderr.decode().strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--copies", type=int, default=20)
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--skip-slow", action="store_true", help="skip jq and python")
    a = ap.parse_args()
    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    tmp = tempfile.mkdtemp(prefix="boo-bench-")
    mix = os.path.join(tmp, "mix.ndjson")
    build_mix(mix, a.copies)
    size = os.path.getsize(mix)
    with open(mix, "rb") as f:
        lines = sum(1 for _ in f)

    cmds = [
        ("wc -l", ["wc", "-l"]),
        ("boo-normalize", [BIN]),
        ("boo-normalize --format sse", [BIN, "--format", "sse"]),
        ("boo-normalize --format audit", [BIN, "--format", "audit", "--run-id", "bench"]),
    ]
    if not a.skip_slow:
        if shutil.which("jq"):
            cmds.append(("jq -cR 'fromjson? // {\"_unparsed\":.}'", ["jq", "-cR", 'fromjson? // {"_unparsed":.}']))
        cmds.append(("python3 json loop", [sys.executable, "-c", PY_LOOP]))

    results = []
    for name, cmd in cmds:
        if cmd[0] == BIN and len(cmd) > 1:
            probe = subprocess.run(cmd + ["--help"], capture_output=True)
            if probe.returncode != 0:
                print(f"skip {name}: not supported by this build", file=sys.stderr)
                continue
        runs = 1 if name.startswith(("jq", "python")) else a.runs
        best, cpu = min(run_once(cmd, mix) for _ in range(runs))
        rss = peak_rss_kb(cmd, mix)
        results.append((name, best, cpu, rss))
        print(f"{name:45s} {best:8.3f} s  cpu {cpu:7.3f} s  {size / best / 1e6:8.1f} MB/s  peak RSS {rss / 1024:7.1f} MiB", flush=True)

    big = os.path.join(tmp, "huge.ndjson")
    big_size = huge_line(big)
    big_limit = 2 * big_size + 32 * (1 << 20)
    big_rss = []
    for fmt in ["envelope", "sse", "audit"]:
        rss = peak_rss_kb([BIN, "--format", fmt], big) * 1024
        big_rss.append((fmt, rss))
        print(f"one {big_size / (1 << 20):.1f} MiB line, --format {fmt}: peak RSS {rss / (1 << 20):.1f} MiB (limit {big_limit / (1 << 20):.1f} MiB)", flush=True)

    t = dict((n, s) for n, s, _, _ in results)
    boo = t["boo-normalize"]
    lines_out = []
    lines_out.append(f"## {datetime.date.today().isoformat()} — {platform.node()} ({os.cpu_count()} cores, {platform.machine()}, {platform.release()})")
    lines_out.append("")
    lines_out.append(f"Input: fixtures/real concatenated {a.copies}× = {size / 1e6:.1f} MB, {lines} lines, on stdin from a file, output to /dev/null. Best of {a.runs} runs (jq and Python: 1 run). Wall clock; CPU is user + system time of all threads (the audit sink hashes on a second thread).")
    lines_out.append("")
    lines_out.append("| command | seconds | CPU s | MB/s | peak RSS MiB | vs boo-normalize |")
    lines_out.append("|---|---:|---:|---:|---:|---:|")
    for n, s, cpu, rss in results:
        lines_out.append(f"| `{n}` | {s:.3f} | {cpu:.3f} | {size / s / 1e6:.0f} | {rss / 1024:.1f} | {s / boo:.2f}× |")
    lines_out.append("")
    lines_out.append(f"One {big_size / (1 << 20):.1f} MiB line (a tool result of file contents): peak RSS " + ", ".join(f"{f} {r / (1 << 20):.0f} MiB" for f, r in big_rss) + f"; limit 2 × line + 32 MiB = {big_limit / (1 << 20):.0f} MiB: " + ("met" if all(r <= big_limit for _, r in big_rss) else "NOT met") + ".")
    lines_out.append("")
    if "wc -l" in t:
        lines_out.append(f"- boo-normalize / wc -l: {boo / t['wc -l']:.1f}× slower")
    for n in t:
        if n.startswith("jq"):
            lines_out.append(f"- jq / boo-normalize: {t[n] / boo:.1f}× faster")
        if n.startswith("python"):
            lines_out.append(f"- python / boo-normalize: {t[n] / boo:.1f}× faster")
    for n in t:
        if n.startswith("boo-normalize --format") and "jq" in "".join(t):
            jq = [v for k, v in t.items() if k.startswith("jq")][0]
            lines_out.append(f"- `{n}`: jq ratio {jq / t[n]:.1f}×, wc -l ratio {t[n] / t['wc -l']:.1f}×")
    jqs = [v for k, v in t.items() if k.startswith("jq")]
    if jqs and "wc -l" in t:
        for n in [k for k in t if k.startswith("boo-normalize")]:
            ok_jq = jqs[0] / t[n] >= 40
            ok_wc = t[n] / t["wc -l"] <= 8
            lines_out.append(f"- goals for `{n}` (≥ 40× jq, ≤ 8× wc -l): {'met' if ok_jq else 'not met'} / {'met' if ok_wc else 'not met'}")
    text = "\n".join(lines_out) + "\n"
    print()
    print(text)
    if not a.no_write:
        path = os.path.join(ROOT, "benches", "RESULTS.md")
        head = "# Whole-binary benchmark results\n\nWritten by `python3 benches/compare.py`; newest first.\n\n"
        old = ""
        if os.path.exists(path):
            old = open(path).read()
            if old.startswith(head):
                old = old[len(head):]
        with open(path, "w") as f:
            f.write(head + text + "\n" + old)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
