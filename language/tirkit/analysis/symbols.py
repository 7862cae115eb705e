"""A position index of a parsed file: which buffer, variable or block is at line:column,
where it is defined, and every place that names it.

    index = SymbolIndex(result)                 # result: tirkit.parse(...)
    sym = index.at(line, column)                # 1-based line and column (code points)
    sym.kind, sym.name, sym.def_span, sym.uses  # uses: spans of every name token, def included

Definitions come from the IR (spans on `Var`, `Buffer`, `Block.name_span`); uses come from
the identifier tokens of each kernel's text, resolved to the innermost definition of that
name whose scope holds the token.  Attribute names (`T.grid`) and keyword-argument names are
not uses, except `Module.f`, a use of the module's function f (function_symbols.py); strings
and comments are skipped.
"""
from __future__ import annotations

import keyword
import re
import threading
from dataclasses import dataclass, field

from ..diagnostics import Span
from ..ir import expr as E
from ..lru import LRU
from ..ir import stmt as S
from ..ir.visit import child_fields
from .function_symbols import FunctionSymbols

_IDENT = re.compile(r"[A-Za-z_]\w*")


@dataclass(eq=False)
class Symbol:
    kind: str                   # "buffer" | "var" | "block" | "function"
    name: str
    node: object                # Buffer | Var | Block
    def_span: Span              # the defining name
    scope: Span                 # where the name is visible
    func: object                # the PrimFunc it belongs to
    role: str = ""              # "param", "loop", "iter", "alloc", "match", "let", "const", ...
    owner: object = None        # For for loops, Block for iterators/allocs, stmt for lets
    uses: list = field(default_factory=list)


@dataclass
class Token:
    name: str
    span: Span
    attribute: bool = False     # preceded by `.` (`T.grid`): `base` is the name before the dot
    base: str = ""
    keyword_arg: bool = False


def _pos(span: Span, end=False):
    return (span.end_line, span.end_column) if end else (span.line, span.column)


def _inside(scope: Span, line: int, col: int) -> bool:
    return (scope.line, scope.column) <= (line, col) <= (scope.end_line, scope.end_column)


def scan_tokens(lines, first: int, last: int) -> list:
    """Identifier tokens of lines[first-1:last] (1-based, inclusive), outside strings and
    comments; flags attributes and keyword arguments."""
    out = []
    depth = 0
    in_str = None               # the closing quote of a string left open across lines
    pending_kw = None
    for ln in range(first, last + 1):
        if ln - 1 >= len(lines):
            break
        text = lines[ln - 1]
        i, n = 0, len(text)
        while i < n:
            if in_str:
                j = text.find(in_str, i)
                if j < 0:
                    i = n
                    break
                i = j + len(in_str)
                in_str = None
                continue
            c = text[i]
            if c == "#":
                break
            if c in "\"'":
                q = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else c
                j = i + len(q)
                while j < n:
                    if text[j] == "\\":
                        j += 2
                        continue
                    if text.startswith(q, j):
                        break
                    j += 1
                if j >= n:
                    if len(q) == 3:
                        in_str = q
                    i = n
                    break
                i = j + len(q)
                continue
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth = max(0, depth - 1)
            if c.isalpha() or c == "_":
                m = _IDENT.match(text, i)
                word = m.group(0)
                j = m.end()
                if not keyword.iskeyword(word):
                    k = i - 1
                    while k >= 0 and text[k] == " ":
                        k -= 1
                    attr = k >= 0 and text[k] == "."
                    base = ""
                    if attr:
                        mb = re.search(r"([A-Za-z_]\w*)\s*$", text[:k])
                        base = mb.group(1) if mb else ""
                    rest = text[j:].lstrip(" ")
                    kw = depth > 0 and rest.startswith("=") and not rest.startswith("==")
                    out.append(Token(word, Span(ln, i + 1, ln, j + 1), attr, base, kw))
                i = j
                continue
            if c.isdigit():
                m = re.compile(r"[\w.]+").match(text, i)
                i = m.end()
                continue
            i += 1
    del pending_kw
    return out


_tokens = LRU(8192)         # text of a definition's lines -> its tokens, from its line 1


def tokens_of(lines, first: int, last: int) -> list:
    """`scan_tokens(lines, first, last)`, lexed once per text: a definition seen before,
    wherever it was, has its tokens moved to `first`."""
    text = "\n".join(lines[first - 1:last])
    hit = _tokens.get(text)
    if hit is None:
        hit = tuple((t.name, t.span.line, t.span.column, t.span.end_line, t.span.end_column,
                     t.attribute, t.base, t.keyword_arg)
                    for t in scan_tokens(text.split("\n"), 1, last - first + 1))
        _tokens.put(text, hit)
    off = first - 1
    return [Token(name, Span(line + off, col, end_line + off, end_col), attr, base, kw)
            for name, line, col, end_line, end_col, attr, base, kw in hit]


def _name_span(lines, span: Span, name: str):
    """The span of `name` as a whole word on the first line of `span`, at or after its start."""
    if span is None or span.line - 1 >= len(lines):
        return None
    text = lines[span.line - 1]
    m = re.compile(r"(?<![\w.])" + re.escape(name) + r"(?!\w)").search(text, span.column - 1)
    if not m:
        return None
    return Span(span.line, m.start() + 1, span.line, m.end() + 1, span.file)


class SymbolIndex(FunctionSymbols):
    """Functions are indexed lazily, the first time a query touches their lines; the module's
    functions are symbols too (function_symbols.py)."""

    def __init__(self, result):
        self.result = result
        self.lines = result.text.split("\n")
        self._symbols: list = []
        self._tokens: list = []                 # (Token, Symbol | None)
        self._blocks: list = []                 # block Symbols
        self._loops: list = []                  # For nodes with spans
        self._by_node: dict = {}
        self._funcs = [f for _, f in result.module.functions
                       if isinstance(f, S.PrimFunc) and f.span is not None]
        self._done: set = set()
        self._lock = threading.RLock()          # queries may come from several threads
        self._by_function = None                # name -> function Symbol (function_symbols.py)

    def _ensure(self, f) -> None:
        if id(f) in self._done:
            return
        with self._lock:
            if id(f) in self._done:
                return
            try:
                self._index_function(f)
            except RecursionError:
                pass
            self._done.add(id(f))

    def index_lines(self, first: int, last: int) -> None:
        """Index every function that overlaps lines first..last (1-based)."""
        for f in self._funcs:
            if f.span.line <= last and f.span.end_line >= first:
                self._ensure(f)

    def loops_in(self, first: int, last: int) -> list:
        """Loops whose `for` line is within first..last."""
        self.index_lines(first, last)
        return [x for x in self._loops if first <= x.span.line <= last]

    def symbols_in(self, first: int, last: int) -> list:
        """Symbols defined within lines first..last."""
        self.index_lines(first, last)
        return [x for x in self._symbols if first <= x.def_span.line <= last]

    def _all(self):
        for f in self._funcs:
            self._ensure(f)

    @property
    def symbols(self) -> list:
        self._all()
        return self._symbols

    @property
    def tokens(self) -> list:
        self._all()
        return self._tokens

    @property
    def blocks(self) -> list:
        self._all()
        return self._blocks

    @property
    def loops(self) -> list:
        self._all()
        return self._loops

    # -------------------------------------------------------------- building
    def _add(self, kind, name, node, span, scope, func, role="", owner=None):
        if id(node) in self._by_node or span is None or scope is None:
            return None
        ds = _name_span(self.lines, span, name) if kind != "block" else span
        if ds is None:
            return None
        sym = Symbol(kind, name, node, ds, scope, func, role, owner)
        self._by_node[id(node)] = sym
        self._symbols.append(sym)
        return sym

    def _index_function(self, f: S.PrimFunc):
        fscope = f.span
        data_of_buffers = set()
        for v in f.params:
            if f.buffer_of(v) is None:
                self._add("var", v.name, v, v.span, fscope, f, "param")
        for v, b in f.buffer_map:
            self._add("buffer", b.name, b, b.span, fscope, f, "param")
            data_of_buffers.add(id(b.data))
        self._stmt(f.body, fscope, f, data_of_buffers)
        # variables that nothing above defines (symbolic shapes: `n = T.int32()`)
        seen = set()

        def leftovers(x):
            if isinstance(x, E.Var) and id(x) not in seen:
                seen.add(id(x))
                if id(x) not in data_of_buffers:
                    role = "param" if any(p is x for p in f.params) else "size"
                    self._add("var", x.name, x, x.span, fscope, f, role)
            elif isinstance(x, S.Buffer):
                self._walk(x.shape, leftovers)
            return True
        self._walk(f, leftovers)
        syms = [s for s in self._symbols if s.func is f]
        toks = tokens_of(self.lines, fscope.line, fscope.end_line)
        by_name: dict = {}
        for s in syms:
            if s.kind != "block":
                by_name.setdefault(s.name, []).append(s)
        for t in toks:
            sym = None
            if not t.attribute and not t.keyword_arg:
                sym = self._resolve(by_name.get(t.name, ()), t.span.line, t.span.column)
                if sym is not None:
                    sym.uses.append(t.span)
            if sym is None and not t.keyword_arg:
                sym = self.function_token(t)
            self._tokens.append((t, sym))
        for s in syms:
            if s.kind == "block":
                s.uses.append(s.def_span)
            else:
                s.uses.append(s.def_span)
            uniq = {(u.line, u.column): u for u in reversed(s.uses)}
            s.uses = [uniq[k] for k in sorted(uniq)]

    @staticmethod
    def _walk(node, fn):
        from ..ir.visit import walk
        walk(node, fn)

    @staticmethod
    def _resolve(cands, line, col):
        best = None
        for s in cands:
            if _inside(s.scope, line, col):
                if best is None or _pos(s.scope) >= _pos(best.scope):
                    best = s
        return best

    def _stmt(self, s, container: Span, f, data_ids):
        if s is None:
            return
        if isinstance(s, (tuple, list)):
            for x in s:
                self._stmt(x, container, f, data_ids)
            return
        t = type(s)
        tail = None
        if getattr(s, "span", None) is not None and container is not None:
            tail = Span(s.span.line, s.span.column, container.end_line, container.end_column,
                        s.span.file)
        if t is S.For:
            if s.span is not None:
                self._loops.append(s)
            self._add("var", s.loop_var.name, s.loop_var, s.loop_var.span, s.span or container,
                      f, "loop", s)
            self._stmt(s.body, s.span or container, f, data_ids)
            return
        if t is S.Block:
            scope = s.span or container
            if s.span is not None and s.name_span is not None:
                sym = self._add("block", s.name_hint, s, s.name_span, scope, f, "block", s)
                if sym is not None:
                    self._blocks.append(sym)
            for iv in s.iter_vars:
                self._add("var", iv.var.name, iv.var, iv.var.span, scope, f, "iter", s)
            for b in s.alloc_buffers:
                data_ids.add(id(b.data))
                self._add("buffer", b.name, b, b.span, scope, f, "alloc", s)
            for m in s.match_buffers:
                data_ids.add(id(m.buffer.data))
                self._add("buffer", m.buffer.name, m.buffer, m.buffer.span, scope, f, "match", s)
            self._stmt(s.init, scope, f, data_ids)
            self._stmt(s.body, scope, f, data_ids)
            return
        if t is S.BlockRealize:
            self._stmt(s.block, container, f, data_ids)
            return
        if t is S.LetStmt:
            self._add("var", s.var.name, s.var, s.var.span, tail or container, f, "let", s)
        elif t in (S.Allocate, S.AllocateConst):
            self._add("var", s.buffer_var.name, s.buffer_var, s.buffer_var.span,
                      tail or container, f, "const" if t is S.AllocateConst else "allocate", s)
        elif t is S.DeclBuffer:
            data_ids.add(id(s.buffer.data))
            self._add("buffer", s.buffer.name, s.buffer, s.buffer.span, tail or container, f,
                      "decl", s)
        elif t is S.AttrStmt and isinstance(s.node, S.IterVar):
            self._add("var", s.node.var.name, s.node.var, s.node.var.span, tail or container,
                      f, "thread", s)
        if isinstance(s, S.Stmt):
            for name in child_fields(t):
                v = getattr(s, name)
                if isinstance(v, S.Stmt) or (isinstance(v, (tuple, list)) and v and
                                             isinstance(v[0], S.Stmt)):
                    self._stmt(v, container, f, data_ids)

    # -------------------------------------------------------------- queries
    def symbol_of(self, node):
        self._all()
        return self._by_node.get(id(node))

    def token_at(self, line: int, col: int):
        """(Token, Symbol | None) under line:col (1-based), or None."""
        self.index_lines(line, line)
        for t, sym in self._tokens:
            sp = t.span
            if sp.line == line and sp.column <= col <= sp.end_column:
                return t, sym
        return None

    def at(self, line: int, col: int):
        """The symbol at line:col: a named buffer/variable, or a block by its name string."""
        hit = self.token_at(line, col)
        if hit and hit[1] is not None:
            if hit[1].kind == "function":
                self._all()                     # its calls in every function
            return hit[1]
        for b in self._blocks:
            if _inside(b.def_span, line, col):
                return b
        return None

    def block_at_line(self, line: int):
        """The block whose `with T.block(...)` line is `line`."""
        self.index_lines(line, line)
        for b in self._blocks:
            if b.node.span is not None and b.node.span.line == line:
                return b
        return None

    def loop_at_line(self, line: int):
        """The outermost loop whose `for` line is `line`."""
        self.index_lines(line, line)
        for s in self._loops:
            if s.span.line == line:
                return s
        return None

    def function_at(self, line: int):
        for f in self._funcs:
            if f.span.line <= line <= f.span.end_line:
                return f
        return None

    def names_in_function(self, f) -> set:
        self._ensure(f)
        return {t.name for t, _ in self._tokens
                if f.span.line <= t.span.line <= f.span.end_line and not t.attribute}

    def rename_conflict(self, sym: Symbol, new_name: str):
        """Why renaming `sym` to `new_name` is refused, or None when it is safe."""
        if not new_name.isidentifier() or keyword.iskeyword(new_name):
            return f"'{new_name}' is not a valid name"
        if new_name == sym.name:
            return None
        if sym.kind == "function":
            return self.function_rename_conflict(sym, new_name)
        if new_name in self.names_in_function(sym.func):
            return f"'{new_name}' is already used in '{sym.func.name}'"
        return None


__all__ = ["SymbolIndex", "Symbol", "Token", "scan_tokens", "tokens_of"]
