"""loop-nest/vector-dependence: lanes of a vectorized loop that touch one element, one
writing, in an order the vector form reverses, are an error with a witness; what the vector
form keeps in order is not reported.  The vector form's result is checked on random inputs:
tirkit's CPU back end and TVM compute every lane's loads first (numpy's vector expression),
the interpreter the serial loop."""
import numpy as np
import pytest

import tirkit
from tirkit.codegen import build
from tirkit.codegen.interp import run_reference

CODE = "loop-nest/vector-dependence"
HEAD = "from tvm.script import tir as T\n\n\n"

SHIFT = '''def shift(A: T.Buffer((65,), "float32")):
    for i in T.vectorized(64):
        A[i + 1] = A[i] + T.float32(1)
'''
# a running sum into one element: every lane reads B[0] before any stores it
SUM = '''def vsum(A: T.Buffer((16,), "float32"), B: T.Buffer((1,), "float32")):
    for i in T.vectorized(16):
        B[0] = B[0] + A[i]
'''
# lane i + 1 writes A[i + 1] in the first statement, which lane i reads in the second
ANTI = '''def anti(A: T.Buffer((9,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.vectorized(8):
        A[i] = A[i] * T.float32(3)
        B[i] = A[i + 1]
'''
# lane i + 1 writes B[i + 1] in the first statement, lane i in the second
STORES = '''def stores(A: T.Buffer((9,), "float32"), B: T.Buffer((9,), "float32")):
    for i in T.vectorized(8):
        B[i] = A[i]
        B[i + 1] = A[i] * T.float32(2)
'''


def found(body):
    text = HEAD + "@T.prim_func\n" + body
    return [(d.span.line, d.span.column, d.message, [(s.line, m) for s, m in d.related])
            for d in tirkit.check(text) if d.code == CODE]


def test_a_lane_that_reads_what_an_earlier_lane_writes():
    assert found(SHIFT) == [(7, 20, "lane `i` = 1 reads `A[1]` before lane `i` = 0 writes it: "
                             "the vectorized loop makes every lane's loads of a statement "
                             "before its store, so the lane reads the old value, where the "
                             "loop it stands for reads the new one",
                             [(6, "loop `i` is vectorized here"),
                              (7, "lane `i` = 0 writes `A[1]` here")])]


def test_a_running_sum_into_one_element():
    assert [(line, m.split(":")[0]) for line, _, m, _ in found(SUM)] == [
        (7, "lane `i` = 1 reads `B[0]` before lane `i` = 0 writes it")]


def test_statements_whose_order_across_lanes_the_vector_form_reverses():
    assert [(line, m.split(":")[0], rel) for line, _, m, rel in found(ANTI)] == [
        (8, "lane `i` = 0 reads `A[1]` after lane `i` = 1 writes it",
         [(6, "loop `i` is vectorized here"), (7, "lane `i` = 1 writes `A[1]` here")])]
    assert [(line, m.split(",")[0], rel) for line, _, m, rel in found(STORES)] == [
        (7, "lanes `i` = 0 and `i` = 1 both write `B[1]`",
         [(6, "loop `i` is vectorized here"), (8, "lane `i` = 0 writes `B[1]` here")])]


# ANTI with each statement a block: each block's instances are independent, the two blocks'
# lanes are not
ANTI_BLOCKS = '''def anti_blocks(A: T.Buffer((9,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.vectorized(8):
        with T.block("X"):
            vi = T.axis.spatial(8, i)
            A[vi] = A[vi] * T.float32(3)
        with T.block("Y"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi + 1]
'''


def test_two_blocks_whose_lanes_the_vector_form_reverses():
    assert [(line, m.split(":")[0], rel) for line, _, m, rel in found(ANTI_BLOCKS)] == [
        (12, "lane `i` = 0 reads `A[1]` after lane `i` = 1 writes it",
         [(6, "loop `i` is vectorized here"), (9, "lane `i` = 1 writes `A[1]` here")])]
    # what it says, run: the CPU back end's vector form reads the tripled A[1]
    func = tirkit.parse(HEAD + "@T.prim_func\n" + ANTI_BLOCKS).module["anti_blocks"]
    rng = np.random.default_rng(13)
    a, b = rng.standard_normal(9).astype("float32"), rng.standard_normal(8).astype("float32")
    compiled, interpreted = [a.copy(), b.copy()], [a.copy(), b.copy()]
    build(func)(*compiled)
    run_reference(func, interpreted)
    np.testing.assert_allclose(compiled[1], np.r_[a[1:8] * 3, a[8]], rtol=1e-6)
    np.testing.assert_array_equal(interpreted[1], a[1:])


def test_one_block_whose_lanes_meet_is_the_block_rule_s():
    text = HEAD + "@T.prim_func\n" + '''def one(A: T.Buffer((9,), "float32")):
    for i in T.vectorized(8):
        with T.block("X"):
            vi = T.axis.spatial(8, i)
            A[vi + 1] = A[vi] * T.float32(3)
'''
    assert [d.code for d in tirkit.check(text)] == ["signature/iter-type"]


@pytest.mark.parametrize("body", [
    # two blocks, each lane its own elements: B[i] read by Y is what X wrote in lane i
    ANTI_BLOCKS.replace("B[vi] = A[vi + 1]", "B[vi] = A[vi]"),
    # reading ahead: every lane reads the old value in both orders
    '''def ahead(A: T.Buffer((65,), "float32")):
    for i in T.vectorized(64):
        A[i] = A[i + 1] + T.float32(1)
''',
    # each lane its own elements
    '''def own(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.vectorized(8):
        B[i] = A[i] * T.float32(2)
        A[i] = B[i] + T.float32(1)
''',
    # an earlier statement reads what a later lane writes later: old in both orders
    '''def later(A: T.Buffer((9,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.vectorized(8):
        B[i] = A[i + 1]
        A[i] = B[i] * T.float32(2)
''',
    # the same shift run serially
    '''def serial(A: T.Buffer((65,), "float32")):
    for i in range(64):
        A[i + 1] = A[i] + T.float32(1)
''',
    # a `while` inside: TVM's vectorizer refuses the loop
    '''def looping(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    n = T.decl_buffer((1,), "int32", scope="local")
    n[0] = 0
    for j in T.vectorized(64):
        while n[0] < 10:
            C[j] = C[j] + A[j]
            n[0] = n[0] + 1
''',
])
def test_not_reported(body):
    assert found(body) == []


def test_the_vector_form_and_the_serial_loop_compute_different_shifts():
    # (16 lanes: the CPU back end makes one vector of a loop of up to 32, and runs a longer
    # one 16 lanes at a time, so that a 64-lane shift is neither TVM's result nor the loop's)
    short = SHIFT.replace("65", "17").replace("64", "16")
    assert [m for _, _, m, _ in found(short)] == [m for _, _, m, _ in found(SHIFT)]
    func = tirkit.parse(HEAD + "@T.prim_func\n" + short).module["shift"]
    a = np.random.default_rng(11).standard_normal(17).astype("float32")
    serial = a.copy()
    for i in range(16):
        serial[i + 1] = serial[i] + 1
    vector = a.copy()
    vector[1:] = a[:16] + 1
    compiled, interpreted = a.copy(), a.copy()
    build(func)(compiled)
    run_reference(func, [interpreted])
    np.testing.assert_array_equal(compiled, vector)
    np.testing.assert_array_equal(interpreted, serial)
    assert not np.allclose(vector, serial)


def _tvm_run(body, *arrays):
    """`body` built by TVM 0.27 for LLVM and run on copies of `arrays`: their values after."""
    import tvm
    from tvm.script import tirx
    func = tvm.script.from_source("@T.prim_func\n" + body, extra_vars={"T": tirx})
    lib = tvm.compile(tvm.IRModule({"main": func}), target="llvm")
    out = [tvm.runtime.tensor(x.copy()) for x in arrays]
    lib["main"](*out)
    return [x.numpy() for x in out]


@pytest.mark.oracle
def test_tvm_computes_the_vector_form():
    pytest.importorskip("tvm")
    run = _tvm_run
    rng = np.random.default_rng(12)
    a = rng.standard_normal(65).astype("float32")
    (got,) = run(SHIFT, a)
    np.testing.assert_allclose(got[1:], a[:64] + 1, rtol=1e-6)
    # the running sum: each lane adds its A[i] to the B[0] read before the store, and the
    # last lane's store is left
    a, b = rng.standard_normal(16).astype("float32"), rng.standard_normal(1).astype("float32")
    _, got = run(SUM, a, b)
    np.testing.assert_allclose(got, b + a[15], rtol=1e-6)
    assert not np.allclose(got, b + a.sum())


def test_the_quick_fix_makes_the_loop_serial_and_the_kernel_computes_the_loop():
    from test_verify_parallel_race import _fixed

    title, fixed = _fixed(HEAD + "@T.prim_func\n" + SUM, CODE)
    assert title == "Make loop 'i' serial"
    assert "    for i in T.serial(16):\n" in fixed and tirkit.check(fixed) == []
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal(16).astype("float32"), rng.standard_normal(1).astype("float32")
    got = b.copy()
    build(tirkit.parse(fixed).module["vsum"])(a, got)
    np.testing.assert_allclose(got, b + a.sum(), rtol=1e-5)


# every lane stores one value to T0[0] and reads it after its own store: the vector form
# stores it once for all lanes, and each lane reads the value the loop's lane reads
UNIFORM = '''def uniform(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"),
            T0: T.Buffer((1,), "float32")):
    for i in T.vectorized(8):
        T0[0] = A[0] * T.float32(2)
        B[i] = T0[0] * A[i]
'''
# a sum every lane computes again from its own reset, in a loop inside the vectorized one:
# the lanes compute the same values in step
RESET = '''def reset(A: T.Buffer((8,), "float32"), S: T.Buffer((1,), "float32"),
          B: T.Buffer((8,), "float32")):
    for i in T.vectorized(8):
        S[0] = T.float32(0)
        for k in range(4):
            S[0] = S[0] + A[k]
        B[i] = A[i] - S[0]
'''
# a loop inside the vectorized one: TVM runs `k` outside the lanes, so at `k` = 1 lane 0
# doubles the A[1] that lane 1 doubled at `k` = 0, and C records it
STAGES = '''def stages(A: T.Buffer((9,), "float32"), C: T.Buffer((8, 2), "float32")):
    for i in T.vectorized(8):
        for k in range(2):
            A[i + k] = A[i + k] * T.float32(2) + T.float32(1)
            C[i, k] = A[i + k]
'''

# softmax with its maximum and its sum computed again in each lane, the sum from the
# maximum: in step the lanes store the same values to both
CHAIN = '''def chain(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    mx = T.alloc_buffer((1,), "float32")
    sm = T.alloc_buffer((1,), "float32")
    for i in T.vectorized(8):
        mx[0] = T.min_value("float32")
        for k0 in range(8):
            mx[0] = T.max(mx[0], A[k0])
        sm[0] = T.float32(0)
        for k1 in range(8):
            sm[0] = sm[0] + T.exp(A[k1] - mx[0])
        B[i] = T.exp(A[i] - mx[0]) / sm[0]
'''
# compute_at's repeat (TVM's tiled_repeat_op_after_compute_at, vectorized): lanes 0 and 1
# both store x[0] + 1 to T_add[0], each before reading it
REPEAT = '''def repeat(x: T.Buffer((4,), "float32"), R: T.Buffer((64,), "float32")):
    T_add = T.alloc_buffer((4,), "float32")
    for i0 in T.vectorized(8):
        T_add[i0 // 2] = x[i0 // 2] + T.float32(1)
        for i1 in range(8):
            R[i0 * 8 + i1] = T_add[i0 // 2]
'''

def _run_both(body, *arrays):
    """The CPU back end's and the interpreter's results of `body` on copies of `arrays`."""
    name = body.split("(")[0].split()[-1]
    func = tirkit.parse(HEAD + "@T.prim_func\n" + body).module[name]
    compiled, interpreted = [x.copy() for x in arrays], [x.copy() for x in arrays]
    build(func)(*compiled)
    run_reference(func, interpreted)
    return compiled, interpreted


def test_a_value_every_lane_stores_alike_and_reads_after_its_own_store():
    assert found(UNIFORM) == [] and found(RESET) == []
    rng = np.random.default_rng(21)
    a, b, t = (rng.standard_normal(n).astype("float32") for n in (8, 8, 1))
    for got in _run_both(UNIFORM, a, b, t):
        np.testing.assert_allclose(got[1], a[0] * 2 * a, rtol=1e-6)
    for got in _run_both(RESET, a, t, b):
        np.testing.assert_allclose(got[2], a - a[:4].sum(), rtol=1e-5)
    # one value to each element, whichever lane stores it
    assert found(REPEAT) == []
    x, r = rng.standard_normal(4).astype("float32"), rng.standard_normal(64).astype("float32")
    for got in _run_both(REPEAT, x, r):
        np.testing.assert_allclose(got[1], np.repeat(x + 1, 16), rtol=1e-6)
    # a value stored alike from another one stored alike
    assert found(CHAIN) == []
    for got in _run_both(CHAIN, a, b):
        np.testing.assert_allclose(got[1], np.exp(a - a.max()) / np.exp(a - a.max()).sum(),
                                   rtol=1e-5)


@pytest.mark.parametrize("body, line, message", [
    # no reset: lane 1 adds to the sum lane 0 left, where the vector form adds once
    (RESET.replace("        S[0] = T.float32(0)\n", ""), 9,
     "lane `i` = 1 reads `S[0]` at `k` = 0 before lane `i` = 0 writes it at `k` = 3"),
    # only lane 0 adds: lane 1 reads the sum where the loop's lane 1 reads its own reset
    (RESET.replace("            S[0] = S[0] + A[k]",
                   "            if i == 0:\n                S[0] = S[0] + A[k]"), 12,
     "lane `i` = 0 reads `S[0]` after lane `i` = 1 writes it"),
    # each lane adds its own count of terms (TVM runs that loop lane by lane, each adding
    # to the sum the lanes before left)
    (RESET.replace("range(4)", "range(i)"), 11,
     "lane `i` = 0 reads `S[0]` after lane `i` = 1 writes it"),
    # lanes 0 and 1 store their own values to T_add[0]: lane 0 reads lane 1's
    (REPEAT.replace("x[i0 // 2] + T.float32(1)", "x[i0 // 2] + T.Cast(\"float32\", i0)"),
     10, "lane `i0` = 0 reads `T_add[0]` at `i1` = 7 after lane `i0` = 1 writes it"),
    # the sum from a maximum of each lane's own: the lanes' maxima, and so their sums, differ
    (CHAIN.replace("T.max(mx[0], A[k0])", "T.max(mx[0], A[k0] * T.Cast(\"float32\", i))"), 15,
     "lane `i` = 0 reads `mx[0]` after lane `i` = 1 writes it"),
])
def test_values_the_lanes_do_not_store_alike(body, line, message):
    assert [(ln, m.split(":")[0]) for ln, _, m, _ in found(body)] == [(line, message)]


def test_accesses_in_a_loop_inside_the_vectorized_one():
    assert [(ln, m.split(":")[0], rel) for ln, _, m, rel in found(STAGES)] == [
        (8, "lane `i` = 1 reads `A[1]` at `k` = 0 before lane `i` = 0 writes it at `k` = 1",
         [(6, "loop `i` is vectorized here"), (8, "lane `i` = 0 writes `A[1]` here")])]
    shift = SHIFT.replace("        A[i + 1]", "        for k in range(3):\n            A[i + 1]")
    assert [(ln, m.split(":")[0]) for ln, _, m, _ in found(shift)] == [
        (8, "lane `i` = 1 reads `A[1]` at `k` = 0 before lane `i` = 0 writes it at `k` = 2")]
    # the CPU back end runs a vectorized loop with a loop inside as the loop it stands for
    a = np.random.default_rng(22).standard_normal(9).astype("float32")
    c = np.random.default_rng(23).standard_normal((8, 2)).astype("float32")
    compiled, interpreted = _run_both(STAGES, a, c)
    np.testing.assert_allclose(compiled[1], interpreted[1], rtol=1e-6)


# two loops inside, one after the other: lane i's reads of A[i + 1] in the first loop come
# before lane i + 1's writes of it in the second in both orders; the other way round, the
# vector form runs every lane's writes first
SIBLINGS = '''def siblings(A: T.Buffer((9,), "float32"), B: T.Buffer((8, 2), "float32")):
    for i in T.vectorized(8):
        for k in range(2):
            B[i, k] = A[i + 1]
        for m in range(2):
            A[i] = A[i] * T.float32(2)
'''


def test_loops_inside_in_the_order_they_run():
    assert found(SIBLINGS) == []
    first, second = SIBLINGS.split("        for m")
    swapped = first.split("        for k")[0] + "        for m" + second + \
        "        for k" + first.split("        for k")[1]
    assert swapped.index("for m") < swapped.index("for k")
    assert [(ln, m.split(":")[0]) for ln, _, m, _ in found(swapped)] == [
        (10, "lane `i` = 0 reads `A[1]` at `k` = 1 after lane `i` = 1 writes it at `m` = 0")]
    a = np.random.default_rng(25).standard_normal(9).astype("float32")
    b = np.random.default_rng(26).standard_normal((8, 2)).astype("float32")
    for got in _run_both(SIBLINGS, a, b):
        np.testing.assert_allclose(got[1], np.repeat(a[1:, None], 2, axis=1), rtol=1e-6)


def test_long_loops_at_five_depths():
    # the schedule vectors' columns span more than 64 bits in all (five loops of 8,192
    # values, each at its own depth, read in part): the order is kept as they are numbered;
    # lane 1 reads X[0] in the first loop, which lane 0 writes in the last
    deep = '''def deep(X: T.Buffer((81920,), "float32"), Y: T.Buffer((8192,), "float32")):
    for i in T.vectorized(2):
        for a in range(8192):
            X[49152 + a * 2 + i] = X[a * 2 + 1 - i]
        for b in range(1):
            for c in range(8192):
                X[16384 + c * 2 + i] = Y[c]
        for e, f in T.grid(1, 1):
            for g in range(8192):
                X[32768 + g * 2 + i] = Y[g]
        for p, q, r in T.grid(1, 1, 1):
            for g in range(8192):
                X[65536 + g * 2 + i] = Y[g]
        for p, q, r, s in T.grid(1, 1, 1, 1):
            for g in range(8192):
                X[g * 2 + i] = Y[g]
'''
    assert [(ln, m.split(":")[0], rel) for ln, _, m, rel in found(deep)] == [
        (8, "lane `i` = 1 reads `X[0]` at `a` = 0 before lane `i` = 0 writes it at `p` = 0, "
         "`q` = 0, `r` = 0, `s` = 0, `g` = 0",
         [(6, "loop `i` is vectorized here"), (20, "lane `i` = 0 writes `X[0]` here")])]


@pytest.mark.parametrize("body", [
    # each lane its own elements, in a loop inside
    '''def own_rows(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.vectorized(8):
        for k in range(4):
            B[i] = B[i] + A[i, k]
''',
    # each lane its own elements, two loops deep
    '''def deep(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4, 4), "float32")):
    for i in T.vectorized(8):
        for k, m in T.grid(4, 4):
            C[i, k, m] = A[i, k] + A[i, m]
''',
    # a loop whose bounds move with the lane: TVM runs it lane by lane, in the loop's order
    '''def by_lane(A: T.Buffer((9,), "float32")):
    for i in T.vectorized(8):
        for k in range(i):
            A[i + 1] = A[i] + T.float32(1)
''',
])
def test_loops_inside_not_reported(body):
    assert found(body) == []


def test_a_store_no_lane_runs():
    # the guard holds at no point: nothing to read, and nothing to say
    text = HEAD + "@T.prim_func\n" + '''def none_run(A: T.Buffer((9,), "float32")):
    for i in T.vectorized(8):
        for k in range(2):
            if i + k > 9:
                A[i + 1] = A[i]
'''
    assert [d.code for d in tirkit.check(text)] == []


@pytest.mark.oracle
def test_tvm_runs_loops_inside_outside_the_lanes_and_stores_alike_values_once():
    pytest.importorskip("tvm")
    run = _tvm_run
    rng = np.random.default_rng(24)
    a, b, t = (rng.standard_normal(n).astype("float32") for n in (8, 8, 1))
    np.testing.assert_allclose(run(UNIFORM, a, b, t)[1], a[0] * 2 * a, rtol=1e-6)
    np.testing.assert_allclose(run(RESET, a, t, b)[2], a - a[:4].sum(), rtol=1e-5)
    np.testing.assert_allclose(run(CHAIN, a, b)[1],
                               np.exp(a - a.max()) / np.exp(a - a.max()).sum(), rtol=1e-5)
    x, r = rng.standard_normal(4).astype("float32"), rng.standard_normal(64).astype("float32")
    np.testing.assert_allclose(run(REPEAT, x, r)[1], np.repeat(x + 1, 16), rtol=1e-6)
    # a loop whose bounds move with the lane runs lane by lane: lane i adds its i terms to
    # the sum the lanes before left, and every lane then reads the last
    by_lane = RESET.replace("range(4)", "range(i)")
    got = run(by_lane, a, t, b)[2]
    np.testing.assert_allclose(got, a - np.cumsum(a[:7]).sum(), rtol=1e-5, atol=1e-5)
    assert not np.allclose(got, _run_both(by_lane, a, t, b)[1][2])
    a = rng.standard_normal(9).astype("float32")
    c = rng.standard_normal((8, 2)).astype("float32")
    vector, vc = a.copy(), c.copy()
    for k in range(2):
        vector[k:k + 8] = vector[k:k + 8] * 2 + 1
        vc[:, k] = vector[k:k + 8]
    _, serial = _run_both(STAGES, a, c)
    got = run(STAGES, a, c)
    np.testing.assert_allclose(got[1], vc, rtol=1e-6)
    assert not np.allclose(got[1], serial[1])
