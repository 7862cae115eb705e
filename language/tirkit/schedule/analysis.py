"""What the primitives need to know about blocks: read/write regions (declared, or inferred
from the body), producers and consumers within a scope, output buffers, bindings."""
from __future__ import annotations

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.visit import walk
from ..arith import writeback as A
from ..arith.affine import Aff
from . import _ir

ONE = E.IntImm("int32", 1)


def read_buffers(block: S.Block) -> list:
    if block.reads is not None:
        return _uniq([r.buffer for r in block.reads])
    return _uniq([r.buffer for r in infer_regions(block)[0]])


def write_buffers(block: S.Block) -> list:
    if block.writes is not None:
        return _uniq([r.buffer for r in block.writes])
    return _uniq([r.buffer for r in infer_regions(block)[1]])


def _uniq(bs):
    out = []
    for b in bs:
        if not any(b is x for x in out):
            out.append(b)
    return out


def output_buffers(func: S.PrimFunc) -> list:
    return [b for _, b in func.buffer_map]


def writes_output(func, block) -> bool:
    outs = output_buffers(func)
    return any(any(b is o for o in outs) for b in write_buffers(block))


def scope_blocks(sch, func, scope):
    """BlockInfos whose scope block is `scope`, in program order."""
    return [i for i in sch.index(func).order if i.scope is scope]


def producers(sch, func, info) -> list:
    reads = read_buffers(info.block)
    out = []
    for other in scope_blocks(sch, func, info.scope):
        if other.block is info.block:
            break
        if any(any(w is r for r in reads) for w in write_buffers(other.block)):
            out.append(other)
    return out


def consumers(sch, func, info) -> list:
    writes = write_buffers(info.block)
    out, after = [], False
    for other in scope_blocks(sch, func, info.scope):
        if other.block is info.block:
            after = True
            continue
        if after and any(any(w is r for r in read_buffers(other.block)) for w in writes):
            out.append(other)
    return out


def is_reduction(block: S.Block) -> bool:
    return any(iv.kind == "R" for iv in block.iter_vars)


def binding_uses(realize: S.BlockRealize, var, kinds=("R",)) -> list:
    """Iterators of the given kinds whose binding uses `var`."""
    out = []
    for iv, v in zip(realize.block.iter_vars, realize.iter_values):
        if iv.kind in kinds and _ir.uses_var(v, var):
            out.append(iv)
    return out


def realizes_under(stmt) -> list:
    out = []

    def v(x):
        if isinstance(x, S.BlockRealize):
            out.append(x)
        return True
    walk(stmt, v)
    return out


def is_affine(e, bounds=None) -> bool:
    lin = A.to_form(e, bounds or {})

    def ok(l):
        for a in l.terms:
            if A.is_opaque(a):
                return False
            if not A.is_var(a) and not ok(a.args[0]):
                return False
        return True
    return ok(lin)


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
            e = _ir.substitute(e, ivmap)
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
                    not any(id(v) in inner for v in _ir.vars_in(a.expr)):
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
    return _ir.vars_in(atom.expr)


def _inner_loop_bounds(stmt):
    """Bounds of loops inside a block body (relaxed when computing its regions)."""
    out = {}

    def v(x):
        if isinstance(x, S.For) and isinstance(x.min, E.IntImm) and \
                isinstance(x.extent, E.IntImm):
            out[id(x.loop_var)] = (x.min.value, x.min.value + x.extent.value - 1)
        return True
    walk(stmt, v)
    return out


def infer_regions(block: S.Block, include_written_reads=True):
    """(reads, writes) as tuples of BufferRegion, inferred from the body the way TVM does:
    buffers in order of first access, each the hull of its accesses; a buffer whose hull
    cannot be described is given whole."""
    loads, stores = [], []

    def v(x):
        if isinstance(x, S.BlockRealize):
            b = x.block
            r, w = (b.reads, b.writes)
            if r is None or w is None:
                r2, w2 = infer_regions(b)
                r = r if r is not None else r2
                w = w if w is not None else w2
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
    inner = _inner_loop_bounds(block.body)
    if block.init is not None:
        # a reduction's update of its own output is not listed among its reads (as TVM infers)
        written = {id(b) for b, _ in stores}
        loads = [(b, i) for b, i in loads if id(b) not in written]
    return _group(loads, inner), _group(stores, inner)


def _region_corners(reg, ivmap):
    lo = tuple(_ir.substitute(r.min, ivmap) for r in reg.region)
    hi = tuple(_ir.substitute(E.Sub(E.Add(r.min, r.extent, "int32"), ONE, "int32"), ivmap)
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


def refresh_regions(block: S.Block) -> S.Block:
    """Recompute declared reads/writes after a body change (undeclared ones stay None)."""
    import dataclasses
    if block.reads is None and block.writes is None:
        return block
    r, w = infer_regions(block)
    return dataclasses.replace(block, reads=r if block.reads is not None else None,
                               writes=w if block.writes is not None else None)


def opaque_uses(stmt, buf) -> list:
    """Nodes that use `buf` other than through BufferLoad/BufferStore (intrinsic arguments,
    match_buffer sources, pointer access)."""
    out = []

    def v(x):
        if isinstance(x, E.BufferRef) and x.buffer is buf:
            out.append(x)
        elif isinstance(x, S.MatchBufferRegion) and x.source.buffer is buf:
            out.append(x)
        elif isinstance(x, E.Var) and x is buf.data:
            out.append(x)
        elif isinstance(x, E.Call):
            for a in x.args:
                if isinstance(a, E.BufferLoad) and a.buffer is buf and \
                        x.op in ("address_of", "tvm_access_ptr"):
                    out.append(x)
        return True
    walk(stmt, v)
    return out
