"""Warp shuffles (`T.tvm_warp_shuffle_down(mask, v, offset, width, warp_size)`,
`T.tvm_warp_shuffle_up(...)`, `T.tvm_warp_shuffle_xor(mask, v, lane_mask, ...)` and
`T.tvm_warp_shuffle(mask, v, lane, width, warp_size)`) and the mask of a warp's active
lanes (`T.tvm_warp_activemask()`) in the thread interpreter and as CUDA C
(`__shfl_down_sync`, `__shfl_up_sync`, `__shfl_xor_sync`, `__shfl_sync`, `__activemask`).

A warp's lanes are divided into segments of `width` lanes along threadIdx.x (the lowering
makes a shuffle only where threadIdx.x alone is reduced and `width` divides 32, so a segment
is a run of consecutive threadIdx.x).  `shuffle_down` gives each lane the value of the lane
`offset` above it in its segment, or its own where that lane is past the segment's end
(`shuffle_up` the lane `offset` below, or its own before the segment's start); `shuffle_xor`
the lane whose index in the segment is its own xor `lane_mask`; `shuffle` gives every lane
the value of lane `lane` of its segment.  Every thread of a block runs each statement, so
the interpreter's active mask is the whole warp."""
from __future__ import annotations

import numpy as np

from ..errors import UNSUPPORTED, fail

DOWN, IDX = "tvm_warp_shuffle_down", "tvm_warp_shuffle"
UP, XOR, ACTIVEMASK = "tvm_warp_shuffle_up", "tvm_warp_shuffle_xor", "tvm_warp_activemask"
_C = {DOWN: "__shfl_down_sync", UP: "__shfl_up_sync", XOR: "__shfl_xor_sync",
      IDX: "__shfl_sync"}
OPS = tuple(_C) + (ACTIVEMASK,)


def shuffle_c(e, emit) -> str:
    if e.op == ACTIVEMASK:
        return "__activemask()"
    fn = _C[e.op]
    mask, v, at, width = (emit(a) for a in e.args[:4])
    return f"{fn}({mask}, {v}, {at}, {width})"


def run_shuffle(interp, e, env, tid_key):
    """The shuffled value of every lane: lanes are threads, numbered by `env[tid_key]`
    (mixed radix over the thread bindings, in the order `interp.thread_axes` lists them)."""
    if e.op == ACTIVEMASK:
        return np.uint32(0xFFFFFFFF)
    x_at = next((i for i, (tag, _) in enumerate(interp.thread_axes) if tag == "threadIdx.x"),
                None)
    if x_at is None or tid_key not in env:
        fail(UNSUPPORTED, f"T.{e.op} outside a threadIdx.x binding", e)
    stride = int(np.prod([ext for _, ext in interp.thread_axes[x_at + 1:]], dtype=np.int64))
    ext_x = interp.thread_axes[x_at][1]
    v = np.asarray(interp.eval(e.args[1], env))
    at, width = int(interp.eval(e.args[2], env)), int(interp.eval(e.args[3], env))
    tid = np.asarray(env[tid_key], dtype=np.int64)
    x = (tid // stride) % ext_x
    if e.op == DOWN:
        src_x = np.where(x % width + at < width, x + at, x)
    elif e.op == UP:
        src_x = np.where(x % width >= at, x - at, x)
    elif e.op == XOR:
        src_x = x - x % width + (x % width ^ at) % width
    else:
        src_x = x - x % width + at
    src = tid + (src_x - x) * stride
    lane_of = np.full(int(max(tid.max(), src.max())) + 1, -1, np.int64)
    lane_of[tid] = np.arange(tid.size)
    j = lane_of[src]
    v = np.broadcast_to(v, tid.shape)
    return np.where(j >= 0, v[np.maximum(j, 0)], v)
