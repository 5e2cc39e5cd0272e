// One boo-normalize process: its envelope (stdout) as an async iterable of typed events, the
// final run.end as a promise, the AI SDK stream (`--sse` into a FIFO) on request, typed
// errors, and AbortSignal handling.
import { execFileSync, spawn as spawnProcess, type ChildProcess } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, rmSync } from "node:fs";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import type { EnvelopeEvent, RunEndEvent } from "./envelope.js";
import { AbortError, BooNormalizeError } from "./errors.js";
import { binaryPath } from "./binary.js";

/** Options every run takes. */
export interface ProcessOptions {
  /** Stops the run: SIGTERM to boo-normalize, which stops its own work (spawn: the child, see
   * the README's escalation), then SIGKILL after `killAfterMs`. The run rejects with AbortError. */
  signal?: AbortSignal;
  /** How long an aborted run may take to end before it is SIGKILLed (default 15000 ms: spawn's
   * SIGINT → grace → SIGTERM → grace → SIGKILL with the default 5 s grace fits in it). */
  killAfterMs?: number;
  /** The executable (default: $BOO_NORMALIZE_BINARY, else the platform package's). */
  binary?: string;
  /** Working directory and environment of the boo-normalize process. */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** More command-line flags for boo-normalize itself (e.g. ["--redact"]). */
  args?: string[];
  /** Each line boo-normalize writes to stderr (in spawn, claude's own lines are prefixed
   * `claude: `). They are also kept (the last 64 KiB) for errors. */
  onStderr?: (line: string) => void;
}

/** One chunk of the AI SDK UI message stream (the `ai` package's `UIMessageChunk`). */
export interface UIMessageChunk {
  type: string;
  [member: string]: unknown;
}

type Mode = "iterate" | "drain";
const STDERR_KEEP = 64 * 1024;

/**
 * A run of boo-normalize. Nothing starts until it is used: iterate it
 * (`for await (const event of run)`), await `run.end`, or ask for `toUIMessageStream()` /
 * `toResponse()`. Iterate it at most once.
 */
export class Run implements AsyncIterable<EnvelopeEvent> {
  #args: string[];
  #options: ProcessOptions;
  #feed: ((stdin: NodeJS.WritableStream) => void) | undefined;
  #child: ChildProcess | undefined;
  #mode: Mode | undefined;
  #sse: Readable | undefined;
  #wantSse = false;
  #end: Promise<RunEndEvent>;
  #settle!: { resolve: (e: RunEndEvent) => void; reject: (e: unknown) => void };

  /** @internal Use normalize() or spawn(). */
  constructor(args: string[], options: ProcessOptions, feed?: (stdin: NodeJS.WritableStream) => void) {
    this.#args = [...args, ...(options.args ?? [])];
    this.#options = options;
    this.#feed = feed;
    this.#end = new Promise((resolve, reject) => (this.#settle = { resolve, reject }));
    this.#end.catch(() => {}); // an unobserved failure is not an unhandled rejection
  }

  /** The final `run.end`; rejects with BooNormalizeError (or AbortError) when the run fails. */
  get end(): Promise<RunEndEvent> {
    this.#start("drain");
    return this.#end;
  }

  /** The boo-normalize process id, once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  [Symbol.asyncIterator](): AsyncIterator<EnvelopeEvent> {
    if (this.#mode) throw new Error("boo-normalize: a run can be iterated once, and only before it is consumed otherwise");
    this.#mode = "iterate";
    return this.#events()[Symbol.asyncIterator]();
  }

  /**
   * The run as the Vercel AI SDK UI message stream (`--sse-profile ai-sdk`), parsed into chunks:
   * pass it to the `ai` package's `createUIMessageStreamResponse({ stream })` or
   * `readUIMessageStream`. Call it before the run starts.
   */
  toUIMessageStream(): ReadableStream<UIMessageChunk> {
    const bytes = this.#sseBytes();
    const lines = createInterface({ input: bytes, crlfDelay: Infinity });
    const it = lines[Symbol.asyncIterator]();
    return new ReadableStream<UIMessageChunk>({
      async pull(controller) {
        for (;;) {
          const { value, done } = await it.next();
          if (done) return controller.close();
          if (!value.startsWith("data: ")) continue;
          const data = value.slice(6);
          if (data === "[DONE]") continue;
          return controller.enqueue(JSON.parse(data) as UIMessageChunk);
        }
      },
      cancel() {
        lines.close();
        bytes.destroy();
      },
    });
  }

  /**
   * A `Response` carrying the AI SDK UI message stream as server-sent events, ready to return
   * from a Next.js route handler (or pipe into Express's `res`): `useChat` reads it directly.
   */
  toResponse(init: ResponseInit = {}): Response {
    const body = Readable.toWeb(this.#sseBytes()) as unknown as ReadableStream<Uint8Array>;
    const headers = new Headers(init.headers);
    for (const [k, v] of [
      ["content-type", "text/event-stream"],
      ["cache-control", "no-cache"],
      ["connection", "keep-alive"],
      ["x-vercel-ai-ui-message-stream", "v1"],
      ["x-accel-buffering", "no"],
    ]) {
      if (!headers.has(k)) headers.set(k, v);
    }
    return new Response(body, { ...init, headers });
  }

  #sseBytes(): Readable {
    if (this.#mode) throw new Error("boo-normalize: ask for the UI message stream before the run starts");
    this.#wantSse = true;
    this.#start("drain");
    return this.#sse!;
  }

  #start(mode: Mode): void {
    if (this.#mode) return;
    this.#mode = mode;
    if (mode === "drain") {
      // Nobody reads the events: read them anyway (the process must not block on stdout).
      (async () => {
        for await (const _ of this.#events(true));
      })().catch(() => {});
    }
  }

  async *#events(internal = false): AsyncGenerator<EnvelopeEvent> {
    const opts = this.#options;
    const signal = opts.signal;
    const stderr = { text: "" };
    if (signal?.aborted) {
      const err = abortError(signal, { exitCode: null, signal: null, stderr: "" });
      this.#settle.reject(err);
      throw err;
    }
    let args = this.#args;
    let fifo: Fifo | undefined;
    let child: ChildProcess;
    try {
      const binary = opts.binary ?? binaryPath();
      if (this.#wantSse) {
        // Node cannot make a pipe for a child (extra stdio entries are sockets, which
        // /dev/fd/N cannot reopen): the AI SDK stream goes through a FIFO in a private dir.
        fifo = makeFifo();
        this.#sse = fifo.reader;
        args = [...args, "--sse", fifo.path, "--sse-profile", "ai-sdk"];
      }
      child = spawnProcess(binary, args, {
        cwd: opts.cwd,
        env: opts.env ?? process.env,
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch (err) {
      fifo?.release();
      this.#settle.reject(err);
      throw err;
    }
    this.#child = child;
    const exited = new Promise<{ code: number | null; sig: NodeJS.Signals | null; error?: Error }>((resolve) => {
      child.once("error", (error) => resolve({ code: null, sig: null, error }));
      child.once("close", (code, sig) => resolve({ code, sig }));
    });
    let aborted = false;
    let killTimer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      aborted = true;
      child.kill("SIGTERM");
      killTimer = setTimeout(() => child.kill("SIGKILL"), opts.killAfterMs ?? 15000);
      killTimer.unref();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    createInterface({ input: child.stderr!, crlfDelay: Infinity }).on("line", (line) => {
      opts.onStderr?.(line);
      stderr.text = (stderr.text + line + "\n").slice(-STDERR_KEEP);
    });
    child.stdin!.on("error", () => {}); // EPIPE: the binary stopped reading (it says why itself)
    if (this.#feed) this.#feed(child.stdin!);
    else child.stdin!.end();

    let runEnd: RunEndEvent | undefined;
    let complete = false;
    const lines = createInterface({ input: child.stdout!, crlfDelay: Infinity });
    try {
      for await (const line of lines) {
        if (!line) continue;
        const event = JSON.parse(line) as EnvelopeEvent;
        if (event.type === "run.end") runEnd = event;
        if (!internal) yield event;
      }
      complete = true;
    } finally {
      if (!complete) {
        // The consumer stopped early: close our end, as `| head` would, and stop the run.
        lines.close();
        child.stdout!.destroy();
        child.kill("SIGTERM");
      }
      const { code, sig, error } = await exited;
      fifo?.release();
      signal?.removeEventListener("abort", onAbort);
      if (killTimer) clearTimeout(killTimer);
      const details = { exitCode: code, signal: sig, stderr: stderr.text, runEnd, cause: error };
      if (aborted) {
        this.#settle.reject(abortError(signal!, details));
      } else if (error) {
        this.#settle.reject(new BooNormalizeError(`boo-normalize: ${error.message}`, details));
      } else if (code !== 0) {
        this.#settle.reject(new BooNormalizeError(failureMessage(stderr.text, code, sig), details));
      } else if (!runEnd) {
        this.#settle.reject(
          new BooNormalizeError("boo-normalize: the output ended before run.end (the consumer stopped reading)", details),
        );
      } else {
        this.#settle.resolve(runEnd);
      }
    }
    if (!internal) await this.#end; // throws the run's failure after its last event
  }
}

interface Fifo {
  path: string;
  reader: Readable;
  /** Once the process has ended: end the stream (also when the writer never came), remove the FIFO. */
  release(): void;
}

function makeFifo(): Fifo {
  const dir = mkdtempSync(join(tmpdir(), "boo-normalize-"));
  const path = join(dir, "ai-sdk.sse");
  execFileSync("mkfifo", ["-m", "600", path]);
  // Non-blocking open: no thread waits for the writer. Until one comes the FIFO is simply not
  // readable (poll reports no hangup before a writer has come and gone).
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const reader = new Socket({ fd, readable: true, writable: false });
  return {
    path,
    reader,
    release() {
      // The process is gone: a writer that comes and goes now ends the stream after what is
      // buffered, whether or not the process ever opened the FIFO.
      try {
        closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // The reader was closed already.
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function abortError(signal: AbortSignal, details: Omit<ConstructorParameters<typeof AbortError>[1], "cause">): AbortError {
  return new AbortError("boo-normalize: the run was aborted", { ...details, cause: signal.reason });
}

/** The binary's own error line (`boo-normalize: …`), the last one it wrote, else a summary. */
function failureMessage(stderr: string, code: number | null, sig: NodeJS.Signals | null): string {
  const own = stderr
    .split("\n")
    .filter((l) => l.startsWith("boo-normalize: "))
    .pop();
  return own ?? `boo-normalize: ${sig ? `killed by ${sig}` : `exited with status ${code}`}`;
}
