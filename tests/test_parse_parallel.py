"""A large file parsed with a process pool (script/parallel.py) gives what a parse in this
process gives: the same CSTs, token positions included, the same IR, spans and diagnostics;
a pool that is shut down or whose worker dies leaves the parse to this process."""
import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor

import pytest

import tirkit
from conftest import ROOT
from tirkit.script import parallel
from tirkit.syntax import cst as C
from tirkit.syntax.chunks import find_chunks
from tirkit.syntax.indenter import TOKEN_TYPES
from tirkit.syntax.parser import parse_chunk


def _bench_module():
    """benchmarks/kernels.py's `module` (loaded by path: tests/ has a `kernels` of its own)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_kernels",
                                                  ROOT / "benchmarks" / "kernels.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.module


module = _bench_module()


def _big_text() -> str:
    """Five copies of the 61-method module (about 230 KB), two methods broken."""
    text, _ = module(copies=5)
    text = text.replace("* B[vk, vj]", "* Q[vk, vj]", 1)
    at = text.index("    def ", len(text) // 2)
    at = text.index("\n", text.index("\n", at) + 1) + 1
    return text[:at] + "        for i in range(4)\n" + text[at:]


def _same_tree(x, y, path="") -> None:
    """Deep equality of two CSTs: node types, fields, positions and kept tokens (a token
    comes back as lark's own, whichever lexer made it)."""
    if isinstance(x, TOKEN_TYPES) and isinstance(y, TOKEN_TYPES):
        assert (x.type, x.value, x.line, x.column, x.end_line, x.end_column) == \
            (y.type, y.value, y.line, y.column, y.end_line, y.end_column), path
        return
    assert type(x) is type(y), path
    if isinstance(x, C.Node):
        for f in ("line", "col", "end_line", "end_col", *x._fields):
            _same_tree(getattr(x, f, None), getattr(y, f, None), f"{path}.{f}")
        _same_tree(x.aux, y.aux, f"{path}.aux")
    elif isinstance(x, (list, tuple)):
        assert len(x) == len(y), path
        for i, (a, b) in enumerate(zip(x, y)):
            _same_tree(a, b, f"{path}[{i}]")
    else:
        assert x == y, path


def _facts(result) -> tuple:
    return ([(d.code, d.span.line, d.span.column, d.span.end_line, d.span.end_column,
              d.message) for d in result.diagnostics],
            [(name, f.span.line, f.span.end_line) for name, f in result.module.functions],
            tirkit.to_script(result.module))


@pytest.fixture(scope="module")
def pool():
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as p:
        yield p


def test_workers_parse_as_this_process_does(pool):
    text = _big_text()
    chunks, _ = find_chunks(text)
    texts = [p.text for c in chunks for p in (c.parts[1:] if c.parts else (c,))]
    assert parallel.wanted(texts)
    pre = parallel.Prefetch(pool, texts)
    for t in texts[:80] + texts[-40:]:
        got = pre.get(t)
        assert got is not None                  # made by a worker, not here
        want = parse_chunk(t)
        _same_tree(got.module, want.module)
        assert got.errors == want.errors and got.comments == want.comments
    assert any(pre.get(t).errors for t in texts)


def test_parse_with_a_pool_is_the_parse_without(pool):
    text = _big_text()
    tirkit.clear_caches()
    with_pool = tirkit.parse(text, "/tmp/big.py", pool=pool)
    tirkit.clear_caches()
    alone = tirkit.parse(text, "/tmp/big.py")
    assert tirkit.structural_equal(with_pool.module, alone.module)
    assert _facts(with_pool) == _facts(alone)
    codes = [d[0] for d in _facts(alone)[0]]
    assert codes == ["name/undefined", "syntax"]
    assert len(alone.module.functions) == 4 * 61    # a class with a syntax error: none
    assert tirkit.check(text, "/tmp/big.py") == \
        __import__("tirkit.verify", fromlist=["run_rules"]).run_rules(with_pool)


def test_a_pool_that_is_gone_leaves_the_parse_here():
    text = _big_text()
    dead = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    dead.shutdown()
    tirkit.clear_caches()
    assert _facts(tirkit.parse(text, "/tmp/big.py", pool=dead)) == \
        _facts(tirkit.parse(text, "/tmp/big.py"))


def test_a_worker_killed_midway_leaves_its_batches_here():
    text = _big_text()
    chunks, _ = find_chunks(text)
    texts = [p.text for c in chunks for p in (c.parts[1:] if c.parts else (c,))]
    broken = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    try:
        pid = broken.submit(os.getpid).result()
        pre = parallel.Prefetch(broken, texts)
        os.kill(pid, signal.SIGKILL)
        for t in texts:                          # no answer, no error: parsed here instead
            assert pre.get(t) is None or pre.get(t).errors == parse_chunk(t).errors
        tirkit.clear_caches()
        assert _facts(tirkit.parse(text, "/tmp/big.py", pool=broken)) == \
            _facts(tirkit.parse(text, "/tmp/big.py"))
    finally:
        broken.shutdown(wait=False, cancel_futures=True)


def test_parse_pool_workers_end_with_their_owner(tmp_path):
    """The pool the language server makes: its workers (children of a fork server, not of
    the owner) end soon after the owner ends abruptly, and hold none of its streams."""
    import subprocess
    import sys
    import time
    script = tmp_path / "owner.py"
    script.write_text(
        "import os, sys\n"
        "from tirkit.script.parallel import parse_pool\n"
        "if __name__ == '__main__':\n"
        "    pool = parse_pool(2)\n"
        "    pids = {pool.submit(os.getpid).result() for _ in range(8)}\n"
        "    print(' '.join(map(str, sorted(pids))), flush=True)\n"
        "    os._exit(0)\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT / "language")))
    pids = [int(p) for p in out.stdout.split()]
    assert pids and out.returncode == 0, out.stderr
    # capture_output returned: no worker held the owner's stdout or stderr open
    deadline = time.monotonic() + 5
    while any(parallel.process_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(parallel.process_alive(p) for p in pids)
