"""Sparse kernels lowered to loops, compiled and interpreted, against scipy.sparse."""
import pathlib

import numpy as np
import pytest

import tirkit
from tirkit.codegen import build
from tirkit.codegen.interp import run_reference
from tirkit.sparse.inputs import sparse_inputs
from tirkit.sparse.lower import lower_sparse

sp = pytest.importorskip("scipy.sparse")

EX = pathlib.Path(__file__).parents[2] / "examples" / "sparse"
DENSITIES = [0.02, 0.2, 0.7]


def _kernel(name):
    f = tirkit.parse((EX / name).read_text()).module.functions[0][1]
    return f, lower_sparse(f)


def _by_name(low, arrays):
    names = [low.buffer_of(p).name for p in low.params if low.buffer_of(p) is not None]
    return dict(zip(names, arrays))


def _run_both(low, arrays, scalars, interpret=True):
    """Compile and run; also interpret a copy (the reference) unless told not to: the
    interpreter is slow on the denser SpGEMMs, compiled code is then checked by scipy alone."""
    ref = [a.copy() for a in arrays]
    if interpret:
        run_reference(low, ref, scalars)
    build(low)(*arrays, scalars=scalars)
    return ref if interpret else None


@pytest.mark.parametrize("density", DENSITIES)
def test_spmv(density):
    f, low = _kernel("spmv.py")
    rng = np.random.default_rng(1)
    arrays, scalars, _ = sparse_inputs(f, low, rng, {"m": 37, "n": 29}, density)
    ref = _run_both(low, arrays, scalars)
    a = _by_name(low, arrays)
    A = sp.csr_matrix((a["A"], a["indices"], a["indptr"]), shape=(37, 29))
    np.testing.assert_allclose(a["Y"], A @ a["X"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_by_name(low, ref)["Y"], a["Y"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("density", DENSITIES)
def test_spmm(density):
    f, low = _kernel("spmm.py")
    rng = np.random.default_rng(2)
    arrays, scalars, _ = sparse_inputs(f, low, rng, {"m": 33, "n": 21, "feat_size": 7},
                                       density)
    ref = _run_both(low, arrays, scalars)
    a = _by_name(low, arrays)
    A = sp.csr_matrix((a["A"], a["indices"], a["indptr"]), shape=(33, 21))
    np.testing.assert_allclose(a["C"], A @ a["B"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_by_name(low, ref)["C"], a["C"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("density", DENSITIES)
def test_sddmm(density):
    f, low = _kernel("sddmm.py")
    rng = np.random.default_rng(3)
    arrays, scalars, _ = sparse_inputs(f, low, rng, {"m": 25, "n": 31, "feat_size": 9},
                                       density)
    ref = _run_both(low, arrays, scalars)
    a = _by_name(low, arrays)
    S = sp.csr_matrix((a["S"], a["indices"], a["indptr"]), shape=(25, 31))
    want = S.multiply(a["A"] @ a["B"].T).tocsr()
    got = sp.csr_matrix((a["C"], a["indices"], a["indptr"]), shape=(25, 31))
    np.testing.assert_allclose(got.toarray(), want.toarray(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_by_name(low, ref)["C"], a["C"], rtol=1e-5, atol=1e-6)


def _spgemm_inputs(f, low, rng, density, m=23, n=19, p=27, transposed=False):
    A = sp.random(m, n, density, "csr", random_state=rng, dtype=np.float32)
    B = sp.random(n, p, density, "csr", random_state=rng, dtype=np.float32)
    A.data += np.sign(A.data) + 0.5
    B.data += 0.5
    C = (A @ B).tocsr()
    C.sort_indices()
    Bs = B.T.tocsr() if transposed else B
    Bs.sort_indices()
    pats = {"J": (A.indptr, A.indices), "K_c": (C.indptr, C.indices)}
    pats["J_t" if transposed else "K"] = (Bs.indptr, Bs.indices)
    arrays, scalars, _ = sparse_inputs(f, low, rng, {"m": m, "n": n, "p": p}, density, pats)
    a = _by_name(low, arrays)
    a["A"][:] = A.data
    a["BT" if transposed else "B"][:] = Bs.data
    a["C"][:] = 0
    return arrays, scalars, C


@pytest.mark.parametrize("density", DENSITIES)
@pytest.mark.parametrize("name", ["spgemm_gustavson.py", "spgemm_inner.py",
                                  "spgemm_hash.py"])
def test_spgemm(name, density):
    f, low = _kernel(name)
    rng = np.random.default_rng(4)
    arrays, scalars, C = _spgemm_inputs(f, low, rng, density,
                                        transposed=name == "spgemm_inner.py")
    if name == "spgemm_hash.py":     # a hashed level keeps its coordinates in any order
        a = _by_name(low, arrays)
        perm = np.concatenate([np.random.default_rng(5).permutation(
            np.arange(C.indptr[r], C.indptr[r + 1])) for r in range(C.shape[0])])
        a["c_indices"][:] = C.indices[perm]
    ref = _run_both(low, arrays, scalars, interpret=density < 0.5)
    a = _by_name(low, arrays)
    got = sp.csr_matrix((a["C"], a["c_indices"], a["c_indptr"]), shape=C.shape)
    assert got.nnz == C.nnz and np.any(C.data != 0)
    np.testing.assert_allclose(got.toarray(), C.toarray(), rtol=1e-5, atol=1e-5)
    if ref is not None:
        np.testing.assert_allclose(_by_name(low, ref)["C"], a["C"], rtol=1e-5, atol=1e-6)


def test_missing_element_reads_zero():
    """SpMM iterating the dense twin of J locates A[i, j] in its row: absent is zero."""
    text = (EX / "spmm.py").read_text().replace("[I, J, K]", "[I, J_detach, K]")
    f = tirkit.parse(text).module.functions[0][1]
    assert tirkit.check(text) == []
    low = lower_sparse(f)
    rng = np.random.default_rng(6)
    arrays, scalars, _ = sparse_inputs(f, low, rng, {"m": 12, "n": 10, "feat_size": 3}, 0.3)
    ref = _run_both(low, arrays, scalars)
    a = _by_name(low, arrays)
    A = sp.csr_matrix((a["A"], a["indices"], a["indptr"]), shape=(12, 10))
    np.testing.assert_allclose(a["C"], A @ a["B"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_by_name(low, ref)["C"], a["C"], rtol=1e-5, atol=1e-6)


def test_cli_run_check(tmp_path, capsys):
    from tirkit.cli import main
    assert main(["run", "--check", str(EX / "spmm.py"), "--size", "m=20"]) == 0
    out = capsys.readouterr().out
    assert "C: ok" in out and "MISMATCH" not in out


@pytest.mark.parametrize("density", DENSITIES)
def test_two_compressed_rows_merge(density):
    """Row-wise dot product of two CSR matrices: both rows walked together (one merge loop,
    no search), against scipy."""
    from tirkit.ir import expr as E
    from tirkit.ir import stmt as S
    from tirkit.ir.visit import walk
    f, low = _kernel("csr_dot_rows.py")
    kinds = []
    walk(low.body, lambda x: kinds.append(type(x)) if isinstance(x, (S.While, E.FloorDiv))
         else None)
    assert kinds == [S.While]
    rng = np.random.default_rng(8)
    arrays, scalars, _ = sparse_inputs(f, low, rng, {"m": 26, "n": 35}, density)
    ref = _run_both(low, arrays, scalars)
    a = _by_name(low, arrays)
    A = sp.csr_matrix((a["A"], a["a_indices"], a["a_indptr"]), shape=(26, 35))
    B = sp.csr_matrix((a["B"], a["b_indices"], a["b_indptr"]), shape=(26, 35))
    want = np.asarray(A.multiply(B).sum(axis=1)).ravel()
    np.testing.assert_allclose(a["Y"], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_by_name(low, ref)["Y"], a["Y"], rtol=1e-5, atol=1e-6)
