"""Warp shuffles (`T.tvm_warp_shuffle_down(mask, v, offset, width, warp_size)`,
`T.tvm_warp_shuffle_up(...)`, `T.tvm_warp_shuffle_xor(mask, v, lane_mask, ...)` and
`T.tvm_warp_shuffle(mask, v, lane, width, warp_size)`) and the mask of a warp's active
lanes (`T.tvm_warp_activemask()`) in the thread interpreter and as CUDA C
(`__shfl_down_sync`, `__shfl_up_sync`, `__shfl_xor_sync`, `__shfl_sync`, `__activemask`).

Lanes are numbered as CUDA numbers them: a thread's linear index runs x fastest, then y,
then z, and a warp is 32 consecutive ones, so a warp of a block 8 threads wide holds four
rows of threadIdx.y.  Each warp's lanes are divided into segments of `width` lanes.
`shuffle_down` gives each lane the value of the lane `offset` above it in its segment, or
its own where that lane is past the segment's end (`shuffle_up` the lane `offset` below, or
its own before the segment's start); `shuffle_xor` the lane whose index in the segment is
its own xor `lane_mask`; `shuffle` gives every lane the value of lane `lane` (modulo
`width`) of its segment.  Each lane may name its own offset, lane or mask.  Every thread of
a block runs each statement, so the interpreter's active mask is the whole warp."""
from __future__ import annotations

import numpy as np

from ..errors import UNSUPPORTED, fail

WARP = 32
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


def linear_ids(interp, tid):
    """CUDA's linear index of each lane (x fastest, then y, then z; a warp is 32 consecutive
    ones): lanes number the threads in the order their bindings nest (mixed radix over
    `interp.thread_axes`, the last fastest)."""
    tid = np.asarray(tid, dtype=np.int64)
    axes, rest = {}, tid
    for tag, ext in reversed(interp.thread_axes):
        axes[tag] = rest % ext
        rest = rest // ext
    lin, mul = np.zeros_like(tid), 1
    for tag in ("threadIdx.x", "threadIdx.y", "threadIdx.z"):
        if tag in axes:
            lin = lin + axes[tag] * mul
            mul *= interp.thread_extents.get(tag, 1)
    return lin


def run_shuffle(interp, e, env, tid_key):
    """The shuffled value of every lane, by CUDA's lane numbering (linear_ids): within each
    segment of `width` lanes of a warp; a source lane no thread of the block runs leaves the
    lane its own value."""
    if e.op == ACTIVEMASK:
        return np.uint32(0xFFFFFFFF)
    if tid_key not in env:
        fail(UNSUPPORTED, f"T.{e.op} outside a threadIdx binding", e)
    tid = np.asarray(env[tid_key], dtype=np.int64)
    v = np.broadcast_to(np.asarray(interp.eval(e.args[1], env)), tid.shape)
    # the offset, lane or lane mask may differ from lane to lane
    at, width = (np.broadcast_to(np.asarray(interp.eval(a, env), dtype=np.int64), tid.shape)
                 for a in e.args[2:4])
    lin = linear_ids(interp, tid)
    lane = lin % WARP
    pos = lane % width
    if e.op == DOWN:
        src = np.where(pos + at < width, pos + at, pos)
    elif e.op == UP:
        src = np.where(pos >= at, pos - at, pos)
    elif e.op == XOR:
        src = np.where((pos ^ at) < width, pos ^ at, pos)
    else:
        src = at % width
    src_lin = lin - pos + src
    index_of = np.full(int(max(lin.max(), src_lin.max())) + 1, -1, np.int64)
    index_of[lin] = np.arange(lin.size)
    j = index_of[src_lin]
    return np.where(j >= 0, v[np.maximum(j, 0)], v)
