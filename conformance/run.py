#!/usr/bin/env python3
"""A second runner for conformance/vectors.json, in Python with the standard library only.

It runs the scripted steps of every server vector against a server under test reached through
the stdio adapter protocol (docs/CONFORMANCE.md): a process that speaks MCP (newline-delimited
JSON-RPC 2.0) on stdin/stdout and serves the fixture contract. Each vector gets a fresh
process. It shares no code with the Rust suite; both read the same file.

    python3 conformance/run.py [--vectors FILE] [--only ID]... -- COMMAND [ARGS...]

Exit status: 0 when every vector run passed, 1 when one failed, 2 on a usage error.
"""

import json
import os
import queue
import subprocess
import sys
import threading

FORMAT = "mcpl-rfc014-vectors"
VERSION = 1
TIMEOUT = 10.0
MISSING = object()


class Failed(Exception):
    """A step's expectation did not hold, or the server broke the protocol."""


def pointer(doc, path):
    """RFC 6901 JSON pointer lookup; MISSING when nothing is there."""
    if path == "":
        return doc
    node = doc
    for raw in path.split("/")[1:]:
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return MISSING
    return node


def holds(actual, wanted):
    if isinstance(actual, dict) and isinstance(wanted, dict):
        return all(k in actual and holds(actual[k], v) for k, v in wanted.items())
    return actual == wanted and type(actual) is type(wanted)


def check(answer, matcher):
    path = matcher.get("path", "")
    found = pointer(answer, path)
    if "exists" in matcher and (found is not MISSING) != matcher["exists"]:
        raise Failed(f"{path} should {'' if matcher['exists'] else 'not '}exist")
    if "equals" in matcher and (found is MISSING or not holds_exact(found, matcher["equals"])):
        raise Failed(f"{path} should equal {json.dumps(matcher['equals'])}, it is {show(found)}")
    if "notEquals" in matcher and found is not MISSING and holds_exact(found, matcher["notEquals"]):
        raise Failed(f"{path} should not equal {json.dumps(matcher['notEquals'])}")
    if "contains" in matcher and not contains(found, matcher["contains"]):
        raise Failed(f"{path} should contain {json.dumps(matcher['contains'])}, it is {show(found)}")
    if "lacks" in matcher and contains(found, matcher["lacks"]):
        raise Failed(f"{path} should not contain {json.dumps(matcher['lacks'])}, it is {show(found)}")


def contains(found, part):
    """A substring of a string, or an element of an array that holds every member given."""
    if isinstance(found, str) and isinstance(part, str):
        return part in found
    if isinstance(found, list):
        return any(holds(item, part) for item in found)
    return False


def holds_exact(a, b):
    # JSON equality: 1 and true differ, 1 and 1.0 do not.
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b if isinstance(a, bool) and isinstance(b, bool) else False
    return a == b


def show(value):
    return "absent" if value is MISSING else json.dumps(value)[:300]


def substitute(value, names):
    if isinstance(value, str):
        for k, v in names.items():
            value = value.replace("${" + k + "}", v)
        return value
    if isinstance(value, list):
        return [substitute(v, names) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, names) for k, v in value.items()}
    return value


class Adapter:
    """One stdio process of the server under test."""

    def __init__(self, command):
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, encoding="utf-8")
        self.lines = queue.Queue()
        self.next_id = 1
        self.push_reply = "accept"
        self.grant_push = True
        self.inbox = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            message = self._next(f"the answer to `{method}`")
            if "method" in message:
                continue
            if message.get("id") != rid or type(message.get("id")) is not int:
                raise Failed(f"a response with id {json.dumps(message.get('id'))} answers no request in flight")
            if "result" in message:
                if not isinstance(message["result"], dict):
                    raise Failed(f"the answer to `{method}` has a result that is not an object")
                return {"result": message["result"]}
            if "error" in message:
                return {"error": message["error"]}
            raise Failed(f"the answer to `{method}` has neither result nor error")

    def wait_for(self, method):
        """The next message the server sent on its own with `method` (a request or a
        notification), reading on until it comes."""
        while True:
            for i, message in enumerate(self.inbox):
                if message.get("method") == method:
                    return self.inbox.pop(i)
            message = self._next(method)
            if "method" not in message:
                raise Failed(f"a response with id {json.dumps(message.get('id'))} answers no request in flight")

    def _next(self, awaited):
        """The next message the server wrote, while `awaited` is awaited. A message the
        server sent on its own (a request, answered here, or a notification) also goes to the
        inbox."""
        while True:
            try:
                line = self.lines.get(timeout=TIMEOUT)
            except queue.Empty:
                raise Failed(f"{awaited} did not arrive within {TIMEOUT} s")
            if line is None:
                raise Failed(f"the server closed its output before {awaited} arrived")
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except ValueError:
                raise Failed(f"a frame that is not JSON: {line[:200]}")
            if "method" in message:
                if "id" in message:
                    self._answer(message)
                self.inbox.append(message)
            return message

    def _answer(self, request):
        if request["method"] == "push/event" and not self.grant_push:
            self.send({"jsonrpc": "2.0", "id": request["id"],
                       "error": {"code": -32002, "message": "capability denied",
                                 "data": {"capability": "pushEvents"}}})
        elif request["method"] == "push/event" and self.push_reply == "refuse":
            self.send({"jsonrpc": "2.0", "id": request["id"],
                       "result": {"accepted": False, "reason": "refused by run.py"}})
        elif request["method"] == "push/event" and self.push_reply == "error":
            self.send({"jsonrpc": "2.0", "id": request["id"],
                       "error": {"code": -32603, "message": "push failed in run.py"}})
        elif request["method"] == "push/event":
            self.send({"jsonrpc": "2.0", "id": request["id"], "result": {"accepted": True}})
        else:
            self.send({"jsonrpc": "2.0", "id": request["id"],
                       "error": {"code": -32601, "message": "method not found"}})

    def connect(self, tool_hints, grant_push=True, push_reply="accept"):
        self.grant_push = grant_push
        self.push_reply = push_reply
        mcpl = {"version": "0.5", "pushEvents": True}
        if tool_hints:
            mcpl["toolHints"] = True
        init = self.request("initialize", {
            "protocolVersion": "2025-11-25",
            "capabilities": {"experimental": {"mcpl": mcpl}},
            "clientInfo": {"name": "mcpl-conformance-run.py", "version": "1"}})
        if "result" not in init:
            raise Failed(f"initialize failed: {show(init)}")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        policy = {"effectiveCapabilities": ["pushEvents"]} if grant_push else {}
        self.request("featureSets/update", policy)

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def run_vector(vector, command):
    names = {"nonce": str(os.getpid() % 100000)}
    adapter = None
    try:
        for n, step in enumerate(vector["steps"], 1):
            if "connect" in step:
                if adapter:
                    adapter.close()
                adapter = Adapter(command)
                connect = step["connect"]
                reply = connect.get("pushReply", "accept")
                if reply not in ("accept", "refuse", "error"):
                    raise Failed(f"step {n}: pushReply {reply!r} is not accept, refuse or error")
                adapter.connect(connect.get("toolHints", True) is not False,
                                connect.get("pushEvents", True) is not False, reply)
                continue
            if "await" in step:
                if adapter is None:
                    raise Failed(f"step {n} awaits before a connect")
                message = adapter.wait_for(step["await"])
                seen = {"message": message.get("params")}
                for matcher in step.get("expect", []):
                    try:
                        check(seen, substitute(matcher, names))
                    except Failed as why:
                        raise Failed(f"step {n} (`{step['await']}`): {why}; it was {show(seen)}")
                continue
            method = step.get("request")
            if method is None or adapter is None:
                raise Failed(f"step {n} is not a request after a connect")
            answer = adapter.request(method, substitute(step.get("params", {}), names))
            for matcher in step.get("expect", []):
                try:
                    check(answer, substitute(matcher, names))
                except Failed as why:
                    raise Failed(f"step {n} (`{method}`): {why}; the answer was {show(answer)}")
            for name, path in step.get("save", {}).items():
                value = pointer(answer, path)
                if value is MISSING:
                    raise Failed(f"step {n} (`{method}`): nothing at {path} to save as {name}")
                names[name] = value if isinstance(value, str) else json.dumps(value)
    finally:
        if adapter:
            adapter.close()


def main(argv):
    vectors_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors.json")
    only = []
    args = list(argv)
    while args and args[0] != "--":
        flag = args.pop(0)
        if flag == "--vectors" and args:
            vectors_path = args.pop(0)
        elif flag == "--only" and args:
            only.append(args.pop(0))
        else:
            print(f"run.py: unknown argument {flag!r}", file=sys.stderr)
            return 2
    if not args or len(args) < 2:
        print("usage: run.py [--vectors FILE] [--only ID]... -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    command = args[1:]
    with open(vectors_path, encoding="utf-8") as f:
        doc = json.load(f)
    if doc.get("format") != FORMAT or doc.get("version") != VERSION:
        print(f"run.py: {vectors_path} is not {FORMAT} version {VERSION}", file=sys.stderr)
        return 2
    failed = 0
    ran = 0
    for vector in doc["vectors"]:
        if "server" not in vector.get("sides", []) or not vector.get("steps"):
            continue
        if only and vector["id"] not in only:
            continue
        ran += 1
        try:
            run_vector(vector, command)
            print(f"{vector['id']} pass  {vector['title']}")
        except Failed as why:
            failed += 1
            print(f"{vector['id']} fail  {vector['title']}: {why}")
    print(f"{ran - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
