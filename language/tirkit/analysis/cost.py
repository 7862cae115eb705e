"""Cost of blocks and kernels: FLOPs, bytes moved, unique bytes, intensity, roofline time.

    costs = kernel_costs(func)          # KernelCost: .blocks {id(Block): BlockCost}, .total
    c = costs.block(block)              # BlockCost of one block (its nested blocks included)
    c.flops.value                       # 4194304 for a 128^3 float32 matmul block (None: symbolic)
    roofline_seconds(c, "llvm")         # max(compute time, memory time) on a target's peaks

Counting rules (stated once, used everywhere):
- A block runs once per iteration of the loops around it (a `T.where` predicate is ignored,
  so the count is an upper bound).  Counts are polynomials in the symbolic extents.
- FLOPs: the operations of the counted values (`opcount.py`, the rule `tirkit bench` counts
  with too: stored values, lets' values and evaluated values; floating-point operations and
  integer operations on data, one per lane, `T.fma` two, a warp's matrix product 2 m n k),
  summed whatever their dtype (int8 dot products count), per execution.  A reduction's init
  is a store of a constant: no FLOPs.
- Bytes read/written: one element per BufferLoad of a counted value (not one whose address
  is taken) and per BufferStore, per execution (traffic with no cache).  Unique bytes: the
  bounding box of every access of a buffer over the iteration domain (compulsory traffic),
  summed over buffers.  Intensity = FLOPs / unique bytes.
- A call of a module function (`Module.f(...)`, with the module given) adds f's FLOPs and
  bytes read/written once per call, with the call's scalar arguments for f's parameters (a
  count that keeps another symbol of f's own adds nothing; f's buffers are views of what the
  caller passes, so its unique bytes are not the caller's); a function already on the call
  path adds nothing more, so a recursion counts each function once.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..arith.interval import interval
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.dtype import bytes_of
from ..ir.text import expr_text
from ..ir.visit import const_int, function_calls, walk
from .opcount import counted_values, fragment_shapes, value_ops
from .roofline import (PEAKS, bound_by, default_target, format_seconds,  # noqa: F401
                       roofline_seconds, target_peaks)

# ----------------------------------------------------------------------------- polynomials


class Poly:
    """A polynomial with integer coefficients over named symbols: {(sym, ...): coef}."""
    __slots__ = ("terms",)

    def __init__(self, terms=None):
        self.terms = {k: v for k, v in (terms or {}).items() if v}

    @staticmethod
    def const(c: int) -> "Poly":
        return Poly({(): int(c)})

    @staticmethod
    def sym(name: str) -> "Poly":
        return Poly({(name,): 1})

    def __add__(self, other: "Poly") -> "Poly":
        t = dict(self.terms)
        for k, v in other.terms.items():
            t[k] = t.get(k, 0) + v
        return Poly(t)

    def __mul__(self, other) -> "Poly":
        if isinstance(other, int):
            other = Poly.const(other)
        t: dict = {}
        for k1, v1 in self.terms.items():
            for k2, v2 in other.terms.items():
                k = tuple(sorted(k1 + k2))
                t[k] = t.get(k, 0) + v1 * v2
        return Poly(t)

    __rmul__ = __mul__

    def substitute(self, values: dict):
        """The polynomial with each symbol replaced by its Poly in `values`; None when a
        symbol has none."""
        out = Poly()
        for k, c in self.terms.items():
            term = Poly.const(c)
            for name in k:
                if name not in values:
                    return None
                term = term * values[name]
            out = out + term
        return out

    @property
    def value(self):
        """The integer value, or None when the polynomial has symbols."""
        if not self.terms:
            return 0
        if set(self.terms) == {()}:
            return self.terms[()]
        return None

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        for k in sorted(self.terms, key=lambda k: (-len(k), k)):
            c = self.terms[k]
            if not k:
                parts.append(f"{c:,}")
            else:
                parts.append("·".join(([f"{c:,}"] if c != 1 else []) + list(k)))
        return " + ".join(parts)


def extent_poly(e) -> Poly:
    """An extent (or product of extents) as a polynomial in the symbolic sizes."""
    if isinstance(e, E.IntImm):
        return Poly.const(e.value)
    if isinstance(e, E.Var):
        return Poly.sym(e.name)
    if isinstance(e, E.Mul):
        return extent_poly(e.a) * extent_poly(e.b)
    if isinstance(e, E.Add):
        return extent_poly(e.a) + extent_poly(e.b)
    return Poly.sym(f"({expr_text(e)})")


def extent_text(e) -> str:
    """An extent as the asymptotic-cost string writes it: `128`, `n`, `(n + 1)`."""
    t = expr_text(e)
    return t if isinstance(e, (E.IntImm, E.Var)) else f"({t})"


# ----------------------------------------------------------------------------- results


@dataclass
class BlockCost:
    name: str
    executions: Poly = field(default_factory=lambda: Poly.const(1))
    flops: Poly = field(default_factory=Poly)
    bytes_read: Poly = field(default_factory=Poly)
    bytes_written: Poly = field(default_factory=Poly)
    footprint: dict = field(default_factory=dict)      # buffer -> [(lo, hi) | None per dim]
    loop_extents: tuple = ()                           # extents (IR exprs) around and inside
    op_dtype: str = "float32"
    dtype_seen: bool = False

    @property
    def unique_bytes(self):
        """Bytes of the bounding boxes of every buffer touched; None when symbolic."""
        total = 0
        for buf, box in self.footprint.items():
            n = bytes_of(buf.dtype)
            for dim, iv in zip(buf.shape, box):
                size = const_int(dim)
                if iv is not None:
                    lo, hi = iv
                    if size is not None:
                        lo, hi = max(lo, 0), min(hi, size - 1)
                    n *= max(hi - lo + 1, 0)
                elif size is not None:
                    n *= size
                else:
                    return None
            total += n
        return total

    @property
    def intensity(self):
        f, u = self.flops.value, self.unique_bytes
        if f is None or not u:
            return None
        return f / u

    @property
    def asymptotic(self) -> str:
        """`O(n·m·64)`: the product of the loop extents the block runs under."""
        if not self.loop_extents:
            return "O(1)"
        return "O(" + "·".join(extent_text(e) for e in self.loop_extents) + ")"


@dataclass
class KernelCost:
    name: str
    blocks: dict                                       # id(Block) -> BlockCost
    total: BlockCost

    def block(self, block):
        return self.blocks.get(id(block))


# ----------------------------------------------------------------------------- counting

def _reads(value) -> list:
    """The loads a value reads: its BufferLoads but those whose address a call takes
    (`T.address_of(A[i])` passes a pointer; what the callee reads is its own count)."""
    out = []

    def fn(x):
        if isinstance(x, E.Call) and x.op == "address_of":
            return False
        if isinstance(x, E.BufferLoad):
            out.append(x)
        return True
    walk(value, fn)
    return out


def _range_of(minimum, extent):
    lo, ext = interval(minimum, {}), extent
    if lo is None or lo[0] != lo[1] or not isinstance(ext, E.IntImm):
        return None
    return (lo[0], lo[0] + ext.value - 1)


class _Counter:
    def __init__(self, module=None, path=None, memo=None, fragments=None):
        self.blocks: dict = {}
        self.fragments = fragments or {}   # opcount.fragment_shapes of the function
        self.stack: list = []          # BlockCost accumulators, innermost last
        self.module = module           # the IRModule whose functions calls reach, or None
        self.funcs = dict(module.prim_funcs()) if module is not None else {}
        self.path = set() if path is None else path    # the functions being counted
        self.memo = {} if memo is None else memo       # name -> (flops, read, written)
        # of one call, as Polys over the callee's symbols

    def calls(self, e, mult: Poly):
        """Add the work of the module functions expression e calls, once per call."""
        if self.module is None:
            return
        for call in function_calls(e):
            work = self._work(call)
            for acc in self.stack:
                acc.flops = acc.flops + mult * work[0]
                acc.bytes_read = acc.bytes_read + mult * work[1]
                acc.bytes_written = acc.bytes_written + mult * work[2]

    def _work(self, call) -> tuple:
        """(FLOPs, bytes read, bytes written) of one call of a module function: its counts
        with the call's scalar arguments for its parameters (a loop over a size it is passed
        runs that many times), each zero where it keeps a symbol of the callee's own, and
        zero for a function unknown or on the call path already."""
        name = call.callee
        zero = (Poly(), Poly(), Poly())
        g = self.funcs.get(name)
        if name in self.path or g is None:
            return zero
        if name not in self.memo:
            self.path.add(name)
            try:
                total, _ = _count(g, self.module, self.path, self.memo)
            finally:
                self.path.discard(name)
            self.memo[name] = (total.flops, total.bytes_read, total.bytes_written)
        args = {p.name: extent_poly(a) for p, a in zip(g.params, call.args)
                if g.buffer_of(p) is None and not p.dtype.startswith("handle")}
        return tuple(Poly() if w is None else w for w in
                     (p.substitute(args) for p in self.memo[name]))

    def _touch(self, buf, indices, env, nbytes, mult, write):
        for acc in self.stack:
            if write:
                acc.bytes_written = acc.bytes_written + mult * nbytes
            else:
                acc.bytes_read = acc.bytes_read + mult * nbytes
            box = [interval(i, env) for i in indices]
            old = acc.footprint.get(buf)
            if old is None:
                acc.footprint[buf] = box
            else:
                acc.footprint[buf] = [
                    None if (a is None or b is None) else (min(a[0], b[0]), max(a[1], b[1]))
                    for a, b in zip(old, box)]

    def store(self, s: S.BufferStore, env, mult: Poly):
        self._value(s.value, env, mult)
        self._touch(s.buffer, s.indices, env, bytes_of(s.value.dtype), mult, True)

    def _value(self, value, env, mult: Poly):
        """A counted value (`opcount.counted_values`): its operations, its loads, its calls."""
        ops = value_ops(value, self.fragments)
        for acc in self.stack:
            acc.flops = acc.flops + mult * ops.total
            if ops.total and not acc.dtype_seen:
                acc.op_dtype, acc.dtype_seen = ops.dtype, True
        for ld in _reads(value):
            self._touch(ld.buffer, ld.indices, env, bytes_of(ld.dtype), mult, False)
        self.calls(value, mult)

    def visit(self, s, env, mult: Poly, extents: tuple, init_div=None):
        if s is None:
            return
        t = type(s)
        if t is S.SeqStmt:
            for x in s.seq:
                self.visit(x, env, mult, extents, init_div)
        elif t is S.For:
            env2 = dict(env)
            r = _range_of(s.min, s.extent)
            if r is not None:
                env2[id(s.loop_var)] = r
            ext = s.extent
            self.visit(s.body, env2, mult * extent_poly(ext), extents + (ext,), init_div)
        elif t is S.BlockRealize:
            self.block(s.block, env, mult, extents)
        elif t is S.Block:
            self.block(s, env, mult, extents)
        elif t is S.BufferStore:
            self.store(s, env, mult)
        elif t in (S.IfThenElse,):
            self.visit(s.then_case, env, mult, extents, init_div)
            self.visit(s.else_case, env, mult, extents, init_div)
        elif t in (S.LetStmt, S.AssertStmt, S.Allocate, S.AllocateConst, S.DeclBuffer,
                   S.AttrStmt, S.While):
            if t is S.AttrStmt and isinstance(s.node, S.IterVar) and \
                    s.attr_key in ("thread_extent", "virtual_thread"):
                env2 = dict(env)
                r = _range_of(E.IntImm("int32", 0), s.value)
                if r is not None:
                    env2[id(s.node.var)] = r
                self.visit(s.body, env2, mult * extent_poly(s.value), extents + (s.value,))
            else:
                for v in counted_values(s):
                    self._value(v, env, mult)
                self.visit(s.body, env, mult, extents, init_div)
        elif t is S.Evaluate:
            self._value(s.value, env, mult)

    def block(self, b: S.Block, env, mult, extents):
        acc = BlockCost(b.name_hint, executions=mult, loop_extents=extents)
        self.blocks[id(b)] = acc
        env2 = dict(env)
        reduce_extent = Poly.const(1)
        for iv in b.iter_vars:
            r = _range_of(iv.dom.min, iv.dom.extent)
            if r is not None:
                env2[id(iv.var)] = r
            if iv.kind == "R":
                reduce_extent = reduce_extent * extent_poly(iv.dom.extent)
        self.stack.append(acc)
        try:
            if b.init is not None:
                # the init runs once per output element: executions / reduction extent
                init_mult = _divide(mult, reduce_extent)
                self._init(b.init, env2, init_mult)
            self.visit(b.body, env2, mult, extents)
        finally:
            self.stack.pop()
        # extents under the block (loops inside it) belong to nested blocks' strings

    def _init(self, s, env, mult):
        if isinstance(s, S.SeqStmt):
            for x in s.seq:
                self._init(x, env, mult)
        elif isinstance(s, S.BufferStore):
            self.store(s, env, mult)
        else:
            self.visit(s, env, mult, ())


def _divide(p: Poly, q: Poly) -> Poly:
    """p / q for a monomial q that divides every term of p (else p unchanged)."""
    if len(q.terms) != 1:
        return p
    (qk, qc), = q.terms.items()
    out = {}
    for k, c in p.terms.items():
        rest = list(k)
        for s in qk:
            if s not in rest:
                return p
            rest.remove(s)
        if c % qc:
            return p
        out[tuple(rest)] = c // qc
    return Poly(out)


def _count(func: S.PrimFunc, module, path=None, memo=None) -> tuple:
    """(the function's total BlockCost, {id(Block): BlockCost})"""
    c = _Counter(module, path, memo, fragment_shapes(func.body))
    total = BlockCost(func.name)
    c.stack.append(total)
    c.visit(func.body, {}, Poly.const(1), ())
    c.stack.pop()
    return total, c.blocks


def kernel_costs(func: S.PrimFunc, module=None) -> KernelCost:
    """Costs of every block of a function, and of the whole function; `module`, the
    IRModule holding it, gives the work of the functions it calls."""
    total, blocks = _count(func, module, {func.name})
    return KernelCost(func.name, blocks, total)


__all__ = ["Poly", "BlockCost", "KernelCost", "kernel_costs", "roofline_seconds", "bound_by",
           "target_peaks", "default_target", "format_seconds", "PEAKS"]
