#!/usr/bin/env python3
"""Generate a large ~/.claude/projects-like corpus for `boo-normalize sessions` timings.

Replicates the real transcripts of fixtures/transcripts/<version>/session/projects/ with new
session ids, message ids and request ids, spread over project directories, until the corpus
reaches --bytes (default 2 GB).  Every layout is kept (1.0.x inline sidechains, 2.0.x flat
agent-*.jsonl files, 2.1.x <session>/subagents/ with .meta.json).  The corpus is not committed.

    python3 benches/gen_transcripts.py /tmp/boo-tr-corpus --bytes 2000000000 --projects 200
"""

import argparse
import os
import random
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "fixtures", "transcripts")


def fixture_sessions():
    """[(version, project_dir, [(relpath, bytes)])]: each main session with its sidechain files."""
    out = []
    for ver in sorted(os.listdir(FIX)):
        proj_root = os.path.join(FIX, ver, "session", "projects")
        if not os.path.isdir(proj_root):
            continue
        for proj in os.listdir(proj_root):
            pdir = os.path.join(proj_root, proj)
            files = {}
            for dp, _, fs in os.walk(pdir):
                for f in fs:
                    p = os.path.join(dp, f)
                    files[os.path.relpath(p, pdir)] = open(p, "rb").read()
            out.append((ver, files))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--bytes", type=int, default=2_000_000_000)
    ap.add_argument("--projects", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    sets = fixture_sessions()
    total, n = 0, 0
    while total < a.bytes:
        ver, files = sets[n % len(sets)]
        proj = os.path.join(a.out, "-home-user-project-%03d" % rnd.randrange(a.projects))
        # Every session id of the fixture set gets a new one; message and request ids too.
        ids = {}
        for rel in files:
            base = os.path.basename(rel)
            if base.endswith(".jsonl") and not base.startswith("agent-") and "/" not in rel:
                ids[base[:-6].encode()] = str(uuid.UUID(int=rnd.getrandbits(128), version=4)).encode()
        tag = b"R%06d" % n
        for rel, data in files.items():
            for old, new in ids.items():
                data = data.replace(old, new)
                rel = rel.replace(old.decode(), new.decode())
            rel = rel.replace("agent-a", "agent-" + tag.decode().lower() + "a")
            data = data.replace(b'"msg_01', b'"msg_' + tag).replace(b'"req_01', b'"req_' + tag)
            data = data.replace(b'"agentId":"a', b'"agentId":"' + tag.lower() + b"a")
            p = os.path.join(proj, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(data)
            total += len(data)
        n += 1
    print("%d fixture sets, %d bytes under %s" % (n, total, a.out))


if __name__ == "__main__":
    main()
