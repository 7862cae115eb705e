"""Each rule on small kernels: the code, the line, the related locations, the severity,
and the legal neighbours it must leave alone."""
import textwrap

import pytest

import tirkit

HEAD = "from tvm.script import tir as T\n\n\n"


def check(body, target=None):
    text = HEAD + textwrap.dedent(body)
    return tirkit.check(text, "k.py", target=target)


def codes(diags, severity="error"):
    return sorted((d.span.line, d.code) for d in diags if d.severity == severity)


def line_of(body, needle):
    for n, line in enumerate((HEAD + textwrap.dedent(body)).splitlines(), 1):
        if needle in line:
            return n
    raise AssertionError(needle)


# ---- bounds ------------------------------------------------------------------------------
PAD = """
@T.prim_func
def pad(X: T.Buffer((8,), "float32"), Y: T.Buffer((10,), "float32")):
    for i in range(10):
        with T.block("pad"):
            vi = T.axis.spatial(10, i)
            Y[vi] = T.if_then_else(1 <= vi and vi < 9, X[vi - 1], T.float32(0))
"""


def test_guarded_access_is_in_bounds():
    assert codes(check(PAD)) == []


def test_unguarded_shift_is_out_of_bounds():
    body = PAD.replace("T.if_then_else(1 <= vi and vi < 9, X[vi - 1], T.float32(0))",
                       "X[vi - 1]")
    d = check(body)
    assert codes(d) == [(line_of(body, "X[vi - 1]"), "bounds/out-of-bounds")]
    assert "ranges over [-1, 8]" in d[0].message


SWIZZLE = """
@T.prim_func
def k(A: T.Buffer((32, 64), "float16"), B: T.Buffer((32, 64), "float16")):
    S = T.alloc_buffer((32, 64), "float16", scope="shared")
    for ty in T.thread_binding(4, thread="threadIdx.y"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            for j in range(8):
                S[ty * 8 + j, T.bitwise_xor(tx, j) * 2] = A[ty * 8 + j, tx * 2]
                B[ty * 8 + j, tx * 2] = S[ty * 8 + j, T.bitwise_xor(tx, j) * 2]
"""


def test_an_index_with_a_remainder_or_a_swizzle_is_read_at_every_loop_value():
    """`tx ^ j` for tx < 32, j < 8 stays below 32, so column 2 (tx ^ j) below 64; with
    `tx ^ (j * 8)` it reaches 31 ^ 32 = 63, column 126. The interval arithmetic cannot bound
    either exactly; the loops' 1,024 points can (arith/enumerate.py)."""
    assert codes(check(SWIZZLE)) == []
    bad = SWIZZLE.replace("T.bitwise_xor(tx, j)", "T.bitwise_xor(tx, j * 8)")
    d = check(bad)
    assert codes(d) == [(line_of(bad, "S[ty * 8 + j, T.bitwise_xor(tx, j * 8) * 2] ="),
                         "bounds/out-of-bounds"),
                        (line_of(bad, "= S[ty * 8 + j,"), "bounds/out-of-bounds")]
    assert "ranges over [0, 126], but the dimension has extent 64" in d[0].message
    rem = SWIZZLE.replace("T.bitwise_xor(tx, j) * 2", "(tx * 3 + j) % 40 * 2")
    assert [m.message for m in check(rem)][0].endswith(
        "ranges over [0, 78], but the dimension has extent 64")
    # j < 4: tx ^ (j * 8) stays below 32; the rule reads no guard here and stays quiet
    guarded = bad.replace("            for j in range(8):\n",
                          "            for j in range(8):\n                if j < 4:\n    ")
    guarded = guarded.replace("\n                B[ty", "\n                    B[ty")
    assert codes(check(guarded)) == []


def test_a_guard_excluding_an_inner_point_does_not_hide_an_out_of_bounds_store():
    body = """
    @T.prim_func
    def k(A: T.Buffer((3,), "int32")):
        for i in range(10):
            if i != 5:
                A[i] = 7
    """
    d = check(body)
    assert codes(d) == [(line_of(body, "A[i] = 7"), "bounds/out-of-bounds")]
    assert "ranges over [0, 9]" in d[0].message
    # excluding an extreme value may be what keeps the store in bounds: no report
    fits = body.replace("range(10)", "range(4)").replace("i != 5", "i != 3")
    assert codes(check(fits)) == []


def test_an_else_branch_is_read_under_the_negated_condition():
    body = """
    @T.prim_func
    def k(A: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(7, 4):
            if i < 3:
                A[i, j] = T.float32(0)
            else:
                A[i, j] = T.float32(1)
    """
    d = check(body)
    assert codes(d) == [(line_of(body, "A[i, j] = T.float32(1)"), "bounds/out-of-bounds")]
    assert "ranges over [3, 6]" in d[0].message
    assert codes(check(body.replace("T.grid(7, 4)", "T.grid(4, 4)"))) == []


def test_predicate_keeps_split_in_bounds():
    body = """
    @T.prim_func
    def f(A: T.Buffer((100,), "float32"), B: T.Buffer((100,), "float32")):
        for i0, i1 in T.grid(4, 32):
            with T.block("B"):
                T.where(i0 * 32 + i1 < 100)
                vi = T.axis.spatial(100, i0 * 32 + i1)
                B[vi] = A[vi]
    """
    assert codes(check(body)) == []
    bad = body.replace("                T.where(i0 * 32 + i1 < 100)\n", "")
    assert codes(check(bad)) == [(line_of(bad, "vi = T.axis"), "loop-nest/domain-mismatch")]


def test_predicate_on_a_fused_index_keeps_its_digits_in_bounds():
    # 3 x 8 iterations guarded to the first 18 positions, read as (row, col) of a 6 x 3
    # buffer: in bounds only because of the predicate on the joined index
    body = """
    @T.prim_func
    def f(A: T.Buffer((6, 3), "float32"), C: T.Buffer((6, 3), "float32")):
        for i, j in T.grid(3, 8):
            with T.block("C"):
                vi = T.axis.spatial(3, i)
                vj = T.axis.spatial(8, j)
                T.where(i * 6 + j < LIMIT)
                C[(vj + vi * 6) // 3, (vj + vi * 6) % 3] = A[(vj + vi * 6) // 3, (vj + vi * 6) % 3]
    """
    assert codes(check(body.replace("LIMIT", "18"))) == []
    bad = body.replace("LIMIT", "19")          # position 18 is row 6
    assert codes(check(bad)) == [(line_of(bad, "C[(vj"), "bounds/out-of-bounds")] * 2


def test_symbolic_out_of_bounds():
    body = """
    @T.prim_func
    def f(a: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        for i in range(n):
            with T.block("A"):
                vi = T.axis.spatial(n, i)
                A[vi + 1] = T.float32(0)
    """
    assert codes(check(body)) == [(line_of(body, "A[vi + 1]"), "bounds/out-of-bounds")]
    assert codes(check(body.replace("A[vi + 1]", "A[vi]"))) == []


NESTED_VIEW = """
@T.prim_func
def f(A: T.Buffer((4, 16), "int8"), C: T.Buffer((4, 4), "int32")):
    for y in range(4):
        with T.block("row"):
            vy = T.axis.spatial(4, y)
            for x in range(4):
                with T.block("C"):
                    vx = T.axis.spatial(4, x)
                    V = T.match_buffer(A[vy, vy + vx * STEP:vy + vx * STEP + 4], [4], dtype="int8")
                    C[vy, vx] = T.Cast("int32", V[0]) + T.Cast("int32", A[vy, vy + vx * STEP + 3])
"""


def test_match_buffer_region_in_the_outer_blocks_iterators_is_bounded():
    # the view's region and the load depend on the outer block's iterator and the inner
    # one's: both bounded by their declared domains
    assert codes(check(NESTED_VIEW.replace("STEP", "3"))) == []
    bad = NESTED_VIEW.replace("STEP", "4")       # the last view covers columns 15..18
    d = check(bad)
    assert codes(d) == [(line_of(bad, "V = T.match_buffer"), "bounds/out-of-bounds"),
                        (line_of(bad, "C[vy, vx] ="), "bounds/out-of-bounds")]
    view = [x for x in d if "match_buffer" in x.message][0]
    assert "`T.match_buffer` views `A` out of bounds" in view.message
    assert "ranges over [0, 18]" in view.message


# ---- signatures -----------------------------------------------------------------------------
SIG = """
@T.prim_func
def f(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    for i, j in T.grid(64, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, 0:64])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, 63 - vj]
"""


def test_declared_region_covering_the_body_is_fine():
    assert codes(check(SIG)) == []


def test_reads_mismatch_on_the_reads_line_with_the_access_related():
    body = SIG.replace("A[vi, 0:64]", "A[vi, 0:32]")
    (d,) = [x for x in check(body) if x.severity == "error"]
    assert (d.span.line, d.code) == (line_of(body, "T.reads"), "signature/reads-mismatch")
    assert d.related and d.related[0][0].line == line_of(body, "B[vi, vj] = A")


def test_writes_mismatch():
    body = SIG.replace("T.writes(B[vi, vj])", "T.writes(B[vj, vi])")
    assert codes(check(body)) == [(line_of(body, "T.writes"), "signature/writes-mismatch")]


def test_inner_loops_are_relaxed():
    body = """
    @T.prim_func
    def f(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(64):
            with T.block("B"):
                vi = T.axis.spatial(64, i)
                T.reads(A[vi, 0:32])
                T.writes(B[vi])
                for k in range(64):
                    B[vi] = A[vi, k]
    """
    assert codes(check(body)) == [(line_of(body, "T.reads"), "signature/reads-mismatch")]
    assert codes(check(body.replace("0:32", "0:64"))) == []


# ---- loop nests ------------------------------------------------------------------------------
def test_reduction_on_threadidx_is_legal_but_blockidx_is_not():
    body = """
    @T.prim_func
    def f(A: T.Buffer((128, 128), "float32"), S: T.Buffer((128,), "float32")):
        for i in T.thread_binding(128, thread="blockIdx.x"):
            for k in T.thread_binding(128, thread="threadIdx.x"):
                with T.block("S"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        S[vi] = T.float32(0)
                    S[vi] = S[vi] + A[vi, vk]
    """
    assert codes(check(body)) == []
    bad = body.replace('"blockIdx.x"', '"threadIdx.y"').replace('"threadIdx.x"',
                                                                  '"blockIdx.x"')
    d = [x for x in check(bad) if x.severity == "error"]
    assert codes(d) == [(line_of(bad, "T.axis.remap"), "loop-nest/reduction-on-parallel")]
    assert d[0].related[0][0].line == line_of(bad, "for k in")


def test_non_affine_binding_is_a_warning_with_its_reason():
    body = """
    @T.prim_func
    def f(A: T.Buffer((64,), "float32")):
        for i, j in T.grid(8, 8):
            with T.block("A"):
                vi = T.axis.spatial(64, i * j)
                A[vi] = T.float32(0)
    """
    d = check(body)
    assert codes(d) == []
    assert codes(d, "warning") == [(line_of(body, "vi = T.axis"), "loop-nest/non-affine")]
    assert "`i * j`" in [x for x in d if x.code == "loop-nest/non-affine"][0].message


def test_not_bijective_names_the_other_binding():
    body = """
    @T.prim_func
    def f(A: T.Buffer((64, 128), "float32")):
        for i in range(64):
            with T.block("A"):
                vi = T.axis.spatial(64, i)
                vj = T.axis.spatial(128, i * 2)
                A[vi, vj] = T.float32(0)
    """
    (d,) = [x for x in check(body) if x.severity == "error"]
    assert (d.span.line, d.code) == (line_of(body, "vj = T.axis"), "loop-nest/not-bijective")
    assert d.related[0][0].line == line_of(body, "vi = T.axis")


def test_partial_reduction_domain_is_a_warning():
    body = """
    @T.prim_func
    def f(A: T.Buffer((128,), "float32"), S: T.Buffer((1,), "float32")):
        for k in range(64):
            with T.block("S"):
                vk = T.axis.reduce(128, k)
                with T.init():
                    S[0] = T.float32(0)
                S[0] = S[0] + A[vk]
    """
    d = check(body)
    assert codes(d) == []
    assert codes(d, "warning") == [(line_of(body, "vk = T.axis"), "loop-nest/domain-mismatch")]


# ---- data flow -----------------------------------------------------------------------------
FLOW = """
@T.prim_func
def f(A: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
    B = T.alloc_buffer((128,), "float32")
    for i in range(128):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            B[vi] = A[vi]
    for i in range(128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            C[vi] = B[vi]
"""


def test_full_producer_covers_the_consumer():
    assert codes(check(FLOW)) == []


def test_never_written_buffer():
    body = FLOW.replace("            B[vi] = A[vi]\n", "            C[vi] = A[vi]\n")
    d = [x for x in check(body) if x.severity == "error"]
    assert codes(d) == [(line_of(body, "= B[vi]"), "dataflow/uncovered-read")]


def test_partial_producer_related_to_the_producer():
    body = FLOW.replace("for i in range(128):\n        with T.block(\"B\"):",
                        "for i in range(100):\n        with T.block(\"B\"):")
    (d,) = [x for x in check(body) if x.severity == "error"]
    assert (d.span.line, d.code) == (line_of(body, "= B[vi]"), "dataflow/uncovered-read")
    assert d.related[0][0].line == line_of(body, 'T.block("B")')


ACCUMULATE = """
@T.prim_func
def f(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
    acc = T.alloc_buffer((16,), "float32")
    for i, k in T.grid(16, 16):
        with T.block("acc"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                acc[vi] = T.float32(0)
            acc[vi] = acc[vi] + A[vi, vk]
    for i in range(16):
        with T.block("out"):
            vi = T.axis.spatial(16, i)
            B[vi] = acc[vi]
"""


def test_an_accumulator_without_init_or_producer_is_read_uninitialized():
    assert codes(check(ACCUMULATE)) == []
    body = without_init()
    (d,) = [x for x in check(body) if x.severity == "error"]
    assert (d.span.line, d.code) == (line_of(body, "acc[vi] = acc[vi]"),
                                     "dataflow/uncovered-read")
    assert d.message == ("block 'acc' reads `acc` before anything writes it: its first "
                         "instance reads uninitialized memory (it updates `acc` without a "
                         "T.init())")
    assert d.related[0][0].line == line_of(body, 'T.block("acc")')
    # a producer before it, or a guard on the read (the first instance sets it by hand),
    # and the block may well be right
    filled = body.replace('    for i, k in T.grid(16, 16):\n',
                          '    for i in range(16):\n        with T.block("zero"):\n'
                          '            vi = T.axis.spatial(16, i)\n'
                          '            acc[vi] = T.float32(0)\n'
                          '    for i, k in T.grid(16, 16):\n', 1)
    assert codes(check(filled)) == []
    guarded = body.replace("acc[vi] = acc[vi] + A[vi, vk]",
                           "acc[vi] = T.if_then_else(vk == 0, T.float32(0), acc[vi]) + A[vi, vk]")
    assert "dataflow/uncovered-read" not in [c for _, c in codes(check(guarded))]


# ---- threads -----------------------------------------------------------------------------------
GPU = """
@T.prim_func
def f(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
    for bx in T.thread_binding(16, thread="blockIdx.x"):
        for ty in T.thread_binding(TY, thread="threadIdx.y"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B"):
                    vi = T.axis.spatial(4096, bx * 256 + ty * 32 + tx)
                    T.where(ty * 32 + tx < 256)
                    B[vi] = A[vi]
"""


def test_threads_per_block_limit_counts_all_dimensions():
    assert codes(check(GPU.replace("TY", "8"))) == []
    body = GPU.replace("TY", "64")
    d = [x for x in check(body) if x.severity == "error"]
    assert codes(d) == [(line_of(body, "for tx in"), "thread/launch-limit")]
    assert "2048 threads per block" in d[0].message
    assert d[0].related[0][0].line == line_of(body, "for ty in")


def test_a_launch_needs_a_thread_and_a_block_in_each_dimension():
    body = GPU.replace("TY", "0").replace("thread_binding(16,", "thread_binding(-2,")
    d = [x for x in check(body) if x.severity == "error"]
    assert [(x.span.line, x.code, x.message) for x in d] == [
        (line_of(body, "for bx in"), "thread/launch-limit",
         "blockIdx.x extent -2: a launch needs at least one block in each dimension"),
        (line_of(body, "for ty in"), "thread/launch-limit",
         "threadIdx.y extent 0: a launch needs at least one thread in each dimension")]


def test_a_virtual_thread_binding_needs_a_virtual_thread():
    body = GPU.replace('T.thread_binding(TY, thread="threadIdx.y")',
                       'T.thread_binding(-3, thread="vthread.y")')
    d = [x for x in check(body) if x.severity == "error"]
    assert [(x.span.line, x.code, x.message) for x in d] == [
        (line_of(body, "for ty in"), "thread/launch-limit",
         "vthread.y extent -3: a virtual thread binding needs at least one virtual thread")]


def test_shared_memory_after_compaction_and_target_pragma():
    body = """
    @T.prim_func
    def f(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32")):
        S = T.alloc_buffer((1024, 1024), "float32", scope="shared.dyn")
        for bx in T.thread_binding(1024 // ROWS, thread="blockIdx.x"):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                for r, c in T.grid(ROWS, 1024 // 128):
                    with T.block("load"):
                        vr = T.axis.spatial(1024, bx * ROWS + r)
                        vc = T.axis.spatial(1024, c * 128 + tx)
                        S[vr, vc] = A[vr, vc]
                for r, c in T.grid(ROWS, 1024 // 128):
                    with T.block("store"):
                        vr = T.axis.spatial(1024, bx * ROWS + r)
                        vc = T.axis.spatial(1024, c * 128 + tx)
                        B[vr, vc] = S[vr, vc]
    """
    # 32 rows x 4 KB = 128 KB: within sm80's 163 KB opt-in; 64 rows = 256 KB is not,
    # nor within sm90's 227 KB
    assert codes(check(body.replace("ROWS", "32"))) == []
    big = body.replace("ROWS", "64")
    assert codes(check(big)) == [(line_of(big, "S = T.alloc_buffer"),
                                  "thread/shared-memory-limit")]
    assert codes(check(body.replace("ROWS", "48"))) == [
        (line_of(big, "S = T.alloc_buffer"), "thread/shared-memory-limit")]
    pragma = "# tirkit: target=cuda-sm90\n"
    d = tirkit.check(pragma + HEAD + textwrap.dedent(body.replace("ROWS", "48")), "k.py")
    assert [x for x in d if x.severity == "error"] == []
    d = check(body.replace("ROWS", "48"), target="cuda-sm90")
    assert [x for x in d if x.severity == "error"] == []


SMEM_TILE = """
@T.prim_func
def f(A: T.Buffer((4096, 256), "float32"), B: T.Buffer((4096, 256), "float32")):
    S = T.alloc_buffer((4096, 256), "float32", scope="shared")
    for bx in T.thread_binding(256, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            for k0 in range(1):
                for r, c in T.grid(16, 2):
                    with T.block("load"):
                        vr = T.axis.spatial(4096, LOAD_ROW)
                        vc = T.axis.spatial(256, c * 128 + tx)
                        S[vr, vc] = A[vr, vc]
                for r, c in T.grid(16, 2):
                    with T.block("store"):
                        vr = T.axis.spatial(4096, STORE_ROW)
                        vc = T.axis.spatial(256, c * 128 + tx)
                        B[vr, vc] = S[vr, vc]
"""


def test_shared_memory_compaction_is_per_thread_block():
    # each thread block stages 16 x 256 floats = 16 KB of the 4 MB buffer; the one-trip loop
    # k0 (a constant) and two spellings of the same row offset must not widen the region to
    # the whole buffer
    same = SMEM_TILE.replace("LOAD_ROW", "bx * 16 + k0 * 16 + r").replace(
        "STORE_ROW", "bx * 16 + r")
    assert codes(check(same)) == []
    digit = SMEM_TILE.replace("LOAD_ROW", "bx % 16 // 2 * 32 + bx // 16 * 256 + r").replace(
        "STORE_ROW", "bx // 2 % 8 * 32 + bx // 16 * 256 + r")
    assert codes(check(digit)) == []
    # staging every row per block is 4 MB: beyond 48 KB
    whole = SMEM_TILE.replace("for r, c in T.grid(16, 2)", "for r, c in T.grid(4096, 2)") \
        .replace("LOAD_ROW", "r").replace("STORE_ROW", "r")
    (d,) = [x for x in check(whole) if x.severity == "error"]
    assert d.code == "thread/shared-memory-limit" and "4096x256" in d.message


def test_shared_memory_counts_regions_read_through_match_buffer():
    # S is written directly and read only through a matched 16 x 16 view: the compacted
    # buffer is the 16 x 16 tile per block (1 KB), not what the write alone would suggest
    body = """
    @T.prim_func
    def f(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32")):
        S = T.alloc_buffer((1024, 1024), "float32", scope="shared")
        for bx in T.thread_binding(4096, thread="blockIdx.x"):
            for tx in T.thread_binding(16, thread="threadIdx.x"):
                for i in range(16):
                    with T.block("load"):
                        vi = T.axis.spatial(1024, bx // 64 * 16 + i)
                        vj = T.axis.spatial(1024, bx % 64 * 16 + tx)
                        S[vi, vj] = A[vi, vj]
                with T.block("use"):
                    vi = T.axis.spatial(64, bx // 64)
                    vj = T.axis.spatial(64, bx % 64)
                    T.reads(S[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
                    T.writes(B[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
                    V = T.match_buffer(S[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16], (16, 16))
                    for i, j in T.grid(16, 16):
                        B[vi * 16 + i, vj * 16 + j] = V[i, j]
    """
    import tirkit.analysis.regions as R
    from tirkit.analysis.footprint import footprint
    from tirkit.verify._common import relax_thread
    r = tirkit.parse(HEAD + textwrap.dedent(body))
    f = r.module.prim_funcs()[0]
    f = f[1] if isinstance(f, tuple) else f
    fa = R.accesses(f)
    (S, _), = [(b, o) for b, o in fa.allocs if b.name == "S"]
    assert footprint(fa, S, relax_thread) == [16, 16]
    assert codes(check(body)) == []


def test_inconsistent_extent_related_to_the_first_binding():
    body = """
    @T.prim_func
    def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                with T.block("B0"):
                    vi = T.axis.spatial(64, tx)
                    B[vi] = A[vi]
            for tx in T.thread_binding(16, thread="threadIdx.x"):
                with T.block("B1"):
                    vi = T.axis.spatial(64, tx * 4)
                    B[vi] = A[vi]
    """
    (d,) = [x for x in check(body) if x.severity == "error"]
    assert d.code == "thread/inconsistent-extent"
    assert d.span.line == line_of(body, "thread_binding(16")
    assert d.related[0][0].line == line_of(body, "thread_binding(64")


def test_cooperative_coverage_per_thread_block():
    body = """
    @T.prim_func
    def f(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
        S = T.alloc_buffer((256,), "float32", scope="shared")
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(TX, thread="threadIdx.x"):
                with T.block("load"):
                    v = T.axis.spatial(256, bx * 64 + tx)
                    S[v] = A[v]
                for j in range(64):
                    with T.block("use"):
                        v = T.axis.spatial(256, bx * 64 + j)
                        w = T.axis.spatial(64, tx)
                        T.where(tx < 1)
                        B[v] = S[v]
    """
    assert codes(check(body.replace("TX", "64"))) == []
    bad = body.replace("TX", "32")
    d = [x for x in check(bad) if x.severity == "error"]
    assert codes(d) == [(line_of(bad, "= S[v]"), "thread/cooperative-coverage")]


def test_warp_intrinsic_needs_whole_warps():
    body = """
    @T.prim_func
    def f(A: T.Buffer((256,), "float16")):
        F = T.alloc_buffer((256,), "float16", scope="wmma.accumulator")
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for tx in T.thread_binding(TX, thread="threadIdx.x"):
                with T.block("fill"):
                    T.reads()
                    T.writes(F[0:256])
                    T.evaluate(T.tvm_fill_fragment(F.data, 16, 16, 16, 0, T.float32(0)))
    """
    assert codes(check(body.replace("TX", "32"))) == []
    bad = body.replace("TX", "16")
    assert codes(check(bad)) == [(line_of(bad, "tvm_fill_fragment"), "thread/execution-scope")]


def test_signature_conventions_of_tvm_outputs():
    # an update in place and a block-local decl_buffer need no declaration
    body = """
    @T.prim_func
    def f(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        for i in range(4):
            with T.block():
                T.reads(C[i * 4:i * 4 + 4, 0:16])
                T.writes(A[i * 4:i * 4 + 4, 0:16])
                tmp = T.decl_buffer((16,), "float32")
                for ii, j in T.grid(4, 16):
                    tmp[j] = C[i * 4 + ii, j]
                    A[i * 4 + ii, j] = A[i * 4 + ii, j] + tmp[j]
    """
    assert codes(check(body)) == []
    bad = body.replace("T.reads(C[i * 4:i * 4 + 4, 0:16])", "T.reads(C[i * 4:i * 4 + 2, 0:16])")
    assert codes(check(bad)) == [(line_of(bad, "T.reads"), "signature/reads-mismatch")]


def test_warp_intrinsic_outside_the_kernel_or_under_a_thread_guard():
    body = """
    @T.prim_func
    def f(A: T.Buffer((256,), "float16")):
        F = T.alloc_buffer((256,), "float16", scope="wmma.accumulator")
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                if tx < 16:
                    T.evaluate(T.tvm_fill_fragment(F.data, 16, 16, 16, 0, T.float32(0)))
        T.evaluate(T.tvm_fill_fragment(F.data, 16, 16, 16, 1, T.float32(0)))
    """
    d = [x for x in check(body) if x.code == "thread/execution-scope"]
    assert sorted((x.span.line, x.severity) for x in d) == [
        (line_of(body, "0, T.float32(0)))"), "error"),
        (line_of(body, "1, T.float32(0)))"), "error")]
    assert "diverges" in d[0].message and "outside the GPU kernel" in d[1].message


@pytest.mark.parametrize("call", [
    'T.ptx_legacy.ldmatrix(0, 4, ".b16", r.data, 0, S.data, tx * 8, dtype="float16")',
    'T.ptx_legacy.mma("m16n8k8", "row", "col", "float16", "float16", "float16", r.data, 0, '
    'r.data, 4, r.data, 6, False, dtype="float16")'])
def test_warp_intrinsics_of_the_current_spelling_under_a_thread_guard(call):
    """TVM's tirx spelling of PTX's warp instructions (`T.ptx_legacy.*`) is checked as the
    classic one is: under a guard on threadIdx the warp diverges."""
    body = f"""
    @T.prim_func
    def f(A: T.Buffer((256,), "float16")):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block():
                S = T.alloc_buffer((256,), "float16", scope="shared")
                r = T.alloc_buffer((8,), "float16", scope="local")
                S[tx] = A[tx]
                if tx < 16:
                    T.evaluate({call})
    """
    d = [x for x in check(body) if x.code == "thread/execution-scope"]
    assert [(x.span.line, x.severity) for x in d] == [(line_of(body, "T.evaluate"), "error")]
    assert "diverges" in d[0].message


def test_warp_intrinsic_in_an_intrinsic_body_is_a_warning():
    body = """
    @T.prim_func
    def impl(C: T.Buffer((16, 16), "float32", scope="wmma.accumulator")):
        T.evaluate(T.tvm_fill_fragment(C.data, 16, 16, 16, 0, T.float32(0)))
    """
    d = check(body)
    assert codes(d) == []
    assert codes(d, "warning") == [(line_of(body, "tvm_fill_fragment"),
                                    "thread/execution-scope")]


def test_symbolic_domain_mismatch_only_when_certain():
    body = """
    @T.prim_func
    def f(a: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        for i in range(n + 1):
            with T.block("A"):
                vi = T.axis.spatial(n, i)
                A[vi] = T.float32(0)
        for i0, i1 in T.grid((n + 31) // 32, 32):
            with T.block("B"):
                T.where(i0 * 32 + i1 < n)
                vi = T.axis.spatial(n, i0 * 32 + i1)
                A[vi] = T.float32(1)
        for i0, i1 in T.grid((n + 31) // 32, 32):
            with T.block("C"):
                vi = T.axis.spatial(n, i0 * 32 + i1)
                A[vi] = T.float32(2)
    """
    # block C leaves the domain only when n is not a multiple of 32: not certain, not reported
    assert codes(check(body)) == [(line_of(body, "vi = T.axis.spatial(n, i)"),
                                   "loop-nest/domain-mismatch")]


# ---- corpus-driven fixes ---------------------------------------------------------------------
ALIAS_FILL = """
@T.prim_func
def alias_fill(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    tmp = T.alloc_buffer((16,), "float32")
    for i in range(4):
        with T.block("fill"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi * 4:vi * 4 + 4])
            T.writes(tmp[vi * 4:vi * 4 + 4])
            part = T.match_buffer(tmp[vi * 4:vi * 4 + 4], (4,), "float32")
            for j in range(4):
                part[j] = A[vi * 4 + j] * T.float32(2)
    for i in range(16):
        with T.block("use"):
            vi = T.axis.spatial(16, i)
            B[vi] = tmp[vi]
"""


def test_writes_through_a_matched_buffer_count_as_writes():
    assert codes(check(ALIAS_FILL)) == []
    unfilled = ALIAS_FILL.replace("part[j] = A[vi * 4 + j] * T.float32(2)", "T.evaluate(0)")
    unfilled = unfilled.replace("part = T.match_buffer(tmp[vi * 4:vi * 4 + 4], (4,), \"float32\")",
                                "T.evaluate(1)")
    unfilled = unfilled.replace("T.writes(tmp[vi * 4:vi * 4 + 4])", "T.writes()")
    assert (line_of(unfilled, "B[vi] = tmp[vi]"), "dataflow/uncovered-read") in codes(check(unfilled))


WARP_FILL = """
@T.prim_func
def warp_fill(C: T.Buffer((16, 16), "float32")):
    for ty in T.thread_binding(4, thread="threadIdx.y"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            with T.block("frag"):
                T.reads()
                T.writes()
                ATTR
                acc = T.alloc_buffer((16, 16), "float32", scope="wmma.accumulator")
                T.evaluate(T.tvm_fill_fragment(acc.data, 16, 16, 16, 0, T.float32(0)))
"""


def test_warp_execution_blocks_skip_the_whole_warp_count():
    plain = WARP_FILL.replace("ATTR", "T.evaluate(0)")
    line = line_of(plain, "tvm_fill_fragment")
    assert (line, "thread/execution-scope") in codes(check(plain))
    warp = WARP_FILL.replace("ATTR", 'T.block_attr({"warp_execution": True})')
    assert [c for c in codes(check(warp)) if c[1] == "thread/execution-scope"] == []


ONE_TRIP = """
@T.prim_func
def one_trip(A: T.Buffer((1, 512), "float32"), D: T.Buffer((1,), "float32")):
    acc = T.alloc_buffer((1,), "float32", scope="shared")
    for o in T.serial(1):
        for k0 in range(2):
            for k1 in T.thread_binding(256, thread="threadIdx.x"):
                with T.block("sum"):
                    b = T.axis.spatial(1, 0)
                    k = T.axis.reduce(512, k0 * 256 + k1)
                    T.reads(A[b, k])
                    T.writes(acc[b])
                    with T.init():
                        acc[b] = T.float32(0)
                    acc[b] = acc[b] + A[b, k]
        for t in T.thread_binding(256, thread="threadIdx.x"):
            with T.block("out"):
                T.where(o * 256 + t < 1)
                b = T.axis.spatial(1, o * 256 + t)
                T.reads(acc[b])
                T.writes(D[b])
                D[b] = acc[b]
"""


def test_single_iteration_loop_is_a_constant_in_coverage():
    assert codes(check(ONE_TRIP)) == []
    wide = ONE_TRIP.replace("T.where(o * 256 + t < 1)", "T.where(o * 256 + t < 2)")
    wide = wide.replace("D: T.Buffer((1,), \"float32\")", "D: T.Buffer((2,), \"float32\")")
    wide = wide.replace("T.axis.spatial(1, o * 256 + t)", "T.axis.spatial(2, o * 256 + t)")
    # `acc` has one element: the read of acc[1] is out of bounds, reported once as such
    # (not again as a coverage gap)
    assert codes(check(wide)) == [(line_of(wide, "D[b] = acc[b]"), "bounds/out-of-bounds")]


POINTER_VIEW = """
@T.prim_func
def pointer_view(data: T.handle("float32")):
    view = T.decl_buffer((1,), "float32", data=data)
    for i in range(8):
        view[i] = view[i] * T.float32(2)
"""


def test_view_over_a_bare_pointer_has_no_known_size():
    assert codes(check(POINTER_VIEW)) == []
    owned = POINTER_VIEW.replace('data: T.handle("float32")', 'B: T.Buffer((1,), "float32")')
    owned = owned.replace("data=data", "data=B.data")
    line = line_of(owned, "view[i] = view[i]")
    assert (line, "bounds/out-of-bounds") in codes(check(owned))


POOL_VIEW = """
@T.prim_func
def pool_view(A: T.Buffer((512,), "float16"), B: T.Buffer((512,), "float16")):
    pool = T.alloc_buffer((1024,), "uint8")
    half = T.decl_buffer((256,), "float16", data=pool.data)
    for i in range(256):
        half[i + OFFSET] = A[i]
    for i in range(256):
        B[i] = half[i + OFFSET]
"""


def test_view_over_a_pool_is_bounded_by_the_pool():
    assert codes(check(POOL_VIEW.replace("OFFSET", "256"))) == []
    bad = POOL_VIEW.replace("OFFSET", "300")
    got = check(bad)
    line = line_of(bad, "half[i + 300] = A[i]")
    assert (line, "bounds/out-of-bounds") in codes(got)
    msg = next(d.message for d in got if d.span.line == line and d.code == "bounds/out-of-bounds")
    assert "extent 512 (elements of its storage)" in msg


PTX_SCALAR = '''from tvm.script import tirx as T


@T.prim_func
def ptx_scalar(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32"),
               C: T.Buffer((32,), "float32")):
    tx = T.env_thread("threadIdx.x")
    T.launch_thread(tx, 32)
    with T.sblock():
        T.reads(A[0:32], B[0:32])
        T.writes(C[0:32])
        T.ptx.add.rn.f32(C[tx], A[tx], B[tx])
'''


def test_ptx_operands_are_addresses_not_reads():
    diags = tirkit.check(PTX_SCALAR, "p.py")
    assert [d for d in diags if d.severity == "error"] == []


def without_init():
    return ACCUMULATE.replace("            with T.init():\n                acc[vi] = T.float32(0)\n",
                              "")


def _apply_fix(text, fix):
    lines = text.split("\n")
    for ln, col, end_ln, end_col, new in sorted(fix.edits, reverse=True):
        assert ln == end_ln
        lines[ln - 1] = lines[ln - 1][:col - 1] + new + lines[ln - 1][end_col - 1:]
    return "\n".join(lines)


def test_the_forgotten_init_has_a_fix_that_makes_the_sum():
    import numpy as np
    import pytest
    from tirkit.verify.fixes import text_fixes
    text = HEAD + textwrap.dedent(without_init())
    (d,) = [x for x in tirkit.check(text, "k.py") if x.severity == "error"]
    (fix,) = text_fixes(tirkit.parse(text), d.code, d.severity, d.span.line, d.span.column)
    assert fix.title == "Initialize `acc[vi]` to 0 in a T.init()"
    fixed = _apply_fix(text, fix)
    assert fixed == HEAD + textwrap.dedent(ACCUMULATE)
    assert [x for x in tirkit.check(fixed, "k.py") if x.severity == "error"] == []
    # run: B is the row sums of A
    pytest.importorskip("llvmlite")
    from tirkit.codegen import build
    mod = tirkit.parse(fixed).module
    ((_, f),) = mod.prim_funcs()
    a = np.random.default_rng(2).standard_normal((16, 16)).astype(np.float32)
    b = np.random.default_rng(3).standard_normal(16).astype(np.float32)
    build(f, mod)(a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


def test_the_init_fix_takes_the_identity_of_the_update():
    from tirkit.verify.fixes import text_fixes
    base = without_init()
    for update, title, line in (
            ("acc[vi] * A[vi, vk]", "Initialize `acc[vi]` to 1 in a T.init()",
             "acc[vi] = T.float32(1)"),
            ("T.max(acc[vi], A[vi, vk])", "Initialize `acc[vi]` to its smallest value in a "
             "T.init()", 'acc[vi] = T.min_value("float32")')):
        text = HEAD + textwrap.dedent(base.replace("acc[vi] + A[vi, vk]", update))
        (d,) = [x for x in tirkit.check(text, "k.py") if x.severity == "error"]
        (fix,) = text_fixes(tirkit.parse(text), d.code, d.severity, d.span.line,
                            d.span.column)
        assert fix.title == title and line in fix.edits[0][4]
        fixed = _apply_fix(text, fix)
        assert [x for x in tirkit.check(fixed, "k.py") if x.severity == "error"] == []
    # the line also reads `tmp`, which nothing writes: that diagnostic gets no init of acc
    other = base.replace('    acc = T.alloc_buffer((16,), "float32")\n',
                         '    acc = T.alloc_buffer((16,), "float32")\n'
                         '    tmp = T.alloc_buffer((16,), "float32")\n').replace(
        "acc[vi] = acc[vi] + A[vi, vk]", "acc[vi] = acc[vi] + tmp[vi]")
    text = HEAD + textwrap.dedent(other)
    parsed = tirkit.parse(text)
    ds = sorted((x for x in tirkit.check(text, "k.py") if x.code == "dataflow/uncovered-read"),
                key=lambda x: x.span.column)
    assert [(x.span.line, x.message.split(":")[0]) for x in ds] == [
        (line_of(other, "acc[vi] = acc[vi]"), "block 'acc' reads `acc` before anything writes it"),
        (line_of(other, "acc[vi] = acc[vi]"), "block 'acc' reads `tmp`, which nothing writes")]
    assert [len(text_fixes(parsed, x.code, x.severity, x.span.line, x.span.column))
            for x in ds] == [1, 0]
    # an update that is not a reducer has no fix
    text = HEAD + textwrap.dedent(base.replace("acc[vi] + A[vi, vk]", "acc[vi] - A[vi, vk]"))
    (d,) = [x for x in tirkit.check(text, "k.py") if x.severity == "error"]
    assert text_fixes(tirkit.parse(text), d.code, d.severity, d.span.line, d.span.column) == []
