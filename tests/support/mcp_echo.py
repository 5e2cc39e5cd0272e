#!/usr/bin/env python3
"""A minimal MCP server over stdio (stdlib only), for tests that pass claude an inline
`--mcp-config '{"mcpServers":{"echo":{"command":"python3","args":["mcp_echo.py"]}}}'`.

One tool, `echo` ({"text": string}), answering `echo: <text>`, or an `isError` result when the
text starts with "fail". Messages are newline-delimited
JSON-RPC 2.0 on stdin/stdout, as the MCP stdio transport specifies. With `--log FILE` every
request received is appended to FILE (one JSON line each), so a test can see the call arrive.

With `--approve-deny STR` a second tool, `approve`, answers claude's `--permission-prompt-tool`
calls (`{tool_name, input, tool_use_id}`): a call whose input (as JSON) contains STR is denied
(`{"behavior":"deny","message":…}`), every other one allowed unchanged
(`{"behavior":"allow","updatedInput":input}`).
"""

import json
import sys

TOOL = {
    "name": "echo",
    "description": "Echo the given text back.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}

APPROVE = {
    "name": "approve",
    "description": "Decide whether a tool call may run.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "tool_name": {"type": "string"},
            "input": {"type": "object"},
            "tool_use_id": {"type": "string"},
        },
        "required": ["tool_name", "input"],
    },
}

# The --approve-deny marker (None: no `approve` tool).
DENY = None


def decide(args):
    inp = args.get("input") or {}
    if DENY is not None and DENY in json.dumps(inp):
        return {"behavior": "deny",
                "message": "denied by the approve tool: the input contains %r" % DENY}
    return {"behavior": "allow", "updatedInput": inp}


def answer(req):
    method = req.get("method")
    params = req.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2024-11-05"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "echo", "version": "1.0.0"},
        }
    if method == "tools/list":
        return {"tools": [TOOL] + ([APPROVE] if DENY is not None else [])}
    if method == "tools/call" and params.get("name") == "approve" and DENY is not None:
        verdict = decide(params.get("arguments") or {})
        return {"content": [{"type": "text", "text": json.dumps(verdict)}], "isError": False}
    if method == "tools/call":
        text = str((params.get("arguments") or {}).get("text", ""))
        if text.startswith("fail"):
            # A tool-level error (the call itself succeeded): MCP's isError result.
            return {"content": [{"type": "text", "text": "echo refused: " + text}], "isError": True}
        return {"content": [{"type": "text", "text": "echo: " + text}], "isError": False}
    if method == "ping":
        return {}
    if method in ("resources/list", "resources/templates/list"):
        return {"resources": []} if method == "resources/list" else {"resourceTemplates": []}
    if method == "prompts/list":
        return {"prompts": []}
    return None


def main():
    global DENY
    log = None
    args = sys.argv[1:]
    while len(args) >= 2:
        if args[0] == "--log":
            log = args[1]
        elif args[0] == "--approve-deny":
            DENY = args[1]
        args = args[2:]
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps(req) + "\n")
        if "id" not in req:
            continue  # a notification
        result = answer(req)
        if result is None:
            resp = {"jsonrpc": "2.0", "id": req["id"],
                    "error": {"code": -32601, "message": "method not found"}}
        else:
            resp = {"jsonrpc": "2.0", "id": req["id"], "result": result}
        sys.stdout.write(json.dumps(resp) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
