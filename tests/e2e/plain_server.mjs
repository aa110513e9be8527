// A plain MCP server written with the official npm SDK (no MCPL), for the surface's
// host-side toolsets (crates/mcpl-cli/tests/e2e.rs): 25 tools, `note_*` (12), `calc_*` (12)
// and `ping`. Serves MCP on stdio.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const tools = [];
const add = (name, description) =>
  tools.push({
    name,
    description,
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" }, text: { type: "string" } },
    },
  });

for (const [verb, d] of [
  ["create", "Create a note with a title and text."],
  ["get", "Read one note by its id."],
  ["list", "List every note, newest first."],
  ["update", "Replace a note's text."],
  ["delete", "Remove a note."],
  ["search", "Find notes containing some words."],
  ["tag", "Attach a label to a note."],
  ["untag", "Take a label off a note."],
  ["pin", "Keep a note at the top of the list."],
  ["unpin", "Stop keeping a note at the top."],
  ["export", "Write every note out as Markdown."],
  ["count", "Say how many notes there are."],
]) add(`note_${verb}`, d);
for (const [verb, d] of [
  ["add", "Add two numbers."],
  ["subtract", "Subtract the second number from the first."],
  ["multiply", "Multiply two numbers together and return the product."],
  ["divide", "Divide the first number by the second."],
  ["power", "Raise the first number to the power of the second."],
  ["sqrt", "Take the square root of a number."],
  ["mod", "The remainder of dividing the first number by the second."],
  ["min", "The smaller of two numbers."],
  ["max", "The larger of two numbers."],
  ["abs", "The absolute value of a number."],
  ["round", "Round a number to the nearest whole number."],
  ["mean", "The average of two numbers."],
]) add(`calc_${verb}`, d);
add("ping", "Answer pong.");

const server = new Server({ name: "plain-js", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const { name, arguments: args = {} } = req.params;
  if (!tools.some((t) => t.name === name)) {
    return { content: [{ type: "text", text: `no tool ${name}` }], isError: true };
  }
  const text =
    name === "calc_multiply" ? `product ${Number(args.a) * Number(args.b)}` : `${name} done`;
  return { content: [{ type: "text", text }] };
});
await server.connect(new StdioServerTransport());
