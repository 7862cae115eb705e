"""Checked native code: what `build(..., checked=True)` makes and `tirkit run` runs.

Before each load and store, the element index (each active lane of a vector access) is
tested against the size of the storage the access addresses: a parameter's array, an
allocation, a constant.  An access outside it is not made (a load gives zero) and the first
one found is recorded in the report area the runtime passes; the runtime then ends the run
with a `bounds/out-of-bounds` diagnostic at that access, where unchecked code would write over
other memory or crash the process.  In the same way an integer division or remainder by a
divisor that is 0 (in an active lane) divides by 1 instead and ends the run with
`arith/division-by-zero`: unchecked, it is undefined (LLVM may drop the operation or the
processor trap).  The signed division of the least value by -1 wraps, as TIR's integers do,
instead of trapping, in unchecked code too.

The access test is on the flat storage, so it stops what can corrupt memory; an index
outside one dimension that stays inside the storage is what the reference interpreter
(`tirkit run --check`) reports.

No test is made where it cannot fail: the storage's size is known when compiling (a
parameter of constant shape, whose array the runtime checks; a constant-size allocation) and
the index's interval over the enclosing loops' ranges (`arith.interval`) lies inside it.
The interval is of the exact value, and the code computes index arithmetic in 64 bits
(`ExprMixin.wide`); an index with a cast to a narrower integer, which the interval looks
through, is always tested.

The report area (unsigned 64-bit words; `runtime.report_area` makes it):

    0, 1     T.ret's value and flag (function.py)
    2        0, or 1 + the number of the first check that failed
    3, 4     for an access, its element index and the elements its storage holds
    5 + i    the bytes of parameter buffer i's array, written by the runtime before the call

The checks, in the order they are numbered, are a JSON list of [what, subject, line, column,
end line, end column] in the object code (`TABLE_SYMBOL`): what is "reads" or "writes" with
the buffer's name, "divides" with the divisor's text, or "calls" with the name of a module
function called past the depth limit (subroutines.py).  A kernel loaded from the cache
still names them.
"""
from __future__ import annotations

import json

import llvmlite.ir as ir

from ...arith.interval import interval
from ...ir import expr as E
from ...ir.dtype import bytes_of
from ...ir.text import expr_text
from ...ir.visit import contains
from ..runtime import FAILED_CHECK, BAD_COUNT, BAD_INDEX
from . import types as T
from .address import narrowing

TABLE_SYMBOL = "__tirkit_check_table"


class CheckMixin:
    """Mixed into the function emitter, ahead of the statement emitter: `self.report` is the
    report area (None: unchecked code), `self.sizes` maps id(storage variable) to its size in
    bytes (an i64 value) and `self.static_sizes` to that size where it is known when
    compiling; `self.ranges` maps id(variable) to its inclusive bounds."""

    def checked_access(self, buf, idx, node, emit, writes):
        """emit() (the access) when its index is inside its storage; the load's value, or
        zero where the access was refused."""
        size = self.sizes.get(id(buf.data)) if self.report is not None else None
        if size is None or self._always_inside(buf, idx):
            return emit()
        ok, index, count, made = self._in_bounds(buf, idx, size)
        b = self.b
        good = b.append_basic_block("access.ok")
        bad = b.append_basic_block("access.out")
        done = b.append_basic_block("access.done")
        b.cbranch(ok, good, bad).set_weights([1 << 20, 1])
        b.position_at_end(bad)
        entry = _entry("writes" if writes else "reads", buf.name, node, buf)
        if made is None:
            self._record(entry, index(), count)
        else:                        # a uniform access under a vector mask: an error if made
            with b.if_then(made):
                self._record(entry, index(), count)
        bad_end = b.block
        b.branch(done)
        b.position_at_end(good)
        value = emit()
        good_end = b.block
        b.branch(done)
        b.position_at_end(done)
        if value is None:
            return None
        phi = b.phi(value.type)
        phi.add_incoming(value, good_end)
        phi.add_incoming(ir.Constant(value.type, None), bad_end)
        return phi

    def _always_inside(self, buf, idx):
        nbytes = self.static_sizes.get(id(buf.data))
        if nbytes is None or contains(idx, narrowing, E.Cast):
            return False
        r = interval(idx, self.ranges)
        return r is not None and r[0] >= 0 and r[1] < nbytes // max(1, bytes_of(buf.dtype))

    def _s_For(self, s):
        if self.report is None:
            return super()._s_For(s)
        lo, ext = interval(s.min, self.ranges), interval(s.extent, self.ranges)
        bounds = None if lo is None or ext is None else (lo[0], lo[1] + max(ext[1], 1) - 1)
        self._within(s.loop_var, bounds, lambda: super(CheckMixin, self)._s_For(s))

    def _within(self, var, bounds, emit):
        saved = self.ranges.pop(id(var), None)
        if bounds is not None:
            self.ranges[id(var)] = bounds
        try:
            emit()
        finally:
            self.ranges.pop(id(var), None)
            if saved is not None:
                self.ranges[id(var)] = saved

    def _in_bounds(self, buf, idx, size):
        """(an i1 that is true when every active lane is inside the storage, a function
        giving, in the block of the refusal, the first index outside, the storage's
        elements, and for a uniform access under a vector mask an i1 that is true when the
        access would be made: some lane is on; else None)."""
        b = self.b
        v = self.index(idx)
        n = T.lanes(v.type)
        count = b.sdiv(size, T.I64(max(1, bytes_of(buf.dtype))))
        vt = T.with_lanes(T.I64, n)
        inside = b.and_(b.icmp_signed(">=", v, T.const(vt, 0)),
                        b.icmp_signed("<", v, self.splat(count, n)))
        mask = self.mask
        if n == 1:
            return inside, lambda: v, count, None if mask is None else self._any(mask)
        if mask is not None:
            lanes = self.mask_for(n)
            inside = b.or_(inside, b.not_(lanes)) if T.lanes(lanes.type) == n else \
                b.or_(inside, self.splat(b.not_(self._any(lanes)), n))
        bits = b.bitcast(inside, ir.IntType(n))
        all_in = b.icmp_unsigned("==", bits, ir.IntType(n)(-1))

        def first_outside():
            outside = b.bitcast(b.not_(inside), ir.IntType(n))
            lane = self.call_named(f"llvm.cttz.i{n}", ir.IntType(n), [outside, T.I1(0)])
            return b.extract_element(v, lane)
        return all_in, first_outside, count, None

    def _any(self, mask):
        n = T.lanes(mask.type)
        if n == 1:
            return mask
        return self.b.icmp_unsigned("!=", self.b.bitcast(mask, ir.IntType(n)), ir.IntType(n)(0))

    def safe_divisor(self, node, a, b, signed):
        """The integer divisor `b` of `a` in `node`: signed, 1 where `a` is the type's least
        value and `b` is -1, so that the quotient wraps to `a` and the remainder is 0 where
        the processor would trap (checked or not); in checked code also 1 where it is 0, a 0
        in an active lane being recorded."""
        ks = T.int_values(b)
        if ks is not None and all(ks) and not (signed and -1 in ks):
            return b
        bl = self.b
        n = T.lanes(b.type)
        one = T.const(b.type, 1)
        if signed:
            least = T.const(a.type, -(1 << (T.element(a.type).width - 1)))
            wraps = bl.and_(bl.icmp_signed("==", b, T.const(b.type, -1)),
                            bl.icmp_signed("==", a, least))
            b = bl.select(wraps, one, b)
        if (ks is not None and all(ks)) or self.report is None:
            return b
        zero = bl.icmp_unsigned("==", b, T.const(b.type, 0))
        hit = self._any(zero)
        if self.mask is not None:
            lanes = self.mask_for(n)
            hit = self._any(bl.and_(zero, lanes)) if T.lanes(lanes.type) == n else \
                bl.and_(hit, self._any(lanes))
        with bl.if_then(hit, likely=False):
            self._record(_entry("divides", expr_text(node.b), node, None))
        return bl.select(zero, one, b)

    def record_check(self, what, subject, node):
        """Record a failed check of another kind than an access or a division at `node`
        (subroutines.py's call depth: "calls" and the function's name)."""
        self._record(_entry(what, subject, node, None))

    def _record(self, entry, index=None, count=None):
        table = self.shared.checks
        table.append(entry)
        b = self.b
        first = self._word(FAILED_CHECK)
        pair = b.cmpxchg(first, T.I64(0), T.I64(len(table)), "monotonic", "monotonic")
        if index is None:
            return
        with b.if_then(b.extract_value(pair, 1)):
            b.store(index, self._word(BAD_INDEX))
            b.store(count, self._word(BAD_COUNT))

    def _word(self, k):
        return self.b.gep(self.report, [T.I64(k)], source_etype=T.I64)

    def storage_size(self, data_var, nbytes, static=None):
        """Remember the size in bytes (an int or an i64 value) of the storage `data_var`, and
        `static`, its bytes where known when compiling."""
        if self.report is not None:
            if isinstance(nbytes, int):
                nbytes, static = T.I64(nbytes), nbytes
            self.sizes[id(data_var)] = nbytes
            if static is not None:
                self.static_sizes[id(data_var)] = static


def _entry(what, subject, node, fallback):
    s = getattr(node, "span", None) or getattr(fallback, "span", None)
    where = [s.line, s.column, s.end_line, s.end_column] if s is not None else [1, 1, 1, 2]
    return [what, subject] + where


def add_table(module: ir.Module, checks: list) -> None:
    """The check table as a global of the module (see the module's docstring)."""
    data = bytearray(json.dumps(checks).encode() + b"\0")
    ty = ir.ArrayType(T.I8, len(data))
    g = ir.GlobalVariable(module, ty, name=TABLE_SYMBOL)
    g.initializer = ir.Constant(ty, data)
    g.global_constant = True


def read_table(text: bytes) -> list:
    return json.loads(text.decode())
