// An adapter in a few lines, type-checked by the test suite (`tsc --noEmit`) against the
// installed package: narrowing on `type`, run.end's totals, the tool view, typed errors.
import { createReadStream } from "node:fs";
import {
  AbortError,
  BooNormalizeError,
  normalize,
  spawn,
  tools,
  type EnvelopeEvent,
  type EventOf,
  type RunEndEvent,
} from "boo-normalize";

function describe(event: EnvelopeEvent): string {
  switch (event.type) {
    case "text":
      return event.text ?? "";
    case "tool.call":
      return `${event.name}(${JSON.stringify(event.input)})`;
    case "tool.result":
      return `${event.tool_use_id} ${event.is_error ? "failed" : "ok"}`;
    case "usage":
      return `${event.message_id}: ${event.provisional ? "provisional" : "final"}`;
    case "run.end":
      return `${event.cause}: ${event.usage.output_tokens} output tokens, $${event.cost_usd ?? 0}`;
    default:
      return event.type;
  }
}

export async function summarize(path: string): Promise<RunEndEvent> {
  const run = normalize(createReadStream(path), { keepBlobs: false });
  for await (const event of run) console.log(describe(event));
  return run.end;
}

export async function agent(prompt: string, signal: AbortSignal): Promise<number> {
  const run = spawn({
    prompt,
    claudeArgs: ["--max-turns", "30"],
    env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:8080" },
    guards: { allowTools: ["Read", "Grep"], maxRepeatCalls: 3, enforce: true },
    timeouts: { timeout: "30m", idleTimeout: 300_000 },
    signal,
  });
  try {
    for await (const use of tools(run)) {
      const call: EventOf<"tool.call"> = use.call;
      console.log(call.name, use.result?.is_error ?? "no result");
    }
    const end = await run.end;
    return end.tool_calls;
  } catch (err) {
    if (err instanceof AbortError) return -1;
    if (err instanceof BooNormalizeError) {
      console.error(err.message, err.exitCode, err.runEnd?.cause);
      return err.exitCode ?? 1;
    }
    throw err;
  }
}

export function route(req: Request): Response {
  return spawn({ prompt: "hi", signal: req.signal }).toResponse();
}

export function wrong(event: EnvelopeEvent): void {
  if (event.type === "text") {
    // @ts-expect-error: a text event has no tool name; the union is narrowed on `type`.
    console.log(event.name);
  }
}
