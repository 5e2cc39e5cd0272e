#!/usr/bin/env python3
"""CPU per MB of each dialect reader (issue 38): every agent's captures (fixtures/agents/<cli>/:
the real ones where there are, the documented streams for Cursor and Amp) concatenated until the
stream is 100 MB, against the Claude reader on the mix (fixtures/real concatenated 20 times,
about 196 MB). `BIN FILE > /dev/null`, the dialect recognised from the content; CPU is user +
system time. The issue's goal: each reader within 1.5x the Claude reader's CPU per MB.

With --base PATH, that build runs each input too, right after --bin (paired: the load hits both
alike). Prints a markdown table; writes nothing.

    python3 benches/dialects.py [--bin PATH] [--base PATH] [--runs 1] [--mb 100] [--only codex,gemini]
"""
import argparse
import glob
import os
import resource
import shutil
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AGENTS = os.path.join(ROOT, "fixtures", "agents")

# (row name, folder, captures: real releases or the documented streams)
DIALECTS = [
    ("Codex", "codex", "real"),
    ("Gemini CLI", "gemini", "real"),
    ("Qwen Code", "qwen", "real"),
    ("OpenCode", "opencode", "real"),
    ("Copilot CLI", "copilot", "real"),
    ("Cursor", "cursor", "documented"),
    ("Amp", "amp", "documented"),
]


def sources(folder, kind):
    base = os.path.join(AGENTS, folder)
    if kind == "real":
        files = glob.glob(os.path.join(base, "*", "*.ndjson")) + glob.glob(
            os.path.join(base, "*", "*.jsonl")
        )
    else:
        files = glob.glob(os.path.join(base, "documented-*.jsonl"))
    return sorted(files)


def scaled(files, path, mb):
    """Concatenate `files` (each ending its last line) until `path` holds at least `mb` MB."""
    chunk = b""
    for f in files:
        with open(f, "rb") as src:
            b = src.read()
        chunk += b if b.endswith(b"\n") else b + b"\n"
    copies = max(1, -(-mb * 1_000_000 // len(chunk)))
    with open(path, "wb") as out:
        for _ in range(copies):
            out.write(chunk)


def mix(path):
    files = sorted(glob.glob(os.path.join(ROOT, "fixtures", "real", "*.ndjson")))
    with open(path, "wb") as out:
        for _ in range(20):
            for f in files:
                with open(f, "rb") as src:
                    shutil.copyfileobj(src, out)


def cpu_of(binary, path):
    """CPU seconds (user + system) of one run, and its exit status."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.devnull, "wb") as devnull:
        rc = subprocess.run([binary, path], stdout=devnull, stderr=devnull).returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, rc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "boo-normalize"))
    ap.add_argument("--base")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--only")
    a = ap.parse_args()
    only = set(a.only.split(",")) if a.only else None
    with tempfile.TemporaryDirectory() as tmp:
        inputs = [("Claude (stream-json)", "real", os.path.join(tmp, "mix.ndjson"))]
        mix(inputs[0][2])
        for name, folder, kind in DIALECTS:
            if only and folder not in only:
                continue
            p = os.path.join(tmp, folder + ".ndjson")
            scaled(sources(folder, kind), p, a.mb)
            inputs.append((name, kind, p))
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        bins = [("new", a.bin)] + ([("base", a.base)] if a.base else [])
        rows = []
        claude = {}
        for name, kind, p in inputs:
            size = os.path.getsize(p)
            with open(p, "rb") as f:
                lines = sum(1 for _ in f)
            best = {}
            for _ in range(a.runs):
                for label, b in bins:
                    cpu, rc = cpu_of(b, p)
                    best[label] = min(best.get(label, cpu), cpu)
            if not claude:
                claude = {k: v / size for k, v in best.items()}
            rows.append((name, kind, size, lines, best))
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        head = "| input | source | MB | lines | bytes/line | CPU s | ms/MB | × Claude |"
        sep = "|---|---|---:|---:|---:|---:|---:|---:|"
        if a.base:
            head += " base CPU s | base ms/MB | base × Claude | new / base |"
            sep += "---:|---:|---:|---:|"
        print(head)
        print(sep)
        for name, kind, size, lines, best in rows:
            mb = size / 1e6
            cells = [name, kind, f"{mb:.1f}", f"{lines:,}", f"{size / lines:,.0f}"]
            for label, _ in bins:
                cpu = best[label]
                cells += [f"{cpu:.2f}", f"{cpu / mb * 1000:.1f}", f"{cpu / size / claude[label]:.1f}"]
            if a.base:
                cells.append(f"{best['new'] / best['base']:.2f}")
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    t = time.time()
    main()
    print(f"({time.time() - t:.0f} s)")
