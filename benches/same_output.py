#!/usr/bin/env python3
"""Two builds, the same output: every fixture (each .ndjson and .jsonl under fixtures/) through
every output format and view of build A and of build B, compared byte for byte. For a change
that must not change what anyone sees (a new reader of the events, a speed-up).

Formats: envelope, audit, sse, sse --sse-profile ai-sdk, otlp, pretty (plain, colored with full
thinking and long results, ASCII and narrow) and report (HTML, --now 0). What differs from one
run to the next even with one build (run ids, trace and span ids, times, the audit chain's
hashes) is masked in both before comparing. Each input's exit status and stderr are compared
too.

    python3 benches/same_output.py --a OLD_BINARY --b NEW_BINARY [--only FORMAT,...] [PATH ...]

Prints one line per difference (format, fixture, the first differing line of each) and a
count; exit status 1 when anything differs, 0 when all is the same.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FORMATS = {
    "envelope": ["--format", "envelope"],
    "audit": ["--format", "audit"],
    "sse": ["--format", "sse"],
    "ai-sdk": ["--format", "sse", "--sse-profile", "ai-sdk"],
    "otlp": ["--format", "otlp"],
    "pretty": ["--format", "pretty", "--color", "never"],
    "pretty-full": [
        "--format", "pretty", "--color", "always", "--thinking", "full",
        "--result-lines", "40", "--width", "160",
    ],
    "pretty-ascii": ["--format", "pretty", "--ascii", "--width", "48"],
    "report": ["report", "--now", "0", "-o", "-"],
}

# Values that change from run to run with one build.
MASKS = [
    (re.compile(rb'"(run_id|ts|hash|prev|prev_hash|mono_us)":("[^"]*"|-?[0-9]+)'), rb'"\1":"*"'),
    (re.compile(rb'"(traceId|spanId|parentSpanId)":"[0-9a-f]*"'), rb'"\1":"*"'),
    (re.compile(rb'"([a-zA-Z]*[tT]imeUnixNano)":"[0-9]*"'), rb'"\1":"*"'),
    (re.compile(rb"/tmp/\.tmp[A-Za-z0-9]+"), rb"/tmp/.tmpX"),
    (re.compile(rb'[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}'), rb"UUIDv7"),
]


def mask(b):
    for rx, to in MASKS:
        b = rx.sub(to, b)
    return b


def inputs(paths):
    found = []
    for p in paths:
        if os.path.isfile(p):
            found.append(p)
            continue
        for d, _, files in os.walk(p):
            for f in files:
                if f.endswith((".ndjson", ".jsonl")):
                    found.append(os.path.join(d, f))
    return sorted(found)


def run(binary, args, path):
    cmd = [binary] + args + [path]
    env = dict(os.environ, NO_COLOR="", TERM="dumb")
    env.pop("NO_COLOR")
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=300)
    return p.returncode, mask(p.stdout), mask(p.stderr)


def first_difference(a, b):
    la, lb = a.split(b"\n"), b.split(b"\n")
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return i + 1, x[:160], y[:160]
    return min(len(la), len(lb)) + 1, b"(end)", b"(end)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", required=True, help="the build to compare against (e.g. main's)")
    ap.add_argument("--b", required=True, help="the build under test")
    ap.add_argument("--only", help="comma-separated formats (default: all): " + ",".join(FORMATS))
    ap.add_argument("paths", nargs="*", default=[os.path.join(ROOT, "fixtures")])
    o = ap.parse_args()
    formats = o.only.split(",") if o.only else list(FORMATS)
    files = inputs(o.paths)
    diffs = 0
    runs = 0
    for name in formats:
        args = FORMATS[name]
        for f in files:
            ra, rb = run(o.a, args, f), run(o.b, args, f)
            runs += 1
            if ra == rb:
                continue
            diffs += 1
            rel = os.path.relpath(f, ROOT)
            if ra[0] != rb[0]:
                print(f"{name}\t{rel}\texit {ra[0]} != {rb[0]}")
            for what, x, y in (("stdout", ra[1], rb[1]), ("stderr", ra[2], rb[2])):
                if x != y:
                    line, lx, ly = first_difference(x, y)
                    print(f"{name}\t{rel}\t{what} line {line}:\n  a: {lx!r}\n  b: {ly!r}")
    print(f"{runs} runs ({len(files)} inputs x {len(formats)} formats), {diffs} differ")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
