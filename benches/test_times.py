#!/usr/bin/env python3
"""Per-family timing of the integration suite (tests/FAMILY/...), so the slow families are known.

Builds the suite (`cargo test --no-run`), runs its binary once with libtest's JSON report and
per-test times, and prints a Markdown table: per family the number of tests, the sum of their
times and the slowest test. Tests run side by side, so the sums add up to more than the wall
time, which is printed too. `--append` adds the table as a dated section to benches/RESULTS.md.

libtest's per-test times are an unstable option: the binary is run with RUSTC_BOOTSTRAP=1 (only
the report format; the tests are built by the stable toolchain as usual).
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def suite_binary():
    out = subprocess.run(
        ["cargo", "test", "--test", "suite", "--no-run", "--message-format", "json"],
        cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True,
    ).stdout
    for line in out.splitlines():
        try:
            m = json.loads(line)
        except json.JSONDecodeError:
            continue
        if m.get("reason") == "compiler-artifact" and m.get("target", {}).get("name") == "suite" \
                and m.get("executable"):
            return m["executable"]
    sys.exit("test_times.py: cargo did not name the suite binary")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("filters", nargs="*", help="libtest filters (default: every test)")
    ap.add_argument("--append", action="store_true", help="append the table to benches/RESULTS.md")
    args = ap.parse_args()
    exe = suite_binary()
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    t0 = time.monotonic()
    p = subprocess.run(
        [exe, *args.filters, "-Z", "unstable-options", "--format", "json", "--report-time"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    wall = time.monotonic() - t0
    fam = defaultdict(lambda: {"n": 0, "sum": 0.0, "max": (0.0, ""), "failed": 0})
    for line in p.stdout.splitlines():
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue
        if ev.get("type") != "test" or ev.get("event") not in ("ok", "failed"):
            continue
        name = ev["name"]
        family = name.split("::")[0]
        t = float(ev.get("exec_time", 0.0))
        f = fam[family]
        f["n"] += 1
        f["sum"] += t
        f["failed"] += ev["event"] == "failed"
        if t > f["max"][0]:
            f["max"] = (t, name)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rows = sorted(fam.items(), key=lambda kv: -kv[1]["sum"])
    lines = [
        f"## {datetime.date.today()} — test suite by family ({platform.node()}, "
        f"{os.cpu_count()} cores, load average {load:.1f} at the end)",
        "",
        f"One run of the suite binary: {sum(f['n'] for _, f in rows)} tests, wall {wall:.0f} s "
        "(tests run side by side, so the sums below add up to more).",
        "",
        "| family | tests | sum of test times | slowest test |",
        "|---|---:|---:|---|",
    ]
    for name, f in rows:
        failed = f" ({f['failed']} failed)" if f["failed"] else ""
        lines.append(
            f"| `{name}::` | {f['n']}{failed} | {f['sum']:.1f} s | `{f['max'][1]}` {f['max'][0]:.1f} s |"
        )
    table = "\n".join(lines) + "\n"
    print(table)
    if args.append:
        path = os.path.join(ROOT, "benches", "RESULTS.md")
        text = open(path).read()
        head, sep, rest = text.partition("\n## ")
        open(path, "w").write(head.rstrip("\n") + "\n\n" + table + "\n" + sep.lstrip("\n") + rest
                              if sep else text + "\n" + table)
    return 0 if p.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
