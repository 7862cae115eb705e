"""Sparse kernels in the SparseTIR spelling: exact round trip and diagnostics."""
import pathlib

import pytest

import tirkit
from tirkit.ir.sparse import Axis, SparseBuffer, SparseIteration

EXAMPLES = sorted((pathlib.Path(__file__).parents[2] / "examples" / "sparse").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_prints_back_exactly(path):
    text = path.read_text()
    r = tirkit.parse(text, str(path))
    assert [d.code for d in r.diagnostics] == []
    want = ["cost/asymptotically-dominated"] if path.name == "spgemm_inner.py" else []
    assert [d.code for d in tirkit.check(text)] == want
    printed = tirkit.to_script(r.module)
    assert printed == text
    again = tirkit.parse(printed)
    assert tirkit.structural_equal(r.module, again.module)


def test_structure_of_spmm():
    r = tirkit.parse((EXAMPLES[0].parent / "spmm.py").read_text())
    f = r.module.functions[0][1]
    assert [(a.name, a.kind, a.level_format) for a in f.sparse_axes] == [
        ("I", "dense_fixed", "u"), ("J", "sparse_variable", "c"),
        ("J_detach", "dense_fixed", "u"), ("K", "dense_fixed", "u")]
    J = f.sparse_axes[1]
    assert J.parent is f.sparse_axes[0] and J.indptr.name == "indptr"
    bufs = [b for _, b in f.buffer_map]
    assert all(isinstance(b, SparseBuffer) for b in bufs)
    assert [a.name for a in bufs[0].axes] == ["I", "J"]
    it = f.body
    assert isinstance(it, SparseIteration) and it.name == "spmm"
    assert [(v.var.name, v.axis.name, v.is_reduction) for v in it.sp_iter_vars] == [
        ("i", "I", False), ("j", "J", True), ("k", "K", False)]
    assert it.init is not None


def test_hash_format_is_kept():
    r = tirkit.parse((EXAMPLES[0].parent / "spgemm_hash.py").read_text())
    axes = {a.name: a for a in r.module.functions[0][1].sparse_axes}
    assert axes["K_c"].format == "hash" and axes["K_c"].level_format == "h"
    assert axes["K_c"].sorted is False


def test_different_orders_are_not_equal():
    base = (EXAMPLES[0].parent / "spmm.py").read_text()
    other = base.replace('"SRS"', '"SSS"')
    assert not tirkit.structural_equal(tirkit.parse(base).module, tirkit.parse(other).module)
    swapped = base.replace("(J_detach, K)", "(K, J_detach)").replace("B[j, k]", "B[k, j]")
    assert not tirkit.structural_equal(tirkit.parse(base).module,
                                       tirkit.parse(swapped).module)


HEAD = """from tvm.script import tir as T


@T.prim_func
def f(a: T.handle, indptr: T.handle, indices: T.handle, m: T.int32, n: T.int32, nnz: T.int32):
"""


def _codes(body):
    text = HEAD + body
    return sorted((d.code, d.span.line) for d in tirkit.check(text))


def test_parent_missing():
    body = """    I = T.dense_fixed(m)
    J = T.sparse_variable((n, nnz), (indptr, indices), "int32")
"""
    assert _codes(body) == [("sparse/malformed-axis", 7)]


def test_parent_not_an_axis():
    body = """    I = T.dense_fixed(m)
    J = T.sparse_variable(m, (n, nnz), (indptr, indices), "int32")
"""
    assert _codes(body) == [("sparse/malformed-axis", 7)]


def test_shape_not_a_pair():
    body = """    I = T.dense_fixed(m)
    J = T.sparse_variable(I, n, (indptr, indices), "int32")
"""
    assert _codes(body) == [("sparse/malformed-axis", 7)]


def test_indptr_wrong_length_and_dtype():
    text = """from tvm.script import tir as T


@T.prim_func
def f(m: T.int32, n: T.int32, nnz: T.int32, a: T.handle, indptr: T.Buffer((m,), "int32"), indices: T.Buffer((nnz,), "int64")):
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
    K = T.dense_fixed(n)
    P = T.sparse_variable(K, (m, nnz), (indptr, indices), "int64")
"""
    got = sorted((d.code, d.span.line) for d in tirkit.check(text))
    assert got == [("sparse/indptr-mismatch", 7), ("sparse/indptr-mismatch", 7),
                   ("sparse/indptr-mismatch", 9), ("sparse/indptr-mismatch", 9)]


def test_indptr_of_right_length_is_clean():
    text = """from tvm.script import tir as T


@T.prim_func
def f(m: T.int32, n: T.int32, nnz: T.int32, a: T.handle, indptr: T.Buffer((m + 1,), "int32"), indices: T.Buffer((nnz,), "int32")):
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
    A = T.match_sparse_buffer(a, (I, J), "float32")
"""
    assert tirkit.check(text) == []
    f = tirkit.parse(text).module.functions[0][1]
    printed = tirkit.to_script(f)
    assert tirkit.structural_equal(tirkit.parse(printed).module.functions[0][1], f)


def test_iteration_over_an_axis_the_buffer_lacks():
    body = """    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
    K = T.dense_fixed(nnz)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    with T.sp_iter([I, K], "SS", "bad") as [i, k]:
        A[i, k] = T.float32(1)
"""
    assert _codes(body) == [("sparse/axis-not-in-buffer", 11)]


def test_child_iterated_without_parent():
    body = """    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
    A = T.match_sparse_buffer(a, (I, J), "float32")
    with T.sp_iter([J], "S", "bad") as [j]:
        A[0, j] = T.float32(1)
"""
    assert ("sparse/malformed-axis", 9) in _codes(body)


def test_buffer_axes_out_of_order():
    body = """    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
    A = T.match_sparse_buffer(a, (J, I), "float32")
"""
    assert _codes(body) == [("sparse/malformed-axis", 8)]


def test_hash_only_on_sparse_axes():
    body = """    I = T.dense_fixed(m, format="hash")
"""
    assert _codes(body) == [("sparse/malformed-axis", 6)]
