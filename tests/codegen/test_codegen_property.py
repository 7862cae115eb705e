"""Property: random small loop nests (elementwise, reductions, predicated splits, vectorized,
unrolled and parallel loops) give the same results compiled and interpreted."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tirkit

import codegen_helpers  # noqa: F401  (private kernel cache)
from tirkit.codegen import build
from tirkit.codegen.cli import compare, make_inputs
from tirkit.codegen.interp import run_reference


@st.composite
def expressions(draw, dtype, depth=0):
    leaves = ["A[vi, vj]", "B[vi, vj]", f"T.{dtype}({draw(st.integers(1, 5))})"]
    if dtype == "int32":
        leaves += ["vi", "vj"]
    else:
        leaves += [f'T.Cast("{dtype}", vi)']
    if depth >= 2 or draw(st.booleans()) and depth > 0:
        return draw(st.sampled_from(leaves))
    a = draw(expressions(dtype, depth + 1))
    b = draw(expressions(dtype, depth + 1))
    ops = ["{a} + {b}", "{a} - {b}", "{a} * {b}", "T.max({a}, {b})", "T.min({a}, {b})",
           "T.Select({a} < {b}, {a}, {b} + {b})"]
    if dtype in ("int32", "int8"):
        c = draw(st.integers(1, 7))
        # the divisor in the expression's own type: a Python int makes an int8 division int32
        # (TVM 0.27), and a T.Select of int32 and int8 is an error
        ops += [f"T.floordiv({{a}}, T.{dtype}({c}))", f"T.floormod({{a}}, T.{dtype}({c}))"]
    return "(" + draw(st.sampled_from(ops)).format(a=a, b=b) + ")"


def _loop(kind, var, extent):
    if kind == "serial":
        return f"for {var} in range({extent}):"
    return f"for {var} in T.{kind}({extent}):"


@st.composite
def kernels(draw):
    dtype = draw(st.sampled_from(["float32", "int32", "float16", "int8"]))
    n = draw(st.integers(1, 37))
    m = draw(st.integers(1, 20))
    f = draw(st.sampled_from([1, 2, 4, 8, 16]))
    reduce = draw(st.booleans())
    outer = draw(st.sampled_from(["serial", "parallel"]))
    i1_kind = draw(st.sampled_from(["serial", "unroll", "vectorized"]))
    j_kind = draw(st.sampled_from(["serial", "unroll"] + ([] if reduce else ["vectorized"])))
    j_inside = draw(st.booleans())           # loop order: i0, i1, j  or  i0, j, i1
    body = draw(expressions(dtype))
    n0 = -(-n // f)
    loops = [("i0", outer, n0)]
    loops += [("i1", i1_kind, f), ("j", j_kind, m)] if j_inside or reduce else \
        [("j", j_kind, m), ("i1", i1_kind, f)]
    lines = ["@T.prim_func",
             f'def k(A: T.Buffer(({n}, {m}), "{dtype}"), B: T.Buffer(({n}, {m}), "{dtype}"), '
             f'C: T.Buffer(({n},{"" if reduce else f" {m}"}), "{dtype}")):']
    ind = "    "
    for var, kind, ext in loops:
        lines.append(ind + _loop(kind, var, ext))
        ind += "    "
    lines.append(ind + 'with T.block("C"):')
    ind += "    "
    lines.append(ind + f"vi = T.axis.spatial({n}, i0 * {f} + i1)")
    lines.append(ind + f"vj = T.axis.{'reduce' if reduce else 'spatial'}({m}, j)")
    if n % f:
        lines.append(ind + f"T.where(i0 * {f} + i1 < {n})")
    if reduce:
        op = draw(st.sampled_from(["sum", "max"]))
        lines.append(ind + "with T.init():")
        init = f"T.{dtype}(0)" if op == "sum" else f'T.min_value("{dtype}")'
        lines.append(ind + f"    C[vi] = {init}")
        upd = f"C[vi] + {body}" if op == "sum" else f"T.max(C[vi], {body})"
        lines.append(ind + f"C[vi] = {upd}")
    else:
        lines.append(ind + f"C[vi, vj] = {body}")
    return "from tvm.script import tir as T\n\n\n" + "\n".join(lines) + "\n"


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(kernels(), st.integers(0, 2**16))
def test_random_loop_nests_agree_with_interpreter(src, seed):
    result = tirkit.parse(src)
    assert [d for d in result.diagnostics if d.severity == "error"] == [], src
    func = result.module.prim_funcs()[0][1]
    kernel = build(func, result.module)
    arrays = make_inputs(func, np.random.default_rng(seed))
    ref = [a.copy() for a in arrays]
    kernel(*arrays, threads=2)
    run_reference(func, ref, module=result.module)
    for b, out, r in zip(kernel.buffers, arrays, ref):
        ok, err = compare(out, r, b.dtype)
        assert ok, (b.name, err, src)
