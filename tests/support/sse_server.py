#!/usr/bin/env python3
"""Loopback SSE test server for tests/clients.rs (Python standard library only).

Serves boo-normalize's output the way a real server would, running the real binary per request:

  GET  /          the page given by --page (the browser test's EventSource page)
  GET  /events    `BIN --format sse INPUT`, with $LAST_EVENT_ID set from the request's
                  Last-Event-ID header (a reconnecting EventSource sends it). With --cut-after N
                  the first connection is dropped after N events, so the browser must reconnect
                  and resume.
  POST /chat      `BIN --format sse --sse-profile ai-sdk INPUT` with the AI SDK headers
                  (what DefaultChatTransport / useChat calls).
  POST /report    the page posts what it received; written with the connection log to --report,
                  after which the server exits.

Prints `PORT <n>` on stdout once listening on 127.0.0.1. Exits by itself after --timeout seconds.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SSE_HEADERS = [
    ("Content-Type", "text/event-stream"),
    ("Cache-Control", "no-cache"),
    ("X-Accel-Buffering", "no"),
]
AI_SDK_HEADERS = SSE_HEADERS + [("x-vercel-ai-ui-message-stream", "v1")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--page")
    ap.add_argument("--report")
    ap.add_argument("--cut-after", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args()

    done = threading.Event()
    log = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt, *a):
            pass

        def stream(self, argv, headers, env_extra, cut_after):
            env = dict(os.environ)
            env.pop("LAST_EVENT_ID", None)
            env.update(env_extra)
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, env=env)
            self.send_response(200)
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            sent = 0
            try:
                block = b""
                for line in proc.stdout:
                    block += line
                    if line in (b"\n", b"\r\n"):
                        self.wfile.write(block)
                        self.wfile.flush()
                        if block.startswith(b"id:") or b"\nid:" in block:
                            sent += 1
                        block = b""
                        if cut_after and sent >= cut_after:
                            break
                if block:
                    self.wfile.write(block)
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            finally:
                proc.stdout.close()
                proc.kill()
                proc.wait()
            self.close_connection = True

        def do_GET(self):
            if self.path == "/" and args.page:
                body = open(args.page, "rb").read()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            elif self.path == "/events":
                last = self.headers.get("Last-Event-ID")
                with lock:
                    first = not any(c["path"] == "/events" for c in log)
                    log.append({"path": "/events", "last_event_id": last})
                env = {"LAST_EVENT_ID": last} if last is not None else {}
                cut = args.cut_after if first else 0
                self.stream([args.bin, "--format", "sse", args.input], SSE_HEADERS, env, cut)
            else:
                self.send_error(404)

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n)
            if self.path == "/chat":
                with lock:
                    log.append({"path": "/chat", "last_event_id": None})
                argv = [args.bin, "--format", "sse", "--sse-profile", "ai-sdk", args.input]
                self.stream(argv, AI_SDK_HEADERS, {}, 0)
            elif self.path == "/report" and args.report:
                with lock:
                    report = {"received": json.loads(body), "connections": list(log)}
                tmp = args.report + ".tmp"
                with open(tmp, "w") as f:
                    json.dump(report, f)
                os.replace(tmp, args.report)
                self.send_response(204)
                self.end_headers()
                done.set()
            else:
                self.send_error(404)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    print(f"PORT {srv.server_address[1]}", flush=True)
    deadline = time.monotonic() + args.timeout
    while not done.is_set() and time.monotonic() < deadline:
        done.wait(0.2)
    time.sleep(0.2)
    srv.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
