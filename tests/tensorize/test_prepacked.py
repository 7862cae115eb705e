"""transform_layout on a function parameter (the caller passes the buffer in the new layout)
and the pre-packed GEMM it gives: the packed copy of auto_tensorize removed by compute_inline
once B itself is packed.  Every kernel is run on random inputs against numpy."""
import numpy as np
import pytest

import tirkit
from tirkit import codegen
from tirkit.codegen.interp import run_reference
from tirkit.schedule import Schedule, ScheduleError
from tirkit.tensorize.suggest import block_mappings

from util import gemm, inputs, schedule


def laid_out(X, index_map):
    """X stored through `index_map` (a lambda text over X's indices), with numpy."""
    fn = eval(index_map)
    grids = np.indices(X.shape)
    dest = fn(*grids)
    shape = tuple(int(d.max()) + 1 for d in dest)
    out = np.zeros(shape, X.dtype)
    out[tuple(dest)] = X
    return out


def replays(sch):
    again = sch.trace.apply(Schedule(sch.original))
    assert tirkit.structural_equal(again.mod, sch.mod)
    ns = {"sch": Schedule(sch.original)}
    exec(sch.trace.as_python(), ns)
    assert tirkit.structural_equal(ns["sch"].mod, sch.mod)


@pytest.mark.parametrize("M,N,K,index_map", [
    (16, 32, 16, "lambda k, j: (j // 16, k // 4, j % 16, k % 4)"),
    (8, 12, 6, "lambda k, j: (j, k)"),
    (5, 8, 9, "lambda k, j: (k % 3, j, k // 3)"),
])
def test_parameter_takes_the_new_layout(M, N, K, index_map):
    sch = schedule(gemm(M, N, K))
    b = sch.get_block("C")
    sch.transform_layout(b, ("read", 1), index_map)
    f = sch.mod["gemm"]
    A, B, ref = inputs(M, N, K, seed=M * N + K)
    Bp = laid_out(B, index_map)
    assert tuple(s.value for s in f.buffer_map[1][1].shape) == Bp.shape
    C = np.full((M, N), 3, "int32")
    codegen.build(f, sch.mod)(A, Bp, C)
    assert np.array_equal(C, ref)
    C2 = np.zeros((M, N), "int32")
    run_reference(f, [A, Bp, C2], module=sch.mod)
    assert np.array_equal(C2, ref)
    assert [d for d in tirkit.check(sch.script()) if d.severity != "hint"] == []
    replays(sch)


def test_output_parameter_is_written_in_the_new_layout():
    sch = schedule(gemm(6, 10, 7))
    sch.transform_layout(sch.get_block("C"), ("write", 0), "lambda i, j: (j // 5, i, j % 5)")
    A, B, ref = inputs(6, 10, 7, seed=3)
    Cp = np.zeros((2, 6, 5), "int32")
    codegen.build(sch.mod["gemm"], sch.mod)(A, B, Cp)
    assert np.array_equal(Cp, laid_out(ref, "lambda i, j: (j // 5, i, j % 5)"))
    replays(sch)


def test_parameter_with_strides_is_refused():
    text = gemm(4, 4, 4).replace('B: T.Buffer((4, 4), "int8")',
                                 'B: T.Buffer((4, 4), "int8", strides=(8, 1))')
    sch = schedule(text)
    with pytest.raises(ScheduleError) as e:
        sch.transform_layout(sch.get_block("C"), ("read", 1), "lambda k, j: (j, k)")
    assert e.value.kind == "transform_layout/parameter"


def host_intrinsic(M, N, K):
    sch = schedule(gemm(M, N, K))
    ok, _ = block_mappings(sch.get(sch.get_block("C")))
    if not ok:
        pytest.skip("no int8 dot-product intrinsic on this host")
    return ok[0].intrin.name




def test_prepacked_tensorized_gemm_reads_b_directly():
    M, N, K = 16, 32, 64
    sch = schedule(gemm(M, N, K))
    sch.auto_tensorize(sch.get_block("C"), host_intrinsic(M, N, K))
    step = [s for s in sch.trace.instructions if s.name == "transform_layout"][-1]
    head, body = step.kwargs["index_map"].split(":", 1)
    assert head == "lambda vj, vk"          # the copy's indices: B's own are (vk, vj)
    param_map = f"lambda vk, vj:{body}"
    copy = sch.get_block("B_reindex_reindex")
    sch.transform_layout(copy, ("read", 0), param_map)
    sch.compute_inline(copy)
    out = sch.script()
    assert "B_reindex" not in out and "T.match_buffer(B[" in out
    A, B, ref = inputs(M, N, K, seed=11)
    Bp = laid_out(B, param_map)
    C = np.full((M, N), -5, "int32")
    codegen.build(sch.mod["gemm"], sch.mod)(A, Bp, C)
    assert np.array_equal(C, ref)
    assert [d for d in tirkit.check(out) if d.severity != "hint"] == []
    replays(sch)


def test_identity_copy_of_a_written_source_is_not_inlined():
    text = '''from tvm.script import tir as T


@T.prim_func
def f(A: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32")):
    T.func_attr({"global_symbol": "f", "tir.noalias": True})
    X = T.alloc_buffer((4, 2), "int32")
    Y = T.alloc_buffer((4, 2), "int32")
    for i in range(8):
        with T.block("Y"):
            v = T.axis.spatial(8, i)
            Y[v // 2, v % 2] = A[v]
    for i in range(8):
        with T.block("X"):
            v = T.axis.spatial(8, i)
            X[v // 2, v % 2] = Y[v // 2, v % 2]
    for i in range(8):
        with T.block("C"):
            v = T.axis.spatial(8, i)
            C[v] = X[v // 2, v % 2] + 1
'''
    sch = schedule(text)
    with pytest.raises(ScheduleError) as e:
        sch.compute_inline(sch.get_block("X"))
    assert e.value.kind == "compute_inline/source-written"


def test_benchmark_schedules_run_exact():
    """benchmarks/tensorize_speed.py's schedules (register- and cache-blocked, B packed in the
    kernel or pre-packed) with this host's intrinsic, at 128³: each kernel's output is
    checked equal to numpy inside `ours`, which raises otherwise."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import tensorize_speed as ts
    n = 128
    host_intrinsic(n, n, n)
    A, B, ref = inputs(n, n, n, seed=2)
    calls, intrin, sch, pmap = ts.ours(n, A, B, ref)
    assert len(calls) == 3
    assert "T.unroll" in sch.script()
    Bp = ts.packed(B, pmap)
    assert Bp.size == B.size and np.array_equal(np.sort(Bp, axis=None), np.sort(B, axis=None))
