"""The lowering pipeline: TensorIR with blocks -> flat loops over one-dimensional buffers.

Each step is a small function taking and returning a statement; `PIPELINE` lists them in
the order they run.  `lower(func, module)` runs them all and returns a `LoweredFunc`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.dtype import lanes_of
from ...ir.visit import walk
from ..errors import THREAD_BINDING, UNSUPPORTED, fail
from .attrs import attr_statements
from .blocks import blocks_to_loops, predicates_to_conditions
from .compact import compact_regions
from .constants import collect_constants
from .control import check_control_flow, return_dtype
from .flatten import flatten_buffers
from .indices import simplify_indices
from .operator_calls import operator_calls
from .simplify import is_region_declaration, simplify
from .unroll import unroll_loops

PIPELINE = (
    ("attr_statements", attr_statements),
    ("operator_calls", operator_calls),
    ("predicates_to_conditions", predicates_to_conditions),
    ("blocks_to_loops", blocks_to_loops),
    ("compact_regions", compact_regions),
    ("simplify_indices", simplify_indices),
    ("flatten_buffers", flatten_buffers),
    ("unroll_loops", unroll_loops),
    ("simplify", simplify),
)


@dataclass
class LoweredFunc:
    name: str
    buffers: list                 # param buffers, in parameter order (original shapes)
    scalars: list                 # scalar Vars passed by value (explicit params, shape vars)
    scalar_sources: list          # per scalar: None (explicit) or (buffer index, dim)
    body: S.Stmt
    constants: dict = field(default_factory=dict)   # const_name -> flat numpy array
    ret_dtype: str | None = None  # what T.ret returns (None: the function returns nothing)
    param_buffers: tuple = ()     # per parameter: whether it is a buffer (else a scalar)
    callees: tuple = ()           # the LoweredFuncs of the functions it calls, transitively


REGION_MESSAGE = "an access with vector indices in two dimensions (a region, as " \
    "`A[0:4, 0:2]`): a vector runs along one index; write a loop over the other"


def region_access(indices) -> bool:
    """Whether the indices of a load or store are vectors in two or more dimensions."""
    return sum(lanes_of(i.dtype) > 1 for i in indices) > 1


def check_cpu(func: S.PrimFunc):
    """GPU-only constructs and scalable vectors get a diagnostic naming them, never a crash
    later."""
    def fn(x):
        if isinstance(x, S.For) and x.kind == "thread_binding":
            fail(THREAD_BINDING, f"loop '{x.loop_var.name}' is bound to GPU thread "
                 f"'{x.thread_tag}': the CPU backend cannot run it (compile for a GPU target, "
                 "or replace the binding with a serial or parallel loop)", x)
        if isinstance(x, S.AttrStmt) and x.attr_key in ("thread_extent", "virtual_thread"):
            fail(THREAD_BINDING, "a GPU thread extent cannot run on the CPU backend", x)
        if isinstance(x, (E.Ramp, E.Broadcast)) and not isinstance(x.lanes, int):
            fail(UNSUPPORTED, "a scalable vector (its lanes depend on T.vscale()): the CPU "
                 "backend makes vectors of a fixed width", x)
        if isinstance(x, S.IterVar) and x.thread_tag:
            fail(THREAD_BINDING, f"iterator bound to GPU thread '{x.thread_tag}': the CPU "
                 "backend cannot run it", x)
    walk(func.body, fn)
    check_regions(func)


def check_regions(func: S.PrimFunc):
    """A load with vector indices in two dimensions gets a diagnostic at it, before
    flattening adds their vectors of different lanes."""
    def fn(x):
        if isinstance(x, S.Evaluate) and is_region_declaration(x):
            return False                # `T.realize(A[0:8, 0:4], "")` runs nothing
        if isinstance(x, (E.BufferLoad, S.BufferStore)) and region_access(x.indices):
            fail(UNSUPPORTED, REGION_MESSAGE, x)
    walk(func.body, fn)


def signature(func: S.PrimFunc):
    buffers, scalars, sources = [], [], []
    seen = set()
    for p in func.params:
        b = func.buffer_of(p)
        if b is not None:
            buffers.append(b)
        elif p.dtype != "handle":
            scalars.append(p)
            sources.append(None)
            seen.add(id(p))
        else:
            fail(UNSUPPORTED, f"parameter '{p.name}' is a handle without a buffer: it is "
                 f"not the data of one buffer alone (`T.decl_buffer(..., data={p.name})`, "
                 "used nowhere else), so the shape and dtype of its array are unknown", p)
    for bi, b in enumerate(buffers):
        for d, s in enumerate(b.shape):
            if isinstance(s, E.Var) and id(s) not in seen:
                seen.add(id(s))
                scalars.append(s)
                sources.append((bi, d))
    return buffers, scalars, sources


def lower(func: S.PrimFunc, module: S.IRModule | None = None, trace=None,
          calls: bool = True) -> LoweredFunc:
    """func through the pipeline, and (`calls`) every function it calls
    (module_calls.py), each lowered once, as its `callees`."""
    from ..handles import with_param_buffers
    from ..module_calls import lowered_callees
    func = with_param_buffers(func, module)
    check_cpu(func)
    check_control_flow(func)
    buffers, scalars, sources = signature(func)
    body = func.body
    for name, step in PIPELINE:
        body = step(body)
        if trace is not None:
            trace.append((name, body))
    consts = collect_constants(body, module.constants if module is not None else None)
    callees = lowered_callees(func, module, lambda g: lower(g, module, calls=False)) \
        if calls else ()
    return LoweredFunc(func.name, buffers, scalars, sources, body, consts,
                       return_dtype(func),
                       tuple(func.buffer_of(p) is not None for p in func.params), callees)
