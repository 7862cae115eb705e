"""Language-server latency: tirkit-lsp against jedi-language-server, same file, same run.

    PYTHONPATH=language:server python benchmarks/bench_lsp.py [--repeat 40] [--out benchmarks/results/lsp.md]

Measures, on a generated 1,000-line file of matmul kernels (15 lines each):
- didChange -> publishDiagnostics after a one-kernel edit, with the fast rule set (the
  default `onSave` mode) and with the full rule set (mode `onChange`);
- hover on a block (analysis cached) and the first hover after an edit;
- as the anchor, jedi-language-server's hover on the same file and position.
Both servers run over stdio through the same minimal JSON-RPC client below.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import pathlib
import platform
import shutil
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
for _p in (ROOT / "language", ROOT / "server"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))
SHARED = ROOT.parent / "shared"
if not SHARED.exists():
    SHARED = pathlib.Path(os.environ.get("TIRKIT_SHARED", "/work/shared"))
EXAMPLES = SHARED / "examples"


# --------------------------------------------------------------------------- a tiny client
class Client:
    def __init__(self, proc):
        self.proc = proc
        self.next_id = 0
        self.waiters: dict = {}
        self.diag_waiters: list = []      # (predicate, future)
        self.reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, cmd, env=None, cwd=None):
        proc = await asyncio.create_subprocess_exec(
            *cmd, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=env, cwd=cwd)
        return cls(proc)

    def _send(self, msg):
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = await out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            msg = json.loads(await out.readexactly(length))
            if "id" in msg and "method" in msg:          # a request from the server
                result = None
                if msg["method"] == "workspace/configuration":
                    result = [self.settings for _ in msg["params"]["items"]]
                self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            elif "id" in msg:
                fut = self.waiters.pop(msg["id"], None)
                if fut is not None and not fut.done():
                    fut.set_result(msg)
            elif msg.get("method") == "textDocument/publishDiagnostics":
                t = time.perf_counter()
                for pred, fut in list(self.diag_waiters):
                    if not fut.done() and pred(msg["params"]):
                        fut.set_result((t, msg["params"]))
                        self.diag_waiters.remove((pred, fut))

    settings: dict = {}

    async def request(self, method, params):
        self.next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self.waiters[self.next_id] = fut
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        msg = await asyncio.wait_for(fut, 120)
        return msg.get("result")

    def notify(self, method, params):
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def expect_diagnostics(self, pred):
        fut = asyncio.get_running_loop().create_future()
        self.diag_waiters.append((pred, fut))
        return fut

    async def initialize(self, root_uri, options=None):
        caps = {"textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]},
                                 "publishDiagnostics": {"versionSupport": True},
                                 "synchronization": {"didSave": True}},
                "workspace": {"configuration": True}, "general": {"positionEncodings": ["utf-16"]}}
        await self.request("initialize", {"processId": os.getpid(), "rootUri": root_uri,
                                          "capabilities": caps,
                                          "initializationOptions": options or {}})
        self.notify("initialized", {})

    async def close(self):
        try:
            await asyncio.wait_for(self.request("shutdown", None), 10)
            self.notify("exit", None)
            await asyncio.wait_for(self.proc.wait(), 10)
        except Exception:
            self.proc.kill()
        self.reader.cancel()


# --------------------------------------------------------------------------- workload
def thousand_line_file() -> tuple:
    body = (EXAMPLES / "valid" / "matmul.py").read_text().split("\n", 2)[2]
    parts = ["from tvm.script import tir as T\n"]
    i = 0
    while sum(p.count("\n") for p in parts) < 1000:
        parts.append(body.replace("def matmul(", f"def k{i}(")
                     .replace('"global_symbol": "matmul"', f'"global_symbol": "k{i}"'))
        i += 1
    text = "\n".join(parts)
    return text, i


def position_of(text, needle, nth):
    """(line, character) of the nth occurrence of needle."""
    off = -1
    for _ in range(nth + 1):
        off = text.index(needle, off + 1)
    head = text[:off]
    return head.count("\n"), off - (head.rfind("\n") + 1)


def stats(xs) -> dict:
    xs = sorted(xs)
    p95 = xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]
    return {"median": statistics.median(xs) * 1e3, "p95": p95 * 1e3, "n": len(xs)}


async def diag_latency(client, uri, text, kernels, repeat, version0):
    """Edit one kernel (alternately break and fix it) and time until its diagnostics."""
    lines = text.split("\n")
    target_line, _ = position_of(text, "* B[vk, vj]", kernels // 2)
    col = lines[target_line].index("* B[vk, vj]") + 2
    times = []
    version = version0
    for r in range(2 * ((repeat + 4) // 2)):      # ends fixed
        version += 1
        broken = r % 2 == 0
        new = "Q" if broken else "B"
        fut = client.expect_diagnostics(
            lambda p, v=version: p.get("version") == v)
        t0 = time.perf_counter()
        client.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": target_line, "character": col},
                                          "end": {"line": target_line, "character": col + 1}},
                                "text": new}]})
        t1, params = await asyncio.wait_for(fut, 60)
        got = [d["code"] for d in params["diagnostics"]]
        assert got == (["name/undefined"] if broken else []), got
        if r >= 3:                                   # warm-up edits are not counted
            times.append(t1 - t0)
        await asyncio.sleep(0.05)
    return times, version


async def hover_latency(client, uri, pos, repeat, check=None):
    times = []
    for _ in range(repeat + 3):
        t0 = time.perf_counter()
        res = await client.request("textDocument/hover", {
            "textDocument": {"uri": uri}, "position": {"line": pos[0], "character": pos[1]}})
        times.append(time.perf_counter() - t0)
        if check is not None:
            check(res)
    return times[3:]


def open_doc(client, uri, text, version=1):
    client.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": version, "text": text}})


async def bench_tirkit(path, text, kernels, repeat, mode):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "language"), str(ROOT / "server")])
    c = await Client.start([sys.executable, "-m", "tirkit_lsp"], env=env)
    c.settings = {"diagnostics": {"mode": mode}}
    await c.initialize(path.parent.as_uri(), {"tirkit": {"diagnostics": {"mode": mode}}})
    uri = path.as_uri()
    first = c.expect_diagnostics(lambda p: p.get("version") == 1)
    t0 = time.perf_counter()
    open_doc(c, uri, text)
    t_open = (await asyncio.wait_for(first, 120))[0] - t0
    diag, version = await diag_latency(c, uri, text, kernels, repeat, 1)
    out = {"open": t_open * 1e3, "diag": stats(diag)}
    if mode == "onSave":
        block = position_of(text, 'T.block("C")', kernels // 2)
        pos = (block[0], block[1] + len('T.block("'))

        def check(res):
            assert "FLOPs: 4,194,304" in res["contents"]["value"], res

        out["hover"] = stats(await hover_latency(c, uri, pos, repeat, check))
        # the first hover after an edit (the analysis of the new version included)
        after = []
        last = text.count("\n")                      # the empty last line
        for r in range(repeat):
            version += 1
            rng = {"start": {"line": last, "character": 0},
                   "end": {"line": last, "character": 0 if r % 2 == 0 else 1}}
            c.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": rng, "text": " " if r % 2 == 0 else ""}]})
            t0 = time.perf_counter()
            res = await c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                         "position": {"line": pos[0],
                                                                      "character": pos[1]}})
            after.append(time.perf_counter() - t0)
            check(res)
            await asyncio.sleep(0.05)
        out["hover_after_edit"] = stats(after)
        out["iter_pos"] = position_of(text, "vi, vj, vk = ", kernels // 2)
    await c.close()
    return out


async def bench_jedi(path, text, pos, repeat):
    exe = shutil.which("jedi-language-server") or str(pathlib.Path(sys.executable).parent /
                                                      "jedi-language-server")
    if not os.path.exists(exe):
        return None
    c = await Client.start([exe], cwd=str(path.parent))
    await c.initialize(path.parent.as_uri())
    uri = path.as_uri()
    open_doc(c, uri, text)
    hov = await hover_latency(c, uri, pos, repeat)
    res = await c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                 "position": {"line": pos[0],
                                                              "character": pos[1]}})
    await c.close()
    return {"hover": stats(hov), "answer": bool(res)}


async def main_async(args):
    text, kernels = thousand_line_file()
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "kernels_1000.py"
        path.write_text(text)
        fast = await bench_tirkit(path, text, kernels, args.repeat, "onSave")
        full = await bench_tirkit(path, text, kernels, args.repeat, "onChange")
        # jedi: hover on the block iterator `vi` of the same kernel
        line, col = fast["iter_pos"]
        jedi = await bench_jedi(path, text, (line, col), args.repeat)
        # tirkit on the very same position (the iterator: its block's signature)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "language"), str(ROOT / "server")])
        c = await Client.start([sys.executable, "-m", "tirkit_lsp"], env=env)
        await c.initialize(path.parent.as_uri())
        open_doc(c, path.as_uri(), text)
        same = stats(await hover_latency(c, path.as_uri(), (line, col), args.repeat))
        await c.close()
    return text, kernels, fast, full, jedi, same


def report(text, kernels, fast, full, jedi, same, repeat) -> str:
    def row(name, s, target=None):
        t = f" | {target}" if target else " | "
        return f"| {name} | {s['median']:.1f} | {s['p95']:.1f} | {s['n']}{t} |"
    import host  # benchmarks/host.py: where this ran
    lines = [
        "# Language server latency",
        "",
        *host.header({"jedi-language-server": "its own process over stdio, default settings",
                      "tirkit-lsp": "its own process over stdio, default settings"}),
        f"Generated by `benchmarks/bench_lsp.py` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
        f" ({platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; a shared, noisy machine: load average "
        f"{os.getloadavg()[0]:.1f} at the end of the run).",
        "",
        f"File: {text.count(chr(10)) + 1} lines, {kernels} matmul kernels. Each edit changes one "
        "character of one kernel (it alternately breaks and fixes a buffer name), and the time "
        "runs from sending `didChange` to receiving `publishDiagnostics` for that version "
        f"(debounce included). {repeat} timed runs after 3 warm-up runs.",
        "",
        "| measurement | median ms | p95 ms | n | target |",
        "| --- | --- | --- | --- | --- |",
        row("didChange → diagnostics, fast set", fast["diag"], "≤ 50 ms"),
        row("didChange → diagnostics, full set (mode onChange)", full["diag"], "≤ 200 ms"),
        row("hover on a block (analysis cached)", fast["hover"], "≤ 15 ms"),
        row("first hover after an edit (re-analysis included)", fast["hover_after_edit"]),
        row("tirkit-lsp hover on a block iterator", same),
    ]
    if jedi:
        lines.append(row("jedi-language-server hover, same file and position (anchor)",
                         jedi["hover"]))
    from tirkit.verify import load_rules
    rules = load_rules()
    n_fast = sum(1 for r in rules.values() if r.fast)
    lines += ["", f"Rules registered in this build: {len(rules)} ({n_fast} in the fast set)."]
    lines += ["", f"Open → first diagnostics: {fast['open']:.0f} ms (fast set), "
              f"{full['open']:.0f} ms (full set)."]
    if jedi:
        ratio = same["median"] / jedi["hover"]["median"]
        lines += ["", f"Hover ratio tirkit-lsp / jedi-language-server (medians, same position, "
                  f"same run): **{ratio:.2f}**."]
    else:
        lines += ["", "jedi-language-server is not installed: no anchor in this run."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=40)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "lsp.md"))
    args = ap.parse_args(argv)
    res = asyncio.run(main_async(args))
    md = report(*res, args.repeat)
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(args.out).write_text(md)
    print(md)


if __name__ == "__main__":
    main()
