// spawn() with the real claude CLI (the version the Rust tests install: 2.1.45, or
// BOO_CLAUDE_VERSION) against the loopback Messages API built into boo-normalize (`probe
// --serve-only`, which reads the script format of tests/support/fake_anthropic.py).
// Skipped unless BOO_CLAUDE_BIN names that CLI (tests/npm.rs sets it when the CLI is installed).
import assert from "node:assert/strict";
import { spawn as spawnProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { test } from "node:test";
import { binaryPath, spawn, tools } from "boo-normalize";
import { collect, repo } from "./support.mjs";

const claude = process.env.BOO_CLAUDE_BIN;

test("the real claude CLI against the loopback API: tool uses paired, run.end totals", { skip: !claude && "BOO_CLAUDE_BIN not set (no claude CLI installed by tests/npm.rs)" }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "boo-npm-claude-"));
  const home = join(dir, "home");
  const work = join(dir, "work");
  mkdirSync(home);
  mkdirSync(work);
  writeFileSync(join(work, "notes.txt"), "fixture notes\n");
  const script = join(dir, "script.json");
  writeFileSync(
    script,
    readFileSync(join(repo, "tests/support/scenarios/tools.json"), "utf8").replaceAll("@CWD@", work),
  );
  const portFile = join(dir, "port");
  const api = spawnProcess(binaryPath(), ["probe", "--serve-only", script, "--port-file", portFile], {
    stdio: "ignore",
  });
  t.after(() => {
    api.kill();
    rmSync(dir, { recursive: true, force: true });
  });
  let port;
  for (let i = 0; i < 400 && !port; i++) {
    try {
      port = Number(readFileSync(portFile, "utf8").trim()) || undefined;
    } catch {
      await sleep(50);
    }
  }
  assert.ok(port, "boo-normalize probe --serve-only started");

  const run = spawn({
    prompt: "Run `echo hello`, then read notes.txt and tell me what it says.",
    claudeBin: claude,
    cwd: work,
    env: {
      HOME: home,
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
      IS_SANDBOX: "1",
    },
    claudeArgs: ["--permission-mode", "bypassPermissions", "--settings", '{"apiKeyHelper":"echo sk-ant-helper-dummy-000"}'],
    timeouts: { timeout: "90s" },
  });
  const uses = await collect(tools(run));
  assert.deepEqual(
    uses.map((u) => [u.name, u.isError]),
    [
      ["Bash", false],
      ["Read", false],
    ],
  );
  assert.match(JSON.stringify(uses[0].result.content), /hello/);
  const end = await run.end;
  assert.equal(end.cause, "exit");
  assert.equal(end.exit_code, 0);
  assert.equal(end.terminal_seen, true);
  assert.equal(end.tool_calls, 2);
  assert.ok(end.usage.output_tokens > 0);
});
