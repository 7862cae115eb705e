"""Per-store features on small kernels whose counts are computed by hand."""
import math

import numpy as np
import pytest

import tirkit
from tirkit.cost.features import NAMES, extract

HEAD = "from tvm.script import tir as T\n\n\n"


def lg(x):
    return math.log2(1 + x)


def func_of(text):
    mod = tirkit.parse(HEAD + text).module
    return mod.prim_funcs()[0][1]


def row_dict(row):
    return {n: float(v) for n, v in zip(NAMES, row)}


ELEMENTWISE = '''@T.prim_func
def ew(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16, 32), "float32")):
    for i, j in T.grid(16, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)
'''

TRANSPOSE = '''@T.prim_func
def tr(A: T.Buffer((32, 16), "float32"), B: T.Buffer((16, 32), "float32")):
    for i, j in T.grid(16, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.exp(A[vj, vi])
'''

MATMUL = '''@T.prim_func
def mm(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
       C: T.Buffer((8, 8), "float32")):
    for i, j, k in T.grid(8, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def test_names_are_unique_and_match_the_columns():
    assert len(NAMES) == len(set(NAMES))
    assert extract(func_of(ELEMENTWISE)).shape == (1, len(NAMES))
    assert extract(func_of(ELEMENTWISE)).dtype == np.float32


def test_elementwise_counts_bytes_and_strides():
    (row,) = extract(func_of(ELEMENTWISE))
    r = row_dict(row)
    n = 16 * 32
    assert r["op.float_mul"] == pytest.approx(lg(n))
    assert r["op.float_addsub"] == pytest.approx(lg(n))
    assert r["op.float_math"] == 0
    assert r["loop.count"] == 2
    assert r["loop.outer_product"] == pytest.approx(lg(n))
    assert r["loop.innermost_extent"] == pytest.approx(lg(32))
    # both buffers: n accesses of 4 bytes, all unique, unit stride, 16 floats per line
    for b in ("buf0", "buf1"):
        assert r[b + ".present"] == 1
        assert r[b + ".bytes"] == pytest.approx(lg(4 * n))
        assert r[b + ".unique_bytes"] == pytest.approx(lg(4 * n))
        assert r[b + ".stride"] == pytest.approx(lg(1))
        assert r[b + ".lines"] == pytest.approx(lg(n / 16))
        assert r[b + ".reuse_type"] == 0
    assert {r["buf0.is_write"], r["buf1.is_write"]} == {0.0, 1.0}
    assert r["buf2.present"] == 0


def test_transposed_read_has_the_row_stride_and_a_line_per_access():
    (row,) = extract(func_of(TRANSPOSE))
    r = row_dict(row)
    n = 16 * 32
    assert r["op.float_math"] == pytest.approx(lg(n))
    # A[vj, vi]: the inner loop j walks A's rows: stride 16 elements (64 bytes), one line each
    assert r["buf0.is_read"] == 1 and r["buf0.is_write"] == 0
    assert r["buf0.stride"] == pytest.approx(lg(16))
    assert r["buf0.lines"] == pytest.approx(lg(n))
    assert r["buf1.stride"] == pytest.approx(lg(1))
    assert r["buf1.lines"] == pytest.approx(lg(n / 16))


def test_matmul_reduction_init_and_reuse():
    rows = extract(func_of(MATMUL))
    assert rows.shape[0] == 2
    init, body = (row_dict(x) for x in rows)
    assert init["store.is_init"] == 1 and body["store.is_init"] == 0
    assert init["loop.outer_product"] == pytest.approx(lg(64))     # once per (i, j)
    assert body["loop.outer_product"] == pytest.approx(lg(512))
    assert body["op.float_mul"] == pytest.approx(lg(512))
    assert body["op.float_addsub"] == pytest.approx(lg(512))
    assert body["store.read_modify_write"] == 1
    present = [i for i in range(5) if body[f"buf{i}.present"]]
    assert len(present) == 3
    (c,) = [i for i in present if body[f"buf{i}.is_write"]]
    (b,) = [i for i in present if body[f"buf{i}.stride"] == pytest.approx(lg(8))]
    (a,) = [i for i in present if i not in (b, c)]
    # C[vi, vj]: read and written, reused across k (the innermost loop): distance 1 iteration
    assert body[f"buf{c}.is_read"] == 1
    assert body[f"buf{c}.reuse_type"] == 1
    assert body[f"buf{c}.reuse_count"] == pytest.approx(lg(8))
    assert body[f"buf{c}.reuse_dist_iter"] == pytest.approx(lg(1))
    assert body[f"buf{c}.unique_bytes"] == pytest.approx(lg(64 * 4))
    # B[vk, vj]: stride 8 along k; reused across i with distance 64 iterations (j, k)
    assert body[f"buf{b}.reuse_count"] == pytest.approx(lg(8))
    assert body[f"buf{b}.reuse_dist_iter"] == pytest.approx(lg(64))
    assert body[f"buf{b}.lines"] == pytest.approx(lg(512 / 2))   # 2 of B's rows per line
    # A[vi, vk]: unit stride along k; reused across j with distance 8 iterations (k)
    assert body[f"buf{a}.stride"] == pytest.approx(lg(1))
    assert body[f"buf{a}.reuse_dist_iter"] == pytest.approx(lg(8))
    assert body[f"buf{a}.lines"] == pytest.approx(lg(512 / 8))   # 8 of k per line


def test_schedule_changes_loop_features():
    func = func_of(ELEMENTWISE)
    sch = tirkit.Schedule(func)
    i, j = sch.get_loops(sch.get_block("B"))
    j0, j1 = sch.split(j, [None, 8])
    sch.parallel(i)
    sch.vectorize(j1)
    (row,) = extract(sch.mod.prim_funcs()[0][1])
    r = row_dict(row)
    assert r["loop.parallel.extent"] == pytest.approx(lg(16))
    assert r["loop.parallel.position"] == 3           # the outermost of three loops
    assert r["loop.vectorized.extent"] == pytest.approx(lg(8))
    assert r["loop.vectorized.position"] == 1         # innermost
    assert r["loop.parallel_launches"] == pytest.approx(lg(1))
    assert r["loop.count"] == 3
    # the same work: operation counts unchanged by the schedule
    (plain,) = extract(func)
    assert r["op.float_mul"] == row_dict(plain)["op.float_mul"]


def test_deterministic():
    f = func_of(MATMUL)
    assert np.array_equal(extract(f), extract(f))
