"""The `tirkit-lsp` entry point: stdio with malformed input, and `--tcp HOST:PORT`."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

from lsp_helpers import ROOT, server_env


def frame(obj) -> bytes:
    body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_messages(stream, want_id, timeout=30.0):
    """Read framed messages until the response with id `want_id`; return it."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            ch = stream.read(1)
            if not ch:
                raise EOFError("server closed its output")
            header += ch
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        msg = json.loads(stream.read(length))
        if msg.get("id") == want_id and "method" not in msg:
            return msg
    raise TimeoutError


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": None, "rootUri": None, "capabilities": {}}}


def test_stdio_survives_malformed_messages():
    proc = subprocess.Popen([sys.executable, "-m", "tirkit_lsp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=server_env(),
                            cwd=str(ROOT))
    try:
        proc.stdin.write(frame(INIT))
        proc.stdin.flush()
        init = read_messages(proc.stdout, 1)
        caps = init["result"]["capabilities"]
        assert caps["hoverProvider"] and caps["textDocumentSync"]["change"] == 2
        assert caps["positionEncoding"] == "utf-16"
        proc.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        for bad in (b"{not json", {"jsonrpc": "2.0", "id": 2, "method": "no/such"},
                    {"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover",
                     "params": {"bogus": 1}},
                    {"jsonrpc": "2.0", "method": "textDocument/didChange",
                     "params": {"textDocument": {"uri": "file:///nope.py", "version": 2},
                                "contentChanges": [{"text": "x"}]}}):
            proc.stdin.write(frame(bad))
        proc.stdin.write(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": "file:///tmp/m.py", "languageId": "python", "version": 1,
                             "text": "from tvm.script import tir as T\n@T.prim_func\n"
                                     "def f(A: T.Buffer((4,), 'float32')):\n"
                                     "    for i in range(4):\n        A[i] = A[i] * 2.0\n"}}}))
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 4, "method": "textDocument/hover",
                                "params": {"textDocument": {"uri": "file:///tmp/m.py"},
                                           "position": {"line": 4, "character": 8}}}))
        proc.stdin.flush()
        hover = read_messages(proc.stdout, 4)
        assert "**buffer** `A`" in hover["result"]["contents"]["value"]
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_tcp():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "tirkit_lsp", "--tcp", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=server_env(), cwd=str(ROOT))
    try:
        conn = None
        for _ in range(200):
            try:
                conn = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except OSError:
                time.sleep(0.05)
        assert conn is not None
        conn.sendall(frame(INIT))
        init = read_messages(conn.makefile("rb"), 1)
        assert init["result"]["serverInfo"]["name"] == "tirkit-lsp"
        conn.close()
    finally:
        proc.kill()
        proc.wait()
