"""Per-store features on small kernels whose counts are computed by hand."""
import math

import numpy as np
import pytest

import tirkit
from tirkit.cost.cycles import GATHER_LANE
from tirkit.cost.features import NAMES, extract
from tirkit.tensorize.library import host_features

HEAD = "from tvm.script import tir as T\n\n\n"


def lg(x):
    return math.log2(1 + x)


def func_of(text):
    mod = tirkit.parse(HEAD + text).module
    return mod.prim_funcs()[0][1]


def row_dict(row):
    return {n: float(v) for n, v in zip(NAMES, row)}


ELEMENTWISE = '''@T.prim_func
def ew(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16, 32), "float32")):
    for i, j in T.grid(16, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)
'''

TRANSPOSE = '''@T.prim_func
def tr(A: T.Buffer((32, 16), "float32"), B: T.Buffer((16, 32), "float32")):
    for i, j in T.grid(16, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.exp(A[vj, vi])
'''

MATMUL = '''@T.prim_func
def mm(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
       C: T.Buffer((8, 8), "float32")):
    for i, j, k in T.grid(8, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def test_names_are_unique_and_match_the_columns():
    assert len(NAMES) == len(set(NAMES))
    assert extract(func_of(ELEMENTWISE)).shape == (1, len(NAMES))
    assert extract(func_of(ELEMENTWISE)).dtype == np.float32


def test_elementwise_counts_bytes_and_strides():
    (row,) = extract(func_of(ELEMENTWISE))
    r = row_dict(row)
    n = 16 * 32
    assert r["op.float_mul"] == pytest.approx(lg(n))
    assert r["op.float_addsub"] == pytest.approx(lg(n))
    assert r["op.float_math"] == 0
    assert r["loop.count"] == 2
    assert r["loop.outer_product"] == pytest.approx(lg(n))
    assert r["loop.innermost_extent"] == pytest.approx(lg(32))
    # both buffers: n accesses of 4 bytes, all unique, unit stride, 16 floats per line
    for b in ("buf0", "buf1"):
        assert r[b + ".present"] == 1
        assert r[b + ".bytes"] == pytest.approx(lg(4 * n))
        assert r[b + ".unique_bytes"] == pytest.approx(lg(4 * n))
        assert r[b + ".stride"] == pytest.approx(lg(1))
        assert r[b + ".lines"] == pytest.approx(lg(n / 16))
        assert r[b + ".reuse_type"] == 0
    assert {r["buf0.is_write"], r["buf1.is_write"]} == {0.0, 1.0}
    assert r["buf2.present"] == 0


def test_transposed_read_has_the_row_stride_and_a_line_per_access():
    (row,) = extract(func_of(TRANSPOSE))
    r = row_dict(row)
    n = 16 * 32
    assert r["op.float_call"] == pytest.approx(lg(n))      # T.exp: a C library call
    assert r["op.float_math"] == 0
    # A[vj, vi]: the inner loop j walks A's rows: stride 16 elements (64 bytes), one line each
    assert r["buf0.is_read"] == 1 and r["buf0.is_write"] == 0
    assert r["buf0.stride"] == pytest.approx(lg(16))
    assert r["buf0.lines"] == pytest.approx(lg(n))
    assert r["buf1.stride"] == pytest.approx(lg(1))
    assert r["buf1.lines"] == pytest.approx(lg(n / 16))


def test_matmul_reduction_init_and_reuse():
    rows = extract(func_of(MATMUL))
    assert rows.shape[0] == 2
    init, body = (row_dict(x) for x in rows)
    assert init["store.is_init"] == 1 and body["store.is_init"] == 0
    assert init["loop.outer_product"] == pytest.approx(lg(64))     # once per (i, j)
    assert body["loop.outer_product"] == pytest.approx(lg(512))
    assert body["op.float_mul"] == pytest.approx(lg(512))
    assert body["op.float_addsub"] == pytest.approx(lg(512))
    assert body["store.read_modify_write"] == 1
    present = [i for i in range(5) if body[f"buf{i}.present"]]
    assert len(present) == 3
    (c,) = [i for i in present if body[f"buf{i}.is_write"]]
    (b,) = [i for i in present if body[f"buf{i}.stride"] == pytest.approx(lg(8))]
    (a,) = [i for i in present if i not in (b, c)]
    # C[vi, vj]: read and written, reused across k (the innermost loop): distance 1 iteration
    assert body[f"buf{c}.is_read"] == 1
    assert body[f"buf{c}.reuse_type"] == 1
    assert body[f"buf{c}.reuse_count"] == pytest.approx(lg(8))
    assert body[f"buf{c}.reuse_dist_iter"] == pytest.approx(lg(1))
    assert body[f"buf{c}.unique_bytes"] == pytest.approx(lg(64 * 4))
    # B[vk, vj]: stride 8 along k; reused across i with distance 64 iterations (j, k)
    assert body[f"buf{b}.reuse_count"] == pytest.approx(lg(8))
    assert body[f"buf{b}.reuse_dist_iter"] == pytest.approx(lg(64))
    assert body[f"buf{b}.lines"] == pytest.approx(lg(512 / 2))   # 2 of B's rows per line
    # A[vi, vk]: unit stride along k; reused across j with distance 8 iterations (k)
    assert body[f"buf{a}.stride"] == pytest.approx(lg(1))
    assert body[f"buf{a}.reuse_dist_iter"] == pytest.approx(lg(8))
    assert body[f"buf{a}.lines"] == pytest.approx(lg(512 / 8))   # 8 of k per line


def test_schedule_changes_loop_features():
    func = func_of(ELEMENTWISE)
    sch = tirkit.Schedule(func)
    i, j = sch.get_loops(sch.get_block("B"))
    j0, j1 = sch.split(j, [None, 8])
    sch.parallel(i)
    sch.vectorize(j1)
    row, launch = extract(sch.mod.prim_funcs()[0][1])
    r = row_dict(row)
    # the parallel region is entered once: a row of its own, for pack-sum to add its cost
    assert row_dict(launch)["kernel.launch_row"] == 1 and r["kernel.launch_row"] == 0
    assert row_dict(launch)["loop.parallel_launches"] == pytest.approx(lg(1))
    assert row_dict(launch)["op.float_mul"] == 0
    assert r["loop.parallel_work"] == pytest.approx(lg(16 * 32))
    # the vectorized loop walks both buffers contiguously: 8 floats
    assert (r["vector.contiguous"], r["vector.broadcast"], r["vector.strided"]) == (2, 0, 0)
    assert r["vector.bytes"] == pytest.approx(lg(32))
    assert r["loop.parallel.extent"] == pytest.approx(lg(16))
    assert r["loop.parallel.position"] == 3           # the outermost of three loops
    assert r["loop.vectorized.extent"] == pytest.approx(lg(8))
    assert r["loop.vectorized.position"] == 1         # innermost
    assert r["loop.parallel_launches"] == pytest.approx(lg(1))
    assert r["loop.count"] == 3
    # the same work: operation counts unchanged by the schedule
    (plain,) = extract(func)
    assert r["op.float_mul"] == row_dict(plain)["op.float_mul"]


def test_matmul_working_sets_and_cache_misses():
    _, body = (row_dict(x) for x in extract(func_of(MATMUL)))
    # the store alone touches one element of each of C, A, B; the k loop 1 + 8 + 8; the
    # whole nest all of them (64 floats each)
    assert body["footprint.0"] == pytest.approx(lg(3 * 4))
    assert body["footprint.9"] == pytest.approx(lg(3 * 64 * 4))
    # everything fits in L1 and L2: each buffer's 256 bytes are loaded once, 4 lines each
    assert body["cache.l1_lines"] == pytest.approx(lg(12))
    assert body["cache.l1_level"] == 3 and body["cache.l2_level"] == 3
    # the innermost loop k: C[vi, vj] does not move, A[vi, vk] is contiguous, B[vk, vj] strided
    assert (body["inner.contiguous"], body["inner.broadcast"], body["inner.strided"]) == (1, 1, 1)
    assert body["vector.contiguous"] == 0 and body["vector.bytes"] == 0


BIG_COPY = '''@T.prim_func
def cp(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32")):
    for i, j in T.grid(1024, 1024):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
'''


def test_a_working_set_larger_than_the_cache_misses_once_per_outer_iteration():
    (row,) = extract(func_of(BIG_COPY))
    r = row_dict(row)
    # 8 MB in all: neither cache keeps it; one row of each (8 KB) fits both, so each of the
    # 1024 rows misses its 64 + 64 lines
    assert r["cache.l1_level"] == 1 and r["cache.l2_level"] == 1
    assert r["cache.l1_lines"] == pytest.approx(lg(1024 * 128))
    assert r["footprint.9"] == pytest.approx(lg(2 * 1024 * 1024 * 4))


def test_parallel_regions_inside_a_serial_loop_are_entered_once_per_iteration():
    sch = tirkit.Schedule(func_of(ELEMENTWISE))
    i, j = sch.get_loops(sch.get_block("B"))
    sch.parallel(j)
    rows = extract(sch.mod.prim_funcs()[0][1])
    launch = row_dict(rows[-1])
    assert launch["kernel.launch_row"] == 1
    assert launch["loop.parallel_launches"] == pytest.approx(lg(16))
    assert row_dict(rows[0])["loop.parallel_work"] == pytest.approx(lg(32))


def test_deterministic():
    f = func_of(MATMUL)
    assert np.array_equal(extract(f), extract(f))


REGISTER_TILE = '''@T.prim_func
def rt(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
       C: T.Buffer((64, 64), "float32")):
    for i_0, j_0, k in T.grid(16, 4, 64):
        for i_1 in T.unroll(4):
            for j_1 in T.vectorized(16):
                with T.block("C"):
                    vi = T.axis.spatial(64, i_0 * 4 + i_1)
                    vj = T.axis.spatial(64, j_0 * 16 + j_1)
                    vk = T.axis.reduce(64, k)
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''

STENCIL = '''@T.prim_func
def st(A: T.Buffer((66, 16), "float32"), B: T.Buffer((64, 16), "float32")):
    for i, j, k in T.grid(64, 16, 3):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                B[vi, vj] = T.float32(0)
            B[vi, vj] = B[vi, vj] + A[vi + vk, vj]
'''

NARROW_TRANSPOSE = '''@T.prim_func
def nt(A: T.Buffer((4, 64), "float32"), B: T.Buffer((64, 4), "float32")):
    for i, j in T.grid(64, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi]
'''


GEMV_8 = '''@T.prim_func
def gv(A: T.Buffer((64, 8), "float32"), x: T.Buffer((8,), "float32"),
       y: T.Buffer((64,), "float32")):
    for i, k in T.grid(64, 8):
        with T.block("y"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                y[vi] = T.float32(0)
            y[vi] = y[vi] + A[vi, vk] * x[vk]
'''

COLUMN_SUM = '''@T.prim_func
def cs(A: T.Buffer((64, 32), "float32"), B: T.Buffer((32,), "float32")):
    for k, j in T.grid(64, 32):
        with T.block("B"):
            vj, vk = T.axis.remap("SR", [j, k])
            with T.init():
                B[vj] = T.float32(0)
            B[vj] = B[vj] + A[vk, vj]
'''


def assembly_lines(text):
    """The instruction lines LLVM emits for the kernel, as the code generator compiles it."""
    from tirkit.codegen import emit_llvm
    from tirkit.codegen.llvm import engine
    from tirkit.codegen.llvm.pipeline import choose
    mod = tirkit.parse(HEAD + text).module
    f = mod.prim_funcs()[0][1]
    asm = engine.assembly(emit_llvm(f, mod), choose(f))
    return [ln.strip() for ln in asm.splitlines()
            if ln.startswith("\t") and not ln.startswith("\t.")]


def assembly(text):
    """The mnemonics of the instructions LLVM emits for the kernel."""
    return [ln.split()[0] for ln in assembly_lines(text)]


def float_arith(ops, suffix):
    """Float add/multiply/fused multiply-add instructions ending in `suffix` (ps: packed,
    ss: scalar)."""
    return [o for o in ops if o.endswith(suffix) and ("add" in o or "mul" in o)]


def test_register_tile_keeps_the_reduction_loop_and_its_accumulators():
    body = row_dict(extract(func_of(REGISTER_TILE))[1])
    assert body["store.is_init"] == 0
    # i_1 (unrolled) and j_1 (16 lanes) form the body; k is the loop left innermost. The
    # estimate counts the 16 lanes as two 256-bit halves of 8, as Zen 4 executes them
    assert body["llvm.unrolled"] == pytest.approx(lg(4))
    assert body["llvm.vector_lanes"] == pytest.approx(lg(16))
    assert body["llvm.lanes"] == pytest.approx(lg(8))
    assert body["llvm.auto_lanes"] == 0 and body["llvm.slp_lanes"] == 0   # vector code already
    assert body["llvm.kept_extent"] == pytest.approx(lg(64))
    assert body["llvm.kept_parallel"] == 0
    # C does not move with k: its 4 x 16 accumulators stay in registers across it
    assert body["llvm.register_reduction"] == 1 and body["llvm.memory_reduction"] == 0
    assert body["llvm.accumulators"] == pytest.approx(lg(4 * 16))
    # 64 multiply-adds in 8 vector instructions per k; 4 broadcasts of A, two loads of B
    assert body["llvm.body_ops"] == pytest.approx(lg(8))
    assert body["llvm.body_loads"] == pytest.approx(lg(4 + 2))
    assert body["llvm.body_runs"] == pytest.approx(lg(16 * 4 * 64))
    # the 64 multiply-adds of a k are vector FMAs: 8 of 8 lanes (ymm) on an AVX2 host, 4 of
    # 16 (zmm) where the host has AVX-512
    lanes = {"%xmm": 4, "%ymm": 8, "%zmm": 16}
    fma = [ln for ln in assembly_lines(REGISTER_TILE)
           if ln.startswith("vfmadd") and ln.split()[0].endswith("ps")]
    assert sum(next(n for r, n in lanes.items() if r in ln) for ln in fma) >= 64


def test_a_short_reduction_loop_unrolls_and_the_loop_left_vectorizes():
    rows = extract(func_of(STENCIL))
    body = row_dict(rows[1])
    assert body["store.is_init"] == 0
    # k (3) is unrolled by the unroll count the code generator gives a reduction loop;
    # LLVM's loop vectorizer then widens j (16); the estimate counts its vector
    # instructions in 256-bit halves (8 floats), as Zen 4 executes them
    assert body["llvm.unrolled"] == pytest.approx(lg(3))
    assert body["llvm.kept_extent"] == pytest.approx(lg(16))
    assert body["llvm.auto_lanes"] == pytest.approx(lg(8))
    assert body["llvm.register_reduction"] == 0 and body["llvm.memory_reduction"] == 0
    assert body["llvm.body_ops"] == pytest.approx(lg(3))
    assert body["llvm.body_loads"] == pytest.approx(lg(3 + 1))   # A[vi + vk, vj] and B
    init = row_dict(rows[0])
    assert init["store.is_init"] == 1
    assert init["llvm.kept_extent"] == pytest.approx(lg(16))
    assert init["llvm.auto_lanes"] == pytest.approx(lg(8))
    ops = assembly(STENCIL)
    assert float_arith(ops, "ps") and not float_arith(ops, "ss")


def test_a_float_reduction_loop_stays_scalar():
    body = row_dict(extract(func_of(GEMV_8))[1])
    # k (8) is longer than the unroll count: it stays a loop, and without fast-math
    # LLVM does not reorder the sum to vectorize it
    assert body["llvm.kept_extent"] == pytest.approx(lg(8))
    assert body["llvm.auto_lanes"] == 0 and body["llvm.slp_lanes"] == 0
    assert body["llvm.lanes"] == pytest.approx(lg(1))
    assert body["llvm.register_reduction"] == 1
    assert body["llvm.accumulators"] == pytest.approx(lg(1))
    # one chain of 8 dependent adds per i; the out-of-order window overlaps 256 / (8 * 6)
    # of them (2 operations, 2 loads and the loop's 2 per iteration)
    assert body["cycles.latency"] == pytest.approx(lg(64 * 8 * 4 / (256 / 48)))
    ops = assembly(GEMV_8)
    assert float_arith(ops, "ss") and not float_arith(ops, "ps")


def test_a_strided_access_along_the_kept_loop_vectorizes_by_gathers():
    body = row_dict(extract(func_of(NARROW_TRANSPOSE))[0])
    assert body["llvm.kept_extent"] == pytest.approx(lg(4))
    assert body["llvm.auto_lanes"] == pytest.approx(lg(4))
    # B[vi, 0..3] is one vector store; A[0..3, vi] has the row stride: a lane at a time
    assert body["llvm.body_loads"] == pytest.approx(lg(1 + 4))
    assert body["llvm.body_gathers"] == pytest.approx(lg(4))
    # 64 runs of one vector store (half a cycle) and a gather of 4 lanes
    assert 2 ** body["cycles.throughput"] - 1 == pytest.approx(64 * (0.5 + 4 * GATHER_LANE))


ROWS_BY_VECTOR = '''@T.prim_func
def rv(A: T.Buffer((64, 32), "float32"), x: T.Buffer((32,), "float32"),
       y: T.Buffer((64,), "float32")):
    for i0, k in T.grid(4, 32):
        for i1 in T.vectorized(16):
            with T.block("y"):
                vi = T.axis.spatial(64, i0 * 16 + i1)
                vk = T.axis.reduce(32, k)
                with T.init():
                    y[vi] = T.float32(0)
                y[vi] = y[vi] + A[vi, vk] * x[vk]
'''


def test_a_vector_over_rows_gathers_its_loads():
    body = row_dict(extract(func_of(ROWS_BY_VECTOR))[1])
    # 16 lanes of A[vi, vk], a row (32 floats) apart: a gather; x[vk] the same for every
    # lane (a broadcast); y[vi] stays in a register across k, the loop left innermost
    assert body["llvm.vector_lanes"] == pytest.approx(lg(16))
    assert body["llvm.register_reduction"] == 1
    assert body["llvm.body_gathers"] == pytest.approx(lg(16))
    assert body["llvm.body_loads"] == pytest.approx(lg(16 + 1))
    assert 2 ** body["cycles.throughput"] - 1 == pytest.approx(
        4 * 32 * (1 / 2 + 16 * GATHER_LANE), rel=1e-4)


INTERLEAVED_ZERO = '''@T.prim_func
def iz(B: T.Buffer((1024,), "float32")):
    for i1 in range(128):
        for i2 in T.unroll(8):
            with T.block("B"):
                vi = T.axis.spatial(1024, i1 * 8 + i2)
                B[vi] = T.float32(0)
'''


def test_unrolled_copies_filling_the_lane_stride_are_not_a_gather():
    body = row_dict(extract(func_of(INTERLEAVED_ZERO))[0])
    # LLVM widens i1 (8 lanes, 8 elements apart) and the 8 unrolled stores fill the gap:
    # the group is stored whole, as vectors, not scattered
    assert body["llvm.auto_lanes"] == pytest.approx(lg(8))
    assert body["llvm.body_gathers"] == 0
    ops = assembly(INTERLEAVED_ZERO)
    assert not any(o.startswith("vscatter") for o in ops)


@pytest.mark.skipif("+avx512f" not in host_features(), reason="gathers and scatters of AVX-512")
def test_llvm_gathers_a_strided_load_on_avx512():
    assert any(o.startswith("vgather") for o in assembly(NARROW_TRANSPOSE))


def test_a_reduction_over_an_outer_loop_waits_on_memory():
    body = row_dict(extract(func_of(COLUMN_SUM))[1])
    # j is left innermost and vectorized; B[vj] is updated once per k, through memory
    assert body["llvm.auto_lanes"] == pytest.approx(lg(8))
    assert body["llvm.register_reduction"] == 0 and body["llvm.memory_reduction"] == 1
    assert body["cycles.latency"] == pytest.approx(lg(64 * 10))


SHARED = '''@T.prim_func
def sh(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for p in T.parallel(3):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi] + T.float32(1)
'''



def test_cycles_of_a_parallel_loop_that_does_not_move_the_store():
    rows = extract(func_of(SHARED))
    body, launch = row_dict(rows[0]), row_dict(rows[1])
    # all 3 iterations write B[0..15]: 48 stores to lines the other thread writes too
    assert body["cycles.shared_writes"] == pytest.approx(lg(48))
    core = 2 ** body["cycles.core"] - 1
    # 3 iterations on 2 threads: the longer chunk has 2 of them
    assert 2 ** body["cycles.thread"] - 1 == pytest.approx(core / 2 * (2 / 1.5), rel=1e-4)
    assert launch["cycles.thread"] == pytest.approx(lg(2500))      # one launch


def split_rows(chunks, chunk):
    """Y[l, :] written by a parallel loop of `chunks` chunks of `chunk` columns each."""
    n = chunks * chunk
    return func_of(f'''@T.prim_func
def sp(X: T.Buffer((8, {n}), "float32"), Y: T.Buffer((8, {n}), "float32")):
    for o_0 in T.parallel({chunks}):
        for l, o_1 in T.grid(8, {chunk}):
            with T.block("Y"):
                vl = T.axis.spatial(8, l)
                vo = T.axis.spatial({n}, o_0 * {chunk} + o_1)
                Y[vl, vo] = X[vl, vo] * T.float32(2)
''')


def test_threads_writing_parts_of_one_line_share_it():
    # two chunks of 24 floats (96 bytes) meet inside the second line of each 192-byte row:
    # 64 of the 192 bytes the parallel loop spans, a third of the stores. o_1 is
    # vectorized 8 wide: 2 x 8 x 24 / 8 = 48 body runs, 16 of them on the shared line
    body = row_dict(extract(split_rows(2, 24))[0])
    assert body["llvm.auto_lanes"] == pytest.approx(lg(8))
    assert body["cycles.split_lines"] == pytest.approx(lg(16))
    assert body["cycles.shared_writes"] == 0
    assert 2 ** body["cycles.core"] - 1 >= 40 * 16
    # chunks of 16 floats are whole lines: no line has two writers
    whole = row_dict(extract(split_rows(3, 16))[0])
    assert whole["cycles.split_lines"] == 0
    # 3 iterations of 8 floats on 2 threads: chunks of 2 and 1 iterations, 64 and 32 bytes,
    # each a whole number of lines or the end of the row
    assert row_dict(extract(split_rows(3, 8))[0])["cycles.split_lines"] == 0
    # 3 iterations of 12 floats: chunks of 96 and 48 bytes meet inside the second line,
    # 64 of the 144 bytes; o_1 (12) is vectorized 8 wide: 8 x 36 / 8 = 36 body runs
    odd = row_dict(extract(split_rows(3, 12))[0])
    assert 2 ** odd["cycles.split_lines"] - 1 == pytest.approx(36 * 64 / 144, rel=1e-4)


def test_a_walk_mapping_every_line_to_one_cache_set_misses_each_time():
    (row,) = extract(func_of(BIG_COPY))
    assert row_dict(row)["cycles.conflicts"] == 0          # rows: one line after another
    sch = tirkit.Schedule(func_of(BIG_COPY))
    i, j = sch.get_loops(sch.get_block("B"))
    sch.reorder(j, i)
    (row,) = extract(sch.mod.prim_funcs()[0][1])
    # down the columns of A and B: 4096 bytes apart, all 1024 lines of a column on one of
    # the 64 sets of 8 ways: every access of both misses
    assert row_dict(row)["cycles.conflicts"] == pytest.approx(lg(2 * 1024 * 1024))


MUL_MUL_ADD = '''@T.prim_func
def mma(A: T.Buffer((64, 64), "float32"), x: T.Buffer((64,), "float32"),
        y: T.Buffer((64,), "float32")):
    for i0, k0 in T.grid(4, 16):
        for i1 in T.unroll(16):
            for k1 in range(4):
                with T.block("y"):
                    vi = T.axis.spatial(64, i0 * 16 + i1)
                    vk = T.axis.reduce(64, k0 * 4 + k1)
                    with T.init():
                        y[vi] = T.float32(0)
                    y[vi] = y[vi] + A[vi, vk] * x[vk] * x[vk]
'''


def test_multiplies_take_the_multiply_pipes_and_adds_the_add_pipes():
    body = row_dict(extract(func_of(MUL_MUL_ADD))[1])
    # the body: k1 (4) unrolled inside the unrolled i1 (16), 64 elements of one lane, 16
    # accumulators; per element two multiplies on the two multiply pipes and one add on the
    # two add pipes: the multiplies bound it, 64 * 2 / 2 cycles a run (over all four pipes
    # the three would take 48), against 68 loads (64 of A, 4 of x) over two load pipes
    assert body["llvm.lanes"] == pytest.approx(lg(1))
    assert body["llvm.body_ops"] == pytest.approx(lg(64))
    assert body["llvm.accumulators"] == pytest.approx(lg(16))
    assert 2 ** body["cycles.throughput"] - 1 == pytest.approx(4 * 16 * 64, rel=1e-4)
    # LLVM fuses one multiply with the add of its product (on the multiply pipes); the
    # other multiply stays alone
    ops = assembly(MUL_MUL_ADD)
    assert any(o.startswith("vfmadd") for o in ops) and any(o.startswith("vmul") for o in ops)


CHAINED = '''@T.prim_func
def ch(A: T.Buffer((64, 64), "float32"), x: T.Buffer((64,), "float32"),
       y: T.Buffer((64,), "float32")):
    for i0, k0 in T.grid(16, 32):
        for i1 in T.unroll(4):
            for k1 in range(2):
                with T.block("y"):
                    vi = T.axis.spatial(64, i0 * 4 + i1)
                    vk = T.axis.reduce(64, k0 * 2 + k1)
                    with T.init():
                        y[vi] = T.float32(0)
                    y[vi] = y[vi] + A[vi, vk] * x[vk]
'''


def test_a_reduction_unrolled_into_the_body_chains_its_updates():
    body = row_dict(extract(func_of(CHAINED))[1])
    # 4 accumulators (i1), each updated twice in a run of the body (k1): two dependent adds
    # a run; the 32 runs of k0 in a row hold more instructions than the out-of-order window,
    # so the runs do not overlap: 16 * 32 runs of 2 * 4 cycles
    assert body["llvm.body_ops"] == pytest.approx(lg(8))
    assert body["llvm.accumulators"] == pytest.approx(lg(4))
    assert body["llvm.register_reduction"] == 1
    assert 2 ** body["cycles.latency"] - 1 == pytest.approx(16 * 32 * 2 * 4, rel=1e-4)
    assert body["cycles.core"] == body["cycles.latency"]


def column_sum(columns):
    """A column sum over a (256, 1024) matrix, `columns` contiguous columns summed at a time
    (the innermost loop) for each of the 256 rows."""
    return f'''@T.prim_func
def cs(A: T.Buffer((256, 1024), "float32"), B: T.Buffer((1024,), "float32")):
    for j0 in range({1024 // columns}):
        for k in range(256):
            for j1 in range({columns}):
                with T.block("B"):
                    vj = T.axis.spatial(1024, j0 * {columns} + j1)
                    vk = T.axis.reduce(256, k)
                    with T.init():
                        B[vj] = T.float32(0)
                    B[vj] = B[vj] + A[vk, vj]
'''


def test_runs_of_one_line_a_page_apart_are_scattered_lines():
    from tirkit.cost.cycles import CONFLICT, L2_LINE, MEMORY_LINE, SCATTERED_LINE
    # 16 columns: A and B (1 MiB and 4 KiB) do not fit the 1 MiB cache, one j0 iteration's
    # 256 rows of 16 elements (16 KiB) do; each row's 16 elements are one line and the next
    # row's line is 4 KiB further (k's stride): every line of A misses with no stream to
    # prefetch, 256 lines per j0, 64 times; B's 16 elements are one run with nothing after
    scattered = row_dict(extract(func_of(column_sum(16)))[1])
    assert 2 ** scattered["cache.l2_scattered"] - 1 == pytest.approx(256 * 64, rel=1e-4)
    assert 2 ** scattered["cache.l2_lines"] - 1 == pytest.approx((256 + 1) * 64, rel=1e-4)
    l1, l2, conflicts = (2 ** scattered[n] - 1 for n in
                         ("cache.l1_lines", "cache.l2_lines", "cycles.conflicts"))
    assert 2 ** scattered["cycles.memory"] - 1 == pytest.approx(
        L2_LINE * l1 + MEMORY_LINE * l2 + (SCATTERED_LINE - MEMORY_LINE) * 256 * 64
        + CONFLICT * conflicts, rel=1e-4)
    # 512 columns: each row's run is 32 lines, a stream the prefetcher follows
    streamed = row_dict(extract(func_of(column_sum(512)))[1])
    assert streamed["cache.l2_scattered"] == 0
    assert streamed["cache.l2_lines"] == pytest.approx(lg((256 * 32 + 32) * 2), rel=1e-4)


ALL_UNROLLED = '''@T.prim_func
def rs(A: T.Buffer((1024, 64), "float32"), B: T.Buffer((1024,), "float32")):
    for i0 in T.parallel(32):
        for i1, k0 in T.grid(32, 4):
            for k1 in T.unroll(16):
                with T.block("B"):
                    vi = T.axis.spatial(1024, i0 * 32 + i1)
                    vk = T.axis.reduce(64, k0 * 16 + k1)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
'''


def test_no_unroll_count_when_every_innermost_loop_holds_an_unrolled_one():
    from tirkit.codegen.llvm.pipeline import NO_UNROLL, choose
    assert choose(func_of(ALL_UNROLLED)) == NO_UNROLL
    body = row_dict(extract(func_of(ALL_UNROLLED))[1])
    # k1's 16 copies are the body; k0 (4 iterations, a reduction) gets no unroll count
    # from this pipeline, so it is the loop left innermost, carrying one accumulator
    assert body["llvm.unrolled"] == pytest.approx(lg(16))
    assert body["llvm.kept_extent"] == pytest.approx(lg(4))
    assert body["llvm.register_reduction"] == 1
    assert body["llvm.accumulators"] == pytest.approx(lg(1))
    assert body["llvm.body_runs"] == pytest.approx(lg(32 * 32 * 4))
    # the 16 dependent scalar adds of one run, in a loop of 4 (64 if k0 were unrolled)
    ops = assembly(ALL_UNROLLED)
    assert len([o for o in ops if o == "vaddss"]) == 16


MEMORY_CHAIN = '''@T.prim_func
def mc(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64,), "float32")):
    for i0, k0, i1 in T.grid(32, 4, 2):
        for k1 in T.unroll(16):
            with T.block("B"):
                vi = T.axis.spatial(64, i0 * 2 + i1)
                vk = T.axis.reduce(64, k0 * 16 + k1)
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
'''


def test_a_reduction_through_memory_waits_on_each_elements_chain_of_adds():
    body = row_dict(extract(func_of(MEMORY_CHAIN))[1])
    # k0 carries B[vi] through memory (i1 moves it, so the kept loop is no reduction); each
    # element's 64 updates are one chain of dependent adds, 16 in a run and the reload
    # forwarding the rest, and the chains side by side are the 2 elements i1 steps through
    # inside k0: 64 * 64 updates of 4 cycles over 2 chains (the forwarding alone: 32 * 4
    # iterations of k0 at 10 cycles)
    assert body["llvm.memory_reduction"] == 1 and body["llvm.register_reduction"] == 0
    assert 2 ** body["cycles.latency"] - 1 == pytest.approx(64 * 64 * 4 / 2, rel=1e-4)
    assert body["cycles.core"] == body["cycles.latency"]
    # LLVM emits the 2 elements' 16 dependent scalar adds of a run side by side
    ops = assembly(MEMORY_CHAIN)
    assert len([o for o in ops if o == "vaddss"]) == 2 * 16
