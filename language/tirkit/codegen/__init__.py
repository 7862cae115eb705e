"""Code generation: TensorIR -> flat loops -> LLVM (llvmlite) -> native code for the host CPU.

    kernel = tirkit.codegen.build(func, module)     # compiled, cached by structural hash
    kernel(A, B, C)                                 # numpy arrays, outputs written in place
    tirkit.codegen.interp.run_reference(func, [A, B, C], module=module)   # the oracle

A function that returns a value (`T.ret`, see passes/control.py) gives it back from both:
`kernel(scalars=(x, y))` and `run_reference(func, [], [x, y])` return it.
"""
from __future__ import annotations

import functools
import os
import tempfile
import time

from ..ir import stmt as S
from ..lru import LRU
from .errors import ARGUMENT, THREAD_BINDING, UNSUPPORTED
from ..ir.hash import structural_hash

_MEMORY = LRU(256)          # structural hash -> object code, the most recent kernels


@functools.lru_cache(maxsize=1)
def version() -> str:
    """A digest of the code generator's own sources: a cached kernel from another version of
    the compiler is never reused."""
    import hashlib
    from pathlib import Path
    h = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for p in sorted(here.rglob("*.py")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def cache_dir() -> str:
    d = os.environ.get("TIRKIT_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tirkit", "kernels")
    return d


def _read_cache(key):
    path = os.path.join(cache_dir(), key + ".o")
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _write_cache(key, obj):
    d = cache_dir()
    try:
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(obj)
        os.replace(tmp, os.path.join(d, key + ".o"))
    except OSError:
        pass


def emit_llvm(func: S.PrimFunc, module: S.IRModule | None = None, pipeline=None,
              checked: bool = False) -> str:
    """The (unoptimized) LLVM IR text of func, with the loop hints of `pipeline` (default:
    the one llvm/pipeline.py chooses), bounds-checked when `checked`."""
    from .llvm.function import build_module
    from .llvm.pipeline import choose
    from .passes import lower
    from .llvm.pipeline import loop_metadata
    p = pipeline or choose(func)
    mod, _ = build_module(lower(func, module), unroll_count=p.unroll_count, checked=checked)
    return loop_metadata(str(mod))


def compile_native(func: S.PrimFunc, module: S.IRModule | None = None, pipeline=None,
                   keep_ir: bool = False, checked: bool = False):
    """func -> (object code for the host CPU, entry symbol, optimized IR text or None), with
    `pipeline` or the one llvm/pipeline.py chooses, bounds-checked when `checked`
    (llvm/checks.py); no cache."""
    from .llvm import engine
    from .llvm.function import build_module
    from .llvm.pipeline import choose
    from .llvm.pipeline import loop_metadata
    from .passes import lower
    p = pipeline or choose(func)
    mod, entry_name = build_module(lower(func, module), unroll_count=p.unroll_count,
                                   checked=checked)
    obj, ir_text = engine.compile_ir(loop_metadata(str(mod)), p, keep_ir)
    return obj, entry_name, ir_text


def build(func: S.PrimFunc, module: S.IRModule | None = None, cache: bool = True,
          keep_ir: bool = False, pipeline=None, checked: bool = False):
    """Compile func for the host CPU; a second build of the same structure is not recompiled
    (in memory, and across processes through the on-disk cache).  The LLVM pipeline is the one
    llvm/pipeline.py chooses (and measures the choice of) unless `pipeline` is given.

    `checked`: each load and store tests its index against its storage first, and a call
    that reaches one outside ends with a `bounds/out-of-bounds` error at that access instead
    of making it; an integer division by 0 ends it with `arith/division-by-zero`
    (llvm/checks.py)."""
    from .handles import with_param_buffers
    from .llvm import engine
    from .module_calls import called
    from .passes import check_cpu, signature
    from .passes.control import check_control_flow, return_dtype
    from .runtime import Kernel
    func = with_param_buffers(func, module)
    check_cpu(func)
    check_control_flow(func)
    cpu, features = engine.host_cpu()
    consts = module.constants if module is not None else None
    callees = "|".join(f"{name}:{structural_hash(g, consts)}" for name, g in called(func, module))
    key = structural_hash(func, consts,
                          f"{version()}|{cpu}|{features}|{pipeline}|{checked}|{callees}")
    buffers, scalars, sources = signature(func)
    entry_name = f"tirkit_{func.name}"
    t0 = time.perf_counter()
    obj, cached, ir_text = None, False, None
    if cache:
        obj = _MEMORY.get(key) or _read_cache(key)
        cached = obj is not None
    if obj is None:
        obj, entry_name, ir_text = compile_native(func, module, pipeline, keep_ir, checked)
        if cache:
            _write_cache(key, obj)
    _MEMORY.put(key, obj)
    loaded = engine.Loaded(obj)
    seconds = time.perf_counter() - t0
    return Kernel(func.name, buffers, scalars, sources, loaded, entry_name, seconds, cached,
                  key, ir_text if keep_ir else None, return_dtype(func))


__all__ = ["build", "compile_native", "emit_llvm", "structural_hash", "ARGUMENT", "THREAD_BINDING",
           "UNSUPPORTED"]
