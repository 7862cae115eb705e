"""cost/asymptotically-dominated (information): a sparse iteration whose loop order does
asymptotically more work than another order for every input.

The cost model is `analysis/asymptotic` (task sets, domination by homomorphism); the orders
compared are the permutations of the iteration's axes that keep each axis after its parent.
Reported on the `with T.sp_iter(...)` line; the message names the cheaper orders and both
costs.  The quick fix (server) rewrites the iteration in the first order named."""
from __future__ import annotations

from ..analysis.asymptotic.iteration import CODE, iteration_cost, sparse_iterations
from ..diagnostics import Diagnostic, Span
from . import register


@register(CODE, fast=True)
def check_asymptotic(func, ctx):
    if not func.sparse_axes:
        return []
    out = []
    for it in sparse_iterations(func):
        r = iteration_cost(func, it)
        if r is None or not r.better or it.span is None:
            continue
        s = it.span
        best = r.better[0]
        others = "".join(f"; [{', '.join(b.axes)}] too" for b in r.better[1:])
        msg = (f"sparse iteration '{it.name}' over [{', '.join(r.current.axes)}] costs "
               f"{r.current.text}; over [{', '.join(best.axes)}] it costs {best.text}, "
               f"asymptotically less for every sparsity pattern{others}")
        out.append(Diagnostic(CODE, "information", msg, Span(s.line, s.column, s.line,
                                                              s.column + 4, s.file)))
    return out
