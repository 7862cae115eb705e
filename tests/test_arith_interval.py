"""Interval analysis: ranges, symbolic end points, constraints from predicates."""
from tirkit.arith import Aff, Analyzer
from tirkit.ir import expr as E

from arith_util import c

i, j, n, m = E.Var("i"), E.Var("j"), E.Var("n"), E.Var("m")


def test_affine_bounds_are_exact():
    an = Analyzer()
    an.bind(i, 0, 63)
    an.bind(j, 0, 3)
    assert an.const_bound(an.to_aff(E.Add(E.Mul(i, c(4), "int32"), j, "int32"))) == (0, 255)
    assert an.const_bound(an.to_aff(E.Sub(j, i, "int32"))) == (-63, 3)


def test_floordiv_and_floormod_bounds():
    an = Analyzer()
    an.bind(i, 0, 99)
    assert an.const_bound(an.to_aff(E.FloorDiv(i, c(8), "int32"))) == (0, 12)
    assert an.const_bound(an.to_aff(E.FloorMod(i, c(8), "int32"))) == (0, 7)


def test_symbolic_extent():
    an = Analyzer()
    an.bind_extent(i, c(0), n)
    lo, hi = an.bound(an.to_aff(E.Add(i, c(1), "int32")))
    assert lo == Aff({}, 1) and hi == Aff.of(n)
    # i + 1 <= n holds for every n; i + 1 <= n - 1 does not
    assert an.prove_le(an.to_aff(E.Add(i, c(1), "int32")), Aff.of(n))
    assert not an.prove_le(an.to_aff(E.Add(i, c(1), "int32")), Aff.of(n) - 1)


def test_symbolic_split_extent():
    # for i0 in range((n + 31) // 32): i0 * 32 + 31 reaches ((n + 31) // 32) * 32 - 1
    an = Analyzer()
    ext = E.FloorDiv(E.Add(n, c(31), "int32"), c(32), "int32")
    an.bind_extent(i, c(0), ext)
    _, hi = an.bound(an.to_aff(E.Add(E.Mul(i, c(32), "int32"), c(31), "int32")))
    assert hi == an.to_aff(ext).scale(32) - 1


def test_predicate_tightens_a_fused_index():
    an = Analyzer()
    an.bind(i, 0, 3)
    an.bind(j, 0, 31)
    x = an.to_aff(E.Add(E.Mul(i, c(32), "int32"), j, "int32"))
    assert an.const_bound(x) == (0, 127)
    an.assume(E.LT(E.Add(E.Mul(i, c(32), "int32"), j, "int32"), c(100), "bool"))
    assert an.const_bound(x) == (0, 99)


def test_negated_guard_and_single_variable_guard():
    an = Analyzer()
    an.bind(i, 0, 7)
    an.assume(E.Not(E.LT(i, c(5), "bool")))
    assert an.const_bound(Aff.of(i)) == (5, 7)


def test_scaled_predicate():
    # (i * 128 + j) * 4 + k < 128 bounds i * 128 + j + k // 4 style bindings
    k = E.Var("k")
    an = Analyzer()
    an.bind(i, 0, 3)
    an.bind(j, 0, 127)
    an.bind(k, 0, 3)
    fused = E.Add(E.Mul(E.Add(E.Mul(i, c(128), "int32"), j, "int32"), c(4), "int32"), k,
                  "int32")
    an.assume(E.LT(fused, c(128), "bool"))
    x = an.to_aff(E.FloorDiv(fused, c(4), "int32"))
    assert an.const_bound(x)[1] == 31
