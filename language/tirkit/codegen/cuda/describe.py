"""What a call of one of PTX's warp instructions or TVM's tensor-core builtins does, in
words (the editor's hover on `T.ptx_mma`, `T.ptx_ldmatrix`, `T.ptx_cp_async`, the copy
groups' commit and wait, and `T.tvm_fill_fragment`, `T.tvm_load_matrix_sync`,
`T.tvm_mma_sync`, `T.tvm_store_matrix_sync`): the instruction it is, what each lane gives and
holds, and, for the mma forms tirkit generates, which elements of the tiles the first lanes'
registers hold, read off the fragment layouts the thread interpreter runs (mma.py).
Markdown lines; None for any other call."""
from __future__ import annotations

from ...diagnostics import TirkitError
from ...ir import expr as E
from ...ir import ptx
from ...ir.dtype import bytes_of, parse_dtype
from ...ir.text import expr_text
from . import cp_async, mma, wmma

_EXAMPLE_LANES = (0, 1, 4)


def describe(call) -> list | None:
    if call.op in ptx.MMA_OPS:
        return _mma(call)
    if call.op in ptx.LDMATRIX_OPS:
        return _ldmatrix(call)
    if call.op in ptx.COPY_OPS:
        return _copy(call)
    if call.op in ptx.WMMA_OPS:
        return _wmma(call)
    if call.op in cp_async.COMMIT_OPS:
        return ["`cp.async.commit_group`: closes this thread's copies issued since its last "
                "commit into a group, which a wait then completes as a whole."]
    if call.op in cp_async.WAIT_OPS:
        n = call.args[0].value if len(call.args) == 1 and \
            isinstance(call.args[0], E.IntImm) else "N"
        until = "all of this thread's copy groups have landed" if n == 0 else \
            f"at most {n} of this thread's most recent copy groups are still in flight; the " \
            "others have landed"
        return [f"`cp.async.wait_group {n}`: waits until {until}. What has landed may be read "
                "by this thread; a barrier makes it visible to the others."]
    return None


def _name(ptr) -> str:
    return f"`{ptr.name}`" if isinstance(ptr, E.Var) else f"`{expr_text(ptr)}`"


def _at(ptr, off) -> str:
    return f"{_name(ptr)} from element `{expr_text(off)}`"


def _mma(call) -> list:
    parts = ptx.mma_call(call)
    if isinstance(parts, str):
        return [f"`T.{call.op}`: a warp's `mma.sync` (its arguments do not read as one)."]
    config = ptx.mma_config(parts)
    if isinstance(config, ptx.MMAProblem):
        if config.reason is None:
            return [f"`T.{call.op}` {config.message}."]
        return [f"`T.{call.op}`: no PTX mma: {config.reason}."]
    shape, (la, lb), types, sat = parts.words[0], config.layouts, config.types, config.saturate
    mnk = config.mnk
    a, b, c = types
    m, n, k = mnk
    subs = ptx.mma_subproducts(mnk, a)
    counts = ptx.mma_counts(mnk, a)
    out = [f"`mma.sync.aligned.{shape}.{la}.{lb}{'.satfinite' if sat else ''}.{c}.{a}.{b}.{c}`"
           f"{'' if subs == 1 else f' ({subs} independent products, one per quad pair)'}",
           "",
           f"One warp: D = A B + C with A {m}×{k} ({a}), B {k}×{n} ({b}), C and D {m}×{n} "
           f"({c}), {subs * m * n * k:,} multiply-adds; D replaces C in place.",
           "",
           "| operand | elements per lane | from |", "| --- | ---: | --- |"]
    for what, (ptr, off), count in zip(("A", "B", "C, D"), parts.operands, counts):
        out.append(f"| {what} | {count} | {_at(ptr, off)} |")
    try:
        f = mma.form(call, registers=False)
    except TirkitError:
        return out + ["", "tirkit does not run or generate this form (`tirkit run` refuses it)."]
    out += ["", "Where the registers sit (row, column" + (", sub-product" if subs > 1 else "")
            + "):", "",
            "| operand | " + " | ".join(f"lane {ln}" for ln in _EXAMPLE_LANES) + " |",
            "| --- |" + " --- |" * len(_EXAMPLE_LANES)]
    for what, table in zip("ABC", f.tables):
        sub, row, col = table
        cells = []
        for ln in _EXAMPLE_LANES:
            cells.append(" ".join(
                f"({row[ln][i]},{col[ln][i]}{f',{sub[ln][i]}' if subs > 1 else ''})"
                for i in range(row.shape[1])))
        out.append(f"| {what} | " + " | ".join(cells) + " |")
    return out


def _ldmatrix(call) -> list:
    parts = ptx.ldmatrix_call(call)
    if isinstance(parts, str):
        return [f"`T.{call.op}`: a warp's `ldmatrix` (its arguments do not read as one)."]
    num = parts.num.value if isinstance(parts.num, E.IntImm) else None
    trans = parts.trans.value if isinstance(parts.trans, E.IntImm) else None
    source = ptx.pointer(parts.src, parts.src_offset)
    src = _at(*source) if source is not None else _name(parts.src)
    name = (f"`ldmatrix.sync.aligned.m8n8.x{num if num is not None else '{num}'}"
            f"{'.trans' if trans else '' if trans is not None else '{.trans}'}.shared.b16`")
    of = " of the transposed matrix" if trans else \
        "" if trans is not None else " (of the transposed matrix with `trans`)"
    count = num if num is not None else "`num`"
    return [name, "",
            f"One warp loads {count} 8×8 matrices of 16-bit elements from shared memory. "
            f"Lanes 8j to 8j+7 give the addresses of matrix j's eight rows ({src}, 8 elements "
            f"each); lane l then receives, of each matrix j, row l / 4, columns 2 (l % 4) and "
            f"2 (l % 4) + 1{of}, into elements 2j and 2j + 1 of "
            f"{_at(parts.dst, parts.dst_offset)}: {2 * num if num is not None else '2 num'} "
            "elements per lane."]


def _copy(call) -> list:
    parts = ptx.copy_call(call)
    if isinstance(parts, str):
        return [f"`T.{call.op}`: an asynchronous copy (its arguments do not read as one)."]
    size = parts.size.value if isinstance(parts.size, E.IntImm) else None
    kind = "cg" if size == 16 else "ca" if size in (4, 8) else "ca/cg"
    d = parse_dtype(parts.dtype)
    item = bytes_of(parts.dtype) if d is not None and d.kind not in ("handle", "void") else 0
    count = f" ({size // item} {parts.dtype} elements)" if size and item and size % item == 0 \
        else ""
    return [f"`cp.async.{kind}.shared.global`, {size if size else '`bytes`'} bytes{count}", "",
            f"Copies from {_at(parts.src, parts.src_offset)}, read as global memory, to "
            f"{_at(parts.dst, parts.dst_offset)}, written as shared memory, in the background. "
            "The copy lands when a `cp.async.wait_group` completes its group (this thread's "
            "copies up to its next commit); reading or writing the destination before that is "
            "a race with the copy, which `tirkit run` reports."]


def _fragment(var, mnk, index) -> str:
    """How a sentence names fragment `index` of var: its kind, shape and type."""
    scope = wmma.scope_of(var)
    kind = scope[len("wmma."):] if scope.startswith("wmma.") else scope
    dtype = getattr(getattr(var, "type_annotation", None), "element", None) or "?"
    shape = ""
    if mnk is not None:
        rows, cols = ptx.wmma_tile(scope, mnk)
        shape = f", {rows}×{cols} {dtype} of m{mnk[0]}n{mnk[1]}k{mnk[2]}"
    return f"fragment `{expr_text(index)}` of {_name(var)} ({kind}{shape})"


def _wmma(call) -> list:
    a = call.args
    ns = "nvcuda::wmma::"
    if call.op == ptx.WMMA_MMA:
        if len(a) != 8:
            return [f"`{ns}mma_sync` (its arguments do not read as one)."]
        d, x, y, c = (f"{_name(v)}[`{expr_text(i)}`]" for v, i in zip(a[0::2], a[1::2]))
        return [f"`{ns}mma_sync`", "", f"One warp: {d} = {x} {y} + {c}, on the fragments of the "
                "shape their fills, loads and stores give them. Every lane holds its part of "
                "each fragment; which elements is the fragment's own (CUDA does not say)."]
    mnk = tuple(v.value for v in a[1:4]) if len(a) >= 5 and \
        all(isinstance(v, E.IntImm) for v in a[1:4]) else None
    if len(a) < 5:
        return [f"`T.{call.op}` (its arguments do not read as one)."]
    frag = _fragment(a[0], mnk, a[4])
    if call.op == ptx.WMMA_FILL:
        value = expr_text(a[5]) if len(a) == 6 else "?"
        return [f"`{ns}fill_fragment`", "", f"One warp sets every element of {frag} to "
                f"`{value}`."]
    load = call.op == ptx.WMMA_LOAD
    name = f"`{ns}{'load' if load else 'store'}_matrix_sync`"
    if len(a) != 8:
        return [f"{name} (its arguments do not read as one)."]
    ptr, stride, layout = a[5], a[6], a[7]
    where = f"`{expr_text(ptr)}`"
    if isinstance(ptr, E.Call) and ptr.op == ptx.ACCESS_PTR and len(ptr.args) == 5:
        where = f"{_at(ptr.args[1], ptr.args[2])} ({ptr.args[0].dtype})"
    lay = layout.value if isinstance(layout, E.StringImm) else None
    tile = ""
    if mnk is not None and isinstance(stride, E.IntImm) and lay is not None:
        rows, cols = ptx.wmma_tile(wmma.scope_of(a[0]), mnk)
        major, count, length = ("rows", rows, cols) if lay == "row_major" else \
            ("columns", cols, rows)
        span = ptx.wmma_span(rows, cols, stride.value, lay)
        tile = f": {count} {major} of {length} elements, {stride.value} apart " \
            f"(a span of {span} elements)"
    verb = f"loads {frag} from {where}" if load else f"stores {frag} to {where}"
    return [name, "", f"One warp {verb}, {lay or '`layout`'}{tile}. Every lane holds its part "
            "of the fragment; which elements is the fragment's own (CUDA does not say)."]
