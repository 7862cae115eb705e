"""`tirkit lsp [server options]` starts the language server through its console script's entry
point (the CLI does not import the server), passing the options through."""
from __future__ import annotations

import subprocess
import sys

from lsp_helpers import ROOT, server_env
from test_main import INIT, frame, read_messages


def test_tirkit_lsp_serves_on_stdio_with_the_servers_options(tmp_path):
    log = tmp_path / "server.log"
    proc = subprocess.Popen([sys.executable, "-m", "tirkit.cli", "lsp", "--log-file", str(log),
                             "--log-level", "INFO"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=server_env(),
                            cwd=str(ROOT))
    try:
        proc.stdin.write(frame(INIT))
        proc.stdin.flush()
        init = read_messages(proc.stdout, 1)
        assert init["result"]["serverInfo"]["name"] == "tirkit-lsp"
        assert init["result"]["capabilities"]["hoverProvider"]
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        proc.stdin.flush()
        assert read_messages(proc.stdout, 2)["result"] is None
        proc.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        assert log.stat().st_size > 0                  # --log-file reached the server
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
