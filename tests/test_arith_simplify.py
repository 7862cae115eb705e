"""The index simplifier: affine canonical form and the floordiv/floormod tables."""
from tirkit.arith import Aff, Analyzer
from tirkit.arith.affine import Atom
from tirkit.ir import expr as E

from arith_util import add, c, fdiv, fmod, i, j, k, mul


def ranged(**r):
    an = Analyzer()
    for name, (lo, hi) in r.items():
        an.bind({"i": i, "j": j, "k": k}[name], lo, hi)
    return an


def test_linear_terms_combine():
    an = Analyzer()
    x = an.to_aff(E.Sub(add(mul(i, c(3)), add(i, c(5))), c(2), "int32"))
    assert x.terms == {i: 4} and x.const == 3


def test_split_then_fuse_covers_the_loop():
    an = ranged(i=(0, 63))
    # (i // 4) * 4 + i % 4 ranges exactly over i's range, and equal forms compare equal
    x = an.to_aff(add(mul(fdiv(i, c(4)), c(4)), fmod(i, c(4))))
    assert an.const_bound(x) == (0, 63)
    assert x == an.to_aff(add(fmod(i, c(4)), mul(c(4), fdiv(i, c(4)))))


def test_fuse_then_split_recovers_the_parts():
    an = ranged(i=(0, 15), j=(0, 3))
    fused = add(mul(i, c(4)), j)
    assert an.to_aff(fdiv(fused, c(4))) == Aff.of(i)
    assert an.to_aff(fmod(fused, c(4))) == Aff.of(j)


def test_pull_multiples_out_of_floordiv():
    an = Analyzer()
    x = an.to_aff(fdiv(add(mul(i, c(8)), add(j, c(17))), c(8)))
    # (8i + j + 17) // 8 -> i + 2 + (j + 1) // 8
    assert x.terms[i] == 1 and x.const == 2
    atoms = x.atoms()
    assert len(atoms) == 1 and atoms[0].kind == "fdiv" and atoms[0].c == 8


def test_floormod_drops_multiples_and_small_remainder():
    an = ranged(j=(0, 7))
    assert an.to_aff(fmod(add(mul(i, c(16)), j), c(16))) == Aff.of(j)
    assert an.to_aff(fmod(add(mul(i, c(16)), j), c(8))) == Aff.of(j)


def test_gcd_rule():
    an = Analyzer()
    # (4i + 2) // 8 -> (2i + 1) // 4 -> i // 2
    x = an.to_aff(fdiv(add(mul(i, c(4)), c(2)), c(8)))
    (atom,) = x.atoms()
    assert atom.kind == "fdiv" and atom.c == 2 and atom.args[0] == Aff.of(i)


def test_nested_division():
    an = Analyzer()
    x = an.to_aff(fdiv(fdiv(i, c(4)), c(8)))
    (atom,) = x.atoms()
    assert atom.c == 32 and atom.args[0] == Aff.of(i)


def test_digit_of_a_remainder_is_a_remainder_of_a_quotient():
    # (i % 14) // 2 and (i // 2) % 7 are the same digit of i: one canonical form, so the
    # difference of the two is 0 (shared-memory compaction needs this to be exact)
    an = Analyzer()
    a = an.to_aff(fdiv(fmod(i, c(14)), c(2)))
    b = an.to_aff(fmod(fdiv(i, c(2)), c(7)))
    assert a == b
    assert (a - b).is_const() and (a - b).const == 0
    # not when the divisor does not divide the modulus
    x = an.to_aff(fdiv(fmod(i, c(15)), c(2)))
    (atom,) = x.atoms()
    assert atom.kind == "fdiv" and atom.c == 2


def test_product_of_loop_variables_is_an_atom():
    an = Analyzer()
    x = an.to_aff(mul(i, j))
    (atom,) = x.atoms()
    assert isinstance(atom, Atom) and atom.kind == "mul"


def test_min_max_decided_by_ranges():
    an = ranged(i=(0, 9))
    assert an.to_aff(E.Min(i, c(100), "int32")) == Aff.of(i)
    assert an.to_aff(E.Max(i, c(-1), "int32")) == Aff.of(i)
    x = an.to_aff(E.Min(i, c(5), "int32"))
    assert x.atoms()[0].kind == "min"


def test_truncdiv_on_nonnegative_ranges_is_floordiv():
    an = ranged(i=(0, 63))
    assert an.to_aff(E.Div(i, c(4), "int32")) == an.to_aff(fdiv(i, c(4)))
    neg = Analyzer()
    neg.bind(i, -5, 5)
    assert neg.to_aff(E.Div(i, c(4), "int32")).atoms()[0].kind == "opaque"


def test_quotient_and_remainder_rejoin():
    # (i // 4) * 8 + (i % 4) * 2 -> i * 2, and the constant of the joined form is kept
    an = Analyzer()
    x = an.to_aff(add(mul(fdiv(i, c(4)), c(8)), mul(fmod(i, c(4)), c(2))))
    assert x == Aff.of(i, 2)
    y = an.to_aff(add(add(mul(fdiv(add(i, c(3)), c(4)), c(4)), j), fmod(add(i, c(3)), c(4))))
    assert y.terms == {i: 1, j: 1} and y.const == 3
    # not when the scales do not match: 8 is not 3 * 4
    z = an.to_aff(add(mul(fdiv(i, c(4)), c(8)), mul(fmod(i, c(4)), c(3))))
    assert len(z.atoms()) == 2


def test_whole_multiples_leave_a_division_when_the_rest_vanishes():
    an = ranged(j=(0, 7))
    an.rules_off = frozenset({"pull-multiples"})
    assert an.to_aff(fdiv(add(mul(i, c(8)), add(j, c(16))), c(8))) == Aff.of(i) + 2
    # the rest j + 8 reaches 15: the division stays whole without pull-multiples
    x = an.to_aff(fdiv(add(mul(i, c(8)), add(j, c(8))), c(4)))
    (atom,) = x.atoms()
    assert atom.c == 4 and atom.args[0].terms == {i: 8, j: 1} and atom.args[0].const == 8
    assert x.terms[atom] == 1 and x.const == 0


def test_rows_can_be_turned_off():
    an = Analyzer()
    an.rules_off = frozenset({"gcd"})
    x = an.to_aff(fdiv(add(mul(i, c(4)), c(2)), c(8)))
    (atom,) = x.atoms()
    assert atom.c == 8 and atom.args[0].terms == {i: 4} and atom.args[0].const == 2
    blk = ranged(i=(8, 11))
    assert blk.to_aff(fdiv(i, c(4))) == Aff({}, 2)
    blk.rules_off = frozenset({"one-block"})
    assert blk.to_aff(fdiv(i, c(4))).atoms()[0].c == 4


def test_exact_forms_keep_casts_truncating_division_and_written_sums():
    from tirkit.arith.simplify import to_aff
    an = ranged(i=(0, 63))
    cast = E.Cast("int32", E.Var("w", "int64"))
    (a,) = to_aff(add(cast, c(1)), an, exact=True).atoms()
    assert a.kind == "opaque" and a.expr is cast
    assert to_aff(E.Div(i, c(4), "int32"), an, exact=True).atoms()[0].kind == "opaque"
    written = add(mul(fdiv(i, c(4)), c(4)), fmod(i, c(4)))
    assert len(to_aff(written, an, exact=True).atoms()) == 2
    assert to_aff(written, an) == Aff.of(i)


def test_schedule_view_writes_results_back_as_tvm_prints_them():
    from tirkit.arith import writeback as A
    from tirkit.script.printer import Printer
    text = Printer().expr
    bounds = {id(i): (0, 63), id(j): (0, 3)}
    assert text(A.simplify(add(mul(fdiv(i, c(4)), c(8)), mul(fmod(i, c(4)), c(2))),
                           bounds)) == "i * 2"
    assert text(A.simplify(E.Sub(add(j, mul(i, c(4))), c(1), "int32"), bounds,
                           binding=True)) == "i * 4 + j + -1"
    # multiples leave a division only when the rest vanishes; no common factor comes out
    assert text(A.simplify(fdiv(add(mul(i, c(4)), j), c(4)), bounds)) == "i"
    assert text(A.simplify(fdiv(add(mul(i, c(4)), j), c(2)), bounds)) == "(i * 4 + j) // 2"
    assert text(A.simplify(fdiv(add(mul(i, c(16)), mul(j, c(8))), c(32)), bounds)) == \
        "(i * 16 + j * 8) // 32"
    # a division whose numerator stays in one block is its quotient
    assert text(A.simplify(fdiv(add(i, c(2)), c(4)), {id(i): (2, 5)})) == "1"
    assert A.bound_of(add(fmod(k, c(8)), j), bounds) == (0, 10)
    assert A.bound_of(mul(i, j), bounds) is None


def test_scaled_comparison():
    from tirkit.arith.simplify import lt_const
    an = ranged(j=(0, 3))
    # 4i + j < 32 with 0 <= j < 4 -> i < 8
    q, k2 = lt_const(an.to_aff(add(mul(i, c(4)), j)), 32, an)
    assert q == Aff.of(i) and k2 == 8
    # not when the rest can reach the scale, nor when the scale does not divide the bound
    assert lt_const(an.to_aff(add(mul(i, c(2)), j)), 32, an) is None
    assert lt_const(an.to_aff(add(mul(i, c(4)), j)), 30, an) is None
