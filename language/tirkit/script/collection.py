"""The garbage collector paused while large parses build objects that stay alive."""
from __future__ import annotations

import gc
import threading

_gc_lock = threading.Lock()
_gc_pauses = [0, False]       # parses under way, whether collection was on before the first


# a pause during which at least this many objects were made and kept (about 20,000 lines)
FREEZE_OBJECTS = 500_000


class CollectionPaused:
    """Pause the cyclic garbage collector while a parse (or a whole check) builds many objects
    that stay alive: each full collection walks everything alive, so their cost would grow
    faster than the file.  Nested and concurrent pauses (threads of the server) share one.

    When the last pause ends after a large file was built (`FREEZE_OBJECTS`), what is alive
    is frozen (`gc.freeze`): left to reference counting, out of the collector's generations,
    so that no later full collection walks it (2-3 s for a 100,000-line file, paid at some
    edit after the open).  `thaw()` hands those objects back to the collector (the language
    server calls it when a document is closed)."""

    def __enter__(self):
        with _gc_lock:
            if _gc_pauses[0] == 0:
                _gc_pauses[1] = gc.isenabled()
                gc.disable()
            _gc_pauses[0] += 1

    def __exit__(self, *exc):
        with _gc_lock:
            _gc_pauses[0] -= 1
            if _gc_pauses[0] == 0 and _gc_pauses[1]:
                if gc.get_count()[0] >= FREEZE_OBJECTS:
                    gc.freeze()
                gc.enable()


def thaw() -> None:
    """Give the objects frozen after large parses back to the garbage collector (their
    cycles, if any became garbage, are then collected by the next full collection)."""
    with _gc_lock:
        gc.unfreeze()


__all__ = ["CollectionPaused", "thaw", "FREEZE_OBJECTS"]
