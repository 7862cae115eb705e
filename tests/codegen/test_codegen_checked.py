"""Bounds-checked native code (`build(..., checked=True)`, what `tirkit run` runs): an access
outside its storage is not made and the call ends with `bounds/out-of-bounds` at it; every
access inside runs as the unchecked code does."""
import subprocess
import sys

import numpy as np
import pytest

import tirkit

from codegen_helpers import EXAMPLES  # (and a private kernel cache)
from tirkit.codegen import build, emit_llvm
from tirkit.codegen.cli import compare, kernel_inputs, make_inputs
from tirkit.codegen.interp import run_reference
from tirkit.diagnostics import TirkitError

HEAD = "from tvm.script import tir as T\n\n\n"

# a guard over two loop variables: the bounds rule reads one-variable guards only
TWO_VAR_GUARD = '''@T.prim_func
def guarded(A: T.Buffer((16,), "float32"), B: T.Buffer((64,), "float32")):
    for i_0, i_1 in T.grid(4, 4):
        if i_0 * 4 + i_1 < 14:
            B[i_0 * 100 + i_1] = A[i_0 * 4 + i_1]
'''


def _func(src):
    module = tirkit.parse(HEAD + src).module
    return module, module.prim_funcs()[0][1]


def _refusal(kernel, *arrays, **kw):
    with pytest.raises(TirkitError) as err:
        kernel(*arrays, **kw)
    (d,) = err.value.diagnostics
    assert d.code == "bounds/out-of-bounds" and d.severity == "error"
    return d


def _inside(big, n):
    """The first n elements of big, as the array a kernel gets: what lies after them shows
    whether a write went past the buffer."""
    view = big[:n]
    assert view.flags.c_contiguous
    return view


def test_a_write_outside_the_array_is_not_made_and_is_reported_at_its_line():
    module, func = _func(TWO_VAR_GUARD)
    rng = np.random.default_rng(3)
    a = rng.standard_normal(16).astype("float32")
    big = rng.standard_normal(400).astype("float32")
    before = big.copy()
    d = _refusal(build(func, module, checked=True), a, _inside(big, 64))
    assert (d.span.line, d.span.column) == (8, 13)          # B[i_0 * 100 + i_1] = ...
    assert d.message.startswith("writes 'B' out of bounds: element 100, but its storage holds 64")
    # the accesses inside were made, those after the buffer were not
    assert np.array_equal(big[:4], a[:4]) and np.array_equal(big[4:64], before[4:64])
    assert np.array_equal(big[64:], before[64:])
    # the unchecked code writes there: the memory the checked run kept
    build(func, module)(a, _inside(big, 64))
    assert big[100] == a[4] and big[301] == a[13] and big[302] == before[302]


def test_a_read_outside_gives_its_line_and_no_value_from_past_the_array():
    src = '''@T.prim_func
def shifted(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32"), n: T.int32):
    for i in range(32):
        B[i] = A[i + n]
'''
    module, func = _func(src)
    kernel = build(func, module, checked=True)
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(32).astype("float32"), rng.standard_normal(32).astype("float32")
    d = _refusal(kernel, a, b, scalars=(5,))
    assert d.span.line == 7
    assert d.message.startswith("reads 'A' out of bounds: element 32, but its storage holds 32")
    assert np.array_equal(b[:27], a[5:]) and np.all(b[27:] == 0)   # refused loads give zero
    kernel(a, b, scalars=(0,))                                      # in bounds: no error
    assert np.array_equal(b, a)


def test_a_vector_access_reports_its_first_lane_outside_and_a_masked_lane_is_not_an_access():
    src = '''@T.prim_func
def gathered(A: T.Buffer((64,), "float32"), I: T.Buffer((64,), "int32"),
             B: T.Buffer((60,), "float32")):
    for i in range(8):
        for j in T.vectorized(8):
            if i * 8 + j < 60:
                B[i * 8 + j] = A[I[i * 8 + j]]
'''
    module, func = _func(src)
    kernel = build(func, module, checked=True)
    rng = np.random.default_rng(5)
    a = rng.standard_normal(64).astype("float32")
    idx = rng.permutation(64).astype("int32")
    b = rng.standard_normal(60).astype("float32")
    kernel(a, idx, b)                       # lanes 60..63 are masked off: nothing refused
    assert np.array_equal(b, a[idx[:60]])
    bad = idx.copy()
    bad[19] = 64 + 7                        # lane 3 of the third vector gathers past A
    bad[21] = -2
    d = _refusal(kernel, a, bad, b)
    assert d.message.startswith("reads 'A' out of bounds: element 71, but its storage holds 64")
    assert d.span.line == 10


def test_parallel_loops_heap_and_stack_allocations_are_checked():
    src = '''@T.prim_func
def staged(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), n: T.int32,
           m: T.int32, g: T.int32):
    H = T.decl_buffer((n,), "float32")
    for j in range(n):
        H[j] = A[1, j]
    for i in T.parallel(64):
        S = T.decl_buffer((64,), "float32")
        for j in range(64):
            S[j] = A[i, j] * T.float32(2)
        for j in range(64):
            B[i, j + g] = H[j % m] + S[(j + m) % 65]
'''
    module, func = _func(src)
    kernel = build(func, module, checked=True)
    rng = np.random.default_rng(6)
    a = rng.standard_normal((64, 64)).astype("float32")
    b = rng.standard_normal((64, 64)).astype("float32")
    kernel(a, b, scalars=(64, 65, 0))
    assert np.array_equal(b, a[1][None, :] + 2 * a)
    # H: on the heap, outside the parallel loop; S: on the stack of its body; B: a parameter
    cases = {(16, 65, 0): "reads 'H' out of bounds: element 16, but its storage holds 16",
             (64, 1, 0): "reads 'S' out of bounds: element 64, but its storage holds 64",
             (64, 65, 1): "writes 'B' out of bounds: element 4096, but its storage holds 4096"}
    for scalars, message in cases.items():
        assert _refusal(kernel, a, b, scalars=scalars).message.startswith(message), scalars


def _example_kernels(folder):
    for path in sorted((EXAMPLES / folder).glob("*.py")):
        module = tirkit.parse(path.read_text()).module
        for name, func in module.prim_funcs():
            try:
                func, arrays, scalars = kernel_inputs(func, np.random.default_rng(7), {})
                plain = build(func, module)
            except TirkitError:
                continue                         # GPU-only kernels and the like
            yield path, module, func, plain, arrays, scalars


def test_checked_and_unchecked_code_agree_on_every_valid_example():
    checked = 0
    for path, module, func, plain, arrays, scalars in _example_kernels("valid"):
        mine = [a.copy() for a in arrays]
        ret = build(func, module, checked=True)(*mine, scalars=scalars)
        want = plain(*arrays, scalars=scalars)
        if plain.ret_dtype is not None:
            assert ret == want, func.name
        for b, x, y in zip(plain.buffers, mine, arrays):
            assert compare(x, y, b.dtype)[0], (path.name, func.name, b.name)
        checked += 1
    assert checked >= 9                  # the CPU kernels of the valid examples


def test_an_invalid_example_that_reads_past_its_array_is_refused_at_its_expect_line():
    refused = {}
    for path, module, func, plain, arrays, scalars in _example_kernels("invalid"):
        try:
            build(func, module, checked=True)(*arrays, scalars=scalars)
        except TirkitError as e:
            refused[path.name] = e.diagnostics[0]
    assert refused["out_of_bounds.py"].span.line == 9            # B[vi] = A[vi + 1]
    assert refused["out_of_bounds.py"].message.startswith(
        "reads 'A' out of bounds: element 128, but its storage holds 128")
    lines = (EXAMPLES / "invalid" / "out_of_bounds.py").read_text().splitlines()
    assert "expect: bounds/out-of-bounds" in lines[8]


def test_a_kernel_from_the_cache_still_names_its_access(tmp_path, monkeypatch):
    monkeypatch.setenv("TIRKIT_CACHE_DIR", str(tmp_path))
    module, func = _func(TWO_VAR_GUARD.replace("B: T.Buffer((64,)", "B: T.Buffer((60,)"))
    rng = np.random.default_rng(8)
    arrays = make_inputs(func, rng)
    first = _refusal(build(func, module, checked=True), *arrays)
    from tirkit.codegen import _MEMORY
    _MEMORY.clear()
    again = build(func, module, checked=True)
    assert again.from_cache
    assert _refusal(again, *arrays) == first
    assert first.message.startswith("writes 'B' out of bounds: element 100, but its storage "
                                    "holds 60")


def test_tirkit_run_stops_at_the_access_instead_of_crashing(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(HEAD + TWO_VAR_GUARD)
    out = subprocess.run([sys.executable, "-m", "tirkit.cli", "run", str(path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"{path}:8:13: error: writes 'B' out of bounds: element 100" in out.stderr
    assert "[bounds/out-of-bounds]" in out.stderr and "Traceback" not in out.stderr
    bench = subprocess.run([sys.executable, "-m", "tirkit.cli", "bench", str(path),
                            "--repeat", "1"], capture_output=True, text=True, timeout=300)
    assert bench.returncode == 1 and "out of bounds: element 100" in bench.stderr
    assert "median" not in bench.stdout


WRAPPED = '''@T.prim_func
def wrapped(A: T.Buffer((64,), "float32")):
    for k in range(4):
        A[T.Cast("int32", T.Cast("int64", k) * T.int64(2147483648)) + 1] = T.float32(k + 1)
'''

# the fuzzed kernel, reduced: the view's region starts at `k * 2147483648` (an int64), which
# its int32 index wraps; `tirkit check` finds no error in it
VIEWED = '''@T.prim_func
def viewed(a: T.handle, c: T.handle):
    A = T.match_buffer(a, (16, 16, 16))
    C = T.match_buffer(c, (16, 16))
    for i, j, k in T.grid(4, 16, 8):
        with T.block():
            T.reads(C[i * 4:i * 4 + 4, k * 2:k * 2 + 2])
            T.writes(A[i * 4:i * 4 + 4, j, k * 2:k * 2 + 2])
            sub_A = T.match_buffer(A[i * 4:i * 4 + 4, j, k * 2147483648:k * 2 + 2], (4, 1, 2), offset_factor=1)
            sub_C = T.match_buffer(C[i * 4:i * 4 + 4, k * 2:k * 2 + 2], (4, 2), offset_factor=1)
            for ii, kk in T.grid(4, 2):
                sub_A[ii, 0, kk] += sub_C[ii, kk]
'''


def test_the_address_is_the_index_the_test_checked(tmp_path):
    """An index that wraps through a cast (`2**32` as int32 is 0): the address was read
    through the cast, element 2**32 + 1, after the test had passed element 1, and the
    process crashed (a fuzzed kernel).  Now both are element 1, and the run stops at k = 1,
    whose wrapped index is negative."""
    path = tmp_path / "k.py"
    path.write_text(HEAD + VIEWED)
    out = subprocess.run([sys.executable, "-m", "tirkit.cli", "run", str(path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, out.stdout + out.stderr       # (-11 when it crashed)
    assert f"{path}:15:17: error: reads 'A' out of bounds: element {-2 ** 31}" in out.stderr
    module, func = _func(WRAPPED)
    A = np.zeros(64, "float32")
    d = _refusal(build(func, module, checked=True), A)
    assert d.message.startswith(f"writes 'A' out of bounds: element {1 - 2 ** 31}, but its "
                                "storage holds 64")
    assert A[1] == 3 and np.count_nonzero(A) == 1   # k = 0 and k = 2 wrote element 1


def test_no_test_is_made_where_the_loops_keep_the_index_inside():
    src = '''@T.prim_func
def tiles(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
          C: T.Buffer((64,), "float32"), g: T.int32):
    for i_0 in T.parallel(8):
        for i_1, j in T.grid(8, 64):
            B[i_0 * 8 + i_1, j] = A[j, i_0 * 8 + i_1] + C[j + g]
'''
    module, func = _func(src)
    # A and B: indices inside their constant shapes over the loops; C: an offset not known
    assert emit_llvm(func, module, checked=True).count("\naccess.out:") == 1
    kernel = build(func, module, checked=True)
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((64, 64)).astype("float32"), np.ones((64, 64), "float32")
    c = rng.standard_normal(64).astype("float32")
    kernel(a, b, c, scalars=(0,))
    assert np.array_equal(b, a.T + c[None, :])
    d = _refusal(kernel, a, b, c, scalars=(24,))
    assert d.message.startswith("reads 'C' out of bounds: element 64, but its storage holds 64")
    # a cast to a narrower integer, which the interval looks through, keeps its test: the
    # exact value is j, inside C, but the int8 wraps
    narrow = src.replace("C[j + g]", 'C[T.Cast("int32", T.Cast("int8", j + 200)) - 200]') \
        .replace(", g: T.int32", "")
    module, func = _func(narrow)
    assert emit_llvm(func, module, checked=True).count("\naccess.out:") == 1
    kernel = build(func, module, checked=True)
    d = _refusal(kernel, a, b, c)
    assert d.message.startswith("reads 'C' out of bounds: element -256, but its storage holds 64")


def _checked(func, module):
    return build(func, module, checked=True)


def _interpreted(func, module):
    """The reference interpreter as a kernel: it stops where the checked code does."""
    def call(*arrays, scalars=()):
        run_reference(func, list(arrays), list(scalars), module=module)
    return call


@pytest.mark.parametrize("make", [_checked, _interpreted])
def test_an_integer_division_by_zero_stops_the_run_at_the_division(make):
    src = '''@T.prim_func
def ratios(A: T.Buffer((64,), "int32"), D: T.Buffer((64,), "int32"),
           B: T.Buffer((64,), "int32"), n: T.int32):
    for i in range(8):
        for j in T.vectorized(8):
            B[i * 8 + j] = T.if_then_else(D[i * 8 + j] != 0, A[i * 8 + j] // D[i * 8 + j],
                                          A[i * 8 + j] % n)
'''
    module, func = _func(src)
    kernel = make(func, module)
    rng = np.random.default_rng(10)
    a = rng.integers(-1000, 1000, 64).astype("int32")
    d = rng.integers(-9, 10, 64).astype("int32")
    d[::5] = 0                              # lanes whose quotient is masked off
    b = rng.integers(-5, 5, 64).astype("int32")
    kernel(a, d, b, scalars=(7,))
    safe = np.where(d != 0, d, 1)
    assert np.array_equal(b, np.where(d != 0, a // safe, a % 7))
    with pytest.raises(TirkitError) as e:
        kernel(a, d, b, scalars=(0,))        # the remainder's lanes run with n = 0
    (diag,) = e.value.diagnostics
    assert diag.code == "arith/division-by-zero" and diag.span.line == 10
    assert diag.message.startswith("divides by zero: `n` is 0 here")
    kernel(a, np.where(d != 0, d, 3).astype("int32"), b, scalars=(0,))   # no lane takes n


def test_an_index_from_a_float_out_of_the_int_range_is_refused_not_run():
    # unchecked, the cast of 1e20 is poison to LLVM, and a test of it could be dropped
    src = '''@T.prim_func
def far(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        B[i] = A[T.Cast("int32", T.floor(A[i] * T.float32(1e20)))]
'''
    module, func = _func(src)
    a = np.random.default_rng(11).uniform(0.5, 1.5, 16).astype("float32")
    d = _refusal(build(func, module, checked=True), a, np.ones(16, "float32"))
    assert d.span.line == 7
    assert d.message.startswith(f"reads 'A' out of bounds: element {2 ** 31 - 1}, but its "
                                "storage holds 16")


@pytest.mark.parametrize("make", [_checked, _interpreted, build])
def test_the_least_integer_divided_by_minus_one_wraps_instead_of_trapping(make):
    src = '''@T.prim_func
def quotients(A: T.Buffer((16,), "int32"), D: T.Buffer((16,), "int32"),
              Q: T.Buffer((16,), "int32"), R: T.Buffer((16,), "int32"),
              S: T.Buffer((16,), "int32"), M: T.Buffer((16,), "int32")):
    for i in range(16):
        Q[i] = A[i] // D[i]
        R[i] = A[i] % D[i]
        S[i] = T.truncdiv(A[i], D[i])
        M[i] = T.truncmod(A[i], D[i])
'''
    module, func = _func(src)
    rng = np.random.default_rng(12)
    a = rng.integers(-1000, 1000, 16).astype("int32")
    d = rng.choice([-7, -3, -1, 2, 5], 16).astype("int32")
    a[:3], d[:3] = -2 ** 31, -1                  # the processor's idiv traps on these
    outs = [np.zeros(16, "int32") for _ in range(4)]
    make(func, module)(a, d, *outs)
    least = np.int32(-2 ** 31)
    big, small = a.astype(np.int64), d.astype(np.int64)
    want_q = np.where(a == least, least, big // small)
    want_s = np.where(a == least, least, np.trunc(big / small).astype(np.int64))
    assert np.array_equal(outs[0], want_q) and np.array_equal(outs[2], want_s)
    assert np.array_equal(outs[1], big - (big // small) * small)
    assert np.array_equal(outs[3], big - np.trunc(big / small).astype(np.int64) * small)


def test_a_uniform_read_under_a_vector_mask_counts_only_where_some_lane_runs():
    src = '''@T.prim_func
def masked(A: T.Buffer((32,), "float32"), C: T.Buffer((4,), "float32"),
           B: T.Buffer((32,), "float32"), n: T.int32):
    for i in range(4):
        for j in T.vectorized(8):
            if i * 8 + j < n:
                B[i * 8 + j] = A[i * 8 + j] + C[i * 3]
'''
    module, func = _func(src)
    kernel = build(func, module, checked=True)
    rng = np.random.default_rng(13)
    a, c = rng.standard_normal(32).astype("float32"), rng.standard_normal(4).astype("float32")
    b = rng.standard_normal(32).astype("float32")
    before = b.copy()
    kernel(a, c, b, scalars=(4,))       # C[6] and C[9] are read only under masks all off
    assert np.array_equal(b[:4], a[:4] + c[0]) and np.array_equal(b[4:], before[4:])
    d = _refusal(kernel, a, c, b, scalars=(20,))      # i = 2 runs lanes 16..19
    assert d.message.startswith("reads 'C' out of bounds: element 6, but its storage holds 4")


VECTOR_MASKS = '''@T.prim_func
def tail(A: T.Buffer((6,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(2):
        B[T.Ramp(i * 4, 1, 4)] = T.if_then_else(T.Ramp(i * 4, 1, 4) < T.Broadcast(6, 4), A[T.Ramp(i * 4, 1, 4)], T.Broadcast(T.float32(0), 4))


@T.prim_func
def masked(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    B[0:4] = T.if_then_else(T.Ramp(0, 1, 4) < T.Broadcast(3, 4), A[T.Ramp(1, 1, 4)], T.Broadcast(T.float32(0), 4))


@T.prim_func
def else_lanes(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    B[0:4] = T.if_then_else(T.Ramp(0, 1, 4) >= T.Broadcast(1, 4), T.Broadcast(T.float32(0), 4), A[T.Ramp(3, 1, 4)])


@T.prim_func
def unmasked(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    B[0:4] = T.if_then_else(T.Ramp(0, 1, 4) < T.Broadcast(4, 4), A[T.Ramp(1, 1, 4)], T.Broadcast(T.float32(0), 4))


@T.prim_func
def scalar(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    B[0:4] = T.if_then_else(T.Ramp(0, 1, 4) < T.Broadcast(2, 4), T.Broadcast(A[5], 4), T.Broadcast(T.float32(0), 4))
'''


def test_the_bounds_rule_reads_a_vector_condition_lane_by_lane_as_the_checked_code_runs_it():
    """A vector load under a vector condition (a vectorized loop's masked tail) reads only in
    the lanes its condition selects: the rule had reported `A[T.Ramp(i * 4, 1, 4)]` of a
    6-element A though lanes 6 and 7 are masked.  Where a lane that holds does leave the
    buffer, the rule and the checked code both report it."""
    r = tirkit.parse(HEAD + VECTOR_MASKS)
    funcs = dict(r.module.prim_funcs())
    got = [(d.span.line, d.span.column, d.code) for d in tirkit.check(HEAD + VECTOR_MASKS)]
    assert got == [(22, 66, "bounds/out-of-bounds"), (27, 78, "bounds/out-of-bounds")]
    rng = np.random.default_rng(11)
    a = rng.uniform(1, 2, 6).astype("float32")
    wants = {"tail": np.where(np.arange(8) < 6, np.pad(a, (0, 2)), 0),
             "masked": np.array([a[1], a[2], a[3], 0]),
             "else_lanes": np.array([a[3], 0, 0, 0])}
    for name, want in wants.items():
        n = 6 if name == "tail" else 4
        for run in (lambda f, *v: build(f, r.module, checked=True)(*v),
                    lambda f, *v: run_reference(f, list(v), module=r.module)):
            b = np.full(len(want), 9, "float32")
            run(funcs[name], a[:n].copy(), b)
            np.testing.assert_array_equal(b, want.astype("float32"))
    for name, line in (("unmasked", 22), ("scalar", 27)):
        kernel = build(funcs[name], r.module, checked=True)
        d = _refusal(kernel, a[:4].copy(), np.zeros(4, "float32"))
        assert d.span.line == line and "reads 'A' out of bounds: element" in d.message
