"""Requests first (server/tirkit_lsp/priority.py): the rules wait between functions while a
request the user waits for is in flight, at most one slice at a time, and the rules' result
does not depend on it."""
import threading
import time

import tirkit
from lsp_helpers import many_kernels
from tirkit.verify import run_rules
from tirkit_lsp.priority import INTERACTIVE, RequestsFirst


def test_pause_returns_at_once_without_requests():
    gate = RequestsFirst()
    t0 = time.perf_counter()
    for _ in range(1000):
        gate.pause()
    assert time.perf_counter() - t0 < 0.5


def test_pause_waits_for_the_request_to_end():
    gate = RequestsFirst(slice_s=5.0)
    gate.begin()
    threading.Timer(0.2, gate.end).start()
    t0 = time.perf_counter()
    gate.pause()
    waited = time.perf_counter() - t0
    assert 0.15 < waited < 2.0


def test_a_long_request_slows_the_rules_but_never_stops_them():
    gate = RequestsFirst(slice_s=0.02)
    gate.begin()                                  # a request that waits for the rules
    try:
        t0 = time.perf_counter()
        calls, busy = 0, 0.0
        while time.perf_counter() - t0 < 1.0:
            gate.pause()
            s = time.perf_counter()
            while time.perf_counter() - s < 0.002:    # a function's rules
                pass
            busy += time.perf_counter() - s
            calls += 1
        # the rules ran about half of the time, in many steps
        assert calls > 100 and 0.3 < busy / (time.perf_counter() - t0) < 0.8
    finally:
        gate.end()


def test_the_rules_pause_before_each_rule_and_give_the_same_result():
    from tirkit.verify import RULES, load_rules
    load_rules()
    text = many_kernels(12)
    tirkit.clear_caches()
    plain = run_rules(tirkit.parse(text, "/tmp/prio.py"))
    tirkit.clear_caches()
    calls = []
    paused = run_rules(tirkit.parse(text, "/tmp/prio.py"), pause=lambda: calls.append(1))
    assert len(calls) == 12 * len(RULES)
    assert [(d.code, d.span.line, d.message) for d in paused] == \
        [(d.code, d.span.line, d.message) for d in plain]


def test_hover_is_interactive_and_diagnostics_are_not():
    assert "textDocument/hover" in INTERACTIVE and "textDocument/completion" in INTERACTIVE
    assert "textDocument/diagnostic" not in INTERACTIVE
