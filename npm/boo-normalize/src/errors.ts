// Typed errors: every failure of a run carries the binary's own message and exit status.
import type { RunEndEvent } from "./envelope.js";

/** What the binary reported when it failed. */
export interface FailureDetails {
  /** The process's exit status (null when a signal ended it). */
  exitCode: number | null;
  /** The signal that ended it, e.g. "SIGKILL" (null when it exited). */
  signal: NodeJS.Signals | null;
  /** The last lines of its stderr (at most 64 KiB). */
  stderr: string;
  /** The run's last event, when it got that far (spawn writes it on every path). */
  runEnd?: RunEndEvent;
  cause?: unknown;
}

/**
 * The binary ended unsuccessfully. `message` is its own error line
 * (`boo-normalize: context: cause`) when it wrote one; `exitCode` follows the README's table
 * (1 --strict findings, 2 usage or input error, 3 no `result` line, 74 a sink failed,
 * 124 timeout, 125 guard, 126/127 claude not executable / not found, 128+N signals).
 */
export class BooNormalizeError extends Error {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
  readonly runEnd?: RunEndEvent;

  constructor(message: string, details: FailureDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "BooNormalizeError";
    this.exitCode = details.exitCode;
    this.signal = details.signal;
    this.stderr = details.stderr;
    this.runEnd = details.runEnd;
  }
}

/** The run was stopped through its AbortSignal; `cause` is the signal's reason. */
export class AbortError extends BooNormalizeError {
  constructor(message: string, details: FailureDetails) {
    super(message, details);
    this.name = "AbortError";
  }
}

/** No boo-normalize binary for this platform: the platform package is missing or unsupported. */
export class BinaryNotFoundError extends BooNormalizeError {
  /** The npm package that should have provided it (undefined: no package for this platform). */
  readonly packageName?: string;

  constructor(message: string, packageName?: string) {
    super(message, { exitCode: null, signal: null, stderr: "" });
    this.name = "BinaryNotFoundError";
    this.packageName = packageName;
  }
}
