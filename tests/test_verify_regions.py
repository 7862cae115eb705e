"""Block read/write regions and footprints after compaction."""
import textwrap

import tirkit
from tirkit.analysis import accesses, block_regions, footprint


def func(body):
    r = tirkit.parse("from tvm.script import tir as T\n\n\n" + textwrap.dedent(body))
    return r.module.prim_funcs()[0][1]


def test_regions_relax_inner_loops_and_keep_iterators():
    f = func("""
    @T.prim_func
    def f(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                for k in range(8):
                    if k < 5:
                        B[vi * 4] = A[vi * 4 + 1, k * 2]
    """)
    fa = accesses(f)
    (r,) = [x for x in fa.realizes if x.block.name_hint == "B"]
    regs = {(a.buffer.name, a.is_write): reg for a, reg in block_regions(fa, r)}
    (lo0, hi0), (lo1, hi1) = regs[("A", False)]
    assert repr(lo0) == "4*vi + 1" and lo0 == hi0
    assert (lo1.const, hi1.const) == (0, 8)          # k < 5 respected: 2 * 4
    assert len(regs[("B", True)]) == 1


def test_footprint_after_compaction():
    f = func("""
    @T.prim_func
    def f(A: T.Buffer((1024, 1024), "float32"), C: T.Buffer((1024, 1024), "float32")):
        S = T.alloc_buffer((1024, 1024), "float32", scope="shared")
        for by in T.thread_binding(32, thread="blockIdx.y"):
            for ty in T.thread_binding(32, thread="threadIdx.y"):
                for k0 in range(32):
                    for a in range(32):
                        with T.block("S"):
                            v0 = T.axis.spatial(1024, by * 32 + ty)
                            v1 = T.axis.spatial(1024, k0 * 32 + a)
                            S[v0, v1] = A[v0, v1]
                    for a in range(32):
                        with T.block("C"):
                            v0 = T.axis.spatial(1024, by * 32 + ty)
                            v1 = T.axis.spatial(1024, k0 * 32 + a)
                            C[v0, v1] = S[v0, v1]
    """)
    fa = accesses(f)
    (s, _), = [(b, r) for b, r in fa.allocs if b.name == "S"]
    relax_thread = lambda lp: (lp.thread_tag or "").startswith("threadIdx")
    assert footprint(fa, s, relax_thread) == [32, 32]
    # relaxing k0 too (only blockIdx fixed) spans every column
    assert footprint(fa, s, lambda lp: lp.thread_tag != "blockIdx.y") == [32, 1024]
    assert footprint(fa, s, lambda lp: True) == [1024, 1024]
