"""`tirkit.codegen.cuda.describe`: what a call of PTX's warp instructions does, as the
editor's hover says it: the instruction, each lane's part, and the fragment layout of the
forms tirkit runs, read against PTX's layout tables."""
from __future__ import annotations

from tirkit import parse
from tirkit.codegen.cuda.describe import describe
from tirkit.ir import expr as E
from tirkit.ir.visit import walk


def calls(body, spelling="tir"):
    text = (f"from tvm.script import {spelling} as T\n\n\n@T.prim_func\n"
            "def k(A: T.Buffer((64,), \"float32\")):\n"
            "    x = T.alloc_buffer((64,), \"float16\", scope=\"local\")\n"
            "    S = T.alloc_buffer((64,), \"float32\", scope=\"shared\")\n"
            "    for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
            + "".join(f"        {line}\n" for line in body))
    (_, f), = parse(text, "k.py").module.prim_funcs()
    out = []
    walk(f.body, lambda x: out.append(x) if isinstance(x, E.Call) and x.op != "tvm_access_ptr"
         else None)
    return [describe(c) for c in out]


def mma(words, spelling="tir", op="T.ptx_mma"):
    (d,) = calls([f"T.evaluate({op}({words}, x.data, 0, x.data, 0, x.data, 0, False))"],
                 spelling)
    return "\n".join(d)


def test_an_mma_of_four_products_and_its_quad_pairs():
    d = mma('"m8n8k4", "row", "row", "fp16", "fp16", "fp16"')
    assert d.startswith("`mma.sync.aligned.m8n8k4.row.row.f16.f16.f16.f16` (4 independent "
                        "products, one per quad pair)")
    assert "1,024 multiply-adds" in d
    # lane 4 is quad pair 1's first lane: rows 0-3 of its A, row 0 for lane 4
    assert "| A | (0,0,0) (0,1,0) (0,2,0) (0,3,0) | (1,0,0) (1,1,0) (1,2,0) (1,3,0) | " \
           "(0,0,1) (0,1,1) (0,2,1) (0,3,1) |" in d


def test_forms_not_generated_and_forms_ptx_has_not():
    d = mma('"m8n8k4", "row", "col", "fp16", "fp16", "fp32"')
    assert "`mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32`" in d
    assert "tirkit does not run or generate this form" in d and "lane 0" not in d
    d = mma('"m16n8k16", "row", "col", "bf16", "bf16", "fp16"', "tirx", "T.ptx_legacy.mma")
    assert d == "`T.ptx_legacy.mma`: no PTX mma: bf16 multiplicands accumulate in f32, not f16."


def test_copies_and_their_groups():
    c, commit, wait0, wait2 = calls([
        'T.evaluate(T.ptx_cp_async(S.data, tx * 2, A.data, tx * 2, 8, dtype="float32"))',
        "T.evaluate(T.ptx_commit_group())", "T.evaluate(T.ptx_wait_group(0))",
        "T.evaluate(T.ptx_wait_group(2))"])
    assert c[0] == "`cp.async.ca.shared.global`, 8 bytes (2 float32 elements)"
    assert "Copies from `A` from element `tx * 2`, read as global memory, to `S` from " \
           "element `tx * 2`, written as shared memory, in the background." in c[2]
    assert commit[0].startswith("`cp.async.commit_group`")
    assert wait0[0].startswith("`cp.async.wait_group 0`: waits until all of this thread's "
                               "copy groups have landed.")
    assert wait2[0].startswith("`cp.async.wait_group 2`: waits until at most 2 of this "
                               "thread's most recent copy groups are still in flight")


def test_other_calls_are_not_described():
    assert calls(["A[tx] = T.exp(A[tx])"]) == [None]


def test_wmma_builtins():
    text = ("from tvm.script import tir as T\n\n\n@T.prim_func\n"
            "def k(A: T.Buffer((512,), \"float16\")):\n"
            "    a = T.alloc_buffer((32, 16), \"float16\", scope=\"wmma.matrix_a\")\n"
            "    c = T.alloc_buffer((32, 8), \"float32\", scope=\"wmma.accumulator\")\n"
            "    for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
            "        T.evaluate(T.tvm_fill_fragment(c.data, 32, 8, 16, 0, T.float32(0)))\n"
            "        T.evaluate(T.tvm_load_matrix_sync(a.data, 32, 8, 16, 0, T.tvm_access_ptr("
            "T.type_annotation(\"float16\"), A.data, 0, 512, 1), 32, {layout}))\n"
            "        T.evaluate(T.tvm_mma_sync(c.data, 0, a.data, 0, a.data, 0, c.data, 0))\n")
    # (a template, so that the GPU corpus test does not take it for a kernel to run: its mma
    # multiplies `a` by itself, which only this description may read)
    (_, f), = parse(text.format(layout='"col_major"'), "k.py").module.prim_funcs()
    out = []
    walk(f.body, lambda x: out.append(describe(x)) if isinstance(x, E.Call) and
         x.op.startswith("tvm_") and x.op != "tvm_access_ptr" else None)
    fill, load, mma_ = ("\n".join(d) for d in out)
    assert "fragment `0` of `c` (accumulator, 32×8 float32 of m32n8k16)" in fill
    # m32n8k16's A is 32 x 16: 16 columns of 32, stride 32, end at 15 * 32 + 32
    assert "loads fragment `0` of `a` (matrix_a, 32×16 float16 of m32n8k16) from `A` from " \
           "element `0` (float16), col_major: 16 columns of 32 elements, 32 apart (a span of " \
           "512 elements)" in load
    assert mma_.startswith("`nvcuda::wmma::mma_sync`")
    assert "`c`[`0`] = `a`[`0`] `a`[`0`] + `c`[`0`]" in mma_
