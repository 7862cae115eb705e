"""Blocks (`T.block`/`T.sblock`) and what their bodies declare: iterators, regions,
predicate, annotations, allocations, matched buffers, init; and other `with` forms."""
from __future__ import annotations

from ...ir import dtype as D
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.equality import structural_equal
from ...syntax import cst as C
from ...ir.dtype import ERROR_DTYPE
from .context import BlockFrame
from .exprs import slice_extent
from .fold import cast_folded
from .values import _SliceVal
from .stmts import Wrap

AXIS_KINDS = {"axis.spatial": "S", "axis.S": "S", "axis.reduce": "R", "axis.R": "R",
              "axis.scan": "C", "axis.opaque": "O"}
REMAP_KINDS = {"S": "S", "R": "R", "C": "C", "O": "O"}
TRUE = E.IntImm("bool", 1)


_DOMAIN = "a block iterator's domain"


class _Conflict(Exception):
    def __init__(self, path, old, new):
        super().__init__(path)
        self.path, self.old, self.new = path, old, new


def merge_annotations(old: dict, new: dict, path=()) -> dict:
    """Annotations of two `T.block_attr` calls of one block, merged as TVM merges them: a
    new key is added, two dicts under one key are merged key by key, and one value given
    twice is kept; two different values under one key raise `_Conflict` (with the keys
    leading to it)."""
    out = dict(old)
    for key, value in new.items():
        if key not in out:
            out[key] = value
        elif isinstance(out[key], dict) and isinstance(value, dict):
            out[key] = merge_annotations(out[key], value, path + (key,))
        elif not _same_value(out[key], value):
            raise _Conflict(path + (key,), out[key], value)
    return out


def _same_value(a, b) -> bool:
    if isinstance(a, E.PrimExpr) or isinstance(b, E.PrimExpr):
        return structural_equal(a, b)
    return a == b


class BlockMixin:
    # ---- with statements ------------------------------------------------------------------
    def _s_With(self, s):
        if len(s.items) != 1:
            self.fail("syntax", "a kernel `with` takes one context", s)
        item = s.items[0]
        ctx = C.unparen(item.context)
        tn = self.t_name(ctx.func) if isinstance(ctx, C.Call) else None
        if tn in ("block", "sblock"):
            return self.block(s, ctx, tn)
        if tn == "init":
            return self.init_stmt(s)
        if tn == "sp_iter":
            return self.sp_iter(s, ctx)
        if tn == "launch_thread":
            return self.launch_thread(item.target, ctx, s, body_stmts=s.body)
        if tn == "attr":
            args = self._args(ctx)
            if len(args) != 3:
                self.fail("type/mismatch", "T.attr takes (node, key, value)", ctx)
            node, key, value = args
            value = self._as_expr(value, ctx)
            return S.AttrStmt(node, key, value, self.body(s.body), self.span(s))
        if tn == "allocate":
            w = self.allocate(item.target, ctx, s)
            return w.make(self.body(s.body))
        if tn == "decl_buffer":
            if item.target is None:
                self.fail("syntax", "`with T.decl_buffer(...)` needs `as NAME`", s)
            self.push()
            try:
                w = self.buffer_alias(item.target, ctx, s, tn)
                return w.make(self.body(s.body))
            finally:
                self.pop()
        if tn in ("LetStmt", "let"):
            args = self._args(ctx)
            kwargs = self._kwargs(ctx)
            if len(args) not in (1, 2):
                self.fail("type/mismatch", f"T.{tn} takes a value (and its type)", ctx)
            value = self._as_expr(args[0], ctx)
            name = item.target.id if isinstance(item.target, C.Name) else "v"
            var = kwargs.get("var") or E.Var(name, value.dtype, None, self.span(item.target))
            self.push()
            self.define(name, var, item.target, check=False)
            try:
                body = self.body(s.body)
            finally:
                self.pop()
            return S.LetStmt(var, value, body, self.span(s))
        if tn == "Assert":
            args = self._args(ctx)
            if len(args) not in (1, 2):
                self.fail("type/mismatch", "T.Assert takes (condition, message)", ctx)
            cond = self._as_expr(args[0], ctx)
            msg = self._as_expr(args[1] if len(args) > 1 else "", ctx)
            return S.AssertStmt(cond, msg, self.body(s.body), self.span(s))
        if tn is not None:
            from .calls import is_known_t_name
            if not is_known_t_name(tn):
                self.fail("name/undefined", f"'{tn}' is not a name of the T namespace", ctx.func)
        self.fail("syntax", "unsupported `with` context in a kernel", item.context)

    def init_stmt(self, s):
        frame = self.frame
        if frame is None or frame.is_root:
            self.fail("type/mismatch", "T.init() must be inside a block", s)
        if frame.init is not None:
            self.diag("well-formed/redefinition", f"block '{frame.name}' has two T.init()", s)
        frame.init = self.body(s.body)
        return None

    # ---- blocks --------------------------------------------------------------------------
    def block(self, s, call, spelling):
        args = self._args(call)
        kwargs = self._kwargs(call)
        name = args[0] if args else kwargs.get("name_hint", "")
        if not isinstance(name, str):
            self.fail("type/mismatch", "a block's name must be a string", call)
        outer = self.frame
        if outer is not None:
            outer.has_blocks = True
        frame = BlockFrame(name, self.span(s), self.block_depth() + 1)
        name_span = self.span(call.args[0]) if call.args else self.span(call)
        self.frames.append(frame)
        saved = self.func_level
        self.func_level = False
        try:
            body = self.body(s.body)
        finally:
            self.frames.pop()
            self.func_level = saved
        block = S.Block(name, tuple(frame.iter_vars), frame.reads, frame.writes, body, frame.init,
                        tuple(frame.alloc_buffers), tuple(frame.match_buffers), frame.annotations,
                        span=self.span(s), name_span=name_span)
        pred = frame.predicate if frame.predicate is not None else TRUE
        return S.BlockRealize(tuple(frame.iter_values), pred, block, self.span(s))

    def _block_frame(self, what, node):
        frame = self.frame
        if frame is None or frame.is_root:
            self.fail("type/mismatch", f"{what} must be inside a block", node)
        return frame

    def iter_var(self, target, call, s, tn):
        frame = self._block_frame(f"T.{tn}", call)
        if not isinstance(target, C.Name):
            self.fail("syntax", "a block iterator must be assigned to a name", target)
        args = list(call.args)
        kw = {k.arg: k.value for k in call.keywords}
        dom_n = args[0] if args else kw.get("dom")
        bind_n = args[1] if len(args) > 1 else kw.get("binding")
        if dom_n is None or bind_n is None:
            self.fail("type/mismatch", f"T.{tn} takes (domain, binding)", call)
        dom = self.value(dom_n)
        self.binding_context += 1
        try:
            binding = self.expr(bind_n)
        finally:
            self.binding_context -= 1
        if isinstance(binding, E.ArrayExpr) or not (D.is_int(binding.dtype) or
                                                    binding.dtype == ERROR_DTYPE):
            self.fail("type/mismatch", f"the binding of T.{tn} is one integer expression",
                      bind_n)
        dtype = self.value(kw["dtype"]) if "dtype" in kw else None
        rng = self._domain(dom, dom_n, dtype or binding.dtype)
        dtype = dtype or rng.extent.dtype
        if binding.dtype != dtype and isinstance(binding, E.IntImm):
            binding = E.IntImm(dtype, binding.value, binding.span)
        var = E.Var(target.id, dtype, None, self.span(target))
        frame.iter_vars.append(S.IterVar(var, rng, AXIS_KINDS[tn], None, self.span(s)))
        frame.iter_values.append(binding)
        self.define(target.id, var, target)
        return None

    def _domain(self, dom, node, dtype):
        if isinstance(dom, (tuple, list)):
            if len(dom) != 2:
                self.fail("type/mismatch", "a domain is an extent or a (min, max) pair", node)
            lo, hi = (self._integer(self._as_expr(x, node), _DOMAIN, node) for x in dom)
            lo, hi = self.match_types(lo, hi, isinstance(dom[0], int), isinstance(dom[1], int),
                                      node)
            if isinstance(lo, E.IntImm) and isinstance(hi, E.IntImm):
                return E.Range(lo, E.IntImm(hi.dtype, hi.value - lo.value), self.span(node))
            return E.Range(lo, E.Sub(hi, lo, hi.dtype), self.span(node))
        if isinstance(dom, E.Range):
            return dom
        ext = self._integer(self._as_expr(dom, node), _DOMAIN, node)
        if isinstance(ext, E.IntImm) and dtype and D.is_int(dtype) and ext.dtype != dtype:
            ext = E.IntImm(dtype, ext.value, ext.span)
        return E.Range(E.IntImm(ext.dtype, 0), ext, self.span(node))

    def _integer(self, value, what, node):
        """`value`, which TVM requires to be an integer (a block iterator's domain, a thread
        extent: it refuses `T.axis.spatial(0.5, i)`); otherwise an error, and the value
        taken as int32 so that the rest is still read."""
        d = D.parse_dtype(value.dtype)
        if d is None or d.is_int or value.dtype == ERROR_DTYPE:
            return value
        self.diag("type/mismatch", f"{what} is an integer, not {value.dtype}", node)
        return cast_folded("int32", value)

    def remap(self, target, call, s, tn):
        frame = self._block_frame("T.axis.remap", call)
        if len(call.args) != 2:
            self.fail("type/mismatch", "T.axis.remap takes (kinds, loop variables)", call)
        kinds = self.value(call.args[0])
        if not isinstance(kinds, str) or any(k not in REMAP_KINDS for k in kinds):
            self.fail("type/mismatch", "T.axis.remap kinds are a string of 'S' and 'R'",
                      call.args[0])
        loops_n = C.unparen(call.args[1])
        items = loops_n.elts if isinstance(loops_n, (C.ListExpr, C.TupleExpr)) else [loops_n]
        self.binding_context += 1
        try:
            loops = [self.value(it) for it in items]
        finally:
            self.binding_context -= 1
        if len(loops) == 1 and isinstance(loops[0], tuple):
            # `for iters in T.grid(...)`, then `T.axis.remap("SS", iters)`
            loops, items = list(loops[0]), items * len(loops[0])
        targets = target.elts if isinstance(target, C.TupleExpr) else [target]
        if not (len(kinds) == len(items) == len(targets)):
            self.fail("type/mismatch", f"T.axis.remap has {len(kinds)} kinds, {len(items)} "
                      f"loop variables and {len(targets)} names", call)
        for k, t, it, loop in zip(kinds, targets, items, loops):
            info = self.loops.get(id(loop)) if isinstance(loop, E.Var) else None
            if info is None:
                self.fail("type/mismatch", "T.axis.remap binds loop variables only", it)
            t = C.unparen(t)
            if not isinstance(t, C.Name):
                self.fail("syntax", "a block iterator must be assigned to a name", t)
            var = E.Var(t.id, loop.dtype, None, self.span(t))
            frame.iter_vars.append(S.IterVar(var, E.Range(info.min, info.extent), REMAP_KINDS[k],
                                             None, self.span(t)))
            frame.iter_values.append(loop)
            self.define(t.id, var, t)
        return None

    # ---- block declarations (expression statements) ---------------------------------------
    def regions_of(self, call):
        out = []
        for a in call.args:
            a = C.unparen(a)
            items = a.elts if isinstance(a, (C.ListExpr, C.TupleExpr)) else [a]
            for it in items:
                out.append(self.region(C.unparen(it)))
        return tuple(out)

    def region(self, n):
        if isinstance(n, C.Subscript):
            buf = self.value(n.value)
            if not isinstance(buf, S.Buffer):
                self.fail("type/mismatch", "a region is a buffer subscript", n)
            raw = self.buffer_indices(buf, n)
            if len(raw) != len(buf.shape):
                self.check_index_count(buf, raw, n)
            ranges = []
            for r in raw:
                if isinstance(r, _SliceVal):
                    lo = r.lo
                    hi = r.hi
                    if hi is None:
                        self.fail("type/mismatch", "a region slice needs a stop", r.node)
                    lo, hi = self.match_types(lo, hi, False, False, r.node)
                    ext = slice_extent(lo, hi)
                    ranges.append(E.Range(lo, ext))
                else:
                    ranges.append(E.Range(r, E.IntImm(r.dtype if D.is_int(r.dtype) else "int32",
                                                      1)))
            return S.BufferRegion(buf, tuple(ranges), self.span(n))
        buf = self.value(n)
        if isinstance(buf, S.Buffer):
            return S.BufferRegion(buf, tuple(E.Range(E.IntImm("int32", 0), d) for d in buf.shape),
                                  self.span(n))
        if isinstance(buf, E.BufferLoad):
            return S.BufferRegion(buf.buffer, tuple(E.Range(i, E.IntImm("int32", 1))
                                                    for i in buf.indices), self.span(n))
        self.fail("type/mismatch", "a region is a buffer subscript", n)

    def reads_stmt(self, call):
        frame = self._block_frame("T.reads", call)
        if frame.reads is not None:
            self.diag("well-formed/redefinition", f"block '{frame.name}' declares T.reads twice",
                      call)
        frame.reads = self.regions_of(call)
        return None

    def writes_stmt(self, call):
        frame = self._block_frame("T.writes", call)
        if frame.writes is not None:
            self.diag("well-formed/redefinition", f"block '{frame.name}' declares T.writes twice",
                      call)
        frame.writes = self.regions_of(call)
        return None

    def where_stmt(self, call):
        frame = self._block_frame("T.where", call)
        if len(call.args) != 1:
            self.fail("type/mismatch", "T.where takes one predicate", call)
        self.binding_context += 1
        try:
            frame.predicate = self.expr(call.args[0])
        finally:
            self.binding_context -= 1
        self.boolean_operand("T.where", frame.predicate, call.args[0])
        return None

    def block_attr_stmt(self, call):
        frame = self._block_frame("T.block_attr", call)
        args = self._args(call)
        if len(args) != 1 or not isinstance(args[0], dict):
            self.fail("type/mismatch", "T.block_attr takes a dict", call)
        try:
            merged = merge_annotations(dict(frame.annotations), args[0])
        except _Conflict as c:
            where = "".join(f" in '{k}'" for k in reversed(c.path[:-1]))
            self.fail("well-formed/redefinition", f"block annotation '{c.path[-1]}'{where} is "
                      f"set to {c.old!r}, then to {c.new!r}", call)
        frame.annotations = tuple(merged.items())
        return None

    def func_attr_stmt(self, call):
        args = self._args(call)
        if len(args) != 1 or not isinstance(args[0], dict):
            self.fail("type/mismatch", "T.func_attr takes a dict", call)
        span = self.span(call)
        for key, value in args[0].items():
            first = self.func_attr_spans.get(key)
            if first is not None:       # TVM refuses a key set twice, even to one value
                self.diag("well-formed/redefinition", f"function attribute '{key}' is set twice",
                          call, related=[(first, f"'{key}' is first set here")])
                continue
            self.func_attrs.append((key, value))
            self.func_attr_spans[key] = span
        return None

    def evaluate_stmt(self, call):
        args = self._args(call)
        if len(args) != 1:
            self.fail("type/mismatch", "T.evaluate takes one value", call)
        return S.Evaluate(self._as_expr(args[0], call), self.span(call))

    # ---- thread launch -----------------------------------------------------------------------
    def launch_thread(self, target, call, s, body_stmts=None):
        args = self._args(call)
        if len(args) != 2:
            self.fail("type/mismatch", "T.launch_thread takes (thread, extent)", call)
        thread, extent = args
        extent = self._integer(self._as_expr(extent, call), "a thread extent",
                               call.args[1] if len(call.args) == 2 else call)
        if isinstance(thread, str):
            name = target.id if isinstance(target, C.Name) else thread.replace(".", "_")
            var = E.Var(name, extent.dtype, None, self.span(target) if target else None)
            tag = thread
        elif isinstance(thread, E.Var):
            var = thread
            tag = self.env_threads.get(id(var), var.name)
        else:
            self.fail("type/mismatch", "T.launch_thread takes a thread tag or variable", call)
        iv = S.IterVar(var, E.Range(E.IntImm(extent.dtype, 0), extent), "O", tag)
        span = self.span(s)
        if target is not None and isinstance(target, C.Name) and isinstance(thread, str):
            self.define(target.id, var, target, check=False)
        if body_stmts is not None:
            return S.AttrStmt(iv, "thread_extent", extent, self.body(body_stmts), span)
        return Wrap(lambda rest: S.AttrStmt(iv, "thread_extent", extent, rest, span), s)

    def env_thread(self, target, call, s, tn):
        args = self._args(call)
        if len(args) != 1 or not isinstance(args[0], str) or not isinstance(target, C.Name):
            self.fail("type/mismatch", "T.env_thread takes a thread tag", call)
        var = E.Var(target.id, "int32", None, self.span(target))
        self.env_threads[id(var)] = args[0]
        self.define(target.id, var, target)
        return None

    def launch_thread_stmt(self, call):
        return self.launch_thread(None, call, call)

    def launch_thread_assign(self, target, call, s, tn):
        return self.launch_thread(target, call, s)
