// A two-era MCP tool server made with @modelcontextprotocol/server 2.x's serveStdio (the opening
// exchange picks the era: initialize for 2025-11-25, a request with _meta for 2026-07-28), with the
// tools of the HTTP front's tests: echo, held, forbidden, slow (waits ms, or until cancelled).
//
//   NPM_DIR=testdata/npm node ts-server.mjs
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const load = (p) => import(pathToFileURL(join(process.env.NPM_DIR, "node_modules", p)).href);
const { McpServer, fromJsonSchema } = await load("@modelcontextprotocol/server/dist/index.mjs");
const { serveStdio } = await load("@modelcontextprotocol/server/dist/stdio.mjs");

const textArg = fromJsonSchema({ type: "object", properties: { text: { type: "string" } } });
const msArg = fromJsonSchema({ type: "object", properties: { ms: { type: "number" } } });
const text = (t) => ({ content: [{ type: "text", text: t }] });

serveStdio(() => {
  const s = new McpServer({ name: "ts-two-era", version: "1.0.0" }, { capabilities: { tools: {} } });
  s.registerTool("echo", { inputSchema: textArg }, async ({ text: t }) => text(t));
  s.registerTool("held", { inputSchema: textArg }, async ({ text: t }) => text("held call ran: " + t));
  s.registerTool("forbidden", { inputSchema: textArg }, async () => text("the forbidden tool ran"));
  s.registerTool("slow", { inputSchema: msArg }, async ({ ms }, ctx) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve(text("slept")), ms);
      ctx?.mcpReq?.signal?.addEventListener?.("abort", () => { clearTimeout(timer); reject(new Error("cancelled")); });
    }));
  return s;
});
