"""The garbage collector around large parses (script/collection.py `CollectionPaused`): paused
while a parse builds, nested pauses share one, and what a large build left alive is frozen
(no later full collection walks it) until `thaw`."""
import gc

from tirkit.script import collection as P


def _build(n):
    return [[i] for i in range(n)]           # n tracked objects that stay alive


def test_a_pause_stops_and_restarts_the_collector():
    assert gc.isenabled()
    with P.CollectionPaused():
        assert not gc.isenabled()
        with P.CollectionPaused():
            assert not gc.isenabled()
        assert not gc.isenabled()               # the outer pause still holds
    assert gc.isenabled()


def test_a_large_build_is_frozen_until_thawed(monkeypatch):
    P.thaw()
    monkeypatch.setattr(P, "FREEZE_OBJECTS", 50_000)
    with P.CollectionPaused():
        small = _build(100)
    assert gc.get_freeze_count() == 0           # a small build stays with the collector
    try:
        with P.CollectionPaused():
            big = _build(60_000)
        assert gc.get_freeze_count() >= 60_000
        assert gc.isenabled()
    finally:
        P.thaw()
    assert gc.get_freeze_count() == 0
    assert len(big) == 60_000 and len(small) == 100


def test_a_collector_off_before_stays_off(monkeypatch):
    gc.disable()
    try:
        with P.CollectionPaused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
