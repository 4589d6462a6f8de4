"""Drive mcpeye's stdio example with the official Python MCP SDK, as a new user would.

    python scripts/interop_client.py target/debug/examples/stdio_server

Starts a tiny loopback ingest, launches the server with MCPEYE_INGEST_URL pointing at it, lists
the tools, makes two calls (one with an intent) and a capability request through the official
client, then prints one JSON document: what the client saw and what reached the ingest.
"""

import asyncio
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

RECEIVED = []


class Ingest(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        RECEIVED.append({"path": self.path, "secret": self.headers.get("x-mcpeye-secret"), "body": json.loads(body)})
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


async def drive(server: str, ingest_url: str) -> dict:
    env = dict(os.environ, MCPEYE_PROJECT_ID="interop", MCPEYE_INGEST_URL=ingest_url, MCPEYE_INGEST_SECRET="interop-secret")
    params = StdioServerParameters(command=server, args=[], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            forecast = await session.call_tool(
                "get_forecast",
                {"city": "Lisbon", "days": 2,
                 "mcpeyeIntent": "The user is planning a weekend in Lisbon and wants to know whether to pack for rain."},
            )
            bad = await session.call_tool("convert_temperature", {"value": 20, "unit": "K"})
            gap = await session.call_tool(
                "mcpeye_request_capability",
                {"capability": "get the forecast as an hourly chart", "context": "planning outdoor photos"},
            )
    return {
        "protocolVersion": init.protocol_version,
        "serverInfo": init.server_info.name,
        "tools": {t.name: sorted((t.input_schema or {}).get("properties", {})) for t in tools.tools},
        "calls": [
            {"isError": bool(r.is_error), "text": r.content[0].text if r.content else None} for r in (forecast, bad, gap)
        ],
    }


def main() -> None:
    server = sys.argv[1]
    httpd = HTTPServer(("127.0.0.1", 0), Ingest)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    seen = asyncio.run(drive(server, f"http://127.0.0.1:{httpd.server_address[1]}"))
    httpd.shutdown()
    print(json.dumps({"client": seen, "ingest": RECEIVED}, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
