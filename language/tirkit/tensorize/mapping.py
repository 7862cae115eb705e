"""Where an intrinsic applies to a block: every feasible mapping, or why there is none.

    m = find_mapping(func, "C", intrin)      # -> Mapping or NotFeasible
    ms = mappings(func, "C", library)        # -> [Mapping ...] best first, [NotFeasible ...]

The steps, as UNIT and TensorIR describe them:
1. compute isomorphism: the block's update `C[..] = C[..] + f(loads)` and the desc's have the
   same expression tree (node kinds, operators, dtypes, casts included); each desc operand
   maps to one program buffer (`dtype`, `opcode`, `no-reduction` when it does not);
2. characteristic vectors: an iterator's vector says which operands it indexes; the block's
   iterators with the vector (and kind) of a desc iterator form its group (fused in TVM's
   mapping info; here one of them, the innermost in the operands' layout, is tiled by the
   desc's extent and the others stay outer loops): `no-iterator` when a group is empty;
3. access isomorphism: a one-dimensional desc operand must be the program buffer's last
   dimension, indexed by the chosen iterator alone (`stride` otherwise); a desc operand of
   more dimensions is taken where it is (`direct`) when the impl reads strided views (a
   stride given as a variable, as the tensor-core intrinsics do) and the buffer's trailing
   indices are the chosen iterators in the desc's order; otherwise it is brought there by
   `reindex` then `transform_layout` (which needs its indices to be expressions of the
   block's iterators);
4. padding: an extent not a multiple of the desc's is padded by `pad_einsum` (`padding`
   when a padded iterator is part of an index expression, `padding-waste` above the limit).
Mappings are ranked by padding waste."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.visit import vars_in

WASTE_LIMIT = 0.5


@dataclass
class NotFeasible:
    intrin: object
    code: str                 # dtype | opcode | no-reduction | no-iterator | stride | padding
    message: str              # | padding-waste | not-update

    @property
    def feasible(self):
        return False


@dataclass
class Operand:
    desc_buffer: S.Buffer
    buffer: S.Buffer          # the program's
    kind: str                 # "read" | "write"
    index: int                # its position in the block's declared reads (writes), or in
    #                           the order of first access when it declares none
    layout: str = "direct"    # "direct" | "reindex+pack" | "pack"
    index_map: str = ""       # the packing `lambda ...: (...)` for transform_layout


@dataclass
class Mapping:
    intrin: object
    block: str
    groups: list              # per desc iterator: (desc iter name, [block iter names])
    chosen: list              # per desc iterator: the block iterator tiled by it
    extents: list             # per desc iterator: the desc's extent
    operands: list            # [Operand], in the desc's parameter order
    padding: list             # per block iterator: the multiple to pad to (1: none)
    padded: list = field(default_factory=list)    # (iter, old extent, new extent)
    waste: float = 0.0

    @property
    def feasible(self):
        return True

    def describe(self) -> str:
        pad = ", ".join(f"{n} padded {a}→{b}" for n, a, b in self.padded)
        its = ", ".join(f"`{c}` by {x} (as `{d}`)" for c, x, (d, _) in
                        zip(self.chosen, self.extents, self.groups))
        return f"{its}" + (f"; {pad}" if pad else "")


def _update(realize):
    """(store, value, reduction operand load) of `C[..] = C[..] + e`, else None."""
    body = realize.block.body
    if not isinstance(body, S.BufferStore) or not isinstance(body.value, E.Add):
        return None
    return body


class _Iso:
    """Compute isomorphism of a program expression and a desc expression."""

    def __init__(self):
        self.bufmap = {}          # id(desc buffer) -> program buffer
        self.back = {}
        self.fail = None          # (code, message) of the first mismatch

    def buf(self, p, d):
        q = self.bufmap.get(id(d))
        if q is None and id(p) not in self.back:
            if p.dtype != d.dtype:
                self.fail = self.fail or ("dtype", f"`{p.name}` is {p.dtype}, the "
                                          f"instruction's `{d.name}` is {d.dtype}")
                return False
            self.bufmap[id(d)] = p
            self.back[id(p)] = d
            return True
        return q is p

    def eq(self, p, d):
        if type(p) is not type(d):
            self.fail = self.fail or ("opcode", f"`{type(p).__name__}` where the instruction "
                                      f"has `{type(d).__name__}`")
            return False
        if isinstance(p, E.BufferLoad):
            return self.buf(p.buffer, d.buffer) and len(p.indices) >= 0
        if isinstance(p, E.IntImm) or isinstance(p, E.FloatImm):
            return p.dtype == d.dtype and p.value == d.value
        if getattr(p, "dtype", None) != getattr(d, "dtype", None):
            self.fail = self.fail or ("dtype", f"{p.dtype} `{type(p).__name__}` where the "
                                      f"instruction computes {d.dtype}")
            return False
        if isinstance(p, E.Cast):
            return self.eq(p.value, d.value)
        if hasattr(p, "a") and hasattr(p, "b"):
            saved = (dict(self.bufmap), dict(self.back), self.fail)
            if self.eq(p.a, d.a) and self.eq(p.b, d.b):
                return True
            if isinstance(p, (E.Add, E.Mul)):
                first = self.fail
                self.bufmap, self.back, self.fail = dict(saved[0]), dict(saved[1]), saved[2]
                if self.eq(p.a, d.b) and self.eq(p.b, d.a):
                    return True
                self.fail = first              # the reason of the operands as written
            return False
        self.fail = self.fail or ("opcode", f"`{type(p).__name__}` is not matched")
        return False


def compute_isomorphism(p_blk, d_blk):
    """id(desc buffer) -> program buffer when the two blocks' updates are isomorphic, else
    the reason (a sentence)."""
    p_st, d_st = p_blk.body, d_blk.body
    if not isinstance(p_st, S.BufferStore) or not isinstance(d_st, S.BufferStore):
        return "the block is not one store"
    iso = _Iso()
    if iso.buf(p_st.buffer, d_st.buffer) and iso.eq(p_st.value, d_st.value):
        return iso.bufmap
    return (iso.fail or ("opcode", "the expressions differ"))[1]


def _accesses(block, buf):
    out = []
    if isinstance(block.body, S.BufferStore) and block.body.buffer is buf:
        out.append(block.body.indices)
    from ..ir.visit import find_all
    out += [ld.indices for ld in find_all(block.body, lambda x: x.buffer is buf,
                                          E.BufferLoad)]
    return out


def _vector(block, var, buffers):
    return tuple(any(any(v is var for e in idx for v in vars_in(e))
                     for idx in _accesses(block, b)) for b in buffers)


def _extent(iv):
    return iv.dom.extent.value if isinstance(iv.dom.extent, E.IntImm) else None


def find_mapping(realize: S.BlockRealize, intrin, loops=None, waste_limit=WASTE_LIMIT):
    """The mapping of `intrin` onto the block of `realize` (a BlockRealize or a Block), or a
    NotFeasible."""
    if isinstance(realize, S.Block):
        realize = S.BlockRealize((), E.IntImm("bool", 1), realize)
    blk = realize.block
    d_r = intrin.update
    d_blk = d_r.block

    def no(code, msg):
        return NotFeasible(intrin, code, msg)
    if not any(iv.kind == "R" for iv in blk.iter_vars) and \
            any(iv.kind == "R" for iv in d_blk.iter_vars):
        return no("no-reduction", f"block `{blk.name_hint}` has no reduction")
    p_st, d_st = _update(realize), _update(d_r)
    if p_st is None or d_st is None:
        return no("not-update", f"block `{blk.name_hint}` is not an update `C = C + ...`")
    iso = _Iso()
    if not (iso.buf(p_st.buffer, d_st.buffer) and iso.eq(p_st.value, d_st.value)):
        code, msg = iso.fail or ("opcode", "the expressions differ")
        return no(code, msg)
    d_bufs = [intrin.desc.buffer_of(p) for p in intrin.desc.params]
    if any(id(b) not in iso.bufmap for b in d_bufs):
        return no("opcode", "an operand of the instruction has no counterpart")
    p_bufs = [iso.bufmap[id(b)] for b in d_bufs]
    # characteristic vectors and groups
    groups, chosen, extents = [], [], []
    p_ivs = {id(iv.var): iv for iv in blk.iter_vars}
    for div in d_blk.iter_vars:
        vec = _vector(d_blk, div.var, d_bufs)
        grp = [iv for iv in blk.iter_vars if iv.kind == div.kind and
               _vector(blk, iv.var, p_bufs) == vec]
        if not grp:
            return no("no-iterator", f"no iterator of `{blk.name_hint}` indexes "
                      f"{_names(p_bufs, vec)} as the instruction's `{div.var.name}` does")
        groups.append((div.var.name, grp))
        extents.append(_extent(div))
    # access isomorphism: the iterator of each group that the operands' layout puts last
    operands = []
    reads = blk.reads if blk.reads is not None else _loaded_in_order(blk.body.value)
    writes = blk.writes if blk.writes is not None else (blk.body,)
    for db, pb in zip(d_bufs, p_bufs):
        kind, pos = _region_of(pb, reads, writes)
        if kind is None:
            return no("opcode", f"`{pb.name}` is not among the block's reads and writes")
        operands.append(Operand(db, pb, kind, pos))
    for g, (dname, grp) in enumerate(groups):
        pick = None
        for op in operands:
            d_idx = _accesses(d_blk, op.desc_buffer)[0]
            if len(op.desc_buffer.shape) == 1 and d_idx and \
                    isinstance(d_idx[0], E.Var) and d_idx[0].name == dname:
                last = _accesses(blk, op.buffer)[0][-1]
                pick = next((iv for iv in grp if last is iv.var), None)
                if pick is None:
                    return no("stride", f"`{op.buffer.name}`'s last dimension is not indexed "
                              f"by {' or '.join(f'`{iv.var.name}`' for iv in grp)} alone: "
                              "the instruction reads it as one contiguous vector")
        chosen.append(pick or grp[-1])
    i_bufs = [intrin.impl.buffer_of(p) for p in intrin.impl.params]
    for op, ib in zip(operands, i_bufs):
        if len(op.desc_buffer.shape) == 1:
            continue
        idx = _accesses(blk, op.buffer)[0]
        if _direct(ib, idx, _accesses(d_blk, op.desc_buffer)[0], groups, chosen):
            continue
        if not all(id(v) in p_ivs for e in idx for v in vars_in(e)):
            return no("stride", f"`{op.buffer.name}` is indexed by more than the block's "
                      "iterators")
        used = [iv for iv in blk.iter_vars if any(v is iv.var for e in idx for v in vars_in(e))]
        plain = len(idx) == len(used) and all(e is iv.var for e, iv in zip(idx, used))
        op.layout = "pack" if plain else "reindex+pack"
        op.index_map = _pack_map(used, chosen, extents,
                                 _accesses(d_blk, op.desc_buffer)[0], groups)
    # padding
    padding = [1] * len(blk.iter_vars)
    padded, total, new_total = [], 1, 1
    for iv in blk.iter_vars:
        n = _extent(iv)
        if n is None:
            return no("padding", f"iterator `{iv.var.name}` has a symbolic extent")
        if n < 1:
            return no("padding", f"iterator `{iv.var.name}` has no value (extent {n})")
        total *= n
        mult = next((x for c, x in zip(chosen, extents) if c is iv), 1)
        m = -(-n // mult) * mult
        new_total *= m
        if m != n:
            padding[blk.iter_vars.index(iv)] = mult
            padded.append((iv.var.name, n, m))
    waste = new_total / total - 1 if total else 0.0
    # an operand that is reindexed first is padded as the reindexed copy, whose indices
    # are the block's iterators
    moved = {id(op.buffer) for op in operands if op.layout == "reindex+pack"}
    if padded and not _paddable(blk, {n for n, _, _ in padded}, moved):
        name, n, m = padded[0]
        return no("padding", f"`{name}` ({n}) would be padded to {m}, but block "
                  f"`{blk.name_hint}` uses a padded iterator inside an index expression")
    if waste > waste_limit:
        return no("padding-waste", f"padding wastes {waste:.0%} of the work "
                  f"(limit {waste_limit:.0%})")
    return Mapping(intrin, blk.name_hint, [(d, [iv.var.name for iv in g]) for d, g in groups],
                   [c.var.name for c in chosen], extents, operands, padding, padded, waste)


def _direct(impl_buf, idx, d_idx, groups, chosen):
    """Whether the instruction can take the operand where it is: its impl reads strided
    views (a stride given as a variable), and the block's indices end with the chosen
    iterators in the desc's order, the leading ones using none of them."""
    if not any(isinstance(st, E.Var) for st in impl_buf.strides) or len(idx) < len(d_idx):
        return False
    by_desc = {d: c for (d, _), c in zip(groups, chosen)}
    lead, tail = idx[:len(idx) - len(d_idx)], idx[len(idx) - len(d_idx):]
    for e, d in zip(tail, d_idx):
        if not isinstance(d, E.Var) or d.name not in by_desc or e is not by_desc[d.name].var:
            return False
    picked = {id(c.var) for c in chosen}
    return not any(id(v) in picked for e in lead for v in vars_in(e))


def _paddable(blk, names, skip=()):
    """What pad_einsum pads: every index is an expression of the block's iterators, and a
    padded iterator appears only as a whole index (the accesses to buffers in `skip` left
    out)."""
    ids = {id(iv.var) for iv in blk.iter_vars}
    for idx in _all_indices(blk, skip):
        for e in idx:
            vs = vars_in(e)
            if not all(id(v) in ids for v in vs):
                return False
            if not isinstance(e, E.Var) and any(v.name in names for v in vs):
                return False
    return True


def _all_indices(blk, skip=()):
    from ..ir.visit import find_all
    out = [ld.indices for ld in find_all(blk.body, lambda x: id(x.buffer) not in skip,
                                         E.BufferLoad)]
    if isinstance(blk.body, S.BufferStore) and id(blk.body.buffer) not in skip:
        out.append(blk.body.indices)
    return out


def _loaded_in_order(e, out=None):
    """The loads of e, one per buffer, in order of first access (the order TVM infers a
    block's reads in, when it declares none)."""
    out = [] if out is None else out
    if isinstance(e, E.BufferLoad):
        if not any(x.buffer is e.buffer for x in out):
            out.append(e)
        return out
    for f in ("value", "a", "b"):
        sub = getattr(e, f, None)
        if isinstance(sub, E.PrimExpr):
            _loaded_in_order(sub, out)
    return out


def _region_of(buf, reads, writes):
    for k, r in enumerate(writes):
        if r.buffer is buf:
            return "write", k
    for k, r in enumerate(reads):
        if r.buffer is buf:
            return "read", k
    return None, None


def _pack_map(used, chosen, extents, d_idx, groups):
    """`lambda a, b: (a // 16, b // 4, a % 16, b % 4)`: the reindexed buffer (dimensions in
    the block's iterator order) tiled so that the desc operand is its trailing dimensions."""
    names = [iv.var.name for iv in used]
    tile = {id(c): x for c, x in zip(chosen, extents)}
    outer = [f"{iv.var.name} // {tile[id(iv)]}" if id(iv) in tile else iv.var.name
             for iv in used]
    order = {d: c for (d, _), c in zip(groups, chosen)}
    inner = []
    for e in d_idx:
        c = order[e.name]
        inner.append(f"{c.var.name} % {tile[id(c)]}")
    return f"lambda {', '.join(names)}: ({', '.join(outer + inner)})"


def _names(bufs, vec):
    picked = [f"`{b.name}`" for b, x in zip(bufs, vec) if x]
    return " and ".join(picked) if picked else "no operand"


def mappings(realize, library, target=None, waste_limit=WASTE_LIMIT):
    """(feasible mappings best first, NotFeasible for the others) over the intrinsics of
    `library` that `target` has (all of them when target is None)."""
    intrs = library.intrinsics if target is None else library.for_target(target)
    ok, bad = [], []
    for i in intrs:
        m = find_mapping(realize, i, waste_limit=waste_limit)
        (ok if m.feasible else bad).append(m)
    ok.sort(key=lambda m: (m.waste, -m.intrin.ops_per_cycle))
    return ok, bad
