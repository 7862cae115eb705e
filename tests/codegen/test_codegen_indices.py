"""Buffer indices with floor divisions and modulos are simplified over the loop ranges before
flattening: a packed layout read in a vectorized loop becomes one contiguous vector load,
not a gather; a division the ranges do not remove stays; results match numpy."""
import numpy as np

import tirkit
from tirkit.codegen import build
from tirkit.codegen.passes import lower
from tirkit.ir import expr as E
from tirkit.ir.visit import walk

PACKED = '''from tvm.script import tir as T


@T.prim_func
def packed(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    P = T.alloc_buffer((4, 64, 16), "float32")
    for k, j in T.grid(64, 64):
        with T.block("pack"):
            vk, vj = T.axis.remap("SS", [k, j])
            P[vj // 16, vk, vj % 16] = A[vk, vj]
    for i, j0 in T.grid(64, {outer}):
        for j1 in T.vectorized({lanes}):
            with T.block("use"):
                vi = T.axis.spatial(64, i)
                vj = T.axis.spatial(64, j0 * {lanes} + j1)
                B[vi, vj] = P[vj // 16, vi, vj % 16] * T.float32(2)
'''


def _kernel(lanes):
    mod = tirkit.parse(PACKED.format(outer=64 // lanes, lanes=lanes)).module
    return mod, mod["packed"]


def _loads_of(body, name):
    out = []
    walk(body, lambda x: out.append(x) if isinstance(x, E.BufferLoad) and
         x.buffer.name == name else None)
    return out


def _divisions(e):
    out = []
    walk(e, lambda x: out.append(x) if isinstance(x, (E.FloorDiv, E.FloorMod)) else None)
    return out


def _run(mod, f):
    rng = np.random.default_rng(7)
    a = rng.uniform(-2, 2, (64, 64)).astype(np.float32)
    b = np.full((64, 64), np.nan, np.float32)
    k = build(f, mod, cache=False, keep_ir=True)
    k(a, b)
    np.testing.assert_array_equal(b, a * 2)
    return k.llvm_ir


def test_a_packed_layout_read_in_a_vector_tile_is_one_vector_load():
    mod, f = _kernel(16)
    trace = []
    lower(f, mod, trace=trace)
    steps = dict(trace)
    (before,) = _loads_of(steps["compact_regions"], "P")
    (after,) = _loads_of(steps["simplify_indices"], "P")
    assert _divisions(before.indices[0]) and not _divisions(after.indices[0])
    ir = _run(mod, f)
    assert "masked.gather" not in ir and "load <16 x float>" in ir


def test_a_division_the_loop_ranges_do_not_remove_stays():
    # 32 lanes cross two rows of P: (32*j0 + j1) // 16 is not linear in j1
    mod, f = _kernel(32)
    trace = []
    lower(f, mod, trace=trace)
    (after,) = _loads_of(dict(trace)["simplify_indices"], "P")
    assert _divisions(after.indices[0])
    _run(mod, f)
