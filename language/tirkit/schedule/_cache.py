"""What cache_read and cache_write share: the cache buffer and the copy block."""
from __future__ import annotations

import dataclasses

from ..ir import expr as E
from ..ir import stmt as S
from . import _common as C

SCOPES = ("global", "shared", "shared.dyn", "local", "warp", "global.texture", "wmma.matrix_a",
          "wmma.matrix_b", "wmma.accumulator", "m16n8k8.matrixA", "m16n8k8.matrixB",
          "m16n8k8.matrixC")


def check_scope(sch, scope, node):
    if not isinstance(scope, str) or not (scope in SCOPES or scope.startswith(
            ("global.", "shared.", "local.", "wmma.", "metal."))):
        raise sch.error(f"{sch._current}/bad-scope", f"'{scope}' is not a storage scope", node)


def cache_buffer(buf, scope, name):
    data = E.Var(name, "handle", E.PointerType(buf.dtype, scope))
    return S.Buffer(name, buf.shape, buf.dtype, data, scope=scope)


def copy_nest(src, dst, name, sch):
    """`for ax...: with block(name): dst[v...] = src[v...]` over the whole buffer."""
    loops, ivs, values, idx = [], [], [], []
    for k, d in enumerate(src.shape):
        if not isinstance(d, E.IntImm):
            raise sch.error(f"{sch._current}/symbolic-shape", f"buffer '{src.name}' has a "
                            "non-constant shape")
        lv = E.Var(f"ax{k}", d.dtype)
        v = E.Var(f"v{k}", d.dtype)
        loops.append(C.new_loop(lv, d.value))
        ivs.append(S.IterVar(v, E.Range(E.IntImm(d.dtype, 0), d), "S"))
        values.append(lv)
        idx.append(v)
    point = tuple(E.Range(v, E.IntImm("int32", 1)) for v in idx)
    store = S.BufferStore(dst, E.BufferLoad(src, tuple(idx), src.dtype), tuple(idx))
    block = S.Block(name, tuple(ivs), (S.BufferRegion(src, point),),
                    (S.BufferRegion(dst, point),), store)
    realize = S.BlockRealize(tuple(values), C.TRUE, block)
    return C.nest(loops, realize)


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
