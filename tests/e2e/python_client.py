"""End-to-end check of `mcpl surface` with the official Python MCP SDK client.

Usage: python_client.py PATH_TO_MCPL

Starts `mcpl surface` (the embedded arcade) over stdio, lists tools, opens a 9x9 game of Go,
plays moves through toolsets_act choosing from the legal-move enum, waits for the bot's move
to arrive as a push (notifications/message), closes the game, and checks that tools/list
returned the same list every time. Prints OK on success; exits non-zero otherwise.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result):
    return "\n".join(b.text for b in result.content if getattr(b, "type", "") == "text")


def schema_from_look(text):
    line = next(l for l in text.splitlines() if "checks against" in l)
    at = line.index(": {") + 2
    return json.JSONDecoder().raw_decode(line[at:])[0]


async def main(binary):
    pushes = []

    async def on_log(params):
        pushes.append(params.data)

    params = StdioServerParameters(command=binary, args=["surface"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, logging_callback=on_log) as session:
            init = await session.initialize()
            assert init.serverInfo.name == "mcpl-surface", init

            async def names():
                listed = await session.list_tools()
                return [t.model_dump(exclude_none=True) for t in listed.tools]

            first = await names()
            for meta in ("toolsets_open", "toolsets_look", "toolsets_act", "toolsets_close"):
                assert any(t["name"] == meta for t in first), (meta, first)

            opened = await session.call_tool(
                "toolsets_open", {"toolset": "go", "instance": "py", "options": {"size": 9}}
            )
            assert not opened.isError, text_of(opened)
            assert "`go`/`py`" in text_of(opened), text_of(opened)
            assert await names() == first

            for _ in range(2):
                seen = len(pushes)
                look = await session.call_tool(
                    "toolsets_look", {"tool": "play", "instance": "py"}
                )
                assert not look.isError, text_of(look)
                moves = schema_from_look(text_of(look))["properties"]["move"]["enum"]
                move = next(m for m in moves if m != "pass")
                played = await session.call_tool(
                    "toolsets_act", {"tool": "play", "instance": "py", "args": {"move": move}}
                )
                assert not played.isError, text_of(played)
                for _ in range(600):
                    if len(pushes) > seen:
                        break
                    await asyncio.sleep(0.1)
                assert len(pushes) > seen, "no push arrived after the move"
                assert await names() == first

            closed = await session.call_tool("toolsets_close", {"toolset": "go", "instance": "py"})
            assert not closed.isError, text_of(closed)
            assert await names() == first
    print("pushes:", pushes)
    print("OK")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
