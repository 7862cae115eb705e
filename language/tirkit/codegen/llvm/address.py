"""Element addresses: `base + index` with the index's constant part as a GEP of its own.

    split_offset(e)             -> (variable part, constant) of a linear index, or None
    element_ptr(gen, base, e, elem_type)     the address of element `e` of `base`

LLVM's alias analysis tells two accesses of one buffer apart when their offsets are one
value plus two different constants; it does not look into a sum of two non-constant values.
The flattened index of `Y[n, h, w, (co_0 * 2 + 1) * 16]` is built in another order than the
one of `Y[n, h, w, co_0 * 32]`, so the two addresses were two unrelated values: LICM then
could not keep either accumulator of a register-blocked reduction in a register (each
`vpdpbusd` of an unrolled int8 conv loaded and stored its accumulator).  Written as one
canonical sum of the variable terms (in the order of the variables' names) plus a constant,
both addresses share the sum (LLVM's CSE merges the identical instructions) and differ by a
known constant."""
from __future__ import annotations

from ...arith.affine import Atom
from ...arith.linear import linear_form
from ...ir import expr as E
from ...ir.dtype import parse_dtype
from ...ir.visit import contains
from . import types as T


def narrowing(cast) -> bool:
    """A cast that can change an integer's value: to fewer bits, to another kind, or from a
    float.  An index holding one is not the linear form read through it."""
    a, b = parse_dtype(cast.value.dtype), parse_dtype(cast.dtype)
    return a is None or b is None or a.is_float or a.bits > b.bits or a.kind != b.kind


def split_offset(e):
    """(variable part as an expression, constant) when `e` is a scalar integer sum of
    constant multiples of variables with at least one variable and no cast that can change
    a value, else None.  The variable
    part lists its terms in the order of the variables' names (ties: first appearance)."""
    if parse_dtype(e.dtype).lanes != 1 or type(e) is E.IntImm or \
            contains(e, narrowing, E.Cast):      # `T.Cast("int32", k * 2**31)` wraps
        return None
    form = linear_form(e)
    if not form.terms or any(isinstance(k, Atom) for k in form.terms):
        return None
    keys = sorted(form.terms, key=lambda v: v.name)       # sorted() is stable
    dt = e.dtype
    out = None
    for v in keys:
        c = form.terms[v]
        x = v if v.dtype == dt else E.Cast(dt, v)
        term = x if c == 1 else E.Mul(x, E.IntImm(dt, c), dt)
        out = term if out is None else E.Add(out, term, dt)
    return out, form.const


def element_ptr(gen, base, e, elem_type):
    """The address of element `e` (a scalar index) of `base`: one GEP by the variable part
    of a linear index, then one by its constant part; any other index in one GEP.  Each
    index node is split once and kept with its split in `gen.offsets`: the index values
    that `gen` remembers are keyed by node ids, so the nodes made here must stay alive."""
    hit = gen.offsets.get(id(e))
    if hit is None:
        hit = gen.offsets[id(e)] = (e, split_offset(e))
    parts = hit[1]
    if parts is None:
        return gen.b.gep(base, [gen.index(e)], source_etype=elem_type)
    var, c = parts
    p = gen.b.gep(base, [gen.index(var)], source_etype=elem_type)
    return p if c == 0 else gen.b.gep(p, [T.const(T.I64, c)], source_etype=elem_type)
