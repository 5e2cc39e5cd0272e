#!/usr/bin/env python3
"""Loopback stand-in for the Anthropic Messages API (stdlib only).

Point a `claude` CLI at it with ANTHROPIC_BASE_URL=http://127.0.0.1:PORT and
any dummy ANTHROPIC_API_KEY.  It answers POST /v1/messages from a *script*
so that CLI runs are deterministic, and answers every other path harmlessly.

    python3 fake_anthropic.py --script SCRIPT.json [--port 0] [--port-file F] [--log F]

The first stdout line is `PORT=<n>` (flushed).  Binds 127.0.0.1 only.

Script format (JSON)
--------------------
Either a bare list of responses, or an object:

    {
      "responses": [RESPONSE, ...],     # consumed in order (see routing)
      "side_default": RESPONSE,         # for unmatched side requests (default: short text)
      "exhausted": RESPONSE             # for main requests after the list ran out
                                        # (default: text "Done." / end_turn)
    }

RESPONSE is one of

    {"content": [BLOCK, ...], "stop_reason": "end_turn"|"tool_use"|"max_tokens"|...}
    {"error": 500, "body": {...}}       # HTTP error; body defaults to the real error shape
    {"hang": true}                      # read the request, never answer, keep the socket open

plus optional keys on any of them:

    "match":  {...}   which requests this entry may answer (see routing)
    "repeat": N       answer N requests with this entry (default 1; -1 = forever)
    "delay":  secs    sleep before answering
    "input_delay": secs   (streamed answers) sleep before each piece of a tool_use block's
                      input JSON, as the real API streams a long input over time
    "usage":  {...}   override usage numbers
    "model":  "..."   model reported back (default: the request's model)
    "label":  "..."   free text, copied into the --log line

BLOCK is {"type":"text","text":...}, {"type":"thinking","thinking":...}
(a signature is added) or {"type":"tool_use","name":...,"input":{...}}
(an id `toolu_...` is added unless given; input keys spelled "?key" are sent
only if the request's schema for that tool has a property "key").  The tool name "$SUBAGENT" is
resolved against the request's `tools` list to whichever of "Task" / "Agent"
the CLI offers (CLI versions differ).

Routing
-------
Each request is classified:
  * main  -- the request has a non-empty `tools` list (the main conversation
             and subagent conversations; both are strictly sequential);
  * side  -- no tools (title generation, "is this a new topic", quota check,
             summaries, ...).
An entry may answer only requests for which all criteria of its "match"
hold (no "match" = any *main* request):

    "model":     substring of the request's model
    "system":    substring of the system prompt text
    "last_user": substring of the text of the last user message
                 (text blocks and tool_result contents)
    "first_user": substring of the text of the first user message (tells a
                 subagent conversation -- whose first message is the prompt
                 the main agent gave it -- from the main one)
    "any":       substring of the raw request body
    "tool":      name that must be in the request's tools list
    "kind":      "main" | "side" | "any"      (default "main")
    "stream":    true | false

For each request the first entry (in script order) that still has uses left
and matches is used.  Nothing matching: side requests get `side_default`,
main requests get `exhausted`.  The built-in side default answers the
"isNewTopic" JSON question with `{"isNewTopic": false, "title": null}` and
everything else with the text "OK".

Other endpoints
---------------
POST /v1/messages/count_tokens -> {"input_tokens": n}; GET/HEAD anything ->
200 `{}` (GET /v1/models lists one model); any other POST/PUT/... -> 200 `{}`.

--log FILE appends one JSON line per request: time, method, path, headers
(without authorization / x-api-key / cookie), parsed body, and what answered.
"""

import argparse
import base64
import hashlib
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

SECRET_HEADERS = {"authorization", "x-api-key", "cookie", "proxy-authorization"}

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    503: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
ERROR_MESSAGES = {
    400: "Invalid request",
    401: "invalid x-api-key",
    403: "Your API key does not have permission to use the specified resource.",
    404: "Not found",
    413: "Request exceeds the maximum allowed number of bytes.",
    429: "Number of request tokens has exceeded your per-minute rate limit",
    500: "Internal server error",
    529: "Overloaded",
}

B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def fake_id(prefix, *parts, length=22):
    """Deterministic id shaped like the real ones (msg_01 + 22 base62 chars)."""
    h = hashlib.sha256(json.dumps([prefix] + list(parts), sort_keys=True).encode()).digest()
    n = int.from_bytes(h, "big")
    out = []
    for _ in range(length):
        n, r = divmod(n, 62)
        out.append(B62[r])
    return prefix + "01" + "".join(out)


def fake_signature(text):
    h = hashlib.sha512(text.encode()).digest() * 3
    return base64.b64encode(b"\x12\x08fakesig" + h).decode()


def text_of(content):
    """Flatten a message content (str or list of blocks) to text."""
    if isinstance(content, str):
        return content
    out = []
    if isinstance(content, list):
        for b in content:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "text":
                out.append(b.get("text", ""))
            elif b.get("type") == "tool_result":
                out.append(text_of(b.get("content", "")))
    return "\n".join(out)


def est_tokens(s):
    return max(1, len(s) // 4)


class Script:
    def __init__(self, data):
        if isinstance(data, list):
            data = {"responses": data}
        self.entries = []
        for i, e in enumerate(data.get("responses", [])):
            rep = e.get("repeat", 1)
            self.entries.append({"idx": i, "spec": e, "left": rep, "uses": 0})
        self.side_default = data.get("side_default")
        self.exhausted = data.get("exhausted") or {
            "content": [{"type": "text", "text": "Done."}],
            "stop_reason": "end_turn",
        }
        self.lock = threading.Lock()
        self.side_count = 0
        # ids are derived from this seed + entry + use count, so one script
        # gives the same msg_/toolu_ ids on every run, different scripts differ.
        self.seed = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    @staticmethod
    def matches(m, req, kind):
        want_kind = m.get("kind", "main")
        if want_kind != "any" and want_kind != kind:
            return False
        if "model" in m and m["model"] not in str(req["body"].get("model", "")):
            return False
        if "system" in m and m["system"] not in req["system"]:
            return False
        if "last_user" in m and m["last_user"] not in req["last_user"]:
            return False
        if "first_user" in m and m["first_user"] not in req["first_user"]:
            return False
        if "any" in m and m["any"] not in req["raw"]:
            return False
        if "tool" in m and m["tool"] not in req["tool_names"]:
            return False
        if "stream" in m and bool(m["stream"]) != bool(req["body"].get("stream")):
            return False
        return True

    def pick(self, req):
        kind = "main" if req["tool_names"] else "side"
        with self.lock:
            for e in self.entries:
                if e["left"] == 0:
                    continue
                m = e["spec"].get("match")
                ok = (kind == "main") if m is None else self.matches(m, req, kind)
                if ok:
                    if e["left"] > 0:
                        e["left"] -= 1
                    e["uses"] += 1
                    return e["spec"], "entry:%d#%d" % (e["idx"], e["uses"]), kind
            if kind == "side":
                self.side_count += 1
                if self.side_default is not None:
                    return self.side_default, "side_default#%d" % self.side_count, kind
                return self.builtin_side(req), "builtin_side#%d" % self.side_count, kind
            return self.exhausted, "exhausted", kind

    @staticmethod
    def builtin_side(req):
        if "isNewTopic" in req["system"] or "isNewTopic" in req["last_user"]:
            txt = '{"isNewTopic": false, "title": null}'
        else:
            txt = "OK"
        return {"content": [{"type": "text", "text": txt}], "stop_reason": "end_turn"}


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, script, log_path):
        super().__init__(addr, Handler)
        self.script = script
        self.log_path = log_path
        self.log_lock = threading.Lock()
        self.counter = 0
        self.counter_lock = threading.Lock()
        self.stop_event = threading.Event()

    def next_no(self):
        with self.counter_lock:
            self.counter += 1
            return self.counter

    def log(self, rec):
        if not self.log_path:
            return
        # ASCII escapes: a request may hold lone surrogates (a CLI that cut tool output inside an
        # emoji), which no UTF-8 file can hold raw.
        line = json.dumps(rec, ensure_ascii=True, sort_keys=False)
        with self.log_lock:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(line + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-anthropic/1"
    sys_version = ""

    def log_message(self, fmt, *args):  # keep stderr quiet
        if os.environ.get("FAKE_ANTHROPIC_VERBOSE"):
            sys.stderr.write("fake_anthropic: " + (fmt % args) + "\n")

    # ---------------------------------------------------------------- utils
    def read_body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        if not n and "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            raw = b"".join(chunks)
        return raw

    def req_id(self, no):
        return fake_id("req_", "req", no)

    def send_json(self, status, obj, extra_headers=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (extra_headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        self.wfile.flush()

    def log_req(self, no, body, raw, answered, extra=None):
        hdrs = {k.lower(): v for k, v in self.headers.items() if k.lower() not in SECRET_HEADERS}
        rec = {
            "n": no,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
            "method": self.command,
            "path": self.path,
            "headers": hdrs,
            "body": body if body is not None else (raw.decode("utf-8", "replace") if raw else None),
            "answered": answered,
        }
        if extra:
            rec.update(extra)
        self.server.log(rec)

    # -------------------------------------------------------------- methods
    def do_HEAD(self):
        no = self.server.next_no()
        self.log_req(no, None, b"", "head")
        self.send_json(200, {})

    def do_GET(self):
        no = self.server.next_no()
        path = urlsplit(self.path).path
        self.log_req(no, None, b"", "get")
        if path.rstrip("/") == "/v1/models":
            self.send_json(200, {"data": [{"type": "model", "id": "claude-sonnet-4-5-20250929",
                                           "display_name": "Claude Sonnet 4.5",
                                           "created_at": "2025-09-29T00:00:00Z"}],
                                 "has_more": False, "first_id": None, "last_id": None})
        else:
            self.send_json(200, {})

    def do_POST(self):
        no = self.server.next_no()
        raw = self.read_body()
        path = urlsplit(self.path).path.rstrip("/")
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = None
        if path == "/v1/messages" and isinstance(body, dict):
            return self.messages(no, body, raw)
        if path == "/v1/messages/count_tokens":
            n = est_tokens(raw.decode("utf-8", "replace"))
            self.log_req(no, body, raw, "count_tokens")
            return self.send_json(200, {"input_tokens": n})
        self.log_req(no, body, raw, "other")
        self.send_json(200, {})

    do_PUT = do_POST
    do_PATCH = do_POST

    def do_DELETE(self):
        no = self.server.next_no()
        self.log_req(no, None, b"", "other")
        self.send_json(200, {})

    # ------------------------------------------------------------ messages
    def messages(self, no, body, raw):
        sysp = body.get("system", "")
        system = text_of(sysp) if isinstance(sysp, list) else str(sysp)
        last_user = ""
        for m in reversed(body.get("messages") or []):
            if m.get("role") == "user":
                last_user = text_of(m.get("content", ""))
                break
        first_user = ""
        for m in body.get("messages") or []:
            if m.get("role") == "user":
                first_user = text_of(m.get("content", ""))
                break
        tool_names = [t.get("name") for t in (body.get("tools") or []) if isinstance(t, dict)]
        req = {"body": body, "raw": raw.decode("utf-8", "replace"), "system": system,
               "last_user": last_user, "first_user": first_user, "tool_names": tool_names,
               "tools": body.get("tools") or []}
        spec, answered, kind = self.server.script.pick(req)
        self.log_req(no, body, raw, answered, {"kind": kind, "label": spec.get("label")})

        if spec.get("delay"):
            time.sleep(float(spec["delay"]))
        if spec.get("hang"):
            # Never answer; hold the connection open until the server dies.
            self.close_connection = True
            while not self.server.stop_event.wait(3600):
                pass
            return
        if "error" in spec:
            status = int(spec["error"])
            err_body = spec.get("body") or {
                "type": "error",
                "error": {"type": ERROR_TYPES.get(status, "api_error"),
                          "message": ERROR_MESSAGES.get(status, "Error")},
            }
            if isinstance(err_body, dict) and "request_id" not in err_body and err_body.get("type") == "error":
                err_body = dict(err_body, request_id=self.req_id(no))
            hdrs = {"request-id": self.req_id(no), "x-should-retry": "true" if status >= 500 or status == 429 else "false"}
            if "retry_after" in spec:
                hdrs["retry-after"] = str(spec["retry_after"])
            return self.send_json(status, err_body, hdrs)

        seed = self.server.script.seed
        msg_id = fake_id("msg_", seed, answered, no if kind == "side" else 0)
        content = self.build_content(spec, req["tools"], seed + answered, last_user, req["raw"])
        model = spec.get("model") or body.get("model") or "claude-sonnet-4-5-20250929"
        out_tokens = sum(est_tokens(json.dumps(b)) for b in content)
        usage = {
            "input_tokens": 4,
            "cache_creation_input_tokens": 2048 if kind == "main" else 0,
            "cache_read_input_tokens": 12288 if kind == "main" else 0,
            "cache_creation": {"ephemeral_5m_input_tokens": 2048 if kind == "main" else 0,
                               "ephemeral_1h_input_tokens": 0},
            "output_tokens": out_tokens,
            "service_tier": "standard",
        }
        usage.update(spec.get("usage") or {})
        stop_reason = spec.get("stop_reason") or (
            "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn")
        message = {
            "model": model,
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }
        if body.get("stream"):
            self.stream(no, message, float(spec.get("input_delay") or 0))
        else:
            self.send_json(200, message, {"request-id": self.req_id(no)})

    def build_content(self, spec, tools, answered, last_user="", raw=""):
        tool_names = [t.get("name") for t in tools if isinstance(t, dict)]
        out = []
        for i, b in enumerate(spec.get("content") or []):
            t = b.get("type")
            if t == "text":
                out.append({"type": "text", "text": b.get("text", "")})
            elif t == "thinking":
                th = b.get("thinking", "")
                out.append({"type": "thinking", "thinking": th,
                            "signature": b.get("signature") or fake_signature(th)})
            elif t == "redacted_thinking":
                out.append({"type": "redacted_thinking", "data": b.get("data") or fake_signature("r")})
            elif t == "tool_use":
                name = b.get("name", "")
                if name == "$SUBAGENT":
                    name = next((n for n in ("Agent", "Task") if n in tool_names), "Task")
                out.append({"type": "tool_use",
                            "id": b.get("id") or fake_id("toolu_", answered, i),
                            "name": name,
                            "input": resolve_input(b.get("input", {}), name, tools, last_user,
                                                   raw)})
            else:
                out.append(dict(b))
        return out

    # ------------------------------------------------------------- SSE
    def stream(self, no, message, input_delay=0.0):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", self.req_id(no))
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()

        def ev(name, data):
            payload = ("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))
            self.wfile.flush()

        usage = message["usage"]
        start_usage = dict(usage, output_tokens=1)
        start = dict(message, content=[], stop_reason=None, stop_sequence=None, usage=start_usage)
        try:
            ev("message_start", {"type": "message_start", "message": start})
            ev("ping", {"type": "ping"})
            for i, b in enumerate(message["content"]):
                t = b["type"]
                if t == "text":
                    ev("content_block_start", {"type": "content_block_start", "index": i,
                                               "content_block": {"type": "text", "text": ""}})
                    for piece in split_text(b["text"]):
                        ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                                   "delta": {"type": "text_delta", "text": piece}})
                elif t == "thinking":
                    ev("content_block_start", {"type": "content_block_start", "index": i,
                                               "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
                    for piece in split_text(b["thinking"]):
                        ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                                   "delta": {"type": "thinking_delta", "thinking": piece}})
                    ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                               "delta": {"type": "signature_delta", "signature": b["signature"]}})
                elif t == "tool_use":
                    ev("content_block_start", {"type": "content_block_start", "index": i,
                                               "content_block": {"type": "tool_use", "id": b["id"],
                                                                 "name": b["name"], "input": {}}})
                    for piece in split_json(json.dumps(b["input"])):
                        if input_delay:
                            time.sleep(input_delay)
                        ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                                   "delta": {"type": "input_json_delta", "partial_json": piece}})
                else:
                    ev("content_block_start", {"type": "content_block_start", "index": i, "content_block": b})
                ev("content_block_stop", {"type": "content_block_stop", "index": i})
            ev("message_delta", {"type": "message_delta",
                                 "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                 "usage": {k: usage[k] for k in ("input_tokens", "cache_creation_input_tokens",
                                                                 "cache_read_input_tokens", "output_tokens")
                                           if k in usage}})
            ev("message_stop", {"type": "message_stop"})
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


def resolve_input(inp, name, tools, last_user="", raw=""):
    """Keys written "?key" are kept (as "key") only if the request's schema
    for tool NAME has that property -- for inputs that differ by CLI version,
    e.g. {"?run_in_background": false} for the 2.1.x Agent tool.  A value
    {"$match_last_user": REGEX} becomes the first group of REGEX in the text of
    the request's last user message (e.g. a path the CLI made up and told the
    model, such as a background task's output file); {"$match_request": REGEX}
    the same in the whole request body (as JSON text); "" when it does not match."""
    if not isinstance(inp, dict):
        return inp
    inp = {k: match_made_up(v, last_user, raw) for k, v in inp.items()}
    props = None
    for t in tools:
        if isinstance(t, dict) and t.get("name") == name:
            props = (t.get("input_schema") or {}).get("properties") or {}
    out = {}
    for k, v in inp.items():
        if k.startswith("?"):
            if props is not None and k[1:] in props:
                out[k[1:]] = v
        else:
            out[k] = v
    return out


def match_made_up(v, last_user, raw):
    """{"$match_last_user": REGEX} -> group 1 of REGEX in LAST_USER, {"$match_request": REGEX}
    the same in RAW (the request body); other values as they are."""
    if isinstance(v, dict) and len(v) == 1:
        for key, text in (("$match_last_user", last_user), ("$match_request", raw)):
            if key in v:
                m = re.search(v[key], text)
                return m.group(1) if m else ""
    return v


def split_text(s, size=24):
    """Split text into a few deltas on word boundaries (deterministic)."""
    if not s:
        return [""]
    out, cur = [], ""
    for word in s.split(" "):
        piece = word if not cur else " " + word
        if cur and len(cur) + len(piece) > size:
            out.append(cur)
            cur = " " + word
        else:
            cur += piece
    out.append(cur)
    return out


def split_json(s, size=12):
    """Fragments like the real API: first one empty, then small slices."""
    return [""] + [s[i:i + size] for i in range(0, len(s), size)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--script", required=True, help="script JSON file")
    ap.add_argument("--port", type=int, default=0, help="port (0 = ephemeral)")
    ap.add_argument("--port-file", help="write the chosen port here")
    ap.add_argument("--log", help="append one JSON line per request here")
    args = ap.parse_args(argv)

    with open(args.script, encoding="utf-8") as f:
        script = Script(json.load(f))
    srv = Server(("127.0.0.1", args.port), script, args.log)
    port = srv.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    sys.stdout.write("PORT=%d\n" % port)
    sys.stdout.flush()
    try:
        srv.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        srv.stop_event.set()
        srv.server_close()


if __name__ == "__main__":
    main()
