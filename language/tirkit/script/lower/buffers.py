"""Buffers: T.Buffer / T.match_buffer / T.alloc_buffer / T.decl_buffer, T.allocate and
T.allocate_const."""
from __future__ import annotations

from ...ir import dtype as D
from ...ir import expr as E
from ...ir import stmt as S
from ...syntax import cst as C
from ...ir.dtype import ERROR_DTYPE
from .stmts import Wrap

BUFFER_ARGS = ("shape", "dtype", "data", "strides", "elem_offset", "scope", "align",
               "offset_factor", "buffer_type", "axis_separators")


class BufferMixin:
    def make_buffer(self, name, args, kwargs, node, name_node=None):
        """A Buffer from T.Buffer-style arguments (positional in BUFFER_ARGS order)."""
        opts = dict(zip(BUFFER_ARGS, args))
        for k, v in kwargs.items():
            if k not in BUFFER_ARGS:
                self.fail("type/mismatch", f"unknown buffer argument '{k}'", node)
            opts[k] = v
        shape = opts.get("shape")
        if shape is None:
            self.fail("type/mismatch", "a buffer needs a shape", node)
        if not isinstance(shape, (tuple, list)):
            shape = (shape,)
        shape = tuple(self._shape_dim(d, node) for d in shape)
        for i, d in enumerate(shape):
            if not D.is_int(d.dtype) and d.dtype != "unknown":
                self.diag("type/mismatch", "a buffer shape must be integers", node)
            elif type(d) is E.IntImm and d.value < 0:
                self.diag("type/mismatch", f"buffer '{name}' has extent {d.value} in "
                          f"dimension {i}: an extent is 0 or more", node)
        dtype = opts.get("dtype", "float32")
        if dtype is None:
            dtype = "float32"
        if not isinstance(dtype, str) or not D.is_dtype(dtype):
            self.fail("type/mismatch", f"{dtype!r} is not a dtype", node)
        scope = opts.get("scope", "global") or "global"
        if not isinstance(scope, str):
            self.fail("type/mismatch", "a buffer scope is a string", node)
        data = opts.get("data")
        if data is not None and not isinstance(data, E.Var):
            self.fail("type/mismatch", "a buffer's data is a handle variable", node)
        if data is None:
            data = E.Var(name, "handle", E.PointerType(dtype, scope), self.span(name_node or node))
        strides = opts.get("strides") or ()
        strides = tuple(self._size_expr(x, node) for x in strides)
        off = opts.get("elem_offset")
        off = self._size_expr(off, node) if off is not None else None
        align = opts.get("align", -1)
        offset_factor = opts.get("offset_factor", 0)
        btype = opts.get("buffer_type", "default") or "default"
        seps = tuple(opts.get("axis_separators") or ())
        return S.Buffer(name, shape, dtype, data, strides, off, scope,
                        int(align) if isinstance(align, int) else -1,
                        int(offset_factor) if isinstance(offset_factor, int) else 0,
                        btype, seps, self.span(name_node or node))

    def _shape_dim(self, d, node):
        """A shape dimension; a string names a size variable, made on first use and the same
        variable after (`T.Buffer((32, "n"))`, then `n` or `"n"` elsewhere), as TVM prints
        a shape variable that no parameter defines."""
        if isinstance(d, str):
            v = self.lookup(d)
            if isinstance(v, E.Var) and D.is_int(v.dtype):
                return v
            v = E.Var(d, "int32", None, self.span(node))
            self.define(d, v, check=False)
            return v
        return self._as_expr(d, node)

    def _size_expr(self, x, node):
        """A stride or offset; a string names a new variable (`strides=["s0", 1]`)."""
        if isinstance(x, str):
            return E.Var(x, "int32", None, self.span(node))
        return self._as_expr(x, node)

    def _target_name(self, target, what):
        if not isinstance(target, C.Name):
            self.fail("syntax", f"{what} must be assigned to a name", target)
        return target.id

    # ---- assignments ----------------------------------------------------------------------
    def alloc_buffer(self, target, call, s, tn):
        name = self._target_name(target, "T.alloc_buffer")
        kwargs = self._kwargs(call)
        # only the statement form takes annotations: with them it is one even at the top
        statement = tn != "sblock_alloc_buffer" and self.spelling == "tirx" and (
            getattr(self, "loop_depth", 0) or not getattr(self, "decl_prefix", True)
            or "annotations" in kwargs) and self.frame is not None and self.frame.is_root
        ann = kwargs.pop("annotations", None) if statement else None
        if ann is not None and not isinstance(ann, dict):
            self.fail("type/mismatch", "annotations are a dict", call)
        buf = self.make_buffer(name, self._args(call), kwargs, call, target)
        if tn == "sblock_alloc_buffer":
            import dataclasses
            buf = dataclasses.replace(buf, spelling=tn)
        elif statement:
            # current TVM: `T.alloc_buffer` after statements or inside a loop is a statement
            # allocating there (at the top of the function it is the root block's); only it
            # takes annotations
            self.define(name, buf, target)
            span = self.span(s)
            pairs = tuple((ann or {}).items())
            return Wrap(lambda rest: S.DeclBuffer(buf, rest, span, spelling="alloc_buffer",
                                                  annotations=pairs), s)
        frame = self.frame
        if frame is None:
            self.fail("type/mismatch", "T.alloc_buffer must be inside a block or the function", s)
        frame.alloc_buffers.append(buf)
        self.define(name, buf, target)
        return None

    def buffer_alias(self, target, call, s, tn):
        name = self._target_name(target, f"T.{tn}")
        buf = self.make_buffer(name, self._args(call), self._kwargs(call), call, target)
        self.define(name, buf, target)
        span = self.span(s)
        if tn == "decl_buffer":
            return Wrap(lambda rest: S.DeclBuffer(buf, rest, span), s)
        return None

    def match_buffer(self, target, call, s, tn):
        name = self._target_name(target, "T.match_buffer")
        kwargs = self._kwargs(call)
        if not call.args or isinstance(call.args[0], C.Starred):
            self.fail("type/mismatch", "T.match_buffer takes the parameter or region first", call)
        src = C.unparen(call.args[0])
        first = None if isinstance(src, C.Subscript) else self.value(src)
        rest = [self.value(a) for a in call.args[1:]]
        region = None
        if first is None and not rest and kwargs.get("shape") is None:
            # no shape: the region's extents, in the region's buffer's dtype (as TVM)
            region = self.region(src)
            kwargs["shape"] = tuple(r.extent for r in region.region)
            kwargs["dtype"] = region.buffer.dtype
        buf = self.make_buffer(name, rest, kwargs, call, target)
        frame = self.frame
        if isinstance(first, E.Var) and first.dtype in ("handle", ERROR_DTYPE):
            if not self.func_level:
                self.fail("type/mismatch", "T.match_buffer of a parameter belongs at the top of "
                          "the function", call)
            if any(v is first for v, _ in self.buffer_map):
                self.diag("well-formed/redefinition", f"parameter '{first.name}' is matched "
                          "twice", call)
            self.buffer_map.append((first, buf))
        else:
            if frame is None or frame.is_root:
                self.fail("type/mismatch", "T.match_buffer of a region must be inside a block",
                          call)
            region = region or self.region(src)
            frame.match_buffers.append(S.MatchBufferRegion(buf, region, self.span(s)))
        self.define(name, buf, target)
        return None

    def allocate(self, target, call, s, tn="allocate"):
        name = self._target_name(target, "T.allocate")
        args = self._args(call)
        kwargs = self._kwargs(call)
        names = ("extents", "dtype", "scope", "condition", "annotations")
        opts = dict(zip(names, args))
        opts.update(kwargs)
        extents = opts.get("extents")
        if not isinstance(extents, (list, tuple)):
            extents = (extents,)
        # (each extent's own node where they are written as a list: the error's range)
        node = next((k.value for k in call.keywords if k.arg == "extents"),
                    call.args[0] if call.args else call)
        items = C.unparen(node).elts if isinstance(C.unparen(node), (C.ListExpr, C.TupleExpr)) \
            else [node]
        extents = tuple(self._integer(self._as_expr(x, call), "an allocation extent",
                                      items[i] if len(items) == len(extents) else call)
                        for i, x in enumerate(extents))
        dtype = opts.get("dtype", "float32")
        scope = opts.get("scope", "global")
        if not D.is_dtype(dtype):
            self.fail("type/mismatch", f"{dtype!r} is not a dtype", call)
        cond = opts.get("condition")
        cond = self._as_expr(cond, call) if cond is not None else E.IntImm("bool", 1)
        ann = opts.get("annotations") or {}
        var = E.Var(name, "handle", E.PointerType(dtype, scope), self.span(target))
        self.define(name, var, target)
        span = self.span(s)
        return Wrap(lambda rest: S.Allocate(var, dtype, extents, cond, rest,
                                            tuple(ann.items()), span), s)

    def allocate_const(self, target, call, s, tn):
        name = self._target_name(target, "T.allocate_const")
        args = self._args(call)
        kwargs = self._kwargs(call)
        names = ("data", "dtype", "extents", "annotations")
        opts = dict(zip(names, args))
        opts.update(kwargs)
        data, dtype, extents = opts.get("data"), opts.get("dtype"), opts.get("extents")
        if dtype is None or extents is None or data is None:
            self.fail("type/mismatch", "T.allocate_const takes (data, dtype, extents)", call)
        if not isinstance(dtype, str) or not D.is_dtype(dtype):
            self.fail("type/mismatch", f"{dtype!r} is not a dtype", call)
        if not isinstance(extents, (list, tuple)):
            extents = (extents,)
        if not all(isinstance(x, int) for x in extents):
            self.fail("type/mismatch", "the extents of a constant are integers", call)
        const_name = self.constants.add(name, data, dtype, tuple(extents), self, call)
        var = E.Var(name, "handle", E.PointerType(dtype, "global"), self.span(target))
        self.define(name, var, target)
        ext_exprs = tuple(E.IntImm("int32", x) for x in extents)
        ann = opts.get("annotations") or {}
        span = self.span(s)
        return Wrap(lambda rest: S.AllocateConst(var, dtype, ext_exprs, const_name, rest,
                                                 tuple(ann.items()), span), s)
