"""PTX's warp intrinsics: mma.sync in each generated form, ldmatrix and cp.async with its
groups, run in the thread interpreter against numpy on random inputs, and their CUDA C
compiled by nvcc where it is installed.  Each kernel loads its registers in PTX's fragment
layout, written here as TIR index expressions."""
from __future__ import annotations

import numpy as np
import pytest

from tirkit import parse
from tirkit.codegen.cuda import emit_cuda
from tirkit.codegen.cuda.nvcc import compile_cuda, find_nvcc
from tirkit.codegen.cuda.threads import run_threads
from tirkit.diagnostics import TirkitError

MMA = '''from tvm.script import tir as T


@T.prim_func
def mma(A: T.Buffer(({am}, {k}), "{at}"), B: T.Buffer(({k}, {bn}), "{bt}"),
        C: T.Buffer(({am}, {n}), "{ct}")):
    a = T.alloc_buffer(({na},), "{at}", scope="local")
    b = T.alloc_buffer(({nb},), "{bt}", scope="local")
    c = T.alloc_buffer(({nc},), "{ct}", scope="local")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        for i in range({na}):
            a[i] = A[{a}]
        for i in range({nb}):
            b[i] = B[{b}]
        for i in range({nc}):
            c[i] = C[{c}]
        T.evaluate(T.ptx_mma("{shape}", "row", "{bl}", "{an}", "{bn_}", "{cn}", a.data, 0, b.data, 0, c.data, 0, {sat}))
        for i in range({nc}):
            C[{c}] = c[i]
'''

_C16 = "tx // 4 + i // 2 * 8, tx % 4 * 2 + i % 2"
_C8 = "tx // 4, tx % 4 * 2 + i"
_QP = "tx % 16 // 4 * 8"          # m8n8k4 f16: each quad pair's own 8x8x4 product
# (shape, B layout, sub-products, m, n, k, registers of A, B, C, A's, B's and C's indices)
FORMS = {
    "m16n8k16": ("m16n8k16", "col", 1, 16, 8, 16, 8, 4, 4,
                 "tx // 4 + i // 2 % 2 * 8, tx % 4 * 2 + i % 2 + i // 4 * 8",
                 "tx % 4 * 2 + i % 2 + i // 2 * 8, tx // 4", _C16),
    "m16n8k8": ("m16n8k8", "col", 1, 16, 8, 8, 4, 2, 4,
                "tx // 4 + i // 2 * 8, tx % 4 * 2 + i % 2", "tx % 4 * 2 + i, tx // 4", _C16),
    "m8n8k4_f32": ("m8n8k4", "row", 4, 8, 8, 4, 4, 4, 8,
                   f"{_QP} + tx % 4 + tx // 16 * 4, i", f"tx % 4, {_QP} + i + tx // 16 * 4",
                   f"{_QP} + tx % 2 + i // 2 % 2 * 2 + tx // 16 * 4, "
                   "tx % 4 // 2 * 2 + i % 2 + i // 4 * 4"),
    "m8n8k4_f16": ("m8n8k4", "row", 4, 8, 8, 4, 4, 4, 8,
                   f"{_QP} + tx % 4 + tx // 16 * 4, i", f"tx % 4, {_QP} + i + tx // 16 * 4",
                   f"{_QP} + tx % 4 + tx // 16 * 4, i"),
    "m8n8k4_f64": ("m8n8k4", "col", 1, 8, 8, 4, 1, 1, 2, "tx // 4, tx % 4", "tx % 4, tx // 4",
                   _C8),
    "m8n8k16": ("m8n8k16", "col", 1, 8, 8, 16, 4, 4, 2, "tx // 4, tx % 4 * 4 + i",
                "tx % 4 * 4 + i, tx // 4", _C8),
    "m16n8k16_i8": ("m16n8k16", "col", 1, 16, 8, 16, 8, 4, 4,
                    "tx // 4 + i // 4 * 8, tx % 4 * 4 + i % 4", "tx % 4 * 4 + i, tx // 4", _C16),
    "m16n8k32": ("m16n8k32", "col", 1, 16, 8, 32, 16, 8, 4,
                 "tx // 4 + i // 4 % 2 * 8, tx % 4 * 4 + i % 4 + i // 8 * 16",
                 "tx % 4 * 4 + i % 4 + i // 4 * 16, tx // 4", _C16),
}
# (form, A, B, C types as TIR dtypes, as the call names them)
CASES = [
    ("m16n8k16", "float16", "float16", "float32", "fp16", "fp16", "fp32"),
    ("m16n8k16", "float16", "float16", "float16", "fp16", "fp16", "fp16"),
    ("m16n8k16", "bfloat16", "bfloat16", "float32", "bf16", "bf16", "fp32"),
    ("m16n8k8", "float16", "float16", "float32", "float16", "float16", "float32"),
    ("m8n8k4_f32", "float16", "float16", "float32", "fp16", "fp16", "fp32"),
    ("m8n8k4_f16", "float16", "float16", "float16", "fp16", "fp16", "fp16"),
    ("m8n8k4_f64", "float64", "float64", "float64", "fp64", "fp64", "fp64"),
    ("m8n8k16", "int8", "uint8", "int32", "int8", "uint8", "int32"),
    ("m16n8k16_i8", "uint8", "int8", "int32", "uint8", "int8", "int32"),
    ("m16n8k32", "int8", "int8", "int32", "int8", "int8", "int32"),
]


def _mma_text(form, at, bt, ct, an, bn, cn, sat="False"):
    shape, bl, subs, m, n, k, na, nb, nc, ia, ib, ic = FORMS[form]
    return MMA.format(am=subs * m, k=k, bn=subs * n, n=n, at=at, bt=bt, ct=ct, na=na, nb=nb,
                      nc=nc, a=ia, b=ib, c=ic, shape=shape, bl=bl, an=an, bn_=bn, cn=cn,
                      sat=sat)


def _inputs(f, rng, subs):
    out = []
    for p in f.params:
        b = f.buffer_of(p)
        shape = tuple(x.value for x in b.shape)
        if "int" in b.dtype:
            lo, hi = (0, 255) if b.dtype == "uint8" else (-128, 127) if b.dtype == "int8" \
                else (-1000, 1000)
            out.append(rng.integers(lo, hi + 1, shape).astype(b.dtype))
        else:
            import ml_dtypes
            dt = ml_dtypes.bfloat16 if b.dtype == "bfloat16" else b.dtype
            out.append(rng.uniform(-2, 2, shape).astype(dt))
    return out


def _nvcc(code):
    if find_nvcc() is not None:
        compile_cuda(code, "sm_80", "cubin")


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_mma_forms_against_numpy(case):
    form, at, bt, ct = case[:4]
    subs, m, n = FORMS[form][2:5]
    r = parse(_mma_text(form, *case[1:]), "mma.py")
    (_, f), = r.module.prim_funcs()
    A, B, C = arrays = _inputs(f, np.random.default_rng(7), subs)
    wide = np.int64 if "int" in ct else np.float64
    want = np.concatenate([A[q * m:(q + 1) * m].astype(wide) @ B[:, q * n:(q + 1) * n]
                           .astype(wide) for q in range(subs)]) + C.astype(wide)
    before = C.astype(wide)
    run_threads(f, arrays, module=r.module)
    got = arrays[2].astype(wide)
    if "int" in ct:
        assert np.array_equal(got, want)
    else:
        tol = 2e-3 if ct == "float16" else 1e-12 if ct == "float64" else 1e-5
        assert np.allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
        assert not np.allclose(got, before)
    code = emit_cuda(f, r.module).code
    assert code.count("mma.sync.aligned." + FORMS[form][0]) == 1
    _nvcc(code)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_an_mma_counts_its_products_in_the_cost_and_the_build(case):
    """One `T.ptx_mma` by a warp is 2 m n k operations per product (four products for m8n8k4
    with fp16), in the kernel's cost and in what `tirkit bench` divides by its time, at the
    multiplicands' dtype; the register copies around it count nothing."""
    from tirkit.analysis.cost import kernel_costs
    from tirkit.codegen.cuda import lower_gpu
    from tirkit.codegen.flops import count_ops
    form, at = case[:2]
    subs, m, n, k = FORMS[form][2:6]
    r = parse(_mma_text(form, *case[1:]), "mma.py")
    (_, f), = r.module.prim_funcs()
    want = 2 * m * n * k * subs
    c = kernel_costs(f, r.module).total
    assert (c.flops.value, c.op_dtype) == (want, at)
    low = lower_gpu(f, r.module)
    assert count_ops(low.body, callees=low.callees) == \
        ((0, want) if "int" in at else (want, 0))


def test_an_int8_mma_saturates_or_wraps():
    """int32 accumulators: `.satfinite` clamps a sum past int32, without it the sum wraps."""
    for sat in ("True", "False"):
        r = parse(_mma_text("m8n8k16", "int8", "int8", "int32", "int8", "int8", "int32", sat),
                  "mma.py")
        (_, f), = r.module.prim_funcs()
        A = np.full((8, 16), 127, np.int8)
        B = np.full((16, 8), 127, np.int8)
        C = np.full((8, 8), 2 ** 31 - 1000, np.int32)
        run_threads(f, [A, B, C], module=r.module)
        total = 2 ** 31 - 1000 + 16 * 127 * 127
        want = 2 ** 31 - 1 if sat == "True" else total - 2 ** 32
        assert (C == want).all()
        code = emit_cuda(f, r.module).code
        assert ("mma.sync.aligned.m8n8k16.row.col.satfinite.s32.s8.s8.s32" in code) == \
            (sat == "True")


@pytest.mark.parametrize("args, message", [
    (("m16n8k16", "float64", "float64", "float64", "fp64", "fp64", "fp64"),
     "T.ptx_mma (m16n8k16, row, col, fp64, fp64, fp64) is not a form that is generated"),
    (("m16n8k16", "float16", "float16", "float32", "fp16", "fp16", "fp16"),
     "T.ptx_mma reads C as fp16, but 'c' holds float32 registers"),
    (("m16n8k16", "float16", "float16", "float32", "fp16", "fp16", "fp32", "True"),
     "T.ptx_mma (m16n8k16, row, col, fp16, fp16, fp32) is not a form that is generated"),
])
def test_mma_forms_that_are_not_generated(args, message):
    r = parse(_mma_text(*args), "mma.py")
    (_, f), = r.module.prim_funcs()
    for run in (lambda: emit_cuda(f, r.module),
                lambda: run_threads(f, _inputs(f, np.random.default_rng(0), 1),
                                    module=r.module)):
        with pytest.raises(TirkitError) as e:
            run()
        (d,) = e.value.diagnostics
        assert d.code == "codegen/unsupported" and d.message.startswith(message)
        assert d.span.line == 17


LDMATRIX = '''from tvm.script import tir as T


@T.prim_func
def ldm(A: T.Buffer((16, 16), "float16"), B: T.Buffer((32, 8), "float16")):
    for tx in T.thread_binding({threads}, thread="threadIdx.x"):
        with T.block():
            S = T.alloc_buffer((16, 16), "float16", scope="shared")
            r = T.alloc_buffer((8,), "float16", scope="local")
            for j in range(8):
                S[j * 2 + tx // 16, tx % 16] = A[j * 2 + tx // 16, tx % 16]
                r[j] = T.float16(7)
            T.evaluate(T.ptx_ldmatrix({trans}, {num}, ".b16", r.data, 0, S.data, tx % 8 * 16 + tx // 8 % 2 * 128 + tx // 16 * 8))
            for j in range(8):
                B[tx, j] = r[j]
'''


ACCESS_PTR = ('"float16", {trans}, {num}, ".b16", r.data, 0, T.tvm_access_ptr('
              'T.type_annotation("float16"), S.data, 64, 192, 1), tx % 8 * 16 + tx // 8 % 2 * 128 + '
              'tx // 16 * 8 - 64')


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("spelling", ["plain", "access_ptr"])
def test_ldmatrix_hands_each_lane_its_fragment(num, trans, spelling):
    """Lane 8 j + r gives row r of matrix j (here the four 8x8 quarters of A); every lane
    receives row lane / 4, columns 2 (lane % 4) and the next, of each matrix (of its
    transpose with trans).  The lanes' writes of S before it are ordered by the warp's
    `.sync`, not a race.  TVM's newer spelling names the element type first, and its source
    may be a `T.tvm_access_ptr`, whose offset adds to the call's."""
    text = LDMATRIX.format(threads=32, trans=int(trans), num=num)
    if spelling == "access_ptr":
        call = text[text.index("T.ptx_ldmatrix(") + 15:text.index("))\n", text.index(
            "T.ptx_ldmatrix("))]
        text = text.replace(call, ACCESS_PTR.format(trans=int(trans), num=num))
    r = parse(text, "ldm.py")
    (_, f), = r.module.prim_funcs()
    A = np.random.default_rng(num).uniform(-4, 4, (16, 16)).astype(np.float16)
    B = np.full((32, 8), np.float16(7))
    run_threads(f, [A, B], module=r.module)
    lane = np.arange(32)
    for j in range(4):
        quarter = A[j % 2 * 8:j % 2 * 8 + 8, j // 2 * 8:j // 2 * 8 + 8]
        m = quarter.T if trans else quarter
        for e in range(2):
            got = B[:, 2 * j + e]
            if j < num:
                assert np.array_equal(got, m[lane // 4, 2 * (lane % 4) + e])
            else:
                assert (got == 7).all()     # registers the load does not reach keep theirs
    code = emit_cuda(f, r.module).code
    assert f"ldmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16" in code
    _nvcc(code)


def test_ldmatrix_needs_a_whole_warp_and_constant_flags_for_cuda():
    r = parse(LDMATRIX.format(threads=16, trans=0, num=1), "ldm.py")
    (_, f), = r.module.prim_funcs()
    with pytest.raises(TirkitError) as e:
        run_threads(f, [np.ones((16, 16), np.float16), np.ones((32, 8), np.float16)],
                    module=r.module)
    assert e.value.diagnostics[0].message == \
        "T.ptx_ldmatrix run by 16 threads of a warp (needs its 32 lanes, once each)"
    text = LDMATRIX.format(threads=32, trans="n % 2", num=4).replace(
        '"float16")):', '"float16"), n: T.int32):', 1)
    r = parse(text, "ldm.py")
    (_, f), = r.module.prim_funcs()
    with pytest.raises(TirkitError) as e:
        emit_cuda(f, r.module)
    (d,) = e.value.diagnostics
    assert (d.code, d.span.line) == ("codegen/unsupported", 13)
    assert d.message.startswith("T.ptx_ldmatrix is generated with a constant count")


CP_ASYNC = '''from tvm.script import tir as T


@T.prim_func
def copy(A: T.Buffer((32, 16), "float32"), B: T.Buffer((32, 16), "float32"), E: T.Buffer((32, 4), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        with T.block():
            S = T.alloc_buffer((32, 16), "float32", scope="shared")
            for j in range(16):
                S[tx, j] = T.float32(-1)
            for g in range(4):
                T.evaluate(T.ptx_cp_async(S.data, tx * 16 + g * 4, A.data, tx * 16 + g * 4, 16, dtype="float32"))
                T.evaluate(T.ptx_commit_group())
            T.evaluate(T.ptx_wait_group({keep}))
            for j in range({read}):
                E[tx, j] = S[tx, j * 4 + 3]
            T.evaluate(T.ptx_wait_group(0))
            for j in range(16):
                B[tx, j] = S[tx, j]
'''


@pytest.mark.parametrize("keep", [0, 1, 3, 4])
def test_async_copies_land_when_a_wait_completes_their_group(keep):
    """Four groups of one 16-byte copy each: after wait_group(keep) all but the last `keep`
    groups have landed and may be read; a read of one still in flight is a race with the
    copy (on a GPU it reads whatever has landed); after wait_group(0) all of them."""
    landed = 4 - keep
    r = parse(CP_ASYNC.format(keep=keep, read=landed), "copy.py")
    (_, f), = r.module.prim_funcs()
    A = np.random.default_rng(keep).uniform(1, 2, (32, 16)).astype(np.float32)
    B, E = np.zeros((32, 16), np.float32), np.zeros((32, 4), np.float32)
    run_threads(f, [A, B, E], module=r.module)
    assert np.array_equal(B, A)
    assert np.array_equal(E[:, :landed], A[:, 3::4][:, :landed]) and not E[:, landed:].any()
    code = emit_cuda(f, r.module).code
    assert code.count("cp.async.cg.shared.global") == 1
    assert "cp.async.commit_group" in code and f"cp.async.wait_group {keep}" in code
    _nvcc(code)
    if keep:
        r = parse(CP_ASYNC.format(keep=keep, read=landed + 1), "copy.py")
        (_, f), = r.module.prim_funcs()
        with pytest.raises(TirkitError) as e:
            run_threads(f, [A, B, E], module=r.module)
        (d,) = e.value.diagnostics
        assert (d.code, d.span.line, d.related[0][0].line) == ("thread/race", 16, 12)
        assert d.message == (
            "data race: thread (threadIdx.x=0) reads an element that an asynchronous copy of "
            "thread (threadIdx.x=0) at line 12 writes, before a wait completes it "
            "(T.ptx_wait_group)")


def test_an_async_copy_may_name_its_element_type_first():
    """TVM's `ptx_cp_async(dtype, dst, d_off, src, s_off, bytes)` takes the type first; the
    same copy as with `dtype=`."""
    text = CP_ASYNC.format(keep=0, read=4).replace(
        "T.ptx_cp_async(S.data, tx * 16 + g * 4, A.data, tx * 16 + g * 4, 16, "
        "dtype=\"float32\")",
        "T.ptx_cp_async(\"float32\", S.data, tx * 16 + g * 4, A.data, tx * 16 + g * 4, 16)")
    assert "T.ptx_cp_async(\"float32\"" in text
    r = parse(text, "copy.py")
    (_, f), = r.module.prim_funcs()
    A = np.random.default_rng(5).uniform(1, 2, (32, 16)).astype(np.float32)
    B, E = np.zeros((32, 16), np.float32), np.zeros((32, 4), np.float32)
    run_threads(f, [A, B, E], module=r.module)
    assert np.array_equal(B, A) and np.array_equal(E, A[:, 3::4])
    assert "cp.async.cg.shared.global [%0], [%1], %2;" in emit_cuda(f, r.module).code


def test_an_async_copy_of_a_size_ptx_has_not_is_refused():
    r = parse(CP_ASYNC.format(keep=0, read=4).replace(", 16, dtype=", ", 12, dtype="),
              "copy.py")
    (_, f), = r.module.prim_funcs()
    arrays = [np.ones((32, 16), np.float32), np.ones((32, 16), np.float32),
              np.ones((32, 4), np.float32)]
    for run in (lambda: emit_cuda(f, r.module), lambda: run_threads(f, arrays,
                                                                    module=r.module)):
        with pytest.raises(TirkitError) as e:
            run()
        (d,) = e.value.diagnostics
        assert (d.code, d.message, d.span.line) == (
            "codegen/unsupported", "T.ptx_cp_async copies 4, 8 or 16 bytes, whole elements; "
            "got 12", 12)


def test_registers_past_their_buffer_are_out_of_bounds():
    """C's four registers from offset 6 of an 8-element buffer reach element 9."""
    text = _mma_text("m16n8k16", "float16", "float16", "float32", "fp16", "fp16", "fp32")
    r = parse(text.replace("c.data, 0, False", "c.data, 6, False").replace(
        'c = T.alloc_buffer((4,)', 'c = T.alloc_buffer((8,)'), "mma.py")
    (_, f), = r.module.prim_funcs()
    with pytest.raises(TirkitError) as e:
        run_threads(f, _inputs(f, np.random.default_rng(0), 1), module=r.module)
    (d,) = e.value.diagnostics
    assert (d.code, d.message, d.span.line) == (
        "bounds/out-of-bounds", "T.ptx_mma reaches outside the registers 'c': element 9, but "
        "its storage holds 8", 17)


SCALAR = '''from tvm.script import tirx as T


@T.prim_func
def ptx_scalar_math(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), C: T.Buffer((4, 64), "float32")):
    bx = T.env_thread("blockIdx.x")
    tx = T.env_thread("threadIdx.x")
    T.launch_thread(bx, 2)
    T.launch_thread(tx, 32)
    T.ptx.griddepcontrol.wait()
    T.ptx.add.rn.f32(C[0, bx * 32 + tx], A[bx * 32 + tx], B[bx * 32 + tx])
    T.ptx.mul.rn.f32(C[1, bx * 32 + tx], A[bx * 32 + tx], B[bx * 32 + tx])
    T.ptx.max.f32(C[2, bx * 32 + tx], A[bx * 32 + tx], B[bx * 32 + tx])
    T.ptx.min.f32(C[3, bx * 32 + tx], A[bx * 32 + tx], B[bx * 32 + tx])
    T.ptx.griddepcontrol.launch_dependents()
'''


def test_ptx_scalar_math_and_dependent_launch_control():
    """T.ptx.<op>.f32 stores its operation's result; griddepcontrol's wait and launch do
    nothing in a kernel run alone, and are PTX's (sm_90) in CUDA C."""
    r = parse(SCALAR, "scalar.py")
    (_, f), = r.module.prim_funcs()
    rng = np.random.default_rng(4)
    A, B = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    C = np.zeros((4, 64), np.float32)
    run_threads(f, [A, B, C], module=r.module)
    for got, want in zip(C, (A + B, A * B, np.maximum(A, B), np.minimum(A, B))):
        np.testing.assert_array_equal(got, want)
    code = emit_cuda(f, r.module).code
    assert 'asm volatile("griddepcontrol.wait;\\n" ::: "memory")' in code
    assert 'asm volatile("griddepcontrol.launch_dependents;\\n" ::: "memory")' in code
    if find_nvcc() is not None:
        compile_cuda(code, "sm_90", "cubin")


def test_a_store_into_a_copy_in_flight_is_a_race():
    """A (vector) store to elements a copy will still write: which value stays depends on
    when the copy lands."""
    text = CP_ASYNC.format(keep=0, read=4).replace(
        "            T.evaluate(T.ptx_wait_group(0))\n            for j in range(4):",
        "            for j in T.vectorized(4):\n                S[tx, j] = T.float32(5)\n"
        "            T.evaluate(T.ptx_wait_group(0))\n            for j in range(4):", 1)
    assert "T.float32(5)" in text
    r = parse(text, "copy.py")
    (_, f), = r.module.prim_funcs()
    arrays = [np.ones((32, 16), np.float32), np.zeros((32, 16), np.float32),
              np.zeros((32, 4), np.float32)]
    with pytest.raises(TirkitError) as e:
        run_threads(f, arrays, module=r.module)
    (d,) = e.value.diagnostics
    assert (d.code, d.span.line, d.related[0][0].line) == ("thread/race", 15, 12)
    assert d.message.startswith("data race: thread (threadIdx.x=0) writes an element that an "
                                "asynchronous copy of thread (threadIdx.x=0) at line 12")


# (a template: the GPU corpus test runs every thread-bound kernel of the test files)
SPARSE_MMA = '''from tvm.script import tir as T


@T.prim_func
def mma_sp(A: T.Buffer((16, 8), "float16"), C: T.Buffer((16, 8), "float16")):
    tx = T.env_thread("threadIdx.x")
    T.launch_thread(tx, 32)
    a = T.decl_buffer([4], "float16", scope="local")
    c = T.decl_buffer([4], "float16", scope="local")
    meta = T.decl_buffer([1], "uint32", scope="local")
    for i in range(4):
        a[i] = A[tx // 4 + i // 2 * 8, tx % 4 * 2 + i % 2]
    T.evaluate(T.ptx_mma_sp("m16n8k16", "row", "col", "fp16", "fp16", "fp16", a.data, 0,
                            a.data, 0, c.data, 0, meta.data, 0, {selector}, False,
                            dtype="float16"))
'''


def test_an_instruction_the_interpreter_lacks_is_refused_by_its_name():
    """Said at the call before its operands are evaluated: a register buffer's data is
    no value of its own in the thread interpreter, and naming it first hid the reason."""
    mod = parse(SPARSE_MMA.format(selector=0)).module
    rng = np.random.default_rng(2)
    with pytest.raises(TirkitError) as e:
        run_threads(mod["mma_sp"], [rng.standard_normal((16, 8)).astype("float16"),
                                    np.zeros((16, 8), "float16")], module=mod)
    (d,) = e.value.diagnostics
    assert (d.code, d.message, d.span.line) == (
        "codegen/unsupported", "the interpreter has no implementation of T.ptx_mma_sp", 13)
