"""A resumable Python indenter for lark.

Lark's stock ``PythonIndenter`` keeps its state on the instance and resets it on every
``lex()`` call, which breaks error recovery and sharing between threads.  Here all state
lives in a ``LexState`` made per ``process()`` call; the parser reads it after a failure
(open brackets, last token) to place the syntax diagnostic precisely.
"""
from __future__ import annotations

import threading

from lark import Token

try:                                  # the compiled LALR parser's tokens (syntax/parser.py)
    from lark_cython import Token as FastToken
except ImportError:                   # optional: the pure-lark parser is the fallback
    FastToken = None

# what a lexer of either parser yields: `isinstance(x, TOKEN_TYPES)` tells tokens from nodes
TOKEN_TYPES = (Token,) if FastToken is None else (Token, FastToken)

OPEN = {"LPAR": ")", "LSQB": "]", "LBRACE": "}"}
CLOSE = {"RPAR", "RSQB", "RBRACE"}


class IndentationError_(Exception):
    """Bad indentation at (line, column): a syntax diagnostic, never a crash."""

    def __init__(self, message, line, column, end_column):
        super().__init__(message)
        self.message, self.line, self.column, self.end_column = message, line, column, end_column


class LexState:
    __slots__ = ("brackets", "comments", "last", "prev")

    def __init__(self):
        self.brackets = []      # open bracket tokens, innermost last
        self.comments = []      # (line, column, text)
        self.last = None        # last token seen
        self.prev = None        # last token that is not a newline


def _indent_width(s: str) -> int:
    width = 0
    for ch in s:
        if ch == "\t":
            width = (width // 8 + 1) * 8
        elif ch == " ":
            width += 1
        else:           # form feed resets, like CPython
            width = 0
    return width


def _comments_of(tok) -> list:
    """The comments inside a _NEWLINE token, with their positions."""
    out = []
    text = tok.value
    if "#" not in text:
        return out
    line, col = tok.line, tok.column
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append((line, col, text[i:j].rstrip("\r")))
            col += j - i
            i = j
        elif ch == "\n":
            line += 1
            col = 1
            i += 1
        else:
            col += 1
            i += 1
    return out


class Indenter:
    """lark post-lexer: turns _NEWLINE tokens into _INDENT/_DEDENT, ignoring them in brackets."""

    always_accept = ("_NEWLINE",)

    def __init__(self):
        self._local = threading.local()

    @property
    def state(self) -> LexState | None:
        return getattr(self._local, "state", None)

    def process(self, stream):
        st = LexState()
        self._local.state = st
        return self._process(stream, st)

    def _process(self, stream, st: LexState):
        indents = [0]
        brackets = st.brackets
        for tok in stream:
            st.last = tok
            typ = tok.type
            if typ != "_NEWLINE":
                st.prev = tok
            if typ == "_NEWLINE":
                if "#" in tok.value:
                    st.comments.extend(_comments_of(tok))
                if brackets:
                    continue
                yield tok
                tail = tok.value.rsplit("\n", 1)[-1]
                width = _indent_width(tail)
                if width > indents[-1]:
                    indents.append(width)
                    yield tok.new_borrow_pos("_INDENT", tail, tok)
                else:
                    while width < indents[-1]:
                        indents.pop()
                        yield tok.new_borrow_pos("_DEDENT", "", tok)
                    if width != indents[-1]:
                        line = tok.end_line
                        raise IndentationError_(
                            "unindent does not match any outer indentation level",
                            line, 1, width + 1)
            elif typ in OPEN:
                brackets.append(tok)
                yield tok
            elif typ in CLOSE:
                if brackets:
                    brackets.pop()
                yield tok
            else:
                yield tok
        while len(indents) > 1:
            indents.pop()
            yield (st.last.new_borrow_pos("_DEDENT", "", st.last) if st.last is not None
                   else Token("_DEDENT", ""))
