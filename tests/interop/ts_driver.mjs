// Drive an MCP server with the official TypeScript SDK (`@modelcontextprotocol/sdk` on npm), as a
// new user would. Same job (stdin) and report (stdout) as py_driver.py; "mode" is ignored: this
// SDK speaks the initialize handshake only. The test copies this file next to the node_modules
// it installs, so that the SDK resolves.

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function transportFor(server) {
  if (server.url) return new StreamableHTTPClientTransport(new URL(server.url));
  const [command, ...args] = server.stdio;
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("MCPEYE_")));
  return new StdioClientTransport({ command, args, env: { PATH: process.env.PATH ?? "", ...env }, stderr: "inherit" });
}

async function runClient(job, spec) {
  const transport = transportFor(job.server);
  // The client hands the negotiated version to transports that take it (HTTP); note it for all.
  let protocolVersion = null;
  const setVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => {
    protocolVersion = v;
    setVersion?.(v);
  };
  const client = new Client({ name: spec.name, version: spec.version });
  await client.connect(transport);
  try {
    const report = { protocolVersion, serverInfo: client.getServerVersion()?.name ?? null };
    const listed = await client.listTools();
    report.tools = Object.fromEntries(
      listed.tools.map((t) => [t.name, Object.keys(t.inputSchema?.properties ?? {}).sort()]),
    );
    const limit = Math.max(1, Number(job.concurrency ?? 1));
    const results = new Array(spec.calls.length);
    let next = 0;
    const worker = async () => {
      while (next < spec.calls.length) {
        const i = next++;
        const c = spec.calls[i];
        let r;
        try {
          r = await client.callTool({ name: c.tool, arguments: c.arguments });
        } catch (e) {
          throw new Error(`${spec.name}: tools/call ${c.tool} failed: ${e?.message ?? e}`);
        }
        const text = (r.content ?? []).find((b) => b.type === "text")?.text ?? null;
        results[i] = { isError: Boolean(r.isError), text };
      }
    };
    await Promise.all(Array.from({ length: limit }, worker));
    report.results = results;
    return report;
  } finally {
    await client.close();
  }
}

try {
  const job = JSON.parse(readFileSync(0, "utf8"));
  const clients = await Promise.all(job.clients.map((spec) => runClient(job, spec)));
  process.stdout.write(JSON.stringify({ clients }));
} catch (e) {
  process.stderr.write(`ts_driver: ${e?.stack ?? e}\n`);
  process.exit(1);
}
