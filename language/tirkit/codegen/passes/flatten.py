"""Pass 4: buffer flattening.  Every buffer becomes one-dimensional (row-major from its shape,
or its explicit strides, plus its element offset); loads and stores take one index."""
from __future__ import annotations

import dataclasses

from ...ir import dtype as D
from ...ir import expr as E
from ...ir import stmt as S
from .rewrite import transform
from .simplify import simplify


def _mul(a, b):
    return E.Mul(a, b, a.dtype)


def _add(a, b):
    return E.Add(a, b, a.dtype)


def _cast(e, dtype):
    return e if e.dtype == dtype else E.Cast(dtype, e)


def strides_of(buf: S.Buffer):
    if buf.strides:
        return list(buf.strides)
    out, acc = [None] * len(buf.shape), E.IntImm("int32", 1)
    for d in reversed(range(len(buf.shape))):
        out[d] = acc
        acc = _mul(acc, _cast(buf.shape[d], acc.dtype))
    return out


def storage_extents(buf: S.Buffer) -> tuple:
    """The extents of the storage a buffer allocates: its shape, or where it has strides,
    what they span (`strides[0] * shape[0]` elements, as TVM flattens it: a (16, 16) buffer
    with strides [17, 1] has rows of 17)."""
    if not (buf.strides and buf.shape):
        return tuple(buf.shape)
    stride, rows = buf.strides[0], buf.shape[0]
    if isinstance(stride, E.IntImm) and isinstance(rows, E.IntImm):
        return (E.IntImm(stride.dtype, stride.value * rows.value),)
    return (_mul(stride, _cast(rows, stride.dtype)),)


def size_of(buf: S.Buffer):
    acc = None
    for d in buf.shape:
        acc = d if acc is None else _mul(acc, _cast(d, acc.dtype))
    return acc if acc is not None else E.IntImm("int32", 1)


def flat_index(buf: S.Buffer, indices):
    indices = tuple(indices)
    if len(indices) == 1 and not buf.strides and buf.elem_offset is None:
        return indices[0]
    strides = strides_of(buf)
    out = None
    for i, s in zip(indices, strides):
        dt = i.dtype if not isinstance(i, E.Ramp) else i.base.dtype
        term = i if E.is_const_int(s, 1) else _mul(i, _cast(s, dt) if not isinstance(i, E.Ramp)
                                                    else E.Broadcast(_cast(s, dt), i.lanes,
                                                                     i.dtype))
        out = term if out is None else add_index(out, term)
    if buf.elem_offset is not None and not E.is_const_int(buf.elem_offset, 0):
        out = add_index(out, buf.elem_offset)
    return out if out is not None else E.IntImm("int32", 0)


def add_index(a, b):
    """a + b for index expressions, either of them a vector: a scalar added to a ramp moves
    into its base (the access stays one contiguous run), to any other vector it is broadcast."""
    la, lb = D.lanes_of(a.dtype), D.lanes_of(b.dtype)
    if la == 1 and lb == 1:
        if a.dtype != b.dtype:
            b = E.Cast(a.dtype, b)
        return E.Add(a, b, a.dtype)
    if la == 1 or lb == 1:
        vec, scalar = (b, a) if la == 1 else (a, b)
        if isinstance(vec, E.Ramp):
            return E.Ramp(add_index(vec.base, scalar), vec.stride, vec.lanes, vec.dtype)
        scalar = E.Broadcast(scalar, D.lanes_of(vec.dtype), vec.dtype)
        a, b = (scalar, vec) if la == 1 else (vec, scalar)
    return E.Add(a, b, a.dtype if la > 1 else b.dtype)


def flatten_buffers(body: S.Stmt, buffers=()) -> S.Stmt:
    flat = {}

    def flat_buf(b):
        f = flat.get(id(b))
        if f is None:
            f = dataclasses.replace(b, shape=(simplify(size_of(b)),), strides=(), elem_offset=None)
            flat[id(b)] = f
        return f

    def fn(x):
        if isinstance(x, (E.BufferLoad, S.BufferStore)):
            return dataclasses.replace(x, buffer=flat_buf(x.buffer),
                                       indices=(flat_index(x.buffer, x.indices),))
        if isinstance(x, S.DeclBuffer):
            return dataclasses.replace(x, buffer=flat_buf(x.buffer))
        if isinstance(x, S.Allocate):             # the allocation keeps its own size
            size = None
            for d in x.extents:
                size = d if size is None else _mul(size, _cast(d, size.dtype))
            return dataclasses.replace(x, extents=(simplify(size) if size is not None
                                                   else E.IntImm("int32", 1),))
        return None
    return transform(body, fn)
