#!/usr/bin/env bash
# capture-agent.sh CLI VERSION [BOO_NORMALIZE]
#
# Real output of an agent CLI for fixtures: installs CLI@VERSION project-locally
# (install-agent.sh), runs `boo-normalize probe --agent CLI` against its loopback
# stand-in of the CLI's model API (offline, dummy key, isolated home), and copies
# each capture to fixtures/agents/CLI/VERSION/<scenario>.ndjson (a mode other than
# the agent's first as <scenario>.<mode>.ndjson; stderr beside it as
# .stderr.txt), replacing that version's rows in fixtures/agents/PROVENANCE.tsv.
# Captures are the CLI's stdout verbatim (ids, temp paths and all). With
# CAPTURE_SCENARIOS="a b" only those scenarios are run and replaced.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 CLI VERSION [BOO_NORMALIZE]" >&2; exit 2; }
CLI=$1 VERSION=$2
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BOO=${3:-$ROOT/target/debug/boo-normalize}
BIN=$("$HERE/install-agent.sh" "$CLI" "$VERSION")
VERSION=$(basename "$(dirname "$(dirname "$(dirname "$BIN")")")")
OUT=$ROOT/target/agent-probe/$CLI/$VERSION
rm -rf "$OUT"
status=0
picked=()
for s in ${CAPTURE_SCENARIOS:-}; do picked+=(--scenario "$s"); done
"$BOO" probe --agent "$CLI" --bin "$BIN" --out "$OUT" --keep-going "${picked[@]}" || status=$?
DEST=$ROOT/fixtures/agents/$CLI/$VERSION
[ -n "${CAPTURE_SCENARIOS:-}" ] || rm -rf "$DEST"
mkdir -p "$DEST"
python3 - "$OUT" "$DEST" "$CLI" "$VERSION" "$ROOT/fixtures/agents/PROVENANCE.tsv" <<'PY'
import datetime, json, os, shlex, shutil, sys
out, dest, cli, version, prov = sys.argv[1:]
s = json.load(open(os.path.join(out, "summary.json")))
first = s["modes"][0]
rows = []
for r in s["runs"]:
    base = r["scenario"] if r["mode"] == first else f'{r["scenario"]}.{r["mode"]}'
    src = os.path.join(out, r["file"])
    if not os.path.exists(src):
        continue
    shutil.copy(src, os.path.join(dest, base + ".ndjson"))
    err = src[: -len(".ndjson")] + ".stderr.txt"
    if os.path.exists(err) and os.path.getsize(err) > 0:
        shutil.copy(err, os.path.join(dest, base + ".stderr.txt"))
    cmd = " ".join(shlex.quote(a) for a in [cli] + r.get("args", []))
    if r.get("resume_args"):
        cmd += " && " + " ".join(shlex.quote(a) for a in [cli] + r["resume_args"])
    verdict = "ok" if not r.get("problems") else "FAILED: " + "; ".join(r["problems"])
    rows.append([f"{cli}/{version}/{base}.ndjson", cli, version, base, cmd,
                 str(r.get("exit")), datetime.date.today().isoformat(),
                 f"boo-normalize probe --agent {cli} (loopback stand-in of its model API, "
                 f"offline, dummy key, isolated HOME; tests/support/capture-agent.sh); {verdict}"])
head = ["file", "cli", "cli_version", "scenario", "command", "exit_code", "date", "how_produced"]
old = []
if os.path.exists(prov):
    with open(prov) as f:
        old = [l.rstrip("\n").split("\t") for l in f if l.strip()][1:]
new_files = {r[0] for r in rows}
partial = bool(os.environ.get("CAPTURE_SCENARIOS"))
old = [r for r in old
       if not (r[1] == cli and r[2] == version and (not partial or r[0] in new_files))]
with open(prov, "w") as f:
    for r in [head] + sorted(old + rows):
        f.write("\t".join(c.replace("\t", " ").replace("\n", "\\n") for c in r) + "\n")
PY
echo "$DEST"
exit $status
