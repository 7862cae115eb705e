"""Small kernels and helpers for the tuner's tests."""
from __future__ import annotations

import dataclasses

import numpy as np

import tirkit
from tirkit.ir import stmt as S

MATMUL = '''from tvm.script import tir as T


@T.prim_func
def mm(
    A: T.Buffer((64, 32), "float32"),
    B: T.Buffer((32, 48), "float32"),
    C: T.Buffer((64, 48), "float32"),
):
    T.func_attr({"global_symbol": "mm", "tir.noalias": True})
    for i, j, k in T.grid(64, 48, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def parsed(text=MATMUL):
    r = tirkit.parse(text)
    assert not [d for d in r.diagnostics if d.severity == "error"]
    return r


def run_matmul(module, name="mm", seed=1):
    """The kernel built from `module` on random non-zero inputs, checked against numpy."""
    from tirkit.codegen import build
    f = module[name]
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 1.5, (64, 32)).astype(np.float32)
    b = rng.uniform(-1.5, -0.5, (32, 48)).astype(np.float32)
    c = np.zeros((64, 48), np.float32)
    build(f, module)(a, b, c)
    return float(np.max(np.abs(c - a @ b)) / np.max(np.abs(a @ b)))


class ParallelReductionSketch:
    """A planted invalid sketch: a tiling whose outer reduction loop is then made parallel by
    editing the IR directly (past the `parallel` primitive's own check)."""

    def __init__(self, inner):
        self.inner = inner
        self.name = "planted: parallel reduction"

    def sample(self, rng):
        return self.inner.sample(rng)

    def mutate(self, d, rng):
        return self.inner.mutate(d, rng)

    def apply(self, module, d):
        sch = self.inner.apply(module, d)
        f = sch.func()
        red = None

        def find(x):
            nonlocal red
            if isinstance(x, S.For) and x.loop_var.name.startswith("k") and red is None:
                red = x
            if isinstance(x, tuple):
                for y in x:
                    find(y)
            elif isinstance(x, S.Stmt):
                for fld in ("body", "seq", "block"):
                    if hasattr(x, fld):
                        find(getattr(x, fld))
        find(f.body)
        assert red is not None
        sch.replace(f.name, red, dataclasses.replace(red, kind="parallel"))
        return sch
