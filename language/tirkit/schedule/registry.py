"""The registry of schedule primitives: one module per primitive registers its function.

    @primitive("split")
    def split(sch, loop, factors, preserve_unit_iters=True): ...

`Schedule.<name>(...)` calls the function and records it in the trace."""
from __future__ import annotations

import importlib
import inspect
import threading

PRIMITIVES: dict = {}

MODULES = ("loops.split", "loops.fuse", "loops.reorder", "loops.loop_kind", "loops.bind",
           "annotate.annotate", "inline.compute_inline", "inline.reverse_compute_inline",
           "compute_at.compute_at", "compute_at.reverse_compute_at", "cache.cache_read",
           "cache.cache_write", "reduction.decompose_reduction", "blockize.blockize",
           "layout.set_scope", "reduction.rfactor", "layout.reindex", "layout.pad_einsum",
           "tensorize.transform_layout", "tensorize.tensorize", "tensorize.auto_tensorize")


class Primitive:
    def __init__(self, name, fn, record=True):
        self.name = name
        self.fn = fn
        self.record = record          # False: the primitive records the steps it applies
        self.signature = inspect.signature(fn)
        self.params = list(self.signature.parameters)[1:]
        self.varargs = next((n for n, q in self.signature.parameters.items()
                             if q.kind is q.VAR_POSITIONAL), None)


def primitive(name, record=True):
    def deco(fn):
        PRIMITIVES[name] = Primitive(name, fn, record)
        return fn
    return deco


_loaded = False
_load_lock = threading.Lock()


def load():
    """Every primitive, registered once; a thread that asks while another registers them
    waits for all of them (not a partly filled table)."""
    global _loaded
    if not _loaded:
        with _load_lock:
            if not _loaded:
                for m in MODULES:
                    importlib.import_module(f"{__package__}.{m}")
                _loaded = True
    return PRIMITIVES
