"""CUDA C of a lowered function: one `__global__` kernel per thread-bound loop nest.

A nest's blockIdx/threadIdx bindings give the launch: grid and block extents per dimension
(a tag bound more than once takes its largest extent; a smaller binding is guarded);
virtual threads are serial loops in each thread by now (vthreads.py).  `shared` buffers
become `__shared__` arrays at the top of the kernel, `local` buffers per-thread arrays where they are allocated (`warp`
buffers are refused); `T.tvm_storage_sync("shared")` (inserted by sync.py) is `__syncthreads()`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.visit import walk
from ..errors import UNSUPPORTED, fail
from .exprs import PRELUDE, ExprPrinter, ctype
from .scopes import allocation_scope
from .sync import SYNC_OP, is_warp_barrier
from ..passes.control import RET
from .vector import LANE_NAMES, multiple_of
from . import wmma

DIMS = ("x", "y", "z")


@dataclass
class Launch:
    """One kernel: its name, launch extents (ints, or C expressions of the scalar parameters
    when symbolic) and its parameters (buffers then scalars, in the function's order)."""
    name: str
    grid: tuple
    block: tuple
    params: list = field(default_factory=list)


@dataclass
class CudaSource:
    name: str
    kernels_code: str             # the kernels alone (several functions share one PRELUDE)
    kernels: list
    functions: list = field(default_factory=list)   # names of the device functions it holds

    @property
    def code(self) -> str:
        """A complete translation unit: PRELUDE and the kernels."""
        return PRELUDE + "\n" + self.kernels_code


class _Names(dict):
    """id(Var) -> unique C identifier."""

    def __init__(self):
        super().__init__()
        self.used = set()

    def add(self, var, hint=None):
        base = re.sub(r"\W", "_", hint or var.name) or "v"
        if base[0].isdigit():
            base = "v" + base
        name, i = base, 1
        while name in self.used:
            name, i = f"{base}_{i}", i + 1
        self.used.add(name)
        self[id(var)] = name
        return name


def _is_kernel_root(s) -> bool:
    return isinstance(s, S.For) and s.kind == "thread_binding" and \
        (s.thread_tag or "").startswith(("blockIdx", "threadIdx"))


def _extents(nest):
    ext = {}

    def fn(x):
        if isinstance(x, S.For) and x.kind == "thread_binding" and \
                (x.thread_tag or "").startswith(("blockIdx", "threadIdx")):
            prev = ext.get(x.thread_tag)
            if isinstance(x.extent, E.IntImm) and isinstance(prev, E.IntImm):
                ext[x.thread_tag] = x.extent if x.extent.value > prev.value else prev
            elif prev is None:
                ext[x.thread_tag] = x.extent
    walk(nest, fn)
    return ext


class _Kernel:
    def __init__(self, nest, name, param_names, device=False):
        self.nest, self.name = nest, name
        self.device = device        # a device function: `T.ret` returns, no thread bindings
        self.names = _Names()
        for var, n in param_names:
            self.names.add(var, n)
        self.expr = ExprPrinter(self.names)
        self.ext = _extents(nest)
        self.shared = []
        self.volatile = set()       # storage a `volatile_scope` attribute marks
        self.lines = []
        self.fragments = wmma.fragment_shapes(nest)

    def emit(self):
        body = []
        self.lines = body
        self.stmt(self.nest, 1)
        head = []
        for var, dtype, n in self.shared:
            vol = "volatile " if id(var) in self.volatile else ""
            head.append(f"  __shared__ __align__(16) {vol}{ctype(dtype)} "
                        f"{self.names[id(var)]}[{n}];")
        return head + body

    def launch(self, exprs):
        def dim(prefix):
            out = []
            for d in DIMS:
                e = self.ext.get(f"{prefix}.{d}")
                out.append(1 if e is None else e.value if isinstance(e, E.IntImm) else
                           exprs(e))
            return tuple(out)
        return dim("blockIdx"), dim("threadIdx")

    # ---- statements ------------------------------------------------------------------
    def out(self, depth, text):
        self.lines.append("  " * depth + text)

    def stmt(self, s, d):
        m = getattr(self, "_" + type(s).__name__, None)
        if m is None:
            fail(UNSUPPORTED, f"no CUDA C for {type(s).__name__}", s)
        m(s, d)

    def _SeqStmt(self, s, d):
        for x in s.seq:
            self.stmt(x, d)

    def _For(self, s, d):
        e = self.expr
        if s.kind == "thread_binding" and (s.thread_tag or "").startswith(("blockIdx",
                                                                            "threadIdx")):
            if self.device:
                fail(UNSUPPORTED, f"'{self.name}' binds a loop to {s.thread_tag}: a device "
                     "function runs in the calling thread", s)
            v = self.names.add(s.loop_var)
            tag = s.thread_tag
            launch = self.ext[tag]
            self._range(s)
            lo = "" if isinstance(s.min, E.IntImm) and s.min.value == 0 else f" + {e(s.min)}"
            self.out(d, f"{{ int {v} = (int){tag}{lo};")
            if s.extent is not launch and not (isinstance(s.extent, E.IntImm) and
                                               isinstance(launch, E.IntImm) and
                                               s.extent.value == launch.value):
                self.out(d + 1, f"if ({tag} < {e(s.extent)}) {{")
                self.stmt(s.body, d + 2)
                self.out(d + 1, "}")
            else:
                self.stmt(s.body, d + 1)
            self.out(d, "}")
            return
        if s.kind == "vectorized":
            from .vector import emit as emit_vector
            if emit_vector(self, s, d):
                return
        v = self.names.add(s.loop_var)
        self._range(s)
        t = ctype(s.loop_var.dtype)
        if s.kind in ("unrolled", "vectorized"):
            self.out(d, "#pragma unroll")
        lo, ext = e(s.min), e(s.extent)
        end = ext if lo in ("0", "0LL") else f"{lo} + {ext}"
        self.out(d, f"for ({t} {v} = {lo}; {v} < {end}; ++{v}) {{")
        self.stmt(s.body, d + 1)
        self.out(d, "}")

    def _range(self, loop):
        if isinstance(loop.min, E.IntImm) and isinstance(loop.extent, E.IntImm):
            self.expr.ranges[id(loop.loop_var)] = (loop.min.value,
                                                   loop.min.value + loop.extent.value - 1)

    def _IfThenElse(self, s, d):
        self.out(d, f"if ({self.expr(s.condition)}) {{")
        self.stmt(s.then_case, d + 1)
        if s.else_case is not None:
            self.out(d, "} else {")
            self.stmt(s.else_case, d + 1)
        self.out(d, "}")

    def _LetStmt(self, s, d):
        value = self.expr(s.value)
        v = self.names.add(s.var)
        self.out(d, f"{{ const {ctype(s.var.dtype)} {v} = {value};")
        self.stmt(s.body, d + 1)
        self.out(d, "}")

    def _AttrStmt(self, s, d):
        if s.attr_key == "volatile_scope" and isinstance(s.node, E.Var):
            self.volatile.add(id(s.node))     # warp-synchronous code reads it afresh
        self.stmt(s.body, d)

    def _AssertStmt(self, s, d):
        self.stmt(s.body, d)

    def _DeclBuffer(self, s, d):
        # (a shared or local `T.decl_buffer` that allocates is an Allocate by now: scopes.py)
        if id(s.buffer.data) not in self.names:
            fail(UNSUPPORTED, f"buffer '{s.buffer.name}' has no storage in the kernel", s)
        self.stmt(s.body, d)

    def _Allocate(self, s, d):
        n = 1
        for x in s.extents:
            if not isinstance(x, E.IntImm):
                fail(UNSUPPORTED, "a GPU allocation needs a constant size", s)
            n *= x.value
        scope = allocation_scope(s)
        name = s.body.buffer.name if isinstance(s.body, S.DeclBuffer) else s.buffer_var.name
        v = self.names.add(s.buffer_var, name)
        if scope.startswith("shared"):
            self.shared.append((s.buffer_var, s.dtype, n))
        elif scope.startswith("warp"):
            fail(UNSUPPORTED, f"'{name}' is a warp-scope buffer: CUDA C for warp memory "
                 "(register shuffles) is not generated; use shared or local",
                 s.body.buffer if s.body.buffer.span is not None else s)
        elif scope.startswith("local"):
            # aligned as parameters and shared arrays are: vector accesses assume it
            self.out(d, f"__align__(16) {ctype(s.dtype)} {v}[{n}];")
        elif scope.startswith("wmma."):
            self.out(d, wmma.declare(s.buffer_var, s.dtype, n,
                                     self.fragments.get(id(s.buffer_var)), name))
        else:
            fail(UNSUPPORTED, f"a '{scope}' buffer allocated inside a GPU kernel has no CUDA "
                 "storage (use a shared or local scope)", s)
        self.stmt(s.body, d)

    def _Evaluate(self, s, d):
        v = s.value
        if isinstance(v, E.Call) and v.op == RET and self.device:
            self.out(d, f"return {self.expr(v.args[0])};")
        elif isinstance(v, E.Call) and v.op == SYNC_OP:
            self.out(d, "__syncwarp();" if is_warp_barrier(s) else "__syncthreads();")
        elif isinstance(v, E.Call) and v.op in ("tvm_region", "region"):
            return
        elif not isinstance(v, (E.IntImm, E.FloatImm)):
            self.out(d, f"{self.expr(v)};")

    def _BufferStore(self, s, d):
        e = self.expr
        data = e(s.buffer.data)
        (ix,) = s.indices
        if isinstance(ix, E.Ramp):
            vt = ctype(s.value.dtype)
            base = e._dense(ix)
            if multiple_of(ix.base, ix.lanes):     # else lane by lane: it would fault
                self.out(d, f"*({vt}*)({data} + {base}) = {e(s.value)};")
            else:
                lanes = " ".join(f"{data}[{base} + {k}] = v.{LANE_NAMES[k]};"
                                 for k in range(ix.lanes))
                self.out(d, f"{{ {vt} v = {e(s.value)}; {lanes} }}")
        else:
            self.out(d, f"{data}[{e(ix)}] = {e(s.value)};")


def _nests(body):
    """The kernel roots of body: a single nest, or a sequence of them."""
    if _is_kernel_root(body):
        return [body]
    if isinstance(body, S.SeqStmt) and all(_is_kernel_root(x) for x in body.seq):
        return list(body.seq)
    if isinstance(body, S.Allocate) and isinstance(body.body, S.DeclBuffer):
        fail(UNSUPPORTED, f"buffer '{body.body.buffer.name}' ({body.body.buffer.scope}) is "
             "allocated outside the thread bindings: a GPU kernel cannot hold it",
             body.body.buffer if body.body.buffer.span is not None else body)
    fail(UNSUPPORTED, "CUDA code needs every statement of the function inside a "
         "blockIdx/threadIdx binding", body)


def _params(lowered, restrict=True) -> list:
    """(var, C name, C declaration) of a lowered function's buffers' data, then scalars."""
    params = []
    taken = _Names()
    for b in lowered.buffers:
        n = taken.add(b.data, b.name)
        params.append((b.data, n, f"{ctype(b.dtype)}* {'__restrict__ ' if restrict else ''}{n}"))
    for v in lowered.scalars:
        n = taken.add(v)
        params.append((v, n, f"{ctype(v.dtype)} {n}"))
    return params


def _device_functions(lowered) -> tuple:
    """(C of the device functions `lowered` calls: their prototypes, then their definitions;
    their names).  A callee takes its buffers' data and scalars as the call passes them and
    returns what `T.ret` gives (0 where it ends without one)."""
    heads, bodies, names = [], [], []
    for c in lowered.callees:           # (constant shapes: module_calls.lowered_callees)
        params = _params(c, restrict=False)     # a caller may pass one buffer twice
        name = f"tirkit_call_{c.name}"
        ret = ctype(c.ret_dtype) if c.ret_dtype else "void"
        head = f"__device__ {ret} {name}({', '.join(p for _, _, p in params)})"
        k = _Kernel(c.body, c.name, [(v, n) for v, n, _ in params], device=True)
        lines = k.emit()
        if k.shared:
            fail(UNSUPPORTED, f"'{c.name}' allocates shared memory: a device function's "
                 "storage is its thread's", c.body)
        tail = [f"  return ({ret})0;"] if c.ret_dtype else []
        heads.append(head + ";")
        bodies.append(head + " {\n" + "\n".join(lines + tail) + "\n}\n")
        names.append(name)
    return ("\n".join(heads + [""] + bodies) if heads else ""), names


def emit_source(lowered) -> CudaSource:
    """CUDA C of a LoweredFunc (see lower.py), with the device functions it calls."""
    body = lowered.body
    params = _params(lowered)                    # (var, C name, C declaration)
    pn = [(v, n) for v, n, _ in params]
    host = ExprPrinter({id(v): n for v, n in pn})
    parts = []
    launches = []
    nests = _nests(body)
    for i, nest in enumerate(nests):
        kname = f"{lowered.name}_kernel" if len(nests) == 1 else f"{lowered.name}_kernel{i}"
        k = _Kernel(nest, kname, pn)
        lines = k.emit()
        grid, block = k.launch(host)
        threads = 1
        for x in block:
            threads = threads * x if isinstance(x, int) and threads else None
        bounds = f" __launch_bounds__({threads})" if threads else ""
        parts.append(f"// grid {grid}, block {block}\n"
                     f"extern \"C\" __global__ void{bounds} {kname}(" +
                     ", ".join(p for _, _, p in params) + ") {\n" + "\n".join(lines) + "\n}\n")
        launches.append(Launch(kname, grid, block, [n for _, n, _ in params]))
    functions, names = _device_functions(lowered)
    return CudaSource(lowered.name, "\n".join(([functions] if functions else []) + parts),
                      launches, names)

