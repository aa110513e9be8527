// End-to-end check of `mcpl surface` with the official npm MCP SDK client.
//
// Usage: node node_client.mjs PATH_TO_MCPL
//
// The same session as python_client.py: list tools, open a 9x9 game of Go, play moves
// through toolsets_act from the legal-move enum, wait for the bot's push, close, and check
// that tools/list returned the same list every time. Prints OK on success.

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const binary = process.argv[2];
const pushes = [];
const client = new Client({ name: "e2e-node", version: "0.0.0" });
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
  pushes.push(n.params.data);
});
await client.connect(new StdioClientTransport({ command: binary, args: ["surface"] }));
assert.equal(client.getServerVersion().name, "mcpl-surface");

const textOf = (r) => r.content.filter((b) => b.type === "text").map((b) => b.text).join("\n");
const names = async () => JSON.stringify((await client.listTools()).tools);
const first = await names();
for (const meta of ["toolsets_open", "toolsets_look", "toolsets_act", "toolsets_close"]) {
  assert.ok(first.includes(`"${meta}"`), meta);
}

const opened = await client.callTool({
  name: "toolsets_open",
  arguments: { toolset: "go", instance: "js", options: { size: 9 } },
});
assert.ok(!opened.isError, textOf(opened));
assert.ok(textOf(opened).includes("`go`/`js`"), textOf(opened));
assert.equal(await names(), first);

for (let i = 0; i < 2; i++) {
  const seen = pushes.length;
  const look = await client.callTool({
    name: "toolsets_look",
    arguments: { tool: "play", instance: "js" },
  });
  assert.ok(!look.isError, textOf(look));
  const text = textOf(look);
  const line = text.split("\n").find((l) => l.includes("checks against"));
  const rest = line.slice(line.indexOf(": {") + 2);
  const moves = JSON.parse(rest).properties.move.enum;
  const move = moves.find((m) => m !== "pass");
  const played = await client.callTool({
    name: "toolsets_act",
    arguments: { tool: "play", instance: "js", args: { move } },
  });
  assert.ok(!played.isError, textOf(played));
  for (let t = 0; t < 600 && pushes.length === seen; t++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(pushes.length > seen, "no push arrived after the move");
  assert.equal(await names(), first);
}

const closed = await client.callTool({
  name: "toolsets_close",
  arguments: { toolset: "go", instance: "js" },
});
assert.ok(!closed.isError, textOf(closed));
assert.equal(await names(), first);
await client.close();
console.log("pushes:", JSON.stringify(pushes));
console.log("OK");
