// The installed package's client against the real binary: normalize real captures from every
// kind of input, typed failures, the tool pairing view and the AI SDK stream.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createReadStream, readFileSync } from "node:fs";
import { Readable } from "node:stream";
import { test } from "node:test";
import {
  BinaryNotFoundError,
  BooNormalizeError,
  EVENT_TYPES,
  binaryPath,
  normalize,
  tools,
} from "boo-normalize";
import { collect, fixture } from "./support.mjs";

const capture = fixture("real/backflow__agent-output-taskprogress.ndjson");
const expected = execFileSync(binaryPath(), [capture], { encoding: "utf8", maxBuffer: 1 << 26 })
  .trim()
  .split("\n")
  .map((l) => JSON.parse(l));

test("normalize a real capture: the same events as the CLI, run.end as a promise", async () => {
  const run = normalize(createReadStream(capture));
  const events = await collect(run);
  assert.deepEqual(events, expected);
  assert.equal(events[0].type, "session.init");
  const end = await run.end;
  assert.equal(end.type, "run.end");
  assert.equal(end.stats.lines, readFileSync(capture, "utf8").trim().split("\n").length);
  for (const e of events) assert.ok(EVENT_TYPES.includes(e.type), e.type);
});

test("every input kind: string, bytes, web stream, async iterable of chunks", async () => {
  const text = readFileSync(capture, "utf8");
  const bytes = readFileSync(capture);
  async function* chunks() {
    for (let i = 0; i < bytes.length; i += 777) yield bytes.subarray(i, i + 777);
  }
  for (const input of [text, bytes, Readable.toWeb(createReadStream(capture)), chunks()]) {
    const end = await normalize(input).end;
    assert.deepEqual(end, expected.at(-1));
  }
});

test("tools() pairs every call with its result", async () => {
  const uses = await collect(tools(normalize(readFileSync(capture))));
  const calls = expected.filter((e) => e.type === "tool.call");
  assert.ok(calls.length > 0);
  assert.equal(uses.length, calls.length);
  for (const use of uses) {
    assert.equal(use.call.tool_use_id, use.id);
    assert.ok(use.result, `${use.name} ${use.id} has a result`);
    assert.equal(use.result.tool_use_id, use.id);
    assert.equal(use.isError, use.result.is_error);
  }
});

test("failures are typed, with the binary's message and exit status", async () => {
  // --strict: every event still comes, then the failure (exit 1).
  const run = normalize("not json\n" + readFileSync(capture, "utf8"), { strict: true });
  const seen = [];
  await assert.rejects(
    async () => {
      for await (const e of run) seen.push(e);
    },
    (err) => err instanceof BooNormalizeError && err.exitCode === 1 && err.runEnd?.type === "run.end",
  );
  assert.equal(seen.at(-1).type, "run.end");
  assert.equal(seen[0].type, "diagnostic");
  await assert.rejects(run.end, BooNormalizeError);

  // A stream without a result line: exit 3 and the binary's own words.
  const init = readFileSync(capture, "utf8").split("\n")[0] + "\n";
  const err = await normalize(init).end.catch((e) => e);
  assert.ok(err instanceof BooNormalizeError);
  assert.equal(err.exitCode, 3);
  assert.match(err.message, /^boo-normalize: /);
  assert.equal(err.runEnd.terminal_seen, false);
  assert.equal((await normalize(init, { allowNoResult: true }).end).type, "run.end");

  // A usage error: exit 2, the message names the flag.
  const usage = await normalize("", { args: ["--no-such-flag"] }).end.catch((e) => e);
  assert.equal(usage.exitCode, 2);
  assert.match(usage.stderr, /--no-such-flag/);
});

test("a missing binary is a BinaryNotFoundError naming it", async () => {
  const saved = process.env.BOO_NORMALIZE_BINARY;
  process.env.BOO_NORMALIZE_BINARY = "/nonexistent/boo-normalize";
  try {
    const err = await normalize("").end.catch((e) => e);
    assert.ok(err instanceof BinaryNotFoundError, String(err));
    assert.match(err.message, /BOO_NORMALIZE_BINARY=\/nonexistent\/boo-normalize/);
  } finally {
    if (saved === undefined) delete process.env.BOO_NORMALIZE_BINARY;
    else process.env.BOO_NORMALIZE_BINARY = saved;
  }
});

test("breaking out of the loop stops the run", async () => {
  const run = normalize(createReadStream(capture));
  for await (const e of run) {
    assert.equal(e.type, "session.init");
    break;
  }
  await assert.rejects(run.end, BooNormalizeError);
});

test("the AI SDK UI message stream: chunks, and a Response for a route handler", async () => {
  const chunks = await collect(normalize(createReadStream(capture)).toUIMessageStream());
  assert.equal(chunks[0].type, "start");
  assert.equal(chunks.at(-1).type, "finish");
  assert.ok(chunks.some((c) => c.type === "text-delta" || c.type === "text-start"));
  assert.ok(chunks.some((c) => c.type === "tool-input-available"));

  const res = normalize(createReadStream(capture)).toResponse();
  assert.equal(res.headers.get("content-type"), "text/event-stream");
  assert.equal(res.headers.get("x-vercel-ai-ui-message-stream"), "v1");
  const body = await res.text();
  assert.match(body, /^data: \{"type":"start"/m);
  assert.match(body, /data: \[DONE\]\n\n$/);

  // Events and the UI stream from the same run.
  const run = normalize(readFileSync(capture));
  const ui = collect(run.toUIMessageStream());
  const end = await run.end;
  assert.equal(end.type, "run.end");
  assert.ok((await ui).length > 5);
});

test("a run that fails before writing the UI stream ends it instead of hanging", async () => {
  const run = normalize("", { args: ["--no-such-flag"] });
  const chunks = await collect(run.toUIMessageStream());
  assert.deepEqual(chunks, []);
  const err = await run.end.catch((e) => e);
  assert.equal(err.exitCode, 2);
});
