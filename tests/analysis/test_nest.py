"""analysis/nest: what the editor shows about a loop nest, computed in the core."""
from __future__ import annotations

from pathlib import Path

import tirkit
from tirkit.analysis.nest import (find_realize, inferred_regions, loop_trip_count,
                                  producers_consumers)
from tirkit.ir import stmt as S
from tirkit.ir.visit import find_all

EXAMPLES = Path(__file__).resolve().parents[3] / "shared" / "examples" / "valid"


def _func(name):
    res = tirkit.parse((EXAMPLES / name).read_text())
    assert not [d for d in res.diagnostics if d.severity == "error"]
    return res.module.functions[0][1]


def test_trip_counts_and_producers_consumers_of_softmax():
    f = _func("softmax.py")
    loops = find_all(f.body, lambda x: True, S.For)
    assert loop_trip_count(loops[0]).value == 64 * 1024       # i of the row_max nest
    assert loop_trip_count(loops[1]).value == 1024            # its k
    bufs = {b.name: b for b in find_all(f.body, lambda x: True, S.Block)[0].alloc_buffers}
    assert producers_consumers(f, bufs["expo"]) == (["exp"], ["row_sum", "norm"])
    # a reduction reads what it writes
    assert producers_consumers(f, bufs["row_max"]) == (["row_max"], ["row_max", "exp"])
    assert producers_consumers(f, f.buffer_of(f.params[0])) == ([], ["row_max", "exp"])
    assert producers_consumers(f, f.buffer_of(f.params[1])) == (["norm"], [])


def test_symbolic_trip_count_and_inferred_regions():
    f = _func("batch_matmul_symbolic.py")
    outer = find_all(f.body, lambda x: True, S.For, nested=False)[0]
    count = loop_trip_count(outer)
    assert count.value is None and str(count)                # symbolic: no number
    f = _func("matmul.py")
    block = find_all(f.body, lambda x: x.name_hint == "C", S.Block)[0]
    reads, writes = inferred_regions(f, find_realize(f, block))
    assert [r.buffer.name for r in reads] == ["A", "B"]        # C's own read is left out
    assert {r.buffer.name for r in writes} == {"C"}             # init and body
    assert all(r.dims is not None and len(r.dims) == 2 for r in reads + writes)


def test_buffer_bytes_and_value_stats():
    import numpy as np

    from tirkit.analysis.nest import buffer_bytes, value_stats
    f = _func("matmul.py")
    a = f.buffer_of(f.params[0])
    assert buffer_bytes(a) == 4 * int(np.prod([d.value for d in a.shape]))
    g = _func("batch_matmul_symbolic.py")
    assert buffer_bytes(g.buffer_of(next(p for p in g.params if g.buffer_of(p)))) is None
    assert value_stats(np.array([[1, -3], [2, 4]], dtype="int8")) == (-3.0, 4.0, 1.0)
    assert value_stats(np.zeros((0,), "float32")) is None and value_stats(None) is None
