"""The schedule state: an IRModule, stable handles into it, and one replace point.

    sch = tirkit.Schedule(module)           # IRModule or PrimFunc
    b = sch.get_block("C")                  # BlockRV: re-resolved by (function, block name)
    i, j, k = sch.get_loops(b)              # LoopRV: re-resolved by its loop variable
    io, ii = sch.split(i, [None, 32])       # every primitive: checks, then one replace
    sch.mod                                 # the current IRModule
    sch.trace.as_python()                   # runnable `sch.split(...)` lines

Handles stay valid across replaces as long as what they name still exists: a block keeps
its name, a loop keeps its variable (a primitive that rebuilds a loop keeps the variable
object; one that removes a loop invalidates its handle, and using it raises ScheduleError).
"""
from __future__ import annotations

import dataclasses

from ..ir import stmt as S
from . import _ir
from .errors import ScheduleError
from .trace import Trace


class BlockRV:
    __slots__ = ("func", "name")

    def __init__(self, func, name):
        self.func = func
        self.name = name

    def __repr__(self):
        return f"BlockRV({self.name!r})"


class LoopRV:
    __slots__ = ("func", "var")

    def __init__(self, func, var):
        self.func = func
        self.var = var

    def __repr__(self):
        return f"LoopRV({self.var.name!r})"


class BlockInfo:
    """Where a block sits: its realize, ancestor statements (outermost first)."""
    __slots__ = ("realize", "block", "ancestors")

    def __init__(self, realize, block, ancestors):
        self.realize = realize
        self.block = block
        self.ancestors = ancestors

    @property
    def loops(self):
        """Loops between the enclosing block and this one, outermost first."""
        out = []
        for a in reversed(self.ancestors):
            if isinstance(a, S.Block):
                break
            if isinstance(a, S.For):
                out.append(a)
        return out[::-1]

    @property
    def scope(self):
        """The nearest enclosing block (the scope block)."""
        for a in reversed(self.ancestors):
            if isinstance(a, S.Block):
                return a
        return None


class _Index:
    def __init__(self, func: S.PrimFunc):
        self.blocks: dict = {}        # name -> [BlockInfo]
        self.loops: dict = {}         # id(loop var) -> (For, ancestors)
        self.order: list = []         # BlockInfo in program order
        self.parent: dict = {}        # id(stmt) -> parent stmt
        stack = []

        def go(x):
            if isinstance(x, tuple):
                for y in x:
                    go(y)
                return
            if not isinstance(x, S.Stmt):
                return
            if stack:
                self.parent[id(x)] = stack[-1]
            if isinstance(x, S.BlockRealize):
                info = BlockInfo(x, x.block, list(stack))
                self.blocks.setdefault(x.block.name_hint, []).append(info)
                self.order.append(info)
            elif isinstance(x, S.For):
                self.loops[id(x.loop_var)] = (x, list(stack))
            stack.append(x)
            for f in _ir._STMT_FIELDS.get(type(x), ()):
                go(getattr(x, f))
            stack.pop()
        go(func.body)


class Schedule:
    def __init__(self, mod, func_name=None):
        from ..ir.stmt import IRModule, PrimFunc
        if isinstance(mod, PrimFunc):
            mod = IRModule(((mod.name, mod),), None, spelling=mod.spelling)
        if not isinstance(mod, IRModule):
            raise TypeError("Schedule takes an IRModule or a PrimFunc")
        self._mod = mod
        self.original = mod
        self._index: dict = {}
        self._renamed: dict = {}      # (func, old block name) -> new name
        funcs = [n for n, _ in mod.prim_funcs()]
        self._default = func_name or ("main" if "main" in funcs or len(funcs) != 1
                                      else funcs[0])
        self.trace = Trace()
        self._current = None          # the primitive being applied (for error messages)

    # ---- the module ---------------------------------------------------------------------------
    @property
    def mod(self):
        return self._mod

    def func(self, name=None) -> S.PrimFunc:
        name = name or self._default
        try:
            f = self._mod[name]
        except KeyError:
            raise ScheduleError(self._current or "get_block", "no-function",
                                f"the module has no function '{name}'") from None
        if not isinstance(f, S.PrimFunc):
            raise ScheduleError(self._current or "get_block", "no-function",
                                f"'{name}' is not a TIR function")
        return f

    def index(self, func_name) -> _Index:
        ix = self._index.get(func_name)
        if ix is None:
            ix = self._index[func_name] = _Index(self.func(func_name))
        return ix

    def replace(self, func_name, old, new):
        """The one replace point: swap the subtree `old` (found by identity) for `new`."""
        f = self.func(func_name)
        body = _ir.replace_nodes(f.body, {id(old): new})
        f2 = dataclasses.replace(f, body=body)
        funcs = tuple((n, f2 if n == func_name else g) for n, g in self._mod.functions)
        self._mod = dataclasses.replace(self._mod, functions=funcs)
        self._index.pop(func_name, None)

    def rename_block(self, func_name, old, new):
        """Record that block `old` is now called `new` (handles follow)."""
        self._renamed[(func_name, old)] = new

    def fresh_block_name(self, func_name, base):
        names = self.index(func_name).blocks
        name, k = base, 0
        while name in names:
            k += 1
            name = f"{base}_{k}"
        return name

    def replace_func(self, func_name, new_func):
        funcs = tuple((n, new_func if n == func_name else g) for n, g in self._mod.functions)
        self._mod = dataclasses.replace(self._mod, functions=funcs)
        self._index.pop(func_name, None)

    # ---- handles ------------------------------------------------------------------------------
    def error(self, kind, message, node=None, related=()):
        return ScheduleError(self._current or "schedule", kind, message, node, related)

    def block_info(self, rv: BlockRV) -> BlockInfo:
        if not isinstance(rv, BlockRV):
            raise self.error("bad-argument", f"expected a block handle, got {rv!r}")
        name = rv.name
        while (rv.func, name) in self._renamed:
            name = self._renamed[(rv.func, name)]
        infos = self.index(rv.func).blocks.get(name)
        if not infos:
            raise self.error("stale-handle", f"block '{rv.name}' is no longer in "
                             f"function '{rv.func}'")
        if len(infos) > 1:
            raise self.error("duplicate-block", f"block name '{rv.name}' is used "
                             f"{len(infos)} times", infos[1].block)
        return infos[0]

    def loop_info(self, rv: LoopRV):
        """(For, ancestors) of a loop handle."""
        if not isinstance(rv, LoopRV):
            raise self.error("bad-argument", f"expected a loop handle, got {rv!r}")
        hit = self.index(rv.func).loops.get(id(rv.var))
        if hit is None:
            raise self.error("stale-handle", f"loop '{rv.var.name}' is no longer in "
                             f"function '{rv.func}'")
        return hit

    def get(self, rv):
        """The IR node a handle names now (Block or For)."""
        if isinstance(rv, BlockRV):
            return self.block_info(rv).block
        return self.loop_info(rv)[0]

    def get_sref_parent(self, func, node):
        return self.index(func).parent.get(id(node))

    # ---- queries (recorded in the trace so that replay can rebind handles) --------------------
    def get_block(self, name, func_name=None) -> BlockRV:
        func = func_name or self._default
        prev, self._current = self._current, "get_block"
        try:
            rv = BlockRV(func, name)
            self.block_info(rv)
        finally:
            self._current = prev
        self.trace.record("get_block", {"name": name, "func_name": func_name}, rv)
        return rv

    def get_loops(self, block) -> list:
        prev, self._current = self._current, "get_loops"
        try:
            info = self.block_info(block)
            rvs = [self.loop_of(block.func, f) for f in info.loops]
        finally:
            self._current = prev
        self.trace.record("get_loops", {"block": block}, rvs)
        return rvs

    def get_child_blocks(self, parent) -> list:
        if isinstance(parent, BlockRV):
            node = self.block_info(parent).block
        else:
            node = self.loop_info(parent)[0]
        out = []

        def go(x):
            if isinstance(x, tuple):
                for y in x:
                    go(y)
                return
            if isinstance(x, S.BlockRealize):
                out.append(BlockRV(parent.func, x.block.name_hint))
                return
            if isinstance(x, S.Stmt):
                for f in _ir._STMT_FIELDS.get(type(x), ()):
                    if not (isinstance(x, S.Block) and f == "init"):
                        go(getattr(x, f))
        go(node.body)
        self.trace.record("get_child_blocks", {"parent": parent}, out)
        return out

    def get_producers(self, block) -> list:
        from .analysis import producers
        info = self.block_info(block)
        out = [BlockRV(block.func, b.block.name_hint) for b in producers(self, block.func, info)]
        self.trace.record("get_producers", {"block": block}, out)
        return out

    def get_consumers(self, block) -> list:
        from .analysis import consumers
        info = self.block_info(block)
        out = [BlockRV(block.func, b.block.name_hint) for b in consumers(self, block.func, info)]
        self.trace.record("get_consumers", {"block": block}, out)
        return out

    def loop_of(self, func, f: S.For) -> LoopRV:
        return LoopRV(func, f.loop_var)

    def block_of(self, func, b) -> BlockRV:
        if isinstance(b, S.BlockRealize):
            b = b.block
        return BlockRV(func, b if isinstance(b, str) else b.name_hint)

    # ---- primitives -----------------------------------------------------------------------------
    def __getattr__(self, name):
        from .registry import load
        prims = load()
        p = prims.get(name)
        if p is None:
            raise AttributeError(name)

        def call(*args, **kwargs):
            try:
                bound = p.signature.bind(self, *args, **kwargs)
            except TypeError as e:
                raise ScheduleError(name, "bad-argument", str(e)) from None
            bound.apply_defaults()
            kw = dict(list(bound.arguments.items())[1:])
            prev, self._current = self._current, name
            try:
                out = p.fn(*bound.args, **bound.kwargs)
            finally:
                self._current = prev
            if p.record:
                self.trace.record(name, kw, out, p.varargs)
            return out
        call.__name__ = name
        call.__doc__ = p.fn.__doc__
        return call

    def __dir__(self):
        from .registry import load
        return sorted(set(super().__dir__()) | set(load()))

    def copy(self) -> "Schedule":
        s = Schedule.__new__(Schedule)
        s._mod, s.original, s._index = self._mod, self.original, {}
        s._renamed = dict(self._renamed)
        s._default, s._current = self._default, None
        s.trace = self.trace.copy()
        return s

    def script(self) -> str:
        from ..script.printer import to_script
        return to_script(self._mod)
