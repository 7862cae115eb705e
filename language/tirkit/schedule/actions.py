"""Schedule actions at a position of a file: which primitives apply there (each one tried on
the current IR, offered only when it succeeds) and the file text after one of them.

    acts = actions_at(result, line, column)      # ParseResult from tirkit.parse; 1-based
    new_text, python = apply_action(result, acts[0])

An action names its calls as data (blocks by name, loops by (block, index) in get_loops),
so it can travel through an editor protocol and be applied to a later parse."""
from __future__ import annotations

import dataclasses

from ..ir import stmt as S
from ..lru import LRU
from . import _ir
from .errors import ScheduleError
from .state import Schedule


@dataclasses.dataclass
class Action:
    title: str
    func: str                       # the function it rewrites
    calls: list                     # [(primitive, [argument specs])]
    kind: str = "refactor.rewrite"

    def to_json(self):
        return {"title": self.title, "func": self.func, "calls": _jsonable(self.calls),
                "kind": self.kind}

    @classmethod
    def from_json(cls, d):
        return cls(d["title"], d["func"], _untuple(d["calls"]), d.get("kind", "refactor.rewrite"))


def _jsonable(x):
    if isinstance(x, (list, tuple)):
        return [_jsonable(y) for y in x]
    return x


def _untuple(calls):
    out = []
    for prim, args in calls:
        out.append((prim, [tuple(a) if isinstance(a, list) and a and a[0] in ("block", "loop")
                           else a for a in args]))
    return out


def resolve(sch, spec):
    if isinstance(spec, tuple) and spec and spec[0] == "block":
        return sch.get_block(spec[1], func_name=spec[2] if len(spec) > 2 else None)
    if isinstance(spec, tuple) and spec and spec[0] == "loop":
        b = sch.get_block(spec[1], func_name=spec[3] if len(spec) > 3 else None)
        return sch.get_loops(b)[spec[2]]
    return spec


def run(module, action: Action) -> Schedule:
    """Apply the action's calls on a fresh schedule (raises ScheduleError)."""
    sch = Schedule(module, action.func)
    for prim, args in action.calls:
        getattr(sch, prim)(*[resolve(sch, _with_func(a, action.func)) for a in args])
    return sch


def _with_func(spec, func):
    if isinstance(spec, tuple) and spec and spec[0] == "block" and len(spec) == 2:
        return spec + (func,)
    if isinstance(spec, tuple) and spec and spec[0] == "loop" and len(spec) == 3:
        return spec + (func,)
    return spec


# ---- where the cursor is ------------------------------------------------------------------
def _func_at(result, line):
    """(name, PrimFunc) of the kernel on that line, (None, None) when there is none or it
    holds errors (its IR may be partial, and it could not be printed back)."""
    for name, f in result.module.prim_funcs():
        s = f.span
        if s is not None and s.line <= line <= s.end_line:
            return (None, None) if result.has_errors(f) else (name, f)
    return None, None


def _node_at(f, line, column):
    """('loop', For) or ('block', BlockRealize) on that line, or (None, None)."""
    loops, blocks = [], []
    for x in _ir.stmts(f.body):
        if isinstance(x, S.For) and x.span is not None and x.span.line == line:
            loops.append(x)
        elif isinstance(x, S.BlockRealize) and x.span is not None and x.span.line == line \
                and x.block.name_hint != "root":
            blocks.append(x)
    if blocks:
        return "block", blocks[0]
    if loops:
        for lp in loops:
            vs = lp.loop_var.span
            if vs is not None and vs.line == line and vs.column <= column <= vs.end_column:
                return "loop", lp
        return "loop", loops[0]
    return None, None


def _loop_spec(sch, func, f):
    """('loop', block name, index) for a For: through the first block under it."""
    for r in _ir.stmts(f.body):
        if isinstance(r, S.BlockRealize):
            info = sch.block_info(sch.block_of(func, r.block))
            for k, lp in enumerate(info.loops):
                if lp is f:
                    return ("loop", r.block.name_hint, k)
    return None


def _gpu(f) -> bool:
    if any(isinstance(x, S.For) and x.kind == "thread_binding" for x in _ir.stmts(f.body)):
        return True
    tgt = dict(f.attrs).get("target")
    return isinstance(tgt, str) and "cuda" in tgt or isinstance(tgt, dict) and \
        tgt.get("kind") == "cuda"


def _divisor_factors(n, limit=3):
    prefs = [d for d in (4, 8, 16, 32, 64, 2) if n % d == 0 and 1 < d < n]
    out = []
    for d in prefs:
        if d not in out:
            out.append(d)
    return sorted(out[:limit])


def candidates(sch, func, kind, node) -> list:
    f = sch.func(func)
    out = []
    if kind == "loop":
        spec = _loop_spec(sch, func, node)
        if spec is None:
            return []
        name = node.loop_var.name
        ext = node.extent.value if hasattr(node.extent, "value") else None
        for d in _divisor_factors(ext) if ext else []:
            out.append(Action(f"Split loop '{name}' into {ext // d} x {d}", func,
                              [("split", [spec, [None, d]])]))
        if isinstance(node.body, S.For):
            inner = node.body.loop_var.name
            ispec = (spec[0], spec[1], spec[2] + 1)
            out.append(Action(f"Fuse loop '{name}' with '{inner}'", func,
                              [("fuse", [spec, ispec])]))
            out.append(Action(f"Reorder loop '{name}' with '{inner}'", func,
                              [("reorder", [ispec, spec])]))
        bound = node.kind == "thread_binding"
        if node.kind != "parallel" and not bound and not _gpu(f):
            out.append(Action(f"Parallelize loop '{name}'", func, [("parallel", [spec])]))
        if node.kind != "vectorized" and not bound:
            out.append(Action(f"Vectorize loop '{name}'", func, [("vectorize", [spec])]))
        if node.kind != "unrolled" and not bound:
            out.append(Action(f"Unroll loop '{name}'", func, [("unroll", [spec])]))
        if _gpu(f) and not bound:
            taken = {a.thread_tag for a in sch.loop_info(sch.loop_of(func, node))[1]
                     if isinstance(a, S.For) and a.kind == "thread_binding"}
            for axis in ("blockIdx.x", "threadIdx.x"):
                if axis not in taken and not (axis.startswith("blockIdx") and
                                              any(t and t.startswith("threadIdx")
                                                  for t in taken)):
                    out.append(Action(f"Bind loop '{name}' to {axis}", func,
                                      [("bind", [spec, axis])]))
        for r in _ir.stmts(node.body):
            if isinstance(r, S.BlockRealize) and r.block.init is not None:
                bn = r.block.name_hint
                out.append(Action(f"Decompose reduction '{bn}' at loop '{name}'", func,
                                  [("decompose_reduction", [("block", bn), spec])]))
                out.append(Action(f"rfactor loop '{name}' of '{bn}'", func,
                                  [("rfactor", [spec, 0])]))
        out.append(Action(f"Blockize loop '{name}'", func, [("blockize", [spec])]))
        return out
    blk = node.block
    bn = blk.name_hint
    b = sch.block_of(func, blk)
    info = sch.block_info(b)
    from .analysis import consumers, producers
    for c in consumers(sch, func, info)[:1]:
        for k, lp in enumerate(c.loops):
            out.append(Action(f"Compute '{bn}' at loop '{lp.loop_var.name}' of "
                              f"'{c.block.name_hint}'", func,
                              [("compute_at", [("block", bn), ("loop", c.block.name_hint, k)])]))
    for p in producers(sch, func, info)[-1:]:
        for k, lp in enumerate(p.loops):
            out.append(Action(f"Compute '{bn}' at loop '{lp.loop_var.name}' of "
                              f"'{p.block.name_hint}' (reverse)", func,
                              [("reverse_compute_at",
                                [("block", bn), ("loop", p.block.name_hint, k)])]))
    out.append(Action(f"Inline block '{bn}' into its consumers", func,
                      [("compute_inline", [("block", bn)])]))
    out.append(Action(f"Inline block '{bn}' into its producer", func,
                      [("reverse_compute_inline", [("block", bn)])]))
    from .analysis import regions_of
    reads, writes = regions_of(blk)
    gpu = _gpu(f)
    for k, r in enumerate(reads):
        scope = "shared" if gpu else "global"
        out.append(Action(f"Cache read of '{r.buffer.name}' in {scope} memory", func,
                          [("cache_read", [("block", bn), k, scope])]))
    for k, w in enumerate(writes):
        scope = "local" if gpu else "global"
        out.append(Action(f"Cache write of '{w.buffer.name}' in {scope} memory", func,
                          [("cache_write", [("block", bn), k, scope])]))
    if blk.init is not None and info.loops:
        red = [k for k, lp in enumerate(info.loops)
               if any(_ir.uses_var(v, lp.loop_var) for iv, v in
                      zip(blk.iter_vars, info.realize.iter_values) if iv.kind == "R")]
        if red:
            lp = info.loops[red[0]]
            out.append(Action(f"Decompose reduction '{bn}' at loop '{lp.loop_var.name}'", func,
                              [("decompose_reduction", [("block", bn), ("loop", bn, red[0])])]))
    return out


def actions_at(result, line, column=1, intrinsics=None) -> list:
    """The actions that succeed at (line, column) of a parsed file, in a stable order (on a
    block an intrinsic can serve, its verified tensorize actions come first)."""
    name, f = _func_at(result, line)
    if f is None:
        return []
    kind, node = _node_at(f, line, column)
    if node is None:
        return []
    sch = Schedule(result.module, name)
    try:
        cands = candidates(sch, name, kind, node)
    except ScheduleError:
        return []
    ok = []
    for a in cands:
        try:
            run(result.module, a)
        except ScheduleError:
            continue
        except Exception:           # a primitive's own failure: not offered, never raised
            continue
        ok.append(a)
    if kind == "block":
        ok = tensorize_actions(result, name, node.block.name_hint, intrinsics=intrinsics) + ok
    return ok


def tensorize_actions(result, func_name, block_name, target=None, intrinsics=None) -> list:
    """`auto_tensorize` quick fixes for the block, one per intrinsic of the target that can
    serve it (best first), each kept only when it applies and the rewritten file checks
    without errors."""
    from ..tensorize.suggest import block_mappings
    from ..verify import run_rules
    from ..script.parse import parse
    try:
        func = result.module[func_name]
    except KeyError:
        return []
    import os
    key = (_kernel_text(result, func_name), func_name, block_name, str(target),
           tuple(intrinsics or ()), os.environ.get("TIRKIT_INTRINSICS"))
    hit = _TENSORIZE.get(key) if key[0] is not None else None
    if hit is not None:
        return list(hit)
    r = next((x for x in _ir.stmts(func.body) if isinstance(x, S.BlockRealize)
              and x.block.name_hint == block_name), None)
    if r is None:
        return []
    found, _ = block_mappings(r, target, intrinsics)
    out = []
    for m in found:
        args = [("block", block_name), m.intrin.name] + ([list(intrinsics)] if intrinsics
                                                         else [])
        act = Action(f"Tensorize block '{block_name}' with {m.intrin.label}", func_name,
                     [("auto_tensorize", args)], kind="quickfix")
        try:
            text, _ = apply_action(result, act)
        except Exception:            # a primitive's own failure: not offered, never raised
            continue
        after = parse(text, getattr(result, "path", None))
        if any(d.severity == "error" for d in run_rules(after, target=target)):
            continue
        out.append(act)
    if key[0] is not None:
        _TENSORIZE.put(key, tuple(out))
    return out


# verified tensorize actions by the kernel's text (applying and checking one takes a while;
# the editor asks again at every cursor move)
_TENSORIZE = LRU(64)


def _kernel_text(result, func_name):
    for kernel in getattr(result, "kernels", None) or []:
        if any(n == func_name for n, _ in kernel.functions):
            c = kernel.chunk
            return "\n".join(result.text.split("\n")[c.start_line - 1:c.end_line])
    return None


def apply_action(result, action: Action):
    """(new file text, the action as Python lines on `sch`): the kernel that holds the
    function is replaced by its printed result; the rest of the file is untouched."""
    from ..script.format import aliases, format_kernel
    sch = run(result.module, action)
    new_funcs = dict(sch.mod.functions)
    for kernel in result.kernels:
        names = [n for n, _ in kernel.functions]
        if action.func in names:
            k2 = dataclasses.replace(kernel, functions=[(n, new_funcs.get(n, g))
                                                        for n, g in kernel.functions])
            text = format_kernel(k2, result, *aliases(result.text))
            if text is None:
                raise ScheduleError(action.calls[0][0], "unprintable",
                                    "the kernel has errors and is left as it is")
            lines = result.text.split("\n")
            c = kernel.chunk
            lines[c.start_line - 1:c.end_line] = text.rstrip("\n").split("\n")
            return "\n".join(lines), sch.trace.as_python()
    raise ScheduleError(action.calls[0][0], "no-kernel",
                        f"no kernel defines function '{action.func}'")


QUICK_FIXES = {"loop-nest/reduction-on-parallel", "tensorize/available"}


def quick_fixes(result, diagnostic, intrinsics=None) -> list:
    """Actions that repair a validation diagnostic (only those whose primitive succeeds), or
    act on a hint (`tensorize/available`: tensorize the block it names)."""
    if diagnostic.code not in QUICK_FIXES:
        return []
    if diagnostic.code == "tensorize/available":
        name, f = _func_at(result, diagnostic.span.line)
        if f is None:
            return []
        kind, node = _node_at(f, diagnostic.span.line, diagnostic.span.column)
        if kind != "block":
            return []
        return tensorize_actions(result, name, node.block.name_hint, intrinsics=intrinsics)
    spans = [s for s, _ in diagnostic.related if s is not None]
    out = []
    for s in spans:
        name, f = _func_at(result, s.line)
        if f is None:
            continue
        loops = [x for x in _ir.stmts(f.body) if isinstance(x, S.For) and x.span is not None
                 and x.span.line == s.line and x.kind != "serial"]
        sch = Schedule(result.module, name)
        for lp in loops:
            spec = _loop_spec(sch, name, lp)
            if spec is None:
                continue
            act = Action(f"Make loop '{lp.loop_var.name}' serial", name,
                         [("serial", [spec])], kind="quickfix")
            try:
                run(result.module, act)
            except Exception:
                continue
            out.append(act)
    return out
