"""One rule for the operations a value performs: the kernel cost (hover, code lens, roofline,
`tirkit tune`) and the operation count of a build (`tirkit bench`'s GFLOP/s) count the same
operations, each rule shown on a kernel of one statement and on the shared examples."""
from __future__ import annotations

from pathlib import Path

import pytest

import tirkit
from tirkit.analysis.cost import kernel_costs
from tirkit.codegen.cuda import is_thread_bound, lower_gpu
from tirkit.codegen.flops import count_ops
from tirkit.codegen.passes import lower
from conftest import EXAMPLES

KERNEL = '''from tvm.script import tir as T


@T.prim_func
def f(A: T.Buffer((16,), "float32"), D: T.Buffer((16,), "int32"),
      B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "int32")):
    x = T.float32()
    for i in range(4):
        {stmt}
'''

# (statement in a loop of 4, float operations and integer operations of one execution)
RULES = [
    ("B[i] = A[i] * A[i] + T.float32(1)", 2, 0),
    ("B[i] = T.fma(A[i], A[i], A[i])", 2, 0),                         # a multiply and an add
    # a vector operation counts once per lane; its ramp's base is address arithmetic
    ("B[T.ramp(i * 4, 1, 4)] = A[T.ramp(i * 4, 1, 4)] + T.broadcast(A[i] * T.float32(2), 4)",
     5, 0),
    ("C[i] = i * 4 + 1", 0, 0),                                       # index arithmetic
    ("C[i] = D[i] * 3 + 1", 0, 2),                                    # arithmetic on data
    ('C[i] = T.Cast("int32", D[i]) * T.Cast("int32", D[i * 2])', 0, 1),
    ("C[i] = D[D[i] * 2]", 0, 0),                                     # an index, not a value
    # a condition's arithmetic is evaluated; a math call counts one
    ("B[i] = T.if_then_else(A[i] * T.float32(2) > T.float32(0), T.exp(A[i]), T.float32(0))",
     2, 0),
    ("B[i] = T.Select(A[i] > T.float32(0), A[i] * T.float32(2), A[i])", 1, 0),
    ("B[i] = T.Let(x * x + A[i], where={x: A[i] + T.float32(1)})", 3, 0),
    # a call of unknown work counts only its arguments
    ('B[i] = T.call_extern("float32", "my_exp", A[i] * T.float32(2))', 1, 0),
    # a let's value and a value evaluated for its effect count as a stored one
    ("y = A[i] * T.float32(2)\n        B[i] = y + y", 2, 0),
    ('T.evaluate(T.call_extern("int32", "log_value", A[i] * T.float32(3)))', 1, 0),
]


def _func(stmt):
    r = tirkit.parse(KERNEL.format(stmt=stmt))
    assert not [d for d in r.diagnostics if d.severity == "error"], r.diagnostics
    return r.module["f"], r.module


@pytest.mark.parametrize("stmt,fl,io", RULES, ids=[r[0] for r in RULES])
def test_each_rule_counts_the_same_in_the_cost_and_in_the_build(stmt, fl, io):
    f, mod = _func(stmt)
    assert kernel_costs(f, mod).total.flops.value == 4 * (fl + io)
    assert count_ops(lower(f, mod).body) == (4 * fl, 4 * io)


def test_a_lets_value_and_an_evaluated_value_are_read_like_a_stored_one():
    """The bytes a let's value and an evaluated call's arguments load are bytes read."""
    for stmt in ("y = A[i] * T.float32(2)\n        B[i] = y + y",
                 'T.evaluate(T.call_extern("int32", "log_value", A[i] * T.float32(3)))'):
        f, mod = _func(stmt)
        assert kernel_costs(f, mod).total.bytes_read.value == 4 * 4


ROOT = Path(__file__).resolve().parents[2]


def _examples():
    for path in sorted((EXAMPLES / "valid").glob("*.py")) + sorted(
            (ROOT / "examples").glob("*.py")) + sorted((ROOT / "benchmarks" / "gpu_kernels")
                                                       .glob("*.py")):
        r = tirkit.parse(path.read_text())
        for name, f in r.module.prim_funcs():
            if kernel_costs(f, r.module).total.flops.value is not None:   # constant extents
                yield pytest.param(r.module, name, id=f"{path.stem}.{name}")


def test_a_warps_tensor_core_product_counts_2_m_n_k():
    """Each `T.tvm_mma_sync` of the wmma GEMM multiplies 16 x 16 x 16 fragments (the shape its
    accumulator's fill and load calls give): the kernel counts the GEMM's 2 n^3."""
    r = tirkit.parse((ROOT / "benchmarks" / "gpu_kernels" / "wmma_gemm.py").read_text())
    f = r.module["gpu_wmma_gemm_128"]
    c = kernel_costs(f, r.module).total
    assert (c.flops.value, c.op_dtype) == (2 * 128 ** 3, "float16")
    low = lower_gpu(f, r.module)
    assert count_ops(low.body, callees=low.callees) == (2 * 128 ** 3, 0)


@pytest.mark.parametrize("mod,name", list(_examples()))
def test_the_cost_and_the_build_count_the_same_operations_on_the_examples(mod, name):
    f = mod[name]
    total = kernel_costs(f, mod).total.flops.value
    low = lower_gpu(f, mod) if is_thread_bound(f) else lower(f, mod)
    assert sum(count_ops(low.body, callees=low.callees)) == total
