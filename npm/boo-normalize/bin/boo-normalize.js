#!/usr/bin/env node
// `boo-normalize` from npm: runs the binary of the platform package npm installed next to this
// one (or $BOO_NORMALIZE_BINARY), with this process's arguments, stdio and exit status.
import { spawn } from "node:child_process";
import { binaryPath } from "../dist/binary.js";

let binary;
try {
  binary = binaryPath();
} catch (err) {
  process.stderr.write(`${err.message}\n`);
  process.exit(127);
}
const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });
// Ctrl-C and a closed terminal reach the whole process group, the binary included: it stops its
// work itself (a second SIGINT would escalate), so they are not forwarded. A SIGTERM sent to this
// launcher alone (a process manager, `kill PID`) is.
const ignore = () => {};
process.on("SIGINT", ignore);
process.on("SIGHUP", ignore);
process.on("SIGTERM", () => child.kill("SIGTERM"));
child.on("error", (err) => {
  process.stderr.write(`boo-normalize: ${binary}: ${err.message}\n`);
  process.exit(err.code === "ENOENT" ? 127 : 126);
});
child.on("exit", (code, signal) => {
  if (signal) {
    // Die the same way, so the caller sees the signal too.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
