"""A minimal MCP server over stdio written against the raw JSON-RPC lines (Python's standard
library only), for the proxy's tests: it shows exactly what reached it.

Every line it reads is appended, as read, to the file named by RAW_ECHO_LOG. Tools:
- `echo`: answers with the exact `arguments` object it received, as JSON text;
- `owns_intent`: declares `mcpeyeIntent` itself, and echoes like `echo`;
- `fail`: answers with a tool error (`isError`);
- `ask`: asks the client for a sampling message (a server-to-client request) and answers with
  the text the client sent back;
- `progress`: sends a progress notification for the request's token, then answers;
- `slow`: never answers (the client cancels it);
- `garbage`: writes a line that is not JSON to stdout, then answers;
- `crash`: exits with status 3 without answering.
`tools/list` is paginated: `echo` on the first page, the rest on the second. Any other tool is
answered with JSON-RPC error -32602. `resources/read` and `prompts/get` answer one fixed item.
"""

import json
import os
import sys

LOG = os.environ.get("RAW_ECHO_LOG")

PAGE_1 = [
    {"name": "echo", "description": "Echo the arguments.", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
]
PAGE_2 = [
    {
        "name": "owns_intent",
        "description": "Declares mcpeyeIntent itself.",
        "inputSchema": {"type": "object", "properties": {"mcpeyeIntent": {"type": "string", "description": "mine"}}},
    },
    {"name": "fail", "inputSchema": {"type": "object"}},
    {"name": "ask", "inputSchema": {"type": "object"}},
    {"name": "progress", "inputSchema": {"type": "object"}},
    {"name": "slow", "inputSchema": {"type": "object"}},
    {"name": "garbage", "inputSchema": {"type": "object"}},
    {"name": "crash", "inputSchema": {"type": "object"}},
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text_result(text, is_error=False):
    result = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result


def read_line():
    line = sys.stdin.readline()
    if line and LOG:
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(line)
    return line


def call(message):
    params = message.get("params") or {}
    name, arguments = params.get("name"), params.get("arguments") or {}
    rid = message["id"]
    if name in ("echo", "owns_intent"):
        return send({"jsonrpc": "2.0", "id": rid, "result": text_result(json.dumps(arguments, sort_keys=True))})
    if name == "fail":
        return send({"jsonrpc": "2.0", "id": rid, "result": text_result("it failed", is_error=True)})
    if name == "ask":
        send({"jsonrpc": "2.0", "id": "ask-1", "method": "sampling/createMessage",
              "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "say hi"}}], "maxTokens": 5}})
        while True:
            answer = json.loads(read_line())
            if answer.get("id") == "ask-1":
                break
        said = answer.get("result", {}).get("content", {}).get("text", "")
        return send({"jsonrpc": "2.0", "id": rid, "result": text_result("the client said: " + said)})
    if name == "progress":
        token = (params.get("_meta") or {}).get("progressToken")
        send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": 1, "total": 2}})
        return send({"jsonrpc": "2.0", "id": rid, "result": text_result("done")})
    if name == "slow":
        return None
    if name == "garbage":
        sys.stdout.write("this is not JSON\n")
        sys.stdout.flush()
        return send({"jsonrpc": "2.0", "id": rid, "result": text_result("after garbage")})
    if name == "crash":
        os._exit(3)
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": f"Unknown tool: {name}"}})


def main():
    while True:
        line = read_line()
        if not line:
            return
        message = json.loads(line)
        method, rid = message.get("method"), message.get("id")
        if rid is None or method is None:
            continue  # notifications, and answers not waited for
        params = message.get("params") or {}
        if method == "initialize":
            result = {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                      "capabilities": {"tools": {"listChanged": True}, "resources": {}, "prompts": {}},
                      "serverInfo": {"name": "raw-echo", "version": "1.0.0"}}
        elif method == "tools/list":
            result = {"tools": PAGE_2} if params.get("cursor") == "page-2" else {"tools": PAGE_1, "nextCursor": "page-2"}
        elif method == "tools/call":
            call(message)
            continue
        elif method == "resources/read":
            result = {"contents": [{"uri": params.get("uri"), "text": "resource text"}]}
        elif method == "prompts/get":
            result = {"messages": [{"role": "user", "content": {"type": "text", "text": "prompt text"}}]}
        elif method == "ping":
            result = {}
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}})
            continue
        send({"jsonrpc": "2.0", "id": rid, "result": result})


if __name__ == "__main__":
    main()
