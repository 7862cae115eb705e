"""signature/region-out-of-bounds: a declared `T.reads`/`T.writes` region that lies wholly
outside its buffer for some block instance (`T.reads(data[vi, vj, 6])` on a dimension of
extent 6).  A region that only overlaps the edge (a halo such as `A[vi - 1 : vi + 2]`,
which `annotate_buffer_access` writes) is not reported.

TVM trusts the declared regions (they drive compaction, `compute_at` and the dependence
analysis), so a region outside the buffer is wrong even when the body stays inside.  The
region is read twice, as `bounds/out-of-bounds` reads an access: over the block iterators'
declared domains, and over the loops with the bindings substituted and `T.where` assumed;
both must leave the buffer.  Left alone: TVM's padding idiom (the body reads the buffer only
under a guard, `T.if_then_else(1 <= vh, X[vh - 1], 0)`, and declares `X[vh - 1]`); regions
whose body access is itself out of bounds (reported there, once); buffers declared over
storage they do not own, and bare pointer parameters."""
from __future__ import annotations

from ..arith import Analyzer
from ..arith.affine import Atom
from ..diagnostics import error
from ..ir import expr as E
from . import register
from ._common import binding_analyzer, block_label, func_accesses, text


def _exact(aff):
    return all(not isinstance(k, Atom) or (k.kind == "fdiv" and _exact(k.args[0]))
               for k in aff.terms)


def _out(an, mn, extent, dim, env):
    """A description of how [mn, mn + extent) leaves [0, dim), or None."""
    if isinstance(mn, E.Ramp):
        return None
    a = an.to_aff(mn, env)
    b = a + an.to_aff(extent, env) - 1
    if not (_exact(a) and _exact(b)):
        return None
    # the whole region outside for some instance: its first element past the end, or its
    # last one below zero (a halo that overlaps the buffer, `A[vi - 1 : vi + 2]`, is not)
    _, ahi = an.bound(a)
    blo, _ = an.bound(b)
    d = an.to_aff(dim)
    if ahi is not None and an.prove_nonneg(ahi - d):
        return f"starts at {ahi!r}"
    if blo is not None and an.prove_neg(blo):
        return f"ends at {blo!r}"
    return None


@register("signature/region-bounds", codes=("signature/region-out-of-bounds",), fast=True)
def check_region_bounds(func, ctx):
    fa = func_accesses(func, ctx)
    owned = {b.data for _, b in func.buffer_map} | {b.data for b, _ in fa.allocs}
    out = []
    under = {}            # id(BlockRealize) -> accesses in its body, at any depth
    for a in fa.accesses:
        for r in a.blocks:
            under.setdefault(id(r), []).append(a)
    for r in fa.realizes:
        b = r.block
        if not b.reads and not b.writes:
            continue
        if not any(reg.buffer.data in owned for reg in (b.reads or ()) + (b.writes or ())):
            continue
        depth = len(fa.blocks_of[id(r)])
        body = under.get(id(r), [])
        it_an = None
        if b.iter_vars:
            it_an = Analyzer()
            for outer in fa.blocks_of[id(r)]:
                for iv in outer.block.iter_vars:
                    it_an.bind_extent(iv.var, iv.dom.min, iv.dom.extent)
            for iv in b.iter_vars:
                it_an.bind_extent(iv.var, iv.dom.min, iv.dom.extent)
        loop_an = None
        env = dict(fa.env)
        env.update(fa.lets)
        for kind, regions in (("reads", b.reads or ()), ("writes", b.writes or ())):
            for reg in regions:
                buf = reg.buffer
                if buf.data not in owned or reg.span is None or \
                        len(reg.region) != len(buf.shape):
                    continue
                mine = [a for a in body if a.buffer is buf]
                if any(c_depth > depth for a in mine for _, c_depth in a.conds):
                    continue                       # the padding idiom: the body is guarded
                for d, rng in enumerate(reg.region):
                    why = _out(it_an, rng.min, rng.extent, buf.shape[d], None) if it_an else ""
                    if why is None:
                        continue
                    if loop_an is None:
                        loop_an = binding_analyzer(fa, r)
                    why2 = _out(loop_an, rng.min, rng.extent, buf.shape[d], env)
                    if why2 is None:
                        continue
                    if any(len(a.indices) > d and _out(loop_an, a.indices[d], 1, buf.shape[d],
                                                       env) for a in mine):
                        break                      # the body is out of bounds: one report
                    name = block_label(b)
                    out.append(error(
                        "signature/region-out-of-bounds",
                        f"{name} declares {kind} of `{buf.name}` out of bounds: "
                        f"in dimension {d} the region {why or why2}, outside the extent "
                        f"{text(buf.shape[d])}",
                        reg.span))
                    break
    return out
