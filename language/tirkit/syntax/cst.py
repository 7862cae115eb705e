"""Concrete syntax tree: the Python subset of kernels, with exact positions.

Positions are 1-based lines and columns; ``end_col`` is exclusive.  Comments are trivia:
they are collected by the indenter and attached to statements by the lowering.
"""
from __future__ import annotations

from ..diagnostics import Span


class Node:
    # aux: the one token a node keeps for precise ranges (a def's or keyword's name, an
    # operator, an attribute name, the opening bracket of a call or subscript)
    __slots__ = ("line", "col", "end_line", "end_col", "aux")
    _fields: tuple = ()

    def span(self, file=None) -> Span:
        return Span(self.line, self.col, self.end_line, self.end_col, file)

    def set_pos(self, line, col, end_line, end_col):
        self.line, self.col, self.end_line, self.end_col = line, col, end_line, end_col
        return self

    def __repr__(self):
        args = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__name__}({args})"


def _node(name, fields):
    """Declare a CST node class with the given fields (a compact, slotted record)."""
    fields = tuple(fields.split())

    def __init__(self, *args):
        self.aux = None
        for f, a in zip(fields, args):
            setattr(self, f, a)

    return type(name, (Node,), {"__slots__": fields, "_fields": fields, "__init__": __init__})


# Expressions
Name = _node("Name", "id")
Constant = _node("Constant", "value raw")          # int, float, complex, str, bytes, bool, None, Ellipsis
Attribute = _node("Attribute", "value attr")        # attr: str; attr position in attr_col
Call = _node("Call", "func args keywords")          # keywords: list[Keyword]
Keyword = _node("Keyword", "arg value")             # arg: str | None ('**')
Starred = _node("Starred", "value double")
Subscript = _node("Subscript", "value indices")     # indices: list[expr | Slice]
Slice = _node("Slice", "lower upper step")
TupleExpr = _node("TupleExpr", "elts parenthesized")
ListExpr = _node("ListExpr", "elts")
DictExpr = _node("DictExpr", "keys values")
BinOp = _node("BinOp", "op left right")             # op: '+', '-', '*', '/', '//', '%', '**', ...
UnaryOp = _node("UnaryOp", "op operand")            # op: '-', '+', '~', 'not'
BoolOp = _node("BoolOp", "op values")               # op: 'and' | 'or'
Compare = _node("Compare", "left ops comparators")
IfExp = _node("IfExp", "test body orelse")
Lambda = _node("Lambda", "params body")
Paren = _node("Paren", "value")                     # parenthesized expression (kept for spans)

# Statements
ExprStmt = _node("ExprStmt", "value")
Assign = _node("Assign", "targets value")
AugAssign = _node("AugAssign", "target op value")
AnnAssign = _node("AnnAssign", "target annotation value")
Pass = _node("Pass", "")
Break = _node("Break", "")
Continue = _node("Continue", "")
Return = _node("Return", "value")
Assert = _node("Assert", "test msg")
For = _node("For", "target iter body orelse")
While = _node("While", "test body orelse")
If = _node("If", "test body orelse")                # orelse: list[stmt]; elif becomes nested If
With = _node("With", "items body")
WithItem = _node("WithItem", "context target")
Param = _node("Param", "name annotation default kind")   # kind: '', '*', '**'
FunctionDef = _node("FunctionDef", "name params returns body decorators")
ClassDef = _node("ClassDef", "name bases body decorators")
Module = _node("Module", "body")

EXPR_TYPES = (Name, Constant, Attribute, Call, Subscript, TupleExpr, ListExpr, DictExpr,
              BinOp, UnaryOp, BoolOp, Compare, IfExp, Lambda, Paren, Starred, Slice)


def unparen(e):
    while isinstance(e, Paren):
        e = e.value
    return e


def dotted_name(e) -> str | None:
    """`a.b.c` as a string, or None when `e` is not a dotted name."""
    e = unparen(e)
    parts = []
    while isinstance(e, Attribute):
        parts.append(e.attr)
        e = e.value
    if not isinstance(e, Name):
        return None
    parts.append(e.id)
    return ".".join(reversed(parts))
