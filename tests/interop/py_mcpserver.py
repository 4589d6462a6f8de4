"""An MCP server written with the official Python SDK (`mcp` on PyPI, `MCPServer`), over stdio,
for the proxy's tests: a tool that echoes its arguments (as the SDK hands them to it), a tool
that fails, a resource and a prompt."""

import json

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

app = MCPServer("py-mcpserver")


@app.tool()
def lookup_order(order_id: str, include_items: bool = False) -> str:
    """Look up an order by its id."""
    return json.dumps({"order_id": order_id, "include_items": include_items}, sort_keys=True)


@app.tool()
def cancel_order(order_id: str) -> str:
    """Cancel an order that has not shipped."""
    raise ToolError(f"order {order_id} has shipped already")


@app.resource("orders://policy")
def policy() -> str:
    """The returns policy."""
    return "Returns are accepted within 30 days."


@app.prompt()
def summarize() -> str:
    """Summarize the latest order."""
    return "Summarize the latest order."


if __name__ == "__main__":
    app.run()
