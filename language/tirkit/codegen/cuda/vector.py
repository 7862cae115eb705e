"""CUDA C of a `T.vectorized` loop of 2 or 4 lanes over one store: 32-bit elements moved as
`float4`/`int4` (`float2`/`int2`) where the index is the loop variable plus a multiple of the
lane count (so the address is aligned: parameters, `__shared__` and local arrays are
16-byte aligned), each lane's value computed from the vector's components.  A loop that only copies
(the store's value is a load of the same dtype, both aligned) 4, 8 or 16 bytes of 8- or
16-bit elements moves them as one `unsigned`/`uint2`/`uint4` (8 halves, 16 int8).  Anything else runs as
an unrolled scalar loop."""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.dtype import parse_dtype
from ...ir.visit import rebuild, substitute
from ...arith.linear import linear_form

_VEC = {("float", 32): "float", ("int", 32): "int"}
LANE_NAMES = "xyzw"


def multiple_of(index, n, but=None, form=None) -> bool:
    """Whether `index` is a multiple of n whatever its variables (but the term of `but`): its
    constant and coefficients are (parameters, `__shared__` and local arrays being 16-byte
    aligned, a vector access of n lanes there is aligned).  `form`: its linear form, where
    the caller has it."""
    form = form or linear_form(index)
    return form.const % n == 0 and all(c % n == 0 for k, c in form.terms.items()
                                       if k is not but)


def _aligned(index, var, n) -> bool:
    """index == var + (terms with coefficients and constant divisible by n)."""
    form = linear_form(index)
    return form.terms.get(var) == 1 and multiple_of(index, n, but=var, form=form)


def vector_type(buf, n):
    d = parse_dtype(buf.dtype)
    base = _VEC.get((d.kind, d.bits)) if d.lanes == 1 else None
    return f"{base}{n}" if base else None


def plan(loop: S.For):
    """None when loop is not a 2/4-lane vector store; else (store vector type or None,
    [(temp var, load, vector type)], per-lane value expressions with loads replaced)."""
    n = loop.extent.value if isinstance(loop.extent, E.IntImm) else 0
    st = loop.body
    if n not in (2, 4) or not isinstance(st, S.BufferStore) or len(st.indices) != 1 or \
            not (isinstance(loop.min, E.IntImm) and loop.min.value == 0):
        return None
    var = loop.loop_var
    temps = []

    def fn(new, old):
        if isinstance(old, E.BufferLoad) and len(old.indices) == 1 and \
                _aligned(old.indices[0], var, n) and vector_type(old.buffer, n):
            t = E.Var(f"vec{len(temps)}", old.dtype)
            temps.append((t, old, vector_type(old.buffer, n)))
            return t
        return None
    value = rebuild(st.value, fn)
    store_t = vector_type(st.buffer, n) if _aligned(st.indices[0], var, n) else None
    if store_t is None and not temps:
        return None
    lanes = []
    for lane in range(n):
        lanes.append(substitute(value, {id(var): E.IntImm(var.dtype, lane)}))
    return store_t, temps, lanes, n


_RAW = {4: "unsigned", 8: "uint2", 16: "uint4"}


def _copy(kernel, loop, d) -> bool:
    """A pure copy of n elements (n * bytes in 4, 8, 16) as one raw vector move."""
    n = loop.extent.value if isinstance(loop.extent, E.IntImm) else 0
    st, var = loop.body, loop.loop_var
    if not (isinstance(st, S.BufferStore) and isinstance(st.value, E.BufferLoad) and
            len(st.indices) == 1 and len(st.value.indices) == 1 and
            isinstance(loop.min, E.IntImm) and loop.min.value == 0):
        return False
    src = st.value
    ds, dl = parse_dtype(st.buffer.dtype), parse_dtype(src.buffer.dtype)
    if ds is None or ds != dl or ds.lanes != 1 or (ds.kind, ds.bits) in _VEC or \
            n * ds.bits // 8 not in _RAW or \
            n * ds.bits % 8 or not (_aligned(st.indices[0], var, n) and
                                    _aligned(src.indices[0], var, n)):
        return False
    t, e = _RAW[n * ds.bits // 8], kernel.expr
    zero = {id(var): E.IntImm(var.dtype, 0)}
    kernel.out(d, f"*({t}*)({e(st.buffer.data)} + {e(substitute(st.indices[0], zero))}) = "
                  f"*(const {t}*)({e(src.buffer.data)} + {e(substitute(src.indices[0], zero))});")
    return True


def emit(kernel, loop, d) -> bool:
    """Write loop as vector code through kernel (source._Kernel); False to fall back."""
    if _copy(kernel, loop, d):
        return True
    p = plan(loop)
    if p is None:
        return False
    store_t, temps, lanes, n = p
    e, st, var = kernel.expr, loop.body, loop.loop_var
    kernel.out(d, "{")
    zero = {id(var): E.IntImm(var.dtype, 0)}
    bases = {}
    for t, load, vt in temps:
        name = bases[id(t)] = kernel.names.add(t)
        base = e(substitute(load.indices[0], zero))
        kernel.out(d + 1, f"const {vt} {name} = *(const {vt}*)({e(load.buffer.data)} + {base});")
    lane_exprs = []
    for lane, v in enumerate(lanes):
        for t, _, _ in temps:          # a lane reads its component of each vector
            kernel.names[id(t)] = f"{bases[id(t)]}.{LANE_NAMES[lane]}"
        lane_exprs.append(e(v))
    data = e(st.buffer.data)
    if store_t is not None:
        base = e(substitute(st.indices[0], zero))
        kernel.out(d + 1, f"*({store_t}*)({data} + {base}) = make_{store_t}("
                   f"{', '.join(lane_exprs)});")
    else:
        for lane, x in enumerate(lane_exprs):
            ix = e(substitute(st.indices[0], {id(var): E.IntImm(var.dtype, lane)}))
            kernel.out(d + 1, f"{data}[{ix}] = {x};")
    kernel.out(d, "}")
    return True

