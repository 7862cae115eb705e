"""The arrays tirkit runs and times kernels on: random, never zero, on 64-byte boundaries."""
import numpy as np
import pytest

import tirkit
from tirkit.codegen.cli import ALIGNMENT, aligned_copy, make_inputs, make_scalars

KERNEL = '''from tvm.script import tir as T


@T.prim_func
def k(A: T.Buffer((3, 5), "float32"), B: T.Buffer((7,), "int8"), C: T.Buffer((2, 2), "bool"),
      D: T.Buffer((), "float64"), s: T.int32):
    T.func_attr({"global_symbol": "k", "tir.noalias": True})
    for i in range(7):
        with T.block("B"):
            vi = T.axis.spatial(7, i)
            B[vi] = B[vi] + T.int8(1)
'''


@pytest.mark.parametrize("shape,dtype", [((3, 5), "float32"), ((7,), "int8"), ((), "float64"),
                                         ((0, 4), "int32"), ((2, 3, 4), "uint16")])
def test_aligned_copy_keeps_values_and_starts_on_a_boundary(shape, dtype):
    rng = np.random.default_rng(1)
    for _ in range(8):                      # whatever offset numpy's allocator hands out
        a = (rng.standard_normal(shape) * 50).astype(dtype)
        b = aligned_copy(a)
        assert b.size == 0 or b.ctypes.data % ALIGNMENT == 0     # an empty one has no data
        assert b.shape == a.shape and b.dtype == a.dtype and b.flags.c_contiguous
        assert np.array_equal(a, b)
        assert not np.shares_memory(a, b)


def test_make_inputs_gives_aligned_non_zero_arrays():
    func = tirkit.parse(KERNEL).module["k"]
    arrays = make_inputs(func, np.random.default_rng(0))
    assert [a.shape for a in arrays] == [(3, 5), (7,), (2, 2), ()]
    assert [str(a.dtype) for a in arrays] == ["float32", "int8", "bool", "float64"]
    assert all(a.ctypes.data % ALIGNMENT == 0 for a in arrays)
    assert all(np.all(a != 0) for a in arrays if a.dtype != np.bool_)
    (s,) = make_scalars(func, np.random.default_rng(0))
    assert s != 0


SIZED_BY_A_PARAMETER = '''from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def before(x: T.handle, y: T.handle, n: T.int64):
    X = T.match_buffer(x, (T.int64(8), n * T.int64(32)))
    Y = T.match_buffer(y, (T.int64(8), n * T.int64(32)))
    for i, k_0 in T.grid(T.int64(8), n):
        with T.sblock(""):
            X_global = T.sblock_alloc_buffer((T.int64(8), n * T.int64(32)))
            for ax0 in range(T.int64(32)):
                with T.sblock("X_global"):
                    X_global[i, k_0 * T.int64(32) + ax0] = X[i, k_0 * T.int64(32) + ax0]
            for k_1 in range(T.int64(32)):
                with T.sblock("Y"):
                    Y[i, k_0 * T.int64(32) + k_1] = X_global[i, k_0 * T.int64(32) + k_1]
'''


@pytest.mark.parametrize("sizes, n", [(None, 16), ({"n": 5}, 5)])
def test_a_shape_expression_and_the_parameter_it_names_take_one_size(sizes, n):
    # `(8, n * 32)` had been made (8, 16) whatever n, and the scalar n drawn at random:
    # the kernel then ran past its arrays (a TVM test program crashed `tirkit run`)
    func = tirkit.parse(SIZED_BY_A_PARAMETER).module["before"]
    arrays = make_inputs(func, np.random.default_rng(0), sizes)
    assert [a.shape for a in arrays] == [(8, n * 32), (8, n * 32)]
    (scalar,) = make_scalars(func, np.random.default_rng(0), sizes)
    assert int(scalar) == n and scalar.dtype == np.int64


def test_a_dimension_that_comes_out_negative_is_refused():
    text = SIZED_BY_A_PARAMETER.replace("(T.int64(8), n * T.int64(32)))\n    Y",
                                        "(T.int64(8), n - T.int64(20)))\n    Y", 1)
    func = tirkit.parse(text).module["before"]
    with pytest.raises(tirkit.TirkitError) as e:
        make_inputs(func, np.random.default_rng(0))
    (d,) = e.value.diagnostics
    assert d.code == "codegen/argument"
    assert "a dimension of buffer 'X' is -4" in d.message and "--size" in d.message


OUT_OF_BOUNDS_FOR_SOME_SIZES = '''from tvm.script import tir as T


@T.prim_func
def f(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (n * 8,), "float32")
    for i in range(n):
        for j in range(8):
            A[i * 31 + j] = T.float32(1)
'''


def test_an_access_out_of_bounds_for_the_run_sizes_only_is_refused_before_running():
    from tirkit.codegen.inputs import kernel_inputs, run_bounds
    # in bounds for n = 1, outside A for every n >= 2: `check` cannot say it for every size
    assert [d for d in tirkit.check(OUT_OF_BOUNDS_FOR_SOME_SIZES) if d.severity == "error"] == []
    func = tirkit.parse(OUT_OF_BOUNDS_FOR_SOME_SIZES).module["f"]
    assert run_bounds(func, make_scalars(func, np.random.default_rng(0), {"n": 1}),
                      {"n": 1}) == []
    (d,) = run_bounds(func, make_scalars(func, np.random.default_rng(0)))
    assert d.code == "bounds/out-of-bounds" and d.span.line == 9
    assert "ranges over [0, 472]" in d.message and d.message.endswith("(with n=16)")
    with pytest.raises(tirkit.TirkitError):
        kernel_inputs(func, np.random.default_rng(0), None)
