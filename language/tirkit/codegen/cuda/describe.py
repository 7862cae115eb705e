"""What a call of one of PTX's warp instructions does, in words (the editor's hover on
`T.ptx_mma`, `T.ptx_ldmatrix`, `T.ptx_cp_async` and the copy groups' commit and wait): the
instruction it is, what each lane gives and holds, and, for the mma forms tirkit generates,
which elements of the tiles the first lanes' registers hold, read off the fragment layouts the
thread interpreter runs (mma.py).  Markdown lines; None for any other call."""
from __future__ import annotations

from ...diagnostics import TirkitError
from ...ir import expr as E
from ...ir import ptx
from ...ir.dtype import bytes_of, parse_dtype
from ...ir.text import expr_text
from . import cp_async, mma

_EXAMPLE_LANES = (0, 1, 4)


def describe(call) -> list | None:
    if call.op in ptx.MMA_OPS:
        return _mma(call)
    if call.op in ptx.LDMATRIX_OPS:
        return _ldmatrix(call)
    if call.op in ptx.COPY_OPS:
        return _copy(call)
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
    if isinstance(parts, str) or None in parts.words:
        return [f"`T.{call.op}`: a warp's `mma.sync` (its arguments do not read as one)."]
    shape, la, lb, *names = parts.words
    mnk = ptx.parse_shape(shape)
    types = [ptx.TYPES.get(w) for w in names]
    sat = parts.saturate.value if isinstance(parts.saturate, E.IntImm) else 0
    problem = "its shape, layouts or types do not read as PTX's" \
        if mnk is None or None in types or la not in ("row", "col") or lb not in ("row", "col") \
        else ptx.mma_problem(mnk, (la, lb), types, "", bool(sat))
    if problem is not None:
        return [f"`T.{call.op}`: no PTX mma: {problem}."]
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
            f"Copies from {_at(parts.src, parts.src_offset)} (global) to "
            f"{_at(parts.dst, parts.dst_offset)} (shared) in the background. The copy lands "
            "when a `cp.async.wait_group` completes its group (this thread's copies up to its "
            "next commit); reading or writing the destination before that is a race with the "
            "copy, which `tirkit run` reports."]
