// boo-normalize for Node.js: the binary (from the platform package) and a typed client.
export * from "./envelope.js";
export { BooNormalizeError, AbortError, BinaryNotFoundError, type FailureDetails } from "./errors.js";
export { binaryPath, platformKey, detectLibc, PLATFORM_PACKAGES, VERSION } from "./binary.js";
export { Run, type ProcessOptions, type UIMessageChunk } from "./run.js";
export { normalize, type NormalizeOptions, type StreamJsonInput } from "./normalize.js";
export { spawn, type SpawnOptions, type AgentName, type Guards, type Timeouts, type Duration } from "./spawn.js";
export { tools, type ToolUse } from "./tools.js";
