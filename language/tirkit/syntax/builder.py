"""Builds the CST while lark parses (an embedded LALR transformer: no intermediate tree).

Every token is kept, so each node's span runs from its first to its last token.
"""
from __future__ import annotations

import ast
import warnings

from lark import Transformer

from . import cst as C
from .indenter import TOKEN_TYPES as Token


def _start(x):
    if isinstance(x, Token):
        return x.line, x.column
    return x.line, x.col


def _end(x):
    if isinstance(x, Token):
        return x.end_line, x.end_column
    return x.end_line, x.end_col


def _pos(node, first, last):
    node.line, node.col = _start(first)
    node.end_line, node.end_col = _end(last)
    return node


def _nodes(children):
    return [c for c in children if not isinstance(c, Token)]


def _is_tok(x, value=None):
    return isinstance(x, Token) and (value is None or x.value == value)


def _flatten_stmts(items):
    out = []
    for it in items:
        if isinstance(it, list):
            out.extend(it)
        elif isinstance(it, C.Node):
            out.append(it)
    return out


class _Else:
    __slots__ = ("body", "tok")

    def __init__(self, body, tok):
        self.body, self.tok = body, tok


def _last_of(body, fallback):
    return body[-1] if body else fallback


class CSTBuilder(Transformer):
    """Rule callbacks: lark calls each with the rule's children (tokens included)."""

    # ---- module and statements -------------------------------------------------------
    def file_input(self, ch):
        body = _flatten_stmts(ch)
        m = C.Module(body)
        if body:
            return _pos(m, body[0], body[-1])
        return m.set_pos(1, 1, 1, 1)

    def simple_stmt(self, ch):
        return [c for c in ch if isinstance(c, C.Node)]

    def assign(self, ch):
        parts = _nodes(ch)
        return _pos(C.Assign(parts[:-1], parts[-1]), ch[0], ch[-1])

    def annassign(self, ch):
        parts = _nodes(ch)
        value = parts[2] if len(parts) > 2 else None
        return _pos(C.AnnAssign(parts[0], parts[1], value), ch[0], ch[-1])

    def augassign(self, ch):
        return _pos(C.AugAssign(ch[0], ch[1].value[:-1], ch[2]), ch[0], ch[-1])

    def pass_stmt(self, ch):
        return _pos(C.Pass(), ch[0], ch[0])

    def break_stmt(self, ch):
        return _pos(C.Break(), ch[0], ch[0])

    def continue_stmt(self, ch):
        return _pos(C.Continue(), ch[0], ch[0])

    def return_stmt(self, ch):
        value = ch[1] if len(ch) > 1 else None
        return _pos(C.Return(value), ch[0], ch[-1])

    def assert_stmt(self, ch):
        parts = _nodes(ch)
        return _pos(C.Assert(parts[0], parts[1] if len(parts) > 1 else None), ch[0], ch[-1])

    def decorator(self, ch):
        return ch[1]

    def decorated(self, ch):
        decorators = [c for c in ch[:-1] if isinstance(c, C.Node)]
        d = ch[-1]
        d.decorators = decorators
        return d

    def funcdef(self, ch):
        name = ch[1]
        params, returns = [], None
        i = 3
        if isinstance(ch[i], list):
            params = ch[i]
            i += 1
        i += 1  # ')'
        if _is_tok(ch[i], "->"):
            returns = ch[i + 1]
            i += 2
        body = ch[-1]
        f = C.FunctionDef(name.value, params, returns, body, [])
        f.aux = name
        return _pos(f, ch[0], _last_of(body, ch[-2]))

    def parameters(self, ch):
        return _nodes(ch)

    def param(self, ch):
        name = ch[0]
        ann = default = None
        i = 1
        while i < len(ch):
            if _is_tok(ch[i], ":"):
                ann = ch[i + 1]
            elif _is_tok(ch[i], "="):
                default = ch[i + 1]
            i += 2
        return _pos(C.Param(name.value, ann, default, ""), name, ch[-1])

    def star_param(self, ch):
        return _pos(C.Param(ch[1].value, None, None, "*"), ch[0], ch[1])

    def starstar_param(self, ch):
        return _pos(C.Param(ch[1].value, None, None, "**"), ch[0], ch[1])

    def classdef(self, ch):
        name = ch[1]
        bases = []
        for c in ch[2:-1]:
            if isinstance(c, list):
                bases = c
        body = ch[-1]
        k = C.ClassDef(name.value, bases, body, [])
        k.aux = name
        return _pos(k, ch[0], _last_of(body, ch[-2]))

    def if_stmt(self, ch):
        node = C.If(ch[1], ch[3], [])
        _pos(node, ch[0], _last_of(ch[3], ch[2]))
        cur = node
        for c in ch[4:]:
            if isinstance(c, C.If):          # elif
                cur.orelse = [c]
                cur = c
            elif isinstance(c, _Else):
                cur.orelse = c.body
        self._fix_if_end(node)
        return node

    def _fix_if_end(self, node):
        if node.orelse:
            last = node.orelse[-1]
            if isinstance(last, C.If):
                self._fix_if_end(last)
            node.end_line, node.end_col = last.end_line, last.end_col

    def elif_clause(self, ch):
        node = C.If(ch[1], ch[3], [])
        return _pos(node, ch[0], _last_of(ch[3], ch[2]))

    def else_clause(self, ch):
        return _Else(ch[2], ch[0])

    def for_stmt(self, ch):
        orelse = ch[6].body if len(ch) > 6 and isinstance(ch[6], _Else) else []
        body = ch[5]
        node = C.For(ch[1], ch[3], body, orelse)
        return _pos(node, ch[0], _last_of(orelse or body, ch[4]))

    def while_stmt(self, ch):
        orelse = ch[4].body if len(ch) > 4 and isinstance(ch[4], _Else) else []
        node = C.While(ch[1], ch[3], orelse)
        return _pos(node, ch[0], _last_of(orelse or ch[3], ch[2]))

    def with_stmt(self, ch):
        items = [c for c in ch[1:-2] if isinstance(c, C.WithItem)]
        body = ch[-1]
        return _pos(C.With(items, body), ch[0], _last_of(body, ch[-2]))

    def with_item(self, ch):
        target = ch[2] if len(ch) > 2 else None
        return _pos(C.WithItem(ch[0], target), ch[0], ch[-1])

    def suite(self, ch):
        return _flatten_stmts(ch)

    # ---- expressions -------------------------------------------------------------------
    def target_tuple(self, ch):
        if len(ch) == 1:
            return ch[0]
        elts = _nodes(ch)
        return _pos(C.TupleExpr(elts, False), ch[0], ch[-1])

    tuple_bare = target_tuple

    def ifexp(self, ch):
        return _pos(C.IfExp(ch[2], ch[0], ch[4]), ch[0], ch[-1])

    def lambdef(self, ch):
        params = ch[1] if isinstance(ch[1], list) else []
        return _pos(C.Lambda(params, ch[-1]), ch[0], ch[-1])

    def lambda_params(self, ch):
        return [c.value for c in ch if c.type == "NAME"]

    def or_op(self, ch):
        return _pos(C.BoolOp("or", _nodes(ch)), ch[0], ch[-1])

    def and_op(self, ch):
        return _pos(C.BoolOp("and", _nodes(ch)), ch[0], ch[-1])

    def not_op(self, ch):
        node = C.UnaryOp("not", ch[1])
        node.aux = ch[0]
        return _pos(node, ch[0], ch[1])

    def compare(self, ch):
        ops = [" ".join(t.value.split()) for t in ch[1::2]]
        node = C.Compare(ch[0], ops, ch[2::2])
        node.aux = ch[1::2]
        return _pos(node, ch[0], ch[-1])

    def binop_chain(self, ch):
        left = ch[0]
        for i in range(1, len(ch), 2):
            right = ch[i + 1]
            node = C.BinOp(ch[i].value, left, right)
            node.aux = ch[i]
            left = _pos(node, ch[0], right)
        return left

    def unary(self, ch):
        node = C.UnaryOp(ch[0].value, ch[1])
        node.aux = ch[0]
        return _pos(node, ch[0], ch[1])

    def power(self, ch):
        if len(ch) == 1:
            return ch[0]
        node = C.BinOp("**", ch[0], ch[2])
        node.aux = ch[1]
        return _pos(node, ch[0], ch[2])

    def call(self, ch):
        args, kws = [], []
        if isinstance(ch[2], list):
            for a in ch[2]:
                (kws if isinstance(a, C.Keyword) else args).append(a)
        node = C.Call(ch[0], args, kws)
        node.aux = ch[1]
        return _pos(node, ch[0], ch[-1])

    def arguments(self, ch):
        return _nodes(ch)

    def kwarg(self, ch):
        node = C.Keyword(ch[0].value, ch[2])
        node.aux = ch[0]
        return _pos(node, ch[0], ch[2])

    def star_arg(self, ch):
        return _pos(C.Starred(ch[1], False), ch[0], ch[1])

    def starstar_arg(self, ch):
        return _pos(C.Keyword(None, ch[1]), ch[0], ch[1])

    def subscript(self, ch):
        node = C.Subscript(ch[0], ch[2])
        node.aux = ch[1]
        return _pos(node, ch[0], ch[-1])

    def subscripts(self, ch):
        return _nodes(ch)

    def slice(self, ch):
        parts = [None, None, None]
        k = 0
        for c in ch:
            if _is_tok(c, ":"):
                k += 1
            else:
                parts[k] = c
        return _pos(C.Slice(*parts), ch[0], ch[-1])

    def attribute(self, ch):
        node = C.Attribute(ch[0], ch[2].value)
        node.aux = ch[2]
        return _pos(node, ch[0], ch[2])

    def empty_tuple(self, ch):
        return _pos(C.TupleExpr([], True), ch[0], ch[1])

    def paren(self, ch):
        inner = ch[1]
        if isinstance(inner, C.TupleExpr) and not inner.parenthesized:
            inner.parenthesized = True
            return _pos(inner, ch[0], ch[2])
        return _pos(C.Paren(inner), ch[0], ch[2])

    def list(self, ch):
        return _pos(C.ListExpr(_nodes(ch)), ch[0], ch[-1])

    def dict(self, ch):
        items = [c for c in ch if isinstance(c, tuple)]
        return _pos(C.DictExpr([k for k, _ in items], [v for _, v in items]), ch[0], ch[-1])

    def dict_item(self, ch):
        return (ch[0], ch[2])

    def name(self, ch):
        return _pos(C.Name(ch[0].value), ch[0], ch[0])

    def number(self, ch):
        tok = ch[0]
        s = tok.value
        if tok.type == "IMAG_NUMBER":
            value = complex(s.replace("_", ""))
        elif tok.type == "FLOAT_NUMBER":
            value = float(s.replace("_", ""))
        else:
            value = int(s, 0) if tok.type != "DEC_NUMBER" else int(s.replace("_", ""))
        return _pos(C.Constant(value, s), tok, tok)

    def strings(self, ch):
        value, raw = None, []
        for c in ch:
            raw.append(c.raw)
            value = c.value if value is None else value + c.value
        return _pos(C.Constant(value, " ".join(raw)), ch[0], ch[-1])

    def string(self, ch):
        tok = ch[0]
        try:
            with warnings.catch_warnings():    # an invalid escape is the user's business
                warnings.simplefilter("ignore")
                value = ast.literal_eval(tok.value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = tok.value          # f-strings and the like stay raw
        return _pos(C.Constant(value, tok.value), tok, tok)

    def const_none(self, ch):
        return _pos(C.Constant(None, "None"), ch[0], ch[0])

    def const_true(self, ch):
        return _pos(C.Constant(True, "True"), ch[0], ch[0])

    def const_false(self, ch):
        return _pos(C.Constant(False, "False"), ch[0], ch[0])

    def ellipsis(self, ch):
        return _pos(C.Constant(Ellipsis, "..."), ch[0], ch[0])
