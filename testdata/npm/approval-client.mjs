// A client of the official TypeScript SDK for the executor's approval tests
// (sidecar/approve_node_test.go): it starts the executor, calls one tool
// held for approval, and prints the result as one JSON line on stdout.
//
//   node approval-client.mjs EXECUTOR CONFIG MODE TOOL ARGS_JSON
//
// MODE: "accept" (declares elicitation, says yes), "decline" (declares it,
// says no), "none" (declares no elicitation: never asked).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [executor, config, mode, tool, argsJSON] = process.argv.slice(2);
const capabilities = mode === "none" ? {} : { elicitation: { form: {} } };
const client = new Client({ name: "ts-approval-client", version: "1.0.0" }, { capabilities });
const asked = [];
if (mode !== "none") {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params.message);
    if (mode === "accept") {
      return { action: "accept", content: { approve: true } };
    }
    return { action: "decline" };
  });
}
// The SDK's default environment for the executor, and GORACE when the tests
// set it (a race-built executor otherwise sleeps a second at exit).
const env = getDefaultEnvironment();
if (process.env.GORACE !== undefined) {
  env.GORACE = process.env.GORACE;
}
const transport = new StdioClientTransport({ command: executor, args: ["stdio", "--config", config], env, stderr: "inherit" });
await client.connect(transport);
const result = await client.callTool({ name: tool, arguments: JSON.parse(argsJSON) }, undefined, { timeout: 60000 });
process.stdout.write(JSON.stringify({ result, asked, version: transport._protocolVersion ?? null }) + "\n");
await client.close();
