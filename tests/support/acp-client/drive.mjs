// An ACP client built on the official SDK (@agentclientprotocol/sdk) that drives an agent
// through a scripted plan and prints what happened as JSON (tests/acp/).
//
// node drive.mjs PLAN.json
//
// PLAN: {"agent": [cmd, ...args], "env": {...}, "cwd": DIR, "trace": FILE,
//        "permissions": ["allow" | "allow_always" | "reject" | "cancelled" | "hold", ...],
//        "steps": [STEP, ...]}
// Every line the agent writes is appended to `trace` as it arrives (for schema checks).
// Permission requests are answered in order from `permissions` (then "reject"); "hold" never
// answers (until the prompt is cancelled: then "cancelled", as the protocol asks of clients).
// STEP: {"op": "initialize"}
//       {"op": "new", "as": NAME, "cwd"?: DIR}
//       {"op": "prompt", "session": NAME, "text": TEXT, "as": NAME, "wait"?: false}
//       {"op": "await", "prompt": NAME}
//       {"op": "cancel", "session": NAME}
//       {"op": "sleep", "ms": N}
//       {"op": "until_update", "session": NAME, "kind": SESSION_UPDATE, "timeout_ms"?: N}
//       {"op": "until_permission", "timeout_ms"?: N}
//       {"op": "until_log", "path": FILE, "text": TEXT, "timeout_ms"?: N}
//       {"op": "request", "method": M, "params": P, "as": NAME}  (raw request; P may name
//        sessions as "$NAME")
//       {"op": "kill_claude", "session": NAME}  (SIGKILL the session's claude process)
//       {"op": "remove_transcript", "session": NAME, "dir": DIR}  (delete DIR/<session id>.jsonl)
//       {"op": "measure_rss", "match": TEXT}  (peak RSS of the agent's own processes)
//       {"op": "signal_agent", "signal": "SIGTERM" | "SIGKILL"}  (then waits for its exit)
//       {"op": "close_stdin"}   (then waits for the agent to exit)
// Output: {"results": {NAME: {...}}, "updates": [{"session": NAME, "update": ...}],
//          "permissions": [...requests], "exit": {"code", "signal", "ms"}, "times": {...}}

import { spawn, execFileSync } from "node:child_process";
import { appendFileSync, readFileSync, rmSync } from "node:fs";
import { PassThrough, Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const t0 = performance.now();
const ms = () => Math.round(performance.now() - t0);

const child = spawn(plan.agent[0], plan.agent.slice(1), {
  cwd: plan.cwd,
  env: plan.env,
  stdio: ["pipe", "pipe", "inherit"],
});
const exited = new Promise((resolve) => {
  child.on("exit", (code, signal) => resolve({ code, signal, ms: ms() }));
});
const out = new PassThrough();
child.stdout.on("data", (d) => {
  if (plan.trace) appendFileSync(plan.trace, d);
  out.write(d);
});
child.stdout.on("end", () => out.end());

const sessions = {}; // name -> sessionId
const names = {}; // sessionId -> name
const results = {};
const updates = [];
const permissionRequests = [];
const times = {};
const answers = [...(plan.permissions || [])];
const held = []; // resolvers of held permission requests
const waiters = [];
const wake = () => waiters.splice(0).forEach((w) => w());
const changed = () => new Promise((r) => waiters.push(r));

async function until(pred, timeoutMs, what) {
  const end = performance.now() + (timeoutMs ?? 60000);
  while (!pred()) {
    const left = end - performance.now();
    if (left <= 0) throw new Error(`timed out waiting for ${what}`);
    await Promise.race([changed(), new Promise((r) => setTimeout(r, Math.min(left, 200)))]);
  }
}

const app = client({ name: "boo-acp-test" })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => {
    permissionRequests.push(params);
    wake();
    const a = answers.length ? answers.shift() : "reject";
    if (a === "hold") {
      return await new Promise((resolve) => held.push(resolve));
    }
    if (a === "cancelled") return { outcome: { outcome: "cancelled" } };
    return { outcome: { outcome: "selected", optionId: a } };
  })
  .onNotification(methods.client.session.update, async ({ params }) => {
    const u = params.update;
    if (u.sessionUpdate === "agent_message_chunk" && times.first_message_chunk === undefined) {
      times.first_message_chunk = ms();
    }
    updates.push({ session: names[params.sessionId] ?? params.sessionId, update: u, meta: params._meta ?? null });
    wake();
  });

function report() {
  process.stdout.write(JSON.stringify({ results, updates, permissions: permissionRequests, times, sessions }) + "\n");
}
// A plan that hangs still reports what it saw.
setTimeout(() => {
  results.client_error = { message: `the plan did not finish within ${plan.timeout_ms ?? 100000} ms` };
  report();
  child.kill("SIGKILL");
  process.exit(0);
}, plan.timeout_ms ?? 100000).unref();

const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(out));
const pending = {};
let ending = false;

function subst(v) {
  if (typeof v === "string" && v.startsWith("$") && sessions[v.slice(1)]) return sessions[v.slice(1)];
  if (Array.isArray(v)) return v.map(subst);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, subst(x)]));
  return v;
}

async function settle(name, p) {
  const start = ms();
  try {
    const r = await p;
    results[name] = { ok: r, ms: ms() - start, at: ms() };
  } catch (e) {
    results[name] = { error: { code: e.code ?? null, message: e.message, data: e.data ?? null }, ms: ms() - start, at: ms() };
  }
  wake();
}

await app
  .connectWith(stream, async (agent) => {
    for (const step of plan.steps) {
      switch (step.op) {
        case "initialize": {
          const s = ms();
          await settle("initialize", agent.request(methods.agent.initialize, {
            protocolVersion: 1,
            clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
            clientInfo: { name: "boo-acp-test", version: "0" },
          }));
          times.initialize = ms() - s;
          break;
        }
        case "new": {
          await settle(step.as, agent.request(methods.agent.session.new, { cwd: step.cwd ?? plan.cwd, mcpServers: [] }));
          const r = results[step.as];
          if (r.ok) {
            sessions[step.as] = r.ok.sessionId;
            names[r.ok.sessionId] = step.as;
          }
          break;
        }
        case "prompt": {
          const p = settle(step.as, agent.request(methods.agent.session.prompt, {
            sessionId: sessions[step.session],
            prompt: [{ type: "text", text: step.text }],
          }));
          pending[step.as] = p;
          if (step.wait !== false) await p;
          break;
        }
        case "await":
          await pending[step.prompt];
          break;
        case "cancel":
          results[`cancel@${step.session}`] = { at: ms() };
          await agent.notify(methods.agent.session.cancel, { sessionId: sessions[step.session] });
          // As the protocol asks of a client: pending permission requests are answered cancelled.
          held.splice(0).forEach((r) => r({ outcome: { outcome: "cancelled" } }));
          break;
        case "sleep":
          await new Promise((r) => setTimeout(r, step.ms));
          break;
        case "until_update":
          await until(
            () => updates.some((u) => u.session === step.session && u.update.sessionUpdate === step.kind),
            step.timeout_ms,
            `${step.kind} in ${step.session}`,
          );
          break;
        case "until_log": {
          // A line of a file (the loopback API's request log) containing `text`.
          await until(() => {
            try { return readFileSync(step.path, "utf8").includes(step.text); } catch { return false; }
          }, step.timeout_ms, `${step.text} in ${step.path}`);
          break;
        }
        case "until_permission":
          await until(() => permissionRequests.length > (step.count ?? 0), step.timeout_ms, "a permission request");
          break;
        case "request":
          await settle(step.as, agent.request(step.method, subst(step.params)));
          break;
        case "kill_claude": {
          // The session's claude: a child of the agent's worker process (the only session).
          const rows = execFileSync("ps", ["-e", "-o", "pid=,ppid=,args="]).toString().trim().split("\n")
            .map((l) => l.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/)).filter(Boolean)
            .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
          const ours = new Set([child.pid]);
          let grew = true;
          while (grew) {
            grew = false;
            for (const r of rows) if (!ours.has(r.pid) && ours.has(r.ppid) && r.args.includes("boo-normalize")) { ours.add(r.pid); grew = true; }
          }
          for (const r of rows) {
            if (ours.has(r.ppid) && !r.args.includes("boo-normalize")) {
              try { process.kill(r.pid, "SIGKILL"); } catch {}
              results[`killed@${step.session}`] = { pid: r.pid, args: r.args };
            }
          }
          break;
        }
        case "remove_transcript":
          rmSync(`${step.dir}/${sessions[step.session]}.jsonl`, { force: true });
          break;
        case "measure_rss": {
          // Peak RSS (VmHWM) of the agent's own processes: the one started and its descendants
          // that are the agent too (`match` in their command line), not the claude CLI.
          const rows = execFileSync("ps", ["-e", "-o", "pid=,ppid=,args="]).toString().trim().split("\n")
            .map((l) => l.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/)).filter(Boolean)
            .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
          const ours = new Set([child.pid]);
          let grew = true;
          while (grew) {
            grew = false;
            for (const r of rows) if (!ours.has(r.pid) && ours.has(r.ppid) && r.args.includes(step.match)) { ours.add(r.pid); grew = true; }
          }
          let kb = 0;
          for (const pid of ours) {
            try {
              const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmHWM:\s+(\d+)/);
              if (m) kb += Number(m[1]);
            } catch {}
          }
          results.rss = { kb, processes: ours.size };
          break;
        }
        case "signal_agent":
          ending = true;
          child.kill(step.signal);
          results.exit = await exited;
          return;
        case "close_stdin":
          ending = true;
          child.stdin.end();
          results.exit = await exited;
          return;
        default:
          throw new Error(`unknown op ${step.op}`);
      }
    }
    ending = true;
    child.stdin.end();
    results.exit = await exited;
  })
  .catch(async (e) => {
    // The agent exiting closes the connection: expected once the plan ended it.
    if (ending) {
      results.exit ??= await exited;
      return;
    }
    results.client_error = { message: String(e && e.message ? e.message : e) };
  });

report();
process.exit(0);
