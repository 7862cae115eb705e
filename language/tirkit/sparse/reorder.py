"""The quick fix of `cost/asymptotically-dominated`: the file with one sparse iteration
rewritten in a cheaper loop order (its axes, iterator kinds and names permuted together)."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..analysis.asymptotic.iteration import iteration_at, iteration_cost, reordered


@dataclass(frozen=True)
class Reorder:
    title: str
    text: str              # the whole new file text


def cheaper_orders(result, line) -> list:
    """[Reorder] for the sparse iteration at `line` of a parsed file: one per order of the
    frontier that is asymptotically cheaper than the current one (none when it is not
    dominated, or its kernel has errors)."""
    from ..script.format import aliases, format_kernel
    for kernel in result.kernels:
        for name, f in kernel.functions:
            s = getattr(f, "span", None)
            if s is None or not (s.line <= line <= s.end_line) or not getattr(
                    f, "sparse_axes", ()):
                continue
            it = iteration_at(f, line)
            if it is None:
                return []
            r = iteration_cost(f, it)
            if r is None:
                return []
            out = []
            for order in r.better:
                g = reordered(f, it, order)
                k2 = replace(kernel, functions=[(n, g if h is f else h)
                                                for n, h in kernel.functions])
                new = format_kernel(k2, result, *aliases(result.text))
                if new is None:
                    continue
                lines = result.text.split("\n")
                c = kernel.chunk
                lines[c.start_line - 1:c.end_line] = new.rstrip("\n").split("\n")
                out.append(Reorder(f"Iterate '{it.name}' over [{', '.join(order.axes)}]: "
                                   f"{order.text}", "\n".join(lines)))
            return out
    return []


__all__ = ["Reorder", "cheaper_orders"]
