"""Kernels the schedule tests share, as TVMScript text.

The fixed kernels are module constants; the families (a matmul, a row reduction, an
elementwise producer/consumer pair) are functions parameterised by shape and by the few
expressions that tell one member from another. Every text starts with HEAD, so line 1 is
the import, line 4 `@T.prim_func` and line 5 the `def`: tests that assert lines count
from there.
"""
from __future__ import annotations

import textwrap

HEAD = "from tvm.script import tir as T\n\n\n"


def _dims(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def matmul(m: int = 16, n: int = 16, k: int = 16, name: str = "matmul",
           dtype: str = "float32") -> str:
    """C[m, n] = sum over k of A[m, k] * B[k, n], regions declared, reduction with init.
    Line 7 is `for i, j, k in T.grid(...)`, line 8 the block."""
    pad = " " * (len(name) + 5)
    return HEAD + f'''@T.prim_func
def {name}(A: T.Buffer(({m}, {k}), "{dtype}"), B: T.Buffer(({k}, {n}), "{dtype}"),
{pad}C: T.Buffer(({m}, {n}), "{dtype}")):
    for i, j, k in T.grid({m}, {n}, {k}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.{dtype}(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def row_reduction(rows: int = 8, cols: int = 24, name: str = "rowsum", *,
                  init: str = "T.float32(0)", update: str = "B[vi] + A[vi, vk]",
                  regions: bool = False, parallel_k: bool = False) -> str:
    """B[i] = reduce over k of A[i, k] (block "B"), by default a sum without declared regions
    (they are inferred). Line 7 is the block; with `parallel_k`, the loop over k is
    `T.parallel` inside the rows' (a race: TVM's `rowsum_not_serial`), and line 8."""
    decl = ("            T.reads(A[vi, vk])\n            T.writes(B[vi])\n" if regions else "")
    block = f'''        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
{decl}            with T.init():
                B[vi] = {init}
            B[vi] = {update}
'''
    loops = f"    for i, k in T.grid({rows}, {cols}):\n"
    if parallel_k:
        loops = f"    for i in range({rows}):\n        for k in T.parallel({cols}):\n"
        block = textwrap.indent(block, "    ")
    return HEAD + f'''@T.prim_func
def {name}(A: T.Buffer(({rows}, {cols}), "float32"), B: T.Buffer(({rows},), "float32")):
''' + loops + block


def elementwise_pair(name: str, shape=(8, 8), out_shape=None, *,
                     producer: str = "* T.float32(2)",
                     consumer: str = "+ T.float32(1)", where: str | None = None,
                     regions: bool = False, alloc: str = "") -> str:
    """Two 2-D elementwise stages: B[vi, vj] = A[vi, vj] <producer> (block "B"), then
    C[vi, vj] = B[vi, vj] <consumer> (block "C", guarded by `T.where(<where>)` when given),
    with declared regions when `regions`. C and the consumer's loops take `out_shape` where
    it differs (another dtype of the extents: `T.int64(8)` against `8`). A dimension given
    as a bare name is a shape symbol: the parameters are then handles matched to buffers.
    `alloc` adds keywords to B's allocation (strides=...)."""
    out_shape = shape if out_shape is None else out_shape
    dims, out_dims = _dims(shape), _dims(out_shape)
    symbols = [d for d in shape if isinstance(d, str) and d.isidentifier()]
    if symbols:
        sig = f"{name}(a: T.handle, c: T.handle):\n"
        sig += "".join(f"    {s} = T.int32()\n" for s in symbols)
        sig += (f'    A = T.match_buffer(a, {dims}, "float32")\n'
                f'    C = T.match_buffer(c, {out_dims}, "float32")\n')
    else:
        sig = f'{name}(A: T.Buffer({dims}, "float32"), C: T.Buffer({out_dims}, "float32")):\n'

    def stage(out, inp, op, guard, grid):
        lines = [f"    for i, j in T.grid({', '.join(str(d) for d in grid)}):",
                 f'        with T.block("{out}"):',
                 '            vi, vj = T.axis.remap("SS", [i, j])']
        if guard:
            lines.append(f"            T.where({guard})")
        if regions:
            lines += [f"            T.reads({inp}[vi, vj])", f"            T.writes({out}[vi, vj])"]
        lines.append(f"            {out}[vi, vj] = {inp}[vi, vj] {op}")
        return "\n".join(lines) + "\n"
    return (HEAD + "@T.prim_func\ndef " + sig
            + f'    B = T.alloc_buffer({dims}, "float32"{alloc})\n'
            + stage("B", "A", producer, None, shape)
            + stage("C", "B", consumer, where, out_shape))


MATMUL = matmul()

MATMUL_RELU = HEAD + '''@T.prim_func
def matmul_relu(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32, 16), "float32"),
                D: T.Buffer((16, 16), "float32")):
    C = T.alloc_buffer((16, 16), "float32")
    for i, j, k in T.grid(16, 16, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 16):
        with T.block("relu"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(C[vi, vj])
            T.writes(D[vi, vj])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))
'''

# three elementwise stages: B = A * 2, C = B + 1 (transposed read), D = C * C
CHAIN = HEAD + '''@T.prim_func
def chain(A: T.Buffer((16, 8), "float32"), D: T.Buffer((8, 16), "float32")):
    B = T.alloc_buffer((16, 8), "float32")
    C = T.alloc_buffer((8, 16), "float32")
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vj, vi])
            T.writes(C[vi, vj])
            C[vi, vj] = B[vj, vi] + T.float32(1)
    for i, j in T.grid(8, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(C[vi, vj])
            T.writes(D[vi, vj])
            D[vi, vj] = C[vi, vj] * C[vi, vj]
'''

# a row sum without declared regions (they are inferred)
ROWSUM = row_reduction(8, 24)
