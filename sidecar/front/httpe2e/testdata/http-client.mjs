// A client of the official TypeScript SDKs for the HTTP front's tests (sidecar/front/httpe2e): it
// connects to the executor (its URL over streamable HTTP, or a command over stdio: `mcp-executor
// stdio`, or `mcp-executor bridge` to a serve socket), lists the tools, and calls an allowed tool, a
// refused one, one held for approval (it approves when asked: elicitation in the 2025-11-25 era, an
// input_required result answered by a retry in the 2026-07-28 era) and a slow one it cancels; with
// CLIENT_NO_ANSWER=1 also a slow one the executor's timeout ends (an error 1002). It prints what it
// saw as one JSON line on stdout.
//
//   NPM_DIR=testdata/npm node http-client.mjs SDK http URL
//   NPM_DIR=testdata/npm node http-client.mjs SDK stdio COMMAND ARG...
//
// SDK: "v1" (@modelcontextprotocol/sdk 1.x, 2025-11-25) or "v2" (@modelcontextprotocol/client 2.x,
// versionNegotiation pinned to 2026-07-28).
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [sdk, mode, target, ...rest] = process.argv.slice(2);
const npm = process.env.NPM_DIR;
const load = (p) => import(pathToFileURL(join(npm, "node_modules", p)).href);

let Client, Transport, Stdio, options = {}, elicitMethod;
if (sdk === "v1") {
  ({ Client } = await load("@modelcontextprotocol/sdk/dist/esm/client/index.js"));
  ({ StreamableHTTPClientTransport: Transport } = await load("@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js"));
  ({ StdioClientTransport: Stdio } = await load("@modelcontextprotocol/sdk/dist/esm/client/stdio.js"));
  const { ElicitRequestSchema } = await load("@modelcontextprotocol/sdk/dist/esm/types.js");
  elicitMethod = ElicitRequestSchema;
} else {
  ({ Client, StreamableHTTPClientTransport: Transport } = await load("@modelcontextprotocol/client/dist/index.mjs"));
  ({ StdioClientTransport: Stdio } = await load("@modelcontextprotocol/client/dist/stdio.mjs"));
  options = { versionNegotiation: { mode: { pin: "2026-07-28" } } };
  elicitMethod = "elicitation/create";
}

const client = new Client({ name: `http-client-${sdk}`, version: "1.0.0" }, { capabilities: { elicitation: { form: {} } }, ...options });
const asked = [];
client.setRequestHandler(elicitMethod, async (req) => {
  asked.push(req.params.message);
  return { action: "accept", content: { approve: true } };
});

const out = { sdk };
const transport = mode === "http" ? new Transport(new URL(target))
  : new Stdio({ command: target, args: rest, env: { PATH: process.env.PATH, ...(process.env.GORACE ? { GORACE: process.env.GORACE } : {}) }, stderr: "inherit" });
await client.connect(transport);
out.version = transport.protocolVersion ?? transport._protocolVersion ?? null;
out.session = transport.sessionId ? "yes" : "no";

// 1.x takes (params, resultSchema, options); 2.x (params, options).
const call = (params, opts) => (sdk === "v1" ? client.callTool(params, undefined, opts) : client.callTool(params, opts));
const text = (r) => (r.content ?? []).map((c) => c.text ?? "").join("");
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
const echo = await client.callTool({ name: "echo", arguments: { text: "hello over http" } });
out.echo = { text: text(echo), isError: echo.isError ?? false };
const refused = await client.callTool({ name: "forbidden", arguments: { text: "x" } });
out.refused = { text: text(refused), isError: refused.isError ?? false, meta: refused._meta ?? null };
const held = await call({ name: "held", arguments: { text: "please" } }, { timeout: 60000 });
out.held = { text: text(held), isError: held.isError ?? false, asked: asked.length };
try {
  await call({ name: "slow", arguments: { ms: 20000 } }, { signal: AbortSignal.timeout(500) });
  out.cancelled = false;
} catch (e) {
  out.cancelled = true;
  out.cancelError = String(e?.name ?? e);
}
if (process.env.CLIENT_NO_ANSWER === "1") {
  try {
    await call({ name: "slow", arguments: { ms: 6000 } }, { timeout: 60000 });
    out.noAnswer = "answered";
  } catch (e) {
    out.noAnswer = e?.code ?? String(e);
  }
}
// After the cancelled call, the session (or the next request) still works.
const after = await client.callTool({ name: "echo", arguments: { text: "still here" } });
out.after = text(after);
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
