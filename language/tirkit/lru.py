"""One bounded, thread-safe cache for the whole core.

    memo = LRU(1024)
    hit = memo.get(key)             # None when absent; a hit becomes the most recent entry
    memo.put(key, value)            # the least recently used entry goes when full
    memo.clear()

The language server runs analyses on a thread pool, so every cache in the core is bounded and
guarded by a lock: this class (where keys are not plain arguments) or `functools.lru_cache`.
"""
from __future__ import annotations

import threading
from collections import OrderedDict


class LRU:
    __slots__ = ("size", "_data", "_lock")

    def __init__(self, size: int):
        self.size = size
        self._data: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, default=None):
        with self._lock:
            hit = self._data.get(key, _MISSING)
            if hit is _MISSING:
                return default
            self._data.move_to_end(key)
            return hit

    def put(self, key, value) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def pop(self, key, default=None):
        with self._lock:
            return self._data.pop(key, default)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key) -> bool:
        return key in self._data


_MISSING = object()
