"""The asymptotic cost model: domination by homomorphism, program costs, frontiers."""
import pytest

from tirkit.analysis.asymptotic import (Kernel, Program, Tensor, cost_at_most, equivalent,
                                        frontier, program_cost, programs, strictly_less)
from tirkit.analysis.asymptotic.frontier import cost_of, universe
from tirkit.analysis.asymptotic.model import LOCATE, STEP
from tirkit.analysis.asymptotic.workspace import WorkspaceProgram
from tirkit.analysis.asymptotic.query import Cost, at_most, query
from tirkit.analysis.asymptotic.render import render
from tirkit.analysis.asymptotic.walk import walk_cost, workspace_tree

U, C = "u", "c"
SS = (STEP, STEP)


def kernel(out, ins, dims):
    return Kernel(out, tuple(ins), tuple(dims.items()))


D3 = {"i": "I", "j": "J", "k": "K"}
SPMV = kernel(Tensor("a", ("i",), (U,), False),
              [Tensor("B", ("i", "j"), (U, C)), Tensor("c", ("j",), (U,), False)],
              {"i": "I", "j": "J"})
# Pigeon's SpGEMM: A[i, j] += B[i, k] * C[j, k], everything (u, c)
SPGEMM_T = kernel(Tensor("A", ("i", "j"), (U, C)),
                  [Tensor("B", ("i", "k"), (U, C)), Tensor("C", ("j", "k"), (U, C))], D3)
# A = B @ C with both inputs in CSR
SPGEMM = kernel(Tensor("A", ("i", "j"), (U, C)),
                [Tensor("B", ("i", "k"), (U, C)), Tensor("C", ("k", "j"), (U, C))], D3)
SDDMM = kernel(Tensor("A", ("i", "j"), (U, C)),
               [Tensor("B", ("i", "j"), (U, C)), Tensor("C", ("i", "k"), (U, U), False),
                Tensor("D", ("j", "k"), (U, U), False)], D3)
MTTKRP = kernel(Tensor("A", ("i", "j"), (U, U), False),
                [Tensor("B", ("i", "k", "l"), (U, C, C)), Tensor("C", ("k", "j"), (U, U), False),
                 Tensor("D", ("l", "j"), (U, U), False)],
                {"i": "I", "j": "J", "k": "K", "l": "L"})


def test_dense_monomials_compare_by_exponents():
    IK = query(("i", "k"), [], {"i": "I", "k": "K"})
    IIK = query(("i", "a", "k"), [], {"i": "I", "a": "I", "k": "K"})
    I = query(("i",), [], {"i": "I"})
    assert at_most(IK, IIK) and not at_most(IIK, IK)
    assert at_most(I, IK) and not at_most(IK, I)
    J = query(("j",), [], {"j": "J"})
    assert not at_most(I, J) and not at_most(J, I)


def test_nonzeros_against_dense():
    dims = {"i": "I", "j": "J", "k": "K"}
    nnzB = query(("i", "j"), [("B", ("i", "j"))], dims)
    IJ = query(("i", "j"), [], dims)
    rowsB = query(("i",), [("B", ("i", "h"))], {**dims, "h": "J"})
    nnzBK = query(("i", "j", "k"), [("B", ("i", "j"))], dims)
    assert at_most(nnzB, IJ) and not at_most(IJ, nnzB)
    assert at_most(rowsB, nnzB) and not at_most(nnzB, rowsB)
    assert at_most(nnzB, nnzBK) and not at_most(nnzBK, nnzB)
    join = query(("i", "j", "k"), [("B", ("i", "j")), ("C", ("j", "k"))], dims)
    assert at_most(join, nnzBK) and not at_most(nnzBK, join)


def test_canonical_form_drops_implied_atoms():
    dims = {"i": "I", "j": "J", "h": "J"}
    q = query(("i", "j"), [("B", ("i", "h")), ("B", ("i", "j"))], dims)
    assert q.atoms == query(("i", "j"), [("B", ("i", "j"))], dims).atoms


def test_spmm_cost_reads_like_the_paper():
    spmm = kernel(Tensor("C", ("i", "k"), (U, U), False),
                  [Tensor("B", ("i", "j"), (U, C)), Tensor("X", ("j", "k"), (U, U), False)], D3)
    cost = program_cost(spmm, Program(("i", "j", "k"), (SS, (LOCATE, LOCATE))), sunk=False)
    assert render(cost) == "O(nnz(B)·K + I)"


def test_three_spgemm_algorithms():
    inner = program_cost(SPGEMM, Program(("i", "j", "k"), (SS, SS)))
    gustavson = program_cost(SPGEMM, Program(("i", "k", "j"), (SS, SS)))
    outer = program_cost(SPGEMM, Program(("k", "i", "j"), (SS, SS)))
    assert strictly_less(gustavson, inner)
    assert strictly_less(outer, inner)
    assert equivalent(gustavson, outer)
    bare = program_cost(SPGEMM, Program(("i", "j", "k"), (SS, SS)), sunk=False)
    assert render(bare) == "O(I·J + nnz(B⋈C) + nnz(C))"
    assert render(program_cost(SPGEMM, Program(("i", "k", "j"), (SS, SS)), sunk=False)) == \
        "O(nnz(B) + nnz(B⋈C) + I)"


SPMV2 = kernel(Tensor("a", ("i",), (U,), False),
               [Tensor("B", ("i", "j"), (U, C)), Tensor("C", ("j", "k"), (U, C)),
                Tensor("d", ("k",), (U,), False)], D3)


@pytest.mark.parametrize("k, size, front", [(SPMV, 8, 4), (SPGEMM_T, 96, 12),
                                            (SPMV2, 144, 28)])
def test_frontier_sizes_as_the_paper(k, size, front):
    """Pigeon's artifact: results/spmv_data.json, spgemm_data.json, spmv2_data.json
    (universe_length, frontier_length)."""
    assert len(list(universe(k))) == size
    assert len(frontier(k)) == front


def test_spmv2_uses_a_workspace():
    """SpMV with two sparse inputs: the least depth (2) needs the workspace w = C·d."""
    progs = list(universe(SPMV2))
    assert all(isinstance(p, WorkspaceProgram) and p.depth == 2 for p in progs)
    for p, _ in frontier(SPMV2):
        assert p.pair == (1, 2)


# Pigeon's SpGEMM with three factors, the last one transposed: A[i, j] += B[i, k]·C[k, l]·D[j, l]
SPGEMM2 = kernel(Tensor("A", ("i", "j"), (U, C)),
                 [Tensor("B", ("i", "k"), (U, C)), Tensor("C", ("k", "l"), (U, C)),
                  Tensor("D", ("j", "l"), (U, C))], {"i": "I", "j": "J", "k": "K", "l": "L"})
# B·(C∘D) (Pigeon's spgemmh): every workspace program also has a twin storing w = X·Y
SPGEMMH = kernel(Tensor("A", ("i", "j"), (U, C)),
                 [Tensor("B", ("i", "k"), (U, C)), Tensor("C", ("j", "k"), (U, C)),
                  Tensor("D", ("j", "k"), (U, C))], D3)


def test_spgemm2_frontier_as_the_artifact():
    """results/spgemm2_data.json: universe_length 20736, frontier_length 292 (every program
    of depth 3 precomputes a product of two factors into a workspace)."""
    progs = list(universe(SPGEMM2))
    assert len(progs) == 20736
    assert all(isinstance(p, WorkspaceProgram) and p.depth == 3 for p in progs)
    assert len(frontier(SPGEMM2, progs)) == 292


def test_universe_with_stored_products():
    """results/spgemmh_data.json and sspgemm_data.json: universe_length 102272 and 119296
    (384 plain nests, the rest workspace programs, half of them storing w = X·Y)."""
    progs = list(universe(SPGEMMH))
    assert len(progs) == 102272
    ws = [p for p in progs if isinstance(p, WorkspaceProgram)]
    assert len(progs) - len(ws) == 384
    assert sum(not p.reduce for p in ws) * 2 == len(ws)
    sampled = kernel(Tensor("A", ("i", "j"), (U, C)),
                     [Tensor("B", ("i", "j"), (U, C)), Tensor("C", ("i", "k"), (U, C)),
                      Tensor("D", ("j", "k"), (U, C))], D3)
    assert len(list(universe(sampled))) == 119296


def _has_term(cost, head, atoms, dims):
    """cost holds a task set equivalent to {head | atoms}."""
    q = query(head, atoms, dims)
    return any(at_most(q, t) and at_most(t, q) for t in cost.simplified().terms)


def test_workspace_consumer_and_pattern():
    """Row-by-row B·C into w[l], then A[i, :] += w·D[j, :]^T, everything stepped.  For a row
    i of B that is empty the producer does nothing but the consumer still walks D (I·nnz(D)),
    and the workspace's pattern forgets the row it was filled for: the consumer's l loop runs
    over columns of B·C's any row (∃i' B(i', k) C(k, l))."""
    p = WorkspaceProgram(("i",), ("j", "l"), ("k", "l"), (0, 1), ("l",), (SS, SS, SS),
                         (STEP,))
    cost = walk_cost(SPGEMM2, workspace_tree(SPGEMM2, p))
    dims = {"i": "I", "j": "J", "k": "K", "l": "L", "a": "K", "b": "L", "c": "I", "d": "K"}
    assert _has_term(cost, ("i", "j", "l"), [("D", ("j", "l"))], dims)
    assert _has_term(cost, ("i", "j", "l"), [("B", ("i", "a")), ("D", ("j", "b")),
                                              ("B", ("c", "d")), ("C", ("d", "l"))], dims)
    assert not _has_term(cost, ("i", "j", "l"), [("B", ("i", "a")), ("D", ("j", "b")),
                                                  ("C", ("a", "l"))], dims)


@pytest.mark.parametrize("k, size, front", [(SDDMM, 24, 8), (MTTKRP, 192, 36)])
def test_frontier_sizes_of_plain_nests(k, size, front):
    """SDDMM and MTTKRP among their plain loop nests, hand-checked below (their universes
    also hold workspace programs of the same depth: 7,456 and 226,944 programs)."""
    assert len(list(programs(k))) == size
    assert len(frontier(k, programs(k))) == front


def _per_order(k):
    out = {}
    for p, _ in frontier(k, programs(k)):
        out[p.order] = out.get(p.order, 0) + 1
    return out


def test_spmv_frontier_steps_the_compressed_level():
    """The inner loop steps B's compressed level (transposed first when j is outer)."""
    for prog, _ in frontier(SPMV):
        inner = prog.order[1]
        assert prog.protocols[0][("i", "j").index(inner)] == STEP


def test_spgemm_frontier_excludes_inner_products():
    """Gustavson's orders (k between i and j) locate k in the transposed second input
    (stepping it too would walk all of that input's rows for every i), with either protocol
    on the first input's dense level; the outer products (k outermost) with any protocol on
    the dense levels; inner products (k innermost) never."""
    assert _per_order(SPGEMM_T) == {("i", "k", "j"): 2, ("j", "k", "i"): 2,
                                    ("k", "i", "j"): 4, ("k", "j", "i"): 4}
    for p, _ in frontier(SPGEMM_T):
        if p.order == ("i", "k", "j"):
            assert p.protocols[1] == (STEP, LOCATE)


def test_sddmm_frontier_costs_nnz_times_k():
    """Hand-checked: every frontier program does O(nnz(B)·K) work.  k innermost (the fused
    SDDMM) with either protocol on B's dense level; k outer or between only when B's dense
    level is stepped (its loop visits only B's nonempty rows: rows(B)·K ⪯ nnz(B)·K)."""
    per = _per_order(SDDMM)
    assert per == {("i", "j", "k"): 2, ("j", "i", "k"): 2, ("i", "k", "j"): 1,
                   ("j", "k", "i"): 1, ("k", "i", "j"): 1, ("k", "j", "i"): 1}
    fused = program_cost(SDDMM, Program(("i", "j", "k"), (SS, (LOCATE,) * 2, (LOCATE,) * 2)))
    for p, _ in frontier(SDDMM, programs(SDDMM)):
        assert equivalent(cost_of(SDDMM, p), fused)
    dense = cost_of(SDDMM, Program(("i", "j", "k"), ((LOCATE, LOCATE),) + ((LOCATE,) * 2,) * 2))
    assert strictly_less(fused, dense)


def test_mttkrp_frontier():
    """Hand-checked: all 24 orders; j (the dense column) placed after two of i, k, l with
    either protocol on B's dense level, earlier only with that level stepped (so the loops
    before j visit B's nonzero prefixes, not whole dimensions)."""
    per = _per_order(MTTKRP)
    assert len(per) == 24
    assert all(n == (2 if o.index("j") >= 2 else 1) for o, n in per.items())


def test_cost_sums():
    dims = {"i": "I", "j": "J"}
    a = Cost((query(("i",), [], dims),))
    b = Cost((query(("i", "j"), [], dims),))
    assert cost_at_most(a, a + b) and cost_at_most(a + b, b)
    assert not cost_at_most(b, a)


# ---- sparse iterations of the IR ------------------------------------------------------------
import pathlib  # noqa: E402

import tirkit  # noqa: E402
from tirkit.analysis.asymptotic.iteration import (iteration_cost, reordered,  # noqa: E402
                                                  sparse_iterations)

EX = pathlib.Path(__file__).parents[2] / "examples" / "sparse"


def _iteration(name):
    f = tirkit.parse((EX / name).read_text()).module.functions[0][1]
    return f, sparse_iterations(f)[0]


@pytest.mark.parametrize("name, text", [
    ("spmv.py", "O(nnz(A) + I)"), ("spmm.py", "O(nnz(A)·K + I)"),
    ("sddmm.py", "O(nnz(S)·K + I)"), ("spgemm_gustavson.py", "O(nnz(A) + nnz(A⋈B) + I)"),
    ("spgemm_inner.py", "O(nnz(A)·K + nnz(BT)·I + I·K)"),
    ("csr_dot_rows.py", "O(nnz(A) + nnz(B) + I)")])
def test_iteration_costs(name, text):
    f, it = _iteration(name)
    r = iteration_cost(f, it)
    assert r.current.text == text
    assert bool(r.better) == (name == "spgemm_inner.py")


def test_inner_product_is_dominated_by_gustavson_order():
    f, it = _iteration("spgemm_inner.py")
    r = iteration_cost(f, it)
    assert [b.axes for b in r.better] == [("I", "J", "K")]
    g = reordered(f, it, r.better[0])
    it2 = sparse_iterations(g)[0]
    assert [v.var.name for v in it2.sp_iter_vars] == ["i", "j", "k"]
    assert iteration_cost(g, it2).better == ()
    diags = [d for d in tirkit.check((EX / "spgemm_inner.py").read_text())]
    assert [(d.code, d.severity, d.span.line) for d in diags] == [
        ("cost/asymptotically-dominated", "information", 32)]
    assert "[I, J, K]" in diags[0].message
