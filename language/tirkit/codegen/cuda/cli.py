"""`tirkit build FILE --target cuda --emit cuda|ptx [-o OUT] [--func NAME] [--arch sm_90]`:
the generated CUDA C (or nvcc's PTX of it) of every thread-bound kernel of FILE."""
from __future__ import annotations

import sys

from ...diagnostics import TirkitError


def add_commands(sub):
    b = sub.add_parser("build", help="write the generated code of a file's kernels")
    b.add_argument("file")
    b.add_argument("--func", default=None, help="the kernel to build (default: all)")
    b.add_argument("--target", default="cuda", choices=["cuda"])
    b.add_argument("--emit", default="cuda", choices=["cuda", "ptx"])
    b.add_argument("--arch", default="sm_90", help="the GPU architecture for --emit ptx")
    b.add_argument("-o", "--output", default="-", help="the output file (default: stdout)")
    b.set_defaults(fn=cmd_build)


def cmd_build(args) -> int:
    from ..cli import report_error, selected_kernels
    from . import emit_cuda, is_thread_bound
    from .exprs import PRELUDE
    loaded = selected_kernels(args)
    if isinstance(loaded, int):
        return loaded
    module, text, funcs = loaded
    parts, status = [], 0
    for name, func in funcs:
        if not is_thread_bound(func):
            if args.func is not None:
                print(f"{args.file}: '{name}' binds no loop to GPU threads", file=sys.stderr)
                status = 1
            continue
        try:
            parts.append(emit_cuda(func, module).kernels_code)
        except TirkitError as e:
            report_error(args.file, text, e)
            status = 1
    if not parts:
        if status == 0:
            print(f"{args.file}: no thread-bound kernel", file=sys.stderr)
        return 1
    code = PRELUDE + "\n" + "\n".join(parts)
    if args.emit == "ptx":
        from .nvcc import compile_cuda
        try:
            code = compile_cuda(code, args.arch, "ptx").decode()
        except TirkitError as e:
            for d in e.diagnostics:
                print(f"{args.file}: {d.message}", file=sys.stderr)
            return 1
    if args.output == "-":
        sys.stdout.write(code)
    else:
        with open(args.output, "w") as fh:
            fh.write(code)
    return status


AUTO_ALL_BLOCKS = 64       # `tirkit run` without --blocks runs every block of a grid this small


def grid_size(func) -> int:
    """Thread blocks in func's launch (constant blockIdx extents; 1 for a symbolic one)."""
    from ...ir import expr as E
    from ...ir import stmt as S
    from ...ir.visit import walk
    ext = {}

    def fn(x):
        if isinstance(x, S.For) and (x.thread_tag or "").startswith("blockIdx") and \
                isinstance(x.extent, E.IntImm):
            ext[x.thread_tag] = max(ext.get(x.thread_tag, 1), x.extent.value)
        elif isinstance(x, S.AttrStmt) and isinstance(x.node, S.IterVar) and \
                (x.node.thread_tag or "").startswith("blockIdx") and \
                isinstance(x.value, E.IntImm):
            ext[x.node.thread_tag] = max(ext.get(x.node.thread_tag, 1), x.value.value)
    walk(func.body, fn)
    n = 1
    for v in ext.values():
        n *= v
    return n


def run_on_cpu_threads(args, name, func, module, text, rng):
    """`tirkit run` of a thread-bound kernel where no GPU runtime is present: the thread
    interpreter (threads.py) with its race detector.  None for a kernel without thread
    bindings (the CPU path runs it); else the exit status."""
    from ..cli import report_error, parse_sizes, make_inputs, make_scalars
    from . import is_thread_bound
    from .threads import run_threads
    if not is_thread_bound(func):
        return None
    blocks = getattr(args, "blocks", None)
    total = grid_size(func)
    if blocks is None and total > AUTO_ALL_BLOCKS:
        blocks = 2                 # a large grid: its first and last blocks per dimension
    try:
        arrays = make_inputs(func, rng, parse_sizes(args.size))
        scalars = make_scalars(func, rng)
        it = run_threads(func, arrays, scalars, module=module, blocks=blocks)
    except TirkitError as e:
        report_error(args.file, text, e)
        return 1
    threads = 1
    for _, n in it.thread_extents.items():
        threads *= n
    print(f"{name}: no GPU here: ran in the thread interpreter on the CPU "
          f"({it.blocks_run} of {total} block(s) of {threads} thread(s), {it.barriers} "
          "barrier(s) passed)" + (": no data race" if args.check else ""))
    return 0
