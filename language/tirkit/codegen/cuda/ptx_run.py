"""PTX's intrinsics in the thread interpreter: mma (mma.py) and ldmatrix (ldmatrix.py) run
for each warp among the running threads, all 32 of its lanes together (numbered as CUDA
numbers them, shuffle.linear_ids); asynchronous copies (cp_async.py) land when a wait
completes their group; griddepcontrol (griddep.py) does nothing in a kernel run alone.
Shared and global memory are read and written through the race detector, as the thread
that receives (ldmatrix) or issues (cp.async) the access."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ir import expr as E
from ...ir.dtype import bytes_of
from ..errors import RACE, UNSUPPORTED, fail
from ..interp_exprs import TID
from . import cp_async, griddep, ldmatrix, mma, shuffle
from .wmma_run import call_site, inside, lane_ints

OPS = mma.OPS + ldmatrix.OPS + cp_async.OPS + tuple(griddep.OPS)


def run_ptx(it, stmt, env):
    """Run one PTX intrinsic call (the Evaluate stmt) for the threads of env."""
    op = stmt.value.op
    if op in griddep.OPS:           # a kernel run alone: no grid before it, none after
        griddep.check(stmt.value)
        return
    if TID not in env:
        fail(UNSUPPORTED, f"T.{op} runs in the threads of a block (inside a threadIdx "
             "binding)", stmt)
    tid = np.atleast_1d(np.asarray(env[TID], dtype=np.int64))
    if op in mma.OPS:
        _mma(it, stmt, env, tid)
    elif op in ldmatrix.OPS:
        _ldmatrix(it, stmt, env, tid)
    else:
        _async(it).run(it, stmt, env, tid)


def _uniform(it, stmt, e, env, n, what):
    v = lane_ints(it, e, env, n)
    if np.any(v != v[0]):
        fail(UNSUPPORTED, f"T.{stmt.value.op}: {what} differs from thread to thread; PTX names "
             "it in the instruction", stmt)
    return int(v[0])


def _registers(it, stmt, env, var, off, count, n):
    """(storage, row of each lane, (n, count) elements) of a thread's registers."""
    st = it.storage.get(id(var))
    if st is None or st.lane_key is None:
        fail(UNSUPPORTED, f"T.{stmt.value.op} operand '{getattr(var, 'name', var)}' must be a "
             "thread's registers (a local buffer)", stmt)
    sel = np.broadcast_to(np.asarray(env[st.lane_key]), (n,))
    flat = lane_ints(it, off, env, n)[:, None] + np.arange(count)
    inside(stmt, st, flat, f"the registers '{var.name}'")
    return st, sel, flat


def _memory(it, stmt, var, scope):
    st = it.storage.get(id(var))
    if st is None or st.lane_key is not None or not it._scope_of(var).startswith(scope):
        fail(UNSUPPORTED, f"T.{stmt.value.op} operand '{getattr(var, 'name', var)}' must be "
             f"{scope} memory", stmt)
    return st


def _warps(it, stmt, tid):
    """Each warp's positions among the running lanes, ordered by lane."""
    lin = shuffle.linear_ids(it, tid)
    warp, lane = lin // shuffle.WARP, lin % shuffle.WARP
    out = []
    for w in np.unique(warp):
        idx = np.nonzero(warp == w)[0]
        if idx.shape[0] != shuffle.WARP or np.unique(lane[idx]).shape[0] != shuffle.WARP:
            fail(UNSUPPORTED, f"T.{stmt.value.op} run by {idx.shape[0]} threads of a warp "
                 "(needs its 32 lanes, once each)", stmt)
        out.append(idx[np.argsort(lane[idx])])
    return out


def _mma(it, stmt, env, tid):
    call = stmt.value
    f = mma.form(call)
    n = tid.shape[0]
    a = call.args
    regs = [_registers(it, stmt, env, a[6 + 2 * j], a[7 + 2 * j], f.counts[j], n)
            for j in range(3)]
    for order in _warps(it, stmt, tid):
        got = [st.array[sel[order][:, None], flat[order]] for st, sel, flat in regs]
        st, sel, flat = regs[2]
        st.array[sel[order][:, None], flat[order]] = \
            mma.warp_mma(f, *got).astype(st.array.dtype)


def _halves(stmt, st, var):
    if st.array.dtype.itemsize != 2:
        fail(UNSUPPORTED, f"T.{stmt.value.op} moves 16-bit elements, but '{var.name}' holds "
             f"{st.array.dtype.itemsize * 8}-bit ones", stmt)
    return st.array.view(np.uint16)


def _ldmatrix(it, stmt, env, tid):
    call = stmt.value
    trans, num, dst_var, d_off, src_var, s_off = ldmatrix.parts(call)
    n = tid.shape[0]
    trans = bool(_uniform(it, stmt, trans, env, n, "trans"))
    num = ldmatrix.check(call, _uniform(it, stmt, num, env, n, "num"))
    dst, sel, dflat = _registers(it, stmt, env, dst_var, d_off, 2 * num, n)
    src = _memory(it, stmt, src_var, "shared")
    d_bits, s_bits = _halves(stmt, dst, dst_var), _halves(stmt, src, src_var)
    rows = lane_ints(it, s_off, env, n)
    matrix, row, col = ldmatrix.positions(trans, num)
    it.warp_barrier(tid)            # `.sync`: the warp's lanes meet before it reads
    for order in _warps(it, stmt, tid):
        # lane 8 j + r gives the address of row r of matrix j
        flat = rows[order][matrix * ldmatrix.ROWS + row] + col
        inside(stmt, src, flat, f"'{src_var.name}'")
        it._check(call_site(it, stmt, src_var), src, flat.reshape(-1),
                  np.repeat(tid[order], flat.shape[1]), None)
        d_bits[sel[order][:, None], dflat[order]] = s_bits[flat]


@dataclass
class _Copies:
    """cp.async copies of one thread block in flight: each a batch of lanes, with the group
    each lane's copy was committed to (-1: not yet)."""
    block: int
    committed: np.ndarray       # groups each thread has committed
    batches: list

    def run(self, it, stmt, env, tid):
        call = stmt.value
        if self.block != it.blocks_run:            # a new block: its shared memory is new
            self.block, self.batches = it.blocks_run, []
            self.committed[:] = 0
        if tid.max() >= self.committed.shape[0]:
            self.committed = np.concatenate(
                [self.committed, np.zeros(int(tid.max()) + 1 - self.committed.shape[0],
                                          np.int64)])
        if call.op in cp_async.COPY_OPS:
            self._issue(it, stmt, env, tid)
            return
        mine = np.unique(tid)
        if call.op in cp_async.COMMIT_OPS:
            for b in self.batches:
                open_ = (b["group"] < 0) & np.isin(b["tid"], mine)
                b["group"][open_] = self.committed[b["tid"][open_]]
            self.committed[mine] += 1
            return
        keep = cp_async.wait_count(call)
        for b in self.batches:
            done = (b["group"] >= 0) & np.isin(b["tid"], mine) & \
                (b["group"] < self.committed[b["tid"]] - keep)
            if done.any():
                flat, vals, who = b["flat"][done], b["vals"][done], b["tid"][done]
                for k in ("flat", "vals", "tid", "group"):
                    b[k] = b[k][~done]
                it._check(call_site(it, b["stmt"], b["var"]), b["st"], flat.reshape(-1),
                          np.repeat(who, flat.shape[1]), vals.reshape(-1))
                b["st"].array[flat] = vals
        self.batches = [b for b in self.batches if b["tid"].size]

    def check_pending(self, it, node, st, flat, tid, mine):
        """Stop at an access to an element a copy in flight will write: on a GPU it reads
        (or its write is overwritten by) whatever the copy has landed by then."""
        if self.block != it.blocks_run:
            return
        shape = np.broadcast_shapes(np.shape(flat), np.shape(tid))
        flat = np.broadcast_to(np.asarray(flat), shape).reshape(-1)
        tids = np.broadcast_to(np.asarray(tid), shape).reshape(-1)
        for b in self.batches:
            if b["st"] is not st:
                continue
            hit = np.isin(flat, b["flat"])
            if hit.any():
                i = int(np.argmax(hit))
                row = int(np.argmax((b["flat"] == flat[i]).any(axis=1)))
                me, them = it.thread_name(tids[i]), it.thread_name(b["tid"][row])
                line = b["stmt"].span.line if b["stmt"].span else "?"
                fail(RACE, f"data race: thread ({me}) {mine} an element that an asynchronous "
                     f"copy of thread ({them}) at line {line} writes, before a wait completes "
                     "it (T.ptx_wait_group)", node,
                     [(b["stmt"].span, f"thread ({them}) copies into the element here")])

    def _issue(self, it, stmt, env, tid):
        call = stmt.value
        dtype, dst, d_off, src, s_off, nbytes = cp_async.copy_parts(call)
        n = tid.shape[0]
        dst_st, src_st = _memory(it, stmt, dst, "shared"), _memory(it, stmt, src, "global")
        size = bytes_of(dtype)
        for st, var in ((dst_st, dst), (src_st, src)):
            if st.array.dtype.itemsize != size:
                fail(UNSUPPORTED, f"T.{call.op} copies {dtype} elements, but '{var.name}' "
                     f"holds {st.array.dtype.itemsize * 8}-bit ones", stmt)
        k = cp_async.check_size(call, _uniform(it, stmt, nbytes, env, n, "the size"), size)
        dflat = lane_ints(it, d_off, env, n)[:, None] + np.arange(k)
        sflat = lane_ints(it, s_off, env, n)[:, None] + np.arange(k)
        inside(stmt, dst_st, dflat, f"'{dst.name}'")
        inside(stmt, src_st, sflat, f"'{src.name}'")
        it._check(call_site(it, stmt, src), src_st, sflat.reshape(-1), np.repeat(tid, k), None)
        self.batches.append({"stmt": stmt, "var": dst, "st": dst_st, "flat": dflat,
                             "vals": src_st.array[sflat].astype(dst_st.array.dtype),
                             "tid": tid.copy(), "group": np.full(n, -1, np.int64)})


def pointers(call, other_ops=()) -> set:
    """id(data) of the buffers a PTX or wmma call (`other_ops`) takes the address of, which
    it may write: their reads go through the race detector as stored buffers' do."""
    if call.op not in OPS and call.op not in other_ops:
        return set()
    out, stack = set(), list(call.args)
    while stack:
        a = stack.pop()
        if isinstance(a, E.Var) and a.dtype == "handle":
            out.add(id(a))
        elif isinstance(a, E.Call):
            stack.extend(a.args)
    return out


def check_pending(it, node, st, flat, tid, mine):
    """The race detector's test of an access against the block's copies in flight."""
    copies = it.__dict__.get("_cp_async")
    if copies is not None and copies.batches:
        copies.check_pending(it, node, st, flat, tid, mine)


def _async(it) -> _Copies:
    copies = it.__dict__.get("_cp_async")
    if copies is None:
        copies = it._cp_async = _Copies(it.blocks_run, np.zeros(1024, np.int64), [])
    return copies
