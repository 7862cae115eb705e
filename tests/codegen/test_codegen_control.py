"""Leaving early: `T.ret(value)`, `break` and `continue`, compiled and interpreted, each checked
against a plain Python/numpy reference on random inputs."""
import subprocess
import sys

import numpy as np
import pytest

import tirkit

import codegen_helpers  # noqa: F401  (private kernel cache)
from conftest import ROOT
from tirkit.codegen import build
from tirkit.codegen.interp import run_reference
from tirkit.diagnostics import TirkitError

HEAD = "from tvm.script import tir as T\n\n\n"


def _func(src):
    module = tirkit.parse(HEAD + src).module
    return module, module.prim_funcs()[0][1]


def _both(src, arrays=(), scalars=()):
    """(compiled result, interpreted result, compiled arrays, interpreted arrays)."""
    module, func = _func(src)
    ours = [a.copy() for a in arrays]
    ref = [a.copy() for a in arrays]
    got = build(func, module)(*ours, scalars=scalars)
    want = run_reference(func, ref, list(scalars), module=module)
    return got, want, ours, ref


IMM_ADD = '''@T.prim_func
def imm_add(x: T.uint8, y: T.uint8) -> T.uint8:
    T.evaluate(T.ret(x + y, dtype="uint8"))
'''


def test_ret_of_uint8_wraps_around():
    rng = np.random.default_rng(1)
    module, func = _func(IMM_ADD)
    kernel = build(func, module)
    wrapped = 0
    for x, y in rng.integers(1, 256, (40, 2)):
        got = kernel(scalars=(x, y))
        want = run_reference(func, [], [x, y])
        assert type(got) is np.uint8 and type(want) is np.uint8
        assert int(got) == int(want) == (int(x) + int(y)) % 256
        wrapped += int(x) + int(y) > 255
    assert wrapped > 5               # the overflow case did happen


FIRST_ABOVE = '''@T.prim_func
def first_above(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32"), t: T.int32) -> T.int64:
    tmp = T.decl_buffer((40000,), "float32")
    tmp[0] = T.float32(1)
    for i in range(64):
        B[i] = A[i] * 2
        for j in range(4):
            if A[i] + j > t:
                T.ret(i * 10 + j)
            B[i] = B[i] + 1
    T.ret(-1)
'''


@pytest.mark.parametrize("t", [40, 60, 100])
def test_ret_inside_two_loops_leaves_at_once(t):
    rng = np.random.default_rng(t)
    A = rng.integers(1, 64, 64).astype(np.int32)
    B = rng.integers(1, 64, 64).astype(np.int32)
    got, want, (_, b_ours), (_, b_ref) = _both(FIRST_ABOVE, [A, B], (t,))
    # reference: the same program in Python
    B_py, expect = B.copy(), -1
    for i in range(64):
        B_py[i] = A[i] * 2
        hit = [j for j in range(4) if A[i] + j > t]
        if hit:
            expect = i * 10 + hit[0]
            B_py[i] += hit[0]
            break
        B_py[i] += 4
    assert type(got) is np.int64 and type(want) is np.int64      # cast to the declared type
    assert got == want == expect
    np.testing.assert_array_equal(b_ours, B_py)
    np.testing.assert_array_equal(b_ref, B_py)
    if expect == -1:
        assert t >= 66


def test_ret_of_a_float_sum_and_of_a_bool():
    src = '''@T.prim_func
def total(A: T.Buffer((16, 16), "float32")) -> T.float32:
    Sum = T.decl_buffer([], "float32")
    Sum[()] = T.float32(0)
    for i, j in T.grid(16, 16):
        Sum[()] = Sum[()] + A[i, j]
    T.ret(Sum[()])
'''
    A = np.random.default_rng(3).uniform(0.5, 1.5, (16, 16)).astype(np.float32)
    got, want, _, _ = _both(src, [A])
    assert type(got) is np.float32 and got == want
    assert abs(float(got) - float(A.astype(np.float64).sum())) < 1e-3
    src_b = '''@T.prim_func
def bigger(A: T.Buffer((2,), "int32")) -> T.bool:
    T.ret(A[0] > A[1])
'''
    for a in ([5, -3], [-7, 2]):
        A = np.array(a, dtype=np.int32)
        got, want, _, _ = _both(src_b, [A])
        assert got == want == (a[0] > a[1]) and type(got) is np.bool_


def test_a_return_type_without_a_reached_ret_gives_none():
    src = '''@T.prim_func
def maybe(A: T.Buffer((8,), "int32")) -> T.int32:
    for i in range(8):
        if A[i] == 1000:
            T.ret(i)
'''
    A = np.random.default_rng(4).integers(1, 100, 8).astype(np.int32)
    got, want, _, _ = _both(src, [A])
    assert got is None and want is None
    A[5] = 1000
    got, want, _, _ = _both(src, [A])
    assert got == want == 5


def _search(In):
    """test_tir_base's program in Python: break out of the inner of two loops, then out of
    the outer one, then out of a while loop."""
    Out = [0, 1]
    for i in range(10):
        for j in range(10):
            if i * 10 + j == In[0]:
                Out[0] = i + j
                break
        if Out[0] > 0:
            break
    while Out[1] > 0:
        Out[1] += 1
        if Out[1] > In[1]:
            break
    return Out


SEARCH = '''@T.prim_func
def search(In: T.Buffer((2,), "int32"), Out: T.Buffer((2,), "int32")):
    Out[0] = 0
    Out[1] = 1
    for i in range(10):
        for j in range(10):
            if i * 10 + j == In[0]:
                Out[0] = i + j
                break
        if Out[0] > 0:
            break
    while Out[1] > 0:
        Out[1] = Out[1] + 1
        if Out[1] > In[1]:
            break
'''


def test_break_out_of_the_inner_of_two_loops_and_of_a_while():
    rng = np.random.default_rng(5)
    for _ in range(6):
        In = rng.integers(1, 100, 2).astype(np.int32)
        Out = rng.integers(1, 100, 2).astype(np.int32)
        _, _, (_, o1), (_, o2) = _both(SEARCH, [In, Out])
        assert o1.tolist() == o2.tolist() == _search(In.tolist())


COUNT = '''@T.prim_func
def count(A: T.Buffer((64,), "int32"), Out: T.Buffer((3,), "int32")):
    Out[0] = 0
    Out[1] = 0
    Out[2] = 0
    for i in range(8):
        for j in T.unroll(8):
            if A[i * 8 + j] % 3 == 0:
                continue
            if A[i * 8 + j] < 0:
                break
            Out[0] = Out[0] + A[i * 8 + j]
    k = T.decl_buffer([], "int32")
    k[()] = 0
    while k[()] < 64:
        k[()] = k[()] + 1
        if A[k[()] - 1] % 2 == 0:
            continue
        Out[1] = Out[1] + 1
    for i in T.parallel(8):
        for j in range(8):
            if A[i * 8 + j] > 50:
                break
            Out[2] = Out[2] + 0
'''


def test_continue_in_unrolled_and_while_loops_and_break_in_a_serial_loop_of_a_parallel_one():
    rng = np.random.default_rng(6)
    A = (rng.integers(1, 64, 64) * rng.choice([-1, 1], 64)).astype(np.int32)
    Out = rng.integers(1, 9, 3).astype(np.int32)
    _, _, (_, o1), (_, o2) = _both(COUNT, [A, Out])
    s = 0
    for i in range(8):
        for j in range(8):
            v = int(A[i * 8 + j])
            if v % 3 == 0:
                continue
            if v < 0:
                break
            s += v
    odd = sum(1 for v in A if v % 2)
    assert o1.tolist() == o2.tolist() == [s, odd, 0]


@pytest.mark.parametrize("loop,stmt,word", [
    ("T.parallel(8)", "break", "`break` in parallel loop 'i'"),
    ("T.vectorized(8)", "continue", "`continue` in vectorized loop 'i'"),
    ("T.parallel(8)", "T.ret(1)", "T.ret cannot leave 'f' from inside parallel loop 'i'"),
    ("T.vectorized(8)", "T.ret(1)", "from inside vectorized loop 'i'"),
])
def test_leaving_a_parallel_or_vectorized_loop_is_refused_at_the_statement(loop, stmt, word):
    src = f'''@T.prim_func
def f(A: T.Buffer((8,), "int32")) -> T.int32:
    for i in {loop}:
        A[i] = A[i] + 1
        if A[i] > 3:
            {stmt}
    T.ret(0)
'''
    module, func = _func(src)
    for run in (lambda: build(func, module),
                lambda: run_reference(func, [np.ones(8, np.int32)])):
        with pytest.raises(TirkitError) as e:
            run()
        d = e.value.diagnostics[0]
        assert d.code == "codegen/unsupported"
        assert word in d.message
        assert d.span.line == 9           # the statement (the source starts on line 4)
        assert d.related and d.related[0][0].line == 6


def test_break_outside_a_loop_is_refused():
    src = '''@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    A[0] = 1
    T.evaluate(T.break_loop())
'''
    module, func = _func(src)
    with pytest.raises(TirkitError) as e:
        build(func, module)
    assert e.value.diagnostics[0].message == "`break` outside a loop"
    assert e.value.diagnostics[0].span.line == 7


def test_tirkit_run_prints_the_returned_value(tmp_path):
    p = tmp_path / "imm.py"
    p.write_text(HEAD + IMM_ADD)
    r = subprocess.run([sys.executable, "-m", "tirkit.cli", "run", "--check", str(p)],
                       capture_output=True, text=True, cwd=ROOT,
                       env={"PYTHONPATH": str(ROOT / "language"), "PATH": "/usr/bin:/bin",
                            "TIRKIT_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    x, y = (int(kv.split("=")[1]) for kv in lines[1].split(": ")[1].split(", "))
    assert lines[1].startswith("  scalars: x=")
    assert lines[2] == f"  returned: {(x + y) % 256} (uint8): ok"
