// A client of the TypeScript MCP SDK in front of mcp-executor, for the
// end-to-end tests of several tool servers (sidecar/multi_npm_test.go).
//
//   node client.mjs <plan.json> <executor> stdio --config <settings>
//
// The plan is {"steps": [{"op": "list"} | {"op": "call", "name", "args"} |
// {"op": "signal", "name": <file>} | {"op": "waitFile", "name": <file>}],
// "elicitTo": <file>}. It prints one JSON line: {"steps": [<the result of
// each step>]}: for list the tools (name and annotations), for call the
// tool's result (or {"error": message} for a JSON-RPC error). signal writes
// the file (the test goes on); waitFile waits up to 60 s for the test to
// write one (the client goes on), so a test can act between two calls.
//
// With elicitTo the client declares elicitation and appends the message of
// every elicitation/create it gets to that file, one JSON text a line; it
// never answers (the test answers through the executor's queue folder, which
// cancels the question).
//
// With logTo the client appends the params of every notifications/message
// (a server's log message) it gets to that file, one JSON text a line.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const sdk = join(here, "..", "npm", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
const { Client } = await import(pathToFileURL(join(sdk, "client", "index.js")).href);
const { StdioClientTransport } = await import(pathToFileURL(join(sdk, "client", "stdio.js")).href);
const { ElicitRequestSchema, LoggingMessageNotificationSchema } = await import(pathToFileURL(join(sdk, "types.js")).href);

const [planPath, command, ...args] = process.argv.slice(2);
const plan = JSON.parse(readFileSync(planPath, "utf8"));
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const capabilities = plan.elicitTo ? { elicitation: { form: {} } } : {};
const client = new Client({ name: "multi-test-client", version: "1" }, { capabilities });
if (plan.elicitTo) {
  client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
    appendFileSync(plan.elicitTo, JSON.stringify(req.params.message) + "\n");
    await new Promise((resolve) => extra.signal.addEventListener("abort", resolve));
    return { action: "cancel" };
  });
}
if (plan.logTo) {
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    appendFileSync(plan.logTo, JSON.stringify(n.params) + "\n");
  });
}
await client.connect(transport);
const out = [];
for (const step of plan.steps) {
  try {
    if (step.op === "list") {
      const r = await client.listTools();
      out.push({ tools: r.tools.map((t) => ({ name: t.name, annotations: t.annotations ?? null })) });
    } else if (step.op === "call") {
      out.push(await client.callTool({ name: step.name, arguments: step.args ?? {} }, undefined, { timeout: 60000 }));
    } else if (step.op === "signal") {
      writeFileSync(step.name, "go\n");
      out.push({});
    } else if (step.op === "waitFile") {
      const deadline = Date.now() + 60000;
      while (!existsSync(step.name)) {
        if (Date.now() > deadline) throw new Error("no " + step.name + " within 60s");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      out.push({});
    } else {
      out.push({ error: "unknown op " + step.op });
    }
  } catch (e) {
    out.push({ error: String(e && e.message ? e.message : e) });
  }
}
process.stdout.write(JSON.stringify({ steps: out }) + "\n");
await client.close();
