"""Quasi-affine iterator maps: split, fuse, split of fuse, predicated splits, symbolic
extents, and the rejected cases with their reasons."""
from tirkit.arith import Aff, Analyzer, Fused, detect
from tirkit.ir import expr as E

from arith_util import add, c, fdiv, fmod, i, j, k, mul, n


def setup(**ext):
    an = Analyzer()
    loops = {}
    for name, e in ext.items():
        v = {"i": i, "j": j, "k": k}[name]
        an.bind_extent(v, c(0), e if not isinstance(e, int) else c(e))
        ee = an.to_aff(e if not isinstance(e, int) else c(e))
        loops[v] = (Aff(), ee.const if ee.is_const() else ee)
    return an, loops


def test_split():
    an, loops = setup(i=64)
    m = detect([fdiv(i, c(4)), fmod(i, c(4))], loops, an, ["vi", "vj"])
    assert m.ok
    (a,), (b,) = m.splits
    assert (a.source, a.lower, a.extent) == (i, 4, 16)
    assert (b.source, b.lower, b.extent) == (i, 1, 4)


def test_fuse():
    an, loops = setup(i=16, j=8)
    m = detect([add(mul(i, c(8)), j)], loops, an, ["v"])
    assert m.ok
    assert sorted((s.scale, s.extent) for s in m.splits[0]) == [(1, 8), (8, 16)]


def test_split_of_fuse():
    an, loops = setup(i=16, j=8)
    fused = add(mul(i, c(8)), j)
    m = detect([fdiv(fused, c(32)), fmod(fused, c(32))], loops, an, ["vo", "vi"])
    assert m.ok
    srcs = {type(s.source) for ss in m.splits for s in ss}
    assert Fused in srcs or srcs == {E.Var}


def test_split_of_fuse_across_boundaries():
    # fused = 192*a + 4*b + c; // 896 and % 896 // 32 and % 32 are independent
    an, loops = setup(i=28, j=48, k=4)
    f = add(add(mul(i, c(192)), mul(j, c(4))), k)
    m = detect([fdiv(f, c(896)), fdiv(fmod(f, c(896)), c(32)), fmod(f, c(32))], loops, an,
               ["v0", "v1", "v2"])
    assert m.ok, m.failures


def test_predicated_non_divisible_split():
    # for i0, i1 in T.grid(4, 32) with T.where(i0 * 32 + i1 < 100): vi = i0 * 32 + i1
    an, loops = setup(i=4, j=32)
    b = add(mul(i, c(32)), j)
    an.assume(E.LT(b, c(100), "bool"))
    m = detect([b], loops, an, ["vi"])
    assert m.ok
    assert an.const_bound(an.to_aff(b)) == (0, 99)


def test_non_divisible_split_of_a_loop():
    an, loops = setup(i=10)
    m = detect([fdiv(i, c(4)), fmod(i, c(4))], loops, an, ["vo", "vi"])
    assert m.splits[0][0].extent == 3        # ceil(10 / 4)
    assert [f.code for f in m.failures] == ["non-affine"]
    assert "wraps unevenly" in m.failures[0].reason and "10" in m.failures[0].reason


def test_symbolic_extent():
    an, loops = setup(i=n, j=32)
    m = detect([i, j], loops, an, ["vi", "vj"])
    assert m.ok
    assert m.splits[0][0].extent == Aff.of(n)


def test_rejects_dependent_iterators():
    an, loops = setup(i=64)
    m = detect([i, mul(i, c(2))], loops, an, ["vi", "vj"])
    (f,) = m.failures
    assert f.code == "not-bijective" and f.index == 1 and f.other == 0
    assert "`vj` and `vi` both vary with loop `i`" in f.reason


def test_rejects_overlapping_strides_in_one_binding():
    an, loops = setup(i=16, j=4)
    m = detect([add(mul(i, c(2)), j)], loops, an, ["v"], overlap_ok=[False])
    (f,) = m.failures
    assert f.code == "not-bijective"
    assert "`j` spans 4 values at stride 1 but `i` steps by only 2" in f.reason


def test_sliding_window_allowed_for_spatial():
    an, loops = setup(i=4, j=30)
    m = detect([add(mul(i, c(28)), j)], loops, an, ["v"], overlap_ok=[True])
    assert m.ok


def test_rejects_products_of_loops():
    an, loops = setup(i=8, j=8)
    m = detect([mul(i, j)], loops, an, ["v"])
    (f,) = m.failures
    assert f.code == "non-affine" and "`i * j` multiplies two loop-dependent terms" in f.reason


def test_rejects_fusion_with_a_gap():
    an, loops = setup(i=8, j=4)
    m = detect([fmod(add(mul(i, c(8)), j), c(16))], loops, an, ["v"])
    (f,) = m.failures
    assert f.code == "non-affine" and "is not a fusion of loops" in f.reason


def test_rejects_division_stride_mismatch():
    an, loops = setup(i=8)
    m = detect([fdiv(mul(i, c(3)), c(2))], loops, an, ["v"])
    (f,) = m.failures
    assert f.code == "non-affine" and "stride 3 does not divide 2" in f.reason
