// A client of the TypeScript MCP SDK in front of mcp-executor, for the
// end-to-end tests of several tool servers (sidecar/multi_npm_test.go).
//
//   node client.mjs <plan.json> <executor> stdio --config <settings>
//
// The plan is {"steps": [{"op": "list"} | {"op": "call", "name", "args"}]}.
// It prints one JSON line: {"steps": [<the result of each step>]}: for
// list the tools (name and annotations), for call the tool's result (or
// {"error": message} for a JSON-RPC error).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const sdk = join(here, "..", "npm", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
const { Client } = await import(pathToFileURL(join(sdk, "client", "index.js")).href);
const { StdioClientTransport } = await import(pathToFileURL(join(sdk, "client", "stdio.js")).href);

const [planPath, command, ...args] = process.argv.slice(2);
const plan = JSON.parse(readFileSync(planPath, "utf8"));
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "multi-test-client", version: "1" });
await client.connect(transport);
const out = [];
for (const step of plan.steps) {
  try {
    if (step.op === "list") {
      const r = await client.listTools();
      out.push({ tools: r.tools.map((t) => ({ name: t.name, annotations: t.annotations ?? null })) });
    } else if (step.op === "call") {
      out.push(await client.callTool({ name: step.name, arguments: step.args ?? {} }));
    } else {
      out.push({ error: "unknown op " + step.op });
    }
  } catch (e) {
    out.push({ error: String(e && e.message ? e.message : e) });
  }
}
process.stdout.write(JSON.stringify({ steps: out }) + "\n");
await client.close();
