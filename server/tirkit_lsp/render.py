"""Markdown for hovers and code lenses, from the core's IR and cost analysis (presentation
only: every number here is computed by `tirkit.analysis`)."""
from __future__ import annotations

from tirkit.analysis.cost import bound_by, format_seconds, roofline_seconds, target_peaks
from tirkit.analysis.nest import (buffer_bytes, find_realize, inferred_regions,
                                  producers_consumers, value_stats)
from tirkit.analysis.nest import loop_trip_count as trip_count
from tirkit.ir import expr as E
from tirkit.ir import stmt as S
from tirkit.ir.dtype import ERROR_DTYPE
from tirkit.script.printer import Printer

KIND = {"S": "spatial", "R": "reduce", "C": "scan", "O": "opaque"}
# what hover and lens say of a kernel whose IR its errors left partial
NOT_ESTIMATED = "not estimated (the kernel has errors)"


def printer_for(func) -> Printer:
    return Printer(getattr(func, "spelling", "classic"))


def fmt_int(v) -> str:
    return f"{v:,}" if isinstance(v, int) else str(v)


def _num(p) -> str:
    v = p.value
    return fmt_int(v) if v is not None else str(p)


def domain_text(pr: Printer, r: E.Range) -> str:
    lo = pr.expr(r.min)
    if isinstance(r.min, E.IntImm) and isinstance(r.extent, E.IntImm):
        return f"[{r.min.value}, {r.min.value + r.extent.value})"
    if isinstance(r.min, E.IntImm) and r.min.value == 0:
        return f"[0, {pr.expr(r.extent)})"
    return f"[{lo}, {lo} + {pr.expr(r.extent)})"


def region_texts(regions) -> list:
    """Inferred regions (`tirkit.analysis.nest.InferredRegion`) as texts: `A[vi, 0:16]`."""
    out = []
    for r in regions:
        if r.dims is None:
            text = f"{r.buffer.name}[...]"
        else:
            dims = []
            for lo, hi in r.dims:
                if lo is None or hi is None:
                    dims.append("?")
                elif lo == hi:
                    dims.append(repr(lo))
                else:
                    dims.append(f"{lo!r}:{hi + 1!r}")
            text = f"{r.buffer.name}[{', '.join(dims)}]".replace("+ -", "- ")
        if text not in out:
            out.append(text)
    return out


def _regions_text(pr, regions) -> str:
    return ", ".join(f"`{pr.region(r)}`" for r in regions) if regions else "nothing"


def block_markdown(func, block, cost, target, partial=False) -> str:
    """`partial`: the kernel holds errors that left its IR partial, so the block's inferred
    regions and cost are not shown (what it reads and computes may be missing)."""
    pr = printer_for(func)
    realize = find_realize(func, block)
    out = [f"**block** `{block.name_hint}` in `{func.name}`", ""]
    if block.iter_vars:
        out += ["| iterator | kind | domain | binding |", "| --- | --- | --- | --- |"]
        values = realize.iter_values if realize is not None else ()
        for i, iv in enumerate(block.iter_vars):
            binding = pr.expr(values[i]) if i < len(values) else "-"
            out.append(f"| `{iv.var.name}` | {KIND.get(iv.kind, iv.kind)} | "
                       f"`{domain_text(pr, iv.dom)}` | `{binding}` |")
        out.append("")
    else:
        out += ["no iterators (opaque block)", ""]
    inferred = None
    if realize is not None and not partial:
        reads, writes = inferred_regions(func, realize)
        inferred = (region_texts(reads), region_texts(writes))
    for label, declared, idx in (("reads", block.reads, 0), ("writes", block.writes, 1)):
        dec = _regions_text(pr, declared) if declared is not None else "not declared"
        line = f"- **{label}** (declared): {dec}"
        if inferred is not None:
            inf = ", ".join(f"`{t}`" for t in inferred[idx]) or "nothing"
            line += f"; (inferred): {inf}"
            if declared is not None and \
                    sorted(pr.region(r) for r in declared) != sorted(inferred[idx]):
                line += " — **differs**"
        out.append(line)
    if block.init is not None:
        lines: list = []
        pr.stmt(block.init, lines, "")
        out.append(f"- **init**: `{'; '.join(x.strip() for x in lines)}`")
    else:
        out.append("- **init**: none")
    pred = realize.predicate if realize is not None else None
    if pred is None or (isinstance(pred, E.IntImm) and pred.value == 1):
        out.append("- **predicate**: none")
    else:
        out.append(f"- **predicate**: `{pr.expr(pred)}`")
    if partial:
        out += ["", f"**cost**: {NOT_ESTIMATED}"]
    elif cost is not None:
        out += ["", *cost_lines(cost, target)]
    return "\n".join(out)


def _intensity(ai, ub) -> str:
    if ai is not None:
        return f"{ai:.2f} FLOP/byte"
    return "symbolic" if ub is None else "n/a (no memory traffic)"


def cost_lines(cost, target) -> list:
    peaks = target_peaks(target)
    t = roofline_seconds(cost, target)
    ub = cost.unique_bytes
    ai = cost.intensity
    out = ["**cost**",
           f"- FLOPs: {_num(cost.flops)}",
           f"- bytes read: {_num(cost.bytes_read)}; bytes written: {_num(cost.bytes_written)}",
           f"- unique bytes: {fmt_int(ub) if ub is not None else 'symbolic'}",
           f"- arithmetic intensity: {_intensity(ai, ub)}",
           f"- roofline time on {target} ({peaks['label']}): {format_seconds(t)}"
           + (f", {bound_by(cost, target)}-bound" if t is not None else ""),
           f"- asymptotic cost: `{cost.asymptotic}`"]
    return out


def loop_markdown(func, loop: S.For, trip_under) -> str:
    pr = printer_for(func)
    if loop.stepped:        # `range(a, b, s)`: its range as written, then its iterations
        start, stop, step = loop.stepped[:3]
        extent = (f"- range: `{pr.expr(start)}` to `{pr.expr(stop)}` by `{step.value}`: "
                  f"`{pr.expr(loop.extent)}` iterations")
    else:
        extent = f"- extent: `{pr.expr(loop.extent)}`" + (
            f" (from `{pr.expr(loop.min)}`)" if not (isinstance(loop.min, E.IntImm)
                                                     and loop.min.value == 0) else "")
    out = [f"**loop** `{loop.loop_var.name}` in `{func.name}`", "", extent,
           f"- kind: {loop.kind}"]
    if loop.thread_tag:
        out.append(f"- thread: `{loop.thread_tag}`")
    out.append(f"- total trip count under it: {trip_under}")
    return "\n".join(out)


def loop_trip_count(loop: S.For) -> str:
    """Iterations of the innermost loops under `loop` (itself included), as text."""
    return _num(trip_count(loop))


def buffer_markdown(func, buf: S.Buffer, role: str) -> str:
    if role == "decl" and _is_local_scalar(func, buf):
        return "\n".join([
            f"**local scalar** `{buf.name}` in `{func.name}`", "",
            f"- dtype: `{buf.dtype}`",
            "- assigned again in its scope, so held as a one-element `local` buffer: each "
            "assignment stores to it, each use loads it (as TVM 0.27 reads it)"])
    pr = printer_for(func)
    shape = ", ".join(pr.expr(d) for d in buf.shape)
    n = buffer_bytes(buf)
    size = "symbolic" if n is None else f"{n:,} bytes"
    prod, cons = producers_consumers(func, buf)
    kind = {"param": "parameter", "alloc": "allocated", "match": "matched",
            "decl": "declared"}.get(role, role)
    return "\n".join([
        f"**buffer** `{buf.name}` ({kind}) in `{func.name}`", "",
        f"- shape: `({shape}{',' if len(buf.shape) == 1 else ''})`",
        f"- dtype: `{buf.dtype}`",
        f"- scope: `{buf.scope}`",
        f"- size: {size}",
        f"- producers: {', '.join(f'`{p}`' for p in prod) or 'none (input)'}",
        f"- consumers: {', '.join(f'`{c}`' for c in cons) or 'none'}",
    ])


def function_signature(func) -> str:
    """`(A: T.Buffer((64,), "float32"), n: T.int32) -> T.float32`: a function's parameters
    and return type as TVMScript spells them."""
    pr = printer_for(func)
    params = []
    for p in func.params:
        b = func.buffer_of(p)
        params.append(f"{b.name}: {pr.T}.Buffer({pr.buffer_args(b)})" if b is not None
                      else f"{p.name}: {pr.param_type(p)}")
    ret = f" -> {pr.T}.{func.ret_type}" if func.ret_type else ""
    return f"({', '.join(params)}){ret}"


def module_signatures(kernel) -> list:
    """[(name, signature)] of the prim_funcs of the `@I.ir_module` kernel (a
    `script.parse.Kernel`), in the order they are defined.  Read from the class's text where
    it is split into methods, so a class that does not parse while a call or a name is being
    typed still has them; else from the functions it gave."""
    import re
    from tirkit.syntax.class_parts import method_signatures
    parts = kernel.chunk.parts[1:]
    if not parts:
        return [(name, function_signature(f)) for name, f in kernel.functions
                if isinstance(f, S.PrimFunc)]
    out = []
    for part in parts:
        if "prim_func" in part.text.split("def ", 1)[0]:
            for name, _, sig in method_signatures((part,)):
                out.append((name, re.sub(r"\s+\)", ")", re.sub(r"\(\s+", "(", sig))))
    return out


def signature_parameters(signature: str) -> list:
    """The parameters of `(a: T.float32, B: T.Buffer((4,), "int32")) -> T.int32` as written:
    the text inside its outer parentheses split at the commas outside brackets."""
    from tirkit.script.printer.wrap import split_top_level
    return split_top_level(signature[1:]) if signature.startswith("(") else []


def function_markdown(func, module: str, callers, cost=None) -> str:
    """Hover of a function of a module: its signature, the work of one call (`cost`: its
    `kernel_costs(func, module).total`, None where its IR is partial; in its parameters'
    names where it loops over a size it is passed) and where it is called
    (`callers`: [(calling PrimFunc, [spans of its calls])])."""
    work = []
    moved = cost.bytes_read + cost.bytes_written if cost is not None else None
    if cost is not None and (cost.flops.terms or moved.terms):
        work = [f"- work per call: {cost.flops} FLOPs" +
                (f", {moved} bytes read and written" if moved.terms else "")]
    return "\n".join([
        f"**function** `{func.name}` of `{module}`" + (" (private)" if func.private else ""), "",
        "```python", f"def {func.name}{function_signature(func)}", "```", ""] + work + [
        callers_text(callers) or "- not called in this module"])


def callers_text(callers) -> str:
    """`- called from `main` (line 11, twice), `twice` (line 22)`, or "" for no caller
    (`callers`: [(calling PrimFunc, [spans of its calls])])."""
    calls = []
    for f, spans in callers:
        lines = [u.line for u in spans]
        at = sorted(set(lines))
        where = f"line {at[0]}" if len(at) == 1 else "lines " + ", ".join(map(str, at))
        n = len(lines)
        calls.append(f"`{f.name}` ({where}{'' if n == 1 else ', twice' if n == 2 else f', {n} times'})")
    return "- called from " + ", ".join(calls) if calls else ""


def var_markdown(func, var, role) -> str:
    what = {"iter": "block iterator", "loop": "loop variable", "param": "parameter",
            "size": "symbolic size", "let": "let-bound variable", "thread": "thread variable",
            "allocate": "allocation"}.get(role, "variable")
    if var.dtype == ERROR_DTYPE:            # its annotation failed: a diagnostic says why
        return f"**{what}** `{var.name}` in `{func.name}`: type not known (its annotation " \
            "is an error)"
    return f"**{what}** `{var.name}`: `{var.dtype}` in `{func.name}`"


def constant_markdown(func, stmt: S.AllocateConst, constants) -> str:
    ext = ", ".join(str(e.value) if isinstance(e, E.IntImm) else "?" for e in stmt.extents)
    out = [f"**constant** `{stmt.buffer_var.name}` in `{func.name}`", "",
           f"- dtype: `{stmt.dtype}`", f"- shape: `({ext}{',' if len(stmt.extents) == 1 else ''})`"]
    arr = None
    try:
        if constants is not None and stmt.const_name in constants:
            arr = constants[stmt.const_name].array()
    except Exception:
        arr = None
    stats = value_stats(arr)
    if stats is not None:
        out += [f"- min: {stats[0]:.6g}", f"- max: {stats[1]:.6g}", f"- mean: {stats[2]:.6g}"]
    else:
        out.append("- values: not loaded")
    return "\n".join(out)


def _is_local_scalar(func, buf) -> bool:
    """Whether `buf` is a name the kernel assigns again in its scope (`acc = acc + x`)."""
    from tirkit.ir.visit import find_first
    d = find_first(func.body, lambda x: x.buffer is buf, S.DeclBuffer)
    return d is not None and d.spelling == "local_scalar"
