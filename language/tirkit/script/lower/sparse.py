"""Sparse kernels in the SparseTIR spelling: axis declarations (`T.dense_fixed`,
`T.dense_variable`, `T.sparse_fixed`, `T.sparse_variable`), `T.match_sparse_buffer` and
`with T.sp_iter([...], "SRS", "name") as [...]`.

Diagnostics: `sparse/malformed-axis` (a parent that is missing or not an axis, a shape that is
not `(length, nnz)`, indptr/indices that are not parameters), `sparse/indptr-mismatch` (an
indptr or indices buffer whose dtype is not the axis's index type, or an indptr whose length is
not the parent's length + 1), `sparse/axis-not-in-buffer` (a sparse buffer indexed by a
sparse iterator whose axis is not the buffer's axis at that place)."""
from __future__ import annotations

from ...ir import dtype as D
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.equality import identical
from ...ir.sparse import Axis, SparseBuffer, SparseIteration, SpIterVar
from ...syntax import cst as C
from .context import LowerError

AXIS_CALLS = ("dense_fixed", "dense_variable", "sparse_fixed", "sparse_variable")


def _node_arg(call, i, name):
    if i < len(call.args):
        return call.args[i]
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


class SparseMixin:
    # ---- axes ------------------------------------------------------------------------------
    def sparse_axis(self, target, call, s, tn):
        if not isinstance(target, C.Name):
            self.fail("sparse/malformed-axis", f"T.{tn} must be assigned to one name", s)
        kw = {k.arg: k for k in call.keywords}
        unknown = [k for k in kw if k not in ("idtype", "sorted", "format", "length", "parent",
                                               "shape", "indptr", "indices", "data")]
        if unknown:
            self.fail("sparse/malformed-axis", f"T.{tn} has no argument '{unknown[0]}'",
                      kw[unknown[0]])
        fmt = self._axis_format(call, tn)
        if tn == "dense_fixed":
            length_n = _node_arg(call, 0, "length")
            if length_n is None:
                self.fail("sparse/malformed-axis", "T.dense_fixed needs a length", call)
            length = self._axis_int(length_n, "length")
            idtype = self._axis_idtype(call, 1)
            axis = Axis(target.id, tn, None, length, None, None, None, idtype, True, fmt,
                        self.span(s))
        else:
            parent_n = _node_arg(call, 0, "parent")
            parent = self.value(parent_n) if parent_n is not None else None
            if not isinstance(parent, Axis):
                self.fail("sparse/malformed-axis", f"T.{tn} needs its parent axis first",
                          parent_n if parent_n is not None else call)
            shape_n = _node_arg(call, 1, "shape")
            shape_n = C.unparen(shape_n) if shape_n is not None else None
            if not isinstance(shape_n, C.TupleExpr) or len(shape_n.elts) != 2:
                what = "(length, nnz_cols)" if tn == "sparse_fixed" else "(length, nnz)"
                self.fail("sparse/malformed-axis", f"T.{tn} takes its shape as {what}",
                          shape_n if shape_n is not None else call)
            length = self._axis_int(shape_n.elts[0], "length")
            nnz = self._axis_int(shape_n.elts[1], "nnz")
            data_n = _node_arg(call, 2, "data" if tn == "sparse_variable" else
                               "indptr" if tn == "dense_variable" else "indices")
            idtype = self._axis_idtype(call, 3)
            indptr = indices = None
            if tn == "sparse_variable":
                data_u = C.unparen(data_n) if data_n is not None else None
                if not isinstance(data_u, C.TupleExpr) or len(data_u.elts) != 2:
                    self.fail("sparse/malformed-axis", "T.sparse_variable takes its storage "
                              "as (indptr, indices)", data_n if data_n is not None else call)
                indptr = self._axis_storage(data_u.elts[0], "indptr")
                indices = self._axis_storage(data_u.elts[1], "indices")
            elif data_n is None:
                self.fail("sparse/malformed-axis", f"T.{tn} needs its "
                          f"{'indptr' if tn == 'dense_variable' else 'indices'}", call)
            elif tn == "dense_variable":
                indptr = self._axis_storage(data_n, "indptr")
            else:
                indices = self._axis_storage(data_n, "indices")
            sorted_ = True
            if "sorted" in kw or len(call.args) > 4:
                sorted_ = self.value(_node_arg(call, 4, "sorted"))
                if not isinstance(sorted_, bool):
                    self.fail("sparse/malformed-axis", "sorted= takes True or False", call)
            axis = Axis(target.id, tn, parent, length, nnz, indptr, indices, idtype, sorted_,
                        fmt, self.span(s))
            self._check_storage(axis, indptr, data_n, "indptr")
            self._check_storage(axis, indices, data_n, "indices")
        self.define(target.id, axis, target)
        self.sparse_axes.append(axis)
        return None

    def _axis_format(self, call, tn):
        for k in call.keywords:
            if k.arg == "format":
                v = self.value(k.value)
                if v not in ("hash",) or tn not in ("sparse_variable", "sparse_fixed"):
                    self.fail("sparse/malformed-axis", "format= takes \"hash\", on a sparse "
                              "axis", k.value)
                return v
        return ""

    def _axis_int(self, n, what):
        v = self.value(n)
        if isinstance(v, int) and not isinstance(v, bool):
            return E.const(v, "int32", self.span(n))
        if not isinstance(v, E.PrimExpr) or not D.is_int(v.dtype):
            self.fail("sparse/malformed-axis", f"an axis's {what} must be an integer", n)
        return v

    def _axis_idtype(self, call, pos):
        n = _node_arg(call, pos, "idtype")
        if n is None:
            return "int32"
        v = self.value(n)
        if not (isinstance(v, str) and D.is_int(v)):
            self.fail("sparse/malformed-axis", "idtype must be an integer dtype", n)
        return v

    def _axis_storage(self, n, what):
        v = self.value(n)
        if isinstance(v, S.Buffer) and not isinstance(v, SparseBuffer):
            return v
        if isinstance(v, E.Var) and v.dtype == "handle":
            return v
        self.fail("sparse/malformed-axis", f"the {what} of an axis must be a parameter "
                  "(a T.handle or a T.Buffer)", n)

    def _check_storage(self, axis, store, node, what):
        """An indptr/indices given as a T.Buffer must have the axis's index type and, for an
        indptr under a fixed-length parent, the parent's length + 1 elements."""
        if store is None:
            return
        dtype = store.dtype if isinstance(store, S.Buffer) else \
            (store.type_annotation.element if store.type_annotation is not None else None)
        if dtype is not None and dtype != axis.idtype:
            self.diag("sparse/indptr-mismatch", f"{what} '{store.name}' of axis '{axis.name}' "
                      f"holds {dtype}, the axis's index type is {axis.idtype}", node)
        if what != "indptr" or not isinstance(store, S.Buffer):
            return
        parent = axis.parent
        if len(store.shape) != 1:
            self.diag("sparse/indptr-mismatch", f"indptr '{store.name}' of axis '{axis.name}' "
                      "must be one-dimensional", node)
            return
        if parent.kind == "dense_fixed":
            want = parent.length
            got = store.shape[0]
            if isinstance(want, E.IntImm) and isinstance(got, E.IntImm):
                bad = got.value != want.value + 1
            else:
                bad = not (isinstance(got, E.Add) and identical(got.a, want) and
                           isinstance(got.b, E.IntImm) and got.b.value == 1)
            if bad:
                self.diag("sparse/indptr-mismatch", f"indptr '{store.name}' of axis "
                          f"'{axis.name}' must have {parent.name}'s length + 1 elements", node)

    # ---- buffers ---------------------------------------------------------------------------
    def match_sparse_buffer(self, target, call, s, tn):
        if not isinstance(target, C.Name):
            self.fail("syntax", "T.match_sparse_buffer must be assigned to one name", s)
        param_n = _node_arg(call, 0, "param")
        param = self.value(param_n) if param_n is not None else None
        if not (isinstance(param, E.Var) and param.dtype == "handle"):
            self.fail("type/mismatch", "T.match_sparse_buffer takes a T.handle parameter first",
                      param_n if param_n is not None else call)
        axes_n = _node_arg(call, 1, "axes")
        axes_u = C.unparen(axes_n) if axes_n is not None else None
        if not isinstance(axes_u, (C.TupleExpr, C.ListExpr)) or not axes_u.elts:
            self.fail("sparse/malformed-axis", "T.match_sparse_buffer takes a tuple of axes",
                      axes_n if axes_n is not None else call)
        axes = []
        for a in axes_u.elts:
            v = self.value(a)
            if not isinstance(v, Axis):
                self.fail("sparse/malformed-axis", "not an axis", a)
            axes.append(v)
        for k, a in enumerate(axes):
            if a.parent is not None and (k == 0 or axes[k - 1] is not a.parent):
                self.diag("sparse/malformed-axis", f"axis '{a.name}' must follow its parent "
                          f"'{a.parent.name}' in the buffer's axes", axes_u.elts[k])
        dtype_n = _node_arg(call, 2, "dtype")
        dtype = self.value(dtype_n) if dtype_n is not None else "float32"
        if not (isinstance(dtype, str) and D.is_dtype(dtype)):
            self.fail("type/mismatch", "the dtype of a sparse buffer must be a dtype string",
                      dtype_n)
        data = E.Var(target.id, "handle", E.PointerType(dtype), self.span(target))
        buf = SparseBuffer(target.id, tuple(a.length for a in axes), dtype, data,
                           span=self.span(s), axes=tuple(axes))
        self.buffer_map.append((param, buf))
        self.define(target.id, buf, target)
        return None

    # ---- iterations --------------------------------------------------------------------------
    def sp_iter(self, s, call):
        item = s.items[0]
        axes_n = _node_arg(call, 0, "axes")
        axes_u = C.unparen(axes_n) if axes_n is not None else None
        if not isinstance(axes_u, (C.ListExpr, C.TupleExpr)) or not axes_u.elts:
            self.fail("sparse/malformed-axis", "T.sp_iter takes a list of axes", call)
        axes = []
        for a in axes_u.elts:
            v = self.value(a)
            if not isinstance(v, Axis):
                self.fail("sparse/malformed-axis", "T.sp_iter iterates over axes", a)
            axes.append(v)
        kinds_n, name_n = _node_arg(call, 1, "iter_types"), _node_arg(call, 2, "name")
        kinds = self.value(kinds_n) if kinds_n is not None else None
        if not isinstance(kinds, str) or len(kinds) != len(axes) or set(kinds) - set("SR"):
            self.fail("type/mismatch", f"T.sp_iter needs one of 'S'/'R' per axis "
                      f"({len(axes)})", kinds_n if kinds_n is not None else call)
        name = self.value(name_n) if name_n is not None else ""
        if not isinstance(name, str):
            self.fail("type/mismatch", "a sparse iteration's name must be a string", name_n)
        for k, a in enumerate(axes):
            if a.parent is not None and a.parent not in axes[:k] and not any(
                    _same_level(a.parent, b) for b in axes[:k]):
                self.diag("sparse/malformed-axis", f"axis '{a.name}' is iterated without its "
                          f"parent '{a.parent.name}' before it", axes_u.elts[k])
        tgt = C.unparen(item.target) if item.target is not None else None
        names = tgt.elts if isinstance(tgt, (C.ListExpr, C.TupleExpr)) else \
            [tgt] if isinstance(tgt, C.Name) else None
        if names is None or len(names) != len(axes) or \
                not all(isinstance(C.unparen(x), C.Name) for x in names):
            self.fail("syntax", f"T.sp_iter needs `as [..]` with {len(axes)} names", s)
        self.push()
        try:
            iters = []
            for n, a, k in zip(names, axes, kinds):
                n = C.unparen(n)
                var = E.Var(n.id, a.idtype, None, self.span(n))
                self.define(n.id, var, n)
                iters.append(SpIterVar(var, a, k == "R", self.span(n)))
            saved = self.sp_iters
            self.sp_iters = {id(it.var): it for it in iters} | (saved or {})
            try:
                init = None
                body_stmts = list(s.body)
                first = C.unparen(body_stmts[0]) if body_stmts else None
                if isinstance(first, C.With) and len(first.items) == 1 and isinstance(
                        C.unparen(first.items[0].context), C.Call) and self.t_name(
                        C.unparen(first.items[0].context).func) == "init":
                    init = self.body(first.body)
                    body_stmts = body_stmts[1:]
                body = self.body(body_stmts)
            finally:
                self.sp_iters = saved
        finally:
            self.pop()
        return SparseIteration(name, tuple(iters), body, init, (), self.span(s))

    def check_sparse_access(self, buf, indices, node):
        """A sparse iterator used as an index of a sparse buffer must iterate the buffer's
        axis there, or an axis of the same length whose coordinate locates the level."""
        its = getattr(self, "sp_iters", None) or {}
        for k, (x, ax) in enumerate(zip(indices, buf.axes)):
            it = its.get(id(x)) if isinstance(x, E.Var) else None
            if it is None or it.axis is ax:
                continue
            if not identical(it.axis.length, ax.length):
                where = node.indices[k] if k < len(getattr(node, "indices", ())) else node
                self.diag("sparse/axis-not-in-buffer", f"'{x.name}' iterates axis "
                          f"'{it.axis.name}', but dimension {k} of '{buf.name}' is axis "
                          f"'{ax.name}'", where)


def _same_level(parent, b) -> bool:
    """An iterated axis whose coordinate is a position of `parent`: `J` for its detached
    dense twin `J_detach` (a dense level's position is its coordinate)."""
    return parent.kind == "dense_fixed" and identical(parent.length, b.length)


__all__ = ["SparseMixin", "AXIS_CALLS", "LowerError"]
