"""Shared kernels and checks for the schedule tests."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import tirkit
from tirkit.ir import stmt as S
from tirkit.schedule import Schedule

HEAD = "from tvm.script import tir as T\n\n\n"

_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES_VALID = (_ROOT.parent / "shared" / "examples" / "valid"
                  if (_ROOT.parent / "shared").exists()
                  else Path(os.environ.get("TIRKIT_SHARED", "/work/shared")) / "examples" / "valid")

MATMUL = HEAD + '''@T.prim_func
def matmul(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
           C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''

MATMUL_RELU = HEAD + '''@T.prim_func
def matmul_relu(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32, 16), "float32"),
                D: T.Buffer((16, 16), "float32")):
    C = T.alloc_buffer((16, 16), "float32")
    for i, j, k in T.grid(16, 16, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 16):
        with T.block("relu"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(C[vi, vj])
            T.writes(D[vi, vj])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))
'''

# three elementwise stages: B = A * 2, C = B + 1 (transposed read), D = C * C
CHAIN = HEAD + '''@T.prim_func
def chain(A: T.Buffer((16, 8), "float32"), D: T.Buffer((8, 16), "float32")):
    B = T.alloc_buffer((16, 8), "float32")
    C = T.alloc_buffer((8, 16), "float32")
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vj, vi])
            T.writes(C[vi, vj])
            C[vi, vj] = B[vj, vi] + T.float32(1)
    for i, j in T.grid(8, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(C[vi, vj])
            T.writes(D[vi, vj])
            D[vi, vj] = C[vi, vj] * C[vi, vj]
'''

# a row sum without declared regions (they are inferred)
ROWSUM = HEAD + '''@T.prim_func
def rowsum(A: T.Buffer((8, 24), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 24):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
'''


def sched(text, func_name=None):
    r = tirkit.parse(text)
    assert not [d for d in r.diagnostics if d.severity == "error"], r.diagnostics
    return Schedule(r.module, func_name)


def body_text(sch) -> str:
    """The printed module without the import line, for before/after comparisons."""
    return tirkit.to_script(sch.mod, imports=False).strip() + "\n"


def check_result(sch):
    """The printed result parses back to the same IR, checks clean, and the trace replays
    (as recorded instructions and as the printed Python) to the same module."""
    text = tirkit.to_script(sch.mod)
    r = tirkit.parse(text)
    assert not r.diagnostics, (r.diagnostics, text)
    assert tirkit.structural_equal(_fold_extents(r.module), _fold_extents(sch.mod)), text
    errs = [d for d in tirkit.check(text) if d.severity == "error"]
    assert not errs, (errs, text)
    replayed = sch.trace.apply(Schedule(sch.original))
    assert tirkit.structural_equal(replayed.mod, sch.mod)
    ns = {"sch": Schedule(sch.original)}
    exec(sch.trace.as_python(), ns)
    assert tirkit.structural_equal(ns["sch"].mod, sch.mod)


def _fold_extents(mod):
    """The parser keeps a slice `a:b` as extent `b - a`; fold it to a constant when it is one
    (as TVM's parser does) before comparing."""
    import dataclasses

    from tirkit.ir import expr as E
    from tirkit.schedule import _arith, _ir

    def fn(y, x):
        if isinstance(y, S.BufferRegion):
            rs = tuple(E.Range(r.min, _arith.simplify(r.extent)) for r in y.region)
            return dataclasses.replace(y, region=rs)
        return None
    funcs = tuple((n, dataclasses.replace(f, body=_ir.rebuild(f.body, fn))
                   if isinstance(f, S.PrimFunc) else f) for n, f in mod.functions)
    return dataclasses.replace(mod, functions=funcs)


def _inputs(func, seed):
    rng = np.random.default_rng(seed)
    arrays = []
    for _, b in func.buffer_map:
        shape = tuple(int(d.value) for d in b.shape)
        if b.dtype.startswith("float"):
            arrays.append(rng.standard_normal(shape).astype(b.dtype))
        else:
            arrays.append(rng.integers(-8, 8, shape).astype(b.dtype))
    return arrays


def check_same_results(sch, func_name=None, seed=0):
    """Run the original and the scheduled function on the same random inputs through the
    reference interpreter; every buffer must agree afterwards."""
    interp = pytest.importorskip("tirkit.codegen.interp")
    name = func_name or sch._default
    f0 = sch.original[name]
    f1 = sch.mod[name]
    a0 = _inputs(f0, seed)
    a1 = [x.copy() for x in a0]
    interp.run_reference(f0, a0, module=sch.original)
    interp.run_reference(f1, a1, module=sch.mod)
    for x, y in zip(a0, a1):
        assert np.abs(x).sum() > 0
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


def loops_of(sch, block_name):
    return sch.get_loops(sch.get_block(block_name))


def loop_nodes(sch, rvs):
    return [sch.get(rv) for rv in rvs]


def first_realize(stmt):
    from tirkit.ir.visit import walk
    out = []
    walk(stmt, lambda x: out.append(x) if isinstance(x, S.BlockRealize) else True)
    return out
