"""End-to-end: `mcpl surface --config` in front of two tokened arcades, one on Streamable HTTP
and one on WebSocket, with every TCP link between them going through a relay that this test
cuts mid-game. Driven by the official Python MCP SDK client over stdio.

Usage: relay_client.py PATH_TO_MCPL

- Each arcade requires a bearer token; the config file names it as `${VAR}`, set only in the
  surface's environment, so the secret is not in the file.
- The config's third server is a command that does not exist: the other two are served and
  `toolsets_look {}` names the dead one.
- On each backend a game is opened and a move played; then the relay drops every link. The
  next moves play on in the same game (the move counter goes on), because every reconnect
  sends the same token, so it is the same principal.

Prints OK on success; exits non-zero otherwise.
"""

import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result):
    return "\n".join(b.text for b in result.content if getattr(b, "type", "") == "text")


class Relay:
    """A TCP relay to one upstream port; `cut()` drops every link through it."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.links = []
        self.cuts = 0
        self.server = None

    async def start(self):
        self.server = await asyncio.start_server(self.accept, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def accept(self, reader, writer):
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.close()
            return
        self.links.append((writer, up_writer))

        async def pipe(src, dst):
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def cut(self):
        """Drops every open link (both ends), as a network failure would."""
        self.cuts += 1
        for a, b in self.links:
            for w in (a, b):
                w.transport.abort()
        self.links = []


def start_arcade(binary, scheme, token):
    """Starts `mcpl arcade --listen SCHEME://127.0.0.1:0 --token TOKEN=alice`; returns the
    process and its port (read from the line it prints on stderr)."""
    proc = subprocess.Popen(
        [binary, "arcade", "--listen", f"{scheme}://127.0.0.1:0", "--token", f"{token}=alice"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stderr.readline()
    found = re.search(r"127\.0\.0\.1:(\d+)", line)
    assert found, f"the arcade did not say where it listens: {line!r}"
    return proc, int(found.group(1))


SEEN = []


async def call_until_sent(session, name, args, tries=300):
    """Calls a tool until it is not refused for a link that is still reconnecting."""
    for _ in range(tries):
        result = await session.call_tool(name, args)
        text = text_of(result)
        SEEN.append(text)
        if result.isError and ("never sent" in text or "unconfirmed" in text or "outcome unknown" in text):
            await asyncio.sleep(0.05)
            continue
        return result
    raise AssertionError(f"{name} {args} never went through: {text}")


async def legal_move(session, server, instance):
    look = await call_until_sent(
        session, "toolsets_look", {"server": server, "tool": "play", "instance": instance}
    )
    text = text_of(look)
    assert not look.isError, text
    line = next(l for l in text.splitlines() if "checks against" in l)
    schema = json.JSONDecoder().raw_decode(line[line.index(": {") + 2 :])[0]
    # Between turns `play` has no legal-move list: the bot is thinking.
    moves = schema["properties"]["move"].get("enum") or []
    return next((m for m in moves if m != "pass"), None)


async def play(session, server, instance):
    """Plays one legal move once it is this side's turn; returns the result text."""
    for _ in range(300):
        move = await legal_move(session, server, instance)
        if move is None:
            await asyncio.sleep(0.05)
            continue
        result = await call_until_sent(
            session,
            "toolsets_act",
            {"server": server, "tool": "play", "instance": instance, "args": {"move": move}},
        )
        text = text_of(result)
        if not result.isError:
            return text
        # Not our turn yet (the bot is thinking): wait for it.
        assert "not available now" in text or "do not fit" in text, text
        await asyncio.sleep(0.05)
    raise AssertionError("never our turn")


def move_number(text):
    numbers = [int(n) for n in re.findall(r"Move (\d+):", text)]
    assert numbers, text
    return max(numbers)


async def main(binary):
    tokens = {"ARCADE_TOKEN_HTTP": "http-s3cret", "ARCADE_TOKEN_WS": "ws-s3cret"}
    http_arcade, http_port = start_arcade(binary, "http", tokens["ARCADE_TOKEN_HTTP"])
    ws_arcade, ws_port = start_arcade(binary, "ws", tokens["ARCADE_TOKEN_WS"])
    relays = {"web": Relay(http_port), "sock": Relay(ws_port)}
    http_relay = await relays["web"].start()
    ws_relay = await relays["sock"].start()
    config = {
        "mcpServers": {
            "web": {
                "type": "http",
                "url": f"http://127.0.0.1:{http_relay}/mcp",
                "headers": {"Authorization": "Bearer ${ARCADE_TOKEN_HTTP}"},
            },
            "sock": {
                "url": f"ws://127.0.0.1:{ws_relay}/",
                "headers": {"Authorization": "Bearer ${ARCADE_TOKEN_WS}"},
            },
            "ghost": {"command": "/nonexistent/mcpl-ghost"},
        }
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(config, f)
        path = f.name
    env = dict(os.environ, **tokens)
    params = StdioServerParameters(command=binary, args=["surface", "--config", path], env=env)
    try:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                first = [t.name for t in (await session.list_tools()).tools]
                assert "web__challenge" in first and "sock__challenge" in first, first

                look = text_of(await session.call_tool("toolsets_look", {}))
                assert 'server "ghost": down (cannot start "/nonexistent/mcpl-ghost"' in look, look

                before = {}
                for server in ("web", "sock"):
                    opened = await session.call_tool(
                        "toolsets_open",
                        {"server": server, "toolset": "go", "instance": "g", "options": {"size": 9}},
                    )
                    assert not opened.isError, text_of(opened)
                    before[server] = move_number(await play(session, server, "g"))

                for relay in relays.values():
                    relay.cut()

                for server in ("web", "sock"):
                    after = move_number(await play(session, server, "g"))
                    assert after > before[server], (server, before[server], after)
                    look = text_of(
                        await call_until_sent(session, "toolsets_look", {"server": server, "toolset": "go"})
                    )
                    assert "open instances `g`" in look, look
                    print(f"{server}: move {before[server]} before the cut, move {after} after it")

                # The WebSocket link was dropped and came back as the same principal.
                told = "\n".join(SEEN)
                assert "connection to `sock` lost" in told, told
                assert "`sock` reconnected" in told, told
                assert "ended while the connection was down" not in told, told
                assert [t.name for t in (await session.list_tools()).tools] == first
    finally:
        os.unlink(path)
        for proc in (http_arcade, ws_arcade):
            proc.kill()
            proc.wait()
    assert all(r.cuts == 1 for r in relays.values())
    print("OK")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
