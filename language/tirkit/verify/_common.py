"""Helpers shared by the rules: cached accesses, kernels (thread-bound loop nests), the
target of a function, names for messages."""
from __future__ import annotations

from .. import target as targets
from ..analysis.regions import accesses
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.text import expr_text
from ..ir.visit import const_int  # noqa: F401  (the rules take it from here)
from ..ir.visit import vars_in, walk


def func_accesses(func, ctx):
    return accesses(func, ctx.cache)


def is_thread(lp):
    return lp.kind == "thread_binding" and bool(lp.thread_tag)


def relax_thread(lp):
    """Loops a thread block's shared data is relaxed over: threadIdx and vthread."""
    tag = lp.thread_tag or ""
    return is_thread(lp) and (tag.startswith("threadIdx") or tag.startswith("vthread"))


def kernels(fa):
    """{id(root Loop): (root Loop, [thread Loops in order])} for each GPU kernel: a maximal
    nest under an outermost thread-bound loop."""
    out = {}
    for lp in fa.loops:
        if not is_thread(lp):
            continue
        outer = [p for p in fa.loop_parents[id(lp)] if is_thread(p)]
        root = outer[0] if outer else lp
        out.setdefault(id(root), (root, []))[1].append(lp)
    return out


def kernel_of(fa, loops):
    """The root Loop of the kernel a loop stack is in, or None."""
    for lp in loops:
        if is_thread(lp):
            return lp
    return None


def target_for(func, ctx, fa=None):
    fa = fa or func_accesses(func, ctx)
    has_threads = any(is_thread(lp) for lp in fa.loops)
    key = ("target", has_threads)
    t = ctx.cache.get(key)
    if t is None:
        t = targets.resolve(ctx.target, None, has_threads, pragma=ctx.pragma)
        ctx.cache[key] = t
    return t


def text(e):
    return expr_text(e)


def same_element(a, b) -> bool:
    """Whether two accesses (loads, stores or `Access` records) name the same element: one
    buffer, structurally equal indices."""
    from ..ir.equality import structural_equal
    return a.buffer is b.buffer and len(a.indices) == len(b.indices) and \
        all(structural_equal(x, y) for x, y in zip(a.indices, b.indices))


def block_name(r):
    return r.block.name_hint if r is not None else "root"


def block_label(block):
    """How messages name a block: `block 'C'`, or `block at line 42` when it has no name."""
    if block.name_hint:
        return f"block '{block.name_hint}'"
    line = (block.name_span or block.span).line if (block.name_span or block.span) else None
    return f"block at line {line}" if line else "an unnamed block"


def loose_vars(loops):
    """Variables of loops whose extent or start depends on another loop of the stack (a
    clipped tail, `for j in range(T.min(31, 126 - i * 32) + 1)`): interval bounds over such
    loops are not attained, so no rule may report a value as certainly reached through
    them."""
    own = {lp.var for lp in loops}
    out = set()
    for lp in loops:
        if isinstance(lp.extent, E.IntImm) and isinstance(lp.min, E.IntImm):
            continue
        found = []

        def f(x, lp=lp):
            if isinstance(x, E.Var) and x in own and x is not lp.var:
                found.append(x)
            return not found
        walk((lp.min, lp.extent), f)
        if found:
            out.add(lp.var)
    return out


def binding_scope(fa, r):
    """(the loops between a block and its parent block, every enclosing loop, the enclosing
    blocks) of a BlockRealize."""
    loops = fa.loops_of[id(r)]
    blocks = fa.blocks_of[id(r)]
    start = len(fa.loops_of[id(blocks[-1])]) if blocks else 0
    return loops[start:], loops, blocks


def binding_analyzer(fa, r, with_predicate=True):
    """An analyzer over a block's binding scope: every enclosing loop ranged, the iterators
    of enclosing blocks ranged by their domains, the predicate assumed."""
    from ..arith import Analyzer
    an = Analyzer()
    _, loops, blocks = binding_scope(fa, r)
    for b in blocks:
        for iv in b.block.iter_vars:
            an.bind_extent(iv.var, iv.dom.min, iv.dom.extent)
    for lp in loops:
        an.bind_extent(lp.var, lp.min, lp.extent)
    if with_predicate:
        p = r.predicate
        if not (isinstance(p, E.IntImm) and p.value):
            an.assume(p)
    return an


def iter_map_of(fa, r, ctx):
    """The iterator map of a block's bindings (cached per block)."""
    from ..arith import detect
    key = ("itermap", id(r))
    m = ctx.cache.get(key)
    if m is None:
        an = binding_analyzer(fa, r)
        inner, _, _ = binding_scope(fa, r)
        loops = {}
        for lp in inner:
            mn = an.to_aff(lp.min)
            ext = an.to_aff(lp.extent)
            loops[lp.var] = (mn, ext.const if ext.is_const() else ext)
        names = [iv.var.name for iv in r.block.iter_vars]
        spatial = [iv.kind != "R" for iv in r.block.iter_vars]
        threads = frozenset(lp.var for lp in inner if is_thread(lp))
        m = (detect(list(r.iter_values), loops, an, names, spatial, threads), an)
        ctx.cache[key] = m
    return m


def storage_owners(func, ctx):
    """data Var -> (shape, dtype, Buffer or None) of what owns that storage: parameters'
    buffers, allocations, and the first buffer declared over a fresh data Var (computed once
    per function for the rules that read it)."""
    key = ("owners", id(func))
    if key not in ctx.cache:
        ctx.cache[key] = _owners(func, func_accesses(func, ctx))
    return ctx.cache[key]


def _owners(func, fa):
    params = set(func.params)
    own = {b.data: (b.shape, b.dtype, b) for _, b in func.buffer_map}
    for b, _ in fa.allocs:
        own.setdefault(b.data, (b.shape, b.dtype, b))
    for x in fa.decls:               # (in program order: the first one owns the storage)
        if type(x) is S.Allocate:
            own.setdefault(x.buffer_var, (x.extents, x.dtype, None))
        elif x.buffer.data not in params:
            b = x.buffer
            own.setdefault(b.data, (b.shape, b.dtype, b))
    return own


def const_size(shape):
    """The elements of a constant shape, or None."""
    n = 1
    for e in shape:
        if not isinstance(e, E.IntImm):
            return None
        n *= e.value
    return n


def exact_aff(aff) -> bool:
    """Whether an Aff's bounds over its variables' ranges are attained: its terms are
    variables and floor divisions (by constants) of such forms."""
    from ..arith.affine import Atom
    return all(not isinstance(k, Atom) or (k.kind == "fdiv" and exact_aff(k.args[0]))
               for k in aff.terms)


def full_env(fa):
    """Every substitution of a function's accesses: block iterators' bindings and lets."""
    env = dict(fa.env)
    env.update(fa.lets)
    return env


def vars_through(e, env=None, depth=0) -> set:
    """ids of the variables of e, and of what env substitutes for them."""
    out = set()
    for x in vars_in(e):
        out.add(id(x))
        if env is not None and x in env and depth < 8:
            out.update(vars_through(env[x], env, depth + 1))
    return out


def constant_box(loops) -> dict:
    """{Var: (min, extent)} of the loops whose min and extent are constants: the box
    arith/enumerate.py evaluates an expression over."""
    return {lp.var: (lp.min.value, lp.extent.value) for lp in loops
            if isinstance(lp.min, E.IntImm) and isinstance(lp.extent, E.IntImm)}
