"""What the operand rules share (ptx_operands.py, wmma_operands.py): one call being checked,
its loops and guards, the function's storage; its diagnostics at the argument where the
argument's span lies inside the call; an offset's certain extremes over the loops."""
from __future__ import annotations

from ..arith import Analyzer
from ..arith.enumerate import value_range
from ..diagnostics import error
from ..ir import expr as E
from ..ir.dtype import bytes_of, parse_dtype
from ._common import const_size, constant_box, exact_aff, full_env, loose_vars, vars_through

TYPE = "type/mismatch"
BOUNDS = "bounds/out-of-bounds"


class CallCheck:
    """One call being checked: its loops and guards, the function's storage."""

    def __init__(self, call, loops, conds, fa, owners, out):
        self.call, self.loops, self.conds, self.fa = call, loops, conds, fa
        self.owners, self.out = owners, out
        self.name = f"`T.{call.op}`"

    def error(self, code, message, at=None, related=()):
        """A diagnostic at the argument `at`: its own span as written where the call keeps
        it (an argument that is a variable carries its definition's span), else the
        expression's span where it lies inside the call, else at the call."""
        span, whole = self._arg_span(at) or getattr(at, "span", None), self.call.span
        if span is None or (span.line, span.column) < (whole.line, whole.column) or \
                (span.end_line, span.end_column) > (whole.end_line, whole.end_column) or \
                span == whole:
            span = whole
        self.out.append(error(code, f"{self.name} {message}", span, list(related)))

    def _arg_span(self, at):
        """The span the call keeps for the argument that is `at` (one argument alone)."""
        spans = self.call.arg_spans
        hits = [i for i, x in enumerate(self.call.args) if x is at]
        return spans[hits[0]] if len(hits) == 1 and len(spans) == len(self.call.args) \
            else None

    def element(self, ptr):
        """The element type of a pointer operand (a buffer's data), or None."""
        return getattr(getattr(ptr, "type_annotation", None), "element", None)

    def scope(self, ptr):
        """The storage scope of a pointer operand (a buffer's data), or None."""
        return getattr(getattr(ptr, "type_annotation", None), "scope", None) \
            if isinstance(ptr, E.Var) else None

    def storage(self, ptr, dtype):
        """(elements of `dtype` the storage of `ptr` holds, related location), or None."""
        owner = self.owners.get(ptr) if isinstance(ptr, E.Var) else None
        if owner is None:
            return None
        shape, held, buf = owner
        n = const_size(shape)
        if n is None or parse_dtype(dtype) is None or bytes_of(dtype) == 0:
            return None
        n = n * bytes_of(held) // bytes_of(dtype)
        rel = [(buf.span, f"'{buf.name}' holds {n} {dtype} elements")] \
            if buf is not None and buf.span is not None else []
        return n, rel

    def offset_range(self, off, narrow=None):
        """(smallest, largest) value of an offset over the call's loops, each None where it
        is not certain: affine in the loops (divisions by constants allowed), or else taken at
        every point of the loops' values where they are constant and few (remainders,
        bitwise operators: arith/enumerate.py); no guard may mention its variables.
        `narrow` {Var: (min, extent)} takes some loops over part of their range (the lanes
        that give an address)."""
        env = full_env(self.fa)
        narrow = narrow or {}
        an = Analyzer()
        for lp in self.loops:
            if lp.var in narrow:
                lo, ext = narrow[lp.var]
                an.bind_extent(lp.var, E.const(lo), E.const(ext), env)
            else:
                an.bind_extent(lp.var, lp.min, lp.extent, env)
        aff = an.to_aff(off, env)
        used = {id(v) for v in aff.all_vars()} | vars_through(off, env)
        if any(id(v) in used for v in loose_vars(self.loops)):
            return None, None
        for cond, _ in self.conds:
            if used & vars_through(cond, env):
                return None, None
        if not exact_aff(aff):
            got = value_range(off, {**constant_box(self.loops), **narrow}, env)
            return got if got is not None else (None, None)
        lo, hi = an.bound(aff)
        return (lo.const if lo is not None and lo.is_const() else None,
                hi.const if hi is not None and hi.is_const() else None)

    def within(self, ptr, off, count, dtype, what, narrow=None):
        """Report `count` elements of `dtype` from `ptr + off` that leave ptr's storage
        (`narrow` as in offset_range)."""
        held = self.storage(ptr, dtype)
        if held is None:
            return
        size, rel = held
        lo, hi = self.offset_range(off, narrow)
        name = getattr(ptr, "name", "")
        if hi is not None and hi + count > size:
            self.error(BOUNDS, f"{what} '{name}'[{hi}:{hi + count}], past its {size} "
                       "elements", off, rel)
        elif lo is not None and lo < 0:
            self.error(BOUNDS, f"{what} '{name}'[{lo}:{lo + count}], before its first "
                       "element", off, rel)
