"""Loops with a step (`range(a, b, s)`, `T.serial(a, b, step=s)`): held as TVM's
CanonicalizeLoop makes them (from 0 over ceildiv(b - a, s), the name standing for
`v * s + a`), so every analysis and back end sees a unit-step loop, and printed back as
written."""
import numpy as np
import pytest

import tirkit
from tirkit.codegen import build
from tirkit.codegen.interp import run_reference
from tirkit.ir import expr as E
from tirkit.schedule import Schedule

STEPPED = '''from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def strided(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for i in range(1, 128, 5):
        B[i] = A[i] + T.float32(1)
    for j in T.serial(0, 128, step=3, annotations={"k": 1}):
        B[j] = A[j] * T.float32(2)
    for k in T.parallel(2, 64, step=4):
        for m in range(k, 128, 64):
            B[m] = T.float32(0)


@T.prim_func(s_tir=True)
def sym(a: T.handle, tid: T.int32):
    N = T.int32()
    A = T.match_buffer(a, (N,), "float32")
    for i in T.unroll(tid, N, step=3):
        A[i] = T.float32(1)
'''


def _expected(A, B):
    out = B.copy()
    for i in range(1, 128, 5):
        out[i] = A[i] + 1
    for j in range(0, 128, 3):
        out[j] = A[j] * 2
    for k in range(2, 64, 4):
        for m in range(k, 128, 64):
            out[m] = 0
    return out


@pytest.fixture(scope="module")
def module():
    r = tirkit.parse(STEPPED, "steps.py")
    assert r.diagnostics == []
    return r.module


def test_a_stepped_loop_is_held_in_canonical_form(module):
    first, second, third = module["strided"].body.seq
    assert (first.min.value, first.extent.value) == (0, 26)        # ceil(127 / 5)
    store = first.body
    i = first.loop_var
    # the name `i` stands for i * 5 + 1 in the body
    assert isinstance(store.indices[0], E.Add)
    assert store.indices[0].a.a is i and store.indices[0].a.b.value == 5
    assert (second.extent.value, second.annotations) == (43, (("k", 1),))
    assert (third.kind, third.extent.value) == ("parallel", 16)
    assert isinstance(third.body.extent, E.FloorDiv)     # ceildiv(128 - (k * 4 + 2), 64)
    # a symbolic start: ceildiv(N - tid, 3) iterations
    loop = module["sym"].body
    assert isinstance(loop.extent, E.FloorDiv) and loop.kind == "unrolled"


def test_stepped_loops_print_back_as_written(module):
    assert tirkit.to_script(module) == STEPPED
    again = tirkit.parse(STEPPED)
    assert tirkit.structural_equal(again.module, module)
    assert [d for d in tirkit.check(STEPPED) if d.severity == "error"] == []


def test_stepped_loops_run_as_python_steps(module):
    rng = np.random.default_rng(11)
    A = rng.standard_normal(128).astype("float32")
    B = rng.standard_normal(128).astype("float32")
    got = B.copy()
    build(module["strided"], module)(A.copy(), got)
    np.testing.assert_array_equal(got, _expected(A, B))
    ref = [A.copy(), B.copy()]
    run_reference(module["strided"], ref, module=module)
    np.testing.assert_array_equal(ref[1], _expected(A, B))


HALVES = '''from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def halves(A: T.Buffer((64,), "float32"), B: T.Buffer((32,), "float32")):
    for i in range(0, 64, 2):
        with T.sblock("B"):
            vi = T.axis.spatial(32, i // 2)
            B[vi] = A[vi * 2] + A[vi * 2 + 1]
'''


def test_schedule_primitives_take_a_stepped_loop_as_its_canonical_form():
    r = tirkit.parse(HALVES)
    assert r.diagnostics == [] and tirkit.check(HALVES) == []
    # the binding is an affine map of the canonical loop: (i * 2) // 2 is i
    par = Schedule(r.module, "halves")
    (loop,) = par.get_loops(par.get_block("B"))
    par.parallel(loop)
    assert "for i in T.parallel(0, 64, step=2):" in tirkit.to_script(par.mod)
    # a split rebuilds the loop's name: the result prints as the loops it has
    split = Schedule(r.module, "halves")
    (loop,) = split.get_loops(split.get_block("B"))
    split.split(loop, [None, 4])
    text = tirkit.to_script(split.mod)
    assert "for i_0, i_1 in T.grid(8, 4):" in text
    assert "vi = T.axis.spatial(32, i_0 * 4 + i_1)" in text
    A = np.random.default_rng(5).standard_normal(64).astype("float32")
    for sch in (par, split):
        again = tirkit.parse(tirkit.to_script(sch.mod)).module
        assert tirkit.structural_equal(again, sch.mod)
        out = np.zeros(32, "float32")
        build(sch.mod["halves"], sch.mod)(A, out)
        np.testing.assert_allclose(out, A[0::2] + A[1::2], rtol=1e-6)


@pytest.mark.parametrize("loop, message", [
    ("range(16, 0, -2)", "a loop step of -2: a TIR loop counts up"),
    ("T.serial(0, 16, step=0)", "a loop step of 0: a TIR loop counts up"),
    ("T.serial(0, 16, step=n)", "a loop step must be a constant integer"),
])
def test_a_step_that_is_not_a_positive_constant_is_an_error(loop, message):
    text = f'''from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def f(A: T.Buffer((16,), "float32"), n: T.int32):
    for i in {loop}:
        A[i] = T.float32(0)
'''
    (d,) = tirkit.parse(text).diagnostics
    assert (d.code, d.span.line) == ("type/mismatch", 6)
    assert message in d.message


def test_tvm_reads_our_print_as_the_same_program(module):
    tvm = pytest.importorskip("tvm")
    import tvm_ffi
    from tvm.script.parser import tirx as tirx_parser
    from tvm.script.parser.core.entry import _default_globals
    extra = _default_globals()
    extra["T"] = tirx_parser
    ours = tirkit.to_script(module, spelling="tirx")
    original = STEPPED.split("@T.prim_func")[1:]
    printed = ours.split("@T.prim_func")[1:]
    assert len(original) == len(printed) == 2
    for a, b in zip(original, printed):
        theirs = tvm.script.from_source("@T.prim_func" + a, extra_vars=extra)
        mine = tvm.script.from_source("@T.prim_func" + b, extra_vars=extra)
        assert tvm_ffi.get_first_structural_mismatch(theirs, mine, False) is None
    strided = tvm.script.from_source("@T.prim_func" + original[0], extra_vars=extra)
    assert strided.body.seq[0].step.value == 5


def test_tvm_refuses_a_loop_that_counts_down_when_it_compiles():
    tvm = pytest.importorskip("tvm")
    from tvm.script.parser import tirx as tirx_parser
    from tvm.script.parser.core.entry import _default_globals
    extra = _default_globals()
    extra["T"] = tirx_parser
    text = '''@T.prim_func(s_tir=True)
def f(A: T.Buffer((16,), "int32")):
    for i in range(15, 0, -1):
        A[i] = i
'''
    (d,) = tirkit.parse("from tvm.script import tirx as T\n\n\n" + text).diagnostics
    assert d.code == "type/mismatch" and "a loop step of -1" in d.message
    func = tvm.script.from_source(text, extra_vars=extra)     # TVM reads it...
    with pytest.raises(Exception, match="may not be positive"):  # ...and refuses it later
        tvm.compile(func, target="llvm")
