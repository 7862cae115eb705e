"""`tirkit fmt`: replace each kernel's text by its canonical print; nothing else changes."""
from __future__ import annotations

from ..ir.stmt import PrimFunc
from .parse import parse
from .printer import print_module_class, print_prim_func


def format_kernel(kernel, result, tir="T", ir="I", params=None) -> str | None:
    """Canonical text of one kernel, indented like the original; None if it has errors."""
    if not kernel.syntax_ok or not kernel.functions:
        return None
    chunk = kernel.chunk
    if any(d.severity == "error" and d.code.startswith(("name/", "type/", "syntax"))
           for d in kernel.diagnostics):
        return None
    consts = result.module.constants
    if kernel.module_name is not None:
        text = print_module_class(kernel.module_name, kernel.functions, chunk.spelling, tir, ir,
                                  constants=consts, params=params)
    else:
        f = kernel.functions[0][1]
        if not isinstance(f, PrimFunc):
            return None
        text = print_prim_func(f, chunk.spelling, tir, constants=consts, params=params)
    indent = _indent_str(result.text, chunk)
    if indent:
        text = "\n".join(indent + ln if ln else ln for ln in text.split("\n"))
    return text


def _indent_str(text, chunk) -> str:
    line = text.split("\n")[chunk.start_line - 1]
    return line[:chunk.col_offset]


def format_text(text: str, path=None, params=None):
    """(new text, names of kernels left alone because they have errors).

    `params`: a ParamsSink (params_print.sink_for_script) that takes constants too large to
    print inline; the caller commits it before writing the text.  None: nothing moves."""
    result = parse(text, path)
    lines = text.split("\n")
    skipped = []
    # replace from the last kernel up, so earlier line numbers stay valid
    for kernel in reversed(result.kernels):
        new = format_kernel(kernel, result, *aliases(text), params=params)
        if new is None:
            skipped.append(kernel.chunk.name)
            continue
        c = kernel.chunk
        new_lines = new.rstrip("\n").split("\n")
        lines[c.start_line - 1:c.end_line] = new_lines
    new_text = "\n".join(lines)
    if params is not None and result.kernels:
        from .params_print import add_header
        new_text = add_header(new_text, params, result.kernels[0].chunk.start_line)
    return new_text, list(reversed(skipped))


def aliases(text):
    """(tir alias, ir alias) the file's imports use, `T` and `I` when it has none."""
    from ..syntax.chunks import find_aliases
    al = find_aliases(text.split("\n"))
    tir = next(iter(al.tir), "T")
    ir = next(iter(al.ir), "I")
    return tir, ir
