"""Fixes that are text edits, for the diagnostics of the rules that have one (the editor's
quick fixes, computed here so that every client gets the same edit):

- `signature/iter-type` on a spatial iterator a block accumulates over: "Declare `vj` a
  reduction iterator" (its letter of `T.axis.remap` made "R"; `reduction_edit`).  The
  kernel computes the same: the loops run the instances in the same order.  On a spatial
  iterator whose instances depend on each other (`A[vi + 1] = A[vi] + B[vi]`): "Declare
  `vi` a scan iterator" (`T.axis.spatial` made `T.axis.scan`; a `T.axis.remap` statement,
  which has no letter for a scan, split with `vi` declared apart; `scan_edit`), which keeps
  the order the kernel already runs them in.
- `dataflow/uncovered-read` on the read of a block that updates an allocated buffer
  without a `T.init()` (`acc[vi] = acc[vi] + A[vi, vk]`): "Initialize `acc[vi]` to 0 in a
  T.init()", the identity of the update's operator (`+` 0, `*` 1, `T.max` the smallest
  value, `T.min` the largest), for a block with a reduction iterator (the init runs at its
  first value).  This changes what the kernel computes, from garbage to the sum.
- `type/mismatch` on a scalar argument of a module function's call whose dtype is not the
  parameter's (rule `module-calls`): "Convert `B[i]` to float32 with T.Cast", the argument
  as written wrapped in `T.Cast("float32", ...)`: what tirkit's engines did, and what TVM's
  build needs.
- `loop-nest/parallel-race` under a `T.parallel` loop and `loop-nest/vector-dependence`:
  "Make loop 'i' serial", its `T.parallel` / `T.vectorized` written `T.serial`
  (`serial_edit`).  The kernel then computes what the loop as written means, one iteration
  after another (a loop bound to blockIdx gets no such fix: a GPU kernel needs its grid).
- `dataflow/unused-buffer` on a buffer nothing touches: "Remove the unused allocation of
  `temp`", its line `temp = T.alloc_buffer(...)` deleted; on one written and never read,
  "Remove `E` and block 'exp'", its line and the statements that write it (each the largest
  that does nothing else: the block's loop nest) deleted (`unused_buffer.removal`).  The
  kernel's results are the same: nothing read what was removed.

A fix is offered only where the source has the form the edit expects; a schedule primitive
that repairs a diagnostic is a schedule action instead (schedule/actions.py)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.visit import find_first
from ._common import same_element
from .iter_type import CODE as ITER_TYPE
from .instance_dependence import check_instance_dependence
from .iter_type import reduction_edit, scan_edit
from .module_calls import TYPE as CALL_TYPE
from .module_calls import converted_argument
from . import RuleContext
from .parallel_race import CODE as RACE
from .parallel_race import check_parallel_race
from .unused_buffer import CODE as UNUSED
from .unused_buffer import joined, removal
from .vector_dependence import CODE as LANES
from .vector_dependence import check_vector_dependence

UNCOVERED = "dataflow/uncovered-read"


@dataclass
class TextFix:
    title: str
    edits: list          # [(line, column, end_line, end_column, new text)], 1-based, end excl.


def text_fixes(result, code: str, severity: str, line: int, column: int) -> list:
    """[TextFix] for the diagnostic `code` reported at (line, column) of a parsed file."""
    lines = result.text.split("\n")
    if code == ITER_TYPE:
        dependent = _dependence_at(result, line, column)
        if not dependent and severity != "error":
            return []
        if dependent:
            edit = scan_edit(lines, line, column, _realize_declaring(result, line, column))
        else:
            edit = reduction_edit(lines, line, column)
            edit = edit and (edit[0], edit[1], edit[0], edit[2], edit[3])
        if edit is None:
            return []
        src = lines[line - 1]
        name = src[column - 1:].split(",")[0].split("=")[0].strip()
        what = "a scan iterator" if dependent else "a reduction iterator"
        title = f"Declare `{name}` {what}" if name.isidentifier() else \
            f"Declare the iterator {what}"
        return [TextFix(title, [edit])]
    if code == UNCOVERED:
        fix = _init_fix(result, lines, line, column)
        return [fix] if fix is not None else []
    if code == CALL_TYPE and severity == "error":
        found = converted_argument(result.module, line, column)
        alias = _tir_alias(result)
        if found is None or alias is None:
            return []
        span, dtype = found
        text = lines[line - 1][span.column - 1:span.end_column - 1]
        return [TextFix(f"Convert `{text}` to {dtype} with {alias}.Cast",
                        [(line, span.column, line, span.end_column,
                          f'{alias}.Cast("{dtype}", {text})')])]
    if code in (RACE, LANES) and severity == "error":
        edit = serial_edit(result, lines, code, line, column)
        return [TextFix(f"Make loop '{edit[1]}' serial", [edit[0]])] if edit else []
    if code == UNUSED:
        name = lines[line - 1][column - 1:].split("=")[0].strip()
        for _, f in result.module.prim_funcs():
            found = removal(lines, f, line, column)
            if found is None:
                continue
            edits, blocks = found
            return [TextFix(f"Remove the unused allocation of `{name}`" if blocks is None
                            else f"Remove `{name}` and "
                            f"{joined(blocks, len(blocks)) or 'the statements that write it'}",
                            edits)]
    return []


def _dependence_at(result, line, column) -> bool:
    """Whether the `signature/iter-type` reported at (line, column) is one of instances that
    depend on each other (its fix declares a scan) rather than an accumulation."""
    ctx = RuleContext(module=result.module, text=result.text)
    return any((d.span.line, d.span.column) == (line, column)
               for _, f in result.module.prim_funcs() for d in check_instance_dependence(f, ctx))


def _realize_declaring(result, line, column):
    """The block (its BlockRealize) one of whose iterators is declared at (line, column)."""
    def here(r):
        return any(iv.span is not None and (iv.span.line, iv.span.column) == (line, column)
                   for iv in r.block.iter_vars)
    return next(filter(None, (find_first(f.body, here, S.BlockRealize)
                              for _, f in result.module.prim_funcs())), None)


def _identity(op, dtype, t):
    """(the text of the identity of the update's operator in `dtype`, how a title says it),
    or None."""
    return {E.Add: (f"{t}.{dtype}(0)", "0"), E.Mul: (f"{t}.{dtype}(1)", "1"),
            E.Max: (f'{t}.min_value("{dtype}")', "its smallest value"),
            E.Min: (f'{t}.max_value("{dtype}")', "its largest value")}.get(op)


def _store_at(block, line):
    """The store of the block's body (not nested deeper) on `line`, or None."""
    body = block.body.seq if isinstance(block.body, S.SeqStmt) else (block.body,)
    return next((s for s in body if isinstance(s, S.BufferStore) and s.span is not None
                 and s.span.line == line), None)


def _init_fix(result, lines, line, column):
    """The T.init() of the block whose update at `line` reads, at `column`, what it writes;
    or None."""
    def update_here(r):
        b = r.block
        return b.init is None and any(iv.kind == "R" for iv in b.iter_vars) and \
            _store_at(b, line) is not None
    for _, f in result.module.prim_funcs():
        r = find_first(f.body, update_here, S.BlockRealize)
        if r is None:
            continue
        store = _store_at(r.block, line)
        v = store.value
        if type(v) not in (E.Add, E.Mul, E.Max, E.Min):
            return None
        reads_self = any(isinstance(x, E.BufferLoad) and same_element(x, store)
                         for x in (v.a, v.b))
        src = lines[line - 1]
        target, eq, _ = src.partition(" = ")
        alias = _tir_alias(result)
        identity = _identity(type(v), store.buffer.dtype, alias)
        if not reads_self or not eq or alias is None or identity is None or \
                not src[column - 1:].startswith(store.buffer.name + "[") or \
                _written_before(f, r, store.buffer):
            return None             # (the diagnostic is about another read of the line)
        value, said = identity
        indent = src[:len(src) - len(src.lstrip())]
        text = f"{indent}with {alias}.init():\n{indent}    {target.strip()} = {value}\n"
        return TextFix(f"Initialize `{target.strip()}` to {said} in a T.init()",
                       [(line, 1, line, 1, text)])
    return None


def _written_before(func, realize, buf) -> bool:
    """Whether something before the block writes `buf` (then the block may mean to add to
    what was written, and an init would drop it)."""
    from ..analysis.accesses import accesses
    for a in accesses(func).accesses:
        if a.blocks and a.blocks[-1] is realize:
            return False
        if a.is_write and a.buffer is buf:
            return True
    return False


def _tir_alias(result):
    aliases = getattr(result, "aliases", None)
    tir = getattr(aliases, "tir", None) or {}
    return next((a for a, kind in tir.items() if kind in ("tir", "tirx", "tirkit")), None)


_KIND = re.compile(r"\b(\w+)\.(parallel|vectorized)\(")


def serial_edit(result, lines, code, line, column):
    """(the edit that writes the loop of the race or lane dependence reported at (line,
    column) `T.serial`, the loop's name), or None: the rule's diagnostic there names the
    loop as its first related place, whose header must spell its kind `X.parallel(` or
    `X.vectorized(`."""
    rule = check_parallel_race if code == RACE else check_vector_dependence
    ctx = RuleContext(module=result.module, text=result.text)
    for _, f in result.module.prim_funcs():
        for d in rule(f, ctx):
            if (d.span.line, d.span.column) != (line, column) or not d.related:
                continue
            at = d.related[0][0]
            src = lines[at.line - 1] if 0 < at.line <= len(lines) else ""
            m = _KIND.search(src, at.column - 1)
            name = src[at.column - 1:].split(" in ")[0].removeprefix("for ").strip()
            if m is None or not name.isidentifier():
                return None
            return (at.line, m.start(2) + 1, at.line, m.end(2) + 1, "serial"), name
    return None
