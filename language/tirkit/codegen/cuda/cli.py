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
    from ..cli import report_error
    from ..selection import selected_kernels
    from . import emit_cuda, is_thread_bound
    from .exprs import PRELUDE
    loaded = selected_kernels(args, "built")
    if isinstance(loaded, int):
        return loaded
    module, text, funcs, status = loaded
    parts = []
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


def _not_a_kernel(args, name, module) -> int:
    """`--target cuda` on a function that binds no thread: a function the module's kernels
    call (a device function) is said so and left, unless --func names it; else an error."""
    from ..module_calls import callers
    by = callers(module, name) if getattr(args, "func", None) is None else []
    if by:
        print(f"{name}: a device function, run by the kernels that call it ({', '.join(by)})")
        return 0
    print(f"{args.file}: '{name}' binds no loop to GPU threads", file=sys.stderr)
    return 1


def run_on_cpu_threads(args, name, func, module, text, rng):
    """`tirkit run` of a thread-bound kernel: on the GPU with `--target cuda` where pycuda
    runs kernels, else in the thread interpreter (threads.py) with its race detector.  None
    for a kernel without thread bindings (the CPU path runs it); else the exit status."""
    from ..cli import report_error, parse_sizes
    from ..inputs import make_inputs, make_scalars
    from . import is_thread_bound
    from .threads import run_threads
    if not is_thread_bound(func):
        if getattr(args, "target", "cpu") == "cuda":
            return _not_a_kernel(args, name, module)
        return None
    blocks = getattr(args, "blocks", None)
    total = grid_size(func)
    if blocks is None and total > AUTO_ALL_BLOCKS:
        blocks = 2                 # a large grid: its first and last blocks per dimension
    if getattr(args, "target", "cpu") == "cuda":
        from .runtime import available
        if available() is None:
            return _run_gpu(args, name, func, module, text, rng, blocks)
    try:
        arrays = make_inputs(func, rng, parse_sizes(args.size))
        scalars = make_scalars(func, rng, parse_sizes(args.size))
        it = run_threads(func, arrays, scalars, module=module, blocks=blocks)
    except TirkitError as e:
        report_error(args.file, text, e)
        return 1
    if blocks is None:          # every block ran (a symbolic grid's count is known now)
        total = it.blocks_run
    threads = 1
    for _, n in it.thread_extents.items():
        threads *= n
    print(f"{name}: no GPU here: ran in the thread interpreter on the CPU "
          f"({it.blocks_run} of {total} block(s) of {threads} thread(s), {it.barriers} "
          "barrier(s) passed)" + (": no data race" if args.check else ""))
    return 0


def _run_gpu(args, name, func, module, text, rng, blocks):
    from ..cli import parse_sizes, report_error
    from .check import run_on_gpu
    try:
        r = run_on_gpu(func, module, rng, parse_sizes(args.size), args.check, blocks)
    except TirkitError as e:
        report_error(args.file, text, e)
        return 1
    k = r.kernel
    how = "cached" if k.from_cache else f"compiled in {k.compile_seconds:.2f} s"
    line = f"{name}: ran on the GPU ({how})"
    if args.check:
        line += f": {'ok' if r.ok else 'MISMATCH'} against the thread interpreter " \
                f"({r.checked} element(s) of {r.blocks_run} block(s), worst {r.worst:.3g})"
    print(line)
    return 0 if r.ok else 1


def bench_on_gpu(args, name, func, module, text, rng) -> int:
    """`tirkit bench --target cuda`: median time, TFLOP/s and share of the device's peak."""
    from ..cli import parse_sizes, report_error
    from ..flops import count_ops
    from . import is_thread_bound, lower_gpu
    from .check import device_peak, run_on_gpu
    from .runtime import available
    why = available()
    if why:
        print(f"tirkit bench --target cuda: {why}", file=sys.stderr)
        return 2
    if not is_thread_bound(func):
        return _not_a_kernel(args, name, module)
    try:
        r = run_on_gpu(func, module, rng, parse_sizes(args.size), check=False)
        sec = r.kernel.time(*r.arrays, scalars=r.scalars, repeat=max(args.repeat, 3))
    except TirkitError as e:
        report_error(args.file, text, e)
        return 1
    low = lower_gpu(func, module)
    flops, iops = count_ops(low.body, callees=low.callees)
    ops = flops or iops
    dtype = r.kernel.buffers[0].dtype if r.kernel.buffers else "float32"
    peak, label = device_peak(dtype)
    line = f"{name}: median {sec * 1e3:.4f} ms on the GPU (compiled in " \
           f"{r.kernel.compile_seconds:.2f} s)"
    if ops:
        line += f", {ops / sec / 1e12:.2f} T{'FLOP' if flops else 'OP'}/s, " \
                f"{100 * ops / sec / peak:.1f}% of the {label} {dtype} peak " \
                f"({peak / 1e12:.0f} T/s)"
    print(line)
    return 0
