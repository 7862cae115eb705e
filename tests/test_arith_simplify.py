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
