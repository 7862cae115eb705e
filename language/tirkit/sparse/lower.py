"""Sparse iterations -> ordinary loops over indptr/indices, so the code generator and the
interpreter run sparse kernels.

Each iterated axis becomes one loop: a dense level loops over its coordinates, a compressed
level over the positions `indptr[p] .. indptr[p + 1]` of its parent position `p` (its
coordinate is `indices[pos]`), a fixed-width compressed level over `p * nnz_cols + k`, a ragged
dense level over `indptr[p] + k`.  The iterator's name is bound to its coordinate, so the body
reads as written.  A sparse buffer becomes its flat value array; an access by the iterator of
the buffer's own level steps (the loop's position), an access by a coordinate into a dense level
computes the offset, and into a compressed level locates it (binary search over sorted indices,
a scan over a hashed or unsorted level); a read of a missing element is zero, a write to one is
dropped.  Two sorted compressed levels of the same coordinates, one iterated and the other
read as a factor of an accumulation, are co-iterated by merge (a two-finger walk that runs
the body where both have the coordinate) instead of searching.  `T.init()` runs before the outermost reduction loop, over the spatial iterators
inside it."""
from __future__ import annotations

import dataclasses

from ..codegen.errors import UNSUPPORTED, fail
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.equality import identical
from ..ir.sparse import SparseBuffer, SparseIteration
from ..ir.visit import rebuild
from .merge import MergeMixin

I32 = "int32"


def _i(v, dtype=I32):
    return E.IntImm(dtype, v)


def _load(buf, idx):
    return E.BufferLoad(buf, (idx,), buf.dtype)


def _mul(a, b):
    if isinstance(a, E.IntImm) and a.value == 0:
        return a
    if isinstance(b, E.IntImm) and b.value == 1:
        return a
    return E.Mul(a, b, a.dtype)


def _add(a, b):
    if isinstance(a, E.IntImm) and a.value == 0:
        return b
    if isinstance(b, E.IntImm) and b.value == 0:
        return a
    return E.Add(a, b, a.dtype)


def positions(axis):
    """How many positions a level has (the length of the level below's indptr, minus one)."""
    if axis.kind == "dense_fixed":
        return axis.length if axis.parent is None else _mul(positions(axis.parent), axis.length)
    if axis.kind == "sparse_fixed":
        return _mul(positions(axis.parent), axis.nnz)
    return axis.nnz


def flat_size(axes):
    size = _i(1)
    for a in axes:
        if a.kind == "dense_fixed":
            size = _mul(size, a.length) if not (isinstance(size, E.IntImm) and
                                                 size.value == 1) else a.length
        elif a.kind == "sparse_fixed":
            size = _mul(size, a.nnz)
        else:
            size = a.nnz
    return size


class _Lowering(MergeMixin):
    def __init__(self, func):
        self.func = func
        self.storage = {}        # id(handle Var or Buffer) -> Buffer (indptr / indices)
        self.values = {}         # id(SparseBuffer) -> Buffer (its flat or dense value array)
        self.counter = 0
        self.merged = {}         # (id(axis), id(iterator var)) -> position Var of a merge
        self.located = []        # ((axis, parent position, coordinate), (pos, found, cell))

    # ---- buffers ---------------------------------------------------------------------------
    def storage_of(self, axis, what):
        h = getattr(axis, what)
        if isinstance(h, S.Buffer):
            return h
        b = self.storage.get(id(h))
        if b is None:
            size = _add(positions(axis.parent), _i(1)) if what == "indptr" else \
                (axis.nnz if axis.kind == "sparse_variable" else
                 _mul(positions(axis.parent), axis.nnz))
            b = S.Buffer(h.name, (size,), axis.idtype, E.Var(h.name, "handle"))
            self.storage[id(h)] = b
        return b

    def value_buffer(self, sb):
        b = self.values.get(id(sb))
        if b is None:
            dense = all(a.kind == "dense_fixed" for a in sb.axes)
            shape = tuple(a.length for a in sb.axes) if dense else (flat_size(sb.axes),)
            b = S.Buffer(sb.name, shape, sb.dtype, E.Var(sb.name, "handle"))
            self.values[id(sb)] = b
        return b

    def buffer_map(self):
        out = []
        for p, b in self.func.buffer_map:
            out.append((p, self.value_buffer(b) if isinstance(b, SparseBuffer) else b))
        for a in self.func.sparse_axes:
            for what in ("indptr", "indices"):
                h = getattr(a, what)
                if isinstance(h, E.Var):
                    out.append((h, self.storage_of(a, what)))
        seen, uniq = set(), []
        for p, b in out:
            if id(p) not in seen:
                seen.add(id(p))
                uniq.append((p, b))
        return tuple(uniq)

    # ---- iterations ------------------------------------------------------------------------
    def iteration(self, it: SparseIteration):
        its = list(it.sp_iter_vars)
        first_r = next((k for k, v in enumerate(its) if v.is_reduction), len(its))
        env = {}           # id(var) -> (axis, position, coordinate)

        def loops(k, stop, body_fn):
            if k == stop:
                return body_fn()
            v = its[k]
            a = v.axis
            var = v.var
            if a.kind == "dense_fixed":
                env[id(var)] = (a, var, var)
                inner = loops(k + 1, stop, body_fn)
                return S.For(var, _i(0, var.dtype), a.length, "serial", inner)
            parent_pos = self.parent_position(a, its[:k], env, v)
            pos = E.Var(f"{var.name}_pos", a.idtype)
            if a.kind == "sparse_fixed":
                lo, ext = _mul(parent_pos, a.nnz), a.nnz
            else:
                ptr = self.storage_of(a, "indptr")
                lo = _load(ptr, parent_pos)
                ext = E.Sub(_load(ptr, _add(parent_pos, _i(1, a.idtype))), lo, a.idtype)
            if a.kind == "dense_variable":
                env[id(var)] = (a, _add(lo, var), var)
                inner = loops(k + 1, stop, body_fn)
                return S.For(var, _i(0, var.dtype), ext, "serial", inner)
            env[id(var)] = (a, pos, var)
            partner = self.merge_partner(it, v, env) if merging[0] else None
            if partner is not None:
                return self.merge_loop(v, pos, lo, _add(lo, ext), partner, env,
                                       lambda: loops(k + 1, stop, body_fn))
            inner = loops(k + 1, stop, body_fn)
            coord = _load(self.storage_of(a, "indices"), pos)
            return S.For(pos, lo, ext, "serial", S.LetStmt(var, coord, inner))

        merging = [False]

        def main():
            merging[0] = True
            try:
                return loops(first_r, len(its), lambda: self.stmt(it.body, env))
            finally:
                merging[0] = False

        def with_init():
            if it.init is None:
                return main()
            spatial = [v for v in its[first_r:] if not v.is_reduction]
            inner_its = its[first_r:]
            for v in spatial:
                if v.axis.parent is not None and any(
                        u.axis is v.axis.parent for u in inner_its if u.is_reduction):
                    fail(UNSUPPORTED, f"T.init() of '{it.name}': spatial iterator "
                         f"'{v.var.name}' depends on a reduction iterator", it)
            saved = list(its)
            its[first_r:] = spatial
            init = loops(first_r, first_r + len(spatial), lambda: self.stmt(it.init, env))
            its[:] = saved
            return S.seq([init, main()])

        return loops(0, first_r, with_init)

    def parent_position(self, a, outer, env, v):
        for u in reversed(outer):
            if u.axis is a.parent:
                return env[id(u.var)][1]
        for u in reversed(outer):
            if a.parent.kind == "dense_fixed" and identical(u.axis.length, a.parent.length):
                return env[id(u.var)][2]
        fail(UNSUPPORTED, f"axis '{a.name}' is iterated without its parent", v)

    # ---- statements and accesses -------------------------------------------------------------
    def stmt(self, s, env):
        pre = []
        s = self.rewrite_loads(s, env, pre)
        if isinstance(s, S.BufferStore) and isinstance(s.buffer, SparseBuffer):
            off, found = self.offset(s.buffer, s.indices, env, pre)
            store = S.BufferStore(self.value_buffer(s.buffer), s.value, off, s.span)
            s = store if found is None else S.IfThenElse(found, store, None, s.span)
        elif isinstance(s, S.SeqStmt):
            return S.seq([self.stmt(x, env) for x in s.seq])
        return _wrap(pre, s)

    def rewrite_loads(self, s, env, pre):
        def fn(new, old):
            if isinstance(new, E.BufferLoad) and isinstance(new.buffer, SparseBuffer):
                off, found = self.offset(new.buffer, new.indices, env, pre)
                load = E.BufferLoad(self.value_buffer(new.buffer), off, new.dtype, new.span)
                if found is None:
                    return load
                zero = E.const(0, new.dtype)
                return E.Call(new.dtype, "if_then_else", (found, load, zero))
            return None
        if isinstance(s, S.BufferStore):
            return dataclasses.replace(s, value=rebuild(s.value, fn),
                                       indices=tuple(rebuild(x, fn) for x in s.indices))
        if isinstance(s, (S.SeqStmt,)):
            return s
        return rebuild(s, fn)

    def offset(self, sb, indices, env, pre):
        """(indices into the value array, condition that the element exists or None)."""
        dense = all(a.kind == "dense_fixed" for a in sb.axes)
        coords = []
        for x in indices:
            coords.append(env[id(x)][2] if isinstance(x, E.Var) and id(x) in env else x)
        if dense:
            return tuple(coords), None
        off, found = _i(0), None
        for a, x, c in zip(sb.axes, indices, coords):
            own = isinstance(x, E.Var) and id(x) in env and env[id(x)][0] is a
            if a.kind == "dense_fixed":
                off = _add(_mul(off, a.length), c)
            elif own:
                off = env[id(x)][1]
            elif isinstance(x, E.Var) and (id(a), id(x)) in self.merged:
                off = self.merged[(id(a), id(x))]
            elif a.kind == "dense_variable":
                off = _add(_load(self.storage_of(a, "indptr"), off), c)
            else:
                off, f = self.locate(a, off, c, pre)
                found = f if found is None else E.And(found, f, "bool")
        return (off,), found

    def locate(self, a, parent_pos, c, pre):
        """Find coordinate c among the indices of parent position `parent_pos` of level a: a
        binary search over a sorted level, a scan over a hashed or unsorted one."""
        for key, got in self.located:
            if key[0] is a and identical(key[1], parent_pos) and identical(key[2], c) and \
                    any(entry[0] is got[2] for entry in pre):
                return got[0], got[1]
        ind = self.storage_of(a, "indices")
        if a.kind == "sparse_fixed":
            lo, hi = _mul(parent_pos, a.nnz), _add(_mul(parent_pos, a.nnz), a.nnz)
        else:
            ptr = self.storage_of(a, "indptr")
            lo, hi = _load(ptr, parent_pos), _load(ptr, _add(parent_pos, _i(1, a.idtype)))
        self.counter += 1
        t = a.idtype
        cell = S.Buffer(f"{a.name}_at{self.counter}", (_i(2),), t,
                        E.Var(f"{a.name}_at{self.counter}", "handle",
                              E.PointerType(t, "local")), scope="local")
        end = E.Var(f"{a.name}_end{self.counter}", t)
        p0, p1 = E.BufferLoad(cell, (_i(0),), t), E.BufferLoad(cell, (_i(1),), t)
        if a.sorted and a.format != "hash":
            mid = E.Var(f"{a.name}_mid{self.counter}", t)
            step = S.LetStmt(mid, E.FloorDiv(E.Add(p0, p1, t), _i(2, t), t), S.IfThenElse(
                E.LT(_load(ind, mid), c, "bool"),
                S.BufferStore(cell, E.Add(mid, _i(1, t), t), (_i(0),)),
                S.BufferStore(cell, mid, (_i(1),))))
            search = S.While(E.LT(p0, p1, "bool"), step)
        else:
            guarded = E.Call(t, "if_then_else", (E.LT(p0, end, "bool"), _load(ind, p0),
                                                 _i(-1, t)))
            search = S.While(E.And(E.LT(p0, end, "bool"), E.NE(guarded, c, "bool"), "bool"),
                             S.BufferStore(cell, E.Add(p0, _i(1, t), t), (_i(0),)))
        init = [S.BufferStore(cell, lo, (_i(0),)), S.BufferStore(cell, end, (_i(1),)), search]
        pre.append((cell, end, hi, init))
        pos = p0
        found = E.And(E.LT(p0, end, "bool"),
                      E.EQ(E.Call(t, "if_then_else", (E.LT(p0, end, "bool"), _load(ind, p0),
                                                      _i(-1, t))), c, "bool"), "bool")
        self.located.append(((a, parent_pos, c), (pos, found, cell)))
        return pos, found


def _wrap(pre, s):
    """Put the searches before the statement: each in its own two-element local cell."""
    for cell, end, hi, init in reversed(pre):
        s = S.LetStmt(end, hi, S.DeclBuffer(cell, S.seq(init + [s])))
    return s


def lower_sparse(func: S.PrimFunc) -> S.PrimFunc:
    """The dense PrimFunc of a sparse kernel: its sparse buffers as value arrays, its indptr
    and indices as buffers, each sparse iteration as loops."""
    if not func.sparse_axes and not any(isinstance(b, SparseBuffer) for _, b in func.buffer_map):
        return func
    low = _Lowering(func)

    def fn(new, old):
        if isinstance(new, SparseIteration):
            return low.iteration(new)
        return None
    body = rebuild(func.body, fn)
    return dataclasses.replace(func, buffer_map=low.buffer_map(), body=body, sparse_axes=())


__all__ = ["lower_sparse", "positions", "flat_size"]
