"""Classic attribute statements: `T.attr(node, key, value)` written as a statement, not as a
`with`, annotates the statements after it in its sequence, as TVM's parser reads it
(`T.attr(red, "volatile_scope", 1)` on an allocation, `T.attr(reducer, "reduce_scope", 0)`
over a lowered reduction, pragmas).  The lowering makes it the AttrStmt over the rest of
the sequence; one with nothing after it annotates nothing and goes.  The launch attributes
(`thread_extent`, `virtual_thread`) stay as written: `T.launch_thread` spells those.  A
`buffer_bind_scope` attribute (TVM's IR before StorageFlatten) makes its buffer a view of
a region of another; it is refused with a diagnostic, in either spelling."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.visit import rebuild, walk
from ..errors import UNSUPPORTED, fail

LAUNCH_KEYS = ("thread_extent", "virtual_thread")
BIND = "buffer_bind_scope"


def is_attr_statement(x) -> bool:
    """Whether x is a `T.attr(node, key, value)` statement the lowering reads (module doc)."""
    if not (isinstance(x, S.Evaluate) and isinstance(x.value, E.Call) and
            x.value.op == "attr" and len(x.value.args) == 3):
        return False
    key = x.value.args[1]
    return isinstance(key, E.StringImm) and key.value not in LAUNCH_KEYS


def attr_statements(body):
    """Each attribute statement as the AttrStmt over the rest of its sequence (module doc)."""
    def refuse(x):
        key = x.attr_key if isinstance(x, S.AttrStmt) else \
            x.value.args[1].value if is_attr_statement(x) else None
        if key == BIND:
            fail(UNSUPPORTED, "a buffer_bind_scope attribute (TVM's IR before "
                 "StorageFlatten, binding a buffer to a region of another) is not run", x)
    walk(body, refuse)

    def fn(new, old):
        if not isinstance(new, S.SeqStmt):
            return None
        seq = list(new.seq)
        if not any(is_attr_statement(x) for x in seq):
            return None
        for i in range(len(seq) - 1, -1, -1):
            if is_attr_statement(seq[i]):
                node, key, value = seq[i].value.args
                rest = seq[i + 1:]
                if not rest:
                    del seq[i]
                    continue
                seq[i:] = [S.AttrStmt(node, key.value, value, S.seq(rest), span=seq[i].span)]
        if not seq:
            return S.Evaluate(E.IntImm("int32", 0), span=new.span)
        return seq[0] if len(seq) == 1 else dataclasses.replace(new, seq=tuple(seq))
    return rebuild(body, fn)
