"""Calling compiled kernels: argument checks, the thread pool behind parallel loops, timing.

The kernel is called through ctypes, which releases the GIL for the whole call; a parallel
loop calls the `launch` function it was given, the native pool of llvm/pool.py, which runs
one contiguous chunk of [0, n) per thread without coming back to Python. Where the platform
has no POSIX threads, parallel loops run serially on the calling thread.
"""
from __future__ import annotations

import ctypes
import functools
import os
import struct
import threading
import weakref

import numpy as np

from ..ir import expr as E
from ..ir.constants import numpy_dtype
from ..ir.dtype import is_float
from .errors import ARGUMENT, DIVISION_BY_ZERO, OUT_OF_BOUNDS, UNSUPPORTED, fail

# The report area a call passes (unsigned 64-bit words): T.ret's value and flag in words 0
# and 1 (llvm/function.py), then for checked code (llvm/checks.py) the number + 1 of the first
# check that failed, an access's index and its storage's elements, then each parameter
# array's bytes.
FAILED_CHECK, BAD_INDEX, BAD_COUNT, FIRST_SIZE_WORD = 2, 3, 4, 5

_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                          ctypes.c_void_p)
_WORKER = ctypes.CFUNCTYPE(None, ctypes.c_int64)
_CALL = ctypes.CFUNCTYPE(None)


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def gib(n) -> str:
    """Bytes as GiB, for messages."""
    return f"{n / 2 ** 30:.1f} GiB"


def require_memory(data_var, nbytes, copies=None):
    """A `codegen/argument` error, not a MemoryError, when an allocation the interpreters
    are about to make (`copies`: one per thread they run at once) exceeds the memory
    available now."""
    have = available_memory()
    if have is not None and nbytes > have:
        from .errors import ARGUMENT, fail
        each = f" ({copies} copies, one per thread run at once)" if copies else ""
        fail(ARGUMENT, f"running this kernel allocates about {gib(nbytes)} for "
             f"'{data_var.name}'{each}, and {gib(have)} is available", data_var)


def available_memory() -> int | None:
    """Bytes of memory this process can still take without swapping or being stopped, or None
    where it is not known: the least of Linux's MemAvailable, what the process's cgroup
    (v2) allows beyond its use, and what its address-space limit (`ulimit -v`) leaves."""
    have = [_meminfo_available(), _cgroup_left(), _address_space_left()]
    have = [x for x in have if x is not None]
    return max(0, min(have)) if have else None


def _meminfo_available():
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_left():
    try:
        with open("/sys/fs/cgroup/memory.max") as fh:
            limit = fh.read().strip()
        if limit == "max":
            return None
        with open("/sys/fs/cgroup/memory.current") as fh:
            return int(limit) - int(fh.read().strip())
    except (OSError, ValueError):
        return None


def _address_space_left():
    try:
        import resource
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft == resource.RLIM_INFINITY:
            return None
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return soft - int(line.split()[1]) * 1024
    except (ImportError, OSError, ValueError, IndexError):
        pass
    return None


class ThreadPool:
    """`threads` threads for parallel loops: the caller and `threads - 1` workers, each a
    daemon Python thread inside one native call that lasts until the pool is closed.

    `launch` is the address kernels take as their launch argument; `launch_chunks(fn,
    closure, n)` calls it from Python (tests use it to see the chunks)."""

    def __init__(self, threads: int):
        from .llvm import engine, pool as native
        self.threads = max(1, int(threads)) if native.available() else 1
        self.loaded = engine.Loaded(engine.compile_ir(native.module_text(self.threads),
                                                      keep_ir=False)[0])
        self.launch = self.loaded.address("tirkit_pool_launch")
        self.workers = []
        self._closer = None
        if self.threads > 1:
            _CALL(self.loaded.address("tirkit_pool_init"))()
            work = _WORKER(self.loaded.address("tirkit_pool_worker"))
            for i in range(1, self.threads):
                t = threading.Thread(target=work, args=(i,), daemon=True,
                                     name=f"tirkit-pool-{i}")
                t.start()
                self.workers.append(t)
            self._closer = weakref.finalize(self, _stop, self.loaded, self.workers,
                                            os.getpid())

    def launch_chunks(self, fn, closure, n: int) -> None:
        ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(
            self.launch)(ctypes.cast(fn, ctypes.c_void_p), closure, n)

    def close(self) -> None:
        """Stop and join the workers (also done when the pool is collected)."""
        if self._closer is not None:
            self._closer()


def _stop(loaded, workers, pid):
    if os.getpid() != pid:       # a forked child has none of these threads
        return
    _CALL(loaded.address("tirkit_pool_stop"))()
    for t in workers:
        t.join()


def pool(threads=None) -> ThreadPool:
    return _pool(threads or cpu_count())


@functools.lru_cache(maxsize=8)
def _pool(n) -> ThreadPool:
    return ThreadPool(n)


if hasattr(os, "register_at_fork"):     # a child starts with no workers: new pools there
    os.register_at_fork(after_in_child=_pool.cache_clear)


def report_area(arrays):
    """A call's report area for these parameter arrays (see FIRST_SIZE_WORD)."""
    area = (ctypes.c_uint64 * (FIRST_SIZE_WORD + len(arrays)))()
    for i, a in enumerate(arrays):
        area[FIRST_SIZE_WORD + i] = a.nbytes
    return area


def returned_value(slot, dtype):
    """The value a T.ret left in the result slot (see llvm/function.py), or None."""
    raw = bytes(slot)
    if not raw[8]:
        return None
    nd = numpy_dtype(dtype)
    return np.frombuffer(raw[:nd.itemsize], dtype=nd)[0]


class Kernel:
    """A compiled PrimFunc: `kernel(A, B, C)` runs it on numpy arrays (outputs in place).

    A function that returns a value (`-> T.int32`, or a `T.ret(value)` in its body; see
    `passes.control`) gives it back from the call, as a numpy scalar of its return dtype, or
    None when it ended without reaching a `T.ret`; any other function gives back its arrays.
    """

    def __init__(self, name, buffers, scalars, sources, loaded, entry_name, compile_seconds,
                 cached, key, llvm_ir=None, ret_dtype=None):
        self.name = name
        self.ret_dtype = ret_dtype
        self.buffers, self.scalars, self.sources = buffers, scalars, sources
        self.loaded = loaded
        self.entry = _ENTRY(loaded.address(entry_name))
        self.compile_seconds = compile_seconds
        self.from_cache = cached
        self.key = key
        self.llvm_ir = llvm_ir
        self.threads = None

    def pack(self, arrays, scalars=()):
        if len(arrays) != len(self.buffers):
            fail(ARGUMENT, f"'{self.name}' takes {len(self.buffers)} arrays, got {len(arrays)}")
        env = {}
        explicit = [v for v, src in zip(self.scalars, self.sources) if src is None]
        if len(scalars) != len(explicit):
            fail(ARGUMENT, f"'{self.name}' takes {len(explicit)} scalar arguments, "
                 f"got {len(scalars)}")
        for v, x in zip(explicit, scalars):
            env[id(v)] = x
        for b, a in zip(self.buffers, arrays):
            if not isinstance(a, np.ndarray) or not a.flags.c_contiguous:
                fail(ARGUMENT, f"buffer '{b.name}' needs a C-contiguous numpy array", b)
            try:
                want_dtype = numpy_dtype(b.dtype)
            except ValueError:
                fail(ARGUMENT, f"buffer '{b.name}' of dtype {b.dtype} has no numpy equivalent", b)
            if a.dtype != want_dtype:
                fail(ARGUMENT, f"buffer '{b.name}' is {b.dtype}, got an array of {a.dtype}", b)
            if a.ndim != len(b.shape):
                fail(ARGUMENT, f"buffer '{b.name}' has {len(b.shape)} dimensions, got "
                     f"{a.ndim}", b)
            for d, s in enumerate(b.shape):
                if isinstance(s, E.IntImm):
                    want = s.value
                elif isinstance(s, E.Var):
                    want = env.setdefault(id(s), a.shape[d])
                else:
                    continue
                if want != a.shape[d]:
                    fail(ARGUMENT, f"buffer '{b.name}' dimension {d} is {want}, got "
                         f"{a.shape[d]}", b)
        for i in range(len(arrays)):
            for j in range(i):
                if arrays[i].size and arrays[j].size and \
                        np.may_share_memory(arrays[i], arrays[j]):
                    fail(ARGUMENT, f"buffers '{self.buffers[j].name}' and "
                         f"'{self.buffers[i].name}' share memory", self.buffers[i])
        ptrs = (ctypes.c_void_p * max(1, len(arrays)))(*[a.ctypes.data for a in arrays])
        vals = []
        for v in self.scalars:
            x = env[id(v)]
            if is_float(v.dtype):
                vals.append(struct.unpack("q", struct.pack("d", float(x)))[0])
            else:
                vals.append(int(x))
        svals = (ctypes.c_int64 * max(1, len(vals)))(*vals)
        return ptrs, svals

    def __call__(self, *arrays, scalars=(), threads=None):
        ptrs, svals = self.pack(arrays, scalars)
        p = pool(threads or self.threads)
        slot = report_area(arrays)
        self.entry(ptrs, svals, p.launch, ctypes.addressof(slot))
        self.raise_failed_check(slot)
        if self.ret_dtype is None:
            return arrays
        return returned_value(slot, self.ret_dtype)

    def time(self, *arrays, scalars=(), threads=None, repeat=10, min_seconds=0.2, clock=None):
        """Median seconds per call over `repeat` measurements (each at least a few calls).
        `clock` defaults to wall time (`time.perf_counter`); `time.thread_time` measures a
        one-thread run without the time a busy machine keeps it waiting."""
        import time
        now = clock or time.perf_counter
        ptrs, svals = self.pack(arrays, scalars)
        p = pool(threads or self.threads)
        cb = p.launch
        slot = report_area(arrays)
        res = ctypes.addressof(slot)
        self.entry(ptrs, svals, cb, res)                  # warm up
        self.raise_failed_check(slot)
        t0 = now()
        self.entry(ptrs, svals, cb, res)
        one = max(now() - t0, 1e-7)
        number = max(1, int(min_seconds / repeat / one))
        times = []
        for _ in range(repeat):
            t0 = now()
            for _ in range(number):
                self.entry(ptrs, svals, cb, res)
            times.append((now() - t0) / number)
        times.sort()
        return times[len(times) // 2]

    def raise_failed_check(self, slot):
        """The error at the first check a checked call failed (llvm/checks.py):
        `bounds/out-of-bounds` at an access it refused, `arith/division-by-zero` at a
        division by 0, `codegen/unsupported` at a call nested past the depth limit."""
        k = slot[FAILED_CHECK]
        if not k:
            return
        from ..diagnostics import Diagnostic, Span, TirkitError
        from .llvm.checks import TABLE_SYMBOL, read_table
        what, subject, *where = read_table(ctypes.string_at(
            self.loaded.data_address(TABLE_SYMBOL)))[k - 1]
        if what == "divides":
            code, message = DIVISION_BY_ZERO, f"divides by zero: `{subject}` is 0 here (the " \
                "checked run stops at the first division by 0)"
        elif what == "calls":
            from .module_calls import MAX_DEPTH
            code, message = UNSUPPORTED, f"calls '{subject}' nested deeper than {MAX_DEPTH} " \
                "(a recursion that does not end?)"
        else:
            index = ctypes.c_int64(slot[BAD_INDEX]).value
            code, message = OUT_OF_BOUNDS, f"{what} '{subject}' out of bounds: element " \
                f"{index}, but its storage holds {slot[BAD_COUNT]} (the checked run made no " \
                "access outside it)"
        raise TirkitError([Diagnostic(code, "error", message, Span(*where))])
