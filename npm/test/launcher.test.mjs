// The `boo-normalize` bin launcher of the installed package: stdio and exit status pass
// through, and a SIGTERM sent to the launcher alone reaches the binary (no orphan left).
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fakeClaude, fixture, processesMentioning } from "./support.mjs";

const launcher = join(process.cwd(), "node_modules/.bin/boo-normalize");

test("the launcher passes stdio and the exit status through", () => {
  const ok = spawnSync(launcher, [fixture("real/backflow__agent-output-taskprogress.ndjson")], { encoding: "utf8" });
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(JSON.parse(ok.stdout.trim().split("\n").at(-1)).type, "run.end");
  const bad = spawnSync(launcher, ["--no-such-flag"], { encoding: "utf8" });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--no-such-flag/);
});

test("SIGTERM to the launcher stops the binary and the launcher dies of it", async (t) => {
  // The binary replays a slow capture (as a fake claude would): a long-running child.
  const fake = fakeClaude("captured/2.1.45/tools.partial.ndjson", { gapMs: 300 });
  t.after(() => rmSync(fake.dir, { recursive: true, force: true }));
  const child = spawn(launcher, ["replay", "--speed", "1", `--as-claude=${fake.capture}`], { stdio: ["ignore", "pipe", "ignore"] });
  await new Promise((resolve) => child.stdout.once("data", resolve));
  assert.ok(processesMentioning(fake.capture).length > 0);
  child.kill("SIGTERM");
  const [code, signal] = await new Promise((resolve) => child.once("exit", (c, s) => resolve([c, s])));
  assert.equal(signal, "SIGTERM", `exit code ${code}`);
  for (let i = 0; i < 50 && processesMentioning(fake.capture).length; i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(processesMentioning(fake.capture), []);
});
