"""The native thread pool behind parallel loops (codegen/llvm/pool.py, codegen/runtime.py)."""
import ctypes
import multiprocessing
import threading
import time

import numpy as np
import pytest

import tirkit

import codegen_helpers  # noqa: F401  (private kernel cache)
from tirkit.codegen import build
from tirkit.codegen.runtime import ThreadPool

CHUNK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)

SCALE = '''from tvm.script import tir as T


@T.prim_func
def scale(A: T.Buffer((40, 24), "float32"), B: T.Buffer((40, 24), "float32")):
    for i in T.parallel(40):
        for j in range(24):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(3) - T.float32(vi)
'''


def _kernel():
    module = tirkit.parse(SCALE).module
    return build(module.prim_funcs()[0][1], module)


def _expected(A):
    return A * np.float32(3) - np.arange(40, dtype=np.float32)[:, None]


def _chunks(p, n):
    """The (begin, end, thread name) of each chunk a launch of [0, n) runs."""
    seen, lock = [], threading.Lock()

    @CHUNK
    def record(_closure, begin, end):
        with lock:
            seen.append((begin, end, threading.current_thread().name))
    p.launch_chunks(record, None, n)
    return sorted(seen)


@pytest.mark.parametrize("threads, n, bounds", [
    (1, 10, [(0, 10)]),
    (2, 10, [(0, 5), (5, 10)]),
    (3, 10, [(0, 3), (3, 6), (6, 10)]),
    (4, 3, [(0, 1), (1, 2), (2, 3)]),        # fewer iterations than threads
    (3, 1, [(0, 1)]),                        # one iteration runs on the caller
])
def test_a_launch_runs_one_contiguous_chunk_per_thread(threads, n, bounds):
    p = ThreadPool(threads)
    try:
        got = _chunks(p, n)
        assert [(b, e) for b, e, _ in got] == bounds
        names = [name for _, _, name in got]
        assert len(set(names)) == len(names)           # each chunk on its own thread
        assert names[0] == threading.current_thread().name
    finally:
        p.close()


def test_workers_that_went_to_sleep_are_woken_by_the_next_launch():
    p = ThreadPool(3)
    try:
        assert len(_chunks(p, 9)) == 3
        time.sleep(0.3)            # far past the spin: every worker waits on the condition
        cpu = time.process_time()
        time.sleep(0.3)
        assert time.process_time() - cpu < 0.1         # asleep, not spinning
        assert [(b, e) for b, e, _ in _chunks(p, 9)] == [(0, 3), (3, 6), (6, 9)]
    finally:
        p.close()


def test_close_stops_and_joins_every_worker():
    p = ThreadPool(3)
    assert all(t.is_alive() for t in p.workers) and len(p.workers) == 2
    p.close()
    assert not any(t.is_alive() for t in p.workers)
    p.close()                                          # a second close does nothing


def test_kernels_called_from_several_threads_at_once_all_finish_right():
    kernel = _kernel()
    rng = np.random.default_rng(3)
    errors = []

    def work(seed):
        r = np.random.default_rng(seed)
        for _ in range(200):
            A = r.standard_normal((40, 24)).astype(np.float32)
            B = np.full_like(A, np.nan)
            kernel(A, B, threads=2)
            if not np.array_equal(B, _expected(A)):
                errors.append(seed)
                return
    ts = [threading.Thread(target=work, args=(int(s),)) for s in rng.integers(0, 1000, 4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in ts) and errors == []


def _run_in_child(conn):
    A = np.random.default_rng(5).standard_normal((40, 24)).astype(np.float32)
    B = np.zeros_like(A)
    _kernel()(A, B, threads=2)
    conn.send(bool(np.array_equal(B, _expected(A))))


@pytest.mark.skipif(not hasattr(multiprocessing, "get_context") or
                    "fork" not in multiprocessing.get_all_start_methods(),
                    reason="the platform cannot fork")
def test_a_forked_child_runs_parallel_loops_on_a_pool_of_its_own():
    A = np.random.default_rng(4).standard_normal((40, 24)).astype(np.float32)
    B = np.zeros_like(A)
    _kernel()(A, B, threads=2)                 # the parent's pool has running workers
    assert np.array_equal(B, _expected(A))
    ctx = multiprocessing.get_context("fork")
    mine, theirs = ctx.Pipe()
    child = ctx.Process(target=_run_in_child, args=(theirs,))
    child.start()
    assert mine.poll(60) and mine.recv() is True
    child.join(30)
    assert child.exitcode == 0
