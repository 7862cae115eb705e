"""What cache_read and cache_write share: the cache buffer, where the copy goes (TVM's rule:
in the innermost statement list that holds the writer before the first related block, right
before that block's statement; at the start of the scope for an input, at its end when
nothing reads the result) and the region it copies (the block's region relaxed over the
loops under that place)."""
from __future__ import annotations

import dataclasses

from ..ir import expr as E
from ..ir import stmt as S
from . import _arith as A
from . import _common as C
from . import _ir
from .analysis import infer_regions, region_of_indices

SCOPES = ("global", "shared", "shared.dyn", "local", "warp", "global.texture", "wmma.matrix_a",
          "wmma.matrix_b", "wmma.accumulator", "m16n8k8.matrixA", "m16n8k8.matrixB",
          "m16n8k8.matrixC")


def check_scope(sch, scope, node):
    if not isinstance(scope, str) or not (scope in SCOPES or scope.startswith(
            ("global.", "shared.", "local.", "wmma.", "metal."))):
        raise sch.error(f"{sch._current}/bad-scope", f"'{scope}' is not a storage scope", node)


def cache_buffer(buf, scope, name):
    data = E.Var(name, "handle", E.PointerType(buf.dtype, scope))
    return S.Buffer(name, buf.shape, buf.dtype, data, strides=buf.strides,
                    elem_offset=buf.elem_offset, scope=scope)


def locate(scope, writer, related):
    """(loc, pos): loc is the scope block or a For; pos an index in its body's statements."""
    if writer is None:
        return scope, 0
    if not related:
        return scope, len(_ir.child_stmts(scope))
    rel = {id(r) for r in related}
    found = [None]

    def contains(s):
        seen_w = seen_r = False
        for x in _ir.stmts(s):
            if x is writer:
                seen_w = True
            elif id(x) in rel:
                seen_r = True
        return seen_w, seen_r

    def visit(owner):
        kids = _ir.child_stmts(owner)
        seen_w = False
        for i, k in enumerate(kids):
            w, r = contains(k)
            if w and r:
                inner = _descend(k)
                if inner is not None and visit(inner):
                    return True
            if (seen_w or w) and r:
                found[0] = (owner, i)
                return True
            if r:
                return False
            seen_w = seen_w or w
        return False

    def _descend(k):
        # the statement whose body is the next statement list (through single nestings)
        while True:
            if isinstance(k, S.For):
                if isinstance(k.body, S.SeqStmt):
                    return k
                k = k.body
            elif isinstance(k, S.BlockRealize):
                return None
            elif hasattr(k, "body") and isinstance(k, S.Stmt):
                k = k.body
            else:
                return None

    visit(scope)
    if found[0] is None:
        return scope, len(_ir.child_stmts(scope))
    return found[0]


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
    hi = tuple(_ir.substitute(E.Sub(E.Add(r.min, r.extent, "int32"), C.int32(1), "int32"),
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
    reg = region_of_indices([lo, hi], {}, C.loop_bounds(inner), C.loop_bounds(outer),
                            region.buffer.shape)
    if reg is None:
        # dimension by dimension: the ones we cannot bound are whole (as in TVM)
        reg = []
        for a, b, d in zip(lo, hi, region.buffer.shape):
            one = region_of_indices([(a,), (b,)], {}, C.loop_bounds(inner),
                                    C.loop_bounds(outer), (d,))
            reg.append(one[0] if one else
                       (C.int32(0, d.dtype), d.value if isinstance(d, E.IntImm) else d))
    if back:
        reg = [(_ir.substitute(mn, back), ext) for mn, ext in reg]
        lo = tuple(_ir.substitute(x, back) for x in lo)
        hi = tuple(_ir.substitute(x, back) for x in hi)
    out = []
    obounds = C.loop_bounds(outer)
    # a predicate of plain comparisons bounds the indices it names (TVM reads such a
    # predicate as bounds of the iterators; anything else it leaves aside)
    conj = _conjuncts(info.realize.predicate)
    if not all(isinstance(c, (E.LT, E.LE, E.GE)) for c in conj):
        conj = []
    relaxed = {id(f.loop_var) for f in inner}
    for (mn, ext), d, a, b in zip(reg, region.buffer.shape, lo, hi):
        if isinstance(mn, E.IntImm) and isinstance(d, E.IntImm):
            lo_, hi_ = max(mn.value, 0), min(mn.value + ext - 1, d.value - 1)
            mn, ext = C.int32(lo_, mn.dtype), hi_ - lo_ + 1
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
    if isinstance(e, E.And):
        return _conjuncts(e.a) + _conjuncts(e.b)
    return [] if e is None else [e]


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
    from ..ir.visit import free_variables
    return any(id(v) in rng for v in free_variables(e))


def input_region(sch, func, scope, buf):
    """The region of `buf` a cache of an input of `scope` holds: the scope block's read
    region of it (declared or inferred), the whole buffer in the root scope."""
    whole = [(C.int32(0, d.dtype), d.value if isinstance(d, E.IntImm) else d)
             for d in buf.shape]
    if is_root_scope(sch, func, scope):
        return whole
    reads = scope.reads if scope.reads is not None else infer_regions(scope)[0]
    reg = next((r for r in reads if r.buffer is buf), None)
    if reg is None:
        return whole
    out = []
    for r in reg.region:
        ext = r.extent.value if isinstance(r.extent, E.IntImm) else r.extent
        out.append((r.min, ext))
    return out


def copy_nest(sch, src, dst, name, region, outer_loops):
    """`for ax...: with block(name): dst[v...] = src[v...]` over `region`."""
    loops, ivs, values, idx = [], [], [], []
    bounds = _loop_bounds(outer_loops)
    for k, ((mn, ext), d) in enumerate(zip(region, src.shape)):
        if ext is None:
            raise sch.error(f"{sch._current}/symbolic-shape", f"buffer '{src.name}' has a "
                            "non-constant shape")
        lv = E.Var(f"ax{k}", d.dtype)
        v = E.Var(f"v{k}", d.dtype)
        loops.append(C.new_loop(lv, ext))
        if isinstance(ext, int):
            bounds[id(lv)] = (0, ext - 1)
        ivs.append(S.IterVar(v, E.Range(E.IntImm(d.dtype, 0), d), "S"))
        # TVM binds `min + ax` as it is (the region's min is already simple)
        values.append(lv if _zero(mn) else E.Add(mn, lv, d.dtype))
        idx.append(v)
    point = tuple(E.Range(v, E.IntImm("int32", 1)) for v in idx)
    store = S.BufferStore(dst, E.BufferLoad(src, tuple(idx), src.dtype), tuple(idx))
    block = S.Block(name, tuple(ivs), (S.BufferRegion(src, point),),
                    (S.BufferRegion(dst, point),), store)
    realize = S.BlockRealize(tuple(values), C.TRUE, block)
    return C.nest(loops, realize)


def _loop_bounds(loops):
    """Loop variable bounds; a loop of symbolic extent from a constant start is bounded by
    the largest value of its type (so that its variable still counts as a loop variable)."""
    out = C.loop_bounds(loops)
    for f in loops:
        if id(f.loop_var) not in out and isinstance(f.min, E.IntImm):
            bits = 63 if f.loop_var.dtype == "int64" else 31
            out[id(f.loop_var)] = (f.min.value, 2 ** bits - 1)
    return out


def insert(sch, func, scope, loc, pos, nest, mapping, cbuf):
    """One replace of the scope: blocks swapped per mapping, the copy nest inserted at
    (loc, pos), the cache buffer allocated in the scope."""
    if loc is scope:
        new = _ir.replace_nodes(scope, mapping)
        kids = _ir.child_stmts(new)
        kids.insert(pos, nest)
        new = dataclasses.replace(new, body=S.SeqStmt(tuple(kids)))
    else:
        new_loc = _ir.replace_nodes(loc, mapping)
        kids = _ir.child_stmts(new_loc)
        kids.insert(pos, nest)
        new_loc = dataclasses.replace(new_loc, body=S.SeqStmt(tuple(kids)))
        new = _ir.replace_nodes(scope, {**mapping, id(loc): new_loc})
    new = dataclasses.replace(new, alloc_buffers=new.alloc_buffers + (cbuf,))
    sch.replace(func, scope, new)


def top_stmt(info, scope):
    """The statement directly in the scope body that holds the block."""
    chain = info.ancestors
    k = next(i for i, a in enumerate(chain) if a is scope)
    rest = [a for a in chain[k + 1:] if not isinstance(a, S.SeqStmt)]
    return rest[0] if rest else info.realize


def position(scope, stmt, after=False) -> int:
    """Index of `stmt` among the statements of the scope body (+1 when after)."""
    kids = list(scope.body.seq) if isinstance(scope.body, S.SeqStmt) else [scope.body]
    return next(i for i, k in enumerate(kids) if k is stmt) + int(after)


def insert_in_scope(scope, new, pos):
    kids = list(scope.body.seq) if isinstance(scope.body, S.SeqStmt) else [scope.body]
    kids.insert(pos, new)
    return dataclasses.replace(scope, body=S.SeqStmt(tuple(kids)))


# ---- caches inside a non-root scope are compacted to the region they hold (as TVM does) ----
def is_root_scope(sch, func, scope) -> bool:
    body = sch.func(func).body
    return isinstance(body, S.BlockRealize) and body.block is scope


def whole(region, buf) -> bool:
    """A cache compacted to the region keeps the buffer's layout (row-major): the region
    starts at 0 and is whole in every dimension but the first, so an element sits at the same
    offset in both (a pointer into the buffer may move to the cache)."""
    from ..ir.equality import structural_equal
    for k, ((mn, ext), d) in enumerate(zip(region, buf.shape)):
        if not _zero(mn):
            return False
        if k == 0:
            continue
        if isinstance(ext, int):
            if not (isinstance(d, E.IntImm) and d.value == ext):
                return False
        elif not structural_equal(ext, d):
            return False
    return True


def check_matches(sch, node, buf, block):
    """A block that views `buf` through a match_buffer reads or writes it behind the view:
    refused (TVM refuses a view of another scope than the cache's; one of the same scope
    would need the view's accesses counted as the block's own)."""
    from ..ir.visit import walk
    bad = []
    walk(node, lambda x: bad.append(x) if isinstance(x, S.MatchBufferRegion) and
         x.source.buffer is buf else True)
    if bad:
        raise sch.error(f"{sch._current}/match-buffer", f"'{bad[0].buffer.name}' views "
                        f"'{buf.name}' in block '{block.name_hint}'", block)


def check_own_view(sch, blk, buf):
    """A buffer the block declares as a match_buffer view exists only inside it: nothing
    outside can copy it."""
    if any(m.buffer is buf for m in blk.match_buffers):
        raise sch.error(f"{sch._current}/match-buffer", f"'{buf.name}' is a view declared "
                        f"by block '{blk.name_hint}'", blk)


def loose_accesses(scope, buf):
    """(index in the scope's statement list, node) for each load or store of `buf` (or use of
    its data) outside every block of the scope."""
    from ..ir.visit import walk
    out = []
    for k, top in enumerate(_ir.child_stmts(scope)):
        def v(x, k=k):
            if isinstance(x, S.BlockRealize):
                return False
            if isinstance(x, (E.BufferLoad, S.BufferStore)) and x.buffer is buf or \
                    x is buf.data:
                out.append((k, x))
            return True
        walk(top, v)
    return out


def compact_buffer(buf, scope, name, region):
    data = E.Var(name, "handle", E.PointerType(buf.dtype, scope))
    shape = tuple(E.IntImm(d.dtype, ext) if isinstance(ext, int) else ext
                  for (_, ext), d in zip(region, buf.shape))
    # the buffer's strides and offset come along, as in TVM (a copy of the buffer's
    # declaration with a new shape)
    return S.Buffer(name, shape, buf.dtype, data, strides=buf.strides,
                    elem_offset=buf.elem_offset, scope=scope)


def compact_copy_nest(sch, orig, cache, name, region, reading):
    """Copy between `orig[min + v]` and `cache[v]` for v over the region's extents."""
    loops, ivs, vals, cidx, oidx = [], [], [], [], []
    for k, ((mn, ext), d) in enumerate(zip(region, orig.shape)):
        if ext is None:
            raise sch.error(f"{sch._current}/symbolic-shape", f"buffer '{orig.name}' has a "
                            "non-constant region")
        lv = E.Var(f"ax{k}", d.dtype)
        v = E.Var(f"v{k}", d.dtype)
        loops.append(C.new_loop(lv, ext))
        dom = E.IntImm(d.dtype, ext) if isinstance(ext, int) else ext
        ivs.append(S.IterVar(v, E.Range(E.IntImm(d.dtype, 0), dom), "S"))
        vals.append(lv)
        cidx.append(v)
        oidx.append(v if _zero(mn) else E.Add(mn, v, d.dtype))
    cpoint = tuple(E.Range(v, E.IntImm("int32", 1)) for v in cidx)
    opoint = tuple(E.Range(x, E.IntImm("int32", 1)) for x in oidx)
    if reading:
        store = S.BufferStore(cache, E.BufferLoad(orig, tuple(oidx), orig.dtype), tuple(cidx))
        reads, writes = (S.BufferRegion(orig, opoint),), (S.BufferRegion(cache, cpoint),)
    else:
        store = S.BufferStore(orig, E.BufferLoad(cache, tuple(cidx), orig.dtype), tuple(oidx))
        reads, writes = (S.BufferRegion(cache, cpoint),), (S.BufferRegion(orig, opoint),)
    block = S.Block(name, tuple(ivs), reads, writes, store)
    return C.nest(loops, S.BlockRealize(tuple(vals), C.TRUE, block))


def shift_buffer(node, old, new, region):
    """Accesses of `old` become accesses of `new` at index - region min."""
    mins = [mn for mn, _ in region]

    def one(i, m):
        if _zero(m):
            return i
        li, lm = A.to_lin(i, {}), A.to_lin(m, {})
        keys = {A._akey(a) for a, _ in lm.terms}
        if any(A._akey(a) in keys for a, _ in li.terms) or li.const and lm.const:
            # terms or constants cancel: simplify
            return A.simplify(E.Sub(i, m, i.dtype))
        return E.Sub(i, m, i.dtype)

    def sh(idx):
        return tuple(one(i, m) for i, m in zip(idx, mins))

    def fn(y, x):
        if isinstance(y, E.BufferLoad) and y.buffer is old:
            return E.BufferLoad(new, sh(y.indices), y.dtype, y.span)
        if isinstance(y, S.BufferStore) and y.buffer is old:
            return dataclasses.replace(y, buffer=new, indices=sh(y.indices))
        if isinstance(y, S.BufferRegion) and y.buffer is old:
            return S.BufferRegion(new, tuple(E.Range(m, r.extent) for m, r in
                                             zip(sh(tuple(r.min for r in y.region)),
                                                 y.region)))
        return None
    return _ir.rebuild(node, fn)


def _zero(e):
    return isinstance(e, E.IntImm) and e.value == 0
