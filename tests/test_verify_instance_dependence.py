"""signature/iter-type on the instances of spatial iterators that depend on each other: one
instance touches an element another writes (`A[vi + 1] = A[vi]`), found with a witness; the
error for a read, the warning for two writes, the quick fix that declares the iterator a
scan, and the legal neighbours left alone."""
import textwrap

import numpy as np
import pytest

import tirkit
from test_verify_iter_type import HEAD, ROWSUM, diag, found

CODE = "signature/iter-type"

SHIFT = """
@T.prim_func
def shift(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(15):
        with T.block("step"):
            vi = T.axis.spatial(15, i)
            A[vi + 1] = A[vi] + B[vi]
"""

PAIRS = """
@T.prim_func
def pairs(A: T.Buffer((16,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(16):
        with T.block("half"):
            vi = T.axis.spatial(16, i)
            B[vi // 2] = A[vi]
"""


def test_an_instance_that_reads_what_another_writes_is_an_error_on_the_iterator():
    d = diag(SHIFT)
    assert (d.severity, d.span.line, d.span.column, d.span.end_column) == ("error", 9, 13, 39)
    assert d.message == (
        "block 'step': the instances of spatial iterator `vi` depend on each other: "
        "`vi` = 1 reads `A[1]`, which `vi` = 0 writes; a spatial iterator declares its "
        "instances independent (any order, or all at once), and TVM's schedule primitives "
        "refuse the block (it lacks compact dataflow); declare `vi` with T.axis.scan if "
        "the order matters")
    assert [(s.line, m) for s, m in d.related] == [
        (10, "`vi` = 0 writes `A[1]` here"), (10, "`vi` = 1 reads `A[1]` here")]


def test_reading_ahead_is_a_dependence_too():
    d = diag(SHIFT.replace("A[vi + 1] = A[vi] + B[vi]", "A[vi] = A[vi + 1] + B[vi]"))
    assert d.severity == "error"
    assert "`vi` = 0 reads `A[1]`, which `vi` = 1 writes" in d.message


def test_two_instances_that_write_one_element_are_a_warning():
    d = diag(PAIRS)
    assert (d.severity, d.span.line, d.span.column) == ("warning", 9, 13)
    assert d.message == (
        "block 'half': instances `vi` = 0 and `vi` = 1 of spatial iterator `vi` both write "
        "`B[0]`: the last one wins, and a schedule that runs `vi` in parallel makes them "
        "overwrite each other's value; declare `vi` with T.axis.scan if the order matters")


# instances that differ in both iterators meet: (0, 0) writes A[1, 1], (1, 1) reads it
DIAG = """
@T.prim_func
def diag(A: T.Buffer((9, 9), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("d"):
            vi, vj = T.axis.remap("SS", [i, j])
            A[vi + 1, vj + 1] = A[vi, vj] * T.float32(2)
"""


def test_a_witness_that_differs_in_two_iterators_names_both():
    body = DIAG
    d = diag(body)
    assert (d.severity, d.span.line, d.span.column) == ("error", 9, 13)
    assert "(`vi`, `vj`) = (1, 1) reads `A[1, 1]`, which (`vi`, `vj`) = (0, 0) writes" \
        in d.message


def test_instances_beyond_the_enumerated_part_are_still_judged_by_a_part_of_them():
    # 1024 x 1024 instances: a prefix of each loop is read, and the witness lies in it
    body = """
    @T.prim_func
    def big(A: T.Buffer((1025, 1024), "float32")):
        for i, j in T.grid(1024, 1024):
            with T.block("b"):
                vi, vj = T.axis.remap("SS", [i, j])
                A[vi + 1, vj] = A[vi, vj] * T.float32(2)
    """
    assert [f[:3] for f in found(body)] == [("error", 9, 13)]


def test_an_accumulation_is_reported_once_as_before():
    assert "does not index the element it updates" in diag(ROWSUM).message


def test_an_accumulation_the_store_indexes_through_a_let_is_found_by_its_instances():
    # `t` is 0 for every `vj` of 0..15: the 16 instances of `vj` update one element, which
    # the index alone (it names `vj`) does not tell
    body = """
    @T.prim_func
    def rowsum(A: T.Buffer((16, 16), "float32"), B: T.Buffer((17,), "float32")):
        for i, j in T.grid(16, 16):
            with T.block("sum"):
                vi, vj = T.axis.remap("SS", [i, j])
                t = vj // 16
                B[vi + t] = B[vi + t] + A[vi, vj]
    """
    d = diag(body)
    assert (d.severity, d.span.line, d.span.column) == ("error", 9, 17)
    assert "`vj` = 1 reads `B[0]`, which `vj` = 0 writes" in d.message
    assert found(body.replace("vj // 16", "vj // 16 * 16")) == [("error", 9, 17, 19)]


GEMM = """
@T.prim_func
def gemm(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
         C: T.Buffer((8, 8), "float32")):
    for i, j, k in T.grid(8, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


@pytest.mark.parametrize("body", [
    GEMM,
    # declared ordered: a scan iterator's instances run in order
    SHIFT.replace("T.axis.spatial", "T.axis.scan"),
    # a guard that keeps the instances apart: even ones write A[odd], read A[even]
    SHIFT.replace("            A[vi + 1] = A[vi] + B[vi]",
                  "            if vi % 2 == 0:\n                A[vi + 1] = A[vi] + B[vi]"),
    # every instance stores the one value: whatever the order, the element holds it
    PAIRS.replace("B[vi // 2] = A[vi]", "B[vi // 2] = T.float32(1)"),
    # the block's own buffer: each instance has its own
    SHIFT.replace('            A[vi + 1] = A[vi] + B[vi]',
                  '            t = T.alloc_buffer((2,), "float32")\n'
                  '            t[1] = B[vi]\n            t[0] = t[1]\n'
                  '            A[vi] = t[0]'),
    # an element read and written by the same instance only
    SHIFT.replace("A[vi + 1] = A[vi] + B[vi]", "A[vi] = A[vi] + B[vi]"),
])
def test_independent_instances_are_left_alone(body):
    assert found(body) == []


def test_a_loop_that_runs_no_instance():
    # `range(4, 2)` runs nothing: no instance, no report, and the rule does not fail
    body = SHIFT.replace("range(15)", "range(4, 2)")
    assert [(d.code, d.severity) for d in tirkit.check(HEAD + textwrap.dedent(body), "k.py")
            if d.code in (CODE, "internal")] == []


def test_each_thread_block_has_its_own_shared_memory():
    # instances that differ only in blockIdx.x write one element of shared memory, each
    # thread block its own copy; those that differ in threadIdx.x share it
    body = """
    @T.prim_func
    def tiles(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
        S = T.alloc_buffer((32,), "float32", scope="shared")
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("load"):
                    v = T.axis.spatial(256, bx * 32 + tx)
                    S[v % 32] = A[v]
                with T.block("store"):
                    v = T.axis.spatial(256, bx * 32 + tx)
                    B[v] = S[v % 32]
    """
    assert found(body) == []
    assert found(body.replace("S[v % 32] = A[v]", "S[v % 16] = A[v]")) == [
        ("warning", 11, 17, 54)]


def _scan_fix(text, d):
    from tirkit.verify.fixes import text_fixes
    result = tirkit.parse(text, "k.py")
    return text_fixes(result, CODE, d.severity, d.span.line, d.span.column)


def _applied(text, fix):
    ((line, col, end_line, end, new),) = fix.edits
    lines = text.split("\n")
    lines[line - 1:end_line] = (lines[line - 1][:col - 1] + new +
                                lines[end_line - 1][end - 1:]).split("\n")
    return "\n".join(lines)


def _run_both(text, fixed, *shapes, seed=11):
    """Each kernel run on the same random inputs: [its arrays after the run]."""
    pytest.importorskip("llvmlite")
    from tirkit.codegen import build
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    got = []
    for src in (text, fixed):
        mod = tirkit.parse(src).module
        ((_, f),) = mod.prim_funcs()
        arrays = [a.copy() for a in inputs]
        build(f, mod)(*arrays)
        got.append(arrays)
    return inputs, got


def test_the_quick_fix_declares_a_scan_and_the_kernel_computes_the_same():
    text = HEAD + textwrap.dedent(SHIFT)
    (fix,) = _scan_fix(text, diag(SHIFT))
    assert fix.title == "Declare `vi` a scan iterator"
    fixed = _applied(text, fix)
    assert "vi = T.axis.scan(15, i)" in fixed
    assert [d for d in tirkit.check(fixed, "k.py") if d.severity == "error"] == []
    # both run the instances in order: A becomes the running sum of B, from A[0]
    (a0, b), ((a, _), (a_fixed, _)) = _run_both(text, fixed, 16, 16)
    want = a0[0] + np.concatenate([[0], np.cumsum(b[:15], dtype=np.float64)])
    np.testing.assert_allclose(a, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(a, a_fixed)


def test_the_warning_gets_the_same_fix():
    text = HEAD + textwrap.dedent(PAIRS)
    (fix,) = _scan_fix(text, diag(PAIRS))
    assert "vi = T.axis.scan(16, i)" in _applied(text, fix)


def test_an_iterator_of_remap_is_declared_apart_and_the_kernel_computes_the_same():
    # T.axis.remap has no letter for a scan: the statement is split, the iterator declared
    # with T.axis.scan over its loop's range, the others as they were
    text = HEAD + textwrap.dedent(DIAG)
    (fix,) = _scan_fix(text, diag(DIAG))
    assert fix.title == "Declare `vi` a scan iterator"
    ((line, col, end_line, end, new),) = fix.edits
    assert (line, col, end_line, end) == (9, 13, 9, 48)
    assert new == "vi = T.axis.scan(8, i)\n            vj = T.axis.spatial(8, j)"
    fixed = _applied(text, fix)
    assert tirkit.check(fixed, "k.py") == []
    (a0,), ((a,), (a_fixed,)) = _run_both(text, fixed, (9, 9))
    want = a0.astype(np.float64)
    for i in range(8):
        for j in range(8):
            want[i + 1, j + 1] = want[i, j] * 2
    np.testing.assert_allclose(a, want, rtol=1e-6)
    np.testing.assert_array_equal(a, a_fixed)


FOUR = """
@T.prim_func
def four(A: T.Buffer((2, 3, 16, 4), "float32"), B: T.Buffer((2, 3, 16, 4), "float32")):
    for b, c, i, j in T.grid(2, 3, 15, 4):
        with T.block("step"):
            vb, vc, vi, vj = T.axis.remap(
                "SSSS", [b, c, i, j])  # one row after another
            A[vb, vc, vi + 1, vj] = A[vb, vc, vi, vj] + B[vb, vc, vi, vj]
"""


def test_the_iterators_before_and_after_stay_in_remaps_or_alone():
    text = HEAD + textwrap.dedent(FOUR)
    d = diag(FOUR)
    assert (d.span.line, d.span.column) == (9, 21)
    (fix,) = _scan_fix(text, d)
    fixed = _applied(text, fix)
    assert "\n".join(fixed.split("\n")[8:12]) == (
        '            vb, vc = T.axis.remap("SS", [b, c])\n'
        "            vi = T.axis.scan(15, i)\n"
        "            vj = T.axis.spatial(4, j)  # one row after another\n"
        "            A[vb, vc, vi + 1, vj] = A[vb, vc, vi, vj] + B[vb, vc, vi, vj]")
    assert tirkit.check(fixed, "k.py") == []
    (a0, b), ((a, _), (a_fixed, _)) = _run_both(text, fixed, (2, 3, 16, 4), (2, 3, 16, 4))
    want = a0[:, :, :1] + np.concatenate(
        [np.zeros((2, 3, 1, 4)), np.cumsum(b[:, :, :15], axis=2, dtype=np.float64)], axis=2)
    np.testing.assert_allclose(a, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(a, a_fixed)


@pytest.mark.parametrize("loops, remap, decl", [
    # a loop from 1: the scan is declared over [1, 15)
    ("for i, j in T.grid(15, 4)", '"SS", [i, j]', "vi = T.axis.scan(15, i)"),
    ("for i in T.serial(1, 15):\n        for j in range(4)", '"SS", [i, j]',
     "vi = T.axis.scan((1, 15), i)"),
])
def test_the_scan_keeps_its_loops_range(loops, remap, decl):
    body = f"""
@T.prim_func
def k(A: T.Buffer((16, 4), "float32")):
    {loops}:
            with T.block("step"):
                vi, vj = T.axis.remap({remap})
                A[vi + 1, vj] = A[vi, vj] * T.float32(0.5)
"""
    text = HEAD + textwrap.dedent(body)
    (fix,) = _scan_fix(text, diag(body))
    fixed = _applied(text, fix)
    assert decl in fixed
    assert tirkit.check(fixed, "k.py") == []


def test_a_remap_over_a_tuple_of_loops_gets_no_fix():
    body = DIAG.replace("for i, j in T.grid(8, 8)", "for ij in T.grid(8, 8)").replace(
        "[i, j]", "ij")
    assert diag(body).severity == "error"
    assert _scan_fix(HEAD + textwrap.dedent(body), diag(body)) == []


@pytest.mark.oracle
def test_tvm_refuses_the_dependent_block_late_and_parallelises_the_overwrite():
    # what each report stands for in TVM 0.27: the block whose instances read each other's
    # elements is refused when a schedule primitive meets it; the one whose instances
    # overwrite one element passes for a complete block and runs in parallel; declared a
    # scan, both are refused
    pytest.importorskip("tvm")
    import tvm
    from tvm import s_tir
    from tvm.script import tirx

    def parallel(body, block):
        text = (HEAD + textwrap.dedent(body)).replace("tir as T", "tirx as T")
        text = text.replace("T.block(", "T.sblock(").replace(
            "@T.prim_func", "@T.prim_func(s_tir=True)")
        func = tvm.script.from_source(text.replace("from tvm.script import tirx as T\n", ""),
                                      extra_vars={"T": tirx})
        sch = s_tir.Schedule(func)
        (i,) = sch.get_loops(sch.get_sblock(block))
        sch.parallel(i)
        return sch.mod["main"].script()
    with pytest.raises(Exception, match="compact dataflow"):
        parallel(SHIFT, "step")
    assert "T.parallel(16)" in parallel(PAIRS, "half")
    with pytest.raises(Exception, match="compact dataflow"):
        parallel(PAIRS.replace("T.axis.spatial", "T.axis.scan"), "half")


def test_an_index_past_the_end_of_a_dimension_meets_no_element_of_the_next():
    # `2 * vj + 1` reaches 9 on a dimension of 8: row-major, A[0, 9] would be A[1, 1],
    # which instance (1, 0) writes; an index past the end is bounds/out-of-bounds's report,
    # not a dependence
    body = """
    @T.prim_func
    def edge(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
        for i, j in T.grid(8, 8):
            with T.block("e"):
                vi, vj = T.axis.remap("SS", [i, j])
                A[vi, 2 * vj + 1] = B[vi, vj]
    """
    codes = [d.code for d in tirkit.check(HEAD + textwrap.dedent(body), "k.py")]
    assert "bounds/out-of-bounds" in codes
    assert found(body) == []
    assert found(body.replace("2 * vj + 1", "vj // 2")) == [("warning", 9, 17, 19)]
