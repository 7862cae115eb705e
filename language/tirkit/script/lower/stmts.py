"""Statements: bodies (with statements that scope over the rest), assignments, stores,
`if`, `while`, `assert`, comments attached as trivia."""
from __future__ import annotations

import dataclasses

from ...ir import dtype as D
from ...ir import expr as E
from ...ir import stmt as S
from ...syntax import cst as C
from .calls import _FreshVar
from ...ir.dtype import ERROR_DTYPE
from .context import FAILED, MISSING, LowerError
from .fold import cast_folded
from .values import _is_literal, _Subscripted

def evaluate_zero(span=None):
    return S.Evaluate(E.IntImm("int32", 0), span)


class Wrap:
    """A statement that scopes over the rest of its body (let, allocate, decl_buffer...)."""
    __slots__ = ("make", "node")

    def __init__(self, make, node):
        self.make, self.node = make, node


class StmtMixin:
    # ---- bodies -----------------------------------------------------------------------
    def body(self, stmts) -> S.Stmt:
        self.push()
        try:
            return self._body(stmts, 0)
        finally:
            self.pop()

    def _mark_failed(self, s):
        """The names a failed assignment would have defined stay known, as failed ones."""
        targets = s.targets if isinstance(s, C.Assign) else \
            [s.target] if isinstance(s, C.AnnAssign) else []
        for tg in targets:
            if isinstance(tg, C.Name) and self.lookup(tg.id) is MISSING:
                self.define(tg.id, FAILED, check=False)

    def _body(self, stmts, i) -> S.Stmt:
        out = []
        n = len(stmts)
        while i < n:
            s = stmts[i]
            # a statement's own comments are taken before its body's statements can take them
            mark = self._own_i
            lead, trail = self.comments_for(s)
            try:
                r = self.stmt(s)
            except LowerError:
                self._mark_failed(s)
                i += 1
                continue
            if r is not None:
                self.decl_prefix = False    # statements have begun: no longer the prelude
            if r is None:     # a declaration (T.reads, alloc_buffer...): the next one has them
                if self._own_i == len(lead) + mark:
                    self._own_i = mark
                if trail is not None:
                    self._trailing_comments[self._trail_line(s)] = trail
                i += 1
                continue
            if isinstance(r, Wrap):
                rest = self._body(stmts, i + 1)
                try:
                    made = r.make(rest)
                except LowerError:
                    out.append(rest)
                    break
                out.append(self._attach(made, lead, trail))
                break
            out.append(self._attach(r, lead, trail))
            i += 1
        if not out:
            return evaluate_zero()
        return S.seq(out)

    def _trivia(self, r, s):
        lead, trail = self.comments_for(s)
        return self._attach(r, lead, trail)

    @staticmethod
    def _attach(r, lead, trail):
        if lead or trail:
            r = dataclasses.replace(r, comments=tuple(lead), trailing=trail)
        return r

    @staticmethod
    def _trail_line(s):
        return s.line if isinstance(s, (C.For, C.While, C.If, C.With)) else s.end_line

    def comments_for(self, s):
        """Own-line comments before statement s (not yet taken) and its trailing comment."""
        lead = []
        own = self._own_comments
        while self._own_i < len(own) and own[self._own_i][0] < s.line:
            lead.append(own[self._own_i][1])
            self._own_i += 1
        line = s.line if isinstance(s, (C.For, C.While, C.If, C.With)) else s.end_line
        trail = self._trailing_comments.pop(line, None)
        return lead, trail

    # ---- dispatch -----------------------------------------------------------------------
    def stmt(self, s):
        if isinstance(s, C.EXPR_TYPES):
            return self.expr_statement(s, s)
        meth = getattr(self, "_s_" + type(s).__name__, None)
        if meth is None:
            self.fail("syntax", f"'{type(s).__name__.lower()}' is not supported in a kernel", s)
        return meth(s)

    def _s_Pass(self, s):
        return None

    def _s_ExprStmt(self, s):
        return self.expr_statement(s, s.value)

    def expr_statement(self, s, value):
        v = C.unparen(value)
        if isinstance(v, C.Constant) and isinstance(v.value, str):
            return None      # docstring
        if isinstance(v, C.Call):
            tn = self.t_name(v.func)
            if tn is not None:
                handler = self.FRAME_CALLS.get(tn)
                if handler is not None:
                    return getattr(self, handler)(v)
        return S.Evaluate(self.expr(value), self.span(s))

    def _s_Return(self, s):
        value = self.expr(s.value) if s.value is not None else E.IntImm("int32", 0)
        return S.Evaluate(E.Call(value.dtype, "ret", (value,), (), self.span(s)), self.span(s))

    def _s_Assert(self, s):
        cond = self.expr(s.test)
        msg = self.expr(s.msg) if s.msg is not None else E.StringImm("")
        span = self.span(s)
        return Wrap(lambda rest: S.AssertStmt(cond, msg, rest, span), s)

    def _s_If(self, s):
        cond = self.value(s.test)
        span = self.span(s)
        if not isinstance(cond, E.PrimExpr):
            # a condition known while parsing, as TVMScript evaluates it
            taken = self.plain_condition("the condition of 'if'", cond, s.test)
            return self.body(s.body) if taken else (self.body(s.orelse) if s.orelse else None)
        then = self.body(s.body)
        other = self.body(s.orelse) if s.orelse else None
        return S.IfThenElse(cond, then, other, span)

    def _s_While(self, s):
        cond = self.expr(s.test)
        return S.While(cond, self.body(s.body), self.span(s))

    def _s_Break(self, s):
        return S.Evaluate(E.Call("void", "break_loop", (), (), self.span(s)), self.span(s))

    def _s_Continue(self, s):
        return S.Evaluate(E.Call("void", "continue_loop", (), (), self.span(s)), self.span(s))

    def _s_FunctionDef(self, s):
        self.fail("syntax", "nested function definitions are not supported in a kernel", s)

    # ---- assignment ---------------------------------------------------------------------
    def _s_Assign(self, s):
        if len(s.targets) != 1:
            self.fail("syntax", "chained assignment is not supported in a kernel", s)
        target = C.unparen(s.targets[0])
        value = C.unparen(s.value)
        if isinstance(target, C.Subscript):
            return self.buffer_store(target, value, s)
        if isinstance(value, C.Call):
            tn = self.t_name(value.func)
            if tn is not None:
                handler = self.ASSIGN_CALLS.get(tn)
                if handler is not None:
                    return getattr(self, handler)(target, value, s, tn)
        v = self.value(value)
        scalar = self.scalar_assign(target, v, value, s)
        if scalar is not None:
            return scalar
        return self.bind_name(target, v, s)

    def bind_name(self, target, v, s, annotation=None):
        if isinstance(target, C.TupleExpr):
            if not isinstance(v, (tuple, list)) or len(v) != len(target.elts):
                self.fail("type/mismatch", "cannot unpack this value into "
                          f"{len(target.elts)} names", s)
            for t, x in zip(target.elts, v):
                self.bind_name(C.unparen(t), x, s)
            return None
        if not isinstance(target, C.Name):
            self.fail("syntax", "only names, tuples of names and buffer elements can be assigned",
                      target)
        name = target.id
        if isinstance(v, _FreshVar):
            var = E.Var(name, v.dtype, None, self.span(target))
            self.define(name, var, target)
            if self.func_level:
                self.sym_vars.append(var)
            return None
        if isinstance(v, E.PrimExpr) and not isinstance(v, E.Var) or (
                isinstance(v, E.Var) and annotation is not None):
            dtype = annotation or v.dtype
            if annotation and v.dtype != annotation and v.dtype != ERROR_DTYPE:
                v = self._coerce(v, annotation, s)
            var = E.Var(name, dtype, None, self.span(target))
            span = self.span(s)

            def make(rest, var=var, v=v):
                return S.LetStmt(var, v, rest, span)
            w = Wrap(make, s)
            self.define(name, var, target, check=False)
            return w
        # a Python value (int, string, buffer, var alias): a name for it while parsing
        self.define(name, v, target, check=False)
        return None

    def _coerce(self, v, dtype, s):
        if isinstance(v, E.IntImm) and D.is_float(dtype):
            return E.FloatImm(dtype, float(v.value), v.span)
        if isinstance(v, (E.IntImm, E.FloatImm)) and D.is_int(dtype) and isinstance(v, E.IntImm):
            return E.IntImm(dtype, v.value, v.span)
        return E.Cast(dtype, v, v.span)

    def _s_AnnAssign(self, s):
        target = C.unparen(s.target)
        pointer = self._let_pointer(s.annotation)
        if pointer is not None and s.value is not None and isinstance(target, C.Name):
            # `p: T.let[T.handle("int64")] = ...`: a handle with its pointer type
            v = self._as_expr(self.value(s.value), s.value)
            var = E.Var(target.id, "handle", pointer if pointer is not True else None,
                        self.span(target))
            span = self.span(s)
            self.define(target.id, var, target, check=False)
            return Wrap(lambda rest: S.LetStmt(var, v, rest, span, spelling="let"), s)
        ann = self.value(s.annotation)
        let = False
        if isinstance(ann, _Subscripted) and len(ann.items) == 1 and \
                getattr(ann.base, "name", "").endswith(".let"):
            ann, let = ann.items[0], True          # `x: T.let[T.int64] = ...`
        dtype = ann if isinstance(ann, str) and D.is_dtype(ann) else None
        if not let and s.value is not None and dtype is not None and id(s) in self.rebound:
            return self.scalar_assign(target, self.value(s.value), s.value, s,
                                      dtype=dtype)   # TVM's printed form of a local scalar
        if let and s.value is not None and dtype is not None:
            w = self._s_AnnAssign_typed(s, target, dtype)
            if isinstance(w, Wrap):
                make = w.make
                w.make = lambda rest: dataclasses.replace(make(rest), spelling="let")
            return w
        if s.value is None:
            if dtype is None:
                self.fail("type/mismatch", "expected a dtype annotation such as T.int32", s.annotation)
            return self.bind_name(target, _FreshVar(dtype, self.span(s)), s)
        if dtype is None:
            v = self.value(s.value)
            return self.bind_name(target, v, s)
        return self._s_AnnAssign_typed(s, target, dtype)

    def meta_var_assign(self, target, call, s, tn):
        """`x = T.meta_var(value)`: `x` names the value itself wherever it is used (TVMScript's
        macro-time binding), never a variable bound by a `LetStmt`."""
        if len(call.args) != 1 or call.keywords:
            self.fail("type/mismatch", "T.meta_var takes one value", call)
        v = self.value(call.args[0])
        if isinstance(target, C.Name):
            self.define(target.id, v, target, check=False)
            return None
        return self.bind_name(target, v, s)

    def bind_stmt(self, target, call, s, tn):
        """`x = T.bind(value)` (current TVM): a LetStmt spelled as a bind."""
        args = self._args(call)
        if len(args) != 1 or not isinstance(target, C.Name):
            self.fail("type/mismatch", "T.bind takes one value and binds one name", call)
        v = self._as_expr(args[0], call)
        var = E.Var(target.id, v.dtype, None, self.span(target))
        span = self.span(s)
        self.define(target.id, var, target, check=False)
        return Wrap(lambda rest: S.LetStmt(var, v, rest, span, spelling="bind"), s)

    def _let_pointer(self, ann):
        """The pointer type in `T.let[T.handle("int64")]` (True for a bare T.handle)."""
        ann = C.unparen(ann)
        if not isinstance(ann, C.Subscript) or self.t_name(ann.value) != "let" or \
                len(ann.indices) != 1:
            return None
        inner = C.unparen(ann.indices[0])
        if isinstance(inner, C.Call) and self.t_name(inner.func) == "handle":
            return self.pointer_type(inner) or True
        if self.t_name(inner) == "handle":
            return True
        return None

    def _s_AnnAssign_typed(self, s, target, dtype):
        v = self.value(s.value)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            v = E.const(v, dtype, self.span(s.value))
        if not isinstance(v, E.PrimExpr):
            self.fail("type/mismatch", "expected a value of type " + dtype, s.value)
        return self.bind_name(target, v, s, annotation=dtype)

    def _s_AugAssign(self, s):
        target = C.unparen(s.target)
        if isinstance(target, C.Name):
            return self.scalar_update(s)
        if not isinstance(target, C.Subscript):
            self.fail("syntax", "augmented assignment is only supported on buffer elements "
                      "and names", s)
        value = C.BinOp(s.op, target, s.value)
        value.set_pos(s.line, s.col, s.end_line, s.end_col)
        return self.buffer_store(target, value, s)

    # ---- buffer stores ------------------------------------------------------------------
    def store_value(self, buf, raw_value, value_node, lanes=1, ok=True):
        """A value stored into `buf`, converted to its type as TVM converts it (with the
        diagnostics a conversion deserves)."""
        want = buf.dtype if lanes == 1 else D.parse_dtype(buf.dtype).with_lanes(lanes)
        if _is_literal(raw_value) or isinstance(raw_value, bool):
            d = D.parse_dtype(want)
            if d is not None and d.is_int and isinstance(raw_value, float):
                self.diag("type/mismatch", f"a float value is stored into {buf.dtype} buffer "
                          f"'{buf.name}'", value_node)
                value = E.Cast(want, E.const(raw_value), self.span(value_node))
            else:
                value = self.convert_literal(E.const(raw_value, None, self.span(value_node)),
                                             want, value_node)
        else:
            value = self._as_expr(raw_value, value_node)
            unknown = isinstance(value, E.Call) and value.dtype == "handle"   # untyped intrinsic
            if value.dtype != want and value.dtype != ERROR_DTYPE and ok and not unknown:
                vd, bd = D.parse_dtype(value.dtype), D.parse_dtype(want)
                if isinstance(value, E.StringImm):
                    what = f"`{value.value}` names a dtype and" if D.is_dtype(value.value) \
                        else f"the string {value.value!r}"      # `T.float32` uncalled
                    self.diag("type/mismatch", f"{what} is not a value of {buf.dtype} buffer "
                              f"'{buf.name}'", value_node)
                elif vd is not None and bd is not None and vd.lanes == 1 and bd.lanes > 1:
                    value = E.Broadcast(value, bd.lanes, want)
                elif vd is not None and bd is not None and vd.lanes == bd.lanes:
                    # TVM converts the value to the buffer's type; a float stored into an
                    # integer buffer loses its fraction (an error), any other conversion is
                    # legal but worth seeing (a warning); the IR holds the Cast TVM makes
                    lossy = vd.is_float and not bd.is_float
                    art = "an" if value.dtype.startswith("int") else "a"
                    self.diag("type/mismatch",
                              f"storing {art} {value.dtype} value into {buf.dtype} buffer "
                              f"'{buf.name}' converts it{' and drops its fraction' if lossy else ''}"
                              f" (write T.Cast(\"{buf.dtype}\", ...) to say so)", value_node,
                              severity="error" if lossy else "warning")
                    value = cast_folded(want, value)
                else:
                    self.diag("type/mismatch",
                              f"storing a {value.dtype} value into {buf.dtype} buffer "
                              f"'{buf.name}' (add T.Cast(\"{buf.dtype}\", ...))", value_node)
        return value

    def buffer_store(self, target, value_node, s):
        buf = self.value(target.value)
        if not isinstance(buf, S.Buffer):
            if isinstance(buf, E.Var):
                self.fail("type/mismatch", f"'{buf.name}' is not a buffer and cannot be stored to",
                          target.value)
            self.fail("type/mismatch", "only buffer elements can be stored to", target.value)
        raw = self.buffer_indices(buf, target)
        ok = self.check_index_count(buf, raw, target)
        indices, lanes = self.vector_indices(raw, store=True, node=target)
        value = self.store_value(buf, self.value(value_node), value_node, lanes, ok)
        return S.BufferStore(buf, value, tuple(indices), self.span(s))

