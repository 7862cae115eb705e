"""Thread-bound kernels on the CPU: the reference interpreter running the CUDA lowering
(lower.py, barriers included) the way a GPU runs it, with a race detector.

Blocks run one after another (all of them, or an evenly spread sample); the threads of a
block run in lockstep, one lane per thread (threadIdx bindings widen the lanes), so between
two barriers every statement runs for all threads, in thread order, before the next one.  A
`vthread` binding runs in each thread as the lowering interleaves it (vthreads.py); `shared`
buffers have one copy per block, `local` ones one per thread.

The race detector keeps, per element of every shared and global buffer, the last writer and
the last reader (thread, statement) since the block's last barrier.  Two different threads
touching one element, at least one writing, with no barrier between, is a race, reported as
`thread/race` on the second access with the first as a related location, both with their
thread indices.  Writing the value an element already holds is not a race (the outcome does
not depend on the order; every thread copying one tile to shared memory does this).  In
global memory, two different blocks of one launch touching one element, one writing, is a
race too (nothing orders blocks); a function's separate kernels are ordered.
"""
from __future__ import annotations

import contextlib
import dataclasses

import numpy as np

from ...diagnostics import Diagnostic, Span, TirkitError
from ...ir import expr as E
from ...ir import stmt as S
from ...ir.dtype import parse_dtype
from ...ir.visit import find_all, find_first, walk
from ..handles import with_param_buffers
from ..inline_calls import inline_pointer_calls
from ..interp import Interpreter
from ..errors import RACE
from ..interp_exprs import LANES, TID, VECTOR_LANES, cast_to
from .lower import lower_gpu
from .scopes import is_thread_binding
from .sync import SYNC_OP, is_warp_barrier
from .tracks import Track
from . import ptx_run, shuffle, wmma
from .wmma_run import run_wmma



class Race(TirkitError):
    pass


class ThreadInterpreter(Interpreter):
    """`ThreadInterpreter(func, module).run(arrays, scalars)`; `blocks` limits how many thread
    blocks run (None: all)."""

    no_vectors_in_lanes = "the thread interpreter runs a block's threads as lanes, each of " \
        "them scalar: it has no vectors (a slice, T.Ramp, T.Broadcast) inside a thread " \
        "(`tirkit run --target cuda` runs it on a GPU)"

    def __init__(self, func, module=None, blocks=None, skip=()):
        func = inline_pointer_calls(with_param_buffers(func, module), module)
        lowered = lower_gpu(func, module, skip=skip, calls=False)   # callees: interpreted
        super().__init__(dataclasses.replace(func, body=lowered.body), module)
        self.max_blocks = blocks
        self.epoch = 0
        self.clock = 1                  # counts accesses; a warp barrier orders its warp's
        self.warp_sync = np.zeros(1024 // 32, np.int64)   # earlier ones: clock at the last
        self.warp_synced = False        # whether any warp barrier ran (else no warp is asked)
        self.tracks: dict = {}
        self.per_thread_keys: set = set()   # lane keys of per-thread storage (_s_Allocate)
        self.nodes: list = []
        self.node_ids: dict = {}
        self.thread_axes: list = []     # (tag, extent) in the order lanes were widened
        self.block_axes: list = []      # (tag, value) of the running block
        self.blocks_run = 0
        self.kernel_first_block = 0     # blocks of one kernel launch cannot synchronize
        self.block_coords: dict = {}    # block number -> ((tag, value), ...)
        self.param_data = {id(func.buffer_of(p).data) for p in func.params
                           if func.buffer_of(p) is not None}
        self.thread_extents: dict = {}   # threadIdx tag -> extent (the block's shape)
        self.thread_index: dict = {}     # tag -> (id(loop var), min) of the loop binding it
                                         # (blockIdx tags too)
        self.barriers = 0
        self.stored = set()     # id(data) of every buffer a statement or an intrinsic writes

        def writes(x):
            if isinstance(x, S.BufferStore):
                self.stored.add(id(x.buffer.data))
            elif isinstance(x, E.Call):
                self.stored.update(ptx_run.pointers(x, wmma.OPS))
        walk(self.func.body, writes)

    # ---- threads ------------------------------------------------------------------
    def _s_For(self, s, env):
        tag = s.thread_tag or ""
        if s.kind != "thread_binding":      # (vthread bindings are serial loops: vthreads.py)
            return super()._s_For(s, env)
        lo, ext = int(self.eval(s.min, env)), int(self.eval(s.extent, env))
        if ext < 1:     # CUDA refuses the launch (`invalid configuration argument`)
            raise TirkitError([Diagnostic(
                "thread/launch-limit", "error",
                f"{tag} extent {ext}: a launch needs at least one "
                f"{'block' if tag.startswith('blockIdx') else 'thread'} in each dimension",
                s.span)])
        if tag in self.thread_index:
            return self._same_thread(s, env, lo, ext)
        if tag.startswith("blockIdx"):
            if not self.block_axes:                  # a new kernel launch
                self.kernel_first_block = self.blocks_run + 1
            for i in self._block_sample(ext):
                e2 = dict(env)
                e2[id(s.loop_var)] = cast_to(lo + i, s.loop_var.dtype)
                self.block_axes.append((tag, lo + i))
                inner = s.body        # a block is counted by its innermost blockIdx loop
                if not (isinstance(inner, S.For) and inner.kind == "thread_binding" and
                        (inner.thread_tag or "").startswith("blockIdx") and
                        inner.thread_tag != tag and inner.thread_tag not in self.thread_index):
                    self.blocks_run += 1
                    self.epoch += 1               # a new block: nothing shared with the last
                    self.block_coords[self.blocks_run] = tuple(self.block_axes)
                with self._bound(s, lo):
                    self.exec(s.body, e2)
                self.block_axes.pop()
            return
        if not self.block_axes and not self.thread_axes:     # a launch of one block
            self.blocks_run += 1
            self.kernel_first_block = self.blocks_run
            self.epoch += 1
            self.block_coords[self.blocks_run] = ()
        e2 = self._widen(env, s.loop_var, lo, ext)
        old = env.get(TID)
        n = e2[LANES]
        tid = np.tile(np.arange(ext, dtype=np.int64), n // ext)
        if old is not None:
            tid = np.repeat(np.asarray(old, dtype=np.int64), ext) * ext + tid
        e2[TID] = tid
        for k in self.per_thread_keys.intersection(e2):
            e2[k] = tid
        self.thread_axes.append((tag, ext))
        self.thread_extents[tag] = ext
        try:
            with self._bound(s, lo):
                self.exec(s.body, e2)
        finally:
            self.thread_axes.pop()

    @contextlib.contextmanager
    def _bound(self, s, lo):
        """s's tag names s's index while its body runs (a loop there that binds the tag
        again reads it: _same_thread)."""
        self.thread_index[s.thread_tag] = (id(s.loop_var), lo)
        try:
            yield
        finally:
            del self.thread_index[s.thread_tag]

    def _same_thread(self, s, env, lo, ext):
        """A loop bound to a tag a loop around it binds (TVM's lowering of auto-copy blocks
        makes them): the thread's (or block's) one index again, as TVM unifies the two and
        CUDA has one `threadIdx.x`; threads past this loop's extent skip its body."""
        var, outer_lo = self.thread_index[s.thread_tag]
        t = np.asarray(env[var], dtype=np.int64) - outer_lo
        e2 = self._compress(env, t < ext)
        if e2 is None:
            return
        e2 = dict(e2)
        e2[id(s.loop_var)] = cast_to(np.asarray(e2[var], dtype=np.int64) - outer_lo + lo,
                                     s.loop_var.dtype)
        self.exec(s.body, e2)

    def _block_sample(self, ext):
        if self.max_blocks is None or ext <= self.max_blocks:
            return range(ext)
        k = max(1, self.max_blocks)
        return sorted({round(i * (ext - 1) / max(1, k - 1)) for i in range(k)})

    def _s_Allocate(self, s, env):
        """A local buffer allocated above the thread bindings of a block (used by two sibling
        threadIdx loops) is one per thread, as CUDA keeps it in each thread's registers:
        rows by thread number; outside the bindings a statement runs once, as thread 0, and
        what it stores reaches every row (on a GPU every thread runs it)."""
        n = 1
        if TID not in env and env[LANES] is None and \
                self._scope_of(s.buffer_var).startswith("local"):
            n = self._threads_under(s)
        if n <= 1:
            return super()._s_Allocate(s, env)
        super()._alloc(s.buffer_var, s.dtype, s.extents, {**env, LANES: n})
        key = self.storage[id(s.buffer_var)].lane_key
        self.per_thread_keys.add(key)
        self.exec(s.body, {**env, key: np.int64(0)})

    def _threads_under(self, s) -> int:
        """Threads of a block running s: the largest extent of each threadIdx tag, multiplied."""
        most = {}
        for x in find_all(s.body, lambda x: is_thread_binding(x, "threadIdx") and
                          isinstance(x.extent, E.IntImm), S.For):
            most[x.thread_tag] = max(most.get(x.thread_tag, 1), x.extent.value)
        return int(np.prod(list(most.values()), dtype=np.int64))

    def _s_Evaluate(self, s, env):
        v = s.value
        if getattr(v, "op", None) == SYNC_OP and is_warp_barrier(s):
            self.warp_barrier(env.get(TID, np.zeros(1, np.int64)))
            return
        if getattr(v, "op", None) == SYNC_OP:
            self.epoch += 1
            self.barriers += 1
            return
        if getattr(v, "op", None) in wmma.OPS:
            run_wmma(self, s, env)
            return
        if getattr(v, "op", None) in ptx_run.OPS:
            ptx_run.run_ptx(self, s, env)
            return
        super()._s_Evaluate(s, env)

    def warp_barrier(self, tid):
        """The warps of these threads meet (__syncwarp, or a `.sync` warp instruction): each
        one's accesses before are ordered before its accesses after."""
        self.clock += 1
        self.warp_sync[np.unique(self._warp_of(tid))] = self.clock
        self.warp_synced = True

    def _e_Call(self, e, env):
        if e.op in shuffle.OPS:
            return shuffle.run_shuffle(self, e, env, TID)
        return super()._e_Call(e, env)

    def _scope_of(self, data_var) -> str:
        if not hasattr(self, "_scopes"):
            self._scopes = {}
            walk_scopes(self.func.body, self._scopes)
        return self._scopes.get(id(data_var), "global")

    def _lane_safe(self, loop) -> bool:
        # a shared buffer allocated inside the loop has one copy per block, not one per
        # iteration: the loop's iterations must run one after another, not side by side
        def shared_alloc(x):
            return isinstance(x, S.Allocate) and self._scope_of(x.buffer_var).startswith("shared")
        if find_first(loop.body, shared_alloc) is not None:
            return False
        # a loop around the threads of a launch: its iterations are not threads, and as
        # lanes they would multiply the lanes of every thread
        if find_first(loop.body, lambda x: isinstance(x, S.For) and
                      x.kind == "thread_binding") is not None:
            return False
        return super()._lane_safe(loop)

    def _alloc(self, data_var, dtype, shape, env):
        scope = self._scope_of(data_var)
        if scope.startswith("shared") and env[LANES] is not None:
            e2 = dict(env)
            e2[LANES] = None                      # one copy for the whole block
            super()._alloc(data_var, dtype, shape, e2)
        else:
            super()._alloc(data_var, dtype, shape, env)
        self.tracks.pop(id(self.storage[id(data_var)].array), None)   # a fresh array

    # ---- accesses -----------------------------------------------------------------
    def _e_BufferLoad(self, e, env):
        if TID not in env or id(e.buffer.data) not in self.stored or \
                (parse_dtype(e.dtype).lanes != 1 and VECTOR_LANES not in env):
            return super()._e_BufferLoad(e, env)     # read-only data cannot race
        st, flat = self._address(e.buffer, e.indices, env, e)
        if st.lane_key is not None:
            return st.array[env[st.lane_key], flat]
        self._check(e, st, flat, env[TID], None)
        return st.array[flat]

    def _s_BufferStore(self, s, env):
        env = self._vector_store_lanes(s, env)
        st, flat = self._address(s.buffer, s.indices, env, s)
        if st.lane_key is None and TID in env:
            val = cast_to(self.eval(s.value, env), s.buffer.dtype)
            self._check(s, st, flat, env[TID], val)
            if np.ndim(flat) < np.ndim(val):    # threads storing to one element: the last
                flat = np.broadcast_to(flat, np.shape(val))     # thread's value stays
            st.array[flat] = val
            return
        super()._s_BufferStore(s, env)
        if st.lane_key in self.per_thread_keys and TID not in env:
            st.array[:, flat] = st.array[0, flat]

    def _node(self, node):
        k = id(node)
        i = self.node_ids.get(k)
        if i is None:
            i = self.node_ids[k] = len(self.nodes)
            self.nodes.append(node)
        return i

    def _warp_of(self, tid):
        """The warp of each lane id (lanes number the threads in the order their bindings
        nest; a warp is 32 consecutive threads in CUDA's x-fastest order)."""
        return shuffle.linear_ids(self, tid) // shuffle.WARP

    def _check(self, node, st, flat, tid, val):
        ptx_run.check_pending(self, node, st, flat, tid, "reads" if val is None else "writes")
        key = id(st.array)
        tr = self.tracks.get(key)
        if tr is None or tr.w_epoch.shape[0] != st.array.shape[-1]:
            tr = self.tracks[key] = Track.of(st.array.shape[-1], node)
        shape = np.broadcast_shapes(np.shape(flat), np.shape(tid), np.shape(val), (1,))
        flat = np.broadcast_to(np.asarray(flat, dtype=np.int64), shape)
        tid = np.broadcast_to(np.asarray(tid, dtype=np.int64), shape)
        me = self._node(node)
        ep = self.epoch
        wv = tr.w_epoch[flat] == ep
        bad = wv & (tr.w_tid[flat] != tid)
        if self.warp_synced:      # accesses of one warp before its __syncwarp are ordered
            warp = self._warp_of(tid)
            synced = self.warp_sync[warp]
            bad &= ~((self._warp_of(tr.w_tid[flat]) == warp) & (tr.w_clock[flat] < synced))
        if val is not None:
            vals = np.broadcast_to(np.asarray(val), flat.shape)
            same = st.array[flat] == vals
            bad &= ~same                       # writing what is there already is harmless
            rv = tr.r_epoch[flat] == ep
            badr = rv & (tr.r_tid[flat] != tid)
            if self.warp_synced:
                badr &= ~((self._warp_of(tr.r_tid[flat]) == warp) &
                          (tr.r_clock[flat] < synced))
            if badr.any():
                i = int(np.argmax(badr))
                self.report_error(node, tid[i], tr.r_node[flat[i]], tr.r_tid[flat[i]], "read",
                             "writes")
            self._same_batch_writes(node, flat, tid, vals)
        if bad.any():
            i = int(np.argmax(bad))
            self.report_error(node, tid[i], tr.w_node[flat[i]], tr.w_tid[flat[i]], "wrote",
                         "reads" if val is None else "writes")
        if id(node.buffer.data) in self.param_data:
            self._across_blocks(node, tr, flat, tid, val, st)
        self.clock += 1
        if val is None:
            tr.r_epoch[flat] = ep
            tr.r_tid[flat] = tid
            tr.r_node[flat] = me
            tr.r_clock[flat] = self.clock
        else:
            tr.w_epoch[flat] = ep
            tr.w_tid[flat] = tid
            tr.w_node[flat] = me
            tr.w_clock[flat] = self.clock
            tr.written[flat] = True

    def _across_blocks(self, node, tr, flat, tid, val, st):
        """Global memory between two blocks of one launch: no barrier orders them."""
        cur, first = self.blocks_run, self.kernel_first_block
        wb = tr.w_block[flat]
        bad = (wb >= first) & (wb != cur)
        if val is not None:
            bad &= st.array[flat] != np.broadcast_to(np.asarray(val), flat.shape)
            rb = tr.r_block[flat]
            badr = (rb >= first) & (rb != cur)
            if badr.any():
                i = int(np.argmax(badr))
                self.report_error(node, tid[i], tr.r_node[flat[i]], tr.r_tid[flat[i]], "read",
                             "writes", other_block=int(rb[i]))
        if bad.any():
            i = int(np.argmax(bad))
            self.report_error(node, tid[i], tr.w_node[flat[i]], tr.w_tid[flat[i]], "wrote",
                         "reads" if val is None else "writes", other_block=int(wb[i]))
        if val is None:
            tr.r_block[flat] = cur
        else:
            tr.w_block[flat] = cur

    def _same_batch_writes(self, node, flat, tid, vals):
        """Two threads of one lockstep store writing one element with different values."""
        if flat.size < 2:
            return
        first = np.empty(int(flat.max()) - int(flat.min()) + 1, np.int64)
        rel = flat - flat.min()
        first[rel] = np.arange(flat.size)          # one lane per element (the last)
        j = first[rel]
        clash = (tid[j] != tid) & (vals[j] != vals)
        if clash.any():
            i = int(np.argmax(clash))
            self.report_error(node, tid[i], self._node(node), tid[j[i]], "wrote", "writes")

    def thread_name(self, tid):
        parts, tid = [], int(tid)
        for tag, ext in reversed(self.thread_axes):
            parts.append(f"{tag}={tid % ext}")
            tid //= ext
        return ", ".join(reversed(parts)) or "thread 0"

    def report_error(self, node, tid, other_node, other_tid, what, mine, other_block=None):
        other = self.nodes[int(other_node)]
        block = ", ".join(f"{t}={v}" for t, v in self.block_axes)
        where = f" in block ({block})" if block else ""
        me, them = self.thread_name(tid), self.thread_name(other_tid)
        if other_block is not None:
            ob = ", ".join(f"{t}={v}" for t, v in self.block_coords.get(other_block, ()))
            where = f" between blocks ({block}) and ({ob})"
            them = f"{them} of block ({ob})"
        sp = _span(node)
        osp = _span(other)
        raise Race([Diagnostic(
            RACE, "error",
            f"data race{where}: thread ({me}) {mine} an element that thread ({them}) "
            f"{what} at line {osp.line} with no barrier between",
            sp, [(osp, f"thread ({them}) {what} the element here")])])

    def written_mask(self, array):
        """Which elements of a parameter array some thread wrote (None: none tracked)."""
        for st in self.storage.values():
            if np.may_share_memory(st.array, array):
                tr = self.tracks.get(id(st.array))
                return None if tr is None else tr.written.reshape(array.shape)
        return None


def _span(node):
    s = getattr(node, "span", None)
    return s if s is not None else Span(1, 1, 1, 2)


def walk_scopes(body, out):
    from ...ir.visit import walk

    def fn(x):
        if isinstance(x, S.DeclBuffer):
            out[id(x.buffer.data)] = x.buffer.scope or "global"
    walk(body, fn)


def run_threads(func, arrays, scalars=None, module=None, blocks=None, skip=()):
    """Run thread-bound func on numpy arrays in place; raises `Race` (a TirkitError with a
    `thread/race` diagnostic) on a data race.  Returns the interpreter (its `written_mask`,
    `blocks_run`, `barriers`)."""
    it = ThreadInterpreter(func, module, blocks=blocks, skip=skip)
    it.run(arrays, scalars)
    return it
