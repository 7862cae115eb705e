"""reverse_compute_inline: fold a consumer `D[g(v)] = f(B[L(v)])` into the producer of B.

The consumer's read indices L must be an affine iterator map of its iterators that can be
inverted: each index a sum of pieces `(x // lower) % extent * scale` of its iterators (or of
a fused `i * n + j`), the pieces of each iterator tiling it exactly and those of each index
forming a mixed radix number. Each consumer iterator is then an expression of the
producer's store indices; the producer stores `D[g(inv(s))] = f(its value)` and is
predicated to the instances whose consumer iterators lie in the consumer's domain.

Refused: a consumer that has an init, a predicate or a non-spatial iterator, is not a
single store, reads B at several different indices or at a map that is not invertible, or
whose iterators are not all determined; several producers, a producer (the innermost block
that writes B) that is not a single store, has a non-spatial iterator, or does not cover
what the consumer reads, a producer with an init unless the consumer copies B unchanged; a
buffer B that is an output of the function, has other readers (they would be left reading a
buffer nothing writes) or is read opaquely."""
from __future__ import annotations

import dataclasses

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.visit import child_fields
from . import _arith as A
from . import _common as C
from . import _inline as I
from . import _ir
from .analysis import opaque_uses, output_buffers, producers, refresh_regions
from .registry import primitive


@primitive("reverse_compute_inline")
def reverse_compute_inline(sch, block):
    info = sch.block_info(block)
    blk = info.block
    func = sch.func(block.func)
    if blk.init is not None:
        raise sch.error("reverse_compute_inline/has-init", f"block '{blk.name_hint}' has an "
                        "init (it is a reduction)", blk)
    store = I.single_store(sch, blk, "reverse_compute_inline")
    scope = I.scope_of(sch, block.func, info)
    prods = producers(sch, block.func, info)
    if len(prods) != 1:
        raise sch.error("reverse_compute_inline/producers", f"block '{blk.name_hint}' has "
                        f"{len(prods)} producer blocks; exactly one is needed", blk)
    prod = _leaf_writer(sch, block.func, prods[0], blk)
    pb = prod.block
    pstore = pb.body
    if not isinstance(pstore, S.BufferStore):
        raise sch.error("reverse_compute_inline/producer-not-single-store",
                        f"the producer '{pb.name_hint}' is not a single buffer store",
                        pb, [(blk, "consumer")])
    buf = pstore.buffer
    if any(buf is o for o in output_buffers(func)):
        raise sch.error("reverse_compute_inline/writes-output", f"'{buf.name}' is an output "
                        "of the function", pb, [(blk, "consumer")])
    loads = [ld for ld in _ir.buffer_loads(store) if ld.buffer is buf]
    if not loads:
        raise sch.error("reverse_compute_inline/no-load", f"block '{blk.name_hint}' reads "
                        f"'{buf.name}' only opaquely", blk)
    idx = loads[0].indices
    if any(not all(_same(a, b) for a, b in zip(ld.indices, idx)) for ld in loads):
        raise sch.error("reverse_compute_inline/several-indices", f"block '{blk.name_hint}' "
                        f"reads '{buf.name}' at several places", blk)
    if pb.init is not None:
        _check_reduction_producer(sch, pb, blk, store, buf)
    for other in sch.index(block.func).order:
        if other.block is blk or other.block is pb or \
                any(a is other.block for a in info.ancestors) or \
                any(a is other.block for a in prod.ancestors):
            continue
        if any(ld.buffer is buf for ld in _ir.buffer_loads(other.block, include_nested=False)) \
                or _opaque_here(other.block, buf):
            raise sch.error("reverse_compute_inline/other-readers", f"block "
                            f"'{other.block.name_hint}' also reads '{buf.name}'",
                            other.block, [(blk, "consumer")])
    if not C.is_true(info.realize.predicate):
        raise sch.error("reverse_compute_inline/predicate", f"block '{blk.name_hint}' has a "
                        "predicate", blk)
    for b, what in ((pb, "producer"), (blk, "consumer")):
        if any(iv.kind != "S" for iv in b.iter_vars):
            raise sch.error("reverse_compute_inline/not-complete", f"the {what} "
                            f"'{b.name_hint}' has iterators that are not spatial", b)
    sub, extra = _invert(sch, blk, idx, pstore.indices, pb, buf)
    pbounds = _dom_bounds(pb)
    outer = {}
    for a in prod.ancestors:
        if isinstance(a, S.Block):
            outer.update(_dom_bounds(a))
    _check_covered(sch, blk, pb, sub, {**outer, **pbounds})

    def resolve(node):
        # the producer's own loads of B (a reduction's update) read what the consumer wrote
        return _ir.rebuild(node, lambda y, x: E.BufferLoad(store.buffer, tuple(
            _ir.substitute(i, sub) for i in store.indices), store.buffer.dtype)
            if isinstance(y, E.BufferLoad) and y.buffer is buf else None)

    def inlined(pst):
        rhs = resolve(pst.value)
        value = _ir.substitute(store.value, sub)
        value = _ir.rebuild(value, lambda y, x: rhs
                            if isinstance(y, E.BufferLoad) and y.buffer is buf else None)
        indices = tuple(_ir.substitute(i, sub) for i in store.indices)
        return dataclasses.replace(store, value=value, indices=indices, span=pst.span)

    new_init = pb.init
    if pb.init is not None:
        new_init = _ir.rebuild(pb.init, lambda y, x: inlined(y)
                               if isinstance(y, S.BufferStore) and y.buffer is buf else None)
    nb = dataclasses.replace(pb, body=inlined(pstore), init=new_init)
    nb = refresh_regions(nb)
    pred = _predicate(blk, sub, pb, prod.realize, pbounds, extra)
    new_realize = dataclasses.replace(prod.realize, block=nb, predicate=pred)
    mapping = {}
    I.removal(info, mapping)
    mapping[id(prod.realize)] = new_realize
    new = _ir.replace_nodes(scope, mapping)
    if new is _ir.REMOVE:
        new = dataclasses.replace(scope, body=S.SeqStmt(()))
    new = _refresh_path(new, new_realize)
    sch.replace(block.func, scope, I.drop_alloc(new, buf))


# --------------------------------------------------------------------------- the producer

def _leaf_writer(sch, func, prod, consumer):
    """The innermost block under the producer that writes the consumer's buffer."""
    if not _ir.buffer_stores(prod.block.body) or not any(
            isinstance(s, S.BlockRealize) for s in _ir.stmts(prod.block.body)):
        return prod
    buffers = [s.buffer for s in _ir.buffer_stores(prod.block.body)]
    reads = [ld.buffer for ld in _ir.buffer_loads(consumer.body)]
    targets = [b for b in buffers if any(b is r for r in reads)]
    leaves = []
    for other in sch.index(func).order:
        if not any(a is prod.block for a in other.ancestors):
            continue
        if any(isinstance(s, S.BlockRealize) for s in _ir.stmts(other.block.body)):
            continue
        if any(any(s.buffer is t for t in targets) for s in _ir.buffer_stores(other.block.body)):
            leaves.append(other)
    if len(leaves) != 1:
        raise sch.error("reverse_compute_inline/producer-not-single-store",
                        f"the producer '{prod.block.name_hint}' writes the buffer in "
                        f"{len(leaves)} blocks", prod.block, [(consumer, "consumer")])
    return leaves[0]


def _check_reduction_producer(sch, pb, blk, store, buf):
    """A reduction producer: sound only when the consumer copies B unchanged and the
    reduction reads B where it writes it."""
    ok = isinstance(store.value, E.BufferLoad) and store.value.buffer is buf and \
        store.value.dtype == store.buffer.dtype
    for node in (pb.body, pb.init):
        for ld in _ir.buffer_loads(node):
            if ld.buffer is buf and not all(_same(a, b) for a, b in
                                            zip(ld.indices, pb.body.indices)):
                ok = False
        for st in _ir.buffer_stores(node):
            if st.buffer is buf and not all(_same(a, b) for a, b in
                                            zip(st.indices, pb.body.indices)):
                ok = False
    if not ok:
        raise sch.error("reverse_compute_inline/producer-not-single-store",
                        f"the producer '{pb.name_hint}' is a reduction and block "
                        f"'{blk.name_hint}' does more than copy '{buf.name}'", pb,
                        [(blk, "consumer")])


def _opaque_here(block, buf):
    return bool(opaque_uses(dataclasses.replace(block, body=_strip_nested(block.body)), buf)) \
        if any(isinstance(s, S.BlockRealize) for s in _ir.stmts(block.body)) \
        else bool(opaque_uses(block, buf))


def _strip_nested(stmt):
    return _ir.rebuild(stmt, lambda y, x: S.SeqStmt(()) if isinstance(y, S.BlockRealize)
                       else None)


def _dom_bounds(block):
    out = {}
    for iv in block.iter_vars:
        mn, ext = iv.dom.min, iv.dom.extent
        if isinstance(mn, E.IntImm) and isinstance(ext, E.IntImm) and ext.value > 0:
            out[id(iv.var)] = (mn.value, mn.value + ext.value - 1)
    return out


# --------------------------------------------------------------------------- iterator maps

class _Split:
    """`(source // lower) % extent * scale`; source an iterator or a fused _Sum."""
    __slots__ = ("source", "lower", "extent", "scale")

    def __init__(self, source, lower, extent, scale):
        self.source, self.lower, self.extent, self.scale = source, lower, extent, scale


class _Sum:
    """`sum(args) + base`, args in descending scale."""
    __slots__ = ("args", "base")

    def __init__(self, args, base):
        self.args, self.base = args, base


def _detect(indices, ext):
    """Each index as a _Sum over the iterators (ext: id(var) -> extent), or None."""
    marks = {}
    mark_lins = []

    def mark(lin):
        if lin.const != 0 or not lin.terms:
            return None
        if any(a[0] != "var" or ext.get(id(a[1])) is None or c <= 0 for a, c in lin.terms):
            return None
        if len(lin.terms) == 1 and lin.terms[0][1] == 1:
            return lin.terms[0][0][1]
        key = lin.key()
        if key in marks:
            return marks[key]
        terms = sorted(lin.terms, key=lambda t: -t[1])
        if terms[-1][1] != 1:
            return None
        for (a, c), (b, d) in zip(terms, terms[1:]):
            if c != d * ext[id(b[1])]:
                return None
        m = _Sum([_Split(a[1], 1, ext[id(a[1])], c) for a, c in terms], 0)
        marks[key] = m
        mark_lins.append((lin, m))
        return m

    def within(inner, m):
        """A fused group whose value modulo m is inner's (`(i*2048 + j*64) % 128` is
        `(j*64) % 128`, as the simplifier writes it)."""
        have = {id(a[1]): c for a, c in inner.terms if a[0] == "var"}
        if inner.const or len(have) != len(inner.terms):
            return None
        for lin, mk in mark_lins:
            coefs = {id(a[1]): c for a, c in lin.terms}
            if all(coefs.get(k) == c for k, c in have.items()) and \
                    all(c % m == 0 for k, c in coefs.items() if k not in have):
                return mk
        return None
    def mark_ext(src):
        if isinstance(src, _Sum):
            return src.args[0].scale * src.args[0].extent
        return ext[id(src)]

    def split(atom, coef):
        if coef <= 0:
            return None
        kind = atom[0]
        if kind == "var":
            if id(atom[1]) not in ext:
                return None
            return _Split(atom[1], 1, ext[id(atom[1])], coef)
        if any(a[0] == "var" and ext.get(id(a[1]), 0) is None for a in _lin_vars(atom)):
            return None
        if kind == "div":
            src = mark(atom[1])
            if src is None:
                return None
            return _Split(src, atom[2], -(-mark_ext(src) // atom[2]), coef)
        if kind == "mod":
            inner, m = atom[1], atom[2]
            if inner.const == 0 and len(inner.terms) == 1 and inner.terms[0][1] == 1 and \
                    inner.terms[0][0][0] == "div":
                src = mark(inner.terms[0][0][1])
                lower = inner.terms[0][0][2]
            else:
                src, lower = within(inner, m) or mark(inner), 1
            if src is None:
                return None
            return _Split(src, lower, min(m, -(-mark_ext(src) // lower)), coef)
        return None

    # divisions that cannot carry are dropped first (`v // 8` is 0 when v < 8)
    bounds = {k: (0, n - 1) for k, n in ext.items() if n is not None and n > 1}
    lins = [A.to_lin(e, bounds) for e in indices]
    for lin in lins:
        for atom, _ in lin.terms:
            if atom[0] == "div":
                mark(atom[1])
    out = []
    for lin in lins:
        args = []
        for atom, coef in lin.terms:
            s = split(atom, coef)
            if s is None:
                return None, None
            args.append(s)
        if any(a.extent is None for a in args) and (len(args) != 1 or args[0].scale != 1):
            return None, None
        args.sort(key=lambda s: -s.scale)
        if args and args[-1].scale != 1:
            return None, None
        for a, b in zip(args, args[1:]):
            if a.scale != b.scale * b.extent:
                return None, None
        out.append(_Sum(args, lin.const))
    return out, mark_ext


def _invert(sch, blk, idx, outputs, pb, buf):
    """Each consumer iterator as an expression of the producer's store indices."""
    def refuse(why):
        return sch.error("reverse_compute_inline/not-bijective", f"block '{blk.name_hint}' "
                         f"reads '{buf.name}' at indices that cannot be inverted: {why}", blk)
    ext = {}
    for iv in blk.iter_vars:
        direct = any(i is iv.var for i in idx)
        if not isinstance(iv.dom.extent, E.IntImm):
            # a symbolic extent: only an iterator read as a whole index (it is that index)
            if not direct:
                raise refuse(f"iterator '{iv.var.name}' has a symbolic domain")
            ext[id(iv.var)] = None
            continue
        if not (isinstance(iv.dom.min, E.IntImm) and iv.dom.min.value == 0 or
                iv.dom.extent.value == 1 or direct):
            # read as a whole index, v is the store index itself; otherwise no map
            raise refuse(f"iterator '{iv.var.name}' does not start at 0")
        ext[id(iv.var)] = iv.dom.extent.value
    if len(idx) != len(outputs):
        raise refuse("the producer stores at another number of indices")
    sums, mark_ext = _detect(idx, ext)
    if sums is None:
        raise refuse("not an affine map of its iterators")
    # each source (iterator or fused group) is tiled exactly by its pieces
    pieces = {}
    sources = {}
    for s in sums:
        for a in s.args:
            pieces.setdefault(id(a.source), []).append(a)
            sources[id(a.source)] = a.source
    owner = {}
    for key, src in sources.items():
        ps = sorted(pieces[key], key=lambda a: a.lower)
        low = 1
        for a in ps:
            if low is not None and mark_ext(src) is not None and low >= mark_ext(src) and \
                    a.lower >= low:
                continue            # a part that is always 0
            if a.lower != low or a.extent is None and len(ps) > 1:
                raise refuse("an iterator is read in overlapping or missing parts")
            low = None if a.extent is None else low * a.extent
        if low is not None and low < mark_ext(src):
            raise refuse("an iterator is read only in part")
        vs = [a.source for a in src.args] if isinstance(src, _Sum) else [src]
        for v in vs:
            if id(v) in owner:
                raise refuse(f"iterator '{v.name}' is read twice")
            owner[id(v)] = src
    for iv in blk.iter_vars:
        if id(iv.var) not in owner and not _int(iv.dom.extent, 1):
            raise refuse(f"iterator '{iv.var.name}' does not index '{buf.name}'")
    # a store index outside what the index can express must not wrap into another part
    pb_bounds = _dom_bounds(pb)
    tops = {key: max(ps, key=lambda a: a.lower) for key, ps in pieces.items()}
    extra = []
    for s, out in zip(sums, outputs):
        span = s.args[0].scale * s.args[0].extent if s.args and s.args[0].extent else 1
        b = A.bound_of(out, pb_bounds)
        if b is not None and s.base <= b[0] and b[1] <= s.base + span - 1 and \
                (not s.args or s.args[0].extent):
            continue
        if s.args and tops[id(s.args[0].source)] is s.args[0]:
            continue
        if s.args and not s.args[0].extent:
            raise refuse(f"the producer stores outside the part of '{buf.name}' it reads")
        # the producer also writes positions the consumer never reads: predicated away
        extra.append((out, s.base, span))
    inv = _inverse(sums, outputs)
    sub = {}
    for iv in blk.iter_vars:
        if id(iv.var) in inv:
            sub[id(iv.var)] = inv[id(iv.var)]
        elif _int(iv.dom.extent, 1):
            sub[id(iv.var)] = iv.dom.min
    return sub, extra


def _lin_vars(atom):
    if atom[0] in ("div", "mod"):
        return [a for t, _ in atom[1].terms for a in _lin_vars(t)]
    return [atom]


def _inverse(sums, outputs):
    """Back propagation of the outputs through the map, as TVM's inverse affine map."""
    order, seen = [], set()

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, _Sum):
            for a in node.args:
                visit(a)
        elif isinstance(node.source, _Sum):
            visit(node.source)
        order.append(node)
    for s in sums:
        visit(s)
    order.reverse()
    zero = E.IntImm("int32", 0)
    back = {id(n): zero for n in order}
    for s, out in zip(sums, outputs):
        back[id(s)] = out
    inv = {}
    for node in order:
        if isinstance(node, _Sum):
            x = _sub(back[id(node)], node.base)
            if len(node.args) == 1:
                a = node.args[0]
                back[id(a)] = _mul(_add(back[id(a)], x), a.scale)
                continue
            for k in range(len(node.args), 0, -1):
                a = node.args[k - 1]
                p = _div(x, a.scale)
                if k > 1:
                    p = _mod(p, a.extent)
                back[id(a)] = _add(back[id(a)], p)
        else:
            x = _mul(back[id(node)], node.lower)
            if isinstance(node.source, _Sum):
                back[id(node.source)] = _add(back[id(node.source)], x)
            else:
                v = node.source
                inv[id(v)] = _add(inv[id(v)], x) if id(v) in inv else x
    return inv


def _int(e, k):
    return isinstance(e, E.IntImm) and e.value == k


def _c(v, like):
    return E.IntImm(getattr(like, "dtype", "int32"), v)


def _add(a, b):
    if _int(a, 0):
        return b
    if _int(b, 0):
        return a
    return E.Add(a, b, a.dtype)


def _sub(a, k):
    return a if k == 0 else E.Sub(a, _c(k, a), a.dtype)


def _mul(a, k):
    if k == 1 or _int(a, 0):
        return a
    if isinstance(a, E.IntImm):
        return _c(a.value * k, a)
    return E.Mul(a, _c(k, a), a.dtype)


def _div(a, k):
    if k == 1:
        return a
    if isinstance(a, E.IntImm):
        return _c(a.value // k, a)
    return E.FloorDiv(a, _c(k, a), a.dtype)


def _mod(a, k):
    if k == 1:
        return _c(0, a)
    if isinstance(a, E.IntImm):
        return _c(a.value % k, a)
    return E.FloorMod(a, _c(k, a), a.dtype)


# --------------------------------------------------------------------------- predicate

def _check_covered(sch, blk, pb, sub, pbounds):
    """The producer must reach every instance of the consumer (TVM's coverage check)."""
    for iv in blk.iter_vars:
        e = sub.get(id(iv.var))
        if e is None:
            continue
        b = A.bound_of(e, pbounds)
        lo, ext = iv.dom.min, iv.dom.extent
        if b is None or not (isinstance(lo, E.IntImm) and isinstance(ext, E.IntImm)):
            continue
        if b[0] > lo.value or b[1] < lo.value + ext.value - 1:
            raise sch.error("reverse_compute_inline/not-covered", f"the producer "
                            f"'{pb.name_hint}' does not compute every position block "
                            f"'{blk.name_hint}' reads", pb, [(blk, "consumer")])


def _predicate(blk, sub, pb, realize, pbounds, extra=()):
    """The producer's predicate: its instances whose consumer iterators are in range (and,
    from `extra`, whose store indices are within what the consumer's read can reach)."""
    conds = []
    pdoms = {id(iv.var): iv.dom for iv in pb.iter_vars}
    ranges = [(sub[id(iv.var)], iv.dom.min, iv.dom.extent) for iv in blk.iter_vars]
    ranges += [(e, _c(base, e), _c(span, e)) for e, base, span in extra]
    for e, lo, ext in ranges:
        if isinstance(e, E.Var) and id(e) in pdoms and _same(pdoms[id(e)].min, lo) and \
                _same(pdoms[id(e)].extent, ext):
            continue                # the producer's iterator over the same domain
        if isinstance(lo, E.IntImm) and isinstance(ext, E.IntImm):
            hi = _c(lo.value + ext.value, lo)
        else:
            hi = ext if _int(lo, 0) else E.Add(lo, ext, lo.dtype)
        b = A.bound_of(e, pbounds)
        if not (b is not None and isinstance(lo, E.IntImm) and b[0] >= lo.value):
            conds.append(E.LE(lo, A.simplify(e, pbounds), "bool"))
        if not (b is not None and isinstance(hi, E.IntImm) and b[1] < hi.value):
            conds.append(A.simplify(E.LT(e, hi, "bool"), pbounds))
    binding = {id(iv.var): v for iv, v in zip(pb.iter_vars, realize.iter_values)}
    new = []
    for c in conds:
        c = _ir.substitute(c, binding)
        c = E.LE(c.a, A.simplify(c.b), "bool") if isinstance(c, E.LE) else _lt_div(A.simplify(c))
        if not C.is_true(c):
            new.append(c)
    if len(new) >= 2:
        new[0] = _lt_and_mod(new[0], new[1])
    out = realize.predicate
    for c in new:
        if any(_same(c, x) for x in _conjuncts(out)):
            continue
        out = C.and_(out, c)
    return out


def _lt_div(c):
    """`x // a < b` is `x < a * b` (a > 0)."""
    if isinstance(c, E.LT) and isinstance(c.a, E.FloorDiv) and isinstance(c.b, E.IntImm) \
            and isinstance(c.a.b, E.IntImm) and c.a.b.value > 0:
        return E.LT(A.simplify(c.a.a), _c(c.a.b.value * c.b.value, c.b), "bool")
    return c


def _lt_and_mod(c, d):
    """`x < a and x % b < r` with b dividing a: x < a - b + r (the largest x has x % b = b - 1)."""
    if isinstance(c, E.LT) and isinstance(d, E.LT) and isinstance(c.b, E.IntImm) and \
            isinstance(d.b, E.IntImm) and isinstance(d.a, E.FloorMod) and \
            isinstance(d.a.b, E.IntImm) and d.a.b.value > 0 and _same(d.a.a, c.a) and \
            c.b.value % d.a.b.value == 0:
        return E.LT(c.a, _c(c.b.value - d.a.b.value + d.b.value, c.b), "bool")
    return c


def _conjuncts(e):
    if isinstance(e, E.And):
        return _conjuncts(e.a) + _conjuncts(e.b)
    return [e]


# --------------------------------------------------------------------------- plumbing

def _same(a, b):
    """Deep equality of expressions, variables by identity."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (E.Var, S.Buffer)):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if not dataclasses.is_dataclass(a):
        return a == b
    for f in dataclasses.fields(a):
        if f.name == "span":
            continue
        if not _same(getattr(a, f.name), getattr(b, f.name)):
            return False
    return True


def _refresh_path(root, target):
    """Recompute the declared regions of the blocks between the scope root and `target`."""
    def go(x, top):
        if x is target:
            return x, True
        if isinstance(x, tuple):
            for k, item in enumerate(x):
                n, hit = go(item, top)
                if hit:
                    return x[:k] + (n,) + x[k + 1:], True
            return x, False
        if not isinstance(x, S.Stmt):
            return x, False
        for f in child_fields(type(x)):
            v = getattr(x, f)
            n, hit = go(v, False)
            if hit:
                y = dataclasses.replace(x, **{f: n})
                if isinstance(y, S.Block) and not top:
                    y = refresh_regions(y)
                return y, True
        return x, False
    return go(root, True)[0]
