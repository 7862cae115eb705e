"""Lowering state: scopes, block frames, spans and diagnostics."""
from __future__ import annotations

from ...diagnostics import Diagnostic, Span
from ...syntax import cst as C


class LowerError(Exception):
    """Aborts lowering of the current statement; the diagnostic is already recorded."""


class LoopInfo:
    __slots__ = ("var", "min", "extent", "kind", "thread", "block_depth", "span")

    def __init__(self, var, min_, extent, kind, thread, block_depth, span):
        self.var, self.min, self.extent, self.kind = var, min_, extent, kind
        self.thread, self.block_depth, self.span = thread, block_depth, span


class BlockFrame:
    """What the statements of a block body declare about the block."""

    def __init__(self, name, span, depth, is_root=False):
        self.name, self.span, self.depth, self.is_root = name, span, depth, is_root
        self.iter_vars = []
        self.iter_values = []
        self.reads = None
        self.writes = None
        self.predicate = None
        self.annotations = ()
        self.alloc_buffers = []
        self.match_buffers = []
        self.init = None
        self.has_blocks = False


class Context:
    """Scopes, frames, spans and diagnostics shared by the lowering mixins."""

    def __init__(self, file=None, line_offset=0, col_offset=0, tir_aliases=(), ir_aliases=(),
                 params_aliases=(), constants=None, spelling="classic", source_lines=None):
        self.file = file
        self.line_offset = line_offset
        self.col_offset = col_offset
        self.tir_aliases = set(tir_aliases)
        self.ir_aliases = set(ir_aliases)
        self.params_aliases = set(params_aliases)
        self.py_constants = dict(constants or {})
        self.spelling = spelling
        self.source_lines = source_lines or []
        self.diagnostics: list[Diagnostic] = []
        self.scopes: list[dict] = [{}]
        self.frames: list[BlockFrame] = []
        self.loops: dict = {}            # id(Var) -> LoopInfo
        self.binding_context = 0         # >0 while lowering block bindings / predicates
        self.func_level = True           # statements directly in the function body
        self.sym_vars = []
        self.module = None               # ModuleBuilder while lowering an ir_module
        self.consts = None               # constant table builder

    # ---- spans and diagnostics ---------------------------------------------------------
    def span(self, node) -> Span:
        if node is None:
            return None
        return Span(node.line + self.line_offset, node.col + self.col_offset,
                    node.end_line + self.line_offset, node.end_col + self.col_offset, self.file)

    def tok_span(self, tok) -> Span:
        return Span(tok.line + self.line_offset, tok.column + self.col_offset,
                    tok.end_line + self.line_offset, tok.end_column + self.col_offset, self.file)

    def diag(self, code, message, node, severity="error", related=None):
        span = node if isinstance(node, Span) else self.span(node)
        self.diagnostics.append(Diagnostic(code, severity, message, span, list(related or [])))

    def fail(self, code, message, node, related=None):
        self.diag(code, message, node, related=related)
        raise LowerError(message)

    # ---- scopes -------------------------------------------------------------------------
    def push(self):
        self.scopes.append({})

    def pop(self):
        self.scopes.pop()

    def define(self, name, value, node=None, check=True):
        scope = self.scopes[-1]
        if check and name in scope and node is not None and not isinstance(scope[name], LoopInfo):
            prev = scope[name]
            prev_span = getattr(prev, "span", None)
            self.diag("well-formed/redefinition",
                      f"'{name}' is defined twice in the same scope", node,
                      related=[(prev_span, f"first definition of '{name}'")] if prev_span else None)
        scope[name] = value

    def lookup(self, name):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return _MISSING

    @property
    def frame(self) -> BlockFrame | None:
        return self.frames[-1] if self.frames else None

    def block_depth(self) -> int:
        return len(self.frames)

    def t_name(self, node) -> str | None:
        """`T.x.y` -> 'x.y' when the head is a tir alias, else None."""
        node = C.unparen(node)
        parts = []
        while isinstance(node, C.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, C.Name) and node.id in self.tir_aliases and parts:
            if self.lookup(node.id) is not _MISSING:
                return None
            return ".".join(reversed(parts))
        return None


class _Missing:
    def __repr__(self):
        return "<missing>"


_MISSING = _Missing()
MISSING = _MISSING


class _Failed:
    """What a name holds when the statement that defines it failed (and said why)."""

    def __repr__(self):
        return "<failed definition>"


FAILED = _Failed()


