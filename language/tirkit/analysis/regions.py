"""The one region analysis: which parts of which buffers code touches.

Over the access records of analysis/accesses.py (`accesses(func)`, `stmt_accesses(stmt)`,
re-exported here), by the Analyzer, guards included:

- `block_regions(func, realize)`: the read and write regions a block touches, in terms of
  its own iterators, relaxed over the loops inside it (what the signature rule compares
  with the declared `T.reads`/`T.writes`);
- `relax(access, keep)`: an access's index range with every loop relaxed except `keep`;
- `footprint.footprint(fa, buffer, relax_loop)`, `footprint.compact_box(stmt, buffer)`: a
  buffer's box after region compaction (the extent per dimension lowering allocates).

Over a block as the schedule primitives see it, in arith's written-back forms (regions that
print as TVM prints them):

- `infer_regions(block)`: (reads, writes) as TVM infers them for a block without
  `T.reads`/`T.writes`;
- `region_of_indices(...)`: the box of a set of index tuples, inner variables relaxed.
"""
from __future__ import annotations

from ..arith import Analyzer
from ..arith import writeback as A
from ..arith.affine import Aff
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.visit import substitute, vars_in, walk
from .accesses import (ENV_THREAD, Access, FuncAccesses, Loop, accesses,  # noqa: F401
                       stmt_accesses)
from .footprint import loop_ranges

ONE = E.IntImm("int32", 1)


# ---- relaxation ----------------------------------------------------------------------------
def _ramp_extent(e):
    if isinstance(e, E.Ramp):
        return e.base, e.lanes, e.stride
    return e, 1, None


def index_range(an, idx, env):
    """(lo, hi) Aff of one index expression (vector ramps widen the range)."""
    base, lanes, stride = _ramp_extent(idx)
    x = an.to_aff(base, env)
    lo, hi = an.bound(x)
    if lanes > 1 and hi is not None:
        st = an.to_aff(stride, env)
        if st.is_const():
            if st.const >= 0:
                hi = hi + st.const * (lanes - 1)
            elif lo is not None:
                lo = lo + st.const * (lanes - 1)
        else:
            return None, None
    return lo, hi


def analyzer_for(fa: FuncAccesses, a: Access, keep=frozenset(), env=None, from_loop=0,
                 from_block=None, iter_ranges=(), guards=True):
    """An analyzer with the ranges of a's loops (those from `from_loop` on, minus `keep`)
    and, when `guards`, its guards (those at block depth > from_block; all when None)."""
    an = Analyzer()
    env = fa.env if env is None else env
    for iv in iter_ranges:
        an.bind_extent(iv.var, iv.dom.min, iv.dom.extent)
    for lp in a.loops[from_loop:]:
        if lp.var in keep:
            continue
        an.bind_extent(lp.var, lp.min, lp.extent, env)
    for cond, depth in a.conds if guards else ():
        if from_block is None or depth > from_block:
            an.assume(cond, env)
    return an


def relax(fa: FuncAccesses, a: Access, keep=frozenset()):
    """Per-dimension (lo, hi) of an access in loop variables, every loop relaxed but `keep`."""
    an = analyzer_for(fa, a, keep)
    return [index_range(an, i, fa.env) for i in a.indices]


def block_regions(fa: FuncAccesses, realize):
    """[(Access, [(lo, hi)])] for the accesses under `realize`, expressed in its iterators
    and relaxed over the loops and inner blocks below it; buffers allocated or matched
    inside the block are left out."""
    out = []
    for a in fa.accesses:
        try:
            x = next(i for i, r in enumerate(a.blocks) if r is realize)
        except StopIteration:
            continue
        inner_bufs = set()
        for r in a.blocks[x:]:
            inner_bufs.update(id(b) for b in r.block.alloc_buffers)
            inner_bufs.update(id(m.buffer) for m in r.block.match_buffers)
        if id(a.buffer) in inner_bufs or (a.local_depth is not None and a.local_depth > x):
            continue
        own = {iv.var for iv in realize.block.iter_vars}
        env = {v: b for v, b in fa.env.items() if v not in own}
        env.update(fa.lets)
        an = analyzer_for(fa, a, env=env, from_loop=a.block_loops[x], from_block=x)
        if a.opaque:
            out.append((a, None))
        else:
            out.append((a, [index_range(an, i, env) for i in a.indices]))
    return out


def single_trip(lp) -> bool:
    """A loop of one iteration: its variable is a constant, not a symbol to keep."""
    return isinstance(lp.extent, E.IntImm) and lp.extent.value == 1


# ---- regions of a block, as TVM infers them ----------------------------------------------
def region_of_indices(indices_list, ivmap, inner_bounds, outer_bounds, shape=None):
    """The region [(min expr, extent int)] covered by the index tuples in `indices_list`,
    after substituting block iterators (ivmap: id(iter var) -> binding) and letting the
    variables of `inner_bounds` range over their bounds. None when it is not a box we can
    describe exactly (a dimension that mixes inner and outer variables in a division)."""
    region = None
    full = set()
    for idx in indices_list:
        dims = []
        for d, e in enumerate(idx):
            e = substitute(e, ivmap)
            lin = A.to_form(e, {**outer_bounds, **inner_bounds})
            if shape is not None and _opaque(lin, inner_bounds):
                # not an affine function of the iterators: the whole dimension (as TVM)
                full.add(d)
                dims.append((A.const_form(0, lin.dtype), 0, 0))
                continue
            inner, outer = {}, {}
            for atom, coef in lin.terms.items():
                vs = atom_vars(atom)
                if any(id(v) in inner_bounds for v in vs):
                    if not all(id(v) in inner_bounds for v in vs):
                        return None
                    inner[atom] = coef
                else:
                    outer[atom] = coef
            outer = Aff(outer, 0, lin.dtype)
            b = A.bound_form(Aff(inner, lin.const, lin.dtype), inner_bounds)
            if b is None:
                return None
            dims.append((outer, b[0], b[1]))
        if region is None:
            region = dims
            continue
        merged = []
        for (o1, lo1, hi1), (o2, lo2, hi2) in zip(region, dims):
            d = o2.add(o1, -1)
            if not d.is_const():
                return None
            merged.append((o1, min(lo1, lo2 + d.const), max(hi1, hi2 + d.const)))
        region = merged
    if region is None:
        return None
    out = []
    for d, (o, lo, hi) in enumerate(region):
        if d in full:
            ext = shape[d].value if d < len(shape) and isinstance(shape[d], E.IntImm) \
                else None
            if ext is None:
                return None
            out.append((E.IntImm(o.dtype, 0), ext))
        else:
            out.append((A.to_expr(o + lo), hi - lo + 1))
    return out


def _opaque(lin, inner) -> bool:
    """A term that is not affine in the iterators (a load from another buffer whose index
    does not vary inside counts as a symbol, as in TVM)."""
    for a in lin.terms:
        if A.is_opaque(a):
            if isinstance(a.expr, E.BufferLoad) and \
                    not any(id(v) in inner for v in vars_in(a.expr)):
                continue
            return True
        if not A.is_var(a) and _opaque(a.args[0], inner):
            return True
    return False


def atom_vars(atom):
    """The variables of an atom of a linear form (a variable, a division or remainder of a
    linear form, an opaque term)."""
    if A.is_var(atom):
        return [atom]
    if not A.is_opaque(atom):
        return [v for a in atom.args[0].terms for v in atom_vars(a)]
    return vars_in(atom.expr)


def regions_of(block: S.Block):
    """(reads, writes) of a block: as declared, or inferred (`infer_regions`) where not."""
    r, w = block.reads, block.writes
    if r is None or w is None:
        r2, w2 = infer_regions(block)
        r = r if r is not None else r2
        w = w if w is not None else w2
    return r, w


def infer_regions(block: S.Block, include_written_reads=True):
    """(reads, writes) as tuples of BufferRegion, inferred from the body the way TVM does:
    buffers in order of first access, each the hull of its accesses; a buffer whose hull
    cannot be described is given whole."""
    loads, stores = [], []

    def v(x):
        if isinstance(x, S.BlockRealize):
            b = x.block
            r, w = regions_of(b)
            ivmap = {id(iv.var): val for iv, val in zip(b.iter_vars, x.iter_values)}
            for reg in r:
                loads.append((reg.buffer, _region_corners(reg, ivmap)))
            for reg in w:
                stores.append((reg.buffer, _region_corners(reg, ivmap)))
            return False
        if isinstance(x, E.BufferLoad):
            for i in x.indices:                 # loads inside indices come first (as TVM)
                walk(i, v)
            loads.append((x.buffer, [tuple(x.indices)]))
            return False
        elif isinstance(x, S.BufferStore):
            walk(x.value, v)
            for i in x.indices:
                walk(i, v)
            stores.append((x.buffer, [tuple(x.indices)]))
            return False
        return True
    walk(block.body, v)
    inner = loop_ranges(block.body)     # the loops inside the body, relaxed
    if block.init is not None:
        # a reduction's update of its own output is not listed among its reads (as TVM infers)
        written = {id(b) for b, _ in stores}
        loads = [(b, i) for b, i in loads if id(b) not in written]
    return _group(loads, inner), _group(stores, inner)


def _region_corners(reg, ivmap):
    lo = tuple(substitute(r.min, ivmap) for r in reg.region)
    hi = tuple(substitute(E.Sub(E.Add(r.min, r.extent, "int32"), ONE, "int32"), ivmap)
               for r in reg.region)
    return [lo, hi]


def _group(pairs, inner):
    order, by = [], {}
    for buf, idxs in pairs:
        if id(buf) not in by:
            order.append(buf)
            by[id(buf)] = []
        by[id(buf)].extend(idxs)
    out = []
    for buf in order:
        reg = region_of_indices(by[id(buf)], {}, inner, {}, buf.shape)
        if reg is None:
            rng = tuple(E.Range(E.IntImm("int32", 0), d) for d in buf.shape)
        else:
            rng = tuple(E.Range(m, E.IntImm("int32", x)) for m, x in reg)
        out.append(S.BufferRegion(buf, rng))
    return tuple(out)
