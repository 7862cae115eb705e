"""signature/iter-type: a spatial iterator that does not index what its block writes; the
error for an accumulation, the warning for an overwrite, and the legal neighbours left
alone."""
import textwrap

import numpy as np
import pytest

import tirkit

HEAD = "from tvm.script import tir as T\n\n\n"

ROWSUM = """
@T.prim_func
def rowsum(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("sum"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi] = B[vi] + A[vi, vj]
"""


def found(body):
    text = HEAD + textwrap.dedent(body)
    return [(d.severity, d.span.line, d.span.column, d.span.end_column)
            for d in tirkit.check(text, "k.py") if d.code == "signature/iter-type"]


def diag(body):
    (d,) = [d for d in tirkit.check(HEAD + textwrap.dedent(body), "k.py")
            if d.code == "signature/iter-type"]
    return d


def test_a_spatial_iterator_accumulated_over_is_an_error_on_the_iterator():
    d = diag(ROWSUM)
    # on `vj` of the remap, with the store as the related location
    assert (d.severity, d.span.line, d.span.column, d.span.end_column) == ("error", 9, 17, 19)
    assert d.message == (
        "block 'sum': spatial iterator `vj` does not index the element it updates, `B[vi]`: "
        "the 16 instances of `vj` for each value of the other iterators all accumulate into "
        "it, which makes `vj` a reduction (TVM's schedule primitives refuse the block: it "
        "lacks compact dataflow); declare it with T.axis.reduce (\"R\" in T.axis.remap) and "
        "give the block a T.init()")
    ((span, note),) = d.related
    assert (span.line, note) == (10, "`B[vi]` is written here")


def test_the_same_block_declared_as_a_reduction_is_clean():
    init = "            with T.init():\n                B[vi] = T.float32(0)\n"
    with_init = ROWSUM.replace("            B[vi] = B[vi]", init + "            B[vi] = B[vi]")
    assert found(with_init.replace('"SS"', '"SR"')) == []
    # still "SS", but with an init: the error no longer asks for one
    assert "T.init()" not in diag(with_init).message


def test_an_overwrite_is_a_warning():
    body = ROWSUM.replace("B[vi] = B[vi] + A[vi, vj]", "B[vi] = A[vi, vj]")
    d = diag(body)
    assert d.severity == "warning"
    assert "all write this element: the last one wins" in d.message


def test_each_spatial_iterator_that_misses_the_store_is_reported():
    body = """
    @T.prim_func
    def total(A: T.Buffer((8, 8, 4), "float32"), B: T.Buffer((1,), "float32")):
        for i, j, k in T.grid(8, 8, 4):
            with T.block("t"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                B[0] = B[0] + A[vi, vj, vk]
    """
    assert found(body) == [("error", 9, 13, 15), ("error", 9, 17, 19), ("error", 9, 21, 23)]


@pytest.mark.parametrize("change", [
    # one instance only: the iterator's domain, or the loop feeding it, has one value
    ('T.grid(16, 16)', 'T.grid(16, 1)'),
    # a guard that picks one instance of vj
    ("            B[vi] = B[vi] + A[vi, vj]",
     "            if vj == 0:\n                B[vi] = B[vi] + A[vi, vj]"),
    # a local buffer is private to each thread once lowered
    ('B: T.Buffer((16,), "float32")', 'B: T.Buffer((16,), "float32", scope="local")'),
])
def test_what_is_not_certainly_a_conflict_is_left_alone(change):
    body = ROWSUM.replace(*change)
    assert body != ROWSUM
    assert found(body) == []


def test_a_buffer_allocated_by_the_block_itself_is_its_own():
    body = """
    @T.prim_func
    def f(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
        for i, j in T.grid(16, 16):
            with T.block("b"):
                vi, vj = T.axis.remap("SS", [i, j])
                t = T.alloc_buffer((1,), "float32")
                t[0] = A[vi, vj]
                B[vi, vj] = t[0] * T.float32(2)
    """
    assert found(body) == []


@pytest.mark.oracle
def test_tvm_refuses_the_accumulation_late_and_parallelises_the_overwrite():
    # what each report stands for in TVM: the accumulating block is refused only when a
    # schedule primitive meets it ("compact dataflow"); the overwriting one passes for a
    # complete block, and `j` runs in parallel with every instance writing B[vi]
    pytest.importorskip("tvm")
    import tvm
    from tvm import s_tir
    from tvm.script import tirx

    def parallel_j(body):
        text = (HEAD + textwrap.dedent(body)).replace("tir as T", "tirx as T")
        text = text.replace('T.block("sum")', 'T.sblock("sum")').replace(
            "@T.prim_func", "@T.prim_func(s_tir=True)")
        func = tvm.script.from_source(text.replace("from tvm.script import tirx as T\n", ""),
                                      extra_vars={"T": tirx})
        sch = s_tir.Schedule(func)
        _, j = sch.get_loops(sch.get_sblock("sum"))
        sch.parallel(j)
        return sch.mod["main"].script()
    with pytest.raises(Exception, match="compact dataflow"):
        parallel_j(ROWSUM)
    assert "T.parallel(16)" in parallel_j(ROWSUM.replace("B[vi] = B[vi] + A[vi, vj]",
                                                         "B[vi] = A[vi, vj]"))


@pytest.mark.parametrize("source, at, edit", [
    (['            vi, vj = T.axis.remap("SS", [i, j])'], 17, (1, 37, 38, "R")),
    (['            vi, vj = T.axis.remap("SS", [i, j])'], 13, (1, 36, 37, "R")),
    (["    vii = T.axis.spatial(4, ii)"], 5, (1, 18, 25, "reduce")),
    (["    vii = T.axis.S(4, ii)"], 5, (1, 18, 19, "R")),
    # a call wrapped onto the next line
    (["    a, b = T.axis.remap(", '        "SS", [i, j])'], 8, (2, 11, 12, "R")),
    # not an iterator declaration this edit knows: no edit
    (["    vi = T.axis.reduce(4, ii)"], 5, None),
    (['    vi, vj = T.axis.remap("SR", [i, j])'], 9, None),
])
def test_the_edit_that_declares_an_iterator_a_reduction(source, at, edit):
    from tirkit.verify.iter_type import reduction_edit
    assert reduction_edit(source, 1, at) == edit


def test_the_edit_on_the_reported_iterator_clears_the_error_and_keeps_the_program():
    from tirkit.verify.iter_type import reduction_edit
    text = HEAD + textwrap.dedent(ROWSUM)
    d = diag(ROWSUM)
    line, col, end, new = reduction_edit(text.split("\n"), d.span.line, d.span.column)
    lines = text.split("\n")
    lines[line - 1] = lines[line - 1][:col - 1] + new + lines[line - 1][end - 1:]
    fixed = "\n".join(lines)
    assert 'T.axis.remap("SR", [i, j])' in fixed
    assert [x for x in tirkit.check(fixed, "k.py") if x.severity == "error"] == []
    # the same kernel: compiled, both add each row of A to B
    pytest.importorskip("llvmlite")
    from tirkit.codegen import build
    rng = np.random.default_rng(5)
    a = rng.standard_normal((16, 16)).astype(np.float32)
    b0 = rng.standard_normal(16).astype(np.float32)
    got = []
    for src in (text, fixed):
        mod = tirkit.parse(src).module
        ((_, f),) = mod.prim_funcs()
        b = b0.copy()
        build(f, mod)(a.copy(), b)
        got.append(b)
    np.testing.assert_allclose(got[0], b0 + a.sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(got[0], got[1])


INIT_BY_REDUCTION = """
@T.prim_func
def f(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vj]
"""


def test_a_reduction_iterator_that_indexes_the_init_is_an_error():
    d = diag(INIT_BY_REDUCTION)
    assert (d.severity, d.span.line, d.span.column, d.span.end_column) == ("error", 9, 17, 19)
    assert d.message.startswith(
        "block 'C': reduction iterator `vj` indexes `C[vi, vj]`, which T.init() initializes: "
        "the init runs only where every reduction iterator is at its first value, so the "
        "elements of the other 15 values of `vj` are never initialized")
    ((span, note),) = d.related
    assert (span.line, note) == (11, "T.init() writes `C[vi, vj]` here")
    # an init that does not move with the reduction iterator is the usual reduction
    assert found(INIT_BY_REDUCTION.replace("C[vi, vj]", "C[vi, 0]")) == []


def test_the_init_indexed_by_a_reduction_iterator_runs_once_per_row():
    # what the error says, run: only C[vi, 0] is set to 0 first; C[vi, j > 0] keeps what
    # it held and adds A to it
    pytest.importorskip("llvmlite")
    from tirkit.codegen import build
    mod = tirkit.parse(HEAD + textwrap.dedent(INIT_BY_REDUCTION)).module
    ((_, f),) = mod.prim_funcs()
    rng = np.random.default_rng(7)
    a = rng.standard_normal((16, 16)).astype(np.float32)
    c0 = rng.standard_normal((16, 16)).astype(np.float32)
    c = c0.copy()
    build(f, mod)(a, c)
    np.testing.assert_allclose(c[:, 0], a[:, 0], rtol=1e-6)
    np.testing.assert_allclose(c[:, 1:], c0[:, 1:] + a[:, 1:], rtol=1e-6)
