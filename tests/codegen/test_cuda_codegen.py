"""CUDA C generation: launch extents from the thread bindings, shared and local storage,
barriers where threads exchange data through shared memory, dtypes, the `tirkit build`
command (test_cuda_corpus.py compiles every thread-bound kernel with nvcc)."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from codegen_helpers import EXAMPLES
from tirkit.codegen.cuda import emit_cuda, is_thread_bound
from tirkit.codegen.cuda.exprs import PRELUDE
from tirkit.diagnostics import TirkitError
from tirkit.script.parse import parse

ROOT = Path(__file__).resolve().parents[2]
GPU_FILES = sorted(EXAMPLES.glob("valid/*.py")) + sorted((ROOT / "examples").glob("*.py")) + \
    sorted((ROOT / "tests" / "data" / "gpu").glob("*.py")) + \
    sorted((ROOT / "benchmarks" / "gpu_kernels").glob("*.py"))


def thread_bound_kernels():
    out = []
    for path in GPU_FILES:
        r = parse(path.read_text(), str(path))
        for name, f in r.module.prim_funcs():
            if is_thread_bound(f):
                out.append((path, name, f, r.module))
    return out


def _kernel(path, name):
    r = parse(Path(path).read_text(), str(path))
    return dict(r.module.prim_funcs())[name], r.module


def test_the_corpus_has_thread_bound_kernels():
    names = {n for _, n, _, _ in thread_bound_kernels()}
    assert {"gpu_matmul", "gpu_add", "gpu_row_sum", "gpu_matmul_tiled", "gpu_matmul_f16",
            "gpu_matmul_i8", "gpu_softplus_bf16", "gpu_scale_launch", "gpu_shift_vec"} <= names


def test_shared_matmul_launch_storage_and_barriers():
    f, m = _kernel(EXAMPLES / "valid" / "gpu_matmul_shared.py", "gpu_matmul")
    src = emit_cuda(f, m)
    (k,) = src.kernels
    assert (k.grid, k.block) == ((32, 32, 1), (32, 32, 1))
    assert k.params == ["A", "B", "C"]
    code = src.code
    # the 1024x1024 shared buffers shrink to one 32x32 tile per block
    assert re.search(r"__shared__ .*float A_shared\[1024\];", code)
    assert re.search(r"__shared__ .*float B_shared\[1024\];", code)
    loop = code[code.index("for (int k_0"):]
    # one barrier before the tiles are overwritten, one before they are read
    assert loop.count("__syncthreads();") == 2
    assert loop.index("__syncthreads()") < loop.index("A_shared[") < \
        loop.rindex("__syncthreads()") < loop.index("for (int k_1")
    assert "int tx = (int)threadIdx.x;" in code and "int by = (int)blockIdx.y;" in code


def test_reduction_barriers_inside_the_tree_loop():
    f, m = _kernel(ROOT / "examples" / "gpu_row_sum.py", "gpu_row_sum")
    code = emit_cuda(f, m).code
    body = code[code.index("for (int s"):]
    loop = body[:body.index("\n      }\n")]            # the loop's own body
    assert loop.count("__syncthreads();") == 1        # each step waits for the previous one
    assert body.count("__syncthreads();") == 2          # and the result waits for the last
    assert body.rindex("__syncthreads();") < body.index("if ((tx == 0))")
    assert emit_cuda(f, m, skip=("insert_syncs",)).code.count("__syncthreads") == 0


def test_local_tile_vthread_and_dtypes():
    path = ROOT / "examples" / "gpu_matmul_tiled.py"
    f, m = _kernel(path, "gpu_matmul_tiled")
    src = emit_cuda(f, m)
    assert (src.kernels[0].grid, src.kernels[0].block) == ((2, 2, 1), (8, 8, 1))
    code = src.code
    assert "float C_local[16];" in code                  # 2x4 registers per virtual thread
    # virtual threads interleave the statements that depend on them, as TVM injects them:
    # the copies to shared memory run once per thread, the accumulation once per vy
    k_loop = code[code.index("for (int k_0"):code.index("for (int i_2")]
    assert "vy" not in k_loop[:k_loop.index("for (int k_1")]
    assert "for (int vy_1 = 0; vy_1 < 2; ++vy_1) {\n" \
        "                    C_local[(((i_1 * 4) + j_1) + (vy_1 * 8))] = " in k_loop
    assert re.search(r"__shared__ .*float A_shared\[256\];", code)
    f16 = emit_cuda(*_kernel(path, "gpu_matmul_f16")).code
    assert "half* __restrict__ A" in f16 and "__half2float(A[" in f16
    i8 = emit_cuda(*_kernel(path, "gpu_matmul_i8")).code
    assert "signed char* __restrict__ A" in i8 and "((int)(A[" in i8
    bf = emit_cuda(*_kernel(path, "gpu_softplus_bf16")).code
    assert "nv_bfloat16* __restrict__ A" in bf and "logf(" in bf and "expf(" in bf


def test_vector_loads_and_stores_and_launch_thread():
    code = emit_cuda(*_kernel(ROOT / "examples" / "gpu_shift_vec.py", "gpu_shift_vec")).code
    assert code.count("const float4 vec") == 2
    assert code.count("*(float4*)(") == 2 and "(vec0_1.w * 2.0f)" in code
    assert code.index("*(float4*)(S") < code.index("__syncthreads();") < \
        code.index("(const float4*)(S")
    src = emit_cuda(*_kernel(ROOT / "examples" / "gpu_launch_thread.py", "gpu_scale_launch"))
    assert (src.kernels[0].grid, src.kernels[0].block) == ((2, 1, 1), (128, 1, 1))
    assert "int tx = (int)threadIdx.x;" in src.code


def test_build_command_writes_cuda(tmp_path):
    out = tmp_path / "k.cu"
    r = subprocess.run([sys.executable, "-m", "tirkit.cli", "build",
                        str(ROOT / "examples" / "gpu_matmul_tiled.py"), "--target", "cuda",
                        "--emit", "cuda", "-o", str(out)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert text.startswith(PRELUDE)
    assert len(re.findall(r"__global__ void", text)) == 4
    r = subprocess.run([sys.executable, "-m", "tirkit.cli", "build",
                        str(EXAMPLES / "valid" / "matmul.py"), "--target", "cuda"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "no thread-bound kernel" in r.stderr


def test_global_intermediate_outside_the_kernel_is_a_diagnostic(tmp_path):
    src = tmp_path / "k.py"
    src.write_text('''from tvm.script import tir as T


@T.prim_func
def two_kernels(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    T.func_attr({"global_symbol": "two_kernels", "tir.noalias": True})
    Tmp = T.alloc_buffer((128,), "float32")
    for tx in T.thread_binding(128, thread="threadIdx.x"):
        Tmp[tx] = A[tx] * T.float32(2)
    for tx in T.thread_binding(128, thread="threadIdx.x"):
        B[tx] = Tmp[127 - tx]
''')
    r = subprocess.run([sys.executable, "-m", "tirkit.cli", "build", str(src), "--target",
                        "cuda"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert "[codegen/unsupported]" in r.stderr and "Traceback" not in r.stderr
    assert f"{src}:7:5: error: buffer 'Tmp'" in r.stderr


def test_warp_scope_buffer_is_refused_with_its_location():
    text = '''from tvm.script import tir as T


@T.prim_func
def warp_buf(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    T.func_attr({"global_symbol": "warp_buf", "tir.noalias": True})
    W = T.alloc_buffer((32,), "float32", scope="warp")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        W[tx] = A[tx]
        B[tx] = W[tx]
'''
    from tirkit.diagnostics import TirkitError
    r = parse(text, "warp.py")
    (_, f), = r.module.prim_funcs()
    with pytest.raises(TirkitError) as exc:
        emit_cuda(f, r.module)
    (d,) = exc.value.diagnostics
    assert d.code == "codegen/unsupported" and d.span.line == 7


def test_wmma_fragments_and_calls():
    from test_cuda_threads import INT8_WMMA, WMMA
    code = emit_cuda(*_kernel(WMMA, "gpu_wmma_gemm_128")).code
    assert "#include <mma.h>" in code
    assert "nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> C_frag[8];" \
        in code
    assert "nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, half, " \
        "nvcuda::wmma::row_major> A_frag[4];" in code
    assert "nvcuda::wmma::mma_sync(C_frag[((fi_1 * 2) + fj_1)], A_frag[fi_1], B_frag[fj_1], " \
        "C_frag[((fi_1 * 2) + fj_1)]);" in code
    assert re.search(r"nvcuda::wmma::load_matrix_sync\(A_frag\[fi\], \(\(half\*\)A_shared \+ "
                     r".*, 40\);", code)
    # the shared tiles keep their padded shapes; 8 halves move as one 16-byte vector
    assert "half A_shared[5120];" in code and "half B_shared[4352];" in code
    assert code.count("*(uint4*)(") == 2 and code.count("*(const uint4*)(") == 2
    assert "nvcuda::wmma::mem_row_major);" in code
    # a barrier between the shared tiles' stores and the fragment loads that read them
    body = code[code.index("for (int k0"):]
    assert body.index("(B_shared + ") < body.index("__syncthreads();",
                                                  body.index("(B_shared + ")) \
        < body.index("load_matrix_sync")
    r = parse(INT8_WMMA, "i8.py")
    (_, f), = r.module.prim_funcs()
    i8 = emit_cuda(f, r.module).code
    assert "fragment<nvcuda::wmma::matrix_b, 16, 16, 16, signed char, " \
        "nvcuda::wmma::col_major> B_frag[1];" in i8
    assert "fragment<nvcuda::wmma::accumulator, 16, 16, 16, int> C_frag[1];" in i8


OVER_LIMIT = '''from tvm.script import tir as T


@T.prim_func
def too_many_threads(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(2048, thread="threadIdx.x"):
            B[bx * 2048 + tx] = A[bx * 2048 + tx]
'''


def test_launch_limit_from_the_device_or_the_target_table():
    """Without a GPU the limits come from the target table; with one (gpu_check.py) from the
    device's attributes: either way 2048 threads per block are flagged."""
    import tirkit
    from tirkit.codegen.cuda.device import cuda_limits, target_from_attributes
    from tirkit.codegen.cuda.runtime import available
    t = cuda_limits("cuda-sm90")
    if available() is not None:
        assert t.name == "cuda-sm90" and t.max_threads_per_block == 1024
    (d,) = [x for x in tirkit.check(OVER_LIMIT, "k.py", target=t) if x.severity == "error"]
    assert d.code == "thread/launch-limit" and d.span.line == 7
    assert f"the {t.name} limit of 1024" in d.message
    # a device reporting a smaller block limit flags a kernel the table allows
    small = target_from_attributes("a small device", (9, 0), {
        "MAX_THREADS_PER_BLOCK": 512, "MAX_BLOCK_DIM_X": 512, "MAX_BLOCK_DIM_Y": 512,
        "MAX_BLOCK_DIM_Z": 64, "MULTIPROCESSOR_COUNT": 8})
    assert small.name == "cuda-sm90-device" and small.shared_optin == 227 * 1024
    fits = OVER_LIMIT.replace("2048", "1024")
    assert [x for x in tirkit.check(fits, "k.py", target="cuda-sm90")
            if x.severity == "error"] == []
    (d,) = [x for x in tirkit.check(fits, "k.py", target=small) if x.severity == "error"]
    assert d.code == "thread/launch-limit" and "limit of 512" in d.message


def test_a_reduction_across_blockidx_is_refused_at_the_block():
    """Threads of two blocks share no memory a reduction could combine through: refused,
    with the binding as a related location (a reduction over threadIdx alone is generated:
    test_cuda_allreduce.py)."""
    text = '''from tvm.script import tir as T


@T.prim_func
def grid_sum(A: T.Buffer((8, 128), "float32"), S: T.Buffer((1,), "float32")):
    for b in T.thread_binding(8, thread="blockIdx.x"):
        for k in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("S"):
                vb, vk = T.axis.remap("RR", [b, k])
                with T.init():
                    S[0] = T.float32(0)
                S[0] = S[0] + A[vb, vk]
'''
    from tirkit.diagnostics import TirkitError
    r = parse(text, "r.py")
    (_, f), = r.module.prim_funcs()
    with pytest.raises(TirkitError) as exc:
        emit_cuda(f, r.module)
    (d,) = exc.value.diagnostics
    assert d.code == "codegen/unsupported" and d.span.line == 8
    assert d.related[0][0].line == 6 and "blockIdx.x" in d.message


def test_ptx_mma_inline_asm_on_aligned_registers():
    from test_cuda_threads import PTX_MMA
    r = parse(PTX_MMA, "mma.py")
    (_, f), = r.module.prim_funcs()
    code = emit_cuda(f, r.module).code
    assert "__align__(16) half a[8];" in code and "__align__(16) float c[8];" in code
    assert code.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 1
    assert "reinterpret_cast<const unsigned*>((half*)b + (h_1 * 4))" in code
    bad = PTX_MMA.replace('"fp32", a.data', '"fp16", a.data')
    from tirkit.diagnostics import TirkitError
    r = parse(bad, "bad.py")
    (_, f), = r.module.prim_funcs()
    with pytest.raises(TirkitError) as exc:
        emit_cuda(f, r.module)
    assert exc.value.diagnostics[0].code == "codegen/unsupported"


def test_vector_arithmetic_and_a_misaligned_vector_access():
    """CUDA's float4 has no operators (nvcc refused `float4 * float4`): the prelude defines
    them lane by lane; a vector access whose base is not a multiple of its lanes goes lane
    by lane, as a float4 access of a misaligned address faults."""
    r = parse('''from tvm.script import tir as T


@T.prim_func
def shifted(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for tx in T.thread_binding(31, thread="threadIdx.x"):
        B[T.Ramp(tx * 4 + 1, 1, 4)] = A[tx * 4:tx * 4 + 4] * T.Broadcast(A[tx], 4) - A[T.Ramp(tx + 1, 1, 4)]
''')
    ((_, f),) = r.module.prim_funcs()
    code = emit_cuda(f, r.module).code
    assert "float4 operator*(float4 a, float4 b) { return make_float4(a.x * b.x, a.y * b.y, " \
        "a.z * b.z, a.w * b.w); }" in PRELUDE
    assert "((*(float4*)(A + (tx * 4))) * make_float4(A[tx], A[tx], A[tx], A[tx]))" in code
    assert "make_float4(A[(tx + 1) + 0], A[(tx + 1) + 1], A[(tx + 1) + 2], A[(tx + 1) + 3])" \
        in code
    assert "{ float4 v = " in code and "B[((tx * 4) + 1) + 3] = v.w; }" in code


@pytest.mark.parametrize("value, what", [
    ('T.Cast("int32x4", A[tx * 4:tx * 4 + 4])', "a cast of int32x4"),
    ("T.exp(A[tx * 4:tx * 4 + 4])", "T.exp of float32x4"),
    ("T.max(A[tx * 4:tx * 4 + 4], T.Broadcast(T.float32(0), 4))", "Max of float32x4"),
    ("T.Select(A[tx * 4:tx * 4 + 4] > T.Broadcast(T.float32(1), 4), A[tx * 4:tx * 4 + 4], "
     "T.Broadcast(T.float32(0), 4))", "a vector condition of boolx4"),
])
def test_vector_operations_cuda_has_no_c_for_are_refused(value, what):
    """nvcc refused the C these made (`(int4)(float4)`, `expf(float4)`)."""
    dtype = "int32" if "int32x4" in what else "float32"
    r = parse(f'''from tvm.script import tir as T


@T.prim_func
def v(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "{dtype}")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        B[tx * 4:tx * 4 + 4] = {value}
''')
    ((_, f),) = r.module.prim_funcs()
    with pytest.raises(TirkitError) as e:
        emit_cuda(f, r.module)
    (d,) = e.value.diagnostics
    assert d.code == "codegen/unsupported" and d.span.line == 7
    assert d.message.startswith(f"no CUDA C for {what} values (a vector type has + - * / only")


def test_a_shared_buffer_with_strides_is_declared_with_what_they_span():
    """Padded shared rows (`strides=[33, 1]`, as TVM's auto-copy lays them out) were declared
    with the shape's 1024 elements, and the last rows written past the array."""
    r = parse('''from tvm.script import tir as T


@T.prim_func
def transpose(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32")):
    for ty in T.thread_binding(32, thread="threadIdx.y"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("t"):
                vy, vx = T.axis.remap("SS", [ty, tx])
                T.reads(A[0:32, 0:32])
                T.writes(B[0:32, 0:32])
                S = T.alloc_buffer((32, 32), "float32", strides=[33, 1], scope="shared")
                S[vy, vx] = A[vy, vx]
                B[vx, vy] = S[vy, vx]
''')
    ((_, f),) = r.module.prim_funcs()
    assert "__shared__ __align__(16) float S[1056];" in emit_cuda(f, r.module).code
