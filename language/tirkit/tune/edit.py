"""The tuned file: the kernel that holds the tuned function replaced by its printed
schedule; every other line of the file stays as it was.

    new_text = tuned_text(parse_result, "matmul", result.module)
"""
from __future__ import annotations

import dataclasses


class EditError(Exception):
    pass


def tuned_text(parsed, func_name: str, tuned_module) -> str:
    from ..script.format import aliases, format_kernel
    new_funcs = dict(tuned_module.functions)
    for kernel in parsed.kernels:
        names = [n for n, _ in kernel.functions]
        if func_name not in names:
            continue
        k2 = dataclasses.replace(kernel, functions=[(n, new_funcs.get(n, g))
                                                    for n, g in kernel.functions])
        text = format_kernel(k2, parsed, *aliases(parsed.text))
        if text is None:
            raise EditError(f"kernel '{kernel.chunk.name}' has errors and is left as it is")
        lines = parsed.text.split("\n")
        c = kernel.chunk
        lines[c.start_line - 1:c.end_line] = text.rstrip("\n").split("\n")
        return "\n".join(lines)
    raise EditError(f"no kernel defines function '{func_name}'")


__all__ = ["tuned_text", "EditError"]
