"""End-to-end check of host-side toolsets for plain MCP servers behind `mcpl surface`.

Usage: plain_client.py PATH_TO_MCPL

Starts `mcpl surface --config FILE` with three plain servers (no MCPL): `py`, the FastMCP
server of plain_server.py (60 tools in three families) grouped automatically by name
prefix; `pyx`, the same server grouped by explicit globs with one static tool and
`autoOpen`; and `js`, the npm SDK server of plain_server.mjs (25 tools) grouped
automatically. Through the official Python SDK client it searches by what a description
says, opens, calls, closes, is refused after the close with the exact open call, has a tool
added by the server (`tools/list_changed`) folded in, and checks that tools/list never
changed. Prints OK on success; exits non-zero otherwise.
"""

import asyncio
import json
import os
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = os.path.dirname(os.path.abspath(__file__))


def text_of(result):
    return "\n".join(b.text for b in result.content if getattr(b, "type", "") == "text")


def config():
    py = {"command": sys.executable, "args": [os.path.join(HERE, "plain_server.py")]}
    pyx = dict(py)
    pyx.update(
        {
            "toolsets": {"vcs": ["git_*"], "files": ["fs_*", "web_fetch"]},
            "static": ["web_search"],
            "autoOpen": True,
        }
    )
    js = {"command": "node", "args": [os.path.join(HERE, "plain_server.mjs")]}
    return {"mcpServers": {"py": py, "pyx": pyx, "js": js}}


async def main(binary):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "plain.json")
        with open(path, "w") as f:
            json.dump(config(), f)
        # --settle: the first list waits for all three servers however slowly Python and
        # node start on a loaded machine, so pyx's static tools are in it.
        params = StdioServerParameters(
            command=binary, args=["surface", "--config", path, "--settle", "120"]
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await run(session)
    print("OK")


async def run(session):
    async def listed():
        tools = (await session.list_tools()).tools
        return [t.model_dump(exclude_none=True) for t in tools]

    # On a loaded machine a Python or node server can miss its first `initialize` deadline
    # and be retried: the first list then waits for it no longer (a server that is down
    # counts as settled). Wait until the host has read all three before listing, so the
    # list checked below is the lasting one.
    for _ in range(240):
        look = text_of(await session.call_tool("toolsets_look", {}))
        if "not read yet" not in look and ": down" not in look:
            break
        await asyncio.sleep(0.5)
    else:
        raise AssertionError(f"a server was never read: {look}")

    first = await listed()
    names = sorted(t["name"] for t in first)
    # Auto-grouped servers show no static tool; pyx keeps web_search and the 19 web tools
    # no glob matched (a tool matching no group stays static).
    assert "toolsets_look" in names and "toolsets_act" in names, names
    assert not any(n.startswith(("py__", "js__")) for n in names), names
    assert "pyx__web_search" in names and "pyx__web_ping" in names, names
    assert "pyx__web_fetch" not in names and "pyx__git_status" not in names, names
    print(f"list: {len(first)} tools")

    async def call(tool, args):
        r = await session.call_tool(tool, args)
        return r.isError, text_of(r)

    async def same_list():
        assert await listed() == first, "the tool list changed"

    # Grouping: look names every toolset with a description built from its tools'.
    err, look = await call("toolsets_look", {"server": "py"})
    assert not err, look
    for ts in ("git", "fs", "web"):
        assert f"- toolset `{ts}` (kept by the host): closed" in look, look
    assert "20 tools: git_status" in look, look
    err, look = await call("toolsets_look", {"server": "pyx"})
    assert "toolset `vcs`" in look and "toolset `files`" in look, look

    # Search by what a description says (no name given).
    err, hits = await call("toolsets_look", {"query": "download the contents of a web page"})
    assert not err, hits
    top = hits.splitlines()[1]
    assert "tool `web_fetch` on `py` in toolset `web` (closed)" in top, hits
    assert 'toolsets_open {"server":"py","toolset":"web"}' in top, hits
    print("search:", top)
    err, hits = await call("toolsets_look", {"query": "multiply numbers product"})
    assert "tool `calc_multiply` on `js` in toolset `calc`" in hits.splitlines()[1], hits
    await same_list()

    # A closed toolset's tool is refused with the exact open call.
    err, text = await call("toolsets_act", {"server": "py", "tool": "git_status"})
    assert err and 'toolsets_open {"server":"py","toolset":"git"}' in text, text

    # Open, call, fold in a tool the server adds (tools/list_changed), close.
    err, text = await call("toolsets_open", {"server": "py", "toolset": "git"})
    assert not err and "opened `git` on `py`" in text, text
    err, text = await call("toolsets_act", {"server": "py", "tool": "git_status", "args": {"target": "repo"}})
    assert not err and "git_status done for repo" in text, text
    err, text = await call("toolsets_act", {"server": "py", "tool": "git_hook_add", "args": {"hook": "lint"}})
    assert not err and "hook lint installed" in text, text
    for _ in range(100):
        err, text = await call("toolsets_act", {"server": "py", "tool": "git_hook_lint"})
        if not err:
            break
        await asyncio.sleep(0.05)
    assert not err and "git_hook_lint done" in text, text
    await same_list()
    err, text = await call("toolsets_close", {"server": "py", "toolset": "git"})
    assert not err and "closed `git` on `py`" in text, text
    err, text = await call("toolsets_act", {"server": "py", "tool": "git_status"})
    assert err and 'toolsets_open {"server":"py","toolset":"git"}' in text, text

    # Explicit grouping with autoOpen: the call opens `files` on the spot.
    err, text = await call("toolsets_act", {"server": "pyx", "tool": "fs_read", "args": {"target": "a.txt"}})
    assert not err and "fs_read done for a.txt" in text, text
    err, look = await call("toolsets_look", {"server": "pyx", "toolset": "files"})
    assert "toolset `files` (kept by the host): open" in look, look
    # A static tool is called by name.
    err, text = await call("pyx__web_search", {"target": "mcpl"})
    assert not err and "web_search done for mcpl" in text, text

    # The npm server: automatic grouping, open, call, close, refused after.
    err, text = await call("toolsets_open", {"server": "js", "toolset": "calc"})
    assert not err, text
    err, text = await call("toolsets_act", {"server": "js", "tool": "calc_multiply", "args": {"a": 6, "b": 7}})
    assert not err and "product 42" in text, text
    err, text = await call("toolsets_close", {"server": "js", "toolset": "calc"})
    assert not err, text
    err, text = await call("toolsets_act", {"server": "js", "tool": "calc_multiply", "args": {"a": 1, "b": 2}})
    assert err and 'toolsets_open {"server":"js","toolset":"calc"}' in text, text
    err, look = await call("toolsets_look", {"server": "js"})
    assert "toolset `js` (kept by the host)" in look and "1 tool: ping" in look, look
    await same_list()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
