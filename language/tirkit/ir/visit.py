"""Generic traversal of IR nodes: pre-order walk and its common questions (the first node
that satisfies a test, every such node, whether any exists), rebuild and substitution, the
free variables of a statement, the constant integer an expression is, if any, and the scalar
expression one lane of a vector expression computes."""
from __future__ import annotations

import dataclasses
import functools

from . import expr as E
from . import sparse as SP
from . import stmt as S
from .dtype import element_of, lanes_of

_SKIP = frozenset({"span", "comments", "trailing", "spelling", "header_span", "name_span",
                   "arg_spans", "dtype"})
_SEQ = object()            # _kind: a tuple or list, whose items are visited
_LEAF = object()           # _kind: a Buffer, visited but not entered


def child_fields(cls) -> tuple:
    """The fields of an IR node class that hold child nodes."""
    k = _kind(cls)
    return k if isinstance(k, tuple) else ()


@functools.lru_cache(maxsize=None)          # one entry per class
def _kind(cls):
    """How the traversals treat an instance of cls: _SEQ, _LEAF, its child fields (a node),
    or None (not part of the IR: a string, a number, a class object ...)."""
    if issubclass(cls, (tuple, list)):
        return _SEQ
    if not dataclasses.is_dataclass(cls) or issubclass(cls, type):
        return None
    if issubclass(cls, S.Buffer):
        return _LEAF
    return tuple(x.name for x in dataclasses.fields(cls) if x.name not in _SKIP)


@functools.lru_cache(maxsize=None)          # one entry per class
def _init_fields(cls) -> tuple:
    return tuple(f.name for f in dataclasses.fields(cls))


def _replace(x, changes: dict):
    """`dataclasses.replace` for IR nodes (every field is an init field, no __post_init__),
    without its per-call field inspection: rebuilding is the inner loop of every pass."""
    return type(x)(*[changes[f] if f in changes else getattr(x, f)
                     for f in _init_fields(type(x))])


def walk(node, fn):
    """Call fn on every IR node under `node` (pre-order); fn returning False prunes."""
    stack = [node]
    pop, push = stack.pop, stack.extend
    while stack:
        x = pop()
        k = _kind(type(x))
        if k is None:
            continue
        if k is _SEQ:
            push(reversed(x))
            continue
        if fn(x) is False or k is _LEAF:
            continue
        push([getattr(x, f) for f in reversed(k)])


def find_first(node, pred, cls=None):
    """The first node under `node` (pre-order, `node` included) that is an instance of `cls`
    (when given) and satisfies `pred`; None when there is none."""
    found = []

    def fn(x):
        if found:
            return False
        if (cls is None or isinstance(x, cls)) and pred(x):
            found.append(x)
            return False
        return True
    walk(node, fn)
    return found[0] if found else None


def find_all(node, pred, cls=None, nested=True) -> list:
    """Every node under `node` (pre-order) that is an instance of `cls` (when given) and
    satisfies `pred`; with nested=False the search does not look inside a match."""
    out = []

    def fn(x):
        if (cls is None or isinstance(x, cls)) and pred(x):
            out.append(x)
            return nested
        return True
    walk(node, fn)
    return out


def statement_paths(node, pred, nested=False) -> list:
    """[(stmt, ancestors)] for every statement under `node` that satisfies `pred`
    (pre-order), ancestors being the statements from `node` down to its parent; the search
    never enters expressions, and with nested=False not a match either."""
    out = []
    stack = [(node, ())]
    while stack:
        x, path = stack.pop()
        if isinstance(x, (tuple, list)):
            stack.extend((y, path) for y in reversed(x))
            continue
        if not isinstance(x, S.Stmt):
            continue
        if pred(x):
            out.append((x, path))
            if not nested:
                continue
        below = path + (x,)
        stack.extend((getattr(x, f), below) for f in reversed(child_fields(type(x))))
    return out


def function_calls(node) -> list:
    """The calls of module functions (`Module.f(...)`, `Call.callee`) in an IR tree, in order."""
    return find_all(node, lambda c: c.callee is not None, E.Call)


def contains(node, pred, cls=None) -> bool:
    """Whether some node under `node` is an instance of `cls` (when given) satisfying `pred`."""
    return find_first(node, pred, cls) is not None


def uses_var(node, var) -> bool:
    """Whether the variable `var` (or any other node, by identity) occurs under `node`."""
    return find_first(node, lambda x: x is var) is not None


def vars_in(node) -> list:
    """The variables that occur under `node`, each once, in order of first appearance
    (bound ones included: see free_variables for those nothing under `node` defines)."""
    out, seen = [], set()

    def fn(x):
        if isinstance(x, E.Var):
            if id(x) not in seen:
                seen.add(id(x))
                out.append(x)
            return False
        return True
    walk(node, fn)
    return out


def const_int(e):
    """The value of an integer immediate, or None for any other expression."""
    return e.value if isinstance(e, E.IntImm) else None


REMOVE = object()          # a replacement that drops the node from the tuple holding it


def rebuild(node, fn):
    """Post-order rebuild of an IR tree.  `fn(new_node, old_node)` returns a replacement,
    None to keep the node, or REMOVE (dropped from the tuple that holds it).  Buffers are
    leaves; unchanged subtrees are returned as they are, so identity is kept."""
    memo = {}

    def go(x):
        k = _kind(type(x))
        if k is None or k is _LEAF:
            return x
        if k is _SEQ:
            if not isinstance(x, tuple):
                return x
            items = [go(y) for y in x]
            kept = [y for y in items if y is not REMOVE]
            if len(kept) == len(x) and all(a is b for a, b in zip(kept, x)):
                return x
            return tuple(kept)
        key = id(x)
        if key in memo:
            return memo[key]
        changes = {}
        for f in k:
            v = getattr(x, f)
            nv = go(v)
            if nv is not v:
                changes[f] = nv
        y = _replace(x, changes) if changes else x
        r = fn(y, x)
        out = y if r is None else r
        memo[key] = out
        return out

    return go(node)


def substitute(node, vmap: dict):
    """Replace variables (keyed by id) with expressions."""
    if not vmap:
        return node

    def fn(new, old):
        if isinstance(old, E.Var):
            return vmap.get(id(old))
        return None
    return rebuild(node, fn)


class _NotLanewise(Exception):
    pass


_LANEWISE_CALLS = frozenset({"if_then_else", "likely"})


def lane_of(e, lane):
    """The scalar expression lane `lane` (an integer expression) of vector expression `e`
    computes: `T.Ramp(b, s, n)` is `b + s * lane`, `T.Broadcast(x, n)` is `x`, and an
    operator, a load, a cast, a select or an `if_then_else` of vectors is the same on their
    lanes.  None where one lane cannot be written alone (a vector variable or `let`, a
    nested vector, a shuffle or another call on vectors)."""
    def fn(new, old):
        t = type(new)
        if t is E.Ramp or t is E.Broadcast:
            inner = new.base if t is E.Ramp else new.value
            if lanes_of(inner.dtype) != 1:
                raise _NotLanewise
            if t is E.Broadcast:
                return inner
            return E.Add(inner, E.Mul(new.stride, lane, inner.dtype), inner.dtype)
        dtype = getattr(new, "dtype", None)
        vector = isinstance(dtype, str) and lanes_of(dtype) > 1
        if t is E.Call and new.op not in _LANEWISE_CALLS and (vector or new is not old):
            raise _NotLanewise             # (an operand changed: it was a vector)
        if not vector:
            return None
        if isinstance(new, (E.Var, E.Let)):
            raise _NotLanewise
        return _replace(new, {"dtype": element_of(dtype)})
    try:
        return rebuild(e, fn)
    except _NotLanewise:
        return None


def free_variables(s) -> list:
    """Variables used under s that nothing under s defines, in order of appearance."""
    defined, used, order = set(), set(), []

    def define(v):
        defined.add(id(v))

    def use(v):
        if id(v) not in used:
            used.add(id(v))
            order.append(v)

    def visit(x):
        t = type(x)
        if t is S.For:
            define(x.loop_var)
        elif t is S.LetStmt:
            define(x.var)     # (an E.Let's variable is declared like `x = T.int32()`)
        elif t is E.Lambda:
            for p in x.params:
                define(p)
        elif t is S.Allocate or t is S.AllocateConst:
            define(x.buffer_var)
        elif t is S.Block:
            for iv in x.iter_vars:
                define(iv.var)
            for b in x.alloc_buffers:
                define(b.data)
                walk(_buffer_exprs(b), visit)
            for m in x.match_buffers:
                define(m.buffer.data)
                walk(_buffer_exprs(m.buffer), visit)
        elif t is S.DeclBuffer:
            define(x.buffer.data) if x.buffer.data is not None and id(x.buffer.data) not in \
                used else None
            walk(_buffer_exprs(x.buffer), visit)
        elif t is S.AttrStmt and isinstance(x.node, S.IterVar):
            define(x.node.var)
        elif t is S.IterVar:
            define(x.var)
        elif t is SP.SpIterVar:
            define(x.var)
            return False
        elif t is E.Var or t is E.SizeVar:
            use(x)
            return False
        elif t is E.BufferLoad or t is S.BufferStore or t is S.BufferRegion:
            walk(x.buffer.shape, visit)
        return True

    walk(s, visit)
    return [v for v in order if id(v) not in defined]


def _buffer_exprs(b) -> list:
    """The expressions a buffer declaration mentions: shape, strides, element offset."""
    out = list(b.shape) + list(b.strides)
    if b.elem_offset is not None:
        out.append(b.elem_offset)
    return out
