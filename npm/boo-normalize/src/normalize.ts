// normalize(): stream-json in (any byte or string source), envelope events out.
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Run, type ProcessOptions } from "./run.js";

/** What normalize() reads: claude's stream-json, whole or streamed. */
export type StreamJsonInput =
  | string
  | Uint8Array
  | AsyncIterable<Uint8Array | string>
  | Iterable<Uint8Array | string>
  | ReadableStream<Uint8Array | string>
  | NodeJS.ReadableStream;

export interface NormalizeOptions extends ProcessOptions {
  /** Keep base64 image/document data (default: elided to `{elided, media_type, bytes, sha256}`). */
  keepBlobs?: boolean;
  /** Fail (exit 1) when any line was unusable or of an unknown type; every event still comes. */
  strict?: boolean;
  /** A stream without a `result` line is not an error (partial logs). */
  allowNoResult?: boolean;
  /** Replace secrets in the events (`--redact`). */
  redact?: boolean;
  /** Cut longer lines (reported as `line_too_long`). */
  maxLineBytes?: number;
}

/** The flags shared by normalize and spawn. */
export function envelopeFlags(o: NormalizeOptions): string[] {
  const a: string[] = [];
  if (o.keepBlobs) a.push("--keep-blobs");
  if (o.strict) a.push("--strict");
  if (o.allowNoResult) a.push("--allow-no-result");
  if (o.redact) a.push("--redact");
  if (o.maxLineBytes !== undefined) a.push("--max-line-bytes", String(o.maxLineBytes));
  return a;
}

/**
 * Normalize stream-json: `for await (const event of normalize(input))`, and/or
 * `await normalize(input).end` for the final `run.end`.
 */
export function normalize(input: StreamJsonInput, options: NormalizeOptions = {}): Run {
  return new Run(["normalize", ...envelopeFlags(options)], options, (stdin) => {
    pipeline(toReadable(input), stdin).catch(() => {
      // A broken pipe means the binary stopped reading; its exit status says why.
    });
  });
}

function toReadable(input: StreamJsonInput): Readable {
  if (typeof input === "string" || input instanceof Uint8Array) return Readable.from([input]);
  if (input instanceof Readable) return input;
  if (typeof (input as ReadableStream).getReader === "function") {
    return Readable.fromWeb(input as import("node:stream/web").ReadableStream);
  }
  if (typeof (input as NodeJS.ReadableStream).pipe === "function") {
    return new Readable().wrap(input as NodeJS.ReadableStream);
  }
  return Readable.from(input as AsyncIterable<Uint8Array | string>);
}
