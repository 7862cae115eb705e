"""The inputs `tirkit run`, `bench` and the measurements give a kernel: random non-zero arrays
sized by its buffers' shapes (a shape variable by `--size NAME=N`, else 16), the scalar
parameters that go with them, and the memory guard that refuses inputs and allocations that
would not fit in memory."""
from __future__ import annotations

import numpy as np

from ..ir import expr as E
from ..ir.constants import numpy_dtype
from ..ir.dtype import bytes_of, parse_dtype


ALIGNMENT = 64      # bytes: where TVM's runtime and the frameworks start a kernel's arrays


def aligned_copy(a) -> np.ndarray:
    """A C-contiguous copy of `a` whose data starts on an ALIGNMENT-byte boundary.

    numpy guarantees 16 bytes only; a kernel whose 64-byte vector loads straddle cache lines
    runs up to 1.4x slower (a 3x3 conv2d: 2.6 ms aligned, 3.7 ms at offset 16), so kernels
    are run and timed, and schedules chosen, on the alignment they get in a framework."""
    a = np.asarray(a)
    raw = np.empty(a.nbytes + ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    out = raw[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


def random_array(rng, shape, dtype):
    """Random values, never zero: floats in ±[0.5, 1.5), integers small and non-zero."""
    nd = numpy_dtype(dtype)
    d = parse_dtype(dtype)
    if d.kind == "bool":
        return aligned_copy(np.asarray(rng.integers(0, 2, shape), dtype=nd))
    if d.is_int:
        hi = 8 if d.bits <= 8 else 64
        v = rng.integers(1, hi, shape)
        if d.kind == "int":
            v = v * rng.choice([-1, 1], shape)
        return aligned_copy(np.asarray(v, dtype=nd))    # C-contiguous, 0-d kept
    v = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    return aligned_copy(np.asarray(v, dtype=nd))


def make_inputs(func, rng, sizes=None):
    from .handles import with_param_buffers
    func = with_param_buffers(func)    # a handle one buffer views: its parameter
    values = shape_values(func, sizes)
    buffers = []
    for p in func.params:
        b = func.buffer_of(p)
        if b is None:
            continue
        buffers.append((b, [_dim(b, s, values) for s in b.shape]))
    _check_memory(buffers, symbolic=bool(values),
                  allocated=allocations(func, {k: n for k, (_, n) in values.items()}))
    arrays = []
    for b, shape in buffers:
        try:
            arrays.append(random_array(rng, shape, b.dtype))
        except ValueError:
            from .errors import ARGUMENT, fail
            fail(ARGUMENT, f"buffer '{b.name}' of dtype {b.dtype} has no numpy equivalent to "
                 "run it with", b)
    return arrays


def shape_values(func, sizes=None) -> dict:
    """id(variable) -> (variable, value) for each variable of the parameter buffers' shapes:
    its `--size NAME=N`, else 16.  `make_inputs` sizes the arrays with them and
    `make_scalars` passes them to the scalar parameters that are those variables, so a
    kernel's `n: T.int64` and its `(8, n * 32)` buffers agree."""
    from ..ir.visit import vars_in
    sizes = dict(sizes or {})
    out = {}
    for p in func.params:
        b = func.buffer_of(p)
        for s in (b.shape if b is not None else ()):
            for v in vars_in(s):
                out.setdefault(id(v), (v, int(sizes.get(v.name, 16))))
    return out


def _dim(b, s, values) -> int:
    """A shape dimension's value with the variables' values (`n * 32` is 512 for n = 16)."""
    from ..arith import Analyzer
    n = _constant(s, {k: E.IntImm(v.dtype, x) for k, (v, x) in values.items()}, Analyzer())
    if n is None or n < 0:
        from .errors import ARGUMENT, fail
        what = "has no value" if n is None else f"is {n}"
        fail(ARGUMENT, f"a dimension of buffer '{b.name}' {what} with the sizes given "
             "(set its variables with --size NAME=N)", b)
    return n


def _constant(x, values, an):
    """The value of integer expression `x` with the variables of `values` (id -> IntImm)
    put in, or None when that leaves it symbolic."""
    if isinstance(x, E.IntImm):
        return x.value
    if not values:
        return None
    from ..ir.visit import substitute
    aff = an.to_aff(substitute(x, values))
    return aff.const if aff is not None and aff.is_const() else None


def _check_memory(buffers, symbolic=False, allocated=()):
    """A `codegen/argument` error when the inputs of these (buffer, shape) pairs and the
    kernel's own `allocated` (bytes, name, node) would not fit in the memory available now: the
    process would be killed while filling them.  Counted: each input and a copy of it (the
    reference run, the device copy), the float64 draws that fill the largest one, and each
    allocation once."""
    from .runtime import available_memory, gib
    sized = []
    for b, shape in buffers:
        n = int(np.prod(shape, dtype=object)) if shape else 1
        sized.append((n * bytes_of(b.dtype), n, b))
    if not sized and not allocated:
        return
    need = 2 * sum(x for x, _, _ in sized) + 24 * max((n for _, n, _ in sized), default=0) + \
        sum(x for x, _, _ in allocated)
    have = available_memory()
    if have is not None and need > have:
        from .errors import ARGUMENT, fail
        size, name, big = max([(x, b.name, b) for x, _, b in sized] + list(allocated),
                              key=lambda t: t[0])
        hint = " (give its symbolic shapes smaller sizes with --size)" if symbolic else ""
        fail(ARGUMENT, f"running this kernel needs about {gib(need)} of memory for its "
             f"buffers ('{name}' alone is {gib(size)}), and {gib(have)} is available"
             + hint, big)


def allocations(func, sizes=None, threads=None) -> list:
    """(bytes, name, buffer or statement) of each allocation in a kernel's body whose size is
    known: block `alloc_buffer`s, `T.allocate`, a `T.decl_buffer` or statement-level
    `T.alloc_buffer` with storage of its own.  A symbolic size is read with `sizes` (id of a
    shape variable -> its value, as the inputs are made); one inside a parallel loop counts
    once per thread that may hold it at the same time (`threads`, the host's cores by
    default, at most the loop's iterations).  The compiled code takes the large ones from
    the heap, where the system grants more than it has and the process is killed when the
    kernel fills them."""
    from ..arith import Analyzer
    from ..ir import stmt as S
    from ..ir.visit import walk
    from .runtime import cpu_count
    threads = threads or cpu_count()
    values = {k: E.IntImm("int64", int(v)) for k, v in (sizes or {}).items()}
    an = Analyzer()
    out = []
    allocated = {id(p) for p in func.params} | {
        id(b.data) for b in map(func.buffer_of, func.params) if b is not None}
    copies = {}                      # id(node) -> concurrent copies, inside parallel loops

    def size(x):
        return _constant(x, values, an)

    def add(dtype, dims, name, node):
        n = [size(x) for x in dims]
        if None not in n:
            out.append((int(np.prod(n, dtype=object)) * bytes_of(dtype) *
                        copies.get(id(node), 1), name, node))

    def in_parallel(x):
        if isinstance(x, S.For) and x.kind == "parallel":
            trips = size(x.extent)
            k = min(threads, trips) if trips is not None else threads

            def mark(y):
                for *_, node, _ in _storage(y):
                    copies[id(node)] = max(copies.get(id(node), 1), k)
            walk(x.body, mark)
            return False             # an inner parallel loop runs on the same threads

    def visit(x):
        for dtype, dims, name, node, data in _storage(x):
            if isinstance(x, S.DeclBuffer) and id(data) in allocated:
                continue             # a view of storage allocated already
            if data is not None:
                allocated.add(id(data))
            add(dtype, dims, name, node)

    walk(func.body, in_parallel)
    walk(func.body, visit)
    return out


def _storage(x) -> list:
    """[(dtype, extents, name, the node `allocations` names, its data variable or None)] for
    the storage the statement or block `x` makes: a block's `alloc_buffer`s, `T.allocate`,
    `T.decl_buffer`."""
    from ..ir import stmt as S
    from .passes.flatten import storage_extents
    if isinstance(x, S.Block):
        return [(b.dtype, storage_extents(b), b.name, b, None) for b in x.alloc_buffers]
    if isinstance(x, S.Allocate):
        return [(x.dtype, x.extents, x.buffer_var.name, x, x.buffer_var)]
    if isinstance(x, S.DeclBuffer):
        b = x.buffer
        return [(b.dtype, storage_extents(b), b.name, b, b.data)]
    return []


def make_scalars(func, rng, sizes=None):
    """Values for the explicit scalar parameters, in parameter order: random and non-zero,
    but a parameter that sizes a buffer (`n` of `(8, n * 32)`) gets the size its buffers
    were made with (`shape_values`)."""
    from .handles import with_param_buffers
    func = with_param_buffers(func)    # as make_inputs reads it: the sizes agree
    values = shape_values(func, sizes)
    out = []
    for p in func.params:
        if func.buffer_of(p) is None and p.dtype != "handle":
            try:
                v = random_array(rng, (), p.dtype)[()]
            except ValueError:
                from .errors import ARGUMENT, fail
                fail(ARGUMENT, f"parameter '{p.name}' of dtype {p.dtype} has no numpy "
                     "equivalent to run it with", p)
            if id(p) in values:
                v = np.asarray(values[id(p)][1], dtype=numpy_dtype(p.dtype))[()]
            out.append(v)
    return out


def kernel_inputs(func, rng, sizes):
    """(the function to build, its arrays, its scalars): a sparse kernel is lowered to loops
    over its indptr/indices and gets a random sparse pattern (sparse/inputs.py).  An access
    that leaves its buffer for these inputs is refused before anything runs (`run_bounds`)."""
    if func.sparse_axes:
        from ..sparse.inputs import sparse_inputs
        from ..sparse.lower import lower_sparse
        dense = lower_sparse(func)
        arrays, scalars, _ = sparse_inputs(func, dense, rng, sizes)
        return dense, arrays, scalars
    arrays, scalars = make_inputs(func, rng, sizes), make_scalars(func, rng, sizes)
    found = run_bounds(func, scalars, sizes)
    if found:
        from ..diagnostics import TirkitError
        raise TirkitError(found)
    return func, arrays, scalars


def run_bounds(func, scalars, sizes=None) -> list:
    """`bounds/out-of-bounds` for one run's inputs: the rule with the kernel's shape variables
    and integer scalar parameters at the values this run gives them.  `tirkit check` reports
    an access only when it leaves its buffer for every size; `Y[i, k * -3 + j]` over
    `range(n)` does for n >= 2 only, and native code would write before `Y`."""
    import dataclasses
    from ..verify import RuleContext
    from ..verify.bounds import check_bounds
    values = dict(shape_values(func, sizes))
    params = [p for p in func.params if func.buffer_of(p) is None and p.dtype != "handle"]
    for p, v in zip(params, scalars):
        if parse_dtype(p.dtype).is_int and id(p) not in values:
            values[id(p)] = (p, int(v))
    if not values:
        return []
    given = ", ".join(f"{v.name}={n}" for v, n in values.values())
    return [dataclasses.replace(d, message=f"{d.message} (with {given})")
            for d in check_bounds(func, RuleContext(sizes=values))
            if d.severity == "error"]
