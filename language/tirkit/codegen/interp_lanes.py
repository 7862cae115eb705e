"""Which loops the reference interpreter (interp.py) runs in lanes: a loop whose iterations
provably touch disjoint memory runs in lockstep, every variable that varies across the lanes
holding a numpy array.  Decided per loop from its accesses and cached; `for a: for b:` runs
as `for b: for a:` where b may run in lanes around a."""
from __future__ import annotations

from ..diagnostics import TirkitError
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.dtype import parse_dtype
from ..ir.visit import walk
from ..arith.linear import separates
from .interp_exprs import _BIN, _MATH


def _elements(shape) -> int:
    n = 1
    for d in shape:
        n *= d.value if isinstance(d, E.IntImm) else 1 << 20     # symbolic: assume large
    return n


class LanesMixin:
    """Mixed into `Interpreter`: `self.lanes_enabled`, `self._safe_cache` and `self._keep`
    are its."""

    def _lane_safe(self, loop: S.For) -> bool:
        """May the iterations of `loop` run in lockstep?  True when every buffer the body
        writes (and did not allocate itself) is accessed at one index tuple only, and some
        dimension of it separates the iterations whatever the inner loops do."""
        key = id(loop)
        if key in self._safe_cache:
            return self._safe_cache[key]
        ok = self._lane_safe_uncached(loop)
        self._safe_cache[key] = ok
        return ok

    def _lane_safe_uncached(self, loop):
        from .passes.blocks import blocks_to_loops, predicates_to_conditions
        if not self.lanes_enabled:
            return False
        try:
            body = blocks_to_loops(predicates_to_conditions(loop.body))
        except TirkitError:
            return False
        bad, private, ranges = [], set(), {}
        acc: dict = {}
        written = set()

        def fn(x):
            t = type(x)
            if t in (S.While, E.Ramp, E.Broadcast, S.AssertStmt):
                bad.append(x)
            elif t is S.Allocate or t is S.AllocateConst:
                private.add(id(x.buffer_var))
            elif t is S.For:
                if isinstance(x.min, E.IntImm) and isinstance(x.extent, E.IntImm):
                    ranges[id(x.loop_var)] = (x.min.value, x.min.value + x.extent.value - 1)
                else:
                    bad.append(x)
            elif t is E.BufferLoad or t is S.BufferStore:
                if parse_dtype(x.buffer.dtype).lanes != 1:
                    bad.append(x)
                acc.setdefault(id(x.buffer.data), []).append(x)
                if t is S.BufferStore:
                    written.add(id(x.buffer.data))
            elif t is E.Call and x.op not in _MATH and x.op not in _BIN and x.op not in (
                    "if_then_else", "min_value", "max_value", "reinterpret", "likely",
                    "ceildiv"):
                bad.append(x)
        walk(body, fn)
        if bad:
            return False
        v = loop.loop_var
        for data in written:
            if data in private:
                continue
            accs = acc[data]
            if len({id(a.buffer) for a in accs}) != 1:
                return False
            if not separates([a.indices for a in accs], v, ranges):
                return False
        return True

    def _private_elements(self, loop) -> int:
        """Elements allocated inside the loop body (each lane gets its own copy)."""
        key = ("alloc", id(loop))
        n = self._safe_cache.get(key)
        if n is None:
            sizes = []

            def fn(x):
                shape = x.extents if isinstance(x, S.Allocate) else None
                if isinstance(x, S.Block):
                    for b in x.alloc_buffers:
                        sizes.append(_elements(b.shape))
                elif shape is not None:
                    sizes.append(_elements(shape))
            walk(loop.body, fn)
            n = self._safe_cache[key] = sum(sizes)
        return n

    def _interchanged(self, s):
        """`for a: for b: body` as `for b: for a: body` when b may run in lanes around a
        (its iterations touch disjoint memory whatever a is), else None."""
        key = ("swap", id(s))
        if key in self._safe_cache:
            return self._safe_cache[key]
        out = None
        m = s.body
        if isinstance(m, S.For) and isinstance(m.min, E.IntImm) and \
                isinstance(m.extent, E.IntImm) and m.extent.value > 1 and \
                m.kind != "thread_binding" and s.kind != "thread_binding":
            inner = S.For(s.loop_var, s.min, s.extent, s.kind, m.body, s.thread_tag,
                          s.annotations, span=s.span)
            cand = S.For(m.loop_var, m.min, m.extent, m.kind, inner, m.thread_tag,
                         m.annotations, span=m.span)
            if self._lane_safe(cand):
                out = cand
                self._keep.append(cand)      # ids in the caches stay valid
        self._safe_cache[key] = out
        return out
