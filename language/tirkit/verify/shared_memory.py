"""thread/shared-memory-limit: shared memory per block beyond the target's limit.

Each shared buffer is sized as region compaction allocates it (analysis/footprint.py): the
bounding box of its accesses relaxed over the loops below their common ancestor and over
threadIdx/vthread loops, with blockIdx and outer serial loops fixed.  `shared` buffers
become static `__shared__` arrays (limit: `shared_static`, 48 KB on CUDA, a compile error
beyond); `shared.dyn` adds up to the opt-in limit (`shared_optin`, a launch error beyond).
Reported on the largest buffer's allocation, the others as related locations."""
from __future__ import annotations

from ..analysis.footprint import footprint
from ..diagnostics import error
from ..ir.dtype import bytes_of
from . import register
from ._common import func_accesses, kernel_of, relax_thread, target_for


def _kb(n):
    return f"{n / 1024:.1f} KB" if n % 1024 else f"{n // 1024} KB"


@register("thread/shared-memory-limit")
def check_shared_memory(func, ctx):
    fa = func_accesses(func, ctx)
    shared = [(b, r) for b, r in fa.allocs if b.scope.startswith("shared")]
    if not shared:
        return []
    t = target_for(func, ctx, fa)
    if not t.is_gpu:
        return []
    per_kernel = {}
    for buf, r in shared:
        k = kernel_of(fa, fa.loops_of[id(r)])
        if k is None:
            acc = [a for a in fa.accesses if a.buffer is buf]
            ks = {id(kernel_of(fa, a.loops)): kernel_of(fa, a.loops) for a in acc}
            if len(ks) != 1 or None in ks.values():
                continue
            k = next(iter(ks.values()))
        ext = footprint(fa, buf, relax_thread)
        if any(e is None for e in ext):
            continue
        n = bytes_of(buf.dtype)
        for e in ext:
            n *= e
        per_kernel.setdefault(id(k), []).append((buf, n, ext))
    out = []
    for items in per_kernel.values():
        static = sum(n for b, n, _ in items if b.scope == "shared")
        total = sum(n for _, n, _ in items)
        if static > t.shared_static:
            limit, what, used = t.shared_static, "static shared memory", static
            pool = [x for x in items if x[0].scope == "shared"]
        elif total > t.shared_optin:
            limit, what, used = t.shared_optin, "shared memory (with the opt-in carve-out)", total
            pool = items
        else:
            continue
        pool.sort(key=lambda x: -x[1])
        buf, n, ext = pool[0]
        if buf.span is None:
            continue
        rel = [(b.span, f"`{b.name}` takes {_kb(m)}") for b, m, _ in pool[1:] if b.span]
        shape = "x".join(str(e) for e in ext)
        out.append(error("thread/shared-memory-limit",
                         f"the kernel needs {_kb(used)} of {what}, beyond the {t.name} limit "
                         f"of {_kb(limit)}; `{buf.name}` alone takes {_kb(n)} ({shape} "
                         f"{buf.dtype} after compaction)", buf.span, rel))
    return out
