"""Drive an MCP server with the official Python SDK (`mcp` on PyPI), as a new user would.

Reads one JSON job on stdin and prints one JSON report on stdout:

    job = {
      "server": {"stdio": ["path/to/server", "arg", ...]} | {"url": "http://127.0.0.1:PORT/mcp"},
      "mode": "auto" | "legacy",            # the `mcp.Client` connection mode (a client's own
                                            # "mode" overrides it)
      "concurrency": 1,                     # calls in flight at once, per client
      "clients": [{"name": "...", "version": "...", "headers": {...},  # optional HTTP headers of
                                            # every request this client sends (a URL server only)
                   "calls": [{"tool": "...", "arguments": {...}, "meta": {...}, "expectError": false}, ...],
                   "reads": ["uri", ...], "prompts": ["name", ...]},  # optional: resources read
                                            # and prompts got after the calls, in order
                   ...],
      "answers": {"elicitation": {...}, "sampling": "..."}   # optional: the client then declares
                                            # elicitation / sampling and answers every request
                                            # with this content / text (and counts them)
    }
    report = {"clients": [{"protocolVersion", "serverInfo", "tools": {name: [property, ...]},
                           "results": [{"isError", "text"} | {"error": {"code", "message"}}, ...],
                           "reads": [first text of each resource read], "prompts": [first text of each prompt],
                           "asked": {"elicitation": n, "sampling": n}}, ...]}

A call with `expectError` answered with a JSON-RPC error reports that error instead of failing.

All clients connect and call at the same time (their calls interleave at the server); each is
its own `mcp.Client` with its own `clientInfo`. Stdio servers get the `MCPEYE_*` environment of
this process. On any failure: a compact description on stderr and exit status 1.
"""

import asyncio
import json
import os
import sys

from mcp import Client, Implementation, StdioServerParameters, types


def target(server: dict, headers: dict | None = None):
    if "url" in server:
        if headers:
            # The SDK's own way to send headers: a transport over an HTTP client that has them.
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            return streamable_http_client(server["url"], http_client=create_mcp_http_client(headers=headers))
        return server["url"]
    command, *args = server["stdio"]
    env = {k: v for k, v in os.environ.items() if k.startswith("MCPEYE_")}
    return StdioServerParameters(command=command, args=args, env=env)


def first_text(result) -> str | None:
    for block in result.content or []:
        if getattr(block, "type", None) == "text":
            return block.text
    return None


def answering(answers: dict, asked: dict) -> dict:
    """The callbacks of a client that answers what the server asks with `answers`."""
    callbacks = {}
    if "elicitation" in answers:

        async def elicit(context, params):
            asked["elicitation"] += 1
            return types.ElicitResult(action="accept", content=answers["elicitation"])

        callbacks["elicitation_callback"] = elicit
    if "sampling" in answers:

        async def sample(context, params):
            asked["sampling"] += 1
            text = types.TextContent(type="text", text=answers["sampling"])
            return types.CreateMessageResult(role="assistant", content=text, model="py-model", stop_reason="endTurn")

        callbacks["sampling_callback"] = sample
    return callbacks


async def run_client(job: dict, spec: dict) -> dict:
    info = Implementation(name=spec["name"], version=spec["version"])
    mode = spec.get("mode", job["mode"])
    asked = {"elicitation": 0, "sampling": 0}
    callbacks = answering(job.get("answers", {}), asked)
    async with Client(target(job["server"], spec.get("headers")), mode=mode, client_info=info, **callbacks) as client:
        report = {
            "protocolVersion": client.protocol_version,
            "serverInfo": client.server_info.name if client.server_info else None,
            "asked": asked,
        }
        listed = await client.list_tools()
        report["tools"] = {
            t.name: sorted(((t.input_schema or {}).get("properties") or {}).keys()) for t in listed.tools
        }
        limit = asyncio.Semaphore(max(1, int(job.get("concurrency", 1))))
        # The conversation handle of the latest result that handed one out (docs/attribution.md).
        seen = {"conversation": None}

        async def call(c: dict) -> dict:
            async with limit:
                try:
                    # `_meta` only when the job gives one: the other jobs send what the client sends.
                    extra = {"meta": c["meta"]} if "meta" in c else {}
                    # An argument "$conversation" is the handle handed out last (at concurrency 1).
                    arguments = {
                        k: (seen["conversation"] if v == "$conversation" else v) for k, v in c["arguments"].items()
                    }
                    r = await client.call_tool(c["tool"], arguments, **extra)
                except Exception as e:  # the client rejected the answer: say which call
                    if c.get("expectError"):
                        return {"error": {"code": error_code(e), "message": str(e)}}
                    raise RuntimeError(f"{spec['name']}: tools/call {c['tool']} failed: {describe(e)}") from None
                texts = [b.text for b in r.content or [] if getattr(b, "type", None) == "text"]
                for t in texts:
                    if t.startswith("conversation: "):
                        seen["conversation"] = t[len("conversation: "):]
                out = {"isError": bool(r.is_error), "text": first_text(r)}
                # Every text item only when the job asks: other jobs compare results exactly.
                if job.get("texts"):
                    out["texts"] = texts
                return out

        report["results"] = list(await asyncio.gather(*(call(c) for c in spec["calls"])))
        # Read one by one, past the client's cache: each read is a request the server sees.
        report["reads"] = [
            getattr((await client.read_resource(uri, cache_mode="bypass")).contents[0], "text", None)
            for uri in spec.get("reads", [])
        ]
        report["prompts"] = [
            getattr((await client.get_prompt(name)).messages[0].content, "text", None)
            for name in spec.get("prompts", [])
        ]
    return report


def error_code(e: BaseException):
    """The JSON-RPC error code of a failed request (on the exception or on its `error`)."""
    for holder in (e, getattr(e, "error", None)):
        code = getattr(holder, "code", None)
        if isinstance(code, int):
            return code
    return None


def describe(e: BaseException) -> str:
    """One line per leaf exception (anyio wraps failures in exception groups)."""
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(describe(x) for x in e.exceptions)
    return f"{type(e).__name__}: {e}"


async def main() -> None:
    job = json.load(sys.stdin)
    reports = await asyncio.gather(*(run_client(job, spec) for spec in job["clients"]))
    json.dump({"clients": list(reports)}, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except BaseException as e:  # noqa: BLE001 - report, do not hide
        print(f"py_driver: {describe(e)}", file=sys.stderr)
        sys.exit(1)
