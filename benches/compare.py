#!/usr/bin/env python3
"""Whole-binary benchmarks: boo-normalize's formats against wc -l, jq and a Python json loop, batch
work over a directory of captures on one thread and on every core, and a fresh clone's test suite.

Sections (each optional, --only picks some):

- formats: the mix (every fixtures/real capture concatenated 20 times, about 196 MB) through each
  output format; wall clock and CPU time (user + system, all threads) per format, best of N rounds
  run interleaved (A B C A B C ...) so that load drifting over time hits every command alike; ratios
  to the envelope from the same rounds, the audit sink's goal (issue 19: at most 1.3x the envelope's
  CPU and wall time), peak RSS on the mix and on one 50 MiB line.
- dir: a directory of >= 200 captures (fixtures and the shared corpus, copied until there are 200)
  through profile, diff and redact with BOO_NORMALIZE_THREADS=1 and with the default (every core
  not busy as the command starts), interleaved; goal: wall time on every core <= 0.6x one thread
  on an idle machine, never slower beside busy processes.
- fresh: `git clone` of this checkout, then `cargo test` in it (build and run timed apart); goal:
  <= 6 min on 2 cores. Slow (minutes); only with --only fresh or --fresh.

The load average is printed before and after each section. Results are appended to
benches/RESULTS.md as a dated section (newest first) unless --no-write.

With --base PATH (another build, e.g. the commit a branch started from), the formats section also
runs that binary's envelope and structured formats in the same interleaved rounds and says each
one's CPU against it (best of the rounds, and the median of the per-round ratios): a paired
comparison, the load hitting both alike.

    python3 benches/compare.py [--runs 5] [--no-build | --bin PATH] [--base PATH] [--no-write] [--only formats,dir] [--fresh]
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
BASE = None

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


# Exit statuses that are results, not failures: `diff` exits 1 when it finds drift (the two
# halves of the directory benchmark hold different CLI versions, so it does).
RESULT_EXITS = {"diff": {0, 1}}


def run_once(cmd, stdin_path, fresh=None):
    """(wall seconds, CPU seconds: user + system) of one run; `fresh`: a file removed before it,
    untimed (an audit log the command appends to)."""
    if fresh and os.path.exists(fresh):
        os.remove(fresh)
    with open(stdin_path, "rb") as stdin, open(os.devnull, "wb") as devnull:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdin=stdin, stdout=devnull, stderr=subprocess.PIPE)
        _, err = p.communicate()
        dt = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        sub = next((c for c in cmd if c in RESULT_EXITS), None)
        if p.returncode not in RESULT_EXITS.get(sub, {0}):
            sys.exit(f"{' '.join(cmd[:4])} failed ({p.returncode}): {err.decode(errors='replace')[:400]}")
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


def peak_rss_kb(cmd, stdin_path, fresh=None):
    """Peak RSS in KiB via GNU time (a fork of Python would report the interpreter's size)."""
    if fresh and os.path.exists(fresh):
        os.remove(fresh)
    timer = shutil.which("time") or "/usr/bin/time"
    with open(stdin_path, "rb") as i, open(os.devnull, "wb") as o:
        p = subprocess.run([timer, "-f", "%M"] + cmd, stdin=i, stdout=o, stderr=subprocess.PIPE, check=True)
    return int(p.stderr.decode().strip().splitlines()[-1])


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def interleaved(cmds, stdin_path, rounds, fresh=None):
    """Best wall and best CPU seconds per command over `rounds` interleaved rounds, and the
    largest CPU / wall of any of its runs (above 1: it ran on more than one core); `fresh`: per
    command name, a file removed (untimed) before each of its runs."""
    best = {name: [float("inf"), float("inf"), 0.0, []] for name, _ in cmds}
    for _ in range(rounds):
        for name, cmd in cmds:
            wall, cpu = run_once(cmd, stdin_path, (fresh or {}).get(name))
            best[name][0] = min(best[name][0], wall)
            best[name][1] = min(best[name][1], cpu)
            best[name][2] = max(best[name][2], cpu / wall if wall > 0 else 0.0)
            best[name][3].append(cpu)
    return best


def formats_section(a, tmp):
    mix = os.path.join(tmp, "mix.ndjson")
    build_mix(mix, a.copies)
    size = os.path.getsize(mix)
    with open(mix, "rb") as f:
        lines = sum(1 for _ in f)
    audit_file = os.path.join(tmp, "side.audit.jsonl")
    fast = [
        ("wc -l", ["wc", "-l"]),
        ("envelope", [BIN]),
        ("--format sse", [BIN, "--format", "sse"]),
        ("--format sse --sse-profile ai-sdk", [BIN, "--format", "sse", "--sse-profile", "ai-sdk"]),
        ("--format otlp", [BIN, "--format", "otlp"]),
        ("--format pretty", [BIN, "--format", "pretty", "--width", "100"]),
        ("replay --speed max --format pretty", [BIN, "replay", "--speed", "max", "--format", "pretty", "--width", "100", "-"]),
        ("--format audit", [BIN, "--format", "audit", "--run-id", "bench"]),
        # /dev/null would not do: the audit file is opened for appending and its tail read. It
        # is removed before each run, outside the timing (removing 400 MB costs CPU time too).
        ("--format sse --audit FILE", [BIN, "--format", "sse", "--run-id", "bench", "--audit", audit_file]),
    ]
    fresh = {"--format sse --audit FILE": audit_file}
    based = []
    if a.base:
        # The base binary's run of each, right after the one it is compared with.
        for name in ["envelope", "--format otlp", "--format sse --sse-profile ai-sdk", "--format pretty"]:
            i = next(i for i, (n, _) in enumerate(fast) if n == name)
            cmd = [BASE] + fast[i][1][1:]
            fast.insert(i + 1, (name + " (base)", cmd))
            based.append(name)
    slow = []
    if not a.skip_slow:
        if shutil.which("jq"):
            slow.append(("jq -cR 'fromjson? // {\"_unparsed\":.}'", ["jq", "-cR", 'fromjson? // {"_unparsed":.}']))
        slow.append(("python3 json loop", [sys.executable, "-c", PY_LOOP]))
    before = loadavg()
    best = interleaved(fast, mix, a.runs, fresh)
    best.update(interleaved(slow, mix, 1))
    after = loadavg()
    rss = {}
    for name, cmd in fast + slow:
        rss[name] = peak_rss_kb(cmd, mix, fresh.get(name))
    big = os.path.join(tmp, "huge.ndjson")
    big_size = huge_line(big)
    big_limit = 2 * big_size + 32 * (1 << 20)
    big_rss = [(fmt, peak_rss_kb([BIN, "--allow-no-result", "--format", fmt], big) * 1024) for fmt in ["envelope", "sse", "audit"]]

    env_wall, env_cpu = best["envelope"][:2]
    out = []
    out.append(f"### Formats on the mix")
    out.append("")
    out.append(f"Input: fixtures/real concatenated {a.copies}× = {size / 1e6:.1f} MB, {lines} lines, on stdin from a file, output to /dev/null. Best of {a.runs} interleaved rounds (jq and Python: 1 run). CPU is user + system time of all threads (the audit sink hashes on a second thread). Load average before {before}, after {after}.")
    out.append("")
    out.append("| command | wall s | CPU s | MB/s | peak RSS MiB | wall / envelope | CPU / envelope |")
    out.append("|---|---:|---:|---:|---:|---:|---:|")
    for name, _ in fast + slow:
        w, c = best[name][:2]
        r = f"{rss[name] / 1024:.1f}" if name in rss else "–"
        label = name if name in ("wc -l",) or name.startswith(("jq", "python")) else ("boo-normalize" + ("" if name == "envelope" else " " + name))
        if name.endswith(" (base)"):
            label = "base " + label[: -len(" (base)")].replace("boo-normalize envelope", "boo-normalize")
        out.append(f"| `{label}` | {w:.3f} | {c:.3f} | {size / w / 1e6:.0f} | {r} | {w / env_wall:.2f}× | {c / env_cpu:.2f}× |")
    out.append("")
    out.append(f"One {big_size / (1 << 20):.1f} MiB line (a tool result of file contents): peak RSS " + ", ".join(f"{f} {r / (1 << 20):.0f} MiB" for f, r in big_rss) + f"; limit 2 × line + 32 MiB = {big_limit / (1 << 20):.0f} MiB: " + ("met" if all(r <= big_limit for _, r in big_rss) else "NOT met") + ".")
    out.append("")
    for name in ["--format audit", "--format sse --audit FILE"]:
        w, c = best[name][:2]
        base = best["--format sse"] if "--audit" in name else best["envelope"]
        what = "the SSE format alone" if "--audit" in name else "the envelope"
        wr, cr = w / base[0], c / base[1]
        ok = wr <= 1.3 and cr <= 1.3
        out.append(f"- audit goal (issue 19 §1: ≤ 1.3× {what}'s CPU and wall time), `{name}`: CPU {cr:.2f}×, wall {wr:.2f}×: {'met' if ok else 'not met'}")
    for name in based:
        new, old = best[name], best[name + " (base)"]
        ratios = sorted(n / o for n, o in zip(new[3], old[3]) if o > 0)
        median = ratios[len(ratios) // 2] if ratios else float("nan")
        out.append(f"- `{name}` against the base binary ({os.path.basename(BASE)}): CPU {new[1] / old[1]:.3f}× (best of {a.runs} rounds each: {new[1]:.3f} s / {old[1]:.3f} s), median of the {len(ratios)} paired rounds' ratios {median:.3f}×")
    if "wc -l" in best:
        out.append(f"- envelope / wc -l: {env_wall / best['wc -l'][0]:.1f}× slower")
    for name in best:
        if name.startswith("jq"):
            out.append(f"- jq / envelope: {best[name][0] / env_wall:.1f}× faster")
        if name.startswith("python"):
            out.append(f"- python / envelope: {best[name][0] / env_wall:.1f}× faster")
    return out


def captures():
    """Every capture shipped in fixtures/ and the shared corpus, if present."""
    found = []
    for top in [os.path.join(ROOT, "fixtures"), os.path.join(ROOT, "..", "shared", "corpus", "real")]:
        for d, _, files in os.walk(top):
            found += [os.path.join(d, f) for f in sorted(files) if f.endswith(".ndjson")]
    return sorted(found)


def dir_section(a, tmp):
    src = captures()
    base = os.path.join(tmp, "captures")
    files = []
    copy = 0
    while len(files) < a.dir_files:
        for f in src:
            if len(files) >= a.dir_files and copy > 0:
                break
            d = os.path.join(base, f"copy{copy}")
            os.makedirs(d, exist_ok=True)
            dst = os.path.join(d, f"{len(files):04d}-{os.path.basename(f)}")
            shutil.copyfile(f, dst)
            files.append(dst)
        copy += 1
    total = sum(os.path.getsize(f) for f in files)
    half = len(files) // 2
    old_dir, new_dir = os.path.join(tmp, "old"), os.path.join(tmp, "new")
    for d, part in [(old_dir, files[:half]), (new_dir, files[half:])]:
        os.makedirs(d)
        for f in part:
            os.link(f, os.path.join(d, os.path.basename(f)))
    jobs = [
        ("profile DIR", [BIN, "profile", base]),
        ("diff OLD NEW", [BIN, "diff", old_dir, new_dir]),
        ("redact FILE…", [BIN, "redact"] + files),
    ]
    cmds = []
    for name, cmd in jobs:
        # BOO_NORMALIZE_THREADS, and its older name for binaries from before it (--bin).
        cmds.append((name + " 1", ["env", "BOO_NORMALIZE_THREADS=1", "RAYON_NUM_THREADS=1"] + cmd))
        cmds.append((name + " all", ["env", "-u", "BOO_NORMALIZE_THREADS", "-u", "RAYON_NUM_THREADS"] + cmd))
    before = loadavg()
    best = interleaved(cmds, os.devnull, a.runs)
    after = loadavg()
    # The same under load: one busy process per core but one, so the pool has a core to itself
    # and shares the others (goal: never slower than one thread).
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(max(1, (os.cpu_count() or 2) - 1))]
    try:
        # Twice the rounds: the load makes single runs noisier, and both sides are best-of.
        loaded = interleaved(cmds, os.devnull, 2 * a.runs)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    out = ["### Batch work over a directory of captures", ""]
    out.append(f"Input: {len(files)} captures ({total / 1e6:.1f} MB; fixtures/ and the shared corpus, copied until there are {a.dir_files}); diff compares the first half with the second. Best of {a.runs} interleaved rounds ({2 * a.runs} under load), output to /dev/null, BOO_NORMALIZE_THREADS=1 against every core ({os.cpu_count()}). Load average before {before}, after {after}.")
    out.append("")
    out.append("| command | 1 thread wall s | every core wall s | ratio | 1 thread CPU s | every core CPU s | under load: 1 thread / every core wall s | ratio |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, _ in jobs:
        w1, c1 = best[name + " 1"][:2]
        wn, cn = best[name + " all"][:2]
        l1, ln = loaded[name + " 1"][0], loaded[name + " all"][0]
        out.append(f"| `boo-normalize {name}` | {w1:.3f} | {wn:.3f} | {wn / w1:.2f}× | {c1:.3f} | {cn:.3f} | {l1:.3f} / {ln:.3f} | {ln / l1:.2f}× |")
    out.append("")
    worst = max(best[n + " all"][0] / best[n + " 1"][0] for n, _ in jobs)
    worst_loaded = max(loaded[n + " all"][0] / loaded[n + " 1"][0] for n, _ in jobs)
    out.append(f"- batch goal (issue 19 §3: every core ≤ 0.6× one thread's wall time on an idle machine): worst ratio {worst:.2f}×: {'met' if worst <= 0.6 else 'not met'}")
    # Under load the default should pick one thread: then both sides run the same code and a
    # ratio a little over 1 is run-to-run noise, not a slower batch.
    one_thread = all(loaded[n + " all"][2] < 1.15 for n, _ in jobs)
    if worst_loaded <= 1.0:
        verdict = "never slower than one thread"
    elif one_thread and worst_loaded <= 1.03:
        verdict = "the default ran one thread in every run, as BOO_NORMALIZE_THREADS=1 does: the same work, the difference is noise"
    else:
        verdict = "SLOWER than one thread"
    out.append(f"- under load ({len(hogs)} busy process{'es' if len(hogs) > 1 else ''} beside it): worst ratio {worst_loaded:.2f}× ({verdict})")
    return out


def fresh_section(a, tmp):
    clone = os.path.join(tmp, "clone")
    subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
    shared = os.path.join(ROOT, "..", "shared")
    if os.path.isdir(shared) and not os.path.exists(os.path.join(tmp, "shared")):
        os.symlink(os.path.abspath(shared), os.path.join(tmp, "shared"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CARGO_TARGET")}
    before = loadavg()
    t = time.perf_counter()
    subprocess.run(["cargo", "test", "--no-run", "-q"], cwd=clone, env=env, check=True, stderr=subprocess.DEVNULL)
    build = time.perf_counter() - t
    t = time.perf_counter()
    p = subprocess.run(["cargo", "test", "-q"], cwd=clone, env=env, capture_output=True)
    run = time.perf_counter() - t
    after = loadavg()
    passed = sum(int(w) for line in p.stdout.decode(errors="replace").splitlines() if line.startswith("test result:") for w in [line.split()[3]])
    total = build + run
    out = ["### A fresh clone's test suite", ""]
    out.append(f"`git clone` of this checkout, then `cargo test` (the README's test command) in it: build {build:.0f} s, run {run:.0f} s, total {total / 60:.1f} min; {passed} tests passed, exit status {p.returncode}. Load average before {before}, after {after}.")
    out.append("")
    out.append(f"- test-suite goal (issue 19 §4: ≤ 6 min on 2 cores, build included): {'met' if total <= 360 and p.returncode == 0 else 'not met'}")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--copies", type=int, default=20)
    ap.add_argument("--dir-files", type=int, default=200)
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--skip-slow", action="store_true", help="skip jq and python")
    ap.add_argument("--only", default="formats,dir", help="comma-separated sections: formats, dir, fresh")
    ap.add_argument("--fresh", action="store_true", help="also time a fresh clone's cargo test")
    ap.add_argument("--bin", help="time this boo-normalize binary instead of building target/release's")
    ap.add_argument("--base", help="also time this binary (formats section), paired with --bin's")
    a = ap.parse_args()
    global BIN, BASE
    if a.base:
        BASE = os.path.abspath(a.base)
    if a.bin:
        BIN = os.path.abspath(a.bin)
        a.no_build = True
    sections = set(a.only.split(","))
    if a.fresh:
        sections.add("fresh")
    if not a.no_build and sections & {"formats", "dir"}:
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    tmp = tempfile.mkdtemp(prefix="boo-bench-")
    out = [f"## {datetime.date.today().isoformat()} — {platform.node()} ({os.cpu_count()} cores, {platform.machine()}, {platform.release()})", ""]
    try:
        for name, section in [("formats", formats_section), ("dir", dir_section), ("fresh", fresh_section)]:
            if name in sections:
                part = section(a, tmp)
                print("\n".join(part) + "\n", flush=True)
                out += part + [""]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text = "\n".join(out)
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


if __name__ == "__main__":
    main()
