"""Thread-bound kernels on the CPU: the thread interpreter runs the CUDA lowering (barriers
included) and matches numpy; its race detector reports `thread/race` with both accesses and
both threads, for a racy kernel and for a barrier taken out of the lowering."""
import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from codegen_helpers import EXAMPLES
from test_cuda_codegen import thread_bound_kernels
from tirkit.codegen.cli import make_inputs
from tirkit.codegen.cuda import emit_cuda
from tirkit.codegen.cuda.threads import Race, run_threads
from tirkit.codegen.errors import RACE
from tirkit.diagnostics import TirkitError
from tirkit.script.parse import parse

ROOT = Path(__file__).resolve().parents[2]
RACY = ROOT / "tests" / "data" / "gpu" / "racy.py"


def _mm(a, b, dt):
    return a.astype(dt) @ b.astype(dt)


# kernel name -> (numpy reference of its outputs from its inputs, output index, tolerance)
REFERENCE = {
    "gpu_matmul": (lambda A, B, C: _mm(A, B, np.float64), 2, 1e-5),
    "gpu_add": (lambda A, B, C: A + B, 2, 0),
    "gpu_row_sum": (lambda A, B: A.astype(np.float64).sum(1), 1, 1e-5),
    "gpu_matmul_tiled": (lambda A, B, C: _mm(A, B, np.float64), 2, 1e-5),
    "gpu_matmul_f16": (lambda A, B, C: _mm(A, B, np.float64), 2, 1e-5),
    "gpu_matmul_i8": (lambda A, B, C: _mm(A, B, np.int32), 2, 0),
    "gpu_softplus_bf16": (lambda A, B: np.log(np.exp(A.astype(np.float64)) + 1), 1, 2e-2),
    "gpu_scale_launch": (lambda A, B: A * 2, 1, 0),
    # test_cuda_allreduce.py: TVM's lowered form, which the reference interpreter has not
    "allreduce_argmax": (lambda A, Idx, Val: A.max(1), 2, 0),
    "lowered_row_sum": (lambda A, B: A.astype(np.float64).sum(1), 1, 1e-5),
    "allreduce_argmax_warp": (lambda A, Idx, Val: A.max(2), 2, 0),
    # test_cuda_shuffle.py: warp shuffles, which the reference interpreter has not
    "lowered_warp_sum": (lambda A, B: A.astype(np.float64).sum(1), 1, 1e-5),
    "butterfly_max": (lambda A, B: np.repeat(A.reshape(4, 2, 16).max(2), 16, axis=1), 1, 0),
    "warp_scan": (lambda A, B: np.cumsum(A, axis=1), 1, 0),
    # test_codegen_attrs.py: a tree in shared memory, its barriers
    "volatile_tree": (lambda A, B: A.astype(np.float64).sum(1), 1, 1e-5),
    "rows_in_a_warp": (lambda A, B: A.astype(np.float64).sum(1), 1, 1e-5),
    "warp_transpose": (lambda A, B: A[:, np.arange(32) % 4 * 8 + np.arange(32) // 4], 1, 0),
    # test_codegen_compact.py: a shared tile below the threadIdx binding, read across threads
    "shared_tile_guarded": (lambda A, C: A[:, None] * np.array([1, 2], np.float32), 1, 0),
    "gpu_gemm_128": (lambda A, B, C: _mm(A, B, np.float64), 2, 1e-5),
    "gpu_wmma_gemm_128": (lambda A, B, C: _mm(A, B, np.float64), 2, 1e-5),
    "wmma_i8": (lambda A, B, C: _mm(A, B.T, np.int64), 2, 0),
    "mma_m16n8k16": (lambda A, B, C: _mm(A, B, np.float64), 2, 1e-5),
    "gpu_shift_vec": (lambda A, B: np.roll(A.reshape(4, 256), -4, axis=1).reshape(-1) * 2, 1,
                      0),
    # test_codegen_operator_calls.py: a barrier spelled T.call_intrin
    "call_intrin_barrier": (lambda A, B: A[::-1], 1, 0),
    # test_cuda_ptx.py: PTX's scalar arithmetic and griddepcontrol
    "ptx_scalar_math": (lambda A, B, C: np.stack([A + B, A * B, np.maximum(A, B),
                                                  np.minimum(A, B)]), 2, 0),
    # tests/server/test_ptx_editor.py: A's fragments through ldmatrix, then one mma
    "ldmatrix_mma": (lambda A, B, C: _mm(A, B, np.float64), 2, 1e-5),
}
# the 1024x1024 product runs a sample of its thread blocks (the others stay untouched)
SAMPLED = {"gpu_matmul": 1}


# the benchmark GEMM at 4096^3 is gpu_gemm_128's code at another size: the CPU runs that one
BENCHMARK_ONLY = {"gpu_gemm_4096", "gpu_wmma_gemm_4096"}


def _valid_kernels():
    return [k for k in thread_bound_kernels() if k[0] != RACY and k[1] not in BENCHMARK_ONLY]


def _check_against_numpy(name, func, module, seed=1):
    ref_fn, out, tol = REFERENCE[name]
    arrays = make_inputs(func, np.random.default_rng(seed))
    inputs = [a.copy() for a in arrays]
    it = run_threads(func, arrays, module=module, blocks=SAMPLED.get(name))
    want = ref_fn(*inputs)
    got = arrays[out]
    mask = it.written_mask(got)
    assert mask is not None and mask.any()
    if name not in SAMPLED:
        assert mask.all()                        # every output element written
    g, w = got[mask].astype(np.float64), np.asarray(want)[mask].astype(np.float64)
    assert not np.isnan(g).any()
    err = np.max(np.abs(g - w)) / max(np.max(np.abs(w)), 1e-30)
    assert err <= tol, err
    return it


def test_every_valid_thread_bound_kernel_has_a_reference():
    names = {n for _, n, _, _ in _valid_kernels()}
    assert names and names <= set(REFERENCE), sorted(names - set(REFERENCE))


# every kernel against numpy: test_cuda_corpus.py


def test_shared_matmul_matches_numpy_without_a_race_report():
    """The 1024x1024 shared-memory GEMM (one sampled block: 1024 threads, 64 barriers)."""
    path = EXAMPLES / "valid" / "gpu_matmul_shared.py"
    r = parse(path.read_text(), str(path))
    it = _check_against_numpy("gpu_matmul", dict(r.module.prim_funcs())["gpu_matmul"],
                              r.module)
    assert it.blocks_run == 1 and it.barriers == 64
    assert it.thread_extents == {"threadIdx.y": 32, "threadIdx.x": 32}


def _race(path, name, **kw):
    r = parse(Path(path).read_text(), str(path))
    f = dict(r.module.prim_funcs())[name]
    arrays = make_inputs(f, np.random.default_rng(3))
    with pytest.raises(Race) as exc:
        run_threads(f, arrays, module=r.module, **kw)
    (d,) = exc.value.diagnostics
    assert d.code == RACE and d.severity == "error"
    (rel_span, rel_msg), = d.related
    return d, rel_span, rel_msg


def test_racy_kernel_reports_both_statements_and_threads():
    d, other, msg = _race(RACY, "racy_neighbour_under_condition")
    assert (d.span.line, d.span.column) == (31, 21)          # the read of S[tx + 1]
    assert other.line == 30                                  # the write of S[tx]
    assert "threadIdx.x=0" in d.message and "threadIdx.x=1" in d.message
    assert "threadIdx.x=1" in msg


def test_write_write_race_with_different_values():
    d, other, _ = _race(RACY, "racy_shared_scalar")
    assert d.span.line == other.line == 12
    assert "blockIdx.x=0" in d.message


def test_read_modify_write_race_on_global_memory():
    d, other, _ = _race(RACY, "racy_global")
    assert d.span.line == 20 and other.line == 20
    assert (other.column, d.span.column) == (16, 9)          # B[0] read, then written


@pytest.mark.parametrize("path,name,write_line,read_line", [
    (ROOT / "examples" / "gpu_row_sum.py", "gpu_row_sum", 11, 14),
    (ROOT / "examples" / "gpu_matmul_tiled.py", "gpu_matmul_tiled", 22, 26),
])
def test_missing_barrier_is_reported(path, name, write_line, read_line):
    """With the barrier insertion left out of the lowering, the same kernel races: the
    generated code would be wrong, and the interpreter says where."""
    d, other, _ = _race(path, name, skip=("insert_syncs",))
    assert {d.span.line, other.line} == {write_line, read_line}


def test_run_command_says_it_ran_on_the_cpu(tmp_path):
    env_path = f"{ROOT / 'language'}"
    import os
    env = dict(os.environ, PYTHONPATH=env_path)
    ok = subprocess.run([sys.executable, "-m", "tirkit.cli", "run", "--check",
                         str(ROOT / "examples" / "gpu_row_sum.py")], capture_output=True,
                        text=True, timeout=300, env=env)
    assert ok.returncode == 0, ok.stderr
    assert "no GPU here: ran in the thread interpreter on the CPU (64 of 64 block(s) of " \
        "128 thread(s)" in ok.stdout and "no data race" in ok.stdout

    def run_racy(path):
        return subprocess.run([sys.executable, "-m", "tirkit.cli", "run", "--check", str(path),
                               "--func", "racy_neighbour_under_condition"],
                              capture_output=True, text=True, timeout=300, env=env)
    # the rules see the read of `S` that the block's writes do not cover: not run
    bad = run_racy(RACY)
    assert bad.returncode == 1 and bad.stdout == ""
    assert f"{RACY}:31:21: error: reads `S` over [1, 64]" in bad.stderr
    assert "[thread/cooperative-coverage]" in bad.stderr and "[thread/race]" not in bad.stderr
    # with that error silenced, the thread interpreter runs it and finds the race
    lines = RACY.read_text().split("\n")
    lines[30] += "  # tirkit: ignore[thread/cooperative-coverage]"
    silenced = tmp_path / "racy.py"
    silenced.write_text("\n".join(lines))
    bad = run_racy(silenced)
    assert bad.returncode == 1
    assert f"{silenced}:31:21: error: data race" in bad.stderr and "[thread/race]" in bad.stderr
    assert f"{silenced}:30:13: thread (threadIdx.x=1) wrote" in bad.stderr


def test_bfloat16_inputs_are_bfloat16():
    assert any(a.dtype == ml_dtypes.bfloat16 for _, n, f, _ in _valid_kernels()
               if n == "gpu_softplus_bf16" for a in make_inputs(f, np.random.default_rng(0)))


def test_two_blocks_writing_one_element_race():
    d, other, msg = _race(RACY, "racy_blocks_overlap")
    assert d.span.line == other.line == 39
    assert "between blocks (blockIdx.x=3) and (blockIdx.x=0)" in d.message
    assert "threadIdx.x=64" in d.message and "of block (blockIdx.x=0)" in msg


WMMA = ROOT / "benchmarks" / "gpu_kernels" / "wmma_gemm.py"


def test_wmma_gemm_matches_numpy_and_needs_its_barriers():
    """The fp16 tensor-core GEMM: each wmma call runs as the tile operation of its warp;
    without the inserted barriers the warps read shared tiles other threads still write."""
    r = parse(WMMA.read_text(), str(WMMA))
    f = dict(r.module.prim_funcs())["gpu_wmma_gemm_128"]
    it = _check_against_numpy("gpu_wmma_gemm_128", f, r.module, seed=5)
    assert it.barriers == 8 and it.thread_extents == {"threadIdx.y": 8, "threadIdx.x": 32}
    d, other, _ = _race(WMMA, "gpu_wmma_gemm_128", skip=("insert_syncs",))
    assert {d.span.line, other.line} <= {_line(WMMA, "tvm_load_matrix_sync(A_frag"),
                                         _line(WMMA, "A_shared[(i * 256"),
                                         _line(WMMA, "tvm_load_matrix_sync(B_frag"),
                                         _line(WMMA, "B_shared[(i * 256")}
    assert d.span.line != other.line


def _line(path, needle):
    return next(n for n, t in enumerate(Path(path).read_text().splitlines(), 1) if needle in t)


INT8_WMMA = '''from tvm.script import tir as T


@T.prim_func
def wmma_i8(A: T.Buffer((16, 16), "int8"), B: T.Buffer((16, 16), "int8"),
            C: T.Buffer((16, 16), "int32")):
    A_frag = T.alloc_buffer((16, 16), "int8", scope="wmma.matrix_a")
    B_frag = T.alloc_buffer((16, 16), "int8", scope="wmma.matrix_b")
    C_frag = T.alloc_buffer((16, 16), "int32", scope="wmma.accumulator")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        T.evaluate(T.tvm_fill_fragment(C_frag.data, 16, 16, 16, 0, 0))
        T.evaluate(T.tvm_load_matrix_sync(A_frag.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation("int8"), A.data, 0, 256, 1), 16, "row_major"))
        T.evaluate(T.tvm_load_matrix_sync(B_frag.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation("int8"), B.data, 0, 256, 1), 16, "col_major"))
        T.evaluate(T.tvm_mma_sync(C_frag.data, 0, A_frag.data, 0, B_frag.data, 0, C_frag.data, 0))
        T.evaluate(T.tvm_store_matrix_sync(C_frag.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation("int32"), C.data, 0, 256, 2), 16, "row_major"))
'''


def test_wmma_int8_with_a_column_major_b():
    r = parse(INT8_WMMA, "i8.py")
    (_, f), = r.module.prim_funcs()
    arrays = make_inputs(f, np.random.default_rng(4))
    A, B = arrays[0].astype(np.int64), arrays[1].astype(np.int64)
    run_threads(f, arrays, module=r.module)
    np.testing.assert_array_equal(arrays[2], A @ B.T)       # B read column-major


def _wmma_refusal(old, new):
    """The one diagnostic the thread interpreter stops with on INT8_WMMA changed at `old`."""
    assert old in INT8_WMMA
    r = parse(INT8_WMMA.replace(old, new), "i8.py")
    (_, f), = r.module.prim_funcs()
    with pytest.raises(TirkitError) as e:
        run_threads(f, make_inputs(f, np.random.default_rng(4)), module=r.module)
    (d,) = e.value.diagnostics
    return d


@pytest.mark.parametrize("old, new, message", [
    ("tvm_store_matrix_sync(C_frag.data, 16, 16, 16", "tvm_store_matrix_sync(C_frag.data, 0, 16, 16",
     "T.tvm_store_matrix_sync with m, n, k = 0, 16, 16: wmma fragments are m16n16k16"),
    ("tvm_fill_fragment(C_frag.data, 16, 16, 16", "tvm_fill_fragment(C_frag.data, 32, 8, 16",
     "T.tvm_store_matrix_sync uses 'C_frag' as an m16n16k16 fragment, another call as m32n8k16"),
    ("tvm_store_matrix_sync(C_frag.data, 16, 16, 16", "tvm_store_matrix_sync(C_frag.data, 16, "
     "16 + tx, 16", "T.tvm_store_matrix_sync needs constant m, n, k"),
])
def test_a_fragment_shape_wmma_does_not_have_is_refused(old, new, message):
    """A fuzzed kernel (m = 0 in a store) reached numpy's broadcasting as an internal error."""
    d = _wmma_refusal(old, new)
    assert d.code == "codegen/unsupported" and d.message.startswith(message)
    assert d.span.line == 15                       # the store


@pytest.mark.parametrize("old, new, message", [
    ("tvm_load_matrix_sync(A_frag.data, 16, 16, 16, 0,", "tvm_load_matrix_sync(A_frag.data, 16, "
     "16, 16, 1,", "T.tvm_load_matrix_sync reaches outside fragment 'A_frag': element 511, but its "
     "storage holds 256"),
    ("T.type_annotation(\"int8\"), A.data, 0, 256, 1)", "T.type_annotation(\"int8\"), A.data, "
     "16, 256, 1)", "T.tvm_load_matrix_sync reaches outside 'A': element 271, but its storage "
     "holds 256"),
])
def test_a_wmma_tile_outside_its_storage_is_out_of_bounds(old, new, message):
    """A fuzzed kernel (a fragment index past its tiles) reached numpy's indexing as an
    internal error."""
    d = _wmma_refusal(old, new)
    assert (d.code, d.message, d.span.line) == ("bounds/out-of-bounds", message, 12)


PTX_MMA = '''from tvm.script import tir as T


@T.prim_func
def mma_m16n8k16(A: T.Buffer((16, 16), "float16"), B: T.Buffer((16, 16), "float16"),
                 C: T.Buffer((16, 16), "float32")):
    a = T.alloc_buffer((8,), "float16", scope="local")
    b = T.alloc_buffer((8,), "float16", scope="local")
    c = T.alloc_buffer((8,), "float32", scope="local")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        for i in range(8):
            a[i] = A[tx // 4 + i // 2 % 2 * 8, tx % 4 * 2 + i % 2 + i // 4 * 8]
        for h, i in T.grid(2, 4):
            b[h * 4 + i] = B[tx % 4 * 2 + i % 2 + i // 2 * 8, h * 8 + tx // 4]
        for i in range(8):
            c[i] = T.float32(0)
        for h in range(2):
            T.evaluate(T.ptx_mma("m16n8k16", "row", "col", "fp16", "fp16", "fp32", a.data, 0, b.data, h * 4, c.data, h * 4, False, dtype="float32"))
        for h, i in T.grid(2, 4):
            C[tx // 4 + i // 2 * 8, h * 8 + tx % 4 * 2 + i % 2] = c[h * 4 + i]
'''


def test_ptx_mma_assembles_the_warp_tiles_from_registers():
    """T.ptx_mma m16n8k16: each thread loads its A/B registers in PTX's fragment layout;
    two mma.sync over the two 8-column halves give the 16x16 product."""
    r = parse(PTX_MMA, "mma.py")
    (_, f), = r.module.prim_funcs()
    _check_against_numpy("mma_m16n8k16", f, r.module, seed=2)
    # registers that break the layout (each thread's A registers shifted) give a wrong tile
    bad = PTX_MMA.replace("a[i] = A[tx // 4", "a[i] = A[(tx + 1) % 32 // 4").replace(
        "def mma_m16n8k16", "def mma_wrong_layout")
    r = parse(bad, "bad.py")
    (_, f), = r.module.prim_funcs()
    arrays = make_inputs(f, np.random.default_rng(2))
    A, B = arrays[0].astype(np.float64), arrays[1].astype(np.float64)
    run_threads(f, arrays, module=r.module)
    assert not np.allclose(arrays[2], A @ B, rtol=1e-3)


def test_a_launch_without_threads_is_refused_by_the_thread_interpreter():
    """threadIdx.x over 0 threads: CUDA refuses the launch, and so does the interpreter
    (it divided by the extent)."""
    text = (ROOT / "examples" / "gpu_row_sum.py").read_text()
    module = parse(text.replace('T.thread_binding(128, thread="threadIdx.x")',
                                'T.thread_binding(0, thread="threadIdx.x")')).module
    ((_, f),) = module.prim_funcs()
    arrays = make_inputs(f, np.random.default_rng(0))
    with pytest.raises(TirkitError) as e:
        run_threads(f, arrays, module=module)
    (d,) = e.value.diagnostics
    assert (d.code, d.message) == ("thread/launch-limit", "threadIdx.x extent 0: a launch "
                                   "needs at least one thread in each dimension")


def test_a_division_by_zero_in_a_thread_stops_at_the_division(tmp_path):
    """The thread interpreter stops at an integer division by 0 with the compiled code's
    diagnostic, instead of running on with numpy's 0."""
    src = '''from tvm.script import tir as T


@T.prim_func
def shares(A: T.Buffer((64,), "int32"), D: T.Buffer((64,), "int32"),
           B: T.Buffer((64,), "int32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(64, bx * 32 + tx)
                B[vi] = A[vi] // D[vi]
'''
    module = parse(src).module
    ((_, f),) = module.prim_funcs()
    rng = np.random.default_rng(5)
    a = rng.integers(-100, 100, 64).astype("int32")
    d = rng.choice([-9, -4, -1, 1, 3, 7], 64).astype("int32")
    b = np.full(64, 7, "int32")
    run_threads(f, [a, d, b], module=module)
    assert np.array_equal(b, a // d)
    d[37] = 0                                   # one thread of the second block divides by 0
    with pytest.raises(TirkitError) as e:
        run_threads(f, [a, d, b], module=module)
    (diag,) = e.value.diagnostics
    assert diag.code == "arith/division-by-zero" and diag.span.line == 11
    assert diag.message.startswith("divides by zero: `D[")


def test_vectors_inside_threads_run_lane_by_lane_and_race_check(tmp_path):
    """The thread interpreter runs a vector store inside a thread with each of its lanes as a
    lane (a slice in a thread-bound kernel had reached numpy's broadcasting as an internal
    error); a vector store overlapping another thread's is a race.  A kernel without
    blockIdx runs one block, and the report counts it."""
    src = '''from tvm.script import tir as T


@T.prim_func
def quads(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        B[tx * 4:tx * 4 + 4] = A[T.Ramp(64 + tx, 1, 4)] * T.Broadcast(A[tx], 4) + T.Broadcast(T.float32(1), 4)


@T.prim_func
def overlapping(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        B[tx * 3:tx * 3 + 4] = A[tx * 4:tx * 4 + 4]
'''
    r = parse(src)
    (_, quads), (_, overlapping) = r.module.prim_funcs()
    a = np.random.default_rng(6).uniform(0.5, 1.5, 128).astype("float32")
    b = np.zeros(128, "float32")
    it = run_threads(quads, [a, b], module=r.module)
    want = np.stack([a[64 + t:68 + t] for t in range(32)]).reshape(-1) * np.repeat(a[:32], 4) + 1
    np.testing.assert_allclose(b, want, rtol=1e-6)
    assert it.blocks_run == 1
    with pytest.raises(Race) as e:
        run_threads(overlapping, [a, np.zeros(128, "float32")], module=r.module)
    (d,) = e.value.diagnostics
    assert d.code == RACE and d.span.line == 13
    path = tmp_path / "k.py"
    path.write_text(src)
    import os
    out = subprocess.run([sys.executable, "-m", "tirkit.cli", "run", "--check", str(path),
                          "--func", "quads"], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=str(ROOT / "language")))
    assert out.returncode == 0, out.stderr
    assert "quads: no GPU here: ran in the thread interpreter on the CPU (1 of 1 block(s) " \
        "of 32 thread(s)" in out.stdout


def test_a_tag_bound_again_inside_its_loop_is_the_same_thread():
    """TVM's lowering of auto-copy blocks binds `threadIdx.y` again inside a block under the
    loop that binds it: one index, as CUDA has one `threadIdx.y` (the generated C reads it
    twice).  The thread interpreter made the inner loop a second dimension of threads: 8
    threads added to each element, a race."""
    src = '''from tvm.script import tir as T


@T.prim_func
def staged(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    for ty in T.thread_binding(8, thread="threadIdx.y"):
        with T.block("copy"):
            T.reads(A[0:256], B[0:256])
            T.writes(B[0:256])
            for ty_1 in T.thread_binding(8, thread="threadIdx.y"):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    B[ty_1 * 32 + tx] = B[ty_1 * 32 + tx] + A[255 - ty_1 * 32 - tx] * T.float32(3)
'''
    r = parse(src)
    assert [d for d in r.diagnostics if d.severity == "error"] == []
    ((_, f),) = r.module.prim_funcs()
    a = np.random.default_rng(9).uniform(0.5, 1.5, 256).astype("float32")
    b = np.random.default_rng(10).uniform(0.5, 1.5, 256).astype("float32")
    want = b + a[::-1] * 3
    it = run_threads(f, [a, b], module=r.module)
    np.testing.assert_allclose(b, want, rtol=1e-6)
    assert it.thread_extents == {"threadIdx.y": 8, "threadIdx.x": 32}
    code = emit_cuda(f, r.module).code
    assert code.count("(int)threadIdx.y") == 2 and "__launch_bounds__(256)" in code


def test_a_block_tag_launched_and_bound_again_is_the_same_block():
    """`T.launch_thread(i, 64)` for blockIdx.x, then a loop bound to blockIdx.x inside it
    (TVMScript's `T.env_thread` test kernel): one block index, as CUDA has one `blockIdx.x`.
    The thread interpreter ran a grid of 64 x 64 blocks, each writing every row once per
    outer block: a race between blocks, and a second pass over B's rows."""
    src = '''from tvm.script import tir as T


@T.prim_func
def rows(A: T.Buffer((64, 8), "float32"), B: T.Buffer((64, 8), "float32"), C: T.Buffer((64, 8), "float32")):
    i = T.env_thread("blockIdx.x")
    j = T.env_thread("threadIdx.x")
    T.launch_thread(i, 64)
    T.launch_thread(j, 8)
    for bx in T.thread_binding(0, 48, "blockIdx.x"):
        for tx in T.thread_binding(0, 8, "threadIdx.x"):
            B[bx, tx] = A[bx, tx] * T.float32(2)
            C[bx, tx] = B[bx, tx] + T.float32(1)
'''
    r = parse(src)
    assert [d for d in r.diagnostics if d.severity == "error"] == []
    ((_, f),) = r.module.prim_funcs()
    rng = np.random.default_rng(12)
    a, b, c = (rng.uniform(0.5, 1.5, (64, 8)).astype("float32") for _ in range(3))
    want_b, want_c = b.copy(), c.copy()
    want_b[:48] = a[:48] * 2              # blocks 48 to 63 skip the inner loop's body
    want_c[:48] = want_b[:48] + 1
    it = run_threads(f, [a, b, c], module=r.module)
    np.testing.assert_allclose(b, want_b, rtol=1e-6)
    np.testing.assert_allclose(c, want_c, rtol=1e-6)
    assert it.blocks_run == 64 and it.thread_extents == {"threadIdx.x": 8}
    code = emit_cuda(f, r.module).code
    assert "if (blockIdx.x < 48)" in code.replace("(int)", "")
    # bound twice by loops, one directly in the other: each block counted once
    nested = parse('''from tvm.script import tir as T


@T.prim_func
def rows(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for bx2 in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                B[bx2, tx] = A[bx2, 7 - tx] * T.float32(2)
''')
    ((_, g),) = nested.module.prim_funcs()
    a, b = rng.uniform(0.5, 1.5, (4, 8)).astype("float32"), np.zeros((4, 8), "float32")
    assert run_threads(g, [a, b], module=nested.module).blocks_run == 4
    np.testing.assert_allclose(b, a[:, ::-1] * 2, rtol=1e-6)


def test_a_local_buffer_declared_above_the_thread_launches_is_one_per_thread():
    """`T.decl_buffer(..., scope="local")` between the blockIdx and threadIdx launches (as
    TVM's older lowered kernels declare their register tiles): each thread has its own, as
    CUDA declares it inside the kernel.  The thread interpreter gave the block one copy,
    and reported the threads' writes to it as a race."""
    src = '''from tvm.script import tir as T


@T.prim_func
def staged(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4, 32), "float32")):
    bx = T.env_thread("blockIdx.x")
    tx = T.env_thread("threadIdx.x")
    T.launch_thread(bx, 4)
    acc = T.decl_buffer((2,), "float32", scope="local")
    T.launch_thread(tx, 32)
    acc[0] = A[bx, tx] * T.float32(2)
    acc[1] = acc[0] + A[bx, 31 - tx]
    B[bx, tx] = acc[1]
'''
    r = parse(src)
    assert [d for d in r.diagnostics if d.severity == "error"] == []
    ((_, f),) = r.module.prim_funcs()
    rng = np.random.default_rng(13)
    a = rng.uniform(0.5, 1.5, (4, 32)).astype("float32")
    b = np.zeros((4, 32), "float32")
    run_threads(f, [a, b], module=r.module)
    np.testing.assert_allclose(b, a * 2 + a[:, ::-1], rtol=1e-6)
    code = emit_cuda(f, r.module).code
    assert code.index("float acc[2];") > code.index("threadIdx.x;")


def test_virtual_threads_interleave_the_statements_that_depend_on_them():
    """A vthread binding runs each statement that depends on it once per virtual thread, in
    place, as TVM's InjectVirtualThread does; it is not a loop around its body.  Here every
    thread copies the whole shared tile out after the virtual threads fill it (an auto-copy
    block before its lowering): as a loop, the copy ran after each virtual thread's row,
    the first time with row 1 not yet written, and the threads' differing writes of C were
    reported as a race."""
    src = '''from tvm.script import tir as T


@T.prim_func
def tile(A: T.Buffer((2, 8), "float32"), C: T.Buffer((2, 8), "float32")):
    S = T.alloc_buffer((2, 8), "float32", scope="shared")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for v in T.thread_binding(2, thread="vthread.x"):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                S[v, tx] = A[v, tx] * T.float32(2)
                for i, j in T.grid(2, 8):
                    C[i, j] = S[i, j] + T.float32(1)
'''
    r = parse(src)
    assert [d for d in r.diagnostics if d.severity == "error"] == []
    ((_, f),) = r.module.prim_funcs()
    a = np.random.default_rng(14).uniform(0.5, 1.5, (2, 8)).astype("float32")
    c = np.zeros((2, 8), "float32")
    run_threads(f, [a, c], module=r.module)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)
    code = emit_cuda(f, r.module).code
    fill = code.index("for (int v = 0; v < 2; ++v) {\n        S[((v * 8) + tx)] = ")
    assert fill < code.index("__syncthreads();") < code.index("for (int i = 0;")
    assert "for (int v_1 = 0; v_1 < 2; ++v_1) {\n            C[((i * 8) + j)] = " in code


BIG = '''from tvm.script import tir as T


@T.prim_func
def big_buffer(A: T.Buffer((134217728,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            A[bx * 32 + tx] = A[bx * 32 + tx] * T.float32(2)
'''


def test_race_records_that_would_not_fit_are_a_diagnostic(tmp_path):
    """The race detector keeps 81 bytes for each element of a buffer the kernel touches:
    10 GiB for this 512 MiB buffer, past the 6 GiB address space the run gets."""
    path = tmp_path / "big.py"
    path.write_text(BIG)
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'language'}{os.pathsep}{ROOT / 'server'}",
               TIRKIT_CACHE_DIR=str(tmp_path / "cache"))
    res = subprocess.run(["bash", "-c", f"ulimit -v 6291456; exec {sys.executable} -m "
                          f"tirkit.cli run {path}"], env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "big.py:8:31: error: the race detector keeps 81 bytes for each element" \
        in res.stderr and "[codegen/argument]" in res.stderr
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr
