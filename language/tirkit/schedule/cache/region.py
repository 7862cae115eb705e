"""The region of a buffer that the copy of cache_read or cache_write holds: the block's region
relaxed over the loops under the copy (and the thread loops above it that share the
storage), loops of symbolic extent included, cut where the block's predicate bounds an
index (as TVM does)."""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from .. import _arith as A
from .. import _common as common
from .. import _ir
from ..analysis import region_of_indices


def _relaxed_by_threads(f, storage):
    """Loops above the copy that the copy still spans: threads sharing the storage."""
    if f.kind != "thread_binding" or not f.thread_tag:
        return False
    # TVM's storage and thread ranks: global 0, shared 1; blockIdx 0, threadIdx and vthread
    # 1; a buffer is shared by the threads of its rank and below, warp memory by threadIdx.x
    rank = storage.split(".")[0]
    tag = f.thread_tag
    if rank == "warp":
        return tag == "threadIdx.x"
    if rank == "global":
        return tag.startswith(("blockIdx", "threadIdx", "vthread", "cthread"))
    if rank == "shared":
        return tag.startswith(("threadIdx", "vthread", "cthread"))
    return False


def relaxed_region(sch, info, region, loc, storage="global"):
    """A block's region (of one buffer) over the loops under `loc` (and the thread loops
    above it that share the storage), in outer terms."""
    ivmap = {id(iv.var): v for iv, v in zip(info.block.iter_vars, info.realize.iter_values)}
    lo = tuple(_ir.substitute(r.min, ivmap) for r in region.region)
    hi = tuple(_ir.substitute(E.Sub(E.Add(r.min, r.extent, "int32"), common.int32(1), "int32"),
                              ivmap) for r in region.region)
    loops = info.loops
    if isinstance(loc, S.For):
        k = next((i for i, f in enumerate(loops) if f is loc), None)
        inner, outer = (loops[k + 1:], loops[:k + 1]) if k is not None else (loops, [])
    else:
        inner, outer = loops, []
    inner = inner + [f for f in outer if _relaxed_by_threads(f, storage)]
    outer = [f for f in outer if not _relaxed_by_threads(f, storage)]
    # terms the relaxed loops do not touch (`i // n`, a load) are symbols, as in TVM
    relaxed_ids = {id(f.loop_var) for f in inner}
    lo, hi, back = _symbolize(lo, hi, relaxed_ids)
    if not all(isinstance(f.min, E.IntImm) and isinstance(f.extent, E.IntImm)
               for f in inner):
        reg = symbolic_region(lo, hi, inner, region.buffer.shape, info.realize.predicate)
        return [(_ir.substitute(mn, back), ext if isinstance(ext, int) else
                 _ir.substitute(ext, back)) for mn, ext in reg] if back else reg, outer
    reg = region_of_indices([lo, hi], {}, common.loop_bounds(inner), common.loop_bounds(outer),
                            region.buffer.shape)
    if reg is None:
        # dimension by dimension: the ones we cannot bound are whole (as in TVM)
        reg = []
        for a, b, d in zip(lo, hi, region.buffer.shape):
            one = region_of_indices([(a,), (b,)], {}, common.loop_bounds(inner),
                                    common.loop_bounds(outer), (d,))
            reg.append(one[0] if one else
                       (common.int32(0, d.dtype), d.value if isinstance(d, E.IntImm) else d))
    if back:
        reg = [(_ir.substitute(mn, back), ext) for mn, ext in reg]
        lo = tuple(_ir.substitute(x, back) for x in lo)
        hi = tuple(_ir.substitute(x, back) for x in hi)
    out = []
    obounds = common.loop_bounds(outer)
    # a predicate of plain comparisons bounds the indices it names (TVM reads such a
    # predicate as bounds of the iterators; anything else it leaves aside)
    conj = _conjuncts(info.realize.predicate)
    if not all(isinstance(c, (E.LT, E.LE, E.GE)) for c in conj):
        conj = []
    relaxed = {id(f.loop_var) for f in inner}
    for (mn, ext), d, a, b in zip(reg, region.buffer.shape, lo, hi):
        if isinstance(mn, E.IntImm) and isinstance(d, E.IntImm):
            lo_, hi_ = max(mn.value, 0), min(mn.value + ext - 1, d.value - 1)
            mn, ext = common.int32(lo_, mn.dtype), hi_ - lo_ + 1
        elif isinstance(ext, int) and conj and any(id(v) in relaxed for v in _ir.vars_in(a)):
            mn, ext = _clamped(mn, ext, _predicate_bounds(a, b, conj), obounds)
        out.append((mn, ext))
    return out, outer


def _predicate_bounds(a, b, conj):
    """(lowest, end) the predicate allows a point index (a == b) to take, each None when
    it says nothing: `c <= e`, `e >= c`, `e < c` with e the index plus a constant."""
    la, lb = A.to_lin(a, {}), A.to_lin(b, {})
    if la.add(lb, -1).terms or la.const != lb.const:
        return None, None
    low = end = None
    for c in conj:
        if isinstance(c, (E.LE, E.GE)):
            e, k = (c.b, c.a) if isinstance(c, E.LE) else (c.a, c.b)
            if isinstance(k, E.IntImm):
                diff = la.add(A.to_lin(e, {}), -1)
                if not diff.terms:
                    low = k.value + diff.const if low is None else max(low, k.value + diff.const)
        elif isinstance(c, E.LT) and isinstance(c.b, E.IntImm):
            diff = la.add(A.to_lin(c.a, {}), -1)
            if not diff.terms:
                end = c.b.value + diff.const if end is None else min(end, c.b.value + diff.const)
    return low, end


def _clamped(mn, ext, limits, bounds):
    """A window [mn, mn + ext) whose start moves with outer loops, cut where the block's
    predicate stops the index (limits: lowest, end), as TVM does and in TVM's canonical
    form: `max(mn, lo)` and an extent `end - c - max(L, end - ext - c) - max(lo - c - L, 0)`
    for mn = L + c."""
    low, end = limits
    b = A.bound_of(mn, bounds)
    if b is None:
        return mn, ext
    under = low is not None and b[0] < low
    over = end is not None and b[1] + ext > end
    if not under and not over:
        return mn, ext
    lin = A.to_lin(mn, bounds)
    dt = lin.dtype
    c = lin.const
    L = A.Lin(lin.terms, 0, dt)
    zero = E.IntImm(dt, 0)
    neg = A.to_expr(A.Lin([[a, -k] for a, k in lin.terms], (low or 0) - c, dt))
    if under and over:
        size = E.Sub(E.Sub(E.IntImm(dt, end - c),
                           E.Max(A.to_expr(L), E.IntImm(dt, end - ext - c), dt), dt),
                     E.Max(neg, zero, dt), dt)
    elif over:
        size = E.Sub(E.IntImm(dt, end - c),
                     E.Max(A.to_expr(L), E.IntImm(dt, end - ext - c), dt), dt)
    else:
        size = E.Sub(E.IntImm(dt, ext), E.Max(neg, zero, dt), dt)
    start = E.Max(mn, E.IntImm(dt, low), dt) if under else mn
    return start, size


_SKEYS: dict = {}


def _skey(e):
    """A structural key of an expression (variables and buffers by identity), so that two
    equal opaque terms built apart still cancel."""
    hit = _SKEYS.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    if isinstance(e, (E.Var, E.SizeVar)) or not hasattr(e, "__dataclass_fields__") or \
            type(e).__name__ == "Buffer":
        key = ("id", id(e)) if not isinstance(e, (int, float, str, bool, type(None))) \
            else ("c", e)
    elif isinstance(e, (E.IntImm, E.FloatImm)):
        key = (type(e).__name__, e.dtype, e.value)
    else:
        key = (type(e).__name__,) + tuple(
            tuple(_skey(x) for x in v) if isinstance(v, tuple) else _skey(v)
            for k, v in ((f, getattr(e, f)) for f in e.__dataclass_fields__) if k != "span")
    if len(_SKEYS) > 50000:
        _SKEYS.clear()
    _SKEYS[id(e)] = (e, key)
    return key


def _symbolize(lo, hi, relaxed):
    """lo, hi with each non-affine term that no relaxed loop variable reaches replaced by a
    fresh variable (a symbol to region_of_indices), and the map back."""
    table = {}

    def one(e):
        lin = A.to_lin(e, {})
        terms, changed = [], False
        for atom, coef in lin.terms:
            if atom[0] == "opaque" and not isinstance(atom[1], E.BufferLoad) and \
                    not any(id(v) in relaxed for v in _ir.vars_in(atom[1])):
                key = _skey(atom[1])
                if key not in table:
                    table[key] = (E.Var(f"sym{len(table)}", atom[1].dtype), atom[1])
                terms.append([("var", table[key][0]), coef])
                changed = True
            else:
                terms.append([atom, coef])
        return A.to_expr(A.Lin(terms, lin.const, lin.dtype)) if changed else e
    lo, hi = tuple(one(x) for x in lo), tuple(one(x) for x in hi)
    return lo, hi, {id(v): x for v, x in table.values()}


def symbolic_region(lo, hi, inner, shape, predicate=None):
    """The region [lo, hi] (index tuples) spans when the variables of the `inner` loops run
    over their ranges, some of which are symbolic: [(min expr, extent int or expr)]. A
    dimension we cannot bound (an index that is not affine in those variables) is the whole
    dimension; a point index the predicate bounds (`index < e`) ends at e - 1."""
    limits = {}
    for c in _conjuncts(predicate):
        if isinstance(c, E.LT):
            limits[A.to_lin(c.a, {}).key()] = A.to_lin(c.b, {})
    rng = {}
    for f in inner:
        mn = A.to_lin(f.min, {})
        rng[id(f.loop_var)] = (mn, mn.add(A.to_lin(f.extent, {})).add(
            A.Lin([], -1, mn.dtype)))
    out = []
    for a, b, d in zip(lo, hi, shape):
        la = _bound_all(A.to_lin(a, {}), rng, low=True)
        hb = _bound_all(A.to_lin(b, {}), rng, low=False)
        cap = limits.get(A.to_lin(a, {}).key())
        if cap is not None and A.to_lin(a, {}).key() == A.to_lin(b, {}).key():
            hb = cap.add(A.Lin([], -1, cap.dtype))
        if la is None or hb is None:
            out.append((E.IntImm(d.dtype, 0), d.value if isinstance(d, E.IntImm) else d))
            continue
        ext = hb.add(la, -1).add(A.Lin([], 1, la.dtype))
        ext = ext.const if ext.is_const() else A.simplify(A.to_expr(ext))
        out.append((A.simplify(A.to_expr(la)), ext))
    return out


def _conjuncts(e):
    """The conjuncts of a predicate; none when there is no predicate."""
    return [] if e is None else common.conjuncts(e)


def _bound_all(lin, rng, low):
    """_lin_bound until no relaxed variable is left (a loop whose extent is another relaxed
    loop's variable: `for k in range(i)`)."""
    for _ in range(len(rng) + 1):
        if lin is None or not any(_ir_uses_any(A.atom_expr(a, lin.dtype), rng)
                                  for a, _ in lin.terms):
            return lin
        lin = _lin_bound(lin, rng, low)
    return None


def _lin_bound(lin, rng, low):
    """A lower (low) or upper bound of `lin` as a linear form when the variables of `rng`
    (id -> (lo Lin, hi Lin)) run over their ranges; None when it is not affine in them."""
    out = A.Lin([], lin.const, lin.dtype)
    for atom, coef in lin.terms:
        vs = A._atom_vars(atom) if atom[0] != "opaque" else None
        if vs is None:
            if _ir_uses_any(atom[1], rng):
                return None
            out._add_term(atom, coef)
            continue
        if not any(id(v) in rng for v in vs):
            out._add_term(atom, coef)
            continue
        pick_low = low if coef > 0 else not low
        if atom[0] == "var":
            b = rng[id(atom[1])][0 if pick_low else 1]
        elif atom[0] == "div":
            inner = _lin_bound(atom[1], rng, pick_low)
            if inner is None:
                return None
            b = A._divmod(inner, atom[2], True, {})
        else:                                   # a remainder: somewhere in [0, c - 1]
            b = A.Lin([], 0 if pick_low else atom[2] - 1, lin.dtype)
        out = out.add(b, coef)
    return out


def _ir_uses_any(e, rng):
    from ...ir.visit import free_variables
    return any(id(v) in rng for v in free_variables(e))
