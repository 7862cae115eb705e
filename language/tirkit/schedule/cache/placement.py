"""What cache_read and cache_write share: the storage scope, where the copy goes (TVM's rule:
in the innermost statement list that holds the writer before the first related block, right
before that block's statement; at the start of the scope for an input, at its end when
nothing reads the result), the region an input's cache holds, the checks on other accesses
of the buffer, and putting the copy in place. The region a block's copy holds is in
`region`, the cache buffer and the copy nest in `copies`."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from .. import _common as common
from .. import _ir
from ..analysis import regions_of


SCOPES = ("global", "shared", "shared.dyn", "local", "warp", "global.texture", "wmma.matrix_a",
          "wmma.matrix_b", "wmma.accumulator", "m16n8k8.matrixA", "m16n8k8.matrixB",
          "m16n8k8.matrixC")


def check_scope(sch, scope, node):
    if not isinstance(scope, str) or not (scope in SCOPES or scope.startswith(
            ("global.", "shared.", "local.", "wmma.", "metal."))):
        raise sch.error(f"{sch._current}/bad-scope", f"'{scope}' is not a storage scope", node)


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


def input_region(sch, func, scope, buf):
    """The region of `buf` a cache of an input of `scope` holds: the scope block's read
    region of it (declared or inferred), the whole buffer in the root scope."""
    whole = [(common.int32(0, d.dtype), d.value if isinstance(d, E.IntImm) else d)
             for d in buf.shape]
    if is_root_scope(sch, func, scope):
        return whole
    reads = regions_of(scope)[0]
    reg = next((r for r in reads if r.buffer is buf), None)
    if reg is None:
        return whole
    out = []
    for r in reg.region:
        ext = r.extent.value if isinstance(r.extent, E.IntImm) else r.extent
        out.append((r.min, ext))
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


def is_root_scope(sch, func, scope) -> bool:
    body = sch.func(func).body
    return isinstance(body, S.BlockRealize) and body.block is scope


def check_matches(sch, node, buf, block):
    """A block that views `buf` through a match_buffer reads or writes it behind the view:
    refused (TVM refuses a view of another scope than the cache's; one of the same scope
    would need the view's accesses counted as the block's own)."""
    from ...ir.visit import walk
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
    from ...ir.visit import walk
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
