"""Block and kernel costs on the shared examples, checked against hand counts and numpy."""
from __future__ import annotations

import numpy as np
import pytest

import tirkit
from tirkit.analysis.cost import (Poly, bound_by, kernel_costs, roofline_seconds,
                                  target_peaks)
from call_texts import SIZED
from conftest import EXAMPLES


def costs(name):
    r = tirkit.parse((EXAMPLES / "valid" / f"{name}.py").read_text())
    f = r.module.prim_funcs()[0][1]
    kc = kernel_costs(f)
    return kc, {b.name: b for b in kc.blocks.values()}


def test_matmul_block_c():
    kc, blocks = costs("matmul")
    c = blocks["C"]
    assert c.flops.value == 2 * 128 ** 3 == 4_194_304
    assert c.executions.value == 128 ** 3
    # each instance loads C, A, B (4 bytes each); init writes each C element once
    assert c.bytes_read.value == 3 * 4 * 128 ** 3
    assert c.bytes_written.value == 4 * 128 ** 3 + 4 * 128 ** 2
    assert c.unique_bytes == 3 * 128 * 128 * 4
    assert c.intensity == pytest.approx(4_194_304 / 196_608)
    assert c.asymptotic == "O(128·128·128)"
    assert kc.total.flops.value == 4_194_304


def test_roofline_on_targets():
    _, blocks = costs("matmul")
    c = blocks["C"]
    cpu = target_peaks("llvm")
    assert roofline_seconds(c, "llvm") == pytest.approx(4_194_304 / cpu["float32"])
    assert bound_by(c, "llvm") == "compute"
    gpu = target_peaks("cuda")
    assert roofline_seconds(c, "cuda") == pytest.approx(
        max(4_194_304 / gpu["float32"], 196_608 / gpu["bandwidth"]))
    assert target_peaks("znver4") is cpu and target_peaks("nvidia/a100") is gpu


def test_default_target_by_thread_bindings():
    from tirkit.analysis.cost import default_target
    for name, want in (("matmul", "llvm"), ("gpu_matmul_shared", "cuda")):
        f = tirkit.parse((EXAMPLES / "valid" / f"{name}.py").read_text()).module.prim_funcs()[0][1]
        assert default_target(f) == want
    assert target_peaks("cuda-sm90") is target_peaks("h100")


def test_symbolic_extents():
    _, blocks = costs("batch_matmul_symbolic")
    c = blocks["C"]
    assert c.flops.value is None
    assert str(c.flops) == "4,096·m·n"                 # 2 * 32 * 64 per (n, m)
    assert c.asymptotic == "O(n·m·32·64)"
    assert c.unique_bytes is None and roofline_seconds(c) is None


def test_softmax_blocks_and_footprints():
    _, blocks = costs("softmax")
    assert list(blocks) == ["root", "row_max", "exp", "row_sum", "norm"]
    assert blocks["exp"].flops.value == 2 * 64 * 1024        # subtract, exp
    # exp reads A (64x1024) and row_max (64), writes expo (64x1024): all float32
    assert blocks["exp"].unique_bytes == (64 * 1024 * 2 + 64) * 4


def test_padding_block_counts_no_flops_and_clips_footprint():
    _, blocks = costs("conv2d_nhwc_relu")
    pad = blocks["pad"]
    assert pad.flops.value == 0
    assert pad.executions.value == 1 * 58 * 58 * 64
    conv = blocks["conv"]
    assert conv.flops.value == 2 * 56 * 56 * 64 * 3 * 3 * 64
    assert conv.asymptotic == "O(1·56·56·64·3·3·64)"


def test_flops_match_a_numpy_count():
    """FLOPs of the int8 matmul equal 2·M·N·K, the count numpy's einsum performs."""
    _, blocks = costs("matmul_u8s8s32")
    c = blocks["C"]
    m, n, k = 128, 64, 256
    a = np.ones((m, k), np.int32)
    b = np.ones((k, n), np.int32)
    assert np.einsum("ik,kj->ij", a, b).sum() == m * n * k
    assert c.flops.value == 2 * m * n * k


def test_poly_arithmetic():
    n, m = Poly.sym("n"), Poly.sym("m")
    p = (n * m * 3) + (m * n * 2) + Poly.const(5)
    assert str(p) == "5·m·n + 5"
    assert p.value is None and (Poly.const(4) * 3).value == 12


def test_one_target_table():
    # the roofline reads its peaks from the target table: every name that target.get knows
    # gives the peaks of that very target
    from tirkit import target
    for alias, name in target.ALIASES.items():
        assert target_peaks(alias) is target.PEAKS[name], alias
    assert target_peaks(target.get("sm90"))["label"] == target.PEAKS["cuda-sm90"]["label"]
    assert target_peaks("cuda-sm90") is not target_peaks("cuda-sm80")


CALLS = '''from tvm.script import ir as I
from tvm.script import tir as T


@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((64, 16), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(64):
            with T.block("row"):
                vi = T.axis.spatial(64, i)
                Module.row_sum(T.address_of(A[vi, 0]), T.address_of(B[vi]))

    @T.prim_func(private=True)
    def row_sum(a: T.handle("float32"), b: T.handle("float32")):
        X = T.decl_buffer((16,), "float32", data=a)
        Y = T.decl_buffer((1,), "float32", data=b)
        Y[0] = T.float32(0)
        for j in range(16):
            Y[0] = Y[0] + X[j]

    @T.prim_func(private=True)
    def down(n: T.int32) -> T.float32:
        if n > 0:
            return Module.down(n - 1) * T.float32(2)
        return T.float32(1)
'''


def test_a_call_counts_the_work_of_the_function_it_calls():
    """A kernel whose work is done in a module function counts it at each call (with the
    module given): the callee's FLOPs and bytes moved, times the calls; a recursion counts
    each function once on its path."""
    mod = tirkit.parse(CALLS).module
    one = kernel_costs(mod["row_sum"])
    assert one.total.flops.value == 16
    assert one.total.bytes_read.value == 16 * 8
    kc = kernel_costs(mod["main"], mod)
    assert kc.total.flops.value == 64 * 16
    assert kc.total.bytes_read.value == 64 * 16 * 8
    assert kc.total.bytes_written.value == 64 * 17 * 4
    row = {b.name: b for b in kc.blocks.values()}["row"]
    assert row.flops.value == 64 * 16
    assert kernel_costs(mod["main"]).total.flops.value == 0      # no module: not known
    # `* 2` of its return value, the call of itself nothing more (`n - 1` computes on no
    # data: integer arithmetic on scalars alone does not count, as in `tirkit bench`)
    assert kernel_costs(mod["down"], mod).total.flops.value == 1


def test_a_call_counts_its_callees_loops_over_the_sizes_it_passes():
    """A callee's loop over a scalar parameter runs as many times as the call's argument
    says: constant, or the caller's own symbol."""
    mod = tirkit.parse(SIZED.format(second=8)).module
    kc = kernel_costs(mod["main"], mod)
    assert kc.total.flops.value == 64 * (16 + 8)
    assert kc.total.bytes_read.value == 64 * (16 + 8) * 8
    assert kc.total.bytes_written.value == 64 * (17 + 9) * 4
    mod = tirkit.parse(SIZED.format(second="m")).module
    kc = kernel_costs(mod["main"], mod)
    assert str(kc.total.flops) == "64·m + 1,024"
    # the callee alone: its parameter stays a symbol
    assert str(kernel_costs(mod["row_sum"], mod).total.flops) == "n"


def test_bench_counts_a_callees_loop_over_a_size_it_is_passed_the_same_way():
    """`tirkit bench` counts by the call's argument too: a constant, or a size of the caller
    bound for the run."""
    from tirkit.codegen.flops import count_ops
    from tirkit.codegen.passes import lower
    mod = tirkit.parse(SIZED.format(second=8)).module
    low = lower(mod["main"], mod)
    assert count_ops(low.body, callees=low.callees) == (64 * (16 + 8), 0)
    mod = tirkit.parse(SIZED.format(second="m")).module
    low = lower(mod["main"], mod)
    m = next(v for v in low.scalars if v.name == "m")
    assert count_ops(low.body, {id(m): 5}, low.callees) == (64 * (16 + 5), 0)
