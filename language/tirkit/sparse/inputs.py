"""Random inputs for a sparse kernel: a random nonzero pattern per compressed level (each
parent position keeps each coordinate with probability `density`), values never zero, and
the scalar parameters (lengths, nnz) that fit them.  numpy only."""
from __future__ import annotations

import numpy as np

from ..codegen.errors import ARGUMENT, fail
from ..ir import expr as E
from ..ir.constants import numpy_dtype
from .lower import positions


def evaluate(e, env):
    if isinstance(e, E.IntImm):
        return e.value
    if isinstance(e, E.Var):
        if id(e) not in env:
            fail(ARGUMENT, f"no value for '{e.name}'", e)
        return env[id(e)]
    ops = {E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b, E.Mul: lambda a, b: a * b,
           E.FloorDiv: lambda a, b: a // b}
    f = ops.get(type(e))
    if f is None:
        fail(ARGUMENT, "a sparse shape that is not a sum or product of sizes", e)
    return f(evaluate(e.a, env), evaluate(e.b, env))


def random_pattern(rng, rows, length, density, sort=True):
    """(indptr, indices) of a rows x length pattern, each entry kept with probability density."""
    counts = rng.binomial(length, density, rows)
    indices = [np.sort(rng.choice(length, c, replace=False)) if c else np.zeros(0, np.int64)
               for c in counts]
    if not sort:
        indices = [rng.permutation(x) for x in indices]
    indptr = np.zeros(rows + 1, np.int64)
    indptr[1:] = np.cumsum(counts)
    flat = np.concatenate(indices) if indices else np.zeros(0, np.int64)
    return indptr, flat


def _values(rng, shape, dtype):
    nd = numpy_dtype(dtype)
    v = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    return np.ascontiguousarray(v.astype(nd))


def sparse_inputs(func, lowered, rng, sizes=None, density=0.3, patterns=None):
    """(arrays, scalars, env) for `lowered` (the dense form of sparse kernel `func`), in its
    buffer and scalar-parameter order.  `sizes`: values of length parameters by name
    (default 16); `patterns`: (indptr, indices) to use for an axis, by axis name."""
    sizes = dict(sizes or {})
    patterns = dict(patterns or {})
    env = {}
    scalars = [p for p in func.params if func.buffer_of(p) is None and p.dtype != "handle"]
    nnz_vars = {id(a.nnz) for a in func.sparse_axes
                if a.kind in ("sparse_variable", "dense_variable") and isinstance(a.nnz, E.Var)}
    for p in scalars:
        if id(p) not in nnz_vars:
            env[id(p)] = int(sizes.get(p.name, 16))
    storage = {}
    for a in func.sparse_axes:
        if a.kind == "dense_fixed":
            continue
        rows = evaluate(positions(a.parent), env)
        length = evaluate(a.length, env)
        key = id(a.indptr if a.indptr is not None else a.indices)
        if key in storage:
            indptr, indices = storage[key]
        elif a.name in patterns:
            indptr, indices = (np.asarray(x) for x in patterns[a.name])
        elif a.kind == "sparse_fixed":
            cols = evaluate(a.nnz, env)
            indices = np.concatenate([np.sort(rng.choice(length, cols, replace=False))
                                      for _ in range(rows)]) if rows else np.zeros(0)
            indptr = None
        elif a.kind == "dense_variable":
            counts = rng.integers(0, length + 1, rows)
            indptr = np.zeros(rows + 1, np.int64)
            indptr[1:] = np.cumsum(counts)
            indices = None
        else:
            indptr, indices = random_pattern(rng, rows, length, density,
                                             sort=a.sorted and a.format != "hash")
        storage[key] = (indptr, indices)
        it = numpy_dtype(a.idtype)
        if a.indptr is not None:
            storage[id(a.indptr)] = indptr.astype(it)
            if id(a.nnz) in nnz_vars and id(a.nnz) not in env:
                env[id(a.nnz)] = int(indptr[-1])
        if a.indices is not None:
            storage[id(a.indices)] = indices.astype(it)
    arrays = []
    for p in lowered.params:
        b = lowered.buffer_of(p)
        if b is None:
            continue
        if id(p) in storage:
            arrays.append(np.ascontiguousarray(storage[id(p)]))
        else:
            shape = tuple(evaluate(s, env) for s in b.shape)
            arrays.append(_values(rng, shape, b.dtype))
    values = [np.array(env[id(p)], dtype=numpy_dtype(p.dtype))[()] for p in scalars]
    return arrays, values, env


__all__ = ["sparse_inputs", "random_pattern", "evaluate"]
