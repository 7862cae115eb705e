"""The wmma builtins (wmma.py) in the thread interpreter: each call runs with its matrix
meaning for every thread of the warp, a fragment being one whole tile that every thread of
the warp holds a copy of; reads and writes of shared and global memory through the call's
pointer go through the race detector like any other access.  (PTX's mma, ldmatrix and
asynchronous copies: ptx_run.py.)"""
from __future__ import annotations

import types

import numpy as np

from ..errors import OUT_OF_BOUNDS, fail
from ..interp_exprs import LANES, TID
from . import wmma



def _shapes(it):
    shapes = getattr(it, "_wmma_shapes", None)
    if shapes is None:
        shapes = it._wmma_shapes = wmma.fragment_shapes(it.func.body)
    return shapes


def lane_ints(it, e, env, n):
    """e's integer value in each of the n lanes of env."""
    return np.broadcast_to(np.asarray(it.eval(e, env)).astype(np.int64), (n,))


def inside(stmt, st, flat, what):
    """Stop at a call that reaches outside its storage, as an access would."""
    size = st.array.shape[-1]
    if flat.size and (flat.min() < 0 or flat.max() >= size):
        bad = int(flat.min()) if flat.min() < 0 else int(flat.max())
        fail(OUT_OF_BOUNDS, f"T.{stmt.value.op} reaches outside {what}: element {bad}, "
             f"but its storage holds {size}", stmt)


def call_site(it, stmt, var):
    """A stand-in access node for the race detector: the call's statement, on var."""
    sites = it.__dict__.setdefault("_wmma_sites", {})
    key = (id(stmt), id(var))
    if key not in sites:
        sites[key] = types.SimpleNamespace(buffer=types.SimpleNamespace(data=var),
                                           span=stmt.span)
    return sites[key]


class _Call:
    def __init__(self, it, stmt, env):
        self.it, self.stmt, self.env = it, stmt, env
        tid = env.get(TID)
        self.tid = np.zeros(1, np.int64) if tid is None else \
            np.atleast_1d(np.asarray(tid, dtype=np.int64))
        self.n = self.tid.shape[0]

    def ints(self, e):
        return lane_ints(self.it, e, self.env, self.n)

    # fragments: (storage, lane rows or None, flat element indices (n, rows * cols), tile)
    def fragment(self, var, index):
        st = self.it.storage[id(var)]
        shape = _shapes(self.it).get(id(var))
        rows, cols = wmma.tile(var, shape)
        flat = self.ints(index)[:, None] * (rows * cols) + np.arange(rows * cols)
        self.inside(st, flat, f"fragment '{var.name}'")
        sel = None if st.lane_key is None else \
            np.broadcast_to(np.asarray(self.env[st.lane_key]), (self.n,))
        return st, sel, flat, (rows, cols)

    def get(self, frag):
        st, sel, flat, (r, c) = frag
        vals = st.array[sel[:, None], flat] if sel is not None else st.array[flat]
        return vals.reshape(self.n, r, c)

    def put(self, frag, vals):
        st, sel, flat, _ = frag
        vals = np.asarray(vals).reshape(self.n, -1).astype(st.array.dtype)
        if sel is not None:
            st.array[sel[:, None], flat] = vals
        else:
            st.array[flat] = vals

    # memory behind a T.tvm_access_ptr
    def memory(self, ptr, stride, layout, tile):
        _ann, data, offset = ptr.args[:3]
        st = self.it.storage[id(data)]
        r, c = np.meshgrid(np.arange(tile[0]), np.arange(tile[1]), indexing="ij")
        s = self.ints(stride)[:, None]
        rel = (r.reshape(-1) * s + c.reshape(-1)) if layout == "row_major" else \
            (c.reshape(-1) * s + r.reshape(-1))
        flat = self.ints(offset)[:, None] + rel
        self.inside(st, flat, f"'{data.name}'")
        return data, st, flat

    def inside(self, st, flat, what):
        inside(self.stmt, st, flat, what)

    def load(self, ptr, stride, layout, tile):
        data, st, flat = self.memory(ptr, stride, layout, tile)
        if st.lane_key is not None:
            sel = np.asarray(self.env[st.lane_key])
            return st.array[sel[:, None], flat].reshape(self.n, *tile)
        tid = np.repeat(self.tid, flat.shape[1])
        self.it._check(call_site(self.it, self.stmt, data), st, flat.reshape(-1), tid, None)
        return st.array[flat].reshape(self.n, *tile)

    def store(self, ptr, stride, layout, tile, vals):
        data, st, flat = self.memory(ptr, stride, layout, tile)
        vals = np.asarray(vals).reshape(self.n, -1).astype(st.array.dtype)
        if st.lane_key is not None:
            sel = np.asarray(self.env[st.lane_key])
            st.array[sel[:, None], flat] = vals
            return
        tid = np.repeat(self.tid, flat.shape[1])
        self.it._check(call_site(self.it, self.stmt, data), st, flat.reshape(-1), tid,
                       vals.reshape(-1))
        st.array[flat.reshape(-1)] = vals.reshape(-1)


def _wide(x):
    return x.astype(np.float64) if x.dtype.kind == "f" or x.dtype.kind == "V" else \
        x.astype(np.int64)


def run_wmma(it, stmt, env):
    """Run one wmma builtin call (the Evaluate stmt) for the lanes of env."""
    if env.get(LANES) is not None and not np.size(env.get(TID, 1)):
        return
    call = stmt.value
    a = call.args
    c = _Call(it, stmt, env)
    if call.op == wmma.FILL:
        frag = c.fragment(a[0], a[4])
        value = np.broadcast_to(np.asarray(it.eval(a[5], env)), (c.n,))
        c.put(frag, np.repeat(value[:, None], frag[2].shape[1], axis=1))
    elif call.op == wmma.LOAD:
        frag = c.fragment(a[0], a[4])
        c.put(frag, c.load(a[5], a[6], a[7].value, frag[3]))
    elif call.op == wmma.STORE:
        frag = c.fragment(a[0], a[4])
        c.store(a[5], a[6], a[7].value, frag[3], c.get(frag))
    else:                                           # D = A @ B + C
        d, x, y, z = (c.fragment(a[i], a[i + 1]) for i in (0, 2, 4, 6))
        out = np.matmul(_wide(c.get(x)), _wide(c.get(y))) + _wide(c.get(z))
        c.put(d, out)
