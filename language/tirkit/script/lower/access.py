"""Buffer accesses: `A[i, j]` indices, slices as vector lanes, index-count checks."""
from __future__ import annotations

from ...ir import dtype as D
from ...ir import expr as E
from ...ir.stmt import Buffer
from ...syntax import cst as C
from ...ir.dtype import ERROR_DTYPE
from .context import LowerError
from .values import _SliceVal, _Starred
from .fold import slice_extent


class AccessMixin:
    def buffer_indices(self, buf: Buffer, n, allow_slices=True, load=False):
        """Lower `buf[...]` indices; slices become Ramps (or ranges in regions). `A[()]`
        (a zero-dimensional buffer) has no indices, as in TVM.  An index whose value is a
        tuple (the one name of `for j in T.grid(4, 4)`) gives its parts, as TVM's parser
        does for a store; a `load` refuses it, as TVM does."""
        indices = n.indices
        if len(indices) == 1 and isinstance(C.unparen(indices[0]), C.TupleExpr):
            # `A[()]`: no indices (a zero-dimensional buffer); `A[(i, j)]` is `A[i, j]`
            indices = C.unparen(indices[0]).elts
            if not indices:
                return []
        out = []
        for idx in indices:
            if isinstance(idx, C.Slice):
                if not allow_slices:
                    self.fail("type/mismatch", "a slice is not allowed here", idx)
                out.append(self.slice_range(idx))
            else:
                v = self.value(idx)
                if isinstance(v, _Starred):
                    out.extend(self._as_expr(x, idx) for x in (v.value or ()))
                    continue
                if isinstance(v, (tuple, list)):
                    if load:
                        self.fail("type/mismatch", f"an index is one integer expression, not a "
                                  f"tuple of {len(v)} (index with its parts)", idx)
                    out.extend(self._as_expr(x, idx) for x in v)
                    continue
                x = self._as_expr(v, idx)
                self.integer_index(x, idx)
                out.append(x)
        return out

    def slice_range(self, idx):
        lo = self.expr(idx.lower) if idx.lower is not None else E.IntImm("int32", 0)
        hi = self.expr(idx.upper) if idx.upper is not None else None
        step = self.expr(idx.step) if idx.step is not None else None
        for x, node in ((lo, idx.lower), (hi, idx.upper), (step, idx.step)):
            self.integer_index(x, node or idx, "a slice bound")
        return _SliceVal(lo, hi, step, idx)

    def integer_index(self, x, node, what="an index"):
        if not _integer(x):
            # TVM's parser keeps a float index and fails only when it lowers it
            self.diag("type/mismatch", f"{what} is an integer, not {x.dtype}", node)

    def check_index_count(self, buf, indices, n):
        if len(indices) != len(buf.shape) and buf.shape:
            flat_ok = len(indices) == 1 and buf.axis_separators == ()
            if not flat_ok or len(buf.shape) == 0:
                self.diag("type/mismatch",
                          f"buffer '{buf.name}' has {len(buf.shape)} dimension"
                          f"{'s' if len(buf.shape) != 1 else ''} but is indexed with "
                          f"{len(indices)} index{'es' if len(indices) != 1 else ''}", n)
                return False
            if len(buf.shape) > 1:
                self.diag("type/mismatch",
                          f"buffer '{buf.name}' has {len(buf.shape)} dimensions but is indexed "
                          f"with 1 index", n)
                return False
        if getattr(buf, "axes", None):
            self.check_sparse_access(buf, indices, n)
        return True

    def vector_indices(self, raw, store, node):
        """(indices, lanes) of a load or store: a slice is a Ramp of ceil(extent / step) lanes,
        or its start when that is one lane (as in TVM); an index that is itself a vector
        (`A[T.Ramp(0, 1, 4)]`) gives its lanes."""
        indices, lanes = [], 1
        for r in raw:
            if not isinstance(r, _SliceVal):
                indices.append(r)
                lanes = max(lanes, D.lanes_of(r.dtype) if r.dtype != ERROR_DTYPE else 1)
                continue
            if not all(_integer(x) for x in (r.lo, r.hi, r.step)):
                raise LowerError("a slice bound is not an integer")     # reported by its range
            ext = slice_extent(r.lo, r.hi) if r.hi is not None else None
            if store and (not isinstance(ext, E.IntImm) or ext.value < 1):
                self.fail("type/mismatch", "a vector store needs constant bounds", r.node)
            if r.hi is None:
                self.fail("type/mismatch", "a vector access needs a stop", r.node)
            if not isinstance(ext, E.IntImm):
                self.fail("type/mismatch", "a vector access needs constant bounds", r.node)
            stride = r.step if r.step is not None else E.IntImm(r.lo.dtype, 1)
            n = ext.value
            if isinstance(stride, E.IntImm) and stride.value > 1:
                n = (n + stride.value - 1) // stride.value
            if n == 1:
                indices.append(r.lo)
                continue
            if n > D.MAX_LANES:
                self.fail("type/mismatch", f"a slice of {n} elements: a vector access has at "
                          f"most {D.MAX_LANES} lanes (TVM keeps the number in 16 bits)", r.node)
            lanes = n
            indices.append(E.Ramp(r.lo, stride, n, D.parse_dtype(r.lo.dtype).with_lanes(n),
                                  self.span(r.node)))
        if store or not any(isinstance(r, _SliceVal) and r.step is None for r in raw):
            # a load with a slice is a region in TVM's classic parser (`T.realize(A[0:8, 0:4])`)
            for r, x in zip(raw[:-1], indices[:-1]):
                if x.dtype != ERROR_DTYPE and D.lanes_of(x.dtype) > 1:
                    self.diag("type/mismatch", "only the last index of an access may be a "
                              "vector (a slice of more than one element, or a T.Ramp)",
                              r.node if isinstance(r, _SliceVal) else x.span or node)
        return indices, lanes

    def buffer_load(self, buf: Buffer, n):
        raw = self.buffer_indices(buf, n, load=True)
        self.check_index_count(buf, raw, n)
        indices, lanes = self.vector_indices(raw, store=False, node=n)
        dtype = buf.dtype if lanes == 1 else D.parse_dtype(buf.dtype).with_lanes(lanes)
        return E.BufferLoad(buf, tuple(indices), dtype, self.span(n))


def _integer(x) -> bool:
    """Whether x (an expression, or None) may stand as an index: not a float."""
    d = D.parse_dtype(x.dtype) if x is not None else None
    return d is None or d.is_int or d.is_bool or x.dtype == ERROR_DTYPE
