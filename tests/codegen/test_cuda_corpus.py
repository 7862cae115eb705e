"""Every thread-bound kernel of the project (gpu_corpus.py finds them: the shared valid
examples, examples/, benchmarks/gpu_kernels/, tests/data/gpu/ and the kernels written as
strings in the test files) runs in the thread interpreter on random inputs and matches numpy,
and its CUDA compiles with nvcc for sm_80 and sm_90 (test_cuda_codegen.py).

The numpy reference of a kernel is its entry in REFERENCE (a numpy expression of what it
computes) or else the sequential reference interpreter (interp.py, numpy) on the kernel with
its thread loops run as ordinary loops: that is one order the threads may run in, so it is
the kernel's result whenever the threads do not meet at a barrier and do not race (the thread
interpreter asserts both).  A kernel that meets at a barrier needs a REFERENCE entry.

A kernel is left out only for a reason listed here: its validation errors (each code in
EXCLUDED_CODES: the test that holds it plants them), or its name in EXCLUDED."""
from __future__ import annotations

import dataclasses

import re

import numpy as np
import pytest

import tirkit
from gpu_corpus import thread_bound_kernels
from test_cuda_threads import REFERENCE, SAMPLED
from tirkit.codegen.cli import compare, make_inputs, make_scalars
from tirkit.codegen.cuda import emit_cuda
from tirkit.codegen.cuda.cli import AUTO_ALL_BLOCKS, grid_size
from tirkit.codegen.cuda.exprs import PRELUDE
from tirkit.codegen.cuda.nvcc import ARCHS, compile_cuda, find_nvcc
from tirkit.codegen.cuda.lower import launch_threads_to_loops, ptx_arith_to_stores
from tirkit.codegen.cuda.threads import run_threads
from tirkit.codegen.interp import run_reference
from tirkit.codegen.passes.rewrite import transform
from tirkit.ir import expr as E
from tirkit.ir import stmt as S
from tirkit.ir.visit import find_first, substitute, uses_var

# validation error code -> why a kernel reported with it is not run
EXCLUDED_CODES = {
    "name/undefined": "a template: the test substitutes its placeholder names (TX, ROWS, ...) "
                      "and the substituted kernels are collected",
    "thread/launch-limit": "planted: more threads per block than a GPU launches",
    "thread/shared-memory-limit": "planted: more shared memory than a block gets",
    "thread/cooperative-coverage": "planted: threads read shared or global memory other threads "
                                   "do not fill (the race tests run these and expect a race)",
    "thread/inconsistent-extent": "planted: one thread tag bound with two extents",
    "loop-nest/parallel-race": "planted: thread blocks that write one element of a parameter "
                               "(the race tests run these and expect a race)",
    "thread/execution-scope": "planted: a warp-level intrinsic run by part of a warp",
    "thread/invalid-reducer": "planted: an invalid cross-thread reduction",
    "loop-nest/reduction-on-parallel": "planted: a reduction bound to blockIdx",
    "loop-nest/not-bijective": "planted: block iterators that are not independent",
    "loop-nest/domain-mismatch": "planted: bindings that miss the iterator's domain",
    "bounds/out-of-bounds": "planted: an access outside its buffer",
    "signature/writes-mismatch": "planted: a wrong T.writes",
    "signature/region-out-of-bounds": "planted: a T.reads/T.writes region outside its buffer",
    "type/mismatch": "planted: a float thread extent and a float index",
}
# (file name, kernel name) -> why it checks clean and still is not run here
EXCLUDED = {
    ("gemm.py", "gpu_gemm_4096"): "the benchmark size of gpu_gemm_128's code (run at 128^3 "
                                  "here, at 4096^3 by benchmarks/gpu_check.sh)",
    ("wmma_gemm.py", "gpu_wmma_gemm_4096"): "the benchmark size of gpu_wmma_gemm_128's code",
    ("test_cuda_threads.py", "mma_wrong_layout"): "planted: registers outside PTX's fragment "
                                                  "layout give a wrong product (that test)",
    ("test_cuda_threads.py", "overlapping"): "planted: the vector stores of two threads "
                                             "overlap, a race (that test)",
    ("test_cuda_codegen.py", "warp_buf"): "planted: a warp-scope buffer the CUDA generator "
                                          "refuses with a diagnostic (that test)",
    ("test_cuda_codegen.py", "two_kernels"): "planted: a global intermediate between two "
                                             "kernels, refused with a diagnostic (that test)",
    ("test_cuda_allreduce.py", "reduce_not_innermost"): "planted: a cross-thread reduction "
        "the lowering refuses with a diagnostic (that test)",
    ("test_cuda_allreduce.py", "reduce_beside_threadidx_y"): "planted: a cross-thread "
        "reduction the lowering refuses with a diagnostic (that test)",
    ("test_cuda_allreduce.py", "reduce_under_thread_condition"): "planted: a cross-thread "
        "reduction the lowering refuses with a diagnostic (that test)",
    ("test_cuda_allreduce.py", "reduce_init_elsewhere"): "planted: a cross-thread "
        "reduction the lowering refuses with a diagnostic (that test)",
    ("test_cuda_tuple_reduction.py", "argmax_local_index"): "planted: a cross-thread "
        "reduction the lowering refuses with a diagnostic (that test)",
    ("test_core_constructs.py", "reduce_roundtrip"): "a printing round trip whose "
        "T.tvm_thread_allreduce writes through a pointer and whose allocation sits above the "
        "thread launch: the CUDA generator refuses both with a diagnostic",
    ("test_verify_rules.py", "one_trip"): "a coverage test with a serial loop above its thread "
        "bindings, which the CUDA generator refuses with a diagnostic",
    ("test_codegen_builtin_types.py", "typed"): "a typing test whose warp shuffles the reference "
        "interpreter, against which the thread interpreter is checked, does not run",
}


def _errors(k):
    return sorted({d.code for d in tirkit.check(k.text, str(k.path)) if d.severity == "error"})


def _classify():
    run, left = [], []
    for k in thread_bound_kernels():
        errs = _errors(k)
        if errs:
            left.append((k, errs))
        elif (k.path.name, k.name) in EXCLUDED:
            left.append((k, None))
        else:
            run.append(k)
    return run, left


RUN, LEFT_OUT = _classify()


def test_the_collection_finds_kernels_of_every_source():
    sources = {k.path.name for k in RUN}
    assert {"gpu_matmul_shared.py", "gpu_row_sum.py", "gemm.py", "test_verify_rules.py",
            "test_verify_recall.py", "test_schedule_cache.py", "test_core_constructs.py"} \
        <= sources
    assert sum(k.in_string for k in RUN) >= 15


def test_every_left_out_kernel_has_a_listed_reason():
    used = set()
    for k, errs in LEFT_OUT:
        if errs is None:
            used.add((k.path.name, k.name))
        else:
            assert set(errs) <= set(EXCLUDED_CODES), (k.id, errs)
    assert used == set(EXCLUDED)     # no stale entry
    assert {c for _, errs in LEFT_OUT if errs for c in errs} == set(EXCLUDED_CODES)


def _scope(var):
    return getattr(var.type_annotation, "scope", None) or "global"


def _sink(loop, s):
    """`for t in loop: s` with the loop moved in to every statement of s that may run for all
    threads at once: the order in which a GPU runs the threads of a block in lockstep."""
    v = loop.loop_var

    def free(*xs):
        return not any(uses_var(x, v) for x in xs if x is not None)
    if find_first(s, lambda x: isinstance(x, (E.BufferLoad, S.BufferStore)) and
                  x.buffer.scope.startswith("local")):
        return dataclasses.replace(loop, body=s)      # a thread's own registers: in order
    if isinstance(s, S.SeqStmt):
        return dataclasses.replace(s, seq=tuple(_sink(loop, x) for x in s.seq))
    if isinstance(s, S.For) and free(s.min, s.extent):
        return dataclasses.replace(s, body=_sink(loop, s.body))
    if isinstance(s, S.IfThenElse) and not find_first(s.condition, lambda x: isinstance(
            x, E.BufferLoad)):
        if free(s.condition):
            return dataclasses.replace(s, then_case=_sink(loop, s.then_case),
                                       else_case=s.else_case and _sink(loop, s.else_case))
        if isinstance(s.then_case, S.SeqStmt) and s.else_case is None:
            return _sink(loop, dataclasses.replace(s.then_case, seq=tuple(
                dataclasses.replace(s, then_case=x) for x in s.then_case.seq)))
    if isinstance(s, S.LetStmt) and isinstance(s.body, S.SeqStmt) and not find_first(
            s.value, lambda x: isinstance(x, E.BufferLoad)):
        return _sink(loop, dataclasses.replace(s.body, seq=tuple(
            dataclasses.replace(s, body=x) for x in s.body.seq)))
    if isinstance(s, S.Allocate) and _scope(s.buffer_var).startswith("shared") and \
            free(*s.extents) or \
            isinstance(s, S.DeclBuffer) and s.buffer.scope.startswith("shared") or \
            isinstance(s, S.AttrStmt) and s.attr_key != "thread_extent" and free(s.value):
        return dataclasses.replace(s, body=_sink(loop, s.body))
    return dataclasses.replace(loop, body=s)


def _unify_threads(body):
    """A loop bound to a tag a loop around it binds is that loop's index (TVM unifies the
    two; CUDA has one `threadIdx.y`)."""
    def fn(x):
        if not (isinstance(x, S.For) and x.kind == "thread_binding"):
            return None

        def inner(y):
            if isinstance(y, S.For) and y.kind == "thread_binding" and \
                    y.thread_tag == x.thread_tag:
                assert isinstance(y.min, E.IntImm) and isinstance(y.extent, E.IntImm)
                at = E.Add(x.loop_var, E.IntImm(x.loop_var.dtype, y.min.value - x.min.value),
                           x.loop_var.dtype)
                body = substitute(y.body, {id(y.loop_var): at})
                return S.IfThenElse(E.LT(at, E.Add(y.min, y.extent, y.min.dtype), "bool"),
                                    body, None)
            return None
        return dataclasses.replace(x, body=transform(x.body, inner))
    return transform(body, fn)


def _lockstep(func, sampled=False):
    """func with its thread loops as ordinary loops, each statement run for every thread of
    a block before the next (blocks one after another; `sampled`: only the first and last
    block of each blockIdx loop, the blocks the thread interpreter's sample of 2 runs)."""
    def fn(x):
        if isinstance(x, S.For) and x.kind == "thread_binding":
            if not x.thread_tag.startswith("blockIdx"):
                return _sink(S.For(x.loop_var, x.min, x.extent, "serial", x.body,
                                   span=x.span), x.body)
            if sampled and isinstance(x.extent, E.IntImm) and x.extent.value > 2:
                j = E.Var(x.loop_var.name + "_sample", x.loop_var.dtype)
                at = E.Add(x.min, E.Mul(j, E.IntImm(j.dtype, x.extent.value - 1), j.dtype),
                           j.dtype)
                return S.For(j, E.IntImm(j.dtype, 0), E.IntImm(j.dtype, 2), "serial",
                             substitute(x.body, {id(x.loop_var): at}), span=x.span)
            return S.For(x.loop_var, x.min, x.extent, "serial", x.body, span=x.span)
        return None
    body = _unify_threads(ptx_arith_to_stores(launch_threads_to_loops(func.body)))
    return dataclasses.replace(func, body=transform(body, fn))


@pytest.mark.parametrize("k", RUN, ids=lambda k: k.id)
def test_kernel_runs_in_the_thread_interpreter_and_matches_numpy(k):
    emit_cuda(k.func, k.module)                       # the generator accepts it
    rng = np.random.default_rng(7)
    arrays = make_inputs(k.func, rng)
    scalars = make_scalars(k.func, rng)
    inputs = [a.copy() for a in arrays]
    blocks = SAMPLED.get(k.name) or (2 if grid_size(k.func) > AUTO_ALL_BLOCKS else None)
    it = run_threads(k.func, arrays, scalars, module=k.module, blocks=blocks)
    outputs = [i for i, (a, b) in enumerate(zip(arrays, inputs))
               if it.written_mask(a) is not None and it.written_mask(a).any()]
    if not outputs:                 # it ran and left its arguments alone
        for got, before in zip(arrays, inputs):
            np.testing.assert_array_equal(got, before)
        return
    if k.name in REFERENCE:
        ref_fn, out, tol = REFERENCE[k.name]
        want = {out: np.asarray(ref_fn(*[a.copy() for a in inputs]))}
    else:
        ref = [a.copy() for a in inputs]
        run_reference(_lockstep(k.func, blocks == 2), ref, scalars, module=k.module)
        want, tol = {i: ref[i] for i in outputs}, None
    for i, w in want.items():
        got = arrays[i]
        mask = it.written_mask(got)
        if blocks is None:              # every block ran
            if tol is None:
                mask = np.ones(got.shape, bool)      # what no thread wrote matches too
            else:
                assert mask.all()                    # every output element written
        g, w = got[mask], np.asarray(w)[mask]
        if tol is None:
            ok, err = compare(g, w.astype(g.dtype), str(got.dtype) if got.dtype.kind != "V"
                              else "bfloat16")
        else:
            g64, w64 = g.astype(np.float64), w.astype(np.float64)
            err = np.max(np.abs(g64 - w64)) / max(np.max(np.abs(w64)), 1e-30)
            ok = err <= tol
        assert ok, (k.id, i, err)


@pytest.mark.parametrize("arch", ARCHS)
def test_every_kernel_compiles_with_nvcc(arch):
    """One translation unit of every kernel run above (and the benchmark-size GEMM)."""
    if find_nvcc() is None:
        pytest.skip("nvcc is not installed (pip install nvidia-cuda-nvcc nvidia-cuda-runtime "
                    "nvidia-cuda-cccl, the cuda-compile extra)")
    kernels = RUN + [k for k, errs in LEFT_OUT if errs is None and
                     EXCLUDED[(k.path.name, k.name)].startswith("the benchmark size")]
    assert {"gpu_gemm_4096", "gpu_wmma_gemm_4096", "gpu_wmma_gemm_128"} <= {k.name for k in kernels}
    parts, names = [PRELUDE], []
    for i, k in enumerate(kernels):
        src = emit_cuda(k.func, k.module)
        code = src.kernels_code
        for launch in src.kernels:            # one translation unit: names made unique
            code = re.sub(rf"\b{launch.name}\b", f"{launch.name}_{i}", code)
            names.append(f"{launch.name}_{i}")
        for fn in src.functions:              # device functions too
            code = re.sub(rf"\b{fn}\b", f"{fn}_{i}", code)
        parts.append(code)
    ptx = compile_cuda("\n".join(parts), arch, "ptx").decode()
    for n in names:
        assert f".entry {n}(" in ptx
    assert f".target {arch}" in ptx
    # float4 moves stay 128-bit instructions, barriers stay barriers
    assert "ld.global.nc.v4.f32" in ptx and "st.shared.v4.f32" in ptx
    assert "ld.global.nc.v4.u32" in ptx and "st.shared.v4.u32" in ptx     # 8 halves at once
    assert "bar.sync" in ptx
    # wmma fragments stay tensor-core instructions
    assert "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32" in ptx
    assert "wmma.load.a.sync.aligned.row.m16n16k16.shared.f16" in ptx
    assert "wmma.store.d.sync.aligned.row.m16n16k16.global.f32" in ptx
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx


def test_gpu_check_script_dry_run(tmp_path):
    """benchmarks/gpu_check.py without a GPU: every kernel validated and generated, the
    planted ones listed as not run, the over-limit launch flagged with the table's limits."""
    import subprocess
    import sys
    from conftest import ROOT, server_env
    out = tmp_path / "gpu_check.md"
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_check.py"), "--dry-run",
                        "--out", str(out)], capture_output=True, text=True, timeout=600,
                       env=server_env())
    assert r.returncode == 0, r.stderr[-2000:]
    text = out.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ") and "(dry run)" in line]
    # and the clean kernels left out of the CPU test: the benchmark sizes, the wrong layout,
    # the overlapping vector stores, the typing test's warp shuffles
    extra = [k for k, errs in LEFT_OUT if errs is None and
             "refuse" not in EXCLUDED[(k.path.name, k.name)]]
    assert len(rows) == len(RUN) + len(extra) and len(extra) == 5
    assert "| wmma_gemm.py:gpu_wmma_gemm_4096 | (dry run)" in text
    assert "flagged thread/launch-limit (line 7)" in text
    assert "racy.py:racy_global (invalid: loop-nest/parallel-race, " \
        "thread/cooperative-coverage)" in text


def test_run_and_bench_with_the_cuda_target_without_a_gpu():
    import subprocess
    import sys
    from conftest import ROOT, server_env
    from tirkit.codegen.cuda.runtime import available
    if available() is None:
        pytest.skip("a GPU is present: benchmarks/gpu_check.sh runs these on it")
    wmma = str(ROOT / "benchmarks" / "gpu_kernels" / "wmma_gemm.py")
    r = subprocess.run([sys.executable, "-m", "tirkit.cli", "run", "--target", "cuda", "--check",
                        wmma, "--func", "gpu_wmma_gemm_128"], capture_output=True, text=True,
                       timeout=300, env=server_env())
    assert r.returncode == 0, r.stderr
    assert "gpu_wmma_gemm_128: no GPU here: ran in the thread interpreter on the CPU (1 of 1 " \
        "block(s) of 256 thread(s), 8 barrier(s) passed): no data race" in r.stdout
    b = subprocess.run([sys.executable, "-m", "tirkit.cli", "bench", "--target", "cuda", wmma],
                       capture_output=True, text=True, timeout=300, env=server_env())
    assert b.returncode == 2 and "tirkit bench --target cuda: pycuda cannot run" in b.stderr
