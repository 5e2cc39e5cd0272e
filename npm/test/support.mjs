// Test helpers: the repository's fixtures, and a fake `claude` (boo-normalize replay
// --as-claude over a capture of a real run) with chosen timing.
import { chmodSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binaryPath } from "boo-normalize";

/** The repository checkout (the test runner sets BOO_REPO). */
export const repo = process.env.BOO_REPO ?? join(import.meta.dirname ?? ".", "../..");

export function fixture(rel) {
  return join(repo, "fixtures", rel);
}

/**
 * A shim script standing in for `claude`: it replays the stream-json file `rel` (a capture of a
 * real run) with `gapMs` between lines and exits `code`. Returns { shim, capture, dir }.
 */
export function fakeClaude(rel, { gapMs = 1, code = 0 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "boo-npm-test-"));
  const lines = readFileSync(fixture(rel), "utf8").split("\n").filter(Boolean);
  const recs = [
    { rec: "header", format: "boo-capture", version: 1, run_id: "r", start_unix_us: 0, source: "test", argv: null, cli_version: null },
    ...lines.map((line, i) => ({ rec: "out", at_us: i * gapMs * 1000, line })),
    { rec: "end", at_us: lines.length * gapMs * 1000, exit_code: code, signal: null, cli_version: null, run_end: { cause: "exit" } },
  ];
  const capture = join(dir, "run.capture.jsonl");
  writeFileSync(capture, recs.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const shim = join(dir, "claude");
  writeFileSync(shim, `#!/bin/sh\nexec '${binaryPath()}' replay --speed 1 --as-claude='${capture}' "$@"\n`);
  chmodSync(shim, 0o755);
  return { shim, capture, dir };
}

/** Pids of live processes whose command line mentions `needle` (Linux /proc). */
export function processesMentioning(needle) {
  const found = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      const state = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0];
      if (cmd.includes(needle) && state !== "Z") found.push(Number(pid));
    } catch {}
  }
  return found;
}

export async function collect(iterable) {
  const out = [];
  for await (const x of iterable) out.push(x);
  return out;
}
