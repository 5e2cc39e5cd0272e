// spawn(): run `claude -p` under boo-normalize's supervisor and get its events.
import { envelopeFlags, type NormalizeOptions } from "./normalize.js";
import { Run } from "./run.js";

/** A duration: milliseconds, or boo-normalize's own syntax (`"30s"`, `"5m"`, `"1h 30m"`). */
export type Duration = number | string;

export interface Guards {
  /** Tools the agent may call (`mcp__github__*`: a prefix); built-in ones become claude's `--tools`. */
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
  /** The prompt (required unless claudeArgs resume or continue a session). */
  prompt?: string;
  /** claude's own arguments, e.g. `["--max-turns", "30", "--model", "sonnet"]`. */
  claudeArgs?: string[];
  /** Variables for claude, on top of spawn's allowlist. Values travel in the environment, never
   * on a command line. */
  env?: Record<string, string>;
  /** Pass boo-normalize's whole environment to claude (`--inherit-env`; credentials still dropped). */
  inheritEnv?: boolean;
  guards?: Guards;
  timeouts?: Timeouts;
  /** The claude executable (default: `$CLAUDE_BIN`, else `claude` on PATH). */
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
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [key, value] of Object.entries(options.env ?? {})) {
    env[key] = value;
    a.push("--env", key);
  }
  if (options.inheritEnv) a.push("--inherit-env");
  if (options.claudeBin) a.push("--claude-bin", options.claudeBin);
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
  a.push(...(options.args ?? []), "--", ...(options.claudeArgs ?? []));
  return new Run(a, { ...options, args: [], env });
}
