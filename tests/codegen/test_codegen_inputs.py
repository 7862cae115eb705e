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
