"""Markdown for a hover on a kernel's name: its signature, FLOPs, estimated time, blocks and
diagnostics (presentation only: the numbers come from `tirkit.analysis.summary`)."""
from __future__ import annotations

from collections import Counter

from tirkit.analysis.cost import format_seconds
from tirkit.script.printer import Printer

from .render import NOT_ESTIMATED

_ORDER = ("error", "warning", "information", "hint")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _param(pr: Printer, p) -> str:
    if p.shape is None:
        return f"{p.name}: {p.dtype}"
    dims = ", ".join(pr.expr(e) for e in p.shape)
    scope = f" ({p.scope})" if p.scope != "global" else ""
    return f"{p.name}: {p.dtype}[{dims}]{scope}"


def diagnostics_text(diagnostics) -> str:
    """`none`, or `3 (2 errors, 1 warning)`."""
    if not diagnostics:
        return "none"
    by = Counter(d.severity for d in diagnostics)
    parts = [_plural(by[s], s) for s in _ORDER if by.get(s)]
    return f"{len(diagnostics)} ({', '.join(parts)})"


def kernel_markdown(func, summary, diagnostics, module_name=None, predicted=None,
                    partial=False, callers="") -> str:
    """`summary`: a `KernelSummary` of `func`; `diagnostics`: the core diagnostics inside it;
    `predicted`: the cost model's predicted seconds (None: no line); `partial`: the kernel
    holds errors that left its IR partial, so its FLOPs, time and blocks are not shown;
    `callers`: the line naming the module's functions that call it (render.callers_text)."""
    pr = Printer(getattr(func, "spelling", "classic"))
    where = f" in `{module_name}`" if module_name else ""
    sig = ", ".join(_param(pr, p) for p in summary.params)
    flops = summary.flops.value
    time = format_seconds(summary.seconds)
    if summary.seconds is not None:
        time += f", {summary.bound}-bound"
    if partial:
        figures = [f"- FLOPs, time and blocks: {NOT_ESTIMATED}"]
    else:
        figures = [
            f"- FLOPs: {f'{flops:,}' if flops is not None else summary.flops}",
            f"- estimated time on {summary.target} ({summary.target_label}): {time}",
        ] + ([f"- predicted {format_seconds(predicted)} (model), roofline "
              f"{format_seconds(summary.seconds)}"] if predicted is not None else []) + [
            f"- blocks: {summary.blocks}"]
    return "\n".join([
        f"**kernel** `{summary.name}`{where}",
        "",
        "```",
        f"{summary.name}({sig})",
        "```",
        "",
    ] + figures + [f"- diagnostics: {diagnostics_text(diagnostics)}"] +
        ([callers] if callers else []))
