"""Buffer accesses of a function (or of one statement) with what encloses them.

`accesses(func)` walks a PrimFunc once and records every load and store with its loops
(thread bindings included), its blocks, its guards (`T.where` predicates, `if` statements,
`T.if_then_else` and `T.Select` conditions) and its place in program order;
`stmt_accesses(stmt)` does the same under one statement.  The regions these accesses cover
are computed in analysis/regions.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import expr as E
from ..ir import stmt as S


# intrinsics whose buffer operands are addresses (read and/or written by the intrinsic)
_POINTER_OPS = ("tvm_", "ptx_", "ptx.", "mma_", "address_of", "access_ptr", "call_packed",
                "call_extern", "call_intrin", "call_pure_extern", "call_llvm")


ENV_THREAD = "env_thread"      # a launched thread whose tag the IR does not carry


@dataclass(eq=False)
class Loop:
    var: E.Var
    min: object
    extent: object
    kind: str                    # serial | parallel | vectorized | unrolled | thread_binding
    thread_tag: str = None
    span: object = None
    node: object = None


@dataclass(eq=False)
class Access:
    buffer: S.Buffer
    is_write: bool
    indices: tuple
    span: object
    loops: tuple                 # enclosing Loop records, outermost first
    blocks: tuple                # enclosing BlockRealize, root first
    block_loops: tuple           # per block: how many loops enclose it
    conds: tuple                 # ((cond PrimExpr, block depth), ...)
    order: int
    opaque: bool = False         # the buffer is passed whole (region unknown)
    in_init: bool = False
    local_depth: int = None      # block depth of a DeclBuffer/Allocate that made it, if any
    speculative: bool = False    # under a `T.Select` operand: evaluated whatever its condition
    into: object = None          # a load in a store's value or indices: the Buffer it stores
    value: object = None         # a store: the value it stores


@dataclass
class FuncAccesses:
    accesses: list
    env: dict                    # block iterator Var -> binding PrimExpr
    iter_vars: dict              # block iterator Var -> IterVar
    realizes: list               # every BlockRealize, in order
    loops_of: dict               # id(BlockRealize) -> tuple of enclosing Loops
    blocks_of: dict              # id(BlockRealize) -> tuple of enclosing BlockRealizes
    allocs: list                 # [(Buffer, BlockRealize owner)]
    lets: dict = field(default_factory=dict)
    loops: list = field(default_factory=list)   # every Loop, in order
    loop_parents: dict = field(default_factory=dict)   # id(Loop) -> enclosing Loops
    calls: list = field(default_factory=list)   # [(Call, loops, conds)] of every call
    # the source regions of `T.match_buffer`s, as accesses of unknown direction (an index
    # Ramp spans a dimension's extent); kept apart from `accesses`: only compaction uses them
    matched: list = field(default_factory=list)
    decls: list = field(default_factory=list)   # every DeclBuffer and Allocate, in order
    decl_loops: dict = field(default_factory=dict)   # id(decls' statement) -> enclosing Loops


def accesses(func, cache=None) -> FuncAccesses:
    key = ("accesses", id(func))
    if cache is not None and key in cache:
        return cache[key]
    w = _Walker()
    w.stmt(func.body)
    out = FuncAccesses(w.out, w.env, w.iter_vars, w.realizes, w.loops_of, w.blocks_of,
                       w.allocs, w.lets, w.all_loops, w.loop_parents, w.calls, w.matched,
                       w.decls, w.decl_loops)
    if cache is not None:
        cache[key] = out
    return out


def stmt_accesses(stmt) -> FuncAccesses:
    """The accesses under one statement, with the loops and guards inside it."""
    w = _Walker()
    w.stmt(stmt)
    return FuncAccesses(w.out, w.env, w.iter_vars, w.realizes, w.loops_of, w.blocks_of,
                        w.allocs, w.lets, w.all_loops, w.loop_parents, w.calls, w.matched,
                        w.decls, w.decl_loops)


class _Walker:
    def __init__(self):
        self.out = []
        self.env = {}
        self.iter_vars = {}
        self.lets = {}
        self.realizes = []
        self.loops_of = {}
        self.blocks_of = {}
        self.allocs = []
        self.all_loops = []
        self.loop_parents = {}
        self.calls = []
        self.matched = []
        self.decls = []
        self.decl_loops = {}
        self.loops = []
        self.blocks = []
        self.block_loops = []
        self.conds = []
        self.order = 0
        self.in_init = False
        self.selects = 0         # how many `T.Select` operands enclose the expression
        self.into = None         # the buffer of the store whose value is being walked
        self.local = {}          # data Var -> block depth of its DeclBuffer/Allocate

    # ---- statements ------------------------------------------------------------------
    def stmt(self, s):
        t = type(s)
        if s is None:
            return
        if t is S.SeqStmt:
            pushed = 0
            for x in s.seq:
                if type(x) is S.Evaluate and isinstance(x.value, E.Call) and \
                        x.value.op == "launch_thread" and len(x.value.args) == 2 and \
                        isinstance(x.value.args[0], E.Var):
                    # `T.launch_thread(v, n)` as a statement: the rest runs under it
                    v, n = x.value.args
                    lp = Loop(v, E.IntImm("int32", 0), n, "thread_binding", ENV_THREAD,
                              x.span, x)
                    self.all_loops.append(lp)
                    self.loop_parents[id(lp)] = tuple(self.loops)
                    self.loops.append(lp)
                    pushed += 1
                    continue
                self.stmt(x)
                self.order += 1
            for _ in range(pushed):
                self.loops.pop()
        elif t is S.For:
            self.loop(Loop(s.loop_var, s.min, s.extent, s.kind, s.thread_tag, s.span, s),
                      s.body)
        elif t is S.AttrStmt and s.attr_key in ("thread_extent", "virtual_thread") \
                and isinstance(s.node, S.IterVar):
            iv = s.node
            self.expr(s.value)
            self.loop(Loop(iv.var, E.IntImm("int32", 0), s.value, "thread_binding",
                           iv.thread_tag or "", s.span, s), s.body)
        elif t is S.BlockRealize:
            self.realize(s)
        elif t is S.BufferStore:
            self.into = s.buffer
            for i in s.indices:
                self.expr(i)
            self.expr(s.value)
            self.into = None
            self.record(s.buffer, True, s.indices, s.span or s.value.span, value=s.value)
        elif t is S.IfThenElse:
            self.expr(s.condition)
            self.conds.append((s.condition, len(self.blocks)))
            self.stmt(s.then_case)
            self.conds.pop()
            if s.else_case is not None:
                self.conds.append((E.Not(s.condition), len(self.blocks)))
                self.stmt(s.else_case)
                self.conds.pop()
        elif t is S.LetStmt:
            self.expr(s.value)
            self.lets[s.var] = s.value
            self.stmt(s.body)
        elif t is S.Evaluate:
            self.expr(s.value)
        elif t in (S.Allocate, S.AllocateConst, S.DeclBuffer):
            if t is not S.AllocateConst:
                self.decls.append(s)
                self.decl_loops[id(s)] = tuple(self.loops)
            key = s.buffer.data if t is S.DeclBuffer else s.buffer_var
            had = key in self.local
            if not had:
                self.local[key] = len(self.blocks)
            self.stmt(s.body)
            if not had:
                del self.local[key]
        elif t in (S.AttrStmt, S.AssertStmt, S.While):
            if t is S.AttrStmt:
                self.expr(s.value)
            if t is S.While or t is S.AssertStmt:
                self.expr(s.condition)
            self.stmt(s.body)

    def loop(self, lp, body):
        self.all_loops.append(lp)
        self.loop_parents[id(lp)] = tuple(self.loops)
        self.loops.append(lp)
        self.stmt(body)
        self.loops.pop()

    def realize(self, r):
        b = r.block
        for v in r.iter_values:
            self.expr(v)
        self.realizes.append(r)
        self.loops_of[id(r)] = tuple(self.loops)
        self.blocks_of[id(r)] = tuple(self.blocks)
        for iv, v in zip(b.iter_vars, r.iter_values):
            self.env[iv.var] = v
            self.iter_vars[iv.var] = iv
        pred = r.predicate
        has_pred = not (isinstance(pred, E.IntImm) and pred.value)
        if has_pred:
            self.conds.append((pred, len(self.blocks)))
        self.blocks.append(r)
        self.block_loops.append(len(self.loops))
        for buf in b.alloc_buffers:
            self.allocs.append((buf, r))
        for m in b.match_buffers:
            self.matched_region(m)
        if b.init is not None:
            saved = self.in_init
            self.in_init = True
            self.stmt(b.init)
            self.in_init = saved
            self.order += 1
        self.stmt(b.body)
        self.blocks.pop()
        self.block_loops.pop()
        if has_pred:
            self.conds.pop()

    # ---- expressions -----------------------------------------------------------------
    def expr(self, e):
        stack = [e]
        while stack:
            x = stack.pop()
            t = type(x)
            if t is E.BufferLoad:
                self.record(x.buffer, False, x.indices, x.span)
                stack.extend(x.indices)
            elif t is E.Call:
                if x.op == "if_then_else" and len(x.args) == 3:
                    self.expr(x.args[0])
                    self.conds.append((x.args[0], len(self.blocks)))
                    self.expr(x.args[1])
                    self.conds.pop()
                    self.conds.append((E.Not(x.args[0], x.args[0].dtype), len(self.blocks)))
                    self.expr(x.args[2])
                    self.conds.pop()
                else:
                    self.calls.append((x, tuple(self.loops), tuple(self.conds)))
                    if x.op.startswith(_POINTER_OPS):
                        for arg in x.args:
                            if isinstance(arg, E.BufferLoad):     # an operand by address
                                # (a vector load, indexed by a Ramp, is an operand by value)
                                self.record(arg.buffer, False, arg.indices, arg.span,
                                            not any(isinstance(i, E.Ramp)
                                                    for i in arg.indices))
                                stack.extend(arg.indices)
                            elif arg is not None:
                                stack.append(arg)
                        continue
                    stack.extend(a for a in x.args if a is not None)
                    stack.extend(v for _, v in x.kwargs if isinstance(v, E.PrimExpr))
            elif t is E.BufferRef:
                self.record(x.buffer, False, (), x.span, opaque=True)
            elif t is E.Select:
                self.expr(x.condition)
                self.selects += 1
                self.conds.append((x.condition, len(self.blocks)))
                self.expr(x.true_value)
                self.conds.pop()
                self.conds.append((E.Not(x.condition, x.condition.dtype), len(self.blocks)))
                self.expr(x.false_value)
                self.conds.pop()
                self.selects -= 1
            elif t is E.Let:
                stack.append(x.value)
                self.lets[x.var] = x.value
                stack.append(x.body)
            elif isinstance(x, E.BinaryOp):
                stack.append(x.b)
                stack.append(x.a)
            elif t in (E.Not, E.Cast):
                stack.append(x.a if t is E.Not else x.value)
            elif t in (E.Ramp,):
                stack.append(x.base)
            elif t is E.Broadcast:
                stack.append(x.value)
            elif t is E.ArrayExpr:
                stack.extend(x.elements)

    def matched_region(self, m):
        src = m.source
        idx = []
        for rg in src.region:
            self.expr(rg.min)
            self.expr(rg.extent)
            if isinstance(rg.extent, E.IntImm) and rg.extent.value > 1:
                idx.append(E.Ramp(rg.min, E.IntImm(rg.min.dtype, 1), rg.extent.value,
                                  rg.min.dtype))
            elif isinstance(rg.extent, E.IntImm):
                idx.append(rg.min)
            else:                               # a region of symbolic size: whole buffer
                idx = None
                break
        out = self.out
        self.out = self.matched
        self.record(src.buffer, False, idx or (), m.span, opaque=idx is None)
        self.out = out

    def record(self, buf, is_write, indices, span, opaque=False, value=None):
        self.out.append(Access(buf, is_write, tuple(indices), span, tuple(self.loops),
                               tuple(self.blocks), tuple(self.block_loops),
                               tuple(self.conds), self.order, opaque, self.in_init,
                               self.local.get(buf.data), self.selects > 0,
                               None if is_write else self.into, value))
