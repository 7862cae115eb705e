"""Which kernels of a file a command compiles: `tirkit run`, `bench`, `build` and `tune` take
only those that hold none of the errors `tirkit check` reports, and with a kernel named,
check that kernel alone and print only the errors that bear on it."""
from __future__ import annotations

import sys
from typing import NamedTuple

from ..diagnostics import render_text


def _load(path, checked=False, func=None):
    """(parse result, text, errors) of the file; its errors are printed.  `checked`: the
    errors are those `tirkit check` reports (every rule, under the file's configuration and
    suppressions), not only those of reading it.  With `func` named, the rules check only its
    kernel, and only the errors that bear on it are kept: those in its kernel and those
    outside every kernel."""
    from ..script.parse import decode, parse
    with open(path, "rb") as fh:
        data = fh.read()
    text, _ = decode(data)
    result = parse(data, path)
    if checked:
        from ..project.pipeline import check_file
        from ..project.tree import Resolver
        _, diags = check_file(data, path, Resolver({}).for_path(path),
                              functions=None if func is None else {func})
    else:
        diags = result.diagnostics
    errors = [d for d in diags if d.severity == "error"]
    if func is not None:
        errors = [d for d in errors if _bears_on(result, d, func)]
    for d in errors:
        print(render_text(path, text, d), file=sys.stderr)
    return result, text, errors


def _bears_on(result, d, func) -> bool:
    """Whether an error may touch the function `func`: it lies in the kernel definition that
    holds it (a whole `@I.ir_module` class), or outside every kernel definition."""
    around = _kernels_at(result, d)
    return not around or any(k.chunk.name == func or func in k.chunk.method_names or
                             any(name == func for name, _ in k.functions) for k in around)


def _kernels_at(result, d) -> list:
    """The kernel definitions whose lines hold a diagnostic (none for one without a place)."""
    if d.span is None:
        return []
    return [k for k in result.kernels if k.chunk.start_line <= d.span.line <= k.chunk.end_line]


def _funcs(module, name):
    funcs = module.prim_funcs()
    if name is not None:
        funcs = [(n, f) for n, f in funcs if n == name]
    return funcs


class SoundKernels(NamedTuple):
    """A file's kernels (`funcs`, in the file's order), the names of those that hold some of
    its errors (`broken`), how many errors it has (`errors`; a kernel the parser could not
    read is in neither list, its errors counted and printed with the others), and how many
    of them lie outside every kernel definition (`outside`: they may touch any kernel)."""
    module: object
    text: str
    funcs: list
    broken: list
    errors: int
    outside: int


def sound_kernels(args, checked=False):
    """The file's `SoundKernels` (its errors printed), or the exit status when it has no
    kernel (named `args.func`, when given) or cannot be read.  `checked`: a kernel is broken
    when any error `tirkit check` reports lies inside it (a loop that leaves its block's
    domain, a block that reads outside a buffer); otherwise only when reading it met one."""
    try:
        result, text, errors = _load(args.file, checked, args.func)
    except OSError as e:
        print(f"{args.file}: {e.strerror}", file=sys.stderr)
        return 2
    funcs = _funcs(result.module, args.func)
    if not funcs:
        if not errors:
            print(f"{args.file}: no kernel{' named ' + args.func if args.func else ''}",
                  file=sys.stderr)
        return 1

    def holds_errors(f):
        return f.span is not None and any(
            d.span is not None and f.span.contains(d.span.line, d.span.column)
            for d in errors)
    broken = holds_errors if checked else result.has_errors
    outside = sum(not _kernels_at(result, d) for d in errors)
    return SoundKernels(result.module, text, funcs, [n for n, f in funcs if broken(f)],
                        len(errors), outside)


def selected_kernels(args, doing: str):
    """(module, text, [(name, func)], status): the kernels `args.func` names (all, when
    None) that hold none of the errors `tirkit check` reports, to be compiled and run, and
    the exit status the command ends with when they all succeed: 1 when one of them was
    left out for its errors, or, with no kernel named, when the file has errors.  Each
    kernel left out is named on stderr ("'k' has errors: not run"): what a rule finds wrong
    (a loop that leaves its block's domain) can make the compiled kernel write outside its
    buffers.  Just the exit status when none is left, or when an error lies outside every
    kernel (an unreadable `.params` file leaves its kernels without their constants)."""
    loaded = sound_kernels(args, checked=True)
    if isinstance(loaded, int):
        return loaded
    if loaded.outside:
        return 1
    for name in loaded.broken:
        print(f"{args.file}: '{name}' has errors: not {doing}", file=sys.stderr)
    from .handles import with_param_buffers
    funcs = [(n, with_param_buffers(f, loaded.module)) for n, f in loaded.funcs
             if n not in loaded.broken]
    if not funcs:
        return 1
    status = 1 if loaded.broken or (loaded.errors and args.func is None) else 0
    return loaded.module, loaded.text, funcs, status
