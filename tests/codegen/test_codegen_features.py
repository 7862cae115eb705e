"""Backend features, each checked against the interpreter and against numpy by hand."""
import ml_dtypes
import numpy as np
import pytest

import tirkit

import codegen_helpers  # noqa: F401  (private kernel cache)
from tirkit.codegen import build, emit_llvm
from tirkit.codegen.cli import compare, make_inputs
from tirkit.codegen.interp import run_reference

HEAD = "from tvm.script import tir as T\n\n\n"


def _func(src, name=None):
    module = tirkit.parse(HEAD + src).module
    funcs = module.prim_funcs()
    return module, (module[name] if name else funcs[0][1])


def _agree(src, seed=0, threads=None, arrays=None):
    module, func = _func(src)
    kernel = build(func, module)
    arrays = arrays or make_inputs(func, np.random.default_rng(seed))
    ref = [a.copy() for a in arrays]
    kernel(*arrays, threads=threads)
    run_reference(func, ref, module=module)
    for b, out, r in zip(kernel.buffers, arrays, ref):
        ok, err = compare(out, r, b.dtype)
        assert ok, (b.name, err)
    return arrays


def test_half_and_bfloat16_conversions_are_bit_exact():
    src = '''@T.prim_func
def conv(A: T.Buffer((64,), "float32"), H: T.Buffer((64,), "float16"),
         G: T.Buffer((64,), "bfloat16"), D: T.Buffer((64,), "float32"),
         P: T.Buffer((64,), "bfloat16")):
    for i in range(64):
        H[i] = T.Cast("float16", A[i] * T.float32(3.3))
        G[i] = T.Cast("bfloat16", A[i] * T.float32(3.3))
        D[i] = T.Cast("float32", H[i]) + T.Cast("float32", G[i])
        P[i] = G[i] * G[i] + G[i]
'''
    A, H, G, D, P = _agree(src)
    np.testing.assert_array_equal(H, (A * np.float32(3.3)).astype(np.float16))
    np.testing.assert_array_equal(G.view(np.uint16),
                                  (A * np.float32(3.3)).astype(ml_dtypes.bfloat16).view(np.uint16))


def test_integer_division_modulo_wraparound_and_casts():
    src = '''@T.prim_func
def ints(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32"), C: T.Buffer((64, 6), "int32"),
         S: T.Buffer((64,), "int8"), U: T.Buffer((64,), "uint16"), F: T.Buffer((64,), "float32")):
    for i in range(64):
        C[i, 0] = T.floordiv(A[i], B[i])
        C[i, 1] = T.floormod(A[i], B[i])
        C[i, 2] = T.truncdiv(A[i], B[i])
        C[i, 3] = T.truncmod(A[i], B[i])
        C[i, 4] = T.max(A[i], B[i]) - T.min(A[i], B[i])
        C[i, 5] = T.Select(A[i] < B[i], A[i] * 3, B[i] * 5)
        S[i] = T.Cast("int8", A[i] * 37)
        U[i] = T.shift_right(T.Cast("uint16", T.Cast("int16", B[i])), T.uint16(1))
        F[i] = T.Cast("float32", A[i]) / T.Cast("float32", B[i])
'''
    A, B, C, S, U, F = _agree(src)
    np.testing.assert_array_equal(C[:, 0], A // B)
    np.testing.assert_array_equal(C[:, 1], A % B)
    np.testing.assert_array_equal(C[:, 2], np.trunc(A / B).astype(np.int32))
    np.testing.assert_array_equal(S, (A * 37).astype(np.int8))


def test_math_calls_match_numpy():
    src = '''@T.prim_func
def maths(A: T.Buffer((128,), "float32"), B: T.Buffer((128, 8), "float32")):
    for i in range(128):
        B[i, 0] = T.exp(A[i])
        B[i, 1] = T.log(T.fabs(A[i]))
        B[i, 2] = T.sqrt(T.fabs(A[i]))
        B[i, 3] = T.tanh(A[i])
        B[i, 4] = T.sigmoid(A[i])
        B[i, 5] = T.erf(A[i])
        B[i, 6] = T.pow(T.fabs(A[i]), T.float32(1.5))
        B[i, 7] = T.round(A[i] * T.float32(4))
'''
    A, B = _agree(src)
    np.testing.assert_allclose(B[:, 0], np.exp(A), rtol=1e-6)
    np.testing.assert_allclose(B[:, 3], np.tanh(A), rtol=1e-6)


def test_vectorized_predicated_loop_is_vector_code():
    src = '''@T.prim_func
def tail(A: T.Buffer((100,), "float32"), B: T.Buffer((100,), "float32")):
    for i0 in range(7):
        for i1 in T.vectorized(16):
            with T.block("B"):
                vi = T.axis.spatial(100, i0 * 16 + i1)
                T.where(i0 * 16 + i1 < 100)
                B[vi] = T.max(A[vi], T.float32(0)) * T.float32(2)
'''
    A, B = _agree(src)
    np.testing.assert_array_equal(B, np.maximum(A, 0) * 2)
    module, func = _func(src)
    text = emit_llvm(func, module)
    assert "llvm.masked.load.v16f32" in text and "llvm.masked.store.v16f32" in text


def test_parallel_loop_on_two_threads():
    src = '''@T.prim_func
def rowsum(A: T.Buffer((64, 256), "float32"), S: T.Buffer((64,), "float32")):
    for i in T.parallel(64):
        for k in range(256):
            with T.block("S"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + A[vi, vk]
'''
    A, S = _agree(src, threads=2)
    np.testing.assert_allclose(S, A.astype(np.float64).sum(1), rtol=0, atol=1e-5 * 256)


def test_vpdpbusd_reachable_as_llvm_intrinsic():
    src = '''@T.prim_func
def dot(A: T.Buffer((64,), "uint8"), B: T.Buffer((64,), "int8"), C: T.Buffer((16,), "int32")):
    C[T.Ramp(0, 1, 16)] = T.call_llvm_pure_intrin("int32x16", "llvm.x86.avx512.vpdpbusd.512", T.uint32(3), C[T.Ramp(0, 1, 16)], T.reinterpret("int32x16", A[T.Ramp(0, 1, 64)]), T.reinterpret("int32x16", B[T.Ramp(0, 1, 64)]))
'''
    from tirkit.codegen.llvm.engine import host_cpu
    if "+avx512vnni" not in host_cpu()[1]:
        pytest.skip("no AVX-512 VNNI on this CPU")
    module, func = _func(src)
    kernel = build(func, module)
    rng = np.random.default_rng(3)
    A = rng.integers(1, 255, 64).astype(np.uint8)
    B = rng.integers(-128, 127, 64).astype(np.int8)
    C = rng.integers(-1000, 1000, 16).astype(np.int32)
    want = C + (A.astype(np.int32) * B.astype(np.int32)).reshape(16, 4).sum(1)
    kernel(A, B, C)
    np.testing.assert_array_equal(C, want)


def test_local_accumulator_is_compacted_and_unrolled():
    from tirkit.codegen.passes import lower
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "examples" / "matmul_1024_scheduled.py"
    module = tirkit.parse(path.read_text(), str(path)).module
    func = module["matmul_1024"]
    lowered = lower(func, module)
    allocs = []
    from tirkit.ir import stmt as S
    from tirkit.ir.visit import walk
    walk(lowered.body, lambda x: allocs.append(x) if isinstance(x, S.Allocate) else None)
    assert [a.extents[0].value for a in allocs] == [256]       # 4 x 64 tile, not 1024 x 1024


def test_second_build_comes_from_the_cache():
    src = '''@T.prim_func
def add1(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    for i in range(16):
        B[i] = A[i] + 1
'''
    module, func = _func(src)
    first = build(func, module)
    renamed = tirkit.parse(HEAD + src.replace("for i in", "for j in").replace("[i]", "[j]"))
    second = build(renamed.module.prim_funcs()[0][1], renamed.module)
    assert second.from_cache and second.key == first.key
    A = np.arange(16, dtype=np.int32)
    B = np.zeros(16, np.int32)
    second(A, B)
    np.testing.assert_array_equal(B, A + 1)


def test_strided_decl_buffer_keeps_its_allocation_size():
    src = '''@T.prim_func
def strided(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 16), "float32")):
    for io in range(2):
        T_data = T.allocate([4, 19], "float32", "global")
        Tb = T.decl_buffer((4, 16), "float32", strides=[19, 1], data=T_data)
        for ii, j in T.grid(4, 16):
            Tb[ii, j] = A[io * 4 + ii, j] * T.float32(3)
        for ii, j in T.grid(4, 16):
            C[io * 4 + ii, j] = Tb[ii, j] + T.float32(1)
'''
    A, C = _agree(src)
    np.testing.assert_array_equal(C, A * np.float32(3) + np.float32(1))


def test_match_buffer_view_inside_a_block():
    src = '''@T.prim_func
def view(A: T.Buffer((4, 8, 8), "float32"), S: T.Buffer((4,), "float32")):
    for b, i, j in T.grid(4, 8, 8):
        with T.block("S"):
            vb, vi, vj = T.axis.remap("SRR", [b, i, j])
            T.reads(A[vb, 0:8, 0:8])
            T.writes(S[vb])
            tile = T.match_buffer(A[vb, 0:8, 0:8], (8, 8))
            out = T.match_buffer(S[vb], ())
            with T.init():
                out[()] = T.float32(0)
            out[()] = out[()] + tile[vi, vj]
'''
    A, S = _agree(src)
    np.testing.assert_allclose(S, A.astype(np.float64).sum((1, 2)), atol=1e-4)


def test_vector_load_through_a_match_buffer_view_and_reinterpret():
    # a view at an offset read as one int8x4 vector, its bits taken as an int32
    src = '''@T.prim_func
def packed(A: T.Buffer((4, 16), "int8"), C: T.Buffer((4, 4), "int32")):
    for y, x in T.grid(4, 4):
        with T.block("C"):
            vy, vx = T.axis.remap("SS", [y, x])
            T.reads(A[vy, vx * 4:vx * 4 + 4])
            T.writes(C[vy, vx])
            V = T.match_buffer(A[vy, vx * 4:vx * 4 + 4], [4], dtype="int8", offset_factor=1)
            v: T.int8x4 = V[0:4]
            C[vy, vx] = T.reinterpret(v, dtype="int32") + 1
'''
    module, func = _func(src)
    assert "gather" not in emit_llvm(func, module)          # one contiguous vector load
    A, C = _agree(src)
    np.testing.assert_array_equal(C, np.ascontiguousarray(A).view(np.int32) + 1)


def test_reinterpret_of_scalars_over_a_whole_loop():
    # the interpreter runs this loop's iterations at once: reinterpret keeps one value each
    src = '''@T.prim_func
def bits(A: T.Buffer((32,), "int32"), B: T.Buffer((32,), "float32")):
    for i in T.serial(0, 32):
        with T.block():
            vi = T.axis.remap("S", [i])
            B[vi] = T.reinterpret("float32", A[vi])
'''
    A, B = _agree(src)
    np.testing.assert_array_equal(B.view(np.int32), A)


def test_realize_declares_a_region_and_runs_as_nothing():
    src = '''@T.prim_func
def main(A: T.Buffer((1, 8), "float32"), B: T.Buffer((1, 8), "float32")):
    T.realize(B[0:1, 0:8], "")
    for i in range(8):
        B[0, i] = A[0, i] * T.float32(2)
'''
    A, B = _agree(src)
    np.testing.assert_allclose(B, A * 2)


def test_one_element_slice_is_a_scalar_index_and_a_stepped_store_has_its_lanes():
    from tirkit.ir import expr as E
    src = '''@T.prim_func
def main(A: T.Buffer((2, 8), "float32"), B: T.Buffer((2, 8), "float32")):
    B[1:2, 0:8:2] = A[0:1, 1:8:2] + A[1, 0:8:2]
'''
    _, func = _func(src)
    store = func.body
    assert isinstance(store.indices[0], E.IntImm) and store.indices[1].lanes == 4
    assert store.value.dtype == "float32x4"
    assert isinstance(store.value.a.indices[0], E.IntImm)
    A, B = _agree(src)
    np.testing.assert_allclose(B[1, 0::2], A[0, 1::2] + A[1, 0::2], rtol=1e-6)


def test_zero_dim_buffers_and_ceildiv_extent():
    src = '''@T.prim_func
def scalar(A: T.Buffer((), "int32"), B: T.Buffer((10,), "int32")):
    for io in range(T.ceildiv(10, 4)):
        for ii in T.vectorized(4):
            if io * 4 + ii < 10:
                B[io * 4 + ii] = A[()] * (io * 4 + ii)
'''
    A, B = _agree(src)
    np.testing.assert_array_equal(B, A * np.arange(10, dtype=np.int32))


def test_parallel_loop_after_another_loop_and_vector_select_of_constants():
    src = '''@T.prim_func
def two(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), C: T.Buffer((64,), "int32")):
    for i in range(64):
        B[i] = A[i] + T.float32(1)
    for i in T.parallel(8):
        for j in T.vectorized(8):
            B[i * 8 + j] = B[i * 8 + j] * T.float32(2)
            C[i * 8 + j] = T.if_then_else(A[i * 8 + j] < T.float32(0), 1, 2)
'''
    A, B, C = _agree(src, threads=2)
    np.testing.assert_array_equal(B, (A + np.float32(1)) * np.float32(2))
    np.testing.assert_array_equal(C, np.where(A < 0, 1, 2))


def test_nested_parallel_loops_and_parallel_inside_serial():
    src = '''@T.prim_func
def nest(A: T.Buffer((6, 8, 16), "float32"), B: T.Buffer((6, 8, 16), "float32")):
    for t in range(6):
        for i in T.parallel(8):
            for j in T.parallel(16):
                B[t, i, j] = A[t, i, j] * T.float32(t + 1) + T.float32(i)
'''
    A, B = _agree(src, threads=2)
    t = np.arange(6, dtype=np.float32)[:, None, None]
    i = np.arange(8, dtype=np.float32)[None, :, None]
    np.testing.assert_allclose(B, A * (t + 1) + i, rtol=0, atol=1e-5)


def test_kernel_call_releases_the_gil():
    import threading
    src = '''@T.prim_func
def spin(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    for r, i in T.grid(8000000, 256):
        B[i] = B[i] * T.float32(0.5) + A[i]
'''
    module, func = _func(src)
    kernel = build(func, module)
    A = np.ones(256, np.float32)
    B = np.ones(256, np.float32)
    done = threading.Event()
    t = threading.Thread(target=lambda: (kernel(A, B), done.set()))
    count = 0
    t.start()
    while not done.is_set():
        count += 1
    t.join()
    np.testing.assert_allclose(B, 2.0)
    # this thread kept running Python while the kernel computed (with the GIL held it could
    # not have looped at all until the call returned)
    assert count > 100


def test_interpreter_checks_each_dimension_of_a_buffer_that_owns_its_storage():
    from tirkit.diagnostics import TirkitError
    # column 4 of a 4-wide row is inside the storage (the next row) but outside its dimension
    src = '''@T.prim_func
def rows(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(3, 4):
        B[i, j + OFFSET] = A[i, j]
'''
    module, func = _func(src.replace("OFFSET", "0"))
    arrays = make_inputs(func, np.random.default_rng(1))
    run_reference(func, arrays, module=module)
    np.testing.assert_array_equal(arrays[1][:3], arrays[0][:3])
    module, func = _func(src.replace("OFFSET", "1"))
    with pytest.raises(TirkitError) as err:
        run_reference(func, make_inputs(func, np.random.default_rng(1)), module=module)
    d = err.value.diagnostics[0]
    assert d.code == "bounds/out-of-bounds"
    assert "outside dimension 1 of extent 4 (index 4)" in d.message


def test_a_view_over_part_of_a_pool_is_checked_against_the_pool_only():
    # the 8-element view indexes past its nominal shape but stays inside the 16-element pool
    src = '''@T.prim_func
def pool(A: T.Buffer((16,), "float32")):
    V = T.decl_buffer((2, 4), "float32", data=A.data)
    for i in range(3):
        V[i, 1] = T.float32(7)
'''
    module, func = _func(src)
    arrays = make_inputs(func, np.random.default_rng(2))
    run_reference(func, arrays, module=module)
    assert list(arrays[0][[1, 5, 9]]) == [7, 7, 7]


def test_an_extern_call_binds_to_a_c_function_of_the_process_or_is_refused():
    src = '''@T.prim_func
def ext(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        B[i] = T.call_pure_extern("float32", "expf", A[i])
'''
    module, func = _func(src)
    A, B = make_inputs(func, np.random.default_rng(4))
    build(func, module)(A, B)
    np.testing.assert_allclose(B, np.exp(A), rtol=1e-6)
    # a name the process does not export: the JIT would call a null address
    module, func = _func(src.replace('"expf"', '"no_such_kernel"'))
    with pytest.raises(tirkit.TirkitError) as e:
        build(func, module)
    (d,) = e.value.diagnostics
    assert d.code == "codegen/unsupported" and "'no_such_kernel'" in d.message


def test_a_scalable_vector_is_refused_at_its_expression():
    """TVM's vectorize test module: a broadcast to `T.vscale() * 4` lanes had crashed the
    code generator (found by `benchmarks/corpus_codegen.py`)."""
    src = '''@T.prim_func
def main(A: T.Buffer((25,), "float32xvscalex4")):
    for j in T.vectorized(4):
        A[j] = T.Broadcast(T.float32(1), T.vscale() * 4)
'''
    module, func = _func(src)
    with pytest.raises(tirkit.TirkitError) as err:
        build(func, module)
    (d,) = err.value.diagnostics
    assert d.code == "codegen/unsupported" and d.span.line == 7
    assert d.message.startswith("a scalable vector (its lanes depend on T.vscale())")


def test_a_load_of_a_region_is_refused_and_one_vector_index_runs():
    """`A[0:4, 0:2]` as a value (TVM's classic parser reads it as a region) had crashed the
    code generator with vectors of 4 and 2 lanes added; one vector index, even before the
    last, runs in both engines."""
    src = '''@T.prim_func
def region(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    B[0:2] = A[0:4, 0:2]


@T.prim_func
def column(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    T.realize(A[0:8, 0:8], "")
    B[0:4] = A[2:6, 3]
'''
    r = tirkit.parse(HEAD + src)
    assert r.diagnostics == []
    (_, region), (_, column) = r.module.prim_funcs()        # T.realize declares, runs nothing
    a = np.random.default_rng(3).uniform(0.5, 1.5, (8, 8)).astype("float32")
    for run in (lambda f, *x: build(f, r.module)(*x),
                lambda f, *x: run_reference(f, list(x), module=r.module)):
        with pytest.raises(tirkit.TirkitError) as err:
            run(region, a, np.ones(8, "float32"))
        (d,) = err.value.diagnostics
        assert d.code == "codegen/unsupported" and d.span.line == 6
        assert d.message.startswith("an access with vector indices in two dimensions")
        b = np.ones(8, "float32")
        run(column, a, b)
        assert np.array_equal(b, np.concatenate([a[2:6, 3], np.ones(4, "float32")]))


def test_a_vector_condition_selects_lanes_in_the_interpreter_as_in_native_code():
    """The reference interpreter runs a vector T.if_then_else's branches on the lanes their
    condition selects (it had refused vectors there): the masked lanes neither divide nor
    count, as in the compiled code."""
    src = '''@T.prim_func
def quot(A: T.Buffer((8,), "int32"), D: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    B[0:8] = T.if_then_else(D[0:8] != T.Broadcast(0, 8), A[0:8] // D[0:8], A[0:8] + T.Broadcast(1, 8))


@T.prim_func
def halves(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    B[0:4] = T.if_then_else(A[0:4] > T.Broadcast(T.float32(1), 4), A[T.Ramp(1, 2, 4)], A[4:8] * T.Broadcast(T.float32(2), 4))
'''
    r = tirkit.parse(HEAD + src)
    assert r.diagnostics == []
    (_, quot), (_, halves) = r.module.prim_funcs()
    rng = np.random.default_rng(8)
    a = rng.integers(-50, 50, 8).astype("int32")
    d = np.array([3, 0, -2, 0, 5, 7, 0, -1], "int32")
    x = rng.uniform(0.5, 1.5, 8).astype("float32")
    want_q = np.where(d != 0, a // np.where(d != 0, d, 1), a + 1)
    want_h = np.concatenate([np.where(x[:4] > 1, x[1::2], x[4:] * 2), np.zeros(4)])
    for run in (lambda f, *v: build(f, r.module, checked=True)(*v),
                lambda f, *v: run_reference(f, list(v), module=r.module)):
        b = np.full(8, 9, "int32")
        run(quot, a, d, b)
        assert np.array_equal(b, want_q)
        h = np.zeros(8, "float32")
        run(halves, x, h)
        np.testing.assert_allclose(h, want_h, rtol=1e-6)


def test_a_buffer_with_strides_allocates_what_they_span():
    """`T.alloc_buffer((16, 16), strides=[17, 1])` (padded rows, as TVM's auto-copy makes
    shared buffers) had 256 elements of storage: the interpreter stopped at element 270, and
    the compiled code wrote past it.  It has 16 rows of 17, as TVM flattens it."""
    src = '''@T.prim_func
def padded(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    S = T.alloc_buffer((16, 16), "float32", strides=[17, 1])
    for i, j in T.grid(16, 16):
        with T.block("S"):
            vi, vj = T.axis.remap("SS", [i, j])
            S[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = S[vj, vi]
'''
    module, func = _func(src)
    a = np.random.default_rng(12).uniform(0.5, 1.5, (16, 16)).astype("float32")
    for run in (lambda *x: build(func, module, checked=True)(*x),
                lambda *x: run_reference(func, list(x), module=module)):
        b = np.zeros((16, 16), "float32")
        run(a, b)
        np.testing.assert_array_equal(b, (a * 2).T)
    assert "alloca [272 x float]" in emit_llvm(func, module)
    from tirkit.codegen.inputs import allocations
    assert [(n, name) for n, name, _ in allocations(func)] == [(272 * 4, "S")]   # the guard
