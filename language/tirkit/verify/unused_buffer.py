"""dataflow/unused-buffer: a buffer the kernel allocates (`T.alloc_buffer`) whose values
nothing uses: never touched, written and never read, or read only to compute other such
buffers.  Nothing of what they hold reaches the function's results: a stage left over from
an edit, or a result the kernel forgot to use.

A buffer's values are used where a load of it reaches a parameter: through the stores of
allocated buffers whose values are used, or directly, by a load anywhere other than in the
value or indices of a store to an allocated buffer (a store to a parameter, a condition, a
loop bound, a `let`, the argument of a call that is a statement).  Whatever may pass the
buffer on unseen counts as a use: its data named anywhere (`X.data`), an address (`T.address_of(X[i])`, a tensor intrinsic's operand),
a `T.match_buffer` of a region of it.  Declared `T.reads` are not uses: they describe the
body, which the signature rule checks.

Reported as a warning on the allocation's name (editors fade it as unnecessary code), with
the blocks that write it as related locations.  Its quick fix (`removal`, offered by
verify/fixes.py): a buffer nothing touches loses its line; one written and never read loses
its line and the statements that write it, each the largest statement that does nothing else
(a loop nest around its block), where every write is in one.  Quiet where
lowering reported an error."""
from __future__ import annotations

import re

from ..analysis.accesses import accesses
from ..diagnostics import warning
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.visit import child_fields, contains, find_all, statement_paths, walk
from . import register
from ._common import block_label

CODE = "dataflow/unused-buffer"


def _allocations(fa) -> dict:
    """{id(data Var): Buffer} of the buffers func allocates with `T.alloc_buffer`."""
    out = {id(b.data): b for b, _ in fa.allocs}
    out.update((id(d.buffer.data), d.buffer) for d in fa.decls
               if type(d) is S.DeclBuffer and d.spelling == "alloc_buffer")
    return out


def unused_buffers(func, cache=None) -> list:
    """[(Buffer, writes, reads)] of func's allocated buffers whose values nothing uses
    (module doc), in source order: the accesses that write each, and the loads of it that
    feed only other such buffers (or itself: `Z[i] = Z[i] + ...`)."""
    fa = accesses(func, cache)
    allocated = _allocations(fa)
    if not allocated:
        return []
    used = {id(a.buffer.data) for a in fa.matched}
    feeds, writes, reads = {}, {}, {}
    for a in fa.accesses:
        k = id(a.buffer.data)
        if a.is_write:
            writes.setdefault(k, []).append(a)
        elif a.into is not None and not a.opaque and id(a.into.data) in allocated:
            feeds.setdefault(id(a.into.data), set()).add(k)
            reads.setdefault(k, []).append(a)
        else:
            used.add(k)
    _spread(used, feeds)
    if any(k not in used for k in allocated):
        # a buffer's data named anywhere (passed on, bound by a `let`, an attribute's node):
        # a whole walk, made only where some buffer is left
        named = set()
        walk(func.body, lambda x: named.add(id(x)) if type(x) is E.Var and
             id(x) in allocated and id(x) not in used else None)
        if named:
            used |= named
            _spread(used, feeds)
    dead = [(b, writes.get(k, []), reads.get(k, [])) for k, b in allocated.items()
            if k not in used and b.span is not None]
    return sorted(dead, key=lambda t: (t[0].span.line, t[0].span.column))


def _spread(used: set, feeds: dict) -> None:
    """Add to `used` every buffer whose loads feed, through stores, one already in it."""
    stack = list(used)
    while stack:
        for k in feeds.get(stack.pop(), ()):
            if k not in used:
                used.add(k)
                stack.append(k)


def _writers(accs) -> list:
    """The distinct blocks (or stores outside blocks) of accesses, in program order."""
    out, seen = [], set()
    for a in accs:
        b = a.blocks[-1].block if a.blocks and a.blocks[-1].block.iter_vars else None
        key = id(b) if b is not None else id(a)
        if key not in seen:
            seen.add(key)
            out.append((b, a))
    return out


def _names(writers) -> str:
    return joined([block_label(b) if b is not None else f"the store at line {a.span.line}"
                   for b, a in writers[:2] if b is not None or a.span is not None],
                  len(writers))


def joined(labels, count: int) -> str:
    """The first two of `count` names (`labels` holds them), and how many more."""
    more = count - 2
    return " and ".join(labels[:2]) + (f" and {more} more" if more > 0 else "")


@register(CODE, fast=True)
def check_unused_buffer(func, ctx):
    if ctx.incomplete(func):
        return []
    out = []
    for buf, writes, reads in unused_buffers(func, ctx.cache):
        writers = _writers(writes)
        name = f"`{buf.name}`"
        into = sorted({a.into.name for a in reads if a.into.data is not buf.data})
        if into:
            msg = (f"{name} is read only to compute {', '.join(f'`{n}`' for n in into)}, "
                   f"whose values nothing uses")
        elif writes:     # (read, if at all, by its own updates: `Z[i] = Z[i] + ...`)
            msg = (f"{name} is written and never read: the work of {_names(writers)} "
                   "is lost")
        else:
            msg = f"{name} is allocated and never used"
        related = []
        for b, a in writers[:2]:
            span = (b.name_span if b is not None else None) or a.span
            if span is not None:
                who = block_label(b) if b is not None else "a store"
                related.append((span, f"{who} writes {name} here"))
        out.append(warning(CODE, msg, buf.span, related))
    return out


def removal(lines, func, line: int, column: int):
    """The quick fix of the buffer reported at (line, column): (the edits, in order, that
    delete its line `X = T.alloc_buffer(...)` and, for a buffer written and never read (but
    by its own updates), the lines of each statement that writes it; how messages name the
    blocks removed, None for a buffer nothing touches).  None where the allocation is not
    alone on its line, the buffer is read to compute another, a write is in a statement that
    does something else, a body would be left empty, or a block that stays names it."""
    found = next(((b, w, r) for b, w, r in unused_buffers(func)
                  if (b.span.line, b.span.column) == (line, column)), None)
    if found is None:
        return None
    buf, writes, reads = found
    src = lines[line - 1] if 0 < line <= len(lines) else ""
    if not re.fullmatch(rf"\s*{re.escape(buf.name)}\s*=\s*T\.(sblock_)?alloc_buffer\(.*\)"
                        r"\s*(#.*)?", src) or src.count("(") != src.count(")"):
        return None
    if not writes and not reads:
        return ([(line, 1, line + 1, 1, "")], None) \
            if _suite_keeps(lines, [(line, line)]) else None
    if any(a.into.data is not buf.data for a in reads):
        return None

    def idle(x) -> bool:         # does nothing but store into buf
        if type(x) is S.BufferStore:
            return x.buffer.data is buf.data and not contains(
                x.value, lambda c: c.callee is not None or c.op.startswith("call_"), E.Call)
        if type(x) in (S.Evaluate, S.While) or \
                (type(x) is S.Block and (x.alloc_buffers or x.match_buffers)):
            return False
        return all(idle(y) for y in _children(x))
    stores = statement_paths(func.body, lambda x: type(x) is S.BufferStore and
                             x.buffer.data is buf.data)
    tops = {}
    for store, path in stores:
        if store.buffer is not buf:
            return None         # (a view declared over its storage: its line would stay)
        top, chain = store, list(path)
        while chain and idle(chain[-1]):
            top = chain.pop()
        while type(top) is S.SeqStmt and len(top.seq) == 1:
            top = top.seq[0]
        if not chain or type(chain[-1]) is not S.SeqStmt or top.span is None or \
                type(top) is S.SeqStmt:
            return None         # (the writes are all that encloses them does)
        tops[id(top)] = top
    gone = {id(b) for t in tops.values() for b in _blocks(t)}
    if any(id(b) not in gone and any(r.buffer.data is buf.data
                                     for r in (b.reads or ()) + (b.writes or ()))
           for b in _blocks(func.body)):
        return None             # (a block that stays names it in its T.reads / T.writes)
    spans = sorted((t.span.line, t.span.end_line) for t in tops.values())
    edits = sorted([(line, 1, line + 1, 1, "")] + [(a, 1, b + 1, 1, "") for a, b in spans])
    if any(e[2] > f[0] for e, f in zip(edits, edits[1:])) or \
            not _suite_keeps(lines, [(e[0], e[2] - 1) for e in edits]):
        return None
    return edits, [block_label(b) for t in tops.values() for b in _blocks(t) if b.iter_vars]


def _children(x) -> list:
    """The statements directly under statement x."""
    out = []
    for v in (getattr(x, f) for f in child_fields(type(x))):
        out.extend(y for y in (v if isinstance(v, tuple) else (v,)) if isinstance(y, S.Stmt))
    return out


def _blocks(x) -> list:
    return find_all(x, lambda _: True, S.Block)


def _suite_keeps(lines, removed) -> bool:
    """Whether each suite (indented body) that loses the 1-based line ranges `removed` keeps
    a statement of its own: a line of the first removed line's indentation, not removed,
    before the suite ends (a line indented less) on either side."""
    gone = {i for a, b in removed for i in range(a, b + 1)}

    def indent(s):
        return len(s) - len(s.lstrip())

    def code(i):
        s = lines[i - 1] if 0 < i <= len(lines) else ""
        return s.strip() and not s.strip().startswith("#")
    for a, _ in removed:
        depth, ok = indent(lines[a - 1]), False
        for step in (-1, 1):
            i = a + step
            while 0 < i <= len(lines) and not ok:
                if code(i) and indent(lines[i - 1]) < depth:
                    break
                ok = code(i) and i not in gone and indent(lines[i - 1]) == depth
                i += step
        if not ok:
            return False
    return True
