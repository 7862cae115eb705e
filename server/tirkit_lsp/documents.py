"""Document snapshots and their analyses, keyed by URI and version.

An `Analysis` is built from one snapshot (URI, version, text) in a worker thread.  What it
computes beyond the parse (rule diagnostics, the symbol index, costs) is computed once, on
first use, under a lock of its own, so features running on different threads share the work
and a read (the symbol index for a hover) never waits for a write it does not need (the
rules).  The parse reuses every unchanged function of the version before (the core caches
by definition), so a new version's functions other than the edited one are analysed as
soon as it exists.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

import tirkit
from tirkit.ir.stmt import PrimFunc
from tirkit.script.parse import CollectionPaused
from tirkit.verify import run_rules

from .lines import Lines


def uri_to_path(uri: str):
    from pygls.uris import to_fs_path
    try:
        return to_fs_path(uri)
    except Exception:
        return None


class Analysis:
    def __init__(self, uri: str, version, text: str, previous: "Analysis | None" = None,
                 lines: Lines | None = None, pool=None):
        self.uri = uri
        self.version = version
        self.text = text
        self.path = uri_to_path(uri)
        # split lazily (a line is cut when asked for); `lines`: the index of this very text
        # as the document store keeps it, else one is made
        self.lines = lines if lines is not None and lines.text is text else Lines(text)
        # `pool`: processes that parse a large file's new definitions (a cold open)
        self.result = tirkit.parse(text, self.path, pool=pool)
        self._lock = threading.Lock()      # guards the two dicts below, held only briefly
        self._cache: dict = {}
        self._locks: dict = {}             # key -> the lock its computation holds
        if previous is not None:
            self._inherit(previous)

    def _inherit(self, previous: "Analysis") -> None:
        """Keep what the version before computed for the functions it shares with this one
        (the very same IR objects: unchanged and in the same place)."""
        shared = {id(f) for _, f in self.result.module.functions}
        with previous._lock:
            for key, value in previous._cache.items():
                if isinstance(key, tuple) and key[0] == "cost" and key[1] in shared:
                    self._cache[key] = value

    @property
    def has_kernels(self) -> bool:
        return bool(self.result.kernels)

    def kernel_at(self, line: int):
        """The kernel definition (`script.parse.Kernel`) whose text holds 1-based `line`, or
        None."""
        return next((k for k in self.result.kernels
                     if k.chunk.start_line <= line <= k.chunk.end_line), None)

    def _once(self, key, fn):
        """fn(), computed once per key; other keys are not held up meanwhile."""
        with self._lock:
            if key in self._cache:
                return self._cache[key]
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            with self._lock:
                if key in self._cache:
                    return self._cache[key]
            value = fn()
            with self._lock:
                self._cache[key] = value
            return value

    def diagnostics(self, full: bool, target=None, intrinsics=(), pause=None) -> list:
        """Core diagnostics: the fast rule set, or every rule (`full`); `pause`: see
        `run_rules` (it does not change the result, only when it is ready)."""
        if not self.has_kernels:
            return []
        intrinsics = tuple(intrinsics or ())
        if full:
            return self._once(("full", target, intrinsics),
                              lambda: self._rules(target, False, intrinsics, pause))
        return self._once(("fast", intrinsics),
                          lambda: self._rules(target, True, intrinsics, pause))

    def _rules(self, target, fast_only: bool, intrinsics=(), pause=None) -> list:
        # the collector paused, as for the parse: the rules build many objects that stay
        # alive, and each full collection would walk every object of a large file's analysis
        with CollectionPaused():
            return run_rules(self.result, target=target, fast_only=fast_only,
                             intrinsics=intrinsics, pause=pause)

    @property
    def index(self):
        from tirkit.analysis.symbols import SymbolIndex
        return self._once("index", lambda: SymbolIndex(self.result))

    def costs(self, func: PrimFunc):
        from tirkit.analysis.cost import kernel_costs
        return self._once(("cost", id(func)), lambda: kernel_costs(func, self.result.module))

    def functions(self):
        return [f for _, f in self.result.module.functions if isinstance(f, PrimFunc)]


class AnalysisCache:
    """The newest analyses, at most `size` of them, by (uri, version)."""

    def __init__(self, size: int = 64):
        self.size = size
        self._items: "OrderedDict[tuple, Analysis]" = OrderedDict()

    def latest(self, uri):
        """The newest analysis kept for a document, or None."""
        found = [a for (u, _), a in self._items.items() if u == uri]
        return found[-1] if found else None

    def get(self, uri, version):
        a = self._items.get((uri, version))
        if a is not None:
            self._items.move_to_end((uri, version))
        return a

    def put(self, a: Analysis):
        # one analysis per document: older versions are of no further use
        for key in [k for k in self._items if k[0] == a.uri and k != (a.uri, a.version)]:
            del self._items[key]
        self._items[(a.uri, a.version)] = a
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def drop(self, uri):
        for key in [k for k in self._items if k[0] == uri]:
            del self._items[key]
