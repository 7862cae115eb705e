"""ScheduleError: a primitive refused, naming the offending loop or block with its span.

    err.primitive   'split', 'compute_at', ...
    err.kind        stable short code: 'split/non-positive-factor', ...
    err.node        the IR node (For or Block) at fault; err.node_name its name
    err.span        where it is in the source (None for nodes made by earlier primitives)
    err.related     [(span or None, message)] other nodes involved
    err.diagnostic()        -> Diagnostic(code='schedule/<kind>', ...)
    err.render(text, path)  -> caret text, as `tirkit check` prints
"""
from __future__ import annotations

from ..diagnostics import Diagnostic, Span, render_text
from ..ir import stmt as S


def node_name(node) -> str:
    if isinstance(node, S.For):
        return node.loop_var.name
    if isinstance(node, S.BlockRealize):
        return node.block.name_hint
    if isinstance(node, S.Block):
        return node.name_hint
    return getattr(node, "name", None) or type(node).__name__


def node_span(node):
    """The span that names a node: a loop's variable, a block's name string."""
    if isinstance(node, S.For):
        s = node.loop_var.span or node.span
        if s is not None and s.end_line != s.line:
            s = Span(s.line, s.column, s.line, s.column + 3, s.file)
        return s
    if isinstance(node, S.BlockRealize):
        node = node.block
    if isinstance(node, S.Block):
        return node.name_span or node.span
    return getattr(node, "span", None)


def describe(node) -> str:
    if isinstance(node, S.For):
        return f"loop '{node.loop_var.name}'"
    if isinstance(node, (S.Block, S.BlockRealize)):
        return f"block '{node_name(node)}'"
    return node_name(node)


class ScheduleError(Exception):
    def __init__(self, primitive: str, kind: str, message: str, node=None, related=()):
        self.primitive = primitive
        self.kind = kind
        self.message = message
        self.node = node
        self.node_name = node_name(node) if node is not None else None
        self.span = node_span(node) if node is not None else None
        self.related = [(node_span(n) if not isinstance(n, Span) and n is not None else n, m)
                        for n, m in related]
        super().__init__(f"{primitive}: {message}")

    @property
    def code(self) -> str:
        return "schedule/" + self.kind

    def diagnostic(self) -> Diagnostic:
        span = self.span or Span(1, 1, 1, 2)
        return Diagnostic(self.code, "error", f"{self.primitive}: {self.message}", span,
                          [(s, m) for s, m in self.related if s is not None])

    def render(self, text=None, path="<kernel>") -> str:
        d = self.diagnostic()
        if self.span is None:
            return f"{path}: error: {d.message} [{d.code}]"
        return render_text(path, text or "", d)
