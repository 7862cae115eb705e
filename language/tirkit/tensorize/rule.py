"""tensorize/available (hint): a block that an intrinsic of the target can serve.

For each reduction block, the intrinsics of the target (`llvm`: this CPU's features; the
shipped ones, those in $TIRKIT_INTRINSICS and the configured folders) are mapped onto it (`tirkit.tensorize.mapping`);
the best feasible one is reported on the block's name with its padding and estimated
speed-up. Its quick fix applies `auto_tensorize` (schedule/actions). The rule sits with the
intrinsics it reads (above the script layer that parses them), in the verify registry: the
`tirkit` package imports this module, so every check runs it."""
from __future__ import annotations

from ..diagnostics import Diagnostic, Span
from ..verify import register
from ..analysis.accesses import accesses
from .suggest import block_mappings, message

CODE = "tensorize/available"


def target_name(target):
    if target is None:
        return "llvm"
    return getattr(target, "name", target)


@register(CODE, fast=True)
def check_tensorize_available(func, ctx):
    out = []
    target = target_name(ctx.target)
    if str(target).startswith("cuda"):
        return out
    for r in accesses(func, ctx.cache).realizes:     # every block, in order, walked once
        if r.block.name_hint == "root":
            continue
        s = r.block.name_span or r.span
        if s is None:
            continue
        ok, _ = block_mappings(r, target, dirs=list(ctx.intrinsics) or None)
        if ok:
            out.append(Diagnostic(CODE, "hint", message(ok[0]),
                                  Span(s.line, s.column, s.end_line, s.end_column, s.file)))
    return out
