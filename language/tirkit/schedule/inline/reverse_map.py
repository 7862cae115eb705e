"""The iterator map of reverse_compute_inline: the consumer's read indices detected as an
affine map of its iterators (each index a mixed radix sum of pieces `(x // lower) % extent *
scale` of an iterator or of a fused group), checked to be a bijection onto what the producer
stores, and inverted: each consumer iterator as an expression of the producer's store
indices."""
from __future__ import annotations

from ...ir import expr as E
from .. import _arith as A


def dom_bounds(block):
    """id(iterator) -> (lo, hi) for the block's iterators of constant, non-empty domain."""
    out = {}
    for iv in block.iter_vars:
        mn, ext = iv.dom.min, iv.dom.extent
        if isinstance(mn, E.IntImm) and isinstance(ext, E.IntImm) and ext.value > 0:
            out[id(iv.var)] = (mn.value, mn.value + ext.value - 1)
    return out


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


def invert(sch, blk, idx, outputs, pb, buf):
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
        if id(iv.var) not in owner and not is_const(iv.dom.extent, 1):
            raise refuse(f"iterator '{iv.var.name}' does not index '{buf.name}'")
    # a store index outside what the index can express must not wrap into another part
    pb_bounds = dom_bounds(pb)
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
        elif is_const(iv.dom.extent, 1):
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


def is_const(e, k):
    """Whether e is the integer constant k."""
    return isinstance(e, E.IntImm) and e.value == k


def const_like(v, like):
    """The constant v in the integer type of `like`."""
    return E.IntImm(getattr(like, "dtype", "int32"), v)


def _add(a, b):
    if is_const(a, 0):
        return b
    if is_const(b, 0):
        return a
    return E.Add(a, b, a.dtype)


def _sub(a, k):
    return a if k == 0 else E.Sub(a, const_like(k, a), a.dtype)


def _mul(a, k):
    if k == 1 or is_const(a, 0):
        return a
    if isinstance(a, E.IntImm):
        return const_like(a.value * k, a)
    return E.Mul(a, const_like(k, a), a.dtype)


def _div(a, k):
    if k == 1:
        return a
    if isinstance(a, E.IntImm):
        return const_like(a.value // k, a)
    return E.FloorDiv(a, const_like(k, a), a.dtype)


def _mod(a, k):
    if k == 1:
        return const_like(0, a)
    if isinstance(a, E.IntImm):
        return const_like(a.value % k, a)
    return E.FloorMod(a, const_like(k, a), a.dtype)
