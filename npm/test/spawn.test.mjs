// spawn() against the project's drop-in fake claude (`boo-normalize replay --as-claude` over a
// real captured run): events, run.end, guards as typed errors, and AbortSignal mid-run leaving
// no process behind.
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { test } from "node:test";
import { AbortError, BooNormalizeError, spawn, tools } from "boo-normalize";
import { collect, fakeClaude, processesMentioning } from "./support.mjs";

const RUN = "captured/2.1.45/tools.partial.ndjson";

test("spawn the fake claude: typed events, tool pairs and run.end", async (t) => {
  const fake = fakeClaude(RUN);
  t.after(() => rmSync(fake.dir, { recursive: true, force: true }));
  const run = spawn({ prompt: "fix the tests", claudeBin: fake.shim, claudeArgs: ["--max-turns", "3"] });
  const uses = await collect(tools(run));
  assert.ok(uses.length >= 2);
  assert.ok(uses.every((u) => u.result !== null));
  const end = await run.end;
  assert.equal(end.cause, "exit");
  assert.equal(end.exit_code, 0);
  assert.equal(end.terminal_seen, true);
  assert.ok(end.tool_calls >= 2);
});

test("a guard with enforce stops the run: BooNormalizeError with exit 125 and run.end", async (t) => {
  const fake = fakeClaude(RUN);
  t.after(() => rmSync(fake.dir, { recursive: true, force: true }));
  const events = [];
  const err = await (async () => {
    for await (const e of spawn({
      prompt: "fix the tests",
      claudeBin: fake.shim,
      guards: { maxToolCalls: 1, enforce: true },
      timeouts: { grace: 200 },
    })) {
      events.push(e);
    }
  })().catch((e) => e);
  assert.ok(err instanceof BooNormalizeError, String(err));
  assert.equal(err.exitCode, 125);
  assert.equal(err.runEnd.cause, "killed");
  assert.equal(err.runEnd.reason, "policy");
  assert.ok(events.some((e) => e.type === "policy.violation" && e.enforced));
});

test("claude not found: exit 127, run.end says spawn_failed", async () => {
  const err = await spawn({ prompt: "hi", claudeBin: "/nonexistent/claude" }).end.catch((e) => e);
  assert.ok(err instanceof BooNormalizeError);
  assert.equal(err.exitCode, 127);
  assert.equal(err.runEnd.cause, "spawn_failed");
  assert.match(err.message, /^boo-normalize: /);
});

test("abort mid-run: AbortError, the documented escalation, no process left", async (t) => {
  // 150 ms between lines: the run would take several seconds.
  const fake = fakeClaude(RUN, { gapMs: 150 });
  t.after(() => rmSync(fake.dir, { recursive: true, force: true }));
  const controller = new AbortController();
  const run = spawn({
    prompt: "fix the tests",
    claudeBin: fake.shim,
    timeouts: { grace: 300 },
    signal: controller.signal,
  });
  const started = Date.now();
  const seen = [];
  const err = await (async () => {
    for await (const e of run) {
      seen.push(e);
      if (e.type === "session.init") {
        assert.ok(processesMentioning(fake.capture).length > 0, "the fake claude runs");
        controller.abort(new Error("user cancelled"));
      }
    }
  })().catch((e) => e);
  assert.ok(err instanceof AbortError, String(err));
  assert.equal(err.name, "AbortError");
  assert.equal(err.cause.message, "user cancelled");
  assert.equal(err.exitCode, 143, err.stderr);
  assert.equal(err.runEnd.cause, "interrupted");
  assert.equal(err.runEnd.reason, "SIGTERM");
  assert.equal(seen.at(-1).type, "run.end");
  assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
  await assert.rejects(run.end, AbortError);
  assert.deepEqual(processesMentioning(fake.capture), [], "no process of the run is left");
  assert.throws(() => process.kill(run.pid, 0), { code: "ESRCH" });
});

test("an already aborted signal never starts the run", async () => {
  const err = await spawn({ prompt: "hi", claudeBin: "/nonexistent/claude", signal: AbortSignal.abort() }).end.catch(
    (e) => e,
  );
  assert.ok(err instanceof AbortError);
  assert.equal(err.exitCode, null);
});

test("agent: codex — its stream read by its reader; allowTools by Claude's name or kind", async (t) => {
  // A drop-in codex: a real `codex exec --json` capture (0.171.0, one shell call) replayed.
  const fake = fakeClaude("agents/codex/0.171.0/bash.ndjson");
  t.after(() => rmSync(fake.dir, { recursive: true, force: true }));
  const run = spawn({ agent: "codex", prompt: "run echo hello", bin: fake.shim, guards: { allowTools: ["Bash"], enforce: true } });
  const events = await collect(run);
  const end = await run.end;
  assert.equal(end.agent, "codex");
  assert.equal(end.cause, "exit");
  const call = events.find((e) => e.type === "tool.call");
  assert.equal(call.name, "command_execution");
  assert.equal(call.kind, "execute");
  assert.ok(!events.some((e) => e.type === "policy.violation"), "Bash allows codex's shell call");

  const err = await spawn({
    agent: "codex",
    prompt: "run echo hello",
    bin: fake.shim,
    guards: { allowTools: ["read"], enforce: true },
  }).end.catch((e) => e);
  assert.ok(err instanceof BooNormalizeError, String(err));
  assert.equal(err.exitCode, 125);
  assert.equal(err.runEnd.reason, "policy");
});

test("agent: gemini not found: exit 127 naming its own binary", async () => {
  const err = await spawn({ agent: "gemini", prompt: "hi", bin: "/nonexistent/gemini" }).end.catch((e) => e);
  assert.ok(err instanceof BooNormalizeError);
  assert.equal(err.exitCode, 127);
  assert.equal(err.runEnd.cause, "spawn_failed");
  assert.match(err.message, /\/nonexistent\/gemini: no such file/);
});
