"""A name assigned again while its first value is in scope is a local scalar, as in TVM 0.27:
a one-element local buffer each assignment stores to and each use loads from."""
import numpy as np
import pytest

import tirkit
from tirkit.codegen import build
from tirkit.codegen.interp import run_reference
from tirkit.ir import stmt as S
from tirkit.ir.visit import find_all

KERNELS = '''from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def rowsum(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        acc = T.float32(0)
        for k in range(8):
            acc = acc + A[i, k]
        B[i] = acc


@T.prim_func(s_tir=True)
def rowsum_update(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.sblock("B"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi, 0:8])
            T.writes(B[vi])
            acc: T.float32 = T.float32(0)
            for k in range(8):
                acc += A[vi, k]
            B[vi] = acc


@T.prim_func(s_tir=True)
def count(A: T.Buffer((10,), "int32")):
    i = 0
    while i < 10:
        if A[i] > 5:
            break
        A[i] = A[i] + 1
        i = i + 1


@T.prim_func(s_tir=True)
def once(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        t = A[i] * T.float32(2)
        B[i] = t
    for i in range(4):
        t = B[i] + T.float32(1)
        B[i] = t
'''


@pytest.fixture(scope="module")
def module():
    r = tirkit.parse(KERNELS, "scalars.py")
    assert r.diagnostics == []
    return r.module


def _scalars(func):
    return [s.buffer for s in find_all(func.body, lambda _: True, S.DeclBuffer)]


def test_a_reassigned_name_is_one_local_buffer_and_a_name_assigned_once_a_let(module):
    for name in ("rowsum", "rowsum_update", "count"):
        (buf,) = _scalars(module[name])
        assert (tuple(e.value for e in buf.shape), buf.scope) == ((1,), "local")
    assert _scalars(module["rowsum"])[0].dtype == "float32"
    assert _scalars(module["count"])[0].dtype == "int32"     # `i = 0`: a Python int is int32
    # `t` is bound twice, but each binding ends before the next: two lets, no buffer
    once = module["once"]
    assert _scalars(once) == []
    assert len(find_all(once.body, lambda _: True, S.LetStmt)) == 2


@pytest.mark.parametrize("spelling", ["tirx", "classic"])
def test_local_scalars_print_back_as_names_as_tvm_prints_them(module, spelling):
    text = tirkit.to_script(module, spelling=spelling)
    assert "        acc: T.float32 = T.float32(0)\n        for k in range(8):\n" \
        "            acc = acc + A[i, k]\n        B[i] = acc\n" in text
    assert "    i: T.int32 = 0\n    while i < 10:\n" in text
    assert "        i = i + 1\n" in text
    again = tirkit.parse(text)
    assert again.diagnostics == []
    assert tirkit.structural_equal(again.module, module)
    assert tirkit.to_script(again.module, spelling=spelling) == text


def test_a_local_buffer_written_as_one_stays_a_buffer():
    text = '''from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def rowsum(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        acc = T.decl_buffer((1,), "float32", scope="local")
        acc[0] = T.float32(0)
        for k in range(8):
            acc[0] = acc[0] + A[i, k]
        B[i] = acc[0]
'''
    r = tirkit.parse(text)
    assert r.diagnostics == []
    assert tirkit.to_script(r.module) == text
    # the same program as the one written with names
    names = tirkit.parse(KERNELS).module["rowsum"]
    assert tirkit.structural_equal(r.module["rowsum"], names)


def test_accumulating_kernels_compute_the_sums(module):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((4, 8)).astype("float32")
    for name in ("rowsum", "rowsum_update"):
        b = np.full(4, 5.0, "float32")
        build(module[name], module)(a, b)
        np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)
        ref = [a.copy(), np.full(4, 5.0, "float32")]
        run_reference(module[name], ref, module=module)
        np.testing.assert_allclose(ref[1], a.sum(axis=1), rtol=1e-5)


def test_a_while_loop_advances_its_counter(module):
    x = np.array([2, 0, 4, 5, -1, 6, 3, 1, 9, 2], dtype="int32")
    want = x.copy()
    for i in range(10):
        if want[i] > 5:
            break
        want[i] += 1
    got = x.copy()
    build(module["count"], module)(got)
    np.testing.assert_array_equal(got, want)
    ref = [x.copy()]
    run_reference(module["count"], ref, module=module)
    np.testing.assert_array_equal(ref[0], want)


def test_updating_a_name_never_assigned_is_an_error():
    r = tirkit.parse('''from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def f(A: T.Buffer((4,), "float32")):
    for i in range(4):
        acc += A[i]
''')
    (d,) = r.diagnostics
    assert (d.code, d.span.line) == ("syntax", 7)
    assert "'acc'" in d.message


def test_tvm_reads_our_print_as_the_same_program_and_computes_what_we_compute(module):
    """TVM 0.27 reads our print of the kernels as its own reading of them (its local
    scalars, layout included), and compiled, computes what we compute."""
    tvm = pytest.importorskip("tvm")
    import tvm_ffi
    from tvm.script.parser import tirx as tirx_parser
    from tvm.script.parser.core.entry import _default_globals
    extra = _default_globals()
    extra["T"] = tirx_parser
    ours = tirkit.to_script(module, spelling="tirx")
    theirs = {}
    for original, printed in zip(KERNELS.split("@T.prim_func")[1:], ours.split("@T.prim_func")[1:]):
        name = original.split("def ")[1].split("(")[0]
        theirs[name] = tvm.script.from_source("@T.prim_func" + original, extra_vars=extra)
        again = tvm.script.from_source("@T.prim_func" + printed, extra_vars=extra)
        assert tvm_ffi.get_first_structural_mismatch(theirs[name], again, False) is None, name
    assert sorted(theirs) == ["count", "once", "rowsum", "rowsum_update"]
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 8)).astype("float32")
    x = rng.integers(-2, 8, 10).astype("int32")
    for name, args in (("rowsum", lambda: [a.copy(), np.zeros(4, "float32") + 1]),
                       ("rowsum_update", lambda: [a.copy(), np.zeros(4, "float32") + 1]),
                       ("count", lambda: [x.copy()]), ("once", lambda: [a[0, :4].copy(),
                                                                        np.zeros(4, "float32")])):
        lib = tvm.compile(theirs[name], target="llvm")
        mine = args()
        build(module[name], module)(*mine)
        out = [tvm.runtime.tensor(t) for t in args()]
        lib[name](*out)
        for m, o in zip(mine, out):
            np.testing.assert_allclose(m, o.numpy(), rtol=1e-5)
