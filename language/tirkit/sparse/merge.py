"""Co-iteration by merge: a sorted compressed level read as a factor of an accumulation at
the iterator of another sorted compressed level of the same coordinates is walked together
with it (two fingers; the body runs where both have the coordinate), instead of searched."""
from __future__ import annotations

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.equality import identical
from ..ir.sparse import SparseBuffer


def _i(v, dtype="int32"):
    return E.IntImm(dtype, v)


def _load(buf, idx):
    return E.BufferLoad(buf, (idx,), buf.dtype)


def _add(a, b):
    if isinstance(b, E.IntImm) and b.value == 0:
        return a
    return E.Add(a, b, a.dtype)


class MergeMixin:
    """Needs the lowering's `offset`, `storage_of`, `counter` and `merged`."""

    def merge_partner(self, it, v, env):
        """(axis b, parent offset) of another sorted compressed level that the body reads at
        iterator v as a factor of an accumulation (`out = out + ... * B[.., v] * ...`), so
        positions where B has no element contribute nothing and can be skipped: the two
        levels are then walked together by merge instead of searching B for each element."""
        a = v.axis
        if a.kind != "sparse_variable" or not a.sorted or a.format == "hash":
            return None
        body = it.body
        if not isinstance(body, S.BufferStore) or not isinstance(body.value, E.Add):
            return None
        acc = body.value.a
        if not (isinstance(acc, E.BufferLoad) and acc.buffer is body.buffer and
                all(identical(x, y) for x, y in zip(acc.indices, body.indices))):
            return None
        factors = []

        def collect(e):
            if isinstance(e, E.Mul):
                collect(e.a)
                collect(e.b)
            else:
                factors.append(e)
        collect(body.value.b)
        for f in factors:
            if not (isinstance(f, E.BufferLoad) and isinstance(f.buffer, SparseBuffer)):
                continue
            for k, (x, b) in enumerate(zip(f.indices, f.buffer.axes)):
                if not (x is v.var and b is not a and b.kind == "sparse_variable" and
                        b.sorted and b.format != "hash" and identical(b.length, a.length)):
                    continue
                pre = []
                prefix = SparseBuffer(f.buffer.name, f.buffer.shape[:k], f.buffer.dtype,
                                      f.buffer.data, axes=f.buffer.axes[:k])
                if not all(isinstance(y, E.Var) and id(y) in env or not isinstance(y, E.Var)
                           for y in f.indices[:k]):
                    continue
                off, found = self.offset(prefix, f.indices[:k], env, pre) if k else ((_i(0),),
                                                                                   None)
                if pre or found is not None:
                    continue
                return b, off[0]
        return None

    def merge_loop(self, v, pos, lo, hi, partner, env, inner_fn):
        """Walk v's level (positions lo..hi) and the partner level of the same coordinates
        together: the body runs where both have the coordinate."""
        b, parent_off = partner
        a, t = v.axis, v.axis.idtype
        self.counter += 1
        cell = S.Buffer(f"{v.var.name}_merge{self.counter}", (_i(2),), t,
                        E.Var(f"{v.var.name}_merge{self.counter}", "handle",
                              E.PointerType(t, "local")), scope="local")
        pa, pb = E.BufferLoad(cell, (_i(0),), t), E.BufferLoad(cell, (_i(1),), t)
        ptr_b, ind_b = self.storage_of(b, "indptr"), self.storage_of(b, "indices")
        hi_b = E.Var(f"{b.name}_end{self.counter}", t)
        hi_a = E.Var(f"{a.name}_end{self.counter}", t)
        cb = E.Var(f"{v.var.name}_{b.name}", t)
        bpos = E.Var(f"{v.var.name}_pos_{b.name}", t)
        self.merged[(id(b), id(v.var))] = bpos
        try:
            inner = inner_fn()
        finally:
            del self.merged[(id(b), id(v.var))]
        ca = _load(self.storage_of(a, "indices"), pa)
        step_a = S.BufferStore(cell, E.Add(pa, _i(1, t), t), (_i(0),))
        step_b = S.BufferStore(cell, E.Add(pb, _i(1, t), t), (_i(1),))
        both = S.LetStmt(pos, pa, S.LetStmt(bpos, pb, S.seq([inner, step_a, step_b])))
        body = S.LetStmt(v.var, ca, S.LetStmt(cb, _load(ind_b, pb), S.IfThenElse(
            E.EQ(v.var, cb, "bool"), both,
            S.IfThenElse(E.LT(v.var, cb, "bool"), step_a, step_b))))
        loop = S.While(E.And(E.LT(pa, hi_a, "bool"), E.LT(pb, hi_b, "bool"), "bool"), body)
        start = [S.BufferStore(cell, lo, (_i(0),)),
                 S.BufferStore(cell, _load(ptr_b, parent_off), (_i(1),)), loop]
        return S.LetStmt(hi_a, hi, S.LetStmt(hi_b, _load(ptr_b, _add(parent_off, _i(1, t))),
                                             S.DeclBuffer(cell, S.seq(start))))

