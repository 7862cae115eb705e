"""The region of a buffer that the copy of cache_read or cache_write holds: the block's region
relaxed over the loops under the copy (and the thread loops above it that share the
storage), loops of symbolic extent included, cut where the block's predicate bounds an
index (as TVM does)."""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...arith import writeback as A
from ...arith.affine import Aff
from ...ir.hash import structural_key
from .. import _common as common
from .. import _ir
from ..analysis import region_of_indices


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
    inner = inner + [f for f in outer if common.shared_by_threads(f, storage)]
    outer = [f for f in outer if not common.shared_by_threads(f, storage)]
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
    la, lb = A.to_form(a, {}), A.to_form(b, {})
    if la.add(lb, -1).terms or la.const != lb.const:
        return None, None
    low = end = None
    for c in conj:
        if isinstance(c, (E.LE, E.GE)):
            e, k = (c.b, c.a) if isinstance(c, E.LE) else (c.a, c.b)
            if isinstance(k, E.IntImm):
                diff = la.add(A.to_form(e, {}), -1)
                if not diff.terms:
                    low = k.value + diff.const if low is None else max(low, k.value + diff.const)
        elif isinstance(c, E.LT) and isinstance(c.b, E.IntImm):
            diff = la.add(A.to_form(c.a, {}), -1)
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
    lin = A.to_form(mn, bounds)
    dt = lin.dtype
    c = lin.const
    L = lin - c
    zero = E.IntImm(dt, 0)
    neg = A.to_expr(Aff({a: -k for a, k in lin.terms.items()}, (low or 0) - c, dt))
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


def _symbolize(lo, hi, relaxed):
    """lo, hi with each non-affine term that no relaxed loop variable reaches replaced by a
    fresh variable (a symbol to region_of_indices), and the map back."""
    table = {}

    def one(e):
        lin = A.to_form(e, {})
        out, changed = A.const_form(lin.const, lin.dtype), False
        for atom, coef in lin.terms.items():
            if A.is_opaque(atom) and not isinstance(atom.expr, E.BufferLoad) and \
                    not any(id(v) in relaxed for v in _ir.vars_in(atom.expr)):
                key = structural_key(atom.expr)
                if key not in table:
                    table[key] = (E.Var(f"sym{len(table)}", atom.expr.dtype), atom.expr)
                atom = table[key][0]
                changed = True
            out = out + Aff.of(atom, coef)
        return A.to_expr(out) if changed else e
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
            limits[A.to_form(c.a, {}).key()] = A.to_form(c.b, {})
    rng = {}
    for f in inner:
        mn = A.to_form(f.min, {})
        rng[id(f.loop_var)] = (mn, mn.add(A.to_form(f.extent, {})) - 1)
    out = []
    for a, b, d in zip(lo, hi, shape):
        la = _bound_all(A.to_form(a, {}), rng, low=True)
        hb = _bound_all(A.to_form(b, {}), rng, low=False)
        cap = limits.get(A.to_form(a, {}).key())
        if cap is not None and A.to_form(a, {}).key() == A.to_form(b, {}).key():
            hb = cap - 1
        if la is None or hb is None:
            out.append((E.IntImm(d.dtype, 0), d.value if isinstance(d, E.IntImm) else d))
            continue
        ext = hb.add(la, -1) + 1
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
        if lin is None or not any(_ir_uses_any(A.key_expr(a, lin.dtype), rng)
                                  for a in lin.terms):
            return lin
        lin = _lin_bound(lin, rng, low)
    return None


def _lin_bound(lin, rng, low):
    """A lower (low) or upper bound of `lin` as a linear form when the variables of `rng`
    (id -> (lo, hi) forms) run over their ranges; None when it is not affine in them."""
    out = A.const_form(lin.const, lin.dtype)
    for atom, coef in lin.terms.items():
        vs = A.key_vars(atom) if not A.is_opaque(atom) else None
        if vs is None:
            if _ir_uses_any(atom.expr, rng):
                return None
            out = out + Aff.of(atom, coef)
            continue
        if not any(id(v) in rng for v in vs):
            out = out + Aff.of(atom, coef)
            continue
        pick_low = low if coef > 0 else not low
        if A.is_var(atom):
            b = rng[id(atom)][0 if pick_low else 1]
        elif A.is_div(atom):
            arg = atom.args[0]
            inner = _lin_bound(Aff(arg.terms, arg.const, lin.dtype), rng, pick_low)
            if inner is None:
                return None
            b = A.divmod_form(inner, atom.c, True, {})
        else:                                   # a remainder: somewhere in [0, c - 1]
            b = A.const_form(0 if pick_low else atom.c - 1, lin.dtype)
        out = out.add(b, coef)
    return out


def _ir_uses_any(e, rng):
    from ...ir.visit import free_variables
    return any(id(v) in rng for v in free_variables(e))
