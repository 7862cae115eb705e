"""thread/shared-memory-limit: shared memory per block beyond the target's limit.

Each shared buffer of a block (`T.alloc_buffer`) is sized as the CUDA lowering allocates it,
by the function that decides it there (analysis/footprint.py): at the lowest common ancestor
of its accesses, entering a serial loop whose iterations write the buffer before reading it
or touch separate parts of it, the box of its accesses relaxed over the loops below that
place and over threadIdx/vthread loops, blockIdx fixed; a buffer with an explicit layout or
passed by address keeps its declared shape.
Allocations outside blocks (`T.decl_buffer`, `T.allocate`, statement-level allocations) are
sized by their declared shape: lowering never shrinks them.  `shared` buffers become static
`__shared__` arrays (limit: `shared_static`, 48 KB on CUDA, a compile error beyond);
`shared.dyn` adds up to the opt-in limit (`shared_optin`, a launch error beyond).

Reported on the largest buffer's allocation, the others as related locations.  The message
names the target and where it came from (`--target`, the file's `# tirkit: target=` comment,
or assumed); when only the static limit is exceeded it suggests `shared.dyn` and the opt-in
limit, and it says when the kernel needs more than any GPU of the target table offers."""
from __future__ import annotations

from .. import target as targets
from ..analysis.footprint import footprint
from ..diagnostics import error
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.dtype import bytes_of
from . import register
from ._common import func_accesses, is_thread, kernel_of, relax_thread, target_for


def _kb(n):
    return f"{n / 1024:.1f} KB" if n % 1024 else f"{n // 1024} KB"


def _scope_of(var):
    return getattr(getattr(var, "type_annotation", None), "scope", None) or ""


def _declared(func, fa):
    """[(name, scope, dtype, shape ints, span, id(kernel root node) or None)] of shared
    allocations made outside blocks, with constant shapes."""
    params = set(func.params) | {b.data for _, b in func.buffer_map}
    block_data = {b.data for b, _ in fa.allocs}
    out, seen = [], set()

    def add(var, name, scope, dtype, shape, span, root):
        if var in params or var in block_data or var in seen or not scope.startswith("shared"):
            return
        seen.add(var)
        if all(isinstance(e, E.IntImm) for e in shape) and span is not None:
            out.append((name, scope, dtype, [e.value for e in shape], span, root))

    def visit(s, root):
        if s is None:
            return
        t = type(s)
        if t is S.SeqStmt:
            for x in s.seq:
                visit(x, root)
        elif t is S.For:
            inner = root if root is not None or not (s.kind == "thread_binding" and
                                                     s.thread_tag) else id(s)
            visit(s.body, inner)
        elif t is S.AttrStmt:
            inner = root if root is not None or s.attr_key != "thread_extent" else id(s)
            visit(s.body, inner)
        elif t is S.Allocate:
            add(s.buffer_var, s.buffer_var.name, _scope_of(s.buffer_var), s.dtype, s.extents,
                s.span, root)
            visit(s.body, root)
        elif t is S.DeclBuffer:
            b = s.buffer
            add(b.data, b.name, b.scope or _scope_of(b.data), b.dtype, b.shape,
                b.span or s.span, root)
            visit(s.body, root)
        elif t is S.BlockRealize:
            visit(s.block.body, root)
        elif t is S.IfThenElse:
            visit(s.then_case, root)
            visit(s.else_case, root)
        elif t in (S.LetStmt, S.AssertStmt, S.While):
            visit(s.body, root)
    visit(func.body, None)
    return out


def _target_origin(ctx, t):
    if targets.get(ctx.target) is t:
        return f"target {t.name} (from --target)"
    if targets.get(targets.from_pragma(ctx.text)) is t:
        return f"target {t.name} (from the file's `# tirkit: target=` comment)"
    return (f"assumed target {t.name} (none chosen: set one with `tirkit check --target NAME` "
            f"or a `# tirkit: target=NAME` comment)")


@register("thread/shared-memory-limit")
def check_shared_memory(func, ctx):
    fa = func_accesses(func, ctx)
    shared = [(b, r) for b, r in fa.allocs if b.scope.startswith("shared")]
    declared = _declared(func, fa)
    if not shared and not declared:
        return []
    t = target_for(func, ctx, fa)
    if not t.is_gpu:
        return []
    per_kernel = {}
    roots = {}
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
        key = id(k.node) if k.node is not None else id(k)
        roots[key] = k
        per_kernel.setdefault(key, []).append((buf.name, buf.scope, buf.span, n, ext,
                                               "after compaction"))
    kernel_roots = {id(lp.node) for lp in fa.loops if is_thread(lp) and lp.node is not None and
                    not any(is_thread(p) for p in fa.loop_parents[id(lp)])}
    for name, scope, dtype, shape, span, root in declared:
        if root is None:
            if len(kernel_roots) != 1:
                continue
            root = next(iter(kernel_roots))
        n = bytes_of(dtype)
        for e in shape:
            n *= e
        per_kernel.setdefault(root, []).append((name, scope, span, n, shape, "as declared"))
    out = []
    top = max((x for x in targets.TARGETS.values() if x.is_gpu),
              key=lambda x: x.shared_optin, default=t)
    for items in per_kernel.values():
        static = sum(x[3] for x in items if x[1] == "shared")
        total = sum(x[3] for x in items)
        if static > t.shared_static:
            limit, what, used = t.shared_static, "static shared memory", static
            pool = [x for x in items if x[1] == "shared"]
        elif total > t.shared_optin:
            limit, what, used = t.shared_optin, "shared memory (with the opt-in carve-out)", total
            pool = items
        else:
            continue
        pool.sort(key=lambda x: -x[3])
        name, _, span, n, ext, how = pool[0]
        if span is None:
            continue
        rel = [(x[2], f"`{x[0]}` takes {_kb(x[3])}") for x in pool[1:] if x[2]]
        shape = "x".join(str(e) for e in ext)
        if total > top.shared_optin:
            advice = (f"; that is beyond every GPU's maximum ({_kb(top.shared_optin)} per "
                      f"block on {top.name})")
        elif total <= t.shared_optin:
            advice = (f"; only the static limit is exceeded: allocate in `shared.dyn` to use "
                      f"up to the {_kb(t.shared_optin)} {t.name} allows with the opt-in")
        else:
            advice = f"; {top.name} allows {_kb(top.shared_optin)}"
        out.append(error("thread/shared-memory-limit",
                         f"the kernel needs {_kb(used)} of {what}, beyond the limit of "
                         f"{_kb(limit)} of the {_target_origin(ctx, t)}; `{name}` alone takes "
                         f"{_kb(n)} ({shape} {how}){advice}", span, rel))
    return out
