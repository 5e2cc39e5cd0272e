// The AI SDK helpers against the real `ai` package: a Node HTTP route returning run.toResponse()
// (the Express/Next.js path) read by DefaultChatTransport + readUIMessageStream as useChat does,
// and run.toUIMessageStream() fed straight to readUIMessageStream.
import assert from "node:assert/strict";
import { createReadStream } from "node:fs";
import { createServer } from "node:http";
import { Readable } from "node:stream";
import { test } from "node:test";
import { DefaultChatTransport, readUIMessageStream } from "ai";
import { binaryPath, normalize } from "boo-normalize";
import { execFileSync } from "node:child_process";
import { fixture } from "./support.mjs";

const capture = fixture("real/backflow__agent-output-taskprogress.ndjson");
const events = execFileSync(binaryPath(), [capture], { encoding: "utf8", maxBuffer: 1 << 26 })
  .trim()
  .split("\n")
  .map((l) => JSON.parse(l));
// The message holds the main thread's parts (subagents' events have a parent_tool_use_id).
const calls = events.filter((e) => e.type === "tool.call" && e.parent_tool_use_id === null);
const failed = new Set(events.filter((e) => e.type === "tool.result" && e.is_error).map((e) => e.tool_use_id));

async function lastMessage(stream) {
  const errors = [];
  let message;
  for await (const m of readUIMessageStream({ stream, terminateOnError: false, onError: (e) => errors.push(e) })) {
    message = m;
  }
  assert.deepEqual(errors, []);
  return message;
}

function checkMessage(message) {
  assert.equal(message.role, "assistant");
  const tools = message.parts.filter((p) => p.type.startsWith("tool-") || p.type === "dynamic-tool");
  assert.equal(tools.length, calls.length, JSON.stringify(message.parts.map((p) => p.type)));
  assert.deepEqual(
    tools.map((p) => [p.toolCallId, p.state]),
    calls.map((c) => [c.tool_use_id, failed.has(c.tool_use_id) ? "output-error" : "output-available"]),
  );
  const text = message.parts.filter((p) => p.type === "text").map((p) => p.text).join("");
  const expected = events.filter((e) => e.type === "text" && e.parent_tool_use_id === null).map((e) => e.text);
  for (const t of expected) assert.ok(text.includes(t.slice(0, 40)), t.slice(0, 40));
}

test("toResponse() from a Node HTTP route, read like useChat", async (t) => {
  const server = createServer((req, res) => {
    const response = normalize(createReadStream(capture)).toResponse();
    res.writeHead(response.status, Object.fromEntries(response.headers));
    Readable.fromWeb(response.body).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const transport = new DefaultChatTransport({ api: `http://127.0.0.1:${server.address().port}/api/chat` });
  const stream = await transport.sendMessages({
    chatId: "boo-normalize-test",
    messages: [],
    trigger: "submit-message",
    messageId: undefined,
    abortSignal: undefined,
  });
  checkMessage(await lastMessage(stream));
});

test("toUIMessageStream() straight into readUIMessageStream", async () => {
  checkMessage(await lastMessage(normalize(createReadStream(capture)).toUIMessageStream()));
});
