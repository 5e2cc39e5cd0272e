// spawn(): run `claude -p` (or another agent CLI: `agent`) under boo-normalize's supervisor and
// get its events.
import { envelopeFlags, type NormalizeOptions } from "./normalize.js";
import { Run } from "./run.js";

/** A duration: milliseconds, or boo-normalize's own syntax (`"30s"`, `"5m"`, `"1h 30m"`). */
export type Duration = number | string;

/** The agent CLIs `spawn` runs (`--agent`). */
export type AgentName = "claude" | "codex" | "gemini" | "qwen" | "opencode" | "copilot";

export interface Guards {
  /** Tools the agent may call (`mcp__github__*`: a prefix); built-in ones become claude's `--tools`.
   * For another agent, also a kind (`execute`, `read`, `edit`, …) or a Claude tool name (`Bash`,
   * `Read`, …) standing for the agent's tools of that kind. */
  allowTools?: string[];
  maxToolCalls?: number;
  /** N identical calls in a row (a doom loop), N ≥ 2. */
  maxRepeatCalls?: number;
  /** The child's stdout: bytes, or `"5MB"`, `"64KiB"`. */
  maxOutputBytes?: number | string;
  /** Stop the child on a violation (default: report it as a `policy.violation` event). */
  enforce?: boolean;
}

export interface Timeouts {
  /** The whole run (exit 124). */
  timeout?: Duration;
  /** No stdout line for this long (paused while a tool call is outstanding; exit 124). */
  idleTimeout?: Duration;
  /** `warn`: a `stall` event instead of stopping. */
  idleAction?: "stop" | "warn";
  /** One tool call that never returns. */
  toolTimeout?: Duration;
  /** Between the stop signals SIGINT → SIGTERM → SIGKILL (default 5 s). */
  grace?: Duration;
  /** Start the escalation at SIGTERM instead of SIGINT. */
  stopSignal?: "INT" | "TERM";
}

export interface SpawnOptions extends NormalizeOptions {
  /** The agent CLI to run (default `claude`); its JSON mode is added, its stream read by its
   * reader, its own keys and base URLs handled by the environment allowlist. */
  agent?: AgentName;
  /** The prompt (required unless the agent's arguments resume or continue a session). */
  prompt?: string;
  /** The agent's own arguments, e.g. `["--max-turns", "30"]` for claude, `["-s",
   * "workspace-write"]` for codex, `["--yolo"]` for gemini. */
  agentArgs?: string[];
  /** claude's own arguments (the same as `agentArgs`, which come after these). */
  claudeArgs?: string[];
  /** Variables for claude, on top of spawn's allowlist. Values travel in the environment, never
   * on a command line. */
  env?: Record<string, string>;
  /** Pass boo-normalize's whole environment to claude (`--inherit-env`; credentials still dropped). */
  inheritEnv?: boolean;
  guards?: Guards;
  timeouts?: Timeouts;
  /** The agent's executable (default: its name on PATH; for claude `$CLAUDE_BIN` first). */
  bin?: string;
  /** The claude executable (the same as `bin`, which wins). */
  claudeBin?: string;
  /** claude's stderr as `child.stderr` events instead of stderr lines. */
  stderrEvents?: boolean;
}

function duration(d: Duration): string {
  return typeof d === "number" ? `${Math.round(d)}ms` : d;
}

/**
 * Start `claude -p` supervised by `boo-normalize spawn`: `for await (const event of
 * spawn({ prompt }))`, then `await run.end`. Aborting `signal` stops claude with the
 * documented escalation and leaves no process behind.
 */
export function spawn(options: SpawnOptions): Run {
  const a = ["spawn", ...envelopeFlags(options)];
  if (options.agent) a.push("--agent", options.agent);
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [key, value] of Object.entries(options.env ?? {})) {
    env[key] = value;
    a.push("--env", key);
  }
  if (options.inheritEnv) a.push("--inherit-env");
  const bin = options.bin ?? options.claudeBin;
  if (bin) a.push("--bin", bin);
  if (options.stderrEvents) a.push("--stderr-events");
  const g = options.guards ?? {};
  if (g.allowTools) a.push("--allow-tools", g.allowTools.join(","));
  if (g.maxToolCalls !== undefined) a.push("--max-tool-calls", String(g.maxToolCalls));
  if (g.maxRepeatCalls !== undefined) a.push("--max-repeat-calls", String(g.maxRepeatCalls));
  if (g.maxOutputBytes !== undefined) a.push("--max-output-bytes", String(g.maxOutputBytes));
  if (g.enforce) a.push("--enforce");
  const t = options.timeouts ?? {};
  if (t.timeout !== undefined) a.push("--timeout", duration(t.timeout));
  if (t.idleTimeout !== undefined) a.push("--idle-timeout", duration(t.idleTimeout));
  if (t.idleAction) a.push("--idle-action", t.idleAction);
  if (t.toolTimeout !== undefined) a.push("--tool-timeout", duration(t.toolTimeout));
  if (t.grace !== undefined) a.push("--grace", duration(t.grace));
  if (t.stopSignal) a.push("--stop-signal", t.stopSignal);
  // `--prompt=TEXT`, so a prompt starting with `-` stays a value; spawn itself decides whether
  // claude gets it on argv or on stdin.
  if (options.prompt !== undefined) a.push(`--prompt=${options.prompt}`);
  a.push(...(options.args ?? []), "--", ...(options.claudeArgs ?? []), ...(options.agentArgs ?? []));
  return new Run(a, { ...options, args: [], env });
}
