#!/usr/bin/env python3
"""A minimal MCP server over stdio (stdlib only), for tests that pass claude an inline
`--mcp-config '{"mcpServers":{"echo":{"command":"python3","args":["mcp_echo.py"]}}}'`.

One tool, `echo` ({"text": string}), answering `echo: <text>`. Messages are newline-delimited
JSON-RPC 2.0 on stdin/stdout, as the MCP stdio transport specifies. With `--log FILE` every
request received is appended to FILE (one JSON line each), so a test can see the call arrive.
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
        return {"tools": [TOOL]}
    if method == "tools/call":
        text = (params.get("arguments") or {}).get("text", "")
        return {"content": [{"type": "text", "text": "echo: " + str(text)}], "isError": False}
    if method == "ping":
        return {}
    if method in ("resources/list", "resources/templates/list"):
        return {"resources": []} if method == "resources/list" else {"resourceTemplates": []}
    if method == "prompts/list":
        return {"prompts": []}
    return None


def main():
    log = None
    if len(sys.argv) == 3 and sys.argv[1] == "--log":
        log = sys.argv[2]
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
