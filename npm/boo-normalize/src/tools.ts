// tools(): the tool-call pairing every adapter writes by hand — each call with its result.
import type { EnvelopeEvent, ToolCallEvent, ToolResultEvent } from "./envelope.js";

/** One tool use: the call and, once it came, its result. */
export interface ToolUse {
  /** null when the CLI's tool_use block had no id (call.violation says so): never paired. */
  id: string | null;
  /** null when the block had no name. */
  name: string | null;
  /** The parsed input (null when assembled fragments did not parse: see call.input_error). */
  input: unknown;
  /** Inside a subagent: the Task/Agent call that started it (else null). */
  parentToolUseId: string | null;
  call: ToolCallEvent;
  /** null when the run ended before the result came (stopped, timed out, cut). */
  result: ToolResultEvent | null;
  isError: boolean;
}

/**
 * Pair `tool.call` with `tool.result` events: yields each tool use when its result arrives (in
 * result order), then, when the events end, the calls that never got one (`result: null`).
 * Results without a call (a resumed session's) are skipped.
 */
export async function* tools(
  events: AsyncIterable<EnvelopeEvent> | Iterable<EnvelopeEvent>,
): AsyncGenerator<ToolUse> {
  const pending = new Map<string, ToolCallEvent>();
  // Calls without an id can never be paired: they come out with the unanswered ones.
  const unpaired: ToolCallEvent[] = [];
  for await (const event of events) {
    if (event.type === "tool.call") {
      if (event.tool_use_id === null) unpaired.push(event);
      else pending.set(event.tool_use_id, event);
    } else if (event.type === "tool.result") {
      if (event.tool_use_id === null) continue;
      const call = pending.get(event.tool_use_id);
      if (!call) continue;
      pending.delete(event.tool_use_id);
      yield use(call, event);
    }
  }
  for (const call of [...pending.values(), ...unpaired]) yield use(call, null);
}

function use(call: ToolCallEvent, result: ToolResultEvent | null): ToolUse {
  return {
    id: call.tool_use_id,
    name: call.name,
    input: call.input,
    parentToolUseId: call.parent_tool_use_id,
    call,
    result,
    isError: result?.is_error === true,
  };
}
