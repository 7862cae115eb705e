"""loop-nest/parallel-race: two iterations of a `T.parallel` loop, or of a loop bound to
blockIdx, that touch one element, one writing, are an error with a witness (the two values
of the loop and the element); disjoint, private, guarded and same-value accesses are not;
TVM compiles and runs the racy kernels without a word."""
import pytest

import tirkit

CODE = "loop-nest/parallel-race"
HEAD = "from tvm.script import tir as T\n\n\n"


def races(body):
    text = HEAD + "@T.prim_func\n" + body
    return [(d.span.line, d.span.column, d.message, [(s.line, s.column, m) for s, m in d.related])
            for d in tirkit.check(text) if d.code == CODE]


SUM = '''def par_sum(A: T.Buffer((64,), "float32"), B: T.Buffer((1,), "float32")):
    for i in T.parallel(64):
        B[0] = B[0] + A[i]
'''
SHIFT = '''def par_shift(A: T.Buffer((65,), "float32")):
    for i in T.parallel(64):
        A[i + 1] = A[i] * T.float32(2)
'''


def test_a_nest_beyond_the_enumerated_points_is_read_in_part():
    # 512 x 512 points under the parallel loop: a prefix of each loop is read, and the
    # witness lies in it
    big = SUM.replace('A: T.Buffer((64,), "float32")', 'A: T.Buffer((512, 512), "float32")')
    big = big.replace("for i in T.parallel(64):",
                      "for i in T.parallel(512):\n        for j in range(512):")
    big = big.replace("        B[0] = B[0] + A[i]", "            B[0] = B[0] + A[i, j]")
    assert "range(512)" in big and "A[i, j]" in big
    assert [m.split(":")[0] for _, _, m, _ in races(big)] == [
        "iterations `i` = 0 and `i` = 1 of the parallel loop both write `B[0]`"]


def test_a_scalar_buffer_updated_by_every_iteration():
    # a 0-d buffer has no index to read: the element is the buffer's one value, and the
    # rule ran (not an internal note) and found the race
    text = HEAD + "@T.prim_func\n" + SUM.replace('(1,), "float32")', '(), "float32")') \
        .replace("B[0]", "B[()]")
    assert [(d.code, d.span.line, d.message[:75]) for d in tirkit.check(text)
            if d.severity != "hint"] == [
        (CODE, 7, "iterations `i` = 0 and `i` = 1 of the parallel loop both write `B[()]`: the")]


def test_an_accumulation_and_a_shift_under_a_parallel_loop():
    assert races(SUM) == [(7, 9, "iterations `i` = 0 and `i` = 1 of the parallel loop both "
                           "write `B[0]`: they may run at the same time, so the value left "
                           "depends on their timing", [(6, 5, "loop `i` is parallel here")])]
    assert races(SHIFT) == [(7, 9, "iteration `i` = 1 reads `A[1]`, which iteration `i` = 0 "
                             "writes: the parallel loop may run them at the same time, so the "
                             "value read depends on their timing",
                             [(6, 5, "loop `i` is parallel here"),
                              (7, 20, "iteration `i` = 1 reads `A[1]` here")])]
    (d,) = [d for d in tirkit.check(HEAD + "@T.prim_func\n" + SUM) if d.code == CODE]
    assert d.severity == "error"


def test_overlapping_tiles_through_inner_loops_and_a_let():
    tiles = races('''def tiles(A: T.Buffer((64,), "float32"), B: T.Buffer((66,), "float32")):
    for io in T.parallel(16):
        for ii in range(5):
            base = io * 4
            B[base + ii] = A[io * 4]
''')
    assert [(line, m.split(":")[0]) for line, _, m, _ in tiles] == [
        (9, "iterations `io` = 0 and `io` = 1 of the parallel loop both write `B[4]`")]
    # the loop outside the parallel one at its first value; the 2-d buffer flattened
    rows = races('''def rows(A: T.Buffer((4, 64), "float32")):
    for b in range(4):
        for i in T.parallel(63):
            A[b, i] = A[b, i + 1] + T.float32(1)
''')
    assert [m.split(":")[0] for _, _, m, _ in rows] == [
        "iteration `i` = 0 reads `A[0, 1]`, which iteration `i` = 1 writes"]


def test_blocks_of_a_grid_that_add_into_one_output():
    got = races('''def split_k(A: T.Buffer((4, 128), "float32"), C: T.Buffer((4,), "float32")):
    for bx in T.thread_binding(8, thread="blockIdx.x"):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            for k in range(16):
                C[tx] = C[tx] + A[tx, bx * 16 + k]
''')
    assert [(line, m.split(":")[0], rel) for line, _, m, rel in got] == [
        (9, "iterations `bx` = 0 and `bx` = 1 of the loop bound to blockIdx.x both write "
         "`C[0]`", [(6, 5, "loop `bx` is bound to blockIdx.x here")])]


@pytest.mark.parametrize("body", [
    # each iteration its own row
    '''def rows(A: T.Buffer((64, 16), "float32"), B: T.Buffer((64,), "float32")):
    for i in T.parallel(64):
        B[i] = T.float32(0)
        for j in range(16):
            B[i] = B[i] + A[i, j]
''',
    # storage allocated in the loop is each iteration's own
    '''def private(A: T.Buffer((64, 16), "float32"), B: T.Buffer((64,), "float32")):
    for i in T.parallel(64):
        acc = T.decl_buffer((1,), "float32")
        acc[0] = T.float32(0)
        for j in range(16):
            acc[0] = acc[0] + A[i, j]
        B[i] = acc[0]
''',
    # one iteration writes under the guard
    '''def guarded(A: T.Buffer((64,), "float32"), B: T.Buffer((1,), "float32")):
    for i in T.parallel(64):
        if i == 0:
            B[0] = A[i]
''',
    # every iteration stores one value: whatever their order, B[0] is left 1
    '''def same(B: T.Buffer((1,), "float32")):
    for i in T.parallel(64):
        B[0] = T.float32(1)
''',
    # reading ahead of a serial loop, and a vectorized loop: not parallel
    '''def serial(A: T.Buffer((65,), "float32")):
    for i in range(64):
        A[i + 1] = A[i] * T.float32(2)
''',
    # shared memory belongs to one thread block
    '''def shared(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8, 32), "float32")):
    S = T.alloc_buffer((32,), "float32", scope="shared")
    for bx in T.thread_binding(8, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            S[tx] = A[bx, tx]
            B[bx, tx] = S[tx]
''',
])
def test_no_race(body):
    assert races(body) == []


def test_a_block_reduction_under_a_parallel_loop_is_the_block_rule_s():
    text = HEAD + '''@T.prim_func
def blocks(A: T.Buffer((64,), "float32"), B: T.Buffer((1,), "float32")):
    for i in T.parallel(64):
        with T.block("sum"):
            vi = T.axis.reduce(64, i)
            with T.init():
                B[0] = T.float32(0)
            B[0] = B[0] + A[vi]
'''
    assert [d.code for d in tirkit.check(text)] == ["loop-nest/reduction-on-parallel"]


STAGES = '''def stages(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"),
           C: T.Buffer((16,), "float32")):
    for i in T.parallel(15):
        with T.block("X"):
            vi = T.axis.spatial(15, i)
            A[vi + 1] = B[vi] * T.float32(2)
        with T.block("Y"):
            vi = T.axis.spatial(15, i)
            C[vi] = A[vi] + T.float32(1)
'''


def test_two_blocks_whose_iterations_meet_under_a_parallel_loop():
    # each block's instances are independent; iteration 1's block Y reads what iteration
    # 0's block X writes
    assert races(STAGES) == [(10, 13, "iteration `i` = 1 reads `A[1]`, which iteration "
                              "`i` = 0 writes: the parallel loop may run them at the same "
                              "time, so the value read depends on their timing",
                              [(7, 5, "loop `i` is parallel here"),
                               (13, 21, "iteration `i` = 1 reads `A[1]` here")])]


@pytest.mark.parametrize("change", [
    ("T.parallel(15)", "range(15)"),                       # not parallel
    ("C[vi] = A[vi] +", "C[vi] = A[vi + 1] +"),            # Y reads its own iteration's A
    ("C[vi] = A[vi] +", "B[vi] = A[vi + 1] +"),            # Y writes what X read before
])
def test_blocks_that_do_not_meet_across_iterations(change):
    body = STAGES.replace(*change)
    assert body != STAGES
    assert races(body) == []


def test_one_block_whose_instances_meet_is_the_block_rule_s():
    text = HEAD + "@T.prim_func\n" + STAGES.replace(
        "A[vi + 1] = B[vi] * T.float32(2)", "A[vi + 1] = A[vi] * T.float32(2)").replace(
        "C[vi] = A[vi] +", "C[vi] = B[vi] +")
    assert sorted(d.code for d in tirkit.check(text)) == ["signature/iter-type"]


# compute_at's result: each iteration computes the T_add element it reads, and iterations
# 0 and 1 both compute T_add[0], the same value (x is not written under the loop)
RECOMPUTED = '''def recomputed(x: T.Buffer((4,), "float32"), R: T.Buffer((64,), "float32")):
    T_add = T.alloc_buffer((4,), "float32")
    for i0_0 in T.parallel(8):
        with T.block("T_add"):
            ax0 = T.axis.spatial(4, i0_0 // 2)
            T_add[ax0] = x[ax0] + T.float32(1)
        for i0_1 in range(8):
            with T.block("T_repeat"):
                ax0 = T.axis.spatial(64, i0_0 * 8 + i0_1)
                R[ax0] = T_add[ax0 // 16]
'''


def test_iterations_that_store_one_value_to_an_element_they_then_read():
    # whatever their timing, the element holds the value when each iteration reads it:
    # the iteration wrote it first
    assert races(RECOMPUTED) == []
    # the value read from storage the loop writes, or an index that is no iterator of the
    # element, may differ between iterations: a race
    x_written = RECOMPUTED.replace("R[ax0] = T_add[ax0 // 16]",
                                   "R[ax0] = T_add[ax0 // 16]\n                x[0] = R[ax0]")
    assert len(races(x_written)) == 1
    by_tile = RECOMPUTED.replace(
        "            T_add[ax0] = x[ax0] + T.float32(1)",
        "            t = T.axis.spatial(8, i0_0)\n"
        "            T_add[ax0] = x[ax0] + T.Cast(\"float32\", t)")
    assert len(races(by_tile)) == 1
    # read before the iteration writes it: the value read depends on the other's timing
    read_first = RECOMPUTED.replace(
        'R: T.Buffer((64,), "float32")):',
        'R: T.Buffer((64,), "float32"), P: T.Buffer((8,), "float32")):').replace(
        '        with T.block("T_add"):',
        '        with T.block("pre"):\n'
        '            v = T.axis.spatial(8, i0_0)\n'
        '            P[v] = T_add[v // 2]\n'
        '        with T.block("T_add"):')
    assert [m.split(":")[0] for _, _, m, _ in races(read_first)] == [
        "iteration `i0_0` = 1 reads `T_add[0]`, which iteration `i0_0` = 0 writes"]


def test_two_stores_of_one_value_and_a_read_the_first_covers():
    # each iteration writes both elements of T0 before it reads T0[0]: once the first
    # store is found before every read, the second has none left to look at
    two = '''def two(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    T0 = T.alloc_buffer((2,), "float32")
    for i in T.parallel(8):
        T0[0] = T.float32(1)
        T0[1] = T.float32(2)
        B[i] = T0[0] * A[i]
'''
    assert [d.code for d in tirkit.check(HEAD + "@T.prim_func\n" + two)] == []


# a padded convolution's pad recomputed in each parallel tile (compute_at), as most
# convolution schedules make it: tiles o and o + 1 both write P[4 * o + 4] and P[4 * o + 5],
# each the same value of X or 0, then read them
PADDED = '''def padded(X: T.Buffer((16,), "float32"), Y: T.Buffer((16,), "float32")):
    P = T.alloc_buffer((18,), "float32")
    for o in T.parallel(4):
        for k in range(6):
            with T.block("pad"):
                vh = T.axis.spatial(18, o * 4 + k)
                P[vh] = T.if_then_else(1 <= vh and vh < 17, X[vh - 1], T.float32(0))
        for h, r in T.grid(4, 3):
            with T.block("conv"):
                vo = T.axis.spatial(16, o * 4 + h)
                vr = T.axis.reduce(3, r)
                with T.init():
                    Y[vo] = T.float32(0)
                Y[vo] = Y[vo] + P[vo + vr]
'''


@pytest.mark.parametrize("value", [
    "T.if_then_else(1 <= vh and vh < 17, X[vh - 1], T.float32(0))",
    "T.exp(T.if_then_else(1 <= vh, X[T.min(vh, 16) - 1], T.float32(0)))",
    "T.max(X[T.min(vh, 15)], T.float32(0))",
])
def test_a_pure_call_computes_one_value(value):
    # a call whose value depends on its arguments alone (a math function, if_then_else)
    assert races(PADDED.replace(
        "T.if_then_else(1 <= vh and vh < 17, X[vh - 1], T.float32(0))", value)) == []


def test_a_call_with_effects_or_state_may_give_each_iteration_its_own_value():
    for value in ('T.call_extern("float32", "next_sample")',
                  'T.call_pure_extern("float32", "expf", X[T.min(vh, 15)]) + '
                  'T.call_extern("float32", "next_sample")'):
        assert [m.split(":")[0] for _, _, m, _ in races(PADDED.replace(
            "T.if_then_else(1 <= vh and vh < 17, X[vh - 1], T.float32(0))", value))] == [
            "iteration `o` = 1 reads `P[4]`, which iteration `o` = 0 writes"]


# a loop whose bounds move with the parallel loop (a triangular solve: row i subtracts the
# x[j] of the rows before it, which other iterations compute at the same time)
TRIANGULAR = '''def trsv(L: T.Buffer((16, 16), "float32"), x: T.Buffer((16,), "float32")):
    for i in T.parallel(16):
        for j in range(i):
            x[i] = x[i] - L[i, j] * x[j]
'''


def test_a_loop_bounded_by_the_parallel_loop_is_read_within_its_bounds():
    # (iteration 0 runs no j, and writes nothing)
    assert [m.split(":")[0] for _, _, m, _ in races(TRIANGULAR)] == [
        "iteration `i` = 2 reads `x[1]`, which iteration `i` = 1 writes"]
    # reading another vector: each row its own x[i]
    assert races(TRIANGULAR.replace("x[i] - L[i, j] * x[j]", "x[i] - L[i, j] * L[j, i]")) == []
    # packed rows: row i's j < i elements start at i * (i - 1) // 2, apart from the other
    # rows' only within the loop's bounds: one more (j up to i) and row 1 meets row 0
    packed = '''def packed(L: T.Buffer((16, 16), "float32"), P: T.Buffer((120,), "float32")):
    for i in T.parallel(16):
        for j in range(i):
            P[i * (i - 1) // 2 + j] = L[i, j]
'''
    assert races(packed) == []
    assert [m.split(":")[0] for _, _, m, _ in races(packed.replace("range(i)", "range(i + 1)"))] \
        == ["iterations `i` = 0 and `i` = 1 of the parallel loop both write `P[0]`"]
    # a start that moves: row i updates x[i:16] with its own x[i]
    shifted = TRIANGULAR.replace("for j in range(i):", "for j in range(i, 16):").replace(
        "x[i] = x[i] - L[i, j] * x[j]", "x[j] = x[j] + L[i, j] * x[i]")
    assert [m.split(":")[0] for _, _, m, _ in races(shifted)] == [
        "iterations `i` = 0 and `i` = 1 of the parallel loop both write `x[1]`"]
    # rows apart again: row i writes only the columns from i on of its own row
    assert races(shifted.replace("x[j] = x[j] + L[i, j] * x[i]",
                                 "L[i, j] = L[i, j] * x[i]")) == []


# the row maxima computed again for each column of each parallel tile: 32,768 points for
# each of the reduction's accesses, more than the rule reads in all
RECOMPUTED_MAX = '''def rows(A: T.Buffer((8, 64), "float32"), S: T.Buffer((8, 64), "float32")):
    mx = T.alloc_buffer((8,), "float32")
    for j_0 in T.parallel(4):
        for i, j_1 in T.grid(8, 16):
            for ax0 in range(64):
                with T.block("mx"):
                    vi, vk = T.axis.remap("SR", [i, ax0])
                    with T.init():
                        mx[vi] = T.min_value("float32")
                    mx[vi] = T.max(mx[vi], A[vi, vk])
            with T.block("S"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.spatial(64, j_0 * 16 + j_1)
                S[vi, vj] = A[vi, vj] - mx[vi]
'''


def test_every_access_of_a_nest_beyond_the_points_read_gets_its_share():
    # the init's store and the update's load fit the points read, the update's store did
    # not and was not read: each access now reads a prefix of its own
    assert [m.split(":")[0] for _, _, m, _ in races(RECOMPUTED_MAX)] == [
        "iteration `j_0` = 1 reads `mx[0]`, which iteration `j_0` = 0 writes"]


def test_a_read_ahead_of_the_iteration_s_own_write_in_an_inner_loop_is_a_race():
    # each iteration writes every T_add[k] with one value, but reads T_add[k + 1] in the
    # same inner iteration, before it writes it: the value read depends on the others
    body = '''def ahead(x: T.Buffer((9,), "float32"), R: T.Buffer((64,), "float32")):
    T_add = T.alloc_buffer((9,), "float32")
    for i in T.parallel(8):
        for k in range(8):
            T_add[k] = x[k] + T.float32(1)
            R[i * 8 + k] = T_add[k + 1]
'''
    assert [m.split(":")[0] for _, _, m, _ in races(body)] == [
        "iterations `i` = 0 and `i` = 1 of the parallel loop both write `T_add[1]`"]
    # read behind the write in the same inner iteration, or in a later one: each
    # iteration wrote the element first
    assert races(body.replace("T_add[k + 1]", "T_add[k]")) == []
    assert races(body.replace("T_add[k + 1]", "T_add[k // 2]")) == []


@pytest.mark.oracle
def test_tvm_parallelises_the_two_blocks():
    # TVM's `parallel` accepts the loop (each block has compact dataflow and data-parallel
    # bindings): the race is not its concern
    tvm = pytest.importorskip("tvm")
    from tvm import s_tir
    from tvm.script import tirx
    text = (HEAD + "@T.prim_func(s_tir=True)\n" + STAGES.replace("T.parallel", "range"))
    text = text.replace("T.block(", "T.sblock(").replace("from tvm.script import tir as T\n", "")
    sch = s_tir.Schedule(tvm.script.from_source(text, extra_vars={"T": tirx}))
    (i,) = sch.get_loops(sch.get_sblock("X"))
    sch.parallel(i)
    assert "T.parallel(15)" in sch.mod["main"].script()


@pytest.mark.oracle
def test_tvm_compiles_and_runs_the_racy_kernels():
    tvm = pytest.importorskip("tvm")
    import numpy as np
    from tvm.script import tirx

    for body in (SUM, SHIFT):
        text = (HEAD + "@T.prim_func\n" + body).replace("from tvm.script import tir as T\n", "")
        func = tvm.script.from_source(text, extra_vars={"T": tirx})
        lib = tvm.compile(tvm.IRModule({"main": func}), target="llvm")
        args = [np.random.default_rng(3).standard_normal(n).astype("float32")
                for n in ((64, 1) if body is SUM else (65,))]
        lib["main"](*[tvm.runtime.tensor(a) for a in args])


def _fixed(text, code):
    """text with the quick fix of its `code` diagnostic applied."""
    from tirkit.verify.fixes import text_fixes
    (d,) = [d for d in tirkit.check(text) if d.code == code]
    (fix,) = text_fixes(tirkit.parse(text), code, d.severity, d.span.line, d.span.column)
    lines = text.split("\n")
    ((ln, c, end_ln, end_c, new),) = fix.edits
    assert ln == end_ln
    lines[ln - 1] = lines[ln - 1][:c - 1] + new + lines[ln - 1][end_c - 1:]
    return fix.title, "\n".join(lines)


def test_the_quick_fix_makes_the_loop_serial_and_the_kernel_computes_the_loop():
    import numpy as np
    from tirkit.codegen import build

    title, fixed = _fixed(HEAD + "@T.prim_func\n" + SHIFT, CODE)
    assert title == "Make loop 'i' serial"
    assert "    for i in T.serial(64):\n" in fixed and tirkit.check(fixed) == []
    a = np.random.default_rng(5).standard_normal(65).astype("float32")
    want = a.copy()
    for i in range(64):
        want[i + 1] = want[i] * 2
    got = a.copy()
    build(tirkit.parse(fixed).module["par_shift"])(got)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # none for a loop bound to blockIdx: the kernel needs its grid
    from tirkit.verify.fixes import text_fixes
    text = HEAD + '''@T.prim_func
def split_k(A: T.Buffer((4, 128), "float32"), C: T.Buffer((4,), "float32")):
    for bx in T.thread_binding(8, thread="blockIdx.x"):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            for k in range(16):
                C[tx] = C[tx] + A[tx, bx * 16 + k]
'''
    (d,) = [d for d in tirkit.check(text) if d.code == CODE]
    assert text_fixes(tirkit.parse(text), CODE, "error", d.span.line, d.span.column) == []


def test_a_guard_marked_likely_is_read():
    body = '''def tail(A: T.Buffer((64,), "float32"), B: T.Buffer((1,), "float32")):
    for i in T.parallel(64):
        if T.likely(i < {n}):
            B[0] = A[i]
'''
    assert [m.split(":")[0] for _, _, m, _ in races(body.format(n=2))] == [
        "iterations `i` = 0 and `i` = 1 of the parallel loop both write `B[0]`"]
    assert races(body.format(n=1)) == []
