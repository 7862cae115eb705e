"""thread/execution-scope: warp-level tensor intrinsics (wmma/mma) at the wrong scope.

A warp-level MMA must be executed by every thread of a full warp, together:
- inside a GPU kernel (error when the function has thread bindings elsewhere but the call
  sits outside them; a warning when the function has none at all: it may be a tensor
  intrinsic's implementation, meant to be inlined by tensorize);
- with threadIdx.x a multiple of the warp size (error otherwise: partial warps);
- not under a guard that depends on threadIdx (error: a divergent warp deadlocks or
  computes garbage).

A block annotated `warp_execution` (as meta-schedule's tensor-core schedules write it) states
that its body runs once per warp, with the warp's lanes implicit: the whole-warp count is not
checked inside it."""
from __future__ import annotations

from ..diagnostics import error, warning
from ..ir import expr as E
from ..ir.visit import vars_in, walk
from . import register
from ..arith import Atom
from ._common import const_int, func_accesses, is_thread, kernel_of, kernels, target_for, text

WARP_OPS = frozenset({
    "tvm_mma_sync", "tvm_bmma_sync", "tvm_load_matrix_sync", "tvm_store_matrix_sync",
    "tvm_fill_fragment", "ptx_mma", "ptx_mma_sp", "ptx_ldmatrix", "mma_store", "mma_fill",
    "ptx_wgmma_ss", "ptx_wgmma_rs",
    "ptx_legacy.mma", "ptx_legacy.ldmatrix",              # the tirx spellings
})


# wmma intrinsics: every operand (fragment, index, pointer, stride, value) is one value for
# the whole warp.  (The ptx_* ones take per-lane offsets by design.)
WMMA_OPS = frozenset({"tvm_mma_sync", "tvm_bmma_sync", "tvm_load_matrix_sync",
                      "tvm_store_matrix_sync", "tvm_fill_fragment"})


def _lane_operand(call, tx, fa, warp):
    """An integer operand of a wmma call that varies with the lane (threadIdx.x outside a
    division by a multiple of the warp size), or None."""
    from ..arith import Analyzer
    an = Analyzer()
    env = dict(fa.env)
    env.update(fa.lets)
    stack = list(call.args)
    while stack:
        x = stack.pop()
        if isinstance(x, E.Call):
            stack.extend(a for a in x.args if not isinstance(a, (str, bytes)))
            continue
        if not isinstance(x, E.PrimExpr) or not str(getattr(x, "dtype", "")).startswith("int"):
            continue
        aff = an.to_aff(x, env)
        if aff.terms.get(tx) or any(isinstance(k, Atom) and k.kind == "fmod" and
                                    k.args[0].terms.get(tx) for k in aff.terms):
            return x
    return None


def _truthy(v):
    v = getattr(v, "value", v)
    return v not in (False, 0, None, "0", "false", "False")


def _warp_executed_calls(fa):
    """ids of the calls inside a block annotated `warp_execution`."""
    out = set()
    for r in fa.realizes:
        if not any(k == "warp_execution" and _truthy(v) for k, v in r.block.annotations):
            continue

        def f(x):
            if isinstance(x, E.Call):
                out.add(id(x))
            return True
        walk(r.block, f)
    return out


@register("thread/execution-scope", fast=True)
def check_execution_scope(func, ctx):
    fa = func_accesses(func, ctx)
    calls = [c for c in fa.calls if c[0].op in WARP_OPS]
    if not calls:
        return []
    ks = kernels(fa)
    t = target_for(func, ctx, fa)
    warp = t.warp_size or 32
    out = []
    warp_blocks = _warp_executed_calls(fa)
    for call, loops, conds in calls:
        span = call.span
        if span is None:
            continue
        root = kernel_of(fa, loops)
        if root is None:
            if ks:
                out.append(error("thread/execution-scope",
                                 f"`T.{call.op}` is a warp-level intrinsic but runs outside "
                                 f"the GPU kernel (no thread binding encloses it)", span))
            else:
                out.append(warning("thread/execution-scope",
                                   f"`T.{call.op}` is a warp-level intrinsic in a function "
                                   f"without thread bindings: it can only run once inlined "
                                   f"into a kernel", span))
            continue
        tloops = ks[id(root)][1]
        tx = [lp for lp in tloops if lp.thread_tag == "threadIdx.x"]
        unknown = any(lp.thread_tag == "env_thread" for lp in tloops)
        n = const_int(tx[0].extent) if tx else (None if unknown else 1)
        if n is not None and n % warp != 0 and id(call) not in warp_blocks:
            rel = [(tx[0].span, f"threadIdx.x = {n}")] if tx and tx[0].span else []
            out.append(error("thread/execution-scope",
                             f"`T.{call.op}` needs whole warps, but threadIdx.x has {n} "
                             f"threads, not a multiple of the warp size {warp}", span, rel))
            continue
        if call.op in WMMA_OPS and tx and id(call) not in warp_blocks:
            lane = _lane_operand(call, tx[0].var, fa, warp)
            if lane is not None:
                rel = [(tx[0].span, f"threadIdx.x = {n}")] if tx[0].span else []
                out.append(error("thread/execution-scope",
                                 f"`T.{call.op}` is a warp-level intrinsic, but its operand "
                                 f"`{text(lane)}` differs between the threads of a warp: each "
                                 f"thread issues its own call (thread scope)", span, rel))
                continue
        tvars = {lp.var for lp in loops if is_thread(lp) and
                 (lp.thread_tag or "").startswith("threadIdx")}
        for cond, _ in conds:
            if set(vars_in(cond)) & tvars:
                out.append(error("thread/execution-scope",
                                 f"`T.{call.op}` is a warp-level intrinsic under a condition "
                                 f"that depends on threadIdx: the warp diverges", span))
                break
    return out
